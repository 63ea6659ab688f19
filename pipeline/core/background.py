"""Worker processes beside a build (the stability runs, the map, Leiden runs, cleaning and
tokenising chunks of texts): started with ``spawn``, stopped with the build."""

from __future__ import annotations

import os
import signal
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any


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


def map_chunks(fn: Callable[[list], Any], items: Sequence, chunk: int, *, parallel: bool) -> Iterator[Any]:
    """``fn(list(items[s : s + chunk]))`` for s = 0, chunk, 2 chunk, ..., yielded in that order.

    With ``parallel``, two chunks or more and two CPUs or more, one worker process per CPU runs
    ``fn`` (a module-level function, pure: the same result in any process) while the caller takes
    the results in order, with at most two chunks a worker in flight so that only those are copied
    out of ``items``. Where the workers cannot start or one dies, the remaining chunks are done
    here. Close the iterator (``contextlib.closing``) when stopping early: that stops the workers.
    """
    starts = range(0, len(items), chunk)
    workers = min(usable_cpus(), len(starts))
    pool = None
    if parallel and workers >= 2:
        try:
            pool = worker_pool(workers)
        except (OSError, RuntimeError):
            pool = None
    if pool is None:
        for s in starts:
            yield fn(list(items[s : s + chunk]))
        return
    finished = False
    try:
        yield from _chunks_in(pool, workers, fn, items, chunk)
        finished = True
    finally:
        stop_pool(pool, finished=finished)


def _chunks_in(pool, workers: int, fn: Callable, items: Sequence, chunk: int) -> Iterator[Any]:
    """:func:`map_chunks` with ``pool``."""
    starts = range(0, len(items), chunk)
    upcoming = iter(starts)
    pending: deque[Future] = deque()

    def submit_next() -> bool:
        """Send the next chunk; False when the pool broke (a worker died starting)."""
        s = next(upcoming, None)
        try:
            if s is not None:
                pending.append(pool.submit(fn, list(items[s : s + chunk])))
            return True
        except Exception:
            return False

    taken = 0
    working = all(submit_next() for _ in range(2 * workers))
    while working and pending:
        try:
            part = pending.popleft().result()
        except Exception:  # a worker died, a chunk could not be sent: this chunk and the rest here
            break
        yield part
        taken += 1
        working = submit_next()
    for s in starts[taken:]:
        yield fn(list(items[s : s + chunk]))
