"""``clean_text`` over many abstracts, in worker processes beside the ingest.

Cleaning is the largest part of the ingest (regular-expression passes, one core: 12.8 s of 31 s
for 100,000 abstracts here) and nothing else runs while it does, so from
:data:`PARALLEL_MIN_TEXTS` texts on the chunks are cleaned by one worker process per CPU. The text
of every chunk is the same as ``clean_text`` gives in this process (it is a pure function); where
the workers cannot start or one dies, the remaining chunks are cleaned here
(``pipeline.core.background.map_chunks``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pipeline.core.background import map_chunks
from pipeline.ingest.clean import clean_text

#: Texts from which the cleaning uses worker processes. Two spawned workers start in about 0.2 s
#: here (a new interpreter importing the cleaning rules): 5,000 abstracts take about 0.35 s either
#: way, 10,000 take 1.0 s here and 0.7 s in two workers, 100,000 11.5 s and 6.5 s.
PARALLEL_MIN_TEXTS = 10_000


def clean_chunks(texts: Sequence[str], chunk: int, *, parallel_min: int | None = None) -> Iterator[list[str]]:
    """``[clean_text(t) for t in texts[s : s + chunk]]`` for s = 0, chunk, 2 chunk, ..., in order;
    from ``parallel_min`` texts on (default :data:`PARALLEL_MIN_TEXTS`) in worker processes
    (``map_chunks``: close the iterator when stopping early)."""
    threshold = PARALLEL_MIN_TEXTS if parallel_min is None else parallel_min
    return map_chunks(clean_list, texts, chunk, parallel=len(texts) >= threshold)


def clean_list(texts: Sequence[str]) -> list[str]:
    """``clean_text`` of each text (a worker's task)."""
    return [clean_text(t) for t in texts]
