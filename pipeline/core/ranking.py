"""Top-k selection with explicit tie-breaks, and evenly spread samples: the same rows on every machine.

``np.argpartition`` and numpy's default sort are not stable, and which of several equal scores
they keep depends on the processor's SIMD code path; a ranking the product shows or stores must
not. Here ties go to the lower index (row order, i.e. paper order, or term order).
"""

from __future__ import annotations

import numpy as np

#: How many results a search lists at first, and how many more each "Show more" adds: the app's
#: Search page and the offline export's search list the same numbers.
RESULTS_PAGE = 25


def evenly_spread(n: int, limit: int) -> np.ndarray:
    """Up to ``limit`` of the indices ``0 .. n-1``, evenly spread, the first and last included,
    ascending, int64 (all ``n`` when ``n <= limit``; none when ``n`` is 0).

    The pipeline reads a sample like this where a large topic or corpus has more papers than a
    statistic needs (a label's phrases, the background's word counts, a topic's split).
    """
    return np.unique(np.linspace(0, n - 1, min(n, limit)).astype(np.int64))


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` highest scores of each row, best first, ties by lower index.

    Args:
        scores: ``(n,)`` or ``(m, n)``; ``-inf`` for entries never to pick (they still fill
            the result when a row has fewer than ``k`` finite scores).
        k: how many per row, at most ``n``.

    Returns:
        int64 ``(k,)`` or ``(m, k)``.
    """
    scores = np.asarray(scores)
    one = scores.ndim == 1
    s = scores[None, :] if one else scores
    m, n = s.shape
    k = min(int(k), n)
    if k <= 0:
        out = np.zeros((m, 0), dtype=np.int64)
        return out[0] if one else out
    part = np.argpartition(-s, k - 1, axis=1)[:, :k].astype(np.int64)
    chosen = np.take_along_axis(s, part, axis=1)
    kth = chosen.min(axis=1)
    # Rows where the k-th score is tied with a score left out: choose again by (score, index).
    crowded = np.flatnonzero((s >= kth[:, None]).sum(axis=1) > k)
    for r in crowded:
        candidates = np.flatnonzero(s[r] >= kth[r])
        part[r] = candidates[np.lexsort((candidates, -s[r, candidates]))[:k]]
    chosen = np.take_along_axis(s, part, axis=1)
    order = np.lexsort((part, -chosen), axis=1)
    out = np.take_along_axis(part, order, axis=1)
    return out[0] if one else out
