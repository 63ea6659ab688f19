"""Builds started from the browser: a queue on disk, one build at a time, in a worker process.

A build runs the command line itself (``python -m pipeline build ...`` in a subprocess), so it
takes the same lock, prints the same messages and exits with the same codes as a build started by
hand, and it follows the build through the JSON Lines progress the command writes
(``--progress-json``, ``pipeline.progress.EventLog``). Everything lives under the artifacts root,
never in a Streamlit session, so a reload or a second tab sees the same builds::

    .jobs/<job id>/job.json      what to build and how it went (status, times, exit code, messages)
    .jobs/<job id>/events.jsonl  the build's progress events
    .jobs/<job id>/stdout.log    the build's summary; stderr.log: its progress lines and errors
    .jobs/<job id>/cancel        present once someone asked to cancel
    .jobs/runner.json            the worker that runs the queue (pid), while it runs
    .locks/jobs-runner.lock      held by that worker: one build at a time on this artifacts folder

``submit`` (editors only: it takes an ``access.Access`` and refuses a viewer before writing
anything) stores the uploaded files in the corpus's inputs folder (``explorer.uploads``), writes
``job.json`` as queued and starts the worker, ``python -m explorer.jobs ROOT``, unless one runs.
The worker runs queued jobs oldest first until none is left. A cancelled build gets SIGTERM (then
SIGKILL after ``KILL_AFTER`` seconds); the command line publishes a build only when it is
complete, so the corpus stays as it was. Files a failed or cancelled job added are removed again,
so a corpus's inputs are always those of its current build. Nothing here imports streamlit.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from explorer import uploads
from explorer.access import Access, require_write
from pipeline import artifacts, schema

PROJECT = Path(__file__).resolve().parent.parent
JOBS = ".jobs"
RUNNER = "runner.json"
RUNNER_LOCK = "jobs-runner.lock"
QUEUE_LOCK = "jobs-queue.lock"
CANCEL = "cancel"
ACTIVE = ("queued", "running")
FINISHED = ("done", "failed", "cancelled")
#: Seconds between SIGTERM and SIGKILL when a build is cancelled.
KILL_AFTER = 30.0
#: Finished jobs kept on disk (older ones are forgotten by the worker).
KEEP_FINISHED = 20
#: Disk space a build needs beyond its files: artifacts, the embedding cache and, until the new
#: build replaces it, the previous one. Measured: the 137-paper fixture's 185 kB of JSON Lines make
#: 2.5 MB (13x); ``SPACE_FACTOR`` leaves room, and ``MIN_FREE`` covers fixed costs (model export).
SPACE_FACTOR = 20
MIN_FREE = 256 * 2**20
#: The build's steps today, the keyword index last: a full fit and an incremental placement (the progress bar's length;
#: a build that reports more steps just fills it).
FULL_STEPS = 9
INCREMENTAL_STEPS = 6
_JOB_ID = re.compile(r"^\d{8}T\d{6}-\d{6}-[0-9a-f]{4}$")  # sorts by submission time
_STOP = threading.Event()  # the worker was asked to stop (SIGTERM): cancel the build, run no other


class SubmitError(Exception):
    """A build cannot be started as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Upload:
    """A file from the browser: its name as uploaded, its bytes and its preview."""

    name: str
    data: bytes
    preview: uploads.Preview


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


# ------------------------------------------------------------------------------------------
# Reading jobs
# ------------------------------------------------------------------------------------------


def jobs_dir(root: Path) -> Path:
    return Path(root) / JOBS


def job_dir(root: Path, job_id: str) -> Path:
    if not isinstance(job_id, str) or not _JOB_ID.match(job_id):
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
    ids = sorted(p.name for p in folder.iterdir() if _JOB_ID.match(p.name))
    return [job for job in (load(root, i) for i in ids) if job is not None]


def queue(root: Path) -> list[Job]:
    """Jobs waiting or running, in the order they run."""
    return [j for j in list_jobs(root) if j.active]


def _save(root: Path, job: Job) -> Job:
    artifacts.write_json(job_dir(root, job.id) / "job.json", job.to_dict())
    return job


# ------------------------------------------------------------------------------------------
# Asking for a build (editors only)
# ------------------------------------------------------------------------------------------


def _lock(root: Path, name: str, timeout: float):
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
    with _lock(root, QUEUE_LOCK, timeout=30):
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
        record = record or uploads.Record(corpus)
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
            _drop_empty_inputs(root, corpus)
            raise
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
        _save(root, job)
    if start:
        ensure_runner(root)
    return job


#: How a build is run: ``python -P -m pipeline build ...``, the command line's own code path. The
#: command is stored with the job when it is submitted. Only code sets this (the tests put their
#: driver here, which builds with the test encoder); no setting or upload reaches it.
BUILD_PROGRAM: tuple[str, ...] = ("-P", "-m", "pipeline")


def build_command(root: Path, job: Job, config: Path | None = None) -> list[str]:
    """The command line of ``job``'s build, run in the corpus's inputs folder."""
    events = job_dir(root, job.id).resolve() / "events.jsonl"
    argv = [sys.executable, *BUILD_PROGRAM, "build", *job.files, "--name", job.corpus]
    argv += ["--artifacts", str(Path(root).resolve()), "--progress-json", str(events)]
    for role, column in sorted(job.columns.items()):
        argv += [f"--{role}-column", column]
    for key in ("min_words", "venue", "year"):
        if job.ingest.get(key) is not None:
            argv += [f"--{key.replace('_', '-')}", str(job.ingest[key])]
    if config is not None:
        argv += ["--config", str(Path(config).resolve())]
    if job.refit:
        argv.append("--refit")
    return argv


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


# ------------------------------------------------------------------------------------------
# The worker
# ------------------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(PROJECT) + (os.pathsep + path if path else "")}


def runner_pid(root: Path) -> int | None:
    """The pid of the worker running this folder's queue, or None when none runs."""
    import psutil

    try:
        info = json.loads((jobs_dir(root) / RUNNER).read_text())
        proc = psutil.Process(int(info["pid"]))
        if abs(proc.create_time() - float(info["created"])) < 1 and proc.status() != psutil.STATUS_ZOMBIE:
            return proc.pid
    except (OSError, ValueError, KeyError, TypeError, psutil.Error):
        pass
    return None


def ensure_runner(root: Path) -> None:
    """Start the worker (``python -m explorer.jobs ROOT``) unless one is running; it runs apart
    from the app (own session) and exits when the queue is empty."""
    if runner_pid(root) is not None:
        return
    folder = jobs_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "runner.log").open("a") as log:
        subprocess.Popen(
            [sys.executable, "-P", "-m", "explorer.jobs", str(Path(root).resolve())],
            cwd=PROJECT, env=_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def run_queue(root: Path, *, poll: float = 0.2) -> int:
    """Run queued jobs oldest first until none is left; returns how many ran (0 when another
    worker holds the queue)."""
    import psutil
    from filelock import Timeout

    root = Path(root)
    lock = _lock(root, RUNNER_LOCK, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return 0
    ran = 0
    try:
        me = psutil.Process()
        jobs_dir(root).mkdir(parents=True, exist_ok=True)
        artifacts.write_json(jobs_dir(root) / RUNNER, {"pid": me.pid, "created": me.create_time()})
        _recover(root)
        while not _STOP.is_set():
            waiting = [j for j in list_jobs(root) if j.status == "queued"]
            if not waiting:
                break
            _run(root, waiting[0], poll=poll)
            ran += 1
        _prune(root)
    finally:
        (jobs_dir(root) / RUNNER).unlink(missing_ok=True)
        lock.release()
    return ran


def _run(root: Path, job: Job, *, poll: float) -> Job:
    folder = job_dir(root, job.id)
    if (folder / CANCEL).exists():
        return _finish(root, job, "cancelled", message="Cancelled before it started.")
    try:
        check_space(root, space_needed(sum(job.sizes.get(n, 0) for n in job.files), 0))
        cwd = uploads.inputs_dir(root, job.corpus)
    except (SubmitError, uploads.UploadError, artifacts.ArtifactError) as exc:
        return _finish(root, job, "failed", message=str(exc))
    job = _save(root, replace(job, status="running", started_at=time.time()))
    before = _current_build(root, job.corpus)
    with (folder / "stdout.log").open("wb") as out, (folder / "stderr.log").open("wb") as err:
        try:
            proc = subprocess.Popen(
                list(job.argv), cwd=cwd, env=_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True,  # its own process group: a cancel reaches its helpers too
            )  # fmt: skip
        except (OSError, ValueError) as exc:
            return _finish(root, job, "failed", message=f"The build could not be started: {exc}")
        job = _save(root, replace(job, pid=proc.pid))
        signalled = None
        while True:
            try:
                code = proc.wait(timeout=poll)
                break
            except subprocess.TimeoutExpired:
                pass
            if signalled is None and ((folder / CANCEL).exists() or _STOP.is_set()):
                proc.send_signal(signal.SIGTERM)
                signalled = time.monotonic()
            elif signalled is not None and time.monotonic() - signalled > KILL_AFTER:
                _signal_group(proc.pid, signal.SIGKILL)
    _stop_group(proc.pid)
    stdout = (folder / "stdout.log").read_text(encoding="utf-8", errors="replace")
    stderr = (folder / "stderr.log").read_text(encoding="utf-8", errors="replace")
    summary = tuple(line for line in stdout.splitlines() if line.strip())
    if code == 0:
        return _finish(root, replace(job, exit_code=code, summary=summary), "done")
    if _current_build(root, job.corpus) not in (before, None):  # it published before it was stopped
        late = "It had finished before it could be stopped." if signalled is not None else _error(stderr, code)
        return _finish(root, replace(job, exit_code=code, summary=summary), "done", message=late)
    if signalled is not None:
        return _finish(root, replace(job, exit_code=code, summary=summary), "cancelled", message=_last_words(stderr))
    return _finish(root, replace(job, exit_code=code, summary=summary), "failed", message=_error(stderr, code))


def _current_build(root: Path, corpus: str) -> str | None:
    """The id of the corpus's published build, or None."""
    try:
        return artifacts.corpus_path(root, corpus).name
    except artifacts.ArtifactError:
        return None


def _last_words(stderr: str) -> str:
    """What a cancelled build said on its way out (not its progress lines), if anything."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return "" if not last or last.startswith(("[", " ")) else last


def _error(stderr: str, code: int) -> str:
    """What the build said when it stopped: its ``error:`` lines (the CLI's own messages),
    else the last line of its output."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    errors = [line.removeprefix("error: ") for line in lines if line.startswith("error: ")]
    if errors:
        return "\n".join(errors)
    if code < 0:
        return f"The build was stopped by signal {signal.Signals(-code).name}." + (
            f" Its last words: {lines[-1]}" if lines else ""
        )
    return lines[-1] if lines else f"The build stopped with exit code {code}."


def _finish(root: Path, job: Job, status: str, *, message: str = "") -> Job:
    """Record the outcome; keep the added files if the build succeeded, else remove them."""
    build_id = None
    if status == "done":
        build_id = _current_build(root, job.corpus)
        record = uploads.read_record(root, job.corpus) or uploads.Record(job.corpus)
        files = tuple(
            uploads.InputFile(n, job.originals.get(n, n), job.sizes.get(n, 0), job.hashes.get(n, "")) for n in job.files
        )
        uploads.write_record(root, replace(record, files=files, columns=dict(job.columns), ingest=dict(job.ingest)))
    else:
        with contextlib.suppress(uploads.UploadError, artifacts.ArtifactError):
            folder = uploads.inputs_dir(root, job.corpus)
            for name in job.added:
                (folder / name).unlink(missing_ok=True)
            _drop_empty_inputs(root, job.corpus)
        _discard_unfinished(root, job.corpus)
    return _save(
        root, replace(job, status=status, message=message, finished_at=time.time(), build_id=build_id, pid=None)
    )


def _drop_empty_inputs(root: Path, corpus: str) -> None:
    """Remove a corpus's inputs folder when it holds nothing (a new corpus that was never built)."""
    folder = uploads.inputs_dir(root, corpus)
    with contextlib.suppress(OSError):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def _discard_unfinished(root: Path, corpus: str) -> None:
    """Remove the build folder an interrupted build left (under the corpus's build lock, so
    never one that another build is writing)."""
    with contextlib.suppress(artifacts.ArtifactError, OSError), artifacts.build_lock(root, corpus, timeout=0):
        artifacts.discard_stale_builds(root, corpus)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _stop_group(pid: int) -> None:
    """End what is left of a finished build's process group (e.g. a helper process)."""
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.1)
    _signal_group(pid, signal.SIGKILL)


def _recover(root: Path) -> None:
    """Jobs left "running" by a worker that died: stop their build if it still runs, roll back."""
    import psutil

    for job in list_jobs(root):
        if job.status != "running":
            continue
        if job.pid is not None:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(job.pid)  # still our build (not a reused pid)? then stop it
                if proc.create_time() >= (job.started_at or 0) - 1 and job.id in " ".join(proc.cmdline()):
                    _signal_group(job.pid, signal.SIGTERM)
                    with contextlib.suppress(psutil.TimeoutExpired):
                        proc.wait(timeout=KILL_AFTER)
                    _stop_group(job.pid)
        _finish(root, job, "failed", message="The build was interrupted: the worker running it stopped.")


def _prune(root: Path) -> None:
    finished = [j for j in list_jobs(root) if not j.active]
    for job in finished[:-KEEP_FINISHED]:
        shutil.rmtree(job_dir(root, job.id), ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """``python -m explorer.jobs ROOT``: run ROOT's queue until it is empty."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m explorer.jobs ARTIFACTS_ROOT", file=sys.stderr)
        return 2
    root = Path(args[0])
    with contextlib.suppress(OSError):
        os.nice(5)  # the dashboard stays responsive while a build runs
    signal.signal(signal.SIGTERM, lambda *_: _STOP.set())
    while not _STOP.is_set():
        run_queue(root)
        time.sleep(0.5)  # a job submitted while the lock was being released
        if not any(j.status == "queued" for j in list_jobs(root)) or runner_pid(root) is not None:
            return 0
    return 0


# ------------------------------------------------------------------------------------------
# Progress and results, for the page
# ------------------------------------------------------------------------------------------


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


if __name__ == "__main__":
    sys.exit(main())
