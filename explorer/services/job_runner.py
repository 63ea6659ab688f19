"""The worker that runs the build queue: one build at a time, each the command line in a subprocess.

A build runs the command line itself (``python -m pipeline build ...`` in a subprocess), so it
takes the same lock, prints the same messages and exits with the same codes as a build started by
hand, and it writes the JSON Lines progress the page follows (``--progress-json``,
``explorer.services.job_progress``). The worker, ``python -m explorer.services.job_runner ROOT``, runs queued jobs
(``explorer.services.job_queue``) oldest first until none is left. A cancelled build gets SIGTERM (then
SIGKILL after ``KILL_AFTER`` seconds); the command line publishes a build only when it is complete,
so the corpus stays as it was. Files a failed or cancelled job added are removed again, so a
corpus's inputs are always those of its current build. Nothing here imports streamlit.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

from explorer.services.job_queue import (
    CANCEL,
    PROJECT,
    RUNNER,
    RUNNER_LOCK,
    Job,
    SubmitError,
    check_space,
    drop_empty_inputs,
    file_lock,
    job_dir,
    jobs_dir,
    list_jobs,
    save,
    space_needed,
)
from explorer.state import uploads
from pipeline.core import artifacts

#: Seconds between SIGTERM and SIGKILL when a build is cancelled.
KILL_AFTER = 30.0
#: Finished jobs kept on disk (older ones are forgotten by the worker).
KEEP_FINISHED = 20
_STOP = threading.Event()  # the worker was asked to stop (SIGTERM): cancel the build, run no other

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
    """Start the worker (``python -m explorer.services.job_runner ROOT``) unless one is running; it runs apart
    from the app (own session) and exits when the queue is empty."""
    if runner_pid(root) is not None:
        return
    folder = jobs_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "runner.log").open("a") as log:
        subprocess.Popen(
            [sys.executable, "-P", "-m", "explorer.services.job_runner", str(Path(root).resolve())],
            cwd=PROJECT, env=_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def run_queue(root: Path, *, poll: float = 0.2) -> int:
    """Run queued jobs oldest first until none is left; returns how many ran (0 when another
    worker holds the queue)."""
    import psutil
    from filelock import Timeout

    root = Path(root)
    lock = file_lock(root, RUNNER_LOCK, timeout=0)
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
    job = save(root, replace(job, status="running", started_at=time.time()))
    before = _current_build(root, job.corpus)
    with (folder / "stdout.log").open("wb") as out, (folder / "stderr.log").open("wb") as err:
        try:
            proc = subprocess.Popen(
                list(job.argv), cwd=cwd, env=_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True,  # its own process group: a cancel reaches its helpers too
            )  # fmt: skip
        except (OSError, ValueError) as exc:
            return _finish(root, job, "failed", message=f"The build could not be started: {exc}")
        job = save(root, replace(job, pid=proc.pid))
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
            drop_empty_inputs(root, job.corpus)
        _discard_unfinished(root, job.corpus)
    return save(
        root, replace(job, status=status, message=message, finished_at=time.time(), build_id=build_id, pid=None)
    )


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
    """``python -m explorer.services.job_runner ROOT``: run ROOT's queue until it is empty."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m explorer.services.job_runner ARTIFACTS_ROOT", file=sys.stderr)
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


if __name__ == "__main__":
    sys.exit(main())
