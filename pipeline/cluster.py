"""Clustering of the UMAP projection into topics, with parameters that adapt to corpus size.

BERTopic receives these labels in its manual mode (``BaseCluster`` + ``y=labels``) and renumbers
them by size; the renumbered ids are the canonical ones (see ``pipeline/represent.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.config import ClusterParams

#: Bump when the clustering's output for the same inputs and params changes.
CLUSTER_VERSION = 2


@dataclass(frozen=True)
class ResolvedClusterParams:
    """``ClusterParams`` with every size-dependent value filled in (stored in the manifest)."""

    method: str
    min_cluster_size: int
    min_samples: int
    selection: str
    n_topics: int
    smooth_k: int
    reassign_outliers: bool


def target_topics(n: int) -> int:
    """Number of topics to merge down to: sqrt(n)/2.3, at least min(6, n/6).

    38 papers -> 6 topics, 3,281 -> 25, 9,761 -> 43, 18,682 -> 59, 100,000 -> 137. Measured in
    benchmarks/results/clustering-tuning.md: fewer topics than this buys agreement with coarse
    labels but hides structure users want to see; many more gives the "hundreds of tiny topics"
    of vanilla BERTopic.
    """
    return int(max(1, round(math.sqrt(n) / 2.3), min(6, n // 6)))


#: Below this many papers "auto" clusters with Ward instead of HDBSCAN: density estimates from a
#: few dozen points are noise (on the 38 NeurIPS 2026 abstracts HDBSCAN + merging put 22 papers in
#: one topic; Ward on the same projection gives six topics of 5-8 papers that read as fields).
AUTO_HDBSCAN_MIN = 500


def resolve_params(params: ClusterParams, n: int) -> ResolvedClusterParams:
    """Fill in the size-dependent defaults for a corpus of ``n`` papers.

    HDBSCAN looks for small dense "micro" topics (``min_cluster_size`` about sqrt(n)/5), which
    are then merged down to :func:`target_topics`; see benchmarks/results/clustering-tuning.md.
    ``method="auto"`` uses Ward for corpora under ``AUTO_HDBSCAN_MIN`` papers.
    """
    mcs = params.min_cluster_size or max(2, round(math.sqrt(n) / 5))
    ms = params.min_samples or max(1, round(mcs / 2))
    smooth = params.smooth_k if params.smooth_k is not None else (min(15, mcs - 1) if mcs > 2 else 0)
    method = params.method
    if method == "auto":
        method = "hdbscan" if n >= AUTO_HDBSCAN_MIN else "agglomerative"
    return ResolvedClusterParams(
        method=method,
        min_cluster_size=int(mcs),
        min_samples=int(ms),
        selection=params.selection,
        n_topics=int(params.n_topics or target_topics(n)),
        smooth_k=int(smooth),
        reassign_outliers=params.reassign_outliers,
    )


@dataclass(frozen=True)
class Clustering:
    """Cluster labels for each paper.

    Attributes:
        labels: int ``(n,)``, cluster per paper (``-1`` = outlier, only if not reassigned).
        raw_outlier: bool ``(n,)``, True where clustering itself left the paper out.
        params: the resolved parameters used.
    """

    labels: np.ndarray
    raw_outlier: np.ndarray
    params: ResolvedClusterParams

    @property
    def n_clusters(self) -> int:
        return int(len(set(self.labels.tolist()) - {-1}))


def _hdbscan(points: np.ndarray, p: ResolvedClusterParams) -> np.ndarray:
    from hdbscan import HDBSCAN

    model = HDBSCAN(
        min_cluster_size=max(2, p.min_cluster_size),
        min_samples=p.min_samples,
        cluster_selection_method=p.selection,
        metric="euclidean",
        core_dist_n_jobs=1,
    )
    return model.fit_predict(points).astype(np.int64)


def _agglomerative(points: np.ndarray, k: int) -> np.ndarray:
    from sklearn.cluster import AgglomerativeClustering

    return AgglomerativeClustering(n_clusters=k, linkage="ward").fit_predict(points).astype(np.int64)


def centroids(labels: np.ndarray, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Normalised mean embedding of each cluster.

    Returns:
        ``(ids, vectors)``: sorted cluster ids (without -1) and float32 ``(len(ids), dim)``.
    """
    ids = np.array(sorted(set(labels.tolist()) - {-1}), dtype=np.int64)
    vectors = (
        np.stack([embeddings[labels == c].mean(axis=0) for c in ids])
        if len(ids)
        else np.zeros((0, embeddings.shape[1]))
    )
    vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
    return ids, vectors.astype(np.float32)


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
    mapping = dict(zip(ids.tolist(), groups.tolist(), strict=True))
    return np.array([mapping.get(int(c), -1) for c in labels], dtype=np.int64)


def smooth(labels: np.ndarray, knn: np.ndarray, k: int) -> np.ndarray:
    """One round of majority vote over each paper and its ``k`` nearest neighbours.

    Args:
        labels: int ``(n,)``; outliers (-1) neither vote nor change.
        knn: int ``(n, >k)`` neighbour indices in embedding space, self first (the reduce stage's).
        k: neighbours that vote. Ties go to the smaller topic id.
    """
    from scipy import sparse

    n = len(labels)
    k = min(k, knn.shape[1] - 1)
    if k < 1 or labels.max(initial=-1) < 0:
        return labels
    votes_for = labels[knn[:, : k + 1]]
    valid = (votes_for >= 0).ravel()
    rows = np.repeat(np.arange(n), votes_for.shape[1])[valid]
    votes = sparse.csr_matrix(
        (np.ones(int(valid.sum())), (rows, votes_for.ravel()[valid])), shape=(n, int(labels.max()) + 1)
    )
    out = np.asarray(votes.toarray().argmax(axis=1), dtype=np.int64)
    out[labels == -1] = -1
    return out


def cluster(
    points: np.ndarray, embeddings: np.ndarray, params: ClusterParams, knn: np.ndarray | None = None
) -> Clustering:
    """Cluster the projected papers.

    HDBSCAN finds dense micro topics in the projection; they are merged (average linkage on the
    cosine of their mean embeddings) down to the target count; papers HDBSCAN left out go to the
    most similar merged topic (flagged in ``raw_outlier``); one round of kNN majority vote smooths
    the borders. Measured against alternatives in benchmarks/results/clustering-tuning.md.

    Args:
        points: float32 ``(n, d)`` UMAP projection for clustering.
        embeddings: float32 ``(n, dim)`` normalised embeddings (centroids for outliers and merging).
        params: clustering settings; size-dependent ones are resolved from ``n``.
        knn: int ``(n, k)`` nearest neighbours in embedding space, self first (for smoothing).
    """
    n = len(points)
    p = resolve_params(params, n)
    if n < 3:
        labels = np.zeros(n, dtype=np.int64)
        return Clustering(labels, np.zeros(n, dtype=bool), p)
    if p.method == "agglomerative":
        labels = _agglomerative(points, max(1, min(p.n_topics, n)))
    elif p.method == "hdbscan":
        labels = _hdbscan(points, p)
        if (labels == -1).all():  # nothing dense enough: one topic holds everything
            labels = np.zeros(n, dtype=np.int64)
        labels = merge_to(labels, embeddings, p.n_topics)
    else:
        raise ValueError(f"unknown clustering method {p.method!r}: use hdbscan or agglomerative")
    raw_outlier = labels == -1
    if p.reassign_outliers:
        labels = reassign_outliers(labels, embeddings)
    if p.smooth_k and knn is not None:
        labels = smooth(labels, knn, p.smooth_k)
    return Clustering(labels, raw_outlier, p)
