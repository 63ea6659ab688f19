"""How far a build from the browser got, and what it left: read from its job folder for the page.

``read_progress`` follows the JSON Lines progress the build writes (``pipeline.core.progress.EventLog``);
``ingest_report`` and ``log_text`` give its results once it stopped. Nothing here imports streamlit.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

from explorer.services.job_queue import Job, job_dir
from pipeline.core import artifacts, schema

#: The build's steps today, the keyword index last: a full fit and an incremental placement (the progress bar's length;
#: a build that reports more steps just fills it).
FULL_STEPS = 9
INCREMENTAL_STEPS = 6


@dataclass(frozen=True)
class Progress:
    """Where a running build is, from its events.

    Attributes:
        step: the stage running (1-based; 0 before the first).
        title: the build's own title of that stage.
        steps: how many stages the build has (8 for a full fit, 5 when papers are placed).
        step_started: when the stage began (Unix time).
        label / unit / done / total / rate / eta: the stage's last count (``eta`` seconds left at
            ``count_at``), or None.
    """

    step: int = 0
    title: str = ""
    steps: int = FULL_STEPS
    step_started: float | None = None
    label: str | None = None
    unit: str = ""
    done: int = 0
    total: int = 0
    rate: float = 0.0
    eta: float | None = None
    count_at: float | None = None

    @property
    def fraction(self) -> float:
        """Share of the build done: whole stages, plus the counted share of the current one."""
        if self.step == 0:
            return 0.0
        within = self.done / self.total if self.label and self.total else 0.0
        return min(1.0, (self.step - 1 + within) / max(self.steps, self.step))

    def eta_now(self, now: float) -> float | None:
        if self.eta is None or self.count_at is None:
            return None
        return max(0.0, self.eta - (now - self.count_at))


def read_progress(root: Path, job: Job) -> Progress:
    """The progress of ``job`` from its ``events.jsonl`` (a half-written last line is skipped)."""
    path = job_dir(root, job.id) / "events.jsonl"
    progress = Progress(steps=INCREMENTAL_STEPS if job.kind == "add" and not job.refit else FULL_STEPS)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return progress
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "stage":
            title = str(event.get("title", ""))
            steps = progress.steps
            if event.get("step") == 3:  # the third stage tells a placement from a full fit
                steps = INCREMENTAL_STEPS if title.startswith("Placing") else FULL_STEPS
            progress = Progress(step=int(event.get("step", 0)), title=title, steps=steps, step_started=event.get("t"))
        elif kind == "count":
            progress = replace(
                progress,
                label=str(event.get("label")),
                unit=str(event.get("unit", "")),
                done=int(event.get("done", 0)),
                total=int(event.get("total", 0)),
                rate=float(event.get("rate") or 0.0),
                eta=event.get("eta"),
                count_at=event.get("t"),
            )
    return progress


#: Plain words for the build's stages, by the first word of its stage title.
PLAIN_STAGES = {
    "Reading": "Reading your files",
    "Embedding": "Reading the abstracts with the language model",
    "Projecting": "Laying out the map",
    "Clustering": "Grouping the papers into topics",
    "Counting": "Counting words",
    "Building": "Describing each topic with keywords",
    "Computing": "Measuring trends and how stable each topic is",
    "Placing": "Placing the new papers into the existing topics",
    "Recomputing": "Updating the trends",
    "Writing": "Saving the corpus",
    "Indexing": "Indexing the papers for keyword search",
    "Adding": "Adding the new papers to the keyword search",
}


def plain_stage(title: str) -> str:
    """The build's stage title in plain words (its own title when the word is unknown)."""
    return PLAIN_STAGES.get(title.split(" ", 1)[0], title) if title else "Starting"


def ingest_report(root: Path, job: Job):
    """The ingest report (``schema.INGEST_REPORT_COLUMNS``) of the build ``job`` published, or
    None when that build is no longer the corpus's current one."""
    if job.status != "done" or not job.build_id:
        return None
    try:
        folder = artifacts.corpus_path(root, job.corpus)
    except artifacts.ArtifactError:
        return None
    if folder.name != job.build_id:
        return None
    return artifacts.read_table(folder, schema.INGEST_REPORT)


def log_text(root: Path, job: Job) -> str:
    """The build's whole output (progress lines and errors, then the summary), for a download."""
    folder = job_dir(root, job.id)
    parts = []
    for name in ("stderr.log", "stdout.log"):
        with contextlib.suppress(OSError):
            parts.append((folder / name).read_text(encoding="utf-8", errors="replace"))
    return "$ " + " ".join(job.argv) + "\n" + "\n".join(parts)
