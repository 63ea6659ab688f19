"""Placing papers into fitted topics and onto the map from their embeddings alone.

Used by incremental builds (new papers join existing topics) and by the app ("place my abstract",
similar papers). Numpy only, so the app can import it without the modelling stack.
"""

from __future__ import annotations

import numpy as np

from pipeline.core.ranking import top_k

#: Temperature of the softmax that turns paper-topic cosine similarities into a distribution.
DISTRIBUTION_TEMPERATURE = 0.05

#: Papers whose topic distribution is computed at once.
DISTRIBUTION_BLOCK = 65_536


def topic_distribution(vectors: np.ndarray, topic_embeddings: np.ndarray) -> np.ndarray:
    """Each paper's distribution over topics: softmax of cosine similarity to topic embeddings.

    Args:
        vectors: float32 ``(n, dim)`` normalised paper embeddings.
        topic_embeddings: float32 ``(k, dim)`` normalised topic embeddings.

    Returns:
        float32 ``(n, k)``, rows sum to 1.
    """
    topics = np.asarray(topic_embeddings, dtype=np.float32)
    out = np.zeros((len(vectors), topics.shape[0]), dtype=np.float32)
    if topics.shape[0] == 0:
        return out
    # In blocks of rows: the temporaries of one block, not four (n, k) arrays (7 GB at a million
    # papers and 435 topics); each row's values are those of the whole-array computation.
    for start in range(0, len(vectors), DISTRIBUTION_BLOCK):
        sims = np.asarray(vectors[start : start + DISTRIBUTION_BLOCK], dtype=np.float32) @ topics.T
        z = (sims - sims.max(axis=1, keepdims=True)) / DISTRIBUTION_TEMPERATURE
        e = np.exp(z)
        out[start : start + DISTRIBUTION_BLOCK] = e / e.sum(axis=1, keepdims=True)
    return out


def own_topic_similarity(vectors: np.ndarray, topic_embeddings: np.ndarray, topic_index: np.ndarray) -> np.ndarray:
    """Cosine similarity of each paper to its own topic's embedding (the normalised mean of the
    topic's papers' embeddings): how typical of its topic the paper is, -1 to 1.

    Args:
        vectors: float32 ``(n, dim)`` normalised paper embeddings (a memory map is fine).
        topic_embeddings: float32 ``(k, dim)`` normalised topic embeddings.
        topic_index: int ``(n,)`` row of each paper's topic in ``topic_embeddings``; -1 for none.

    Returns:
        float32 ``(n,)``, NaN where ``topic_index`` is -1.
    """
    topics = np.asarray(topic_embeddings, dtype=np.float32)
    index = np.asarray(topic_index, dtype=np.int64)
    out = np.full(len(index), np.nan, dtype=np.float32)
    for start in range(0, len(index), DISTRIBUTION_BLOCK):
        idx = index[start : start + DISTRIBUTION_BLOCK]
        has = idx >= 0
        if has.any():
            block = np.asarray(vectors[start : start + len(idx)], dtype=np.float32)[has]
            out[start : start + len(idx)][has] = np.einsum("ij,ij->i", block, topics[idx[has]])
    return out


def nearest(vectors: np.ndarray, corpus: np.ndarray, k: int, *, exclude: np.ndarray | None = None):
    """The ``k`` most cosine-similar corpus rows for each vector.

    Args:
        vectors: float32 ``(m, dim)`` normalised.
        corpus: float32 ``(n, dim)`` normalised (a memory map is fine).
        k: neighbours wanted.
        exclude: optional int ``(m,)`` corpus row to leave out for each vector (the paper itself).

    Returns:
        ``(indices, similarities)``, int64 and float32 ``(m, min(k, n))``, most similar first.
    """
    queries = np.asarray(vectors, dtype=np.float32)
    sims = queries @ np.asarray(corpus, dtype=np.float32).T
    if exclude is not None:
        sims[np.arange(len(sims)), exclude] = -np.inf
    k = min(k, sims.shape[1] - (0 if exclude is None else 1))
    if k <= 0:
        return np.zeros((len(sims), 0), dtype=np.int64), np.zeros((len(sims), 0), dtype=np.float32)
    # The matrix product rounds a pair's similarity differently by where the pair falls in its
    # blocks (how many queries, which column): two equal corpus rows can differ in the last bit, and
    # their order with it. The best candidates' similarities are computed again one pair at a time,
    # in float64, so equal rows score equally and the tie goes to the lower row, however the
    # queries are batched.
    candidates = top_k(sims, min(k + TIE_MARGIN, sims.shape[1]))
    exact = _pair_similarities(queries, corpus, candidates)
    if exclude is not None:
        exact[candidates == np.asarray(exclude)[:, None]] = -np.inf
    order = np.lexsort((candidates, -np.round(exact, RANK_DECIMALS)), axis=1)[:, :k]
    best = np.take_along_axis(candidates, order, axis=1)
    return best, np.take_along_axis(exact, order, axis=1).astype(np.float32)


#: Candidates beyond ``k`` whose similarities are computed again (:func:`nearest`): equal rows at
#: the k-th place stay in the running.
TIE_MARGIN = 8
#: Decimals the recomputed similarities are compared at (float64 rounding differs by processor).
RANK_DECIMALS = 9


def _pair_similarities(queries: np.ndarray, corpus: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """float64 ``(m, c)``: the dot product of each query with each of its candidate rows, one pair
    at a time (the same operations on the same numbers give the same result wherever the pair is)."""
    q = np.asarray(queries, dtype=np.float64)
    out = np.empty(candidates.shape, dtype=np.float64)
    for j in range(candidates.shape[1]):
        rows = np.asarray(corpus[candidates[:, j]], dtype=np.float64)
        out[:, j] = (q * rows).sum(axis=1)
    return out


def place_on_map(vectors: np.ndarray, corpus: np.ndarray, corpus_xy: np.ndarray, k: int = 10) -> np.ndarray:
    """Map positions for new vectors: similarity-weighted mean of their ``k`` nearest papers.

    Returns:
        float32 ``(m, 2)``.
    """
    idx, sims = nearest(vectors, corpus, k)
    return map_position(idx, sims, corpus_xy)


def map_position(idx: np.ndarray, sims: np.ndarray, corpus_xy: np.ndarray) -> np.ndarray:
    """Map positions from neighbours already found (``nearest``'s output): their weighted mean.

    Returns:
        float32 ``(m, 2)``.
    """
    weights = np.clip(sims, 1e-3, None) ** 4  # the closest papers dominate
    xy = np.asarray(corpus_xy, dtype=np.float32)[idx]
    return ((xy * weights[..., None]).sum(axis=1) / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def vote_topics(
    neighbour_topics: np.ndarray, neighbour_sims: np.ndarray, topic_ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each paper's topic as the one most of its nearest papers belong to.

    Placing a paper by its nearest topic embedding (``topic_distribution``) misplaces about one in
    five papers of a fitted corpus and shifts topic shares by several points; the topic of most of
    its nearest papers agrees with the clustering far more often (EVALUATION.md, "Comparing
    corpora"). Ties go to the topic with the larger summed similarity, then the smaller id.

    Args:
        neighbour_topics: int ``(m, k)`` topic ids of each paper's nearest papers.
        neighbour_sims: float ``(m, k)`` their cosine similarities.
        topic_ids: int ``(t,)`` the topic ids (columns of the vote).

    Returns:
        ``(topics, shares)``: int ``(m,)`` the winning topic (-1 without neighbours) and float
        ``(m,)`` the share of the neighbours in it.
    """
    m, k = neighbour_topics.shape
    if m == 0 or k == 0 or len(topic_ids) == 0:
        return np.full(m, -1, dtype=np.int64), np.zeros(m, dtype=np.float32)
    col = np.searchsorted(topic_ids, neighbour_topics)
    col = np.clip(col, 0, len(topic_ids) - 1)
    valid = topic_ids[col] == neighbour_topics
    rows = np.repeat(np.arange(m), k)
    votes = np.zeros((m, len(topic_ids)))
    weight = np.zeros((m, len(topic_ids)))
    np.add.at(votes, (rows, col.ravel()), valid.ravel().astype(float))
    np.add.at(weight, (rows, col.ravel()), np.where(valid, neighbour_sims, 0).ravel())
    score = votes + weight / (k + 1.0)  # similarity only breaks ties between equal counts
    best = np.argmax(score, axis=1)  # first maximum: the smaller topic id
    return np.asarray(topic_ids)[best].astype(np.int64), (votes[np.arange(m), best] / k).astype(np.float32)
