"""The build queue on disk: one record per build asked for from the browser.

Everything lives under the artifacts root, never in a Streamlit session, so a reload or a second
tab sees the same builds::

    .jobs/<job id>/job.json      what to build and how it went (status, times, exit code, messages)
    .jobs/<job id>/events.jsonl  the build's progress events
    .jobs/<job id>/stdout.log    the build's summary; stderr.log: its progress lines and errors
    .jobs/<job id>/cancel        present once someone asked to cancel
    .jobs/runner.json            the worker that runs the queue (pid), while it runs
    .locks/jobs-runner.lock      held by that worker: one build at a time on this artifacts folder

``explorer.services.jobs`` asks for builds, ``explorer.services.job_runner`` runs them and ``explorer.services.job_progress``
reads how far they got; this module holds the records and checks they share. Nothing here imports
streamlit.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from explorer.state import uploads
from pipeline.core import artifacts
from pipeline.core.inputs import ROOT

PROJECT = ROOT
JOBS = ".jobs"
RUNNER = "runner.json"
RUNNER_LOCK = "jobs-runner.lock"
QUEUE_LOCK = "jobs-queue.lock"
CANCEL = "cancel"
ACTIVE = ("queued", "running")
FINISHED = ("done", "failed", "cancelled")
#: Disk space a build needs beyond its files: artifacts, the embedding cache and, until the new
#: build replaces it, the previous one. Measured: the 137-paper fixture's 185 kB of JSON Lines make
#: 2.5 MB (13x); ``SPACE_FACTOR`` leaves room, and ``MIN_FREE`` covers fixed costs (model export).
SPACE_FACTOR = 20
MIN_FREE = 256 * 2**20
JOB_ID = re.compile(r"^\d{8}T\d{6}-\d{6}-[0-9a-f]{4}$")  # sorts by submission time


class SubmitError(Exception):
    """A build cannot be started as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Job:
    """One build asked for from the browser (``job.json``).

    Attributes:
        kind: "new" (a new corpus) or "add" (papers added to a corpus).
        status: queued, running, done, failed or cancelled.
        files: every input file of the build, in order (names in the corpus's inputs folder).
        added: the files this job added (removed again if it does not succeed).
        originals: stored name -> name as uploaded.
        columns: explicit role -> column mapping; ``ingest``: other reading settings.
        argv: the command line run.
        message: the build's error (its ``error:`` line), or what stopped it.
        summary: the build's summary lines (stdout).
        build_id: the build it published.
    """

    id: str
    corpus: str
    kind: str
    status: str = "queued"
    files: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    originals: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)
    ingest: dict = field(default_factory=dict)
    refit: bool = False
    argv: tuple[str, ...] = ()
    submitted_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    exit_code: int | None = None
    pid: int | None = None
    message: str = ""
    summary: tuple[str, ...] = ()
    build_id: str | None = None
    cancel_requested: bool = False

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    def to_dict(self) -> dict:
        out = asdict(self)
        out.pop("cancel_requested")
        return out

    @classmethod
    def from_dict(cls, data: dict, cancel_requested: bool = False) -> Job:
        known = {f for f in cls.__dataclass_fields__ if f != "cancel_requested"}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("files", "added", "argv", "summary"):
            values[key] = tuple(values.get(key) or ())
        return cls(**values, cancel_requested=cancel_requested)


def jobs_dir(root: Path) -> Path:
    return Path(root) / JOBS


def job_dir(root: Path, job_id: str) -> Path:
    if not isinstance(job_id, str) or not JOB_ID.match(job_id):
        raise SubmitError(f"{job_id!r} is not a build id.")
    return jobs_dir(root) / job_id


def load(root: Path, job_id: str) -> Job | None:
    folder = job_dir(root, job_id)
    try:
        data = json.loads((folder / "job.json").read_text(encoding="utf-8"))
        return Job.from_dict(data, cancel_requested=(folder / CANCEL).exists())
    except (OSError, ValueError, TypeError):
        return None


def list_jobs(root: Path) -> list[Job]:
    """Every job on disk, oldest first."""
    folder = jobs_dir(root)
    if not folder.is_dir():
        return []
    ids = sorted(p.name for p in folder.iterdir() if JOB_ID.match(p.name))
    return [job for job in (load(root, i) for i in ids) if job is not None]


def queue(root: Path) -> list[Job]:
    """Jobs waiting or running, in the order they run."""
    return [j for j in list_jobs(root) if j.active]


def save(root: Path, job: Job) -> Job:
    artifacts.write_json(job_dir(root, job.id) / "job.json", job.to_dict())
    return job


def file_lock(root: Path, name: str, timeout: float):
    from filelock import FileLock

    locks = Path(root) / artifacts.LOCKS
    locks.mkdir(parents=True, exist_ok=True)
    return FileLock(str(locks / name), timeout=timeout)


def space_needed(data_bytes: int, stored_bytes: int) -> int:
    """Free bytes a build of ``data_bytes`` of (decompressed) input needs, its files included."""
    return stored_bytes + SPACE_FACTOR * data_bytes + MIN_FREE


def check_space(root: Path, needed: int) -> None:
    """Raise SubmitError unless ``root``'s disk has ``needed`` bytes free."""
    free = shutil.disk_usage(root).free
    if free < needed:
        raise SubmitError(
            f"Not enough disk space for this build: {free / 2**20:,.0f} MB free in the artifacts folder, about "
            f"{needed / 2**20:,.0f} MB needed. Free some space (old corpora, exports) and try again."
        )


def drop_empty_inputs(root: Path, corpus: str) -> None:
    """Remove a corpus's inputs folder when it holds nothing (a new corpus that was never built)."""
    folder = uploads.inputs_dir(root, corpus)
    with contextlib.suppress(OSError):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
