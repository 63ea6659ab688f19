"""How far papers lie from a corpus: nearest neighbours in blocks and calibrated novelty scores.

A paper's novelty is one minus its mean cosine similarity to its ``k`` nearest papers of the
corpus. It is calibrated on the corpus itself: the share of the corpus's own papers that lie at
least as far from the rest of it (leave one out) is a conformal p-value (Vovk et al. 2005; Bates
et al. 2023, "Testing for outliers with conformal p-values"): a paper like the corpus's own is
flagged below ``alpha`` with a chance of at most ``alpha``, whatever the corpus size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.model.place import nearest

#: Rows of queries scored against a corpus at once (a 1,024 x 20,000 float32 block is 80 MB), and
#: the most similarities one block holds (fewer rows against a large corpus: 200 MB at most).
CHUNK = 1024
BLOCK_CELLS = 50_000_000


def neighbours(
    queries: np.ndarray, corpus: np.ndarray, k: int, *, exclude: np.ndarray | None = None, chunk: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pipeline.model.place.nearest` in blocks of ``chunk`` queries (bounded memory; by default
    ``CHUNK`` rows, fewer against a corpus so large that a block would exceed ``BLOCK_CELLS``).

    Returns:
        ``(indices, similarities)`` int64 and float32 ``(m, min(k, n))``, most similar first,
        equal similarities by corpus row.
    """
    m = len(queries)
    width = max(0, min(k, len(corpus) - (0 if exclude is None else 1)))
    idx = np.zeros((m, width), dtype=np.int64)
    sims = np.zeros((m, width), dtype=np.float32)
    if m == 0 or width == 0:
        return idx, sims
    chunk = chunk or max(1, min(CHUNK, BLOCK_CELLS // max(1, len(corpus))))
    for start in range(0, m, chunk):
        stop = min(start + chunk, m)
        part_idx, part_sims = nearest(
            np.asarray(queries[start:stop], dtype=np.float32),
            corpus,
            width,
            exclude=None if exclude is None else exclude[start:stop],
        )
        order = np.lexsort((part_idx, -part_sims), axis=1)  # ties by row: the same on every machine
        idx[start:stop] = np.take_along_axis(part_idx, order, axis=1)
        sims[start:stop] = np.take_along_axis(part_sims, order, axis=1)
    return idx, sims


def novelty_scores(sims: np.ndarray, k: int) -> np.ndarray:
    """One minus the mean cosine similarity to the ``k`` nearest papers; ``sims`` sorted descending."""
    if sims.shape[1] == 0:
        return np.ones(len(sims), dtype=float)
    return 1.0 - sims[:, :k].astype(float).mean(axis=1)


@dataclass(frozen=True)
class NoveltyNull:
    """How far a corpus's own papers lie from the rest of it: the calibration of novelty.

    Attributes:
        scores: float ``(m,)`` sorted, the leave-one-out novelty scores of a sample of its papers.
        k: neighbours averaged.
    """

    scores: np.ndarray
    k: int

    def p_values(self, scores: np.ndarray) -> np.ndarray:
        """Conformal p-values: (1 + #{own scores >= s}) / (1 + m); small means far from the corpus."""
        m = len(self.scores)
        at_least = m - np.searchsorted(self.scores, np.asarray(scores, dtype=float), side="left")
        return (1.0 + at_least) / (1.0 + m)

    def percentile(self, q: float) -> float:
        return float(np.quantile(self.scores, q)) if len(self.scores) else float("nan")


def novelty_null(
    embeddings: np.ndarray,
    k: int,
    *,
    sample: int,
    seed: int,
    rows: np.ndarray | None = None,
    years: np.ndarray | None = None,
) -> NoveltyNull:
    """Leave-one-out novelty scores of up to ``sample`` papers of a corpus (``rows`` of it, default all).

    Args:
        years: float ``(len(rows),)`` the papers' years (NaN: unknown). When given, the sample is the
            most recent papers (random among the oldest year taken): they are scored against the
            rest of the corpus as a new paper is, and share its era (a corpus spanning decades
            holds old, noisier abstracts that lie far from everything and would make every new
            paper look ordinary).
    """
    rows = np.arange(len(embeddings)) if rows is None else np.asarray(rows, dtype=np.int64)
    if len(rows) < 2:
        return NoveltyNull(np.zeros(0), k)
    rng = np.random.default_rng(seed)
    size = min(sample, len(rows))
    known = None if years is None else np.flatnonzero(~np.isnan(np.asarray(years, dtype=float)))
    if known is not None and len(known) >= size:
        y = np.asarray(years, dtype=float)[known]
        order = np.lexsort((rng.random(len(known)), -y))  # newest first, random within a year
        picked = np.sort(known[order[:size]])
    else:
        picked = np.sort(rng.choice(len(rows), size=size, replace=False))
    corpus = rows_of(embeddings, rows)
    _, sims = neighbours(corpus[picked], corpus, k, exclude=picked)
    return NoveltyNull(np.sort(novelty_scores(sims, k)), k)


def rows_of(embeddings: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``embeddings[rows]`` without copying when ``rows`` is every row."""
    if len(rows) == len(embeddings) and (len(rows) == 0 or (rows[0] == 0 and rows[-1] == len(rows) - 1)):
        return embeddings
    return np.asarray(embeddings[rows], dtype=np.float32)
