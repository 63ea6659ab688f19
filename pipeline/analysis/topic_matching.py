"""Topics of two builds matched: matched, split, merged, new, vanished, with the evidence.

:func:`match_topics` matches the topics of any two builds (two years built separately, a rebuild
with other settings, or a new corpus and its reference in :func:`pipeline.analysis.compare.compare`). Each
paper is first looked up in the other build (:func:`lookup`): its own copy there when the other
build holds the same paper, else its nearest papers there with a novelty score and a conformal
p-value (:mod:`pipeline.analysis.novelty`), which also places new papers on a reference and flags those far
from it. A topic's flows are its papers' votes summed; the status follows MONIC-style rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.analysis.comparison import CompareError, CompareParams
from pipeline.analysis.novelty import NoveltyNull, neighbours, novelty_null, novelty_scores, rows_of
from pipeline.analysis.side import Side


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
    "unseen": "not seen (too few papers to tell)",
    "unclear": "no clear successor",
    "small": "too small to tell",
}
STATUS_B = {
    "matched": "matched",
    "merged": "split from",
    "split": "merger of",
    "gone": "new",
    "unseen": "not seen (too few papers to tell)",
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
            _statuses("a", a, a_ids, size_a, share_a, share_b, b_ids, sim, params, n_other=len(b_rows)),
            _statuses("b", b, b_ids, size_b, share_b, share_a, a_ids, sim.T, params, n_other=len(a_rows)),
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
    corpus = rows_of(other.embeddings, pool)
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


def _statuses(side_name, side: Side, ids, sizes, share, other_share, other_ids, sim, params: CompareParams, *, n_other):
    """Status of each topic of one side from its papers' shares over the other side's topics.

    A topic is only called vanished (or new) when the other side is large enough to show it: with
    its share unchanged, the other side would hold no paper of it with a chance under
    ``novel_alpha`` (``(1 - share) ** n_other``); else it is "unseen" (too few papers to tell).
    """
    rows = []
    total = max(float(sizes.sum()), 1.0)
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
            unseen = (1 - sizes[i] / total) ** n_other >= params.novel_alpha
            status, partners = ("unseen" if unseen else "gone"), []
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
