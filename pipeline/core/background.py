"""Worker processes beside a build (the stability runs, the map, Leiden runs): started with
``spawn``, stopped with the build."""

from __future__ import annotations

import os
import signal


def ignore_sigint() -> None:
    """In a background worker: Ctrl-C in a terminal reaches the whole process group; the build
    stops the worker itself, so the worker ignores it rather than print a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def usable_cpus() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def worker_pool(workers: int = 1):
    """An executor with ``workers`` processes. Spawn, not fork: forking a process that uses OpenMP
    (numba, BLAS) is unsafe. An executor, not a Pool: a worker that dies fails the future instead
    of being restarted forever. Raises OSError or RuntimeError where no process can start.

    Send large inputs with the tasks, never as the workers' start-up arguments: those are written
    into a pipe while the new process starts, and a worker that dies before reading them all (its
    start-up re-imports the parent's main script, which may fail) would leave that write waiting
    forever."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context("spawn"), initializer=ignore_sigint
    )


def stop_pool(pool, *, finished: bool) -> None:
    """Shut ``pool`` down; unless its work is ``finished`` (the build failed or was interrupted),
    terminate the worker first instead of waiting for it."""
    if not finished:
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)
