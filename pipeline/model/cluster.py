"""Clustering of the papers into topics, with parameters that adapt to corpus size.

The default ("graph") clusters the shared cosine kNN graph, not a UMAP projection: Leiden finds
small communities ("micro topics") on the shared-nearest-neighbour graph, ``runs`` times with
different seeds; the communities the runs agree on are merged into topics (Ward's method) by how
often the runs' own merged topics put their papers together (evidence accumulation), so one unlucky run cannot
move a topic. Every weight is an integer count and every tie is broken by index, so the same
papers give the same topics on any processor; UMAP is only used for the map. The UMAP + HDBSCAN
clustering of earlier versions stays available as ``method="hdbscan"``. Measured in
benchmarks/results/stability.md.

BERTopic receives these labels in its manual mode (``BaseCluster`` + ``y=labels``); they are
numbered by size already (:func:`canonical_labels`), which BERTopic's stable sort keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.core.config import ClusterParams
from pipeline.model.cluster_consensus import graph_topics
from pipeline.model.cluster_params import ResolvedClusterParams, resolve_params
from pipeline.model.cluster_refine import canonical_labels, merge_to, reassign_outliers, refine, smooth

#: Bump when the clustering's output for the same inputs and params changes.
CLUSTER_VERSION = 11  # 11: a topic the vote does not uphold keeps its core papers (10: no smoothing after the graph clustering's vote; 9: the size guard; 8: Ward's merge)


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


def cluster(
    points: np.ndarray | None, embeddings: np.ndarray, params: ClusterParams, knn: np.ndarray | None = None
) -> Clustering:
    """Cluster the papers into topics.

    ``graph`` (the default, see :func:`graph_topics`): consensus micro topics of the kNN graph,
    merged by the agreement of ``runs`` Leiden runs, then :data:`REFINE_STEPS` k-means step(s)
    (:func:`refine`). ``ward``: Ward on the embeddings (``auto`` below :data:`AUTO_GRAPH_MIN`
    papers). ``hdbscan``: dense micro topics in the ``cluster_dims``-d UMAP projection, merged by
    average linkage on the cosine of their mean embeddings. ``agglomerative``: Ward on the 2-d map.
    Papers left out (border papers, HDBSCAN's noise; flagged in ``raw_outlier``) are placed: with
    ``graph``, every paper joins the topic whose core papers the Leiden runs grouped it with most
    (:func:`pipeline.model.cluster_consensus.vote_topics`; the core papers of a topic that vote
    does not uphold stay in it, :func:`pipeline.model.cluster_consensus.placed_topics`); otherwise they go to the most similar
    merged topic. With the other methods one round of kNN majority vote then smooths the borders
    (the graph clustering's runs already voted: ``cluster_params.GRAPH_SMOOTH``). Measured against
    alternatives in benchmarks/results/stability.md, clustering-tuning.md and EVALUATION.md.

    Args:
        points: float32 ``(n, d)`` the projection: UMAP ``cluster_dims``-d for ``hdbscan``, the
            2-d map for ``agglomerative`` (``Projection.cluster``); None for ``graph`` and
            ``ward``, which do not use it.
        embeddings: float32 ``(n, dim)`` normalised embeddings (centroids for outliers and merging).
        params: clustering settings; size-dependent ones are resolved from ``n``.
        knn: int ``(n, k)`` nearest neighbours in embedding space, self first (the graph, and
            smoothing).
    """
    n = len(embeddings)
    p = resolve_params(params, n)
    voted = None
    if n < 3:
        labels = np.zeros(n, dtype=np.int64)
        return Clustering(labels, np.zeros(n, dtype=bool), p)
    if p.method == "graph":
        if knn is None:
            raise ValueError("the graph clustering needs the kNN graph (knn)")
        found = graph_topics(knn, embeddings, p)
        labels, voted = found.labels, found.voted
    elif p.method == "ward":
        labels = _agglomerative(embeddings, max(1, min(p.n_topics, n)))
    elif p.method == "agglomerative":
        labels = _agglomerative(points, max(1, min(p.n_topics, n)))
    elif p.method == "hdbscan":
        labels = _hdbscan(points, p)
        if (labels == -1).all():  # nothing dense enough: one topic holds everything
            labels = np.zeros(n, dtype=np.int64)
        labels = merge_to(labels, embeddings, p.n_topics)
    else:
        raise ValueError(f"unknown clustering method {p.method!r}: use auto, graph, ward, hdbscan or agglomerative")
    raw_outlier = labels == -1
    if p.reassign_outliers:
        labels = reassign_outliers(labels if voted is None else voted, embeddings)
    if p.method == "graph":
        labels = refine(labels, embeddings, REFINE_STEPS)
    if p.smooth_k and knn is not None:
        for _ in range(SMOOTH_ROUNDS):
            labels = smooth(labels, knn, p.smooth_k)
    return Clustering(canonical_labels(labels), raw_outlier, p)


#: k-means steps that refine the graph clustering's merged topics (:func:`refine`). Three steps
#: (chosen on IJCAI and two proxies) lowered agreement on a held-out one-year conference (issue 20:
#: NMI 0.339 -> 0.315); one step, measured on every corpus we have (EVALUATION.md, issue 20), keeps
#: IJCAI's gain in NMI and raises its ARI and its stability on 90% samples (0.75 -> 0.83), and
#: raises the NeurIPS keyword proxy's NMI, ARI and sample stability; it costs the small IJCAI
#: subarea proxy 0.007 NMI and 0.02 ARI.
REFINE_STEPS = 1
#: Rounds of kNN majority-vote smoothing at the end of the clustering (:func:`smooth`). Two or
#: three lowered ICML 2024's stability on 90% samples (0.793 -> 0.769, 0.762) and grew the largest
#: topics (EVALUATION.md, "Fewer Leiden iterations, more topics").
SMOOTH_ROUNDS = 1
