"""Placing papers once clusters exist: centroids, merging clusters down to a number of topics,
outliers to the nearest topic, kNN majority-vote smoothing, k-means refinement, and numbering
topics by size.

Every clustering method (``pipeline.model.cluster``) ends with these steps; the graph clustering's
consensus (``pipeline.model.cluster_consensus``) merges each Leiden run with them too.
"""

from __future__ import annotations

import numpy as np


def centroids(labels: np.ndarray, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalised mean embedding of each cluster.

    Returns:
        ``(ids, vectors)``: sorted cluster ids (without -1) and float32 ``(len(ids), dim)``.
    """
    labels = np.asarray(labels)
    ids, groups = _groups(labels)
    # Each cluster's rows in row order, as ``embeddings[labels == c]`` gives them (the same mean to
    # the last bit), without comparing all labels once per cluster.
    vectors = (
        np.stack([np.asarray(embeddings[rows]).mean(axis=0) for rows in groups])
        if len(ids)
        else np.zeros((0, embeddings.shape[1]))
    )
    vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
    return ids, vectors.astype(np.float32)


def _groups(labels: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Sorted cluster ids (without -1) and, for each, its rows in increasing order."""
    order = np.argsort(labels, kind="stable")
    ids, starts = np.unique(labels[order], return_index=True)
    bounds = [*starts.tolist(), len(order)]
    groups = [order[bounds[i] : bounds[i + 1]] for i in range(len(ids))]
    keep = ids != -1
    return ids[keep].astype(np.int64), [g for g, k in zip(groups, keep, strict=True) if k]


def reassign_outliers(labels: np.ndarray, embeddings: np.ndarray) -> np.ndarray:
    """Put each outlier (-1) into the cluster whose centroid is most cosine-similar."""
    out = labels.copy()
    mask = out == -1
    ids, vectors = centroids(labels, embeddings)
    if mask.any() and len(ids):
        out[mask] = ids[np.argmax(embeddings[mask] @ vectors.T, axis=1)]
    return out


def merge_to(labels: np.ndarray, embeddings: np.ndarray, k: int) -> np.ndarray:
    """Merge clusters (average-linkage on centroid cosine) until at most ``k`` remain."""
    ids, vectors = centroids(labels, embeddings)
    if len(ids) <= k:
        return labels
    from sklearn.cluster import AgglomerativeClustering

    groups = AgglomerativeClustering(n_clusters=k, metric="cosine", linkage="average").fit_predict(vectors)
    lookup = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    lookup[ids] = groups
    labels = np.asarray(labels, dtype=np.int64)
    return np.where(labels >= 0, lookup[np.clip(labels, 0, None)], -1)


def smooth(labels: np.ndarray, knn: np.ndarray, k: int) -> np.ndarray:
    """One round of majority vote over each paper and its ``k`` nearest neighbours.

    Args:
        labels: int ``(n,)``; outliers (-1) neither vote nor change.
        knn: int ``(n, >k)`` neighbour indices in embedding space, self first (the reduce stage's);
            ``-1`` marks a missing neighbour.
        k: neighbours that vote. Ties go to the smaller topic id.
    """
    from scipy import sparse

    n = len(labels)
    k = min(k, knn.shape[1] - 1)
    if k < 1 or labels.max(initial=-1) < 0:
        return labels
    near = knn[:, : k + 1]
    votes_for = np.where(near >= 0, labels[near], -1)
    valid = (votes_for >= 0).ravel()
    rows = np.repeat(np.arange(n), votes_for.shape[1])[valid]
    votes = sparse.csr_matrix(
        (np.ones(int(valid.sum())), (rows, votes_for.ravel()[valid])), shape=(n, int(labels.max()) + 1)
    )
    out = _row_argmax(votes)
    out[labels == -1] = -1
    return out


def _row_argmax(matrix) -> np.ndarray:
    """Column of each row's largest entry, the smallest column among equal ones (a row without
    entries: 0), as ``matrix.toarray().argmax(axis=1)`` but without the dense ``(n, columns)``
    array (1M papers x 435 topics would be 3.5 GB)."""
    m = matrix.tocsr()
    m.sum_duplicates()
    m.sort_indices()
    out = np.zeros(m.shape[0], dtype=np.int64)
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    if not len(rows):
        return out
    order = np.lexsort((m.indices, -m.data, rows))  # per row: largest first, ties by column
    first = np.ones(len(order), dtype=bool)
    first[1:] = rows[order][1:] != rows[order][:-1]
    best = order[first]
    out[rows[best]] = m.indices[best]
    return out


def refine(labels: np.ndarray, embeddings: np.ndarray, steps: int, chunk: int = 20_000) -> np.ndarray:
    """A few k-means (Lloyd) steps from the given topics: each paper moves to the topic whose mean
    embedding is most cosine-similar, then the means are recomputed.

    The merge decides which micro topics form a topic; where a topic's border runs is then set by
    what its papers are about rather than by where the graph's communities happened to split.
    Sums and similarities are in float64 and exact ties go to the smaller topic id, so another
    processor's rounding (about 1e-16) moves a paper only if two topics are that close for it
    (the cross-machine checks find none); memory is a chunk of rows at a time. Papers
    labelled ``-1`` stay so; a topic that loses all its papers is gone.
    """
    from scipy import sparse

    labels = np.asarray(labels, dtype=np.int64)
    inlier = np.flatnonzero(labels != -1)
    if steps < 1 or not len(inlier):
        return labels
    for _ in range(steps):
        ids, codes = np.unique(labels[inlier], return_inverse=True)
        member = sparse.csr_matrix(
            (np.ones(len(inlier)), (codes, inlier)), shape=(len(ids), len(labels))
        )  # (topic, paper)
        sums = np.zeros((len(ids), embeddings.shape[1]))
        for s in range(0, len(labels), chunk):
            sums += member[:, s : s + chunk] @ np.asarray(embeddings[s : s + chunk], dtype=np.float64)
        means = sums / np.clip(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12, None)
        moved = labels.copy()
        for s in range(0, len(inlier), chunk):
            rows = inlier[s : s + chunk]
            similarity = np.asarray(embeddings[rows], dtype=np.float64) @ means.T
            moved[rows] = ids[np.argmax(similarity, axis=1)]
        if np.array_equal(moved, labels):
            break
        labels = moved
    return labels


def canonical_labels(labels: np.ndarray) -> np.ndarray:
    """Renumber topics 0, 1, ... by size, largest first; equal sizes by their first paper (row).

    The same partition then always gets the same ids, whatever order the algorithm found the
    topics in; ``-1`` stays ``-1``.
    """
    labels = np.asarray(labels, dtype=np.int64)
    ids, first, sizes = np.unique(labels, return_index=True, return_counts=True)
    keep = ids != -1
    ids, first, sizes = ids[keep], first[keep], sizes[keep]
    order = np.lexsort((first, -sizes))
    lookup = np.full(int(ids.max(initial=-1)) + 2, -1, dtype=np.int64)
    lookup[ids[order]] = np.arange(len(ids))
    return np.where(labels == -1, -1, lookup[labels])
