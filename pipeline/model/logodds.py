"""Which terms tell two sets of documents apart: log-odds ratios with an informative Dirichlet prior.

Monroe, Colaresi and Quinn (2008), "Fightin' Words: Lexical Feature Selection and Evaluation for
Identifying the Content of Political Conflict", Political Analysis 16(4), section 3.5. Raw
frequencies rank the words every abstract uses ("learning", "data", "results"); plain log-odds
ranks words seen once. The prior shrinks each term's log-odds towards its background rate, so a
term must be both frequent enough and unevenly used to rank high, and the z-score says how sure
the difference is.

Numpy only: the app, the pipeline and the offline export all use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Total prior mass (alpha_0). Monroe et al. scale the background counts; a few thousand
#: pseudo-counts keeps rare terms near zero while letting a term used by 10-20 papers out of a few
#: hundred stand out.
DEFAULT_PRIOR_MASS = 1000.0


@dataclass(frozen=True)
class LogOdds:
    """Per-term comparison of corpus A with corpus B, arrays of shape ``(n_terms,)``.

    Attributes:
        delta: log-odds ratio of the term in A against B, shrunk by the prior (>0: more in A).
        z: ``delta`` over its standard deviation; |z| > 1.96 is a difference at about 95%.
        count_a, count_b: the term's counts in A and B.
    """

    delta: np.ndarray
    z: np.ndarray
    count_a: np.ndarray
    count_b: np.ndarray

    def top(self, k: int, *, terms, min_count: int = 1, side: str = "a") -> list[int]:
        """Indices of the ``k`` terms most distinctive of A (``side="a"``) or B, by z, ties by term.

        Args:
            k: how many.
            terms: the term strings, ``(n_terms,)`` (for the tie-break).
            min_count: a term must occur at least this often on that side.
            side: "a" or "b".
        """
        sign, counts = (1.0, self.count_a) if side == "a" else (-1.0, self.count_b)
        z = sign * self.z
        keep = np.flatnonzero((counts >= min_count) & (z > 0))
        names = np.asarray(terms, dtype=object)[keep].astype(str)
        order = np.lexsort((names, -z[keep]))  # by z, then alphabetically: the same on every machine
        return keep[order[:k]].tolist()


def log_odds(
    counts_a: np.ndarray,
    counts_b: np.ndarray,
    *,
    background: np.ndarray | None = None,
    prior_mass: float = DEFAULT_PRIOR_MASS,
) -> LogOdds:
    """Log-odds ratio with an informative Dirichlet prior (Monroe et al. 2008, eq. 16-22).

    Args:
        counts_a: term counts in corpus A, ``(n_terms,)`` (document frequencies work as well and
            are what the app passes: one abstract repeating a word counts once).
        counts_b: the same terms' counts in B.
        background: the prior's term counts (default: A + B, the "pooled" prior); only their
            proportions matter, scaled to ``prior_mass``.
        prior_mass: alpha_0, the prior's total pseudo-count.

    Returns:
        The per-term :class:`LogOdds`.
    """
    a = np.asarray(counts_a, dtype=np.float64)
    b = np.asarray(counts_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"counts of A {a.shape} and B {b.shape} must cover the same terms")
    bg = a + b if background is None else np.asarray(background, dtype=np.float64)
    if bg.shape != a.shape:
        raise ValueError(f"background {bg.shape} must cover the same terms as A {a.shape}")
    total_bg = bg.sum()
    if total_bg <= 0 or len(a) == 0:
        zeros = np.zeros_like(a)
        return LogOdds(zeros, zeros.copy(), a, b)
    # A term the background never saw still gets a little mass: otherwise its log-odds is undefined.
    alpha = prior_mass * (bg + 0.01) / (total_bg + 0.01 * len(bg))
    alpha0 = alpha.sum()
    n_a, n_b = a.sum(), b.sum()
    log_a = np.log(a + alpha) - np.log(np.clip(n_a + alpha0 - a - alpha, 1e-12, None))
    log_b = np.log(b + alpha) - np.log(np.clip(n_b + alpha0 - b - alpha, 1e-12, None))
    delta = log_a - log_b
    variance = 1.0 / (a + alpha) + 1.0 / (b + alpha)
    return LogOdds(delta, delta / np.sqrt(variance), a, b)
