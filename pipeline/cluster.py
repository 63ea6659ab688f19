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
CLUSTER_VERSION = 1


@dataclass(frozen=True)
class ResolvedClusterParams:
    """``ClusterParams`` with every size-dependent value filled in (stored in the manifest)."""

    method: str
    min_cluster_size: int
    min_samples: int
    selection: str
    n_topics: int | None
    reassign_outliers: bool


def resolve_params(params: ClusterParams, n: int) -> ResolvedClusterParams:
    """Fill in the size-dependent defaults for a corpus of ``n`` papers."""
    mcs = params.min_cluster_size or max(2, min(200, round(math.sqrt(n) / 2)))
    ms = params.min_samples or max(1, mcs // 3)
    return ResolvedClusterParams(
        method=params.method,
        min_cluster_size=int(mcs),
        min_samples=int(ms),
        selection=params.selection,
        n_topics=params.n_topics,
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
    vectors = np.stack([embeddings[labels == c].mean(axis=0) for c in ids]) if len(ids) else np.zeros((0, embeddings.shape[1]))
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
    mapping = dict(zip(ids.tolist(), groups.tolist()))
    return np.array([mapping.get(int(c), -1) for c in labels], dtype=np.int64)


def cluster(points: np.ndarray, embeddings: np.ndarray, params: ClusterParams) -> Clustering:
    """Cluster the projected papers.

    Args:
        points: float32 ``(n, d)`` UMAP projection for clustering.
        embeddings: float32 ``(n, dim)`` normalised embeddings (centroids for outliers and merging).
        params: clustering settings; size-dependent ones are resolved from ``n``.
    """
    n = len(points)
    p = resolve_params(params, n)
    if n < 3:
        labels = np.zeros(n, dtype=np.int64)
        return Clustering(labels, np.zeros(n, dtype=bool), p)
    if p.method == "agglomerative":
        k = p.n_topics or max(2, min(n // 3, round(math.sqrt(n) / 2)))
        labels = _agglomerative(points, min(k, n))
    elif p.method == "hdbscan":
        labels = _hdbscan(points, p)
        if (labels == -1).all():  # nothing dense enough: one topic holds everything
            labels = np.zeros(n, dtype=np.int64)
        if p.n_topics:
            labels = merge_to(labels, embeddings, p.n_topics)
    else:
        raise ValueError(f"unknown clustering method {p.method!r}: use hdbscan or agglomerative")
    raw_outlier = labels == -1
    if p.reassign_outliers:
        labels = reassign_outliers(labels, embeddings)
    return Clustering(labels, raw_outlier, p)
