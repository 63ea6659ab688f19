"""What changed: a corpus against a reference corpus, topics of two builds matched, topic lineage.

Three questions, one set of tools (numpy and pandas only: the app and the CLI both use it):

* :func:`compare` puts the papers of a *new* corpus on a *reference* corpus: each new paper is placed
  into the reference's topics and onto its map without refitting anything (:mod:`pipeline.place`:
  the map position of the incremental build; the topic most of its nearest reference papers hold,
  which keeps topic shares unbiased where the nearest topic embedding does not), each reference
  topic's share then and now gets an
  interval, the terms that tell the two apart come from :mod:`pipeline.logodds`, each new paper
  gets a novelty score (how far it lies from its nearest reference papers) with its closest prior
  work, and the two builds' own topics are matched (:func:`match_topics`).
* :func:`match_topics` matches the topics of any two builds (two years built separately, or a
  rebuild with other settings): matched, split, merged, new, vanished, with the evidence.
* :func:`lineage` follows the topics of one multi-year build across periods.

Calibration, once for all three: a paper is *far from* a corpus when its novelty score (one minus
its mean cosine similarity to its ``novelty_k`` nearest papers there) is higher than that corpus's
own papers' scores against the rest of it (leave one out) for all but ``novel_alpha`` of them. That
is a conformal p-value (Vovk et al. 2005; Bates et al. 2023, "Testing for outliers with conformal
p-values"): if the paper were like the corpus's papers, the chance of it being flagged is at most
``novel_alpha``, whatever the corpus size.

Shares carry Wilson score intervals and their changes Newcombe's hybrid score interval (Newcombe
1998, method 10), both at a family-wise level over the topics (Bonferroni), so that looking at 60
topics does not find three "trends" by chance.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import artifacts, schema
from pipeline.logodds import DEFAULT_PRIOR_MASS, log_odds
from pipeline.place import map_position, nearest, vote_topics

#: Bump when what a comparison computes changes: stored comparisons of another version are recomputed.
COMPARE_VERSION = 1

#: Rows of queries scored against a corpus at once (a 1,024 x 20,000 float32 block is 80 MB).
CHUNK = 1024


class CompareError(ValueError):
    """Two builds cannot be compared; the message says why and what to do."""


@dataclass(frozen=True)
class CompareParams:
    """Settings of a comparison (defaults chosen in EVALUATION.md, "Comparing corpora").

    Attributes:
        k: reference neighbours whose topics a paper votes for when topics are matched, and that
            place it on the reference map.
        novelty_k: nearest reference papers averaged in the novelty score.
        novel_alpha: a paper is "far from everything before" when its conformal p-value is below this.
        level: family-wise confidence of the share intervals (Bonferroni over the topics).
        majority: a topic "goes to" a partner when more than this share of its papers does (0.5: a
            majority, so at most one partner can hold it).
        part: the smallest share of a topic's papers that counts as a piece of a split or merge
            (0.25: at most four pieces are named).
        min_papers: topics with fewer papers are not given a match status (too few to tell).
        null_sample: reference papers scored leave-one-out to calibrate novelty (the p-values'
            resolution is 1 / (sample + 1)).
        null_recent: take them among the reference's most recent papers (when it has years), not
            at random: see :func:`novelty_null`.
        listed: closest prior papers kept per new paper.
        top_terms: distinctive terms kept on each side.
        prior_mass: total pseudo-count of the log-odds prior (:mod:`pipeline.logodds`).
        seed: of the calibration sample.
    """

    k: int = 10
    novelty_k: int = 5
    novel_alpha: float = 0.05
    level: float = 0.95
    majority: float = 0.5
    part: float = 0.25
    min_papers: int = 3
    null_sample: int = 2000
    null_recent: bool = True
    listed: int = 5
    top_terms: int = 40
    prior_mass: float = DEFAULT_PRIOR_MASS
    seed: int = 0


# ------------------------------------------------------------------------------------------
# One build, as the comparison sees it
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Side:
    """What a comparison reads of one build.

    Attributes:
        name, build_id: which build.
        model_key: the embedding model's key (two builds must share it to be compared).
        doc_ids: object ``(n,)``.
        topics: int ``(n,)`` each paper's topic id.
        years: float ``(n,)`` each paper's year, NaN when unknown.
        embeddings: float32 ``(n, dim)`` normalised (a memory map is fine).
        xy: float32 ``(n, 2)`` map positions.
        topic_table: one row per topic: topic, label, size, keywords (list of str).
        topic_embeddings: float32 ``(topics, dim)``, row j is ``topic_table`` row j.
        terms: the vocabulary with document frequencies: term, df.
        texts: ``texts(rows) -> list[str]``, the modelling text of those papers (for counting
            terms on the other build's vocabulary).
    """

    name: str
    build_id: str
    model_key: str
    doc_ids: np.ndarray
    topics: np.ndarray
    years: np.ndarray
    embeddings: np.ndarray
    xy: np.ndarray
    topic_table: pd.DataFrame
    topic_embeddings: np.ndarray
    terms: pd.DataFrame
    texts: Callable[[np.ndarray], list[str]] = field(repr=False)
    ngram_range: tuple[int, int] = (1, 2)

    @property
    def n(self) -> int:
        return len(self.doc_ids)

    @property
    def labels(self) -> dict[int, str]:
        return dict(zip(self.topic_table["topic"].astype(int), self.topic_table["label"].astype(str), strict=True))


def load_side(root: Path, name: str) -> Side:
    """A built corpus as a :class:`Side` (embeddings memory-mapped; texts read when needed)."""
    folder = artifacts.corpus_path(root, name)
    manifest = artifacts.read_manifest(folder)
    papers = artifacts.read_table(folder, schema.PAPERS, columns=["doc_id", "row", "year", "topic", "x", "y"])
    papers = papers.sort_values("row", kind="stable").reset_index(drop=True)
    topics = artifacts.read_table(folder, schema.TOPICS, columns=["topic", "label", "size", "keywords"])
    texts_cache: dict[str, list[str]] = {}

    def texts(rows: np.ndarray) -> list[str]:
        if "all" not in texts_cache:
            table = artifacts.read_table(folder, schema.PAPERS, columns=["row", "model_text"]).sort_values("row")
            texts_cache["all"] = table["model_text"].astype(str).tolist()
        every = texts_cache["all"]
        return [every[i] for i in np.asarray(rows, dtype=np.int64)]

    return Side(
        name=name,
        build_id=folder.name,
        model_key=str((manifest.get("embedding") or {}).get("model_key", "")),
        doc_ids=papers["doc_id"].astype(str).to_numpy(dtype=object),
        topics=papers["topic"].to_numpy(dtype=np.int64),
        years=pd.to_numeric(papers["year"], errors="coerce").to_numpy(dtype=float),
        embeddings=artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True),
        xy=papers[["x", "y"]].to_numpy(dtype=np.float32),
        topic_table=_topic_frame(topics),
        topic_embeddings=np.asarray(artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS), dtype=np.float32),
        terms=artifacts.read_table(folder, schema.TERMS, columns=["term", "df"]),
        texts=texts,
        ngram_range=tuple((manifest.get("params") or {}).get("represent", {}).get("ngram_range", (1, 2))),
    )


def _topic_frame(topics: pd.DataFrame) -> pd.DataFrame:
    out = topics[["topic", "label", "size", "keywords"]].copy()
    out["topic"] = out["topic"].astype(np.int64)
    out["label"] = out["label"].astype(str)
    out["keywords"] = [list(k) if k is not None else [] for k in out["keywords"]]
    return out.reset_index(drop=True)


# ------------------------------------------------------------------------------------------
# Intervals
# ------------------------------------------------------------------------------------------


def _z(level: float, tests: int = 1) -> float:
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
    z = _z(level, len(before))
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
    z = _z(level, tests)
    before = round(share * total_before)
    for step in range(1, total_after + 1):
        after = round(share * total_after) + step
        if after > total_after:
            break
        lo, _ = newcombe(np.array([after]), total_after, np.array([before]), total_before, z)
        if lo[0] > 0:
            return after / total_after - before / max(total_before, 1)
    return float("nan")


# ------------------------------------------------------------------------------------------
# Neighbours and novelty
# ------------------------------------------------------------------------------------------


def neighbours(
    queries: np.ndarray, corpus: np.ndarray, k: int, *, exclude: np.ndarray | None = None, chunk: int = CHUNK
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pipeline.place.nearest` in blocks of ``chunk`` queries (bounded memory).

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
    corpus = _rows(embeddings, rows)
    _, sims = neighbours(corpus[picked], corpus, k, exclude=picked)
    return NoveltyNull(np.sort(novelty_scores(sims, k)), k)


def _rows(embeddings: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``embeddings[rows]`` without copying when ``rows`` is every row."""
    if len(rows) == len(embeddings) and (len(rows) == 0 or (rows[0] == 0 and rows[-1] == len(rows) - 1)):
        return embeddings
    return np.asarray(embeddings[rows], dtype=np.float32)


# ------------------------------------------------------------------------------------------
# Topic matching
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Matching:
    """Topics of two builds matched.

    Attributes:
        flows: one row per (topic of A, topic of B) pair with evidence: topic_a, topic_b (-1:
            "nothing close on the other side"), from_a (share of a's papers going to b), from_b
            (share of b's papers coming from a), papers_a / papers_b (those shares as paper counts),
            centroid_sim (cosine of the topic embeddings; NaN for -1).
        topics: one row per topic of either build: side ("a" or "b"), topic, label, size, status,
            partners (topic ids on the other side), partner_shares, none_share (share of its
            papers with nothing close on the other side), best_sim (best centroid similarity).
        method: "shared papers" or "nearest neighbours" (or both, "shared papers and nearest
            neighbours").
        shared: papers the two builds share (by doc_id).
    """

    flows: pd.DataFrame
    topics: pd.DataFrame
    method: str
    shared: int


#: Statuses of a topic of build A (the earlier, or the reference) and of build B.
STATUS_A = {
    "matched": "matched",
    "merged": "merged into",
    "split": "split into",
    "gone": "vanished",
    "unclear": "no clear successor",
    "small": "too small to tell",
}
STATUS_B = {
    "matched": "matched",
    "merged": "split from",
    "split": "merger of",
    "gone": "new",
    "unclear": "no clear precursor",
    "small": "too small to tell",
}


def vote_matrix(
    neighbour_topics: np.ndarray, neighbour_weights: np.ndarray, far: np.ndarray, topic_ids: np.ndarray
) -> np.ndarray:
    """Each paper's distribution over the other build's topics, plus "nothing close" last.

    Args:
        neighbour_topics: int ``(n, k)`` topic ids of each paper's nearest papers on the other side.
        neighbour_weights: float ``(n, k)`` their weights (rows summing to 1).
        far: bool ``(n,)`` papers with nothing close on the other side (all weight to the last column).
        topic_ids: int ``(t,)`` the other side's topic ids (columns).

    Returns:
        float ``(n, t + 1)``, rows sum to 1.
    """
    n = len(neighbour_topics)
    out = np.zeros((n, len(topic_ids) + 1), dtype=float)
    if n == 0:
        return out
    col = pd.Index(topic_ids).get_indexer(neighbour_topics.ravel()).reshape(neighbour_topics.shape)
    col = np.where(col < 0, len(topic_ids), col)
    rows = np.repeat(np.arange(n), neighbour_topics.shape[1])
    np.add.at(out, (rows, col.ravel()), neighbour_weights.ravel())
    out[far] = 0.0
    out[far, -1] = 1.0
    empty = out.sum(axis=1) == 0
    out[empty, -1] = 1.0
    return out


def match_topics(
    a: Side,
    b: Side,
    params: CompareParams = CompareParams(),
    *,
    a_rows: np.ndarray | None = None,
    b_rows: np.ndarray | None = None,
    b_in_a: Lookup | None = None,
) -> Matching:
    """Match the topics of build ``a`` (earlier, or the reference) with those of build ``b``.

    Every paper of each build is given a distribution over the other build's topics: its own
    topic there when the other build holds the same paper (by doc_id), else the topics of its
    ``k`` nearest papers there (equal votes), or "nothing close" when it lies far from every paper
    there (conformal p-value below ``novel_alpha``, calibrated on the other build). A topic's
    flows are its papers' distributions summed. Then, for a topic X with at least ``min_papers``
    papers (MONIC-style rules, Spiliopoulou et al. 2006):

    * nothing close for more than ``majority`` of its papers: vanished (in a) / new (in b);
    * more than ``majority`` of its papers in one partner Y: matched when more than ``majority`` of
      Y's papers are in X too, else "merged into Y" (a) / "split from Y" (b);
    * at least two partners with ``part`` of its papers each, each of them holding more than
      ``majority`` of its own papers in X: "split into" (a) / "merger of" (b);
    * otherwise no clear successor / precursor.

    Args:
        a_rows, b_rows: papers of each build taking part (default all).
        b_in_a: :func:`lookup` of ``b_rows`` in ``a_rows``, when already done.
    """
    if a.model_key and b.model_key and a.model_key != b.model_key:
        raise CompareError(
            f"{a.name} and {b.name} were embedded with different models ({a.model_key} vs {b.model_key}); "
            "rebuild one of them with the other's embedding settings to compare them."
        )
    a_rows = np.arange(a.n) if a_rows is None else np.asarray(a_rows, dtype=np.int64)
    b_rows = np.arange(b.n) if b_rows is None else np.asarray(b_rows, dtype=np.int64)
    a_ids, b_ids = a.topic_table["topic"].to_numpy(), b.topic_table["topic"].to_numpy()
    a_in_b = lookup(a, a_rows, b, b_rows, params)
    b_in_a = b_in_a if b_in_a is not None else lookup(b, b_rows, a, a_rows, params)
    va, vb = _distributions(a_in_b, b, params), _distributions(b_in_a, a, params)
    shared_a = int((a_in_b.shared >= 0).sum())
    # Topic x topic flows: rows topics of a (+ none), columns topics of b (+ none).
    ta = pd.Index(a_ids).get_indexer(a.topics[a_rows])
    tb = pd.Index(b_ids).get_indexer(b.topics[b_rows])
    from_a = _group_sum(va, ta, len(a_ids))  # (ka, kb + 1): a's papers over b's topics
    from_b = _group_sum(vb, tb, len(b_ids))  # (kb, ka + 1): b's papers over a's topics
    size_a = np.bincount(ta[ta >= 0], minlength=len(a_ids)).astype(float)
    size_b = np.bincount(tb[tb >= 0], minlength=len(b_ids)).astype(float)
    share_a = from_a / np.clip(size_a[:, None], 1, None)
    share_b = from_b / np.clip(size_b[:, None], 1, None)
    sim = np.asarray(a.topic_embeddings, dtype=float) @ np.asarray(b.topic_embeddings, dtype=float).T
    flows = _flow_table(a_ids, b_ids, from_a, from_b, share_a, share_b, sim)
    topics = pd.concat(
        [
            _statuses("a", a, a_ids, size_a, share_a, share_b, b_ids, sim, params),
            _statuses("b", b, b_ids, size_b, share_b, share_a, a_ids, sim.T, params),
        ],
        ignore_index=True,
    )
    shared = shared_a
    if shared and shared >= min(len(a_rows), len(b_rows)):
        method = "shared papers"
    elif shared:
        method = "shared papers and nearest neighbours"
    else:
        method = "nearest neighbours"
    return Matching(flows=flows, topics=topics, method=method, shared=shared)


@dataclass(frozen=True)
class Lookup:
    """Papers of one build looked up in another.

    Attributes:
        shared: int ``(m,)`` each paper's row in the other build when it holds the same doc_id, else -1.
        pool: int ``(p,)`` the other build's rows searched (those this build does not hold).
        idx: int ``(m, width)`` nearest ``pool`` positions (rows of shared papers too, unused).
        sims: float32 ``(m, width)`` their cosine similarities, most similar first.
        scores: float ``(m,)`` novelty scores against ``pool``.
        p_values: float ``(m,)`` conformal p-values (calibrated on ``pool``'s own papers).
    """

    shared: np.ndarray
    pool: np.ndarray
    idx: np.ndarray
    sims: np.ndarray
    scores: np.ndarray
    p_values: np.ndarray
    null: NoveltyNull


def lookup(side: Side, rows: np.ndarray, other: Side, other_rows: np.ndarray, params: CompareParams) -> Lookup:
    """Find each paper of ``side`` (``rows``) in ``other`` (``other_rows``): its copy, or its neighbours."""
    position = pd.Index(other.doc_ids[other_rows]).get_indexer(side.doc_ids[rows])
    shared = np.where(position >= 0, other_rows[np.clip(position, 0, None)] if len(other_rows) else -1, -1)
    own = pd.Index(side.doc_ids[rows]).get_indexer(other.doc_ids[other_rows]) < 0
    pool = other_rows[own]  # a paper is never its own neighbour
    width = max(params.k, params.novelty_k, params.listed)
    corpus = _rows(other.embeddings, pool)
    null = novelty_null(
        corpus, params.novelty_k, sample=params.null_sample, seed=params.seed,
        years=other.years[pool] if params.null_recent else None,
    )  # fmt: skip
    idx, sims = neighbours(np.asarray(side.embeddings[rows], dtype=np.float32), corpus, width)
    scores = novelty_scores(sims, params.novelty_k)
    p = null.p_values(scores) if len(null.scores) else np.zeros(len(rows))
    return Lookup(shared.astype(np.int64), pool, idx, sims, scores, p, null)


def _distributions(found: Lookup, other: Side, params: CompareParams) -> np.ndarray:
    """Each looked-up paper's distribution over ``other``'s topics (+ "nothing close" last)."""
    other_ids = other.topic_table["topic"].to_numpy()
    m = len(found.shared)
    out = np.zeros((m, len(other_ids) + 1), dtype=float)
    shared = found.shared >= 0
    if shared.any():
        col = pd.Index(other_ids).get_indexer(other.topics[found.shared[shared]])
        out[np.flatnonzero(shared), np.where(col < 0, len(other_ids), col)] = 1.0
    rest = np.flatnonzero(~shared)
    if len(rest) and found.idx.shape[1]:
        top = found.idx[rest, : params.k]
        weights = np.full(top.shape, 1.0 / top.shape[1])
        far = found.p_values[rest] < params.novel_alpha
        out[rest] = vote_matrix(other.topics[found.pool][top], weights, far, other_ids)
    elif len(rest):
        out[rest, -1] = 1.0
    return out


def _group_sum(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    out = np.zeros((n_groups, values.shape[1]), dtype=float)
    keep = groups >= 0
    np.add.at(out, groups[keep], values[keep])
    return out


def _flow_table(a_ids, b_ids, from_a, from_b, share_a, share_b, sim) -> pd.DataFrame:
    ka, kb = len(a_ids), len(b_ids)
    ia, ib = np.meshgrid(np.arange(ka), np.arange(kb), indexing="ij")
    ia, ib = ia.ravel(), ib.ravel()
    table = pd.DataFrame(
        {
            "topic_a": a_ids[ia].astype(np.int64),
            "topic_b": b_ids[ib].astype(np.int64),
            "papers_a": from_a[ia, ib],
            "from_a": share_a[ia, ib],
            "papers_b": from_b[ib, ia],
            "from_b": share_b[ib, ia],
            "centroid_sim": sim[ia, ib] if ka and kb else np.zeros(0),
        }
    )
    none_a = pd.DataFrame(
        {"topic_a": a_ids.astype(np.int64), "topic_b": -1, "papers_a": from_a[:, kb], "from_a": share_a[:, kb],
         "papers_b": 0.0, "from_b": 0.0, "centroid_sim": np.nan}
    )  # fmt: skip
    none_b = pd.DataFrame(
        {"topic_a": -1, "topic_b": b_ids.astype(np.int64), "papers_a": 0.0, "from_a": 0.0,
         "papers_b": from_b[:, ka], "from_b": share_b[:, ka], "centroid_sim": np.nan}
    )  # fmt: skip
    table = pd.concat([t for t in (table, none_a, none_b) if len(t)], ignore_index=True)
    table = table[(table["papers_a"] > 0) | (table["papers_b"] > 0)]
    return table.sort_values(["topic_a", "topic_b"], kind="stable").reset_index(drop=True)


def _statuses(side_name, side: Side, ids, sizes, share, other_share, other_ids, sim, params: CompareParams):
    """Status of each topic of one side from its papers' shares over the other side's topics."""
    rows = []
    labels = side.labels
    k_other = len(other_ids)
    for i, topic in enumerate(ids.tolist()):  # one pass per topic
        dist = share[i, :k_other]
        none = float(share[i, k_other])
        order = np.lexsort((other_ids, -dist))
        best = int(order[0]) if k_other else -1
        parts = [int(j) for j in order if dist[j] >= params.part]
        if sizes[i] < params.min_papers:
            status, partners = "small", []
        elif none > params.majority:
            status, partners = "gone", []
        elif best >= 0 and dist[best] > params.majority:
            status = "matched" if other_share[best, i] > params.majority else "merged"
            partners = [best]
        elif len(parts) >= 2 and all(other_share[j, i] > params.majority for j in parts):
            status, partners = "split", parts  # each part is mostly made of this topic's papers
        else:
            status, partners = "unclear", parts[:1]
        rows.append(
            {
                "side": side_name,
                "topic": int(topic),
                "label": labels.get(int(topic), f"topic {topic}"),
                "size": int(sizes[i]),
                "status": status,
                "status_text": (STATUS_A if side_name == "a" else STATUS_B)[status],
                "partners": [int(other_ids[j]) for j in partners],
                "partner_shares": [round(float(dist[j]), 4) for j in partners],
                "none_share": round(none, 4),
                "best_partner": int(other_ids[best]) if best >= 0 else -1,
                "best_share": round(float(dist[best]), 4) if best >= 0 else 0.0,
                "best_sim": float(np.max(sim[i])) if k_other else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=[
        "side", "topic", "label", "size", "status", "status_text", "partners", "partner_shares", "none_share",
        "best_partner", "best_share", "best_sim",
    ])  # fmt: skip


# ------------------------------------------------------------------------------------------
# Distinctive terms
# ------------------------------------------------------------------------------------------


def count_terms(texts: Sequence[str], vocabulary: Sequence[str], ngram_range=(1, 2)) -> np.ndarray:
    """Papers among ``texts`` using each term of ``vocabulary`` (the pipeline's tokenisation)."""
    if not len(vocabulary) or not len(texts):
        return np.zeros(len(vocabulary), dtype=np.int64)
    from pipeline.vocab import make_vectorizer

    vec = make_vectorizer(ngram_range=ngram_range, vocabulary=list(vocabulary))
    counts = vec.transform(list(texts))
    counts.data[:] = 1
    return np.asarray(counts.sum(axis=0)).ravel().astype(np.int64)


def count_terms_in(texts: Sequence[str], vocabulary: Sequence[str], ngram_range=(1, 2)) -> np.ndarray:
    """:func:`count_terms`, tokenising only the texts that hold every word of some term (a cheap
    substring test first: exact counts for a few terms over many texts)."""
    if not len(vocabulary) or not len(texts):
        return np.zeros(len(vocabulary), dtype=np.int64)
    lowered = pd.Series(list(texts), dtype=object).str.lower()
    words = sorted({w for term in vocabulary for w in str(term).split()})
    has = {w: lowered.str.contains(w, regex=False).to_numpy(dtype=bool) for w in words}
    keep = np.zeros(len(lowered), dtype=bool)
    for term in vocabulary:  # the few candidate terms
        keep |= np.logical_and.reduce([has[w] for w in str(term).split()])
    rows = np.flatnonzero(keep)
    return count_terms([texts[i] for i in rows], vocabulary, ngram_range)


def shared_document_frequencies(
    new: Side,
    ref: Side,
    ref_rows: np.ndarray,
    shared_rows: np.ndarray,
    *,
    candidates: int | None = None,
    prior_mass: float = DEFAULT_PRIOR_MASS,
) -> pd.DataFrame:
    """Document frequencies of both corpora over the union of their vocabularies.

    The stored vocabularies (terms.parquet) give each side's counts of its own terms; the other
    side's terms are counted in its texts with the same tokenisation. Papers of the reference
    that the new corpus also holds (``shared_rows``) are taken out of the reference's counts.

    Args:
        candidates: count only this many of each side's own terms on the other side: those that
            would rank highest if the other side never used them (an upper bound of their
            log-odds); the others are left out. None counts every term.

    Returns:
        Columns term, df_new, df_ref (papers of ``ref_rows``); every count exact.
    """
    new_terms = new.terms.set_index("term")["df"].astype(np.int64)
    ref_terms = ref.terms.set_index("term")["df"].astype(np.int64)
    ngrams = tuple(ref.ngram_range)
    if len(shared_rows):  # the reference's own counts, less the papers it shares with the new corpus
        ref_terms = ref_terms - count_terms(ref.texts(shared_rows), ref_terms.index.tolist(), ngrams)
    only_new = np.array(sorted(set(new_terms.index) - set(ref_terms.index)), dtype=object)
    only_ref = np.array(sorted(set(ref_terms.index) - set(new_terms.index)), dtype=object)
    if candidates is not None:
        only_new, only_ref = _candidates(new_terms, ref_terms, only_new, only_ref, candidates, prior_mass)
    df_new = pd.concat(
        [new_terms, pd.Series(count_terms_in(new.texts(np.arange(new.n)), only_ref, ngrams), index=only_ref)]
    )
    df_ref = pd.concat([ref_terms, pd.Series(count_terms_in(ref.texts(ref_rows), only_new, ngrams), index=only_new)])
    both = new_terms.index.intersection(ref_terms.index).union(pd.Index(only_new)).union(pd.Index(only_ref))
    out = pd.DataFrame({"df_new": df_new.reindex(both), "df_ref": df_ref.reindex(both)}).astype(np.int64)
    out = out.rename_axis("term").reset_index()
    return out.sort_values("term", kind="stable").reset_index(drop=True)


def _candidates(new_terms, ref_terms, only_new, only_ref, n: int, prior_mass: float):
    """The one-side terms worth counting on the other side: best log-odds if the other side had none."""
    upper = pd.DataFrame(
        {"df_new": new_terms.reindex(new_terms.index.union(ref_terms.index)).fillna(0),
         "df_ref": ref_terms.reindex(new_terms.index.union(ref_terms.index)).fillna(0)}
    )  # fmt: skip
    lo = log_odds(upper["df_new"].to_numpy(), upper["df_ref"].to_numpy(), prior_mass=prior_mass)
    terms = upper.index.to_numpy(dtype=object)
    pick_new = set(terms[lo.top(n, terms=terms, min_count=3, side="a")]) if len(terms) else set()
    pick_ref = set(terms[lo.top(n, terms=terms, min_count=3, side="b")]) if len(terms) else set()
    return (
        np.array([t for t in only_new if t in pick_new], dtype=object),
        np.array([t for t in only_ref if t in pick_ref], dtype=object),
    )


def min_support(n_papers: int) -> int:
    """Papers that must use a term before it can be called distinctive of a corpus: a term in two
    papers is an anecdote. At least 3 papers and 0.5% of the corpus (the trends page's rule)."""
    return int(max(3, round(0.005 * n_papers)))


def distinctive_terms(
    df: pd.DataFrame, n_new: int, n_ref: int, *, top: int, prior_mass: float = DEFAULT_PRIOR_MASS
) -> pd.DataFrame:
    """Terms that tell the new corpus from the reference: the ``top`` of each side by Monroe et
    al.'s log-odds on document frequencies (:mod:`pipeline.logodds`).

    A term is kept when its z passes 1.96, it is used by :func:`min_support` papers on its side,
    and the share of papers using it differs the same way (Newcombe's 95% interval of the
    difference leaves out zero). The last check guards against a confound of log-odds on document
    frequencies: a corpus whose abstracts use more distinct terms gives each term a smaller share
    of all term uses, so a word every corpus uses alike ("data") would otherwise look "used less".

    Returns:
        Columns term, df_new, df_ref, share_new, share_ref, delta, z, side ("new": used more in the
        new corpus; "ref": less); the new side first, each by |z| then term.
    """
    cols = ["term", "df_new", "df_ref", "share_new", "share_ref", "delta", "z", "side"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    a, b = df["df_new"].to_numpy(), df["df_ref"].to_numpy()
    lo = log_odds(a, b, prior_mass=prior_mass)
    d_lo, d_hi = newcombe(a, n_new, b, n_ref, _z(0.95))
    agrees = np.where(lo.z > 0, d_lo > 0, d_hi < 0)
    terms = df["term"].to_numpy(dtype=object)
    picked = []
    for side, min_count in (("a", min_support(n_new)), ("b", min_support(n_ref))):
        ranked = lo.top(len(terms), terms=terms, min_count=min_count, side=side)
        rows = [i for i in ranked if abs(lo.z[i]) > 1.96 and agrees[i]][:top]
        picked += [(i, "new" if side == "a" else "ref") for i in rows]
    if not picked:
        return pd.DataFrame(columns=cols)
    idx = np.array([i for i, _ in picked])
    out = df.iloc[idx][["term", "df_new", "df_ref"]].reset_index(drop=True)
    out["share_new"] = out["df_new"] / max(n_new, 1)
    out["share_ref"] = out["df_ref"] / max(n_ref, 1)
    out["delta"] = lo.delta[idx]
    out["z"] = lo.z[idx]
    out["side"] = [s for _, s in picked]
    return out[cols]


# ------------------------------------------------------------------------------------------
# A corpus against a reference
# ------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    """A new corpus against a reference: plain tables and a JSON-able summary (saved as files).

    Attributes:
        summary: names, build ids, version, params, counts, calibration, notes (JSON-able).
        papers: one row per new paper (``schema.CMP_PAPER_COLUMNS``), most novel first.
        shares: one row per reference topic (``schema.CMP_SHARE_COLUMNS``).
        terms: distinctive terms (``schema.CMP_TERM_COLUMNS``).
        flows, matches: :class:`Matching` of the reference's topics (a) with the new corpus's (b).
    """

    summary: dict
    papers: pd.DataFrame
    shares: pd.DataFrame
    terms: pd.DataFrame
    flows: pd.DataFrame
    matches: pd.DataFrame

    TABLES = {
        "papers": schema.CMP_PAPERS,
        "shares": schema.CMP_SHARES,
        "terms": schema.CMP_TERMS,
        "flows": schema.CMP_FLOWS,
        "matches": schema.CMP_MATCHES,
    }

    @property
    def key(self) -> tuple[str, str, int]:
        """(new build id, reference build id, version): what the comparison was computed from."""
        s = self.summary
        return (s["new"]["build_id"], s["reference"]["build_id"], s["version"])

    def to_dict(self) -> dict:
        """Everything as JSON-able data (for an offline export): the summary and each table's records."""
        out = {"summary": self.summary}
        for attr in self.TABLES:
            frame = getattr(self, attr)
            out[attr] = json.loads(frame.to_json(orient="records", force_ascii=False))
        return out

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for attr, file in self.TABLES.items():
            getattr(self, attr).to_parquet(folder / file, index=False)
        artifacts.write_json(folder / schema.COMPARISON, self.summary)

    @classmethod
    def load(cls, folder: Path) -> Comparison:
        try:
            summary = json.loads((folder / schema.COMPARISON).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise artifacts.ArtifactError(f"comparison in {folder} cannot be read ({exc}); recompute it.") from None
        tables = {attr: artifacts.read_table(folder, file) for attr, file in cls.TABLES.items()}
        return cls(summary=summary, **tables)


def overlap(new: Side, ref: Side) -> tuple[np.ndarray, np.ndarray]:
    """(reference rows not in the new corpus, reference rows also in it), by doc_id."""
    in_new = pd.Index(new.doc_ids).get_indexer(ref.doc_ids) >= 0
    return np.flatnonzero(~in_new), np.flatnonzero(in_new)


def compare(new: Side, ref: Side, params: CompareParams = CompareParams()) -> Comparison:
    """Compare corpus ``new`` with reference ``ref`` (see the module docstring).

    Papers the reference shares with the new corpus (same doc_id) are left out of the reference
    for placement, shares, novelty and terms (a paper is not prior work to itself); the topic
    matching uses them as its strongest evidence.

    Raises:
        CompareError: different embedding models, or nothing left in the reference.
    """
    if new.model_key and ref.model_key and new.model_key != ref.model_key:
        raise CompareError(
            f"{new.name} and {ref.name} were embedded with different models; rebuild one with the other's "
            "embedding settings to compare them."
        )
    ref_rows, shared_rows = overlap(new, ref)
    if len(ref_rows) == 0:
        raise CompareError(
            f"every paper of {ref.name} is also in {new.name}: there is no earlier work to compare with. "
            f"Pick a reference that holds other papers."
        )
    started = time.perf_counter()
    ref_topic_ids = ref.topic_table["topic"].to_numpy()
    ref_labels = ref.labels

    # One lookup of the new papers among the reference papers they are not (a paper is not its own
    # prior work) gives the placement, the map position and the novelty.
    found = lookup(new, np.arange(new.n), ref, np.arange(ref.n), params)
    # Placement: the topic most of its nearest reference papers belong to (pipeline.place), and the
    # map position the incremental build gives (the similarity-weighted mean of theirs).
    sorted_ids = np.sort(ref_topic_ids)
    placed_topic, placed_prob = vote_topics(
        ref.topics[found.pool][found.idx[:, : params.k]], found.sims[:, : params.k], sorted_ids
    )
    idx, sims, scores, p = found.idx, found.sims, found.scores, found.p_values
    xy = map_position(idx[:, : params.k], sims[:, : params.k], ref.xy[found.pool])
    null = found.null
    listed = idx[:, : params.listed]
    papers = pd.DataFrame(
        {
            "doc_id": new.doc_ids.astype(str),
            "new_topic": new.topics.astype(np.int64),
            "ref_topic": placed_topic.astype(np.int64),
            "ref_topic_prob": placed_prob.astype(np.float32),
            "x": xy[:, 0],
            "y": xy[:, 1],
            "novelty": scores,
            "p_value": p,
            "far": p < params.novel_alpha,
            "nearest_sim": sims[:, 0].astype(float) if sims.shape[1] else np.zeros(new.n),
            "neighbour_ids": [list(r) for r in ref.doc_ids[found.pool][listed]],
            "neighbour_sims": [[round(float(s), 4) for s in r] for r in sims[:, : params.listed]],
        }
    )
    papers = papers.sort_values(["novelty", "doc_id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    papers.insert(0, "rank", np.arange(1, len(papers) + 1, dtype=np.int32))

    # Shares of the reference's topics, then (its own papers) and now (the new papers placed).
    ref_topic_pos = pd.Index(ref_topic_ids).get_indexer(ref.topics[ref_rows])
    then = np.bincount(ref_topic_pos[ref_topic_pos >= 0], minlength=len(ref_topic_ids))
    now_pos = pd.Index(ref_topic_ids).get_indexer(placed_topic)
    now = np.bincount(now_pos[now_pos >= 0], minlength=len(ref_topic_ids))
    shares = share_changes(then, len(ref_rows), now, new.n, level=params.level)
    shares.insert(0, "topic", ref_topic_ids.astype(np.int64))
    shares.insert(1, "label", [ref_labels.get(int(t), f"topic {t}") for t in ref_topic_ids])
    shares["keywords"] = [list(k)[:8] for k in ref.topic_table["keywords"]]
    shares["far_new"] = np.bincount(now_pos[(now_pos >= 0) & (p < params.novel_alpha)], minlength=len(ref_topic_ids))

    # Terms, and the two builds' own topics matched.
    df = shared_document_frequencies(
        new, ref, ref_rows, shared_rows, candidates=3 * params.top_terms, prior_mass=params.prior_mass
    )
    terms = distinctive_terms(df, new.n, len(ref_rows), top=params.top_terms, prior_mass=params.prior_mass)
    matching = match_topics(ref, new, params, b_in_a=found)
    matches = matching.topics.copy()
    matches["keywords"] = [
        list(k)[:8]
        for k in pd.concat([ref.topic_table, new.topic_table], ignore_index=True)["keywords"]
    ]  # fmt: skip

    typical = float(np.median(then / max(len(ref_rows), 1))) if len(then) else float("nan")
    summary = {
        "version": COMPARE_VERSION,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - started, 3),
        "new": _side_summary(new),
        "reference": _side_summary(ref) | {"papers_used": int(len(ref_rows)), "papers_shared": int(len(shared_rows))},
        "params": asdict(params),
        "matching": {"method": matching.method, "shared": matching.shared},
        "calibration": {
            "null_papers": int(len(null.scores)),
            "novelty_p50": null.percentile(0.5),
            "novelty_p95": null.percentile(1 - params.novel_alpha),
            "far_papers": int((p < params.novel_alpha).sum()),
        },
        "shares": {
            "z": _z(params.level, len(ref_topic_ids)),
            "typical_share": typical,
            "detectable_rise": detectable_change(
                typical, len(ref_rows), new.n, level=params.level, tests=len(ref_topic_ids)
            )
            if len(then)
            else float("nan"),
            "grew": int((shares["verdict"] == "grew").sum()),
            "shrank": int(shares["verdict"].isin(["shrank", "gone"]).sum()),
        },
    }
    return Comparison(summary, papers, shares, terms, matching.flows, matches)


def _side_summary(side: Side) -> dict:
    years = side.years[~np.isnan(side.years)]
    return {
        "name": side.name,
        "build_id": side.build_id,
        "papers": int(side.n),
        "topics": int(len(side.topic_table)),
        "years": [int(years.min()), int(years.max())] if len(years) else None,
    }


# ------------------------------------------------------------------------------------------
# Stored comparisons: <root>/.compare/<new>/<ref> -> <ref>@<key> (atomic symlink swap)
# ------------------------------------------------------------------------------------------


def comparison_dir(root: Path, new: str, ref: str) -> Path:
    """Where the comparison of ``new`` against ``ref`` is stored (a link to its current version)."""
    return Path(root) / schema.COMPARE_DIR / artifacts.check_name(new) / artifacts.check_name(ref)


def stored(root: Path, new: Side, ref: Side) -> Comparison | None:
    """The stored comparison of these two builds, or None when there is none or it is stale."""
    folder = comparison_dir(root, new.name, ref.name)
    if not (folder / schema.COMPARISON).exists():
        return None
    try:
        result = Comparison.load(folder)
    except artifacts.ArtifactError:
        return None
    return result if result.key == (new.build_id, ref.build_id, COMPARE_VERSION) else None


def store(root: Path, result: Comparison) -> Path:
    """Write ``result`` under ``root/.compare/<new>/<ref>`` and make it current in one rename."""
    link = comparison_dir(root, result.summary["new"]["name"], result.summary["reference"]["name"])
    link.parent.mkdir(parents=True, exist_ok=True)
    folder = link.parent / f".{link.name}.{uuid.uuid4().hex[:10]}"
    result.save(folder)
    if link.exists() and not link.is_symlink():
        shutil.rmtree(link, ignore_errors=True)
    tmp = link.parent / f".{link.name}.{uuid.uuid4().hex[:8]}.link"
    os.symlink(folder.name, tmp)
    os.replace(tmp, link)
    for old in link.parent.glob(f".{link.name}.*"):
        if old.is_dir() and not old.is_symlink() and old.name != folder.name:
            shutil.rmtree(old, ignore_errors=True)
    return link


def compare_builds(root: Path, new: str, ref: str, params: CompareParams = CompareParams(), *, force: bool = False):
    """Compare two built corpora of ``root`` and store the result (skipped when stored and current).

    Returns:
        ``(comparison, computed)``: the result and whether it was computed now.
    """
    if new == ref:
        raise CompareError("a corpus cannot be its own reference: pick another corpus.")
    new_side, ref_side = load_side(root, new), load_side(root, ref)
    if not force:
        existing = stored(root, new_side, ref_side)
        if existing is not None and existing.summary.get("params") == asdict(params):
            return existing, False
    result = compare(new_side, ref_side, params)
    store(root, result)
    return result, True


# ------------------------------------------------------------------------------------------
# Lineage within one multi-year build
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lineage:
    """Topics of one build across periods.

    Attributes:
        periods: ``[(first, last), ...]`` inclusive year ranges, in order.
        nodes: one row per (period, topic) with papers: period (index), topic, n, share (of the
            period's papers).
        links: one row per (earlier period topic, later period topic): period (index of the later
            period), source, target, votes (later papers' neighbour votes, in papers), from_share
            (share of the target's papers whose nearest earlier papers are in the source), flow
            (share of the later period, balanced so that each node's flows add up to its share).
        changes: one row per topic: its share in the period before the last and in the last, with
            intervals (see :func:`share_changes`, Bonferroni over the topics), topic column first.
    """

    periods: list[tuple[int, int]]
    nodes: pd.DataFrame
    links: pd.DataFrame
    changes: pd.DataFrame


def default_periods(years: np.ndarray, n_periods: int = 5, *, min_papers: int = 50) -> list[tuple[int, int]]:
    """Cut the years into up to ``n_periods`` consecutive ranges of similar weight, a year weighing
    the square root of its paper count.

    Equal paper counts would give a growing field's last years one period each (NeurIPS has 20
    times more papers in 2023 than in 1995) and equal lengths would leave its early periods with a
    few hundred papers; the square root sits between the two (NeurIPS 1987-2023: 1987-1999,
    2000-2009, 2010-2017, 2018-2021, 2022-2023). Every period keeps ``min_papers`` papers or more
    where the corpus allows it.
    """
    years = np.asarray(years, dtype=float)
    years = years[~np.isnan(years)].astype(int)
    if len(years) == 0:
        return []
    uniq, counts = np.unique(years, return_counts=True)
    n_periods = max(1, min(n_periods, len(uniq), len(years) // max(min_papers, 1) or 1))
    weights = np.sqrt(counts)
    cum = np.cumsum(weights) / weights.sum()
    periods, start = [], 0
    for q in [i / n_periods for i in range(1, n_periods)]:
        end = max(int(np.searchsorted(cum, q, side="left")), start)
        while end < len(uniq) - 1 and counts[start : end + 1].sum() < min_papers:
            end += 1
        if end >= len(uniq) - 1 or counts[end + 1 :].sum() < min_papers:
            break
        periods.append((int(uniq[start]), int(uniq[end])))
        start = end + 1
    periods.append((int(uniq[start]), int(uniq[-1])))
    return periods


def balance(votes: np.ndarray, rows: np.ndarray, cols: np.ndarray, *, iterations: int = 2000) -> np.ndarray:
    """Scale ``votes`` (iterative proportional fitting) so that rows sum to ``rows`` and columns to ``cols``.

    The result is the table closest to the votes (in Kullback-Leibler divergence) with those
    margins: each earlier topic's whole share flows somewhere, each later topic's share comes from
    somewhere, in the proportions the neighbour votes give. Rows or columns without any vote keep
    no flow.
    """
    table = np.asarray(votes, dtype=float).copy()
    rows, cols = np.asarray(rows, dtype=float), np.asarray(cols, dtype=float)
    for _ in range(iterations):
        r = table.sum(axis=1)
        table *= np.where(r > 0, rows / np.where(r > 0, r, 1), 0)[:, None]
        c = table.sum(axis=0)
        table *= np.where(c > 0, cols / np.where(c > 0, c, 1), 0)[None, :]
        if np.allclose(table.sum(axis=1), rows, rtol=1e-6, atol=1e-9):
            break
    return table


def lineage(
    years: np.ndarray,
    topics: np.ndarray,
    embeddings: np.ndarray,
    periods: Sequence[tuple[int, int]],
    *,
    k: int = 10,
    level: float = 0.95,
) -> Lineage:
    """Where each period's topics come from: each paper's ``k`` nearest papers of the period before.

    Args:
        years: float ``(n,)`` (NaN: unknown, left out).
        topics: int ``(n,)``.
        embeddings: float32 ``(n, dim)`` normalised.
        periods: consecutive inclusive year ranges.
    """
    years = np.asarray(years, dtype=float)
    topics = np.asarray(topics, dtype=np.int64)
    which = np.full(len(years), -1)
    for i, (lo, hi) in enumerate(periods):
        which[(years >= lo) & (years <= hi)] = i
    topic_ids = np.unique(topics[which >= 0]) if (which >= 0).any() else np.zeros(0, dtype=np.int64)
    col = np.searchsorted(topic_ids, topics)
    col = np.where(which >= 0, col, -1)
    totals = np.array([int((which == i).sum()) for i in range(len(periods))])
    grid = np.zeros((len(periods), len(topic_ids)))
    np.add.at(grid, (which[which >= 0], col[which >= 0]), 1)
    nodes = pd.DataFrame(
        [
            {"period": i, "topic": int(t), "n": int(grid[i, j]), "share": grid[i, j] / max(totals[i], 1)}
            for i in range(len(periods))
            for j, t in enumerate(topic_ids.tolist())
            if grid[i, j] > 0
        ],
        columns=["period", "topic", "n", "share"],
    )
    links = []
    for i in range(1, len(periods)):
        before, after = np.flatnonzero(which == i - 1), np.flatnonzero(which == i)
        if len(before) == 0 or len(after) == 0:
            continue
        idx, _ = neighbours(_rows(embeddings, after), _rows(embeddings, before), k)
        votes = np.zeros((len(topic_ids), len(topic_ids)))
        src = col[before][idx]  # (after, k) topics of the earlier neighbours
        dst = np.repeat(col[after][:, None], idx.shape[1], axis=1)
        np.add.at(votes, (src.ravel(), dst.ravel()), 1.0 / idx.shape[1])
        flow = balance(votes, grid[i - 1] / totals[i - 1], grid[i] / totals[i])
        received = votes.sum(axis=0)
        for s, t in zip(*np.nonzero(votes), strict=True):
            links.append(
                {
                    "period": i,
                    "source": int(topic_ids[s]),
                    "target": int(topic_ids[t]),
                    "votes": float(votes[s, t]),
                    "from_share": float(votes[s, t] / received[t]) if received[t] else 0.0,
                    "flow": float(flow[s, t]),
                }
            )
    link_table = pd.DataFrame(links, columns=["period", "source", "target", "votes", "from_share", "flow"])
    first = max(len(periods) - 2, 0)  # emerging and declining: the last period against the one before
    changes = share_changes(grid[first], int(totals[first]), grid[-1], int(totals[-1]), level=level)
    changes.insert(0, "topic", topic_ids.astype(np.int64))
    return Lineage(list(periods), nodes, link_table, changes)


def ancestry(lineage_: Lineage, topic: int, *, min_share: float = 0.1) -> set[tuple[int, int]]:
    """The (period, topic) nodes ``topic`` in the last period descends from: walking back, every
    source that gives at least ``min_share`` of a kept node's papers."""
    last = len(lineage_.periods) - 1
    keep = {(last, int(topic))}
    frontier = {int(topic)}
    links = lineage_.links
    for i in range(last, 0, -1):
        step = links[(links["period"] == i) & links["target"].isin(frontier) & (links["from_share"] >= min_share)]
        frontier = set(step["source"].astype(int).tolist())
        keep |= {(i - 1, t) for t in frontier}
    return keep


def describe(result: Comparison, *, computed: bool = True) -> list[str]:
    """The comparison in a few lines of plain text (the CLI's summary)."""
    s = result.summary
    new, ref = s["new"], s["reference"]
    shares, matches, papers = result.shares, result.matches, result.papers
    far = int(papers["far"].sum())
    alpha = s["params"]["novel_alpha"]

    def topics_of(verdicts: tuple[str, ...]) -> str:
        rows = shares[shares["verdict"].isin(verdicts)].sort_values("change", key=abs, ascending=False)
        return ", ".join(
            f"{r.label} {r.change * 100:+.1f} points [{r.change_lo * 100:+.1f}, {r.change_hi * 100:+.1f}]"
            for r in rows.head(5).itertuples()
        )

    lines = [
        f"{'Compared' if computed else 'Up to date:'} {new['name']!r} ({new['papers']:,} papers, {new['topics']} topics) "
        f"with {ref['name']!r} ({ref['papers_used']:,} papers"
        + (f"; {ref['papers_shared']:,} shared papers left out" if ref["papers_shared"] else "")
        + f") in {s['seconds']:.1f} s",
        f"  far from all earlier work: {far:,} papers ({far / max(new['papers'], 1):.1%}; a paper like the "
        f"reference's own is flagged {alpha:.0%} of the time)",
    ]
    grew, shrank = s["shares"]["grew"], s["shares"]["shrank"]
    lines.append(f"  topics that grew: {grew}" + (f" ({topics_of(('grew',))})" if grew else ""))
    lines.append(f"  topics that shrank: {shrank}" + (f" ({topics_of(('shrank', 'gone'))})" if shrank else ""))
    rise = s["shares"]["detectable_rise"]
    if rise == rise:
        lines.append(
            f"  a typical topic ({s['shares']['typical_share']:.1%} of the reference) must gain at least "
            f"{rise * 100:.1f} points to count as grown at this size"
        )
    counts = matches[matches["side"] == "b"]["status_text"].value_counts()
    lines.append(
        f"  topics of {new['name']}: "
        + ", ".join(f"{n} {status}" for status, n in counts.items())
        + f" (matched by {s['matching']['method']})"
    )
    born = matches[(matches["side"] == "b") & (matches["status"] == "gone")]
    if len(born):
        lines.append("  new topics: " + ", ".join(born["label"].astype(str).head(8)))
    more = result.terms[result.terms["side"] == "new"]["term"].head(10).tolist()
    less = result.terms[result.terms["side"] == "ref"]["term"].head(10).tolist()
    lines.append("  terms used more: " + (", ".join(more) or "none clearly"))
    lines.append("  terms used less: " + (", ".join(less) or "none clearly"))
    return lines
