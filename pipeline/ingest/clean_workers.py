"""``clean_text`` over many abstracts, in worker processes beside the ingest.

Cleaning is the largest part of the ingest (regular-expression passes, one core: 12.8 s of 31 s
for 100,000 abstracts here) and nothing else runs while it does, so from
:data:`PARALLEL_MIN_TEXTS` texts on the chunks are cleaned by one worker process per CPU. The text
of every chunk is the same as ``clean_text`` gives in this process (it is a pure function); where
the workers cannot start or one dies, the remaining chunks are cleaned here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future

from pipeline.core.background import stop_pool, usable_cpus, worker_pool
from pipeline.ingest.clean import clean_text

#: Texts from which the cleaning uses worker processes. Two spawned workers start in about 0.2 s
#: here (a new interpreter importing the cleaning rules): 5,000 abstracts take about 0.35 s either
#: way, 10,000 take 1.0 s here and 0.7 s in two workers, 100,000 11.5 s and 6.5 s.
PARALLEL_MIN_TEXTS = 10_000


def clean_chunks(texts: Sequence[str], chunk: int, *, parallel_min: int | None = None) -> Iterator[list[str]]:
    """``[clean_text(t) for t in texts[s : s + chunk]]`` for s = 0, chunk, 2 chunk, ..., in order.

    From ``parallel_min`` texts on (default :data:`PARALLEL_MIN_TEXTS`), with two CPUs or more,
    worker processes clean the chunks while the caller takes them in order (to report progress
    between them). Close the iterator (``contextlib.closing``) when stopping early: that stops the
    workers.
    """
    starts = range(0, len(texts), chunk)
    workers = min(usable_cpus(), len(starts))
    pool = None
    if workers >= 2 and len(texts) >= (PARALLEL_MIN_TEXTS if parallel_min is None else parallel_min):
        try:
            pool = worker_pool(workers)
        except (OSError, RuntimeError):
            pool = None
    if pool is None:
        for s in starts:
            yield clean_list(texts[s : s + chunk])
        return
    finished = False
    try:
        yield from _chunks_in(pool, workers, texts, chunk)
        finished = True
    finally:
        stop_pool(pool, finished=finished)


def _chunks_in(pool, workers: int, texts: Sequence[str], chunk: int) -> Iterator[list[str]]:
    """:func:`clean_chunks` with ``pool``: at most two chunks a worker in flight, so that only
    those are copied out of ``texts`` (a column of a million abstracts stays where it is)."""
    starts = range(0, len(texts), chunk)
    upcoming = iter(starts)
    pending: deque[Future] = deque()

    def submit_next() -> bool:
        """Send the next chunk; False when the pool broke (a worker died starting)."""
        s = next(upcoming, None)
        try:
            if s is not None:
                pending.append(pool.submit(clean_list, list(texts[s : s + chunk])))
            return True
        except Exception:
            return False

    taken = 0
    working = all(submit_next() for _ in range(2 * workers))
    while working and pending:
        part = _result(pending.popleft())
        if part is None:  # a worker died: this chunk and the rest are cleaned here
            break
        yield part
        taken += 1
        working = submit_next()
    for s in starts[taken:]:
        yield clean_list(texts[s : s + chunk])


def clean_list(texts: Sequence[str]) -> list[str]:
    """``clean_text`` of each text (a worker's task)."""
    return [clean_text(t) for t in texts]


def _result(future: Future) -> list[str] | None:
    try:
        return future.result()
    except Exception:  # BrokenProcessPool, a pickling error: the caller cleans the chunk itself
        return None
