"""Intervals for shares and their changes, at a family-wise level over many topics.

Wilson score intervals for a share and Newcombe's hybrid score interval (1998, method 10) for the
difference of two shares, Bonferroni-corrected over the number of topics looked at, so that 60
topics do not show three "trends" by chance. Standard library and numpy only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def z_quantile(level: float, tests: int = 1) -> float:
    """Two-sided normal quantile for ``level``, Bonferroni-corrected over ``tests``."""
    from statistics import NormalDist

    alpha = (1.0 - level) / max(tests, 1)
    return float(NormalDist().inv_cdf(1.0 - alpha / 2.0))


def wilson(count: np.ndarray, total: np.ndarray | int, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of ``count / total`` (vectorised); (0, 1) where ``total`` is 0."""
    k = np.asarray(count, dtype=float)
    n = np.broadcast_to(np.asarray(total, dtype=float), k.shape)
    safe = np.where(n > 0, n, 1.0)
    p = k / safe
    denom = 1.0 + z * z / safe
    centre = (p + z * z / (2 * safe)) / denom
    half = z / denom * np.sqrt(np.clip(p * (1 - p) / safe + z * z / (4 * safe * safe), 0, None))
    lo, hi = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    return np.where(n > 0, lo, 0.0), np.where(n > 0, hi, 1.0)


def newcombe(
    count_a: np.ndarray, total_a: int, count_b: np.ndarray, total_b: int, z: float
) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval (1998, method 10) of ``count_a/total_a - count_b/total_b``."""
    pa = np.asarray(count_a, dtype=float) / max(total_a, 1)
    pb = np.asarray(count_b, dtype=float) / max(total_b, 1)
    la, ua = wilson(count_a, total_a, z)
    lb, ub = wilson(count_b, total_b, z)
    d = pa - pb
    return d - np.sqrt((pa - la) ** 2 + (ub - pb) ** 2), d + np.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)


def share_changes(
    counts_before: np.ndarray,
    total_before: int,
    counts_after: np.ndarray,
    total_after: int,
    *,
    level: float = 0.95,
) -> pd.DataFrame:
    """Each item's share before and after with intervals, and whether it clearly changed.

    The intervals hold for all items at once (Bonferroni over ``len(counts)`` items at ``level``).

    Returns:
        Columns n_before, share_before, lo_before, hi_before, n_after, share_after, lo_after,
        hi_after, change, change_lo, change_hi (shares as fractions), verdict: "grew", "shrank",
        "gone" (shrank, and no paper after) or "no clear change"; row i is item i.
    """
    before = np.asarray(counts_before, dtype=np.int64)
    after = np.asarray(counts_after, dtype=np.int64)
    z = z_quantile(level, len(before))
    lo_b, hi_b = wilson(before, total_before, z)
    lo_a, hi_a = wilson(after, total_after, z)
    d_lo, d_hi = newcombe(after, total_after, before, total_before, z)
    out = pd.DataFrame(
        {
            "n_before": before,
            "share_before": before / max(total_before, 1),
            "lo_before": lo_b,
            "hi_before": hi_b,
            "n_after": after,
            "share_after": after / max(total_after, 1),
            "lo_after": lo_a,
            "hi_after": hi_a,
        }
    )
    out["change"] = out["share_after"] - out["share_before"]
    out["change_lo"], out["change_hi"] = d_lo, d_hi
    verdict = np.where(d_lo > 0, "grew", np.where(d_hi < 0, "shrank", "no clear change"))
    verdict = np.where((verdict == "shrank") & (after == 0), "gone", verdict)
    out["verdict"] = verdict
    return out


def detectable_change(share: float, total_before: int, total_after: int, *, level: float, tests: int) -> float:
    """The smallest rise of a topic of ``share`` that the intervals would call a change (fraction)."""
    z = z_quantile(level, tests)
    before = round(share * total_before)
    for step in range(1, total_after + 1):
        after = round(share * total_after) + step
        if after > total_after:
            break
        lo, _ = newcombe(np.array([after]), total_after, np.array([before]), total_before, z)
        if lo[0] > 0:
            return after / total_after - before / max(total_before, 1)
    return float("nan")
