"""Builds started from the browser: a queue on disk, one build at a time, in a worker process.

A build asked for here is run by the worker (``explorer.services.job_runner``), which runs the command line
itself (``python -m pipeline build ...`` in a subprocess), and the page follows it through the
progress the command writes (``explorer.services.job_progress``). The queue's records live under the
artifacts root (``explorer.services.job_queue``), never in a Streamlit session, so a reload or a second tab
sees the same builds.

``submit`` (editors only: it takes an ``access.Access`` and refuses a viewer before writing
anything) stores the uploaded files in the corpus's inputs folder (``explorer.state.uploads``), writes
``job.json`` as queued and starts the worker, ``python -m explorer.services.job_runner ROOT``, unless one runs.
Nothing here imports streamlit.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from explorer.services.job_queue import (
    CANCEL,
    PROJECT,
    QUEUE_LOCK,
    Job,
    SubmitError,
    check_space,
    drop_empty_inputs,
    file_lock,
    job_dir,
    load,
    queue,
    save,
    space_needed,
)
from explorer.services.job_runner import build_command, ensure_runner
from explorer.state import uploads
from explorer.state.access import Access, require_write
from pipeline.core import artifacts


@dataclass(frozen=True)
class Upload:
    """A file from the browser: its name as uploaded, its bytes and its preview."""

    name: str
    data: bytes
    preview: uploads.Preview


def submit(
    access: Access,
    root: Path,
    corpus: str,
    files: Sequence[Upload],
    *,
    new: bool,
    columns: dict[str, str] | None = None,
    ingest: dict | None = None,
    refit: bool = False,
    config: Path | None = None,
    start: bool = True,
) -> Job:
    """Store ``files`` as inputs of ``corpus`` and queue its build; starts the worker.

    Args:
        access: the session's access; a viewer is refused before anything is written.
        new: a new corpus (its name must be free) or papers added to an existing one (its inputs
            must be known: built from the browser, or a command-line build whose files are still here).
        columns: explicit role -> column mapping (roles left out are recognised by name); None
            keeps the corpus's.
        ingest: reading settings for this and later builds (``venue``, ``year``: for papers whose
            file gives none; ``min_words``); None values keep the corpus's.
        config: TOML settings file for the build (``--config``).
        start: start the worker (tests queue several jobs first).

    Raises:
        ReadOnlyError: the session may not write. SubmitError, ArtifactError, UploadError: the
            message says what to change.
    """
    require_write(access, "Adding a corpus")  # before any file is opened
    artifacts.check_name(corpus)
    root = Path(root)
    usable = [f for f in files if f.preview.ok]
    if not usable:
        raise SubmitError("None of the files can be read: see the message under each file.")
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root, QUEUE_LOCK, timeout=30):
        record, imported = _target_record(root, corpus, new)
        known = {f.sha256 for f in record.files}
        fresh, seen = [], set(known)
        for f in usable:
            if f.preview.sha256 not in seen:
                fresh.append(f)
                seen.add(f.preview.sha256)
        if not fresh:
            raise SubmitError(f"{corpus} already has these files: there is nothing new to add.")
        data_bytes = sum(f.preview.data_size for f in fresh) + sum(
            int(e.get("bytes", 0)) for _, e in imported
        )  # fmt: skip
        stored = sum(len(f.data) for f in fresh)
        check_space(root, space_needed(data_bytes, stored))
        added = _store_files(root, corpus, record, imported, fresh)
        explicit = dict(record.columns if columns is None else {r: c for r, c in columns.items() if c})
        every = [*record.files, *added]
        now = time.time()
        job = Job(
            id=f"{time.strftime('%Y%m%dT%H%M%S', time.localtime(now))}-{int(now * 1e6) % 10**6:06d}-{uuid.uuid4().hex[:4]}",
            corpus=corpus,
            kind="new" if new else "add",
            files=tuple(f.name for f in every),
            added=tuple(a.name for a in added),
            originals={f.name: f.original for f in every},
            sizes={f.name: f.bytes for f in every},
            hashes={f.name: f.sha256 for f in every},
            columns=explicit,
            ingest={**record.ingest, **{k: v for k, v in (ingest or {}).items() if v is not None}},
            refit=refit,
            submitted_at=now,
        )
        job_dir(root, job.id).mkdir(parents=True)
        job = replace(job, argv=tuple(build_command(root, job, config)))
        save(root, job)
    if start:
        ensure_runner(root)
    return job


def _target_record(root: Path, corpus: str, new: bool) -> tuple[uploads.Record, list[tuple[Path, dict]]]:
    """The inputs record of the corpus a build is asked for, and the files of a command-line
    corpus that join its inputs folder; refuses a corpus already queued, a new corpus whose name is
    taken and an added-to corpus that does not exist or whose inputs are unknown. Run under the
    queue lock."""
    if any(j.corpus == corpus for j in queue(root)):
        raise SubmitError(f"A build of {corpus} is already waiting or running: wait for it, or cancel it.")
    exists = os.path.lexists(root / corpus)
    if new and exists:
        raise SubmitError(
            f"A corpus named {corpus} already exists: choose another name, or add the papers to {corpus}."
        )
    if not new and not exists:
        raise SubmitError(f"There is no corpus named {corpus} to add papers to.")
    record = uploads.read_record(root, corpus) if exists else None
    imported: list[tuple[Path, dict]] = []
    if not new and record is None:
        imported, why = uploads.manifest_inputs(root, corpus, PROJECT)
        if why:
            raise SubmitError(f"Papers cannot be added to {corpus}: {why}")
        explicit, ingest = uploads.manifest_settings(root, corpus)
        record = uploads.Record(corpus, columns=explicit, ingest=ingest)
    return record or uploads.Record(corpus), imported


def _store_files(
    root: Path, corpus: str, record: uploads.Record, imported: list[tuple[Path, dict]], fresh: list[Upload]
) -> list[uploads.InputFile]:
    """Write the imported and the new files into the corpus's inputs folder under unique names;
    on any failure the files written so far are removed again."""
    folder = uploads.inputs_dir(root, corpus, create=True)
    taken = {p.name for p in folder.iterdir()} | {f.name for f in record.files}
    added: list[uploads.InputFile] = []
    try:
        for path, entry in imported:  # a command-line corpus: its files join its inputs folder
            name = uploads.unique_name(uploads.safe_filename(path.name), taken)
            data = path.read_bytes()
            uploads.write_new_file(folder, name, data)
            taken.add(name)
            added.append(uploads.InputFile(name, str(entry.get("path")), len(data), str(entry.get("sha256"))))
        for f in fresh:
            name = uploads.unique_name(f.preview.name, taken)
            uploads.write_new_file(folder, name, f.data)
            taken.add(name)
            added.append(uploads.InputFile(name, f.name, len(f.data), f.preview.sha256))
    except BaseException:
        for a in added:
            (folder / a.name).unlink(missing_ok=True)
        drop_empty_inputs(root, corpus)
        raise
    return added


def cancel(access: Access, root: Path, job_id: str) -> None:
    """Ask for a job to stop: a queued one never starts, a running one gets SIGTERM."""
    require_write(access, "Cancelling a build")
    folder = job_dir(root, job_id)
    if folder.is_dir():
        (folder / CANCEL).touch(exist_ok=True)


def forget(access: Access, root: Path, job_id: str) -> None:
    """Remove a finished job from the list (its corpus and inputs are untouched)."""
    require_write(access, "Clearing a build from the list")
    job = load(root, job_id)
    if job is not None and not job.active:
        shutil.rmtree(job_dir(root, job_id), ignore_errors=True)
