"""Clustering of the papers into topics, with parameters that adapt to corpus size.

The default ("graph") clusters the shared cosine kNN graph, not a UMAP projection: Leiden finds
small communities ("micro topics") on the shared-nearest-neighbour graph, ``runs`` times with
different seeds; the communities the runs agree on are merged into topics by how often the runs'
own merged topics put their papers together (evidence accumulation), so one unlucky run cannot
move a topic. Every weight is an integer count and every tie is broken by index, so the same
papers give the same topics on any processor; UMAP is only used for the map. The UMAP + HDBSCAN
clustering of earlier versions stays available as ``method="hdbscan"``. Measured in
benchmarks/results/stability.md.

BERTopic receives these labels in its manual mode (``BaseCluster`` + ``y=labels``); they are
numbered by size already (:func:`canonical_labels`), which BERTopic's stable sort keeps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.config import ClusterParams

#: Bump when the clustering's output for the same inputs and params changes.
CLUSTER_VERSION = 6  # 6: 40 runs up to 5,000 papers, each seeing 80% of them (5: one k-means step)


@dataclass(frozen=True)
class ResolvedClusterParams:
    """``ClusterParams`` with every size-dependent value filled in (stored in the manifest)."""

    method: str
    seed: int
    resolution: float
    runs: int
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


#: A paper is a core member of its micro topic when at least this share of its graph neighbours
#: are in the same micro topic; the others ("border" papers, flagged in ``raw_outlier``) neither
#: shape the micro topics' centroids nor vote in the merge, and join their nearest topic last.
CORE_SHARE = 0.5

#: Leiden iterations per run (each iteration refines until no paper moves; a bound, not a target:
#: on tiny graphs an unbounded run can cycle).
LEIDEN_ITERATIONS = 10


#: Below this many papers "auto" clusters with Ward on the embeddings themselves: a graph of a few
#: hundred papers has too few papers per micro topic for the consensus merge (on the 38 NeurIPS
#: 2026 abstracts Ward gives six topics of 4-9 papers that read as fields), and Ward has no seed.
AUTO_GRAPH_MIN = 500

#: Micro topics per target topic that the graph clustering's Leiden resolution is calibrated for
#: (measured, ten seeds: 2.6 gave ICML 2024 stability 0.86 against 0.69 for 3.5 and 4.5; 3.5 gave
#: IJCAI +0.007 NMI and +0.013 ARI; benchmarks/results/stability.md).
MICRO_PER_TOPIC = 2.6


#: Leiden runs of the graph clustering up to this many papers; larger graphs get fewer
#: (:func:`default_runs`).
RUNS_FULL = 40
RUNS_FULL_UP_TO = 5_000
RUNS_MIN = 3


def default_runs(n: int) -> int:
    """Leiden runs for ``n`` papers: 40 up to 5,000, then 40 * sqrt(5,000 / n), at least 3.

    A one-year conference (a few thousand papers) gets 40 runs, each a fraction of a second; from
    about 18,000 papers on the counts are those the clustering had before (21 at 18,661, 20 at
    20,000, 9 at 100,000, 3 at a million). Each run is one Leiden pass over a graph of about 15 n
    edges (8 s at 100,000 papers here), so 40 runs would cost minutes at 100,000 papers and most of
    an hour at a million. Fewer runs cost seed stability (ICML 2024: 5 runs 0.67, 10 runs 0.75, 20
    runs 0.86; EVALUATION.md, "Cost"); 40 runs that each leave out a fifth of the papers
    (:data:`RUN_SHARE`) raised stability on 90% samples on every corpus measured (EVALUATION.md,
    "Since issue 20").
    """
    if n <= RUNS_FULL_UP_TO:
        return RUNS_FULL
    return max(RUNS_MIN, round(RUNS_FULL * math.sqrt(RUNS_FULL_UP_TO / n)))


def uses_projection(params: ClusterParams) -> bool:
    """Whether the clustering needs a UMAP projection (only the HDBSCAN method does)."""
    return params.method == "hdbscan"


def resolve_params(params: ClusterParams, n: int) -> ResolvedClusterParams:
    """Fill in the size-dependent defaults for a corpus of ``n`` papers.

    ``method="auto"`` is the graph clustering from :data:`AUTO_GRAPH_MIN` papers and Ward on the
    embeddings below; every method merges to :func:`target_topics` (``n_topics``). The HDBSCAN
    values (``min_cluster_size`` about sqrt(n)/5 for its small dense "micro" topics, see
    benchmarks/results/clustering-tuning.md) and ``smooth_k`` are resolved for every method and
    stored in the manifest; only ``hdbscan`` uses the first two.
    """
    mcs = params.min_cluster_size or max(2, round(math.sqrt(n) / 5))
    ms = params.min_samples or max(1, round(mcs / 2))
    smooth = params.smooth_k if params.smooth_k is not None else (min(15, mcs - 1) if mcs > 2 else 0)
    method = params.method
    if method == "auto":
        method = "graph" if n >= AUTO_GRAPH_MIN else "ward"
    return ResolvedClusterParams(
        method=method,
        seed=int(params.seed),
        resolution=float(params.resolution or 0.0),
        runs=max(1, int(params.runs or default_runs(n))),
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


def cluster(
    points: np.ndarray | None, embeddings: np.ndarray, params: ClusterParams, knn: np.ndarray | None = None
) -> Clustering:
    """Cluster the papers into topics.

    ``graph`` (the default, see :func:`graph_topics`): consensus micro topics of the kNN graph,
    merged by the agreement of ``runs`` Leiden runs, then :data:`REFINE_STEPS` k-means step(s)
    (:func:`refine`). ``ward``: Ward on the embeddings (``auto`` below :data:`AUTO_GRAPH_MIN`
    papers). ``hdbscan``: dense micro topics in the ``cluster_dims``-d UMAP projection, merged by
    average linkage on the cosine of their mean embeddings. ``agglomerative``: Ward on the 2-d map.
    Papers left out (border papers, HDBSCAN's noise) go to the most similar merged topic (flagged
    in ``raw_outlier``) and one round of kNN majority vote smooths the borders. Measured against
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
    if n < 3:
        labels = np.zeros(n, dtype=np.int64)
        return Clustering(labels, np.zeros(n, dtype=bool), p)
    if p.method == "graph":
        if knn is None:
            raise ValueError("the graph clustering needs the kNN graph (knn)")
        labels = graph_topics(knn, embeddings, p)
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
        labels = reassign_outliers(labels, embeddings)
    if p.method == "graph":
        labels = refine(labels, embeddings, REFINE_STEPS)
    if p.smooth_k and knn is not None:
        labels = smooth(labels, knn, p.smooth_k)
    return Clustering(canonical_labels(labels), raw_outlier, p)


#: k-means steps that refine the graph clustering's merged topics (:func:`refine`). Three steps
#: (chosen on IJCAI and two proxies) lowered agreement on a held-out one-year conference (issue 20:
#: NMI 0.339 -> 0.315); one step, measured on every corpus we have (EVALUATION.md, issue 20), keeps
#: IJCAI's gain in NMI and raises its ARI and its stability on 90% samples (0.75 -> 0.83), and
#: raises the NeurIPS keyword proxy's NMI, ARI and sample stability; it costs the small IJCAI
#: subarea proxy 0.007 NMI and 0.02 ARI.
REFINE_STEPS = 1


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


# --------------------------------------------------------------------------------------------
# Clustering the kNN graph
# --------------------------------------------------------------------------------------------


def snn_edges(knn: np.ndarray, chunk: int = 100_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kNN graph as undirected edges weighted by shared neighbours.

    An edge joins two papers when either is among the other's nearest neighbours; its weight is
    the number of papers in both neighbour lists (each list holding the paper itself), an integer
    between 1 and k + 1. Counts rather than cosine similarities: they are exact on every machine,
    and they discount "hub" papers close to everything.

    Args:
        knn: int ``(n, k + 1)`` neighbour indices, self first; ``-1`` marks a missing neighbour.

    Returns:
        ``(a, b, w)``: int64 ends (``a < b``, each pair once, sorted) and float64 weights.
    """
    n, width = knn.shape
    src = np.repeat(np.arange(n, dtype=np.int64), width - 1)
    dst = knn[:, 1:].astype(np.int64).ravel()
    keep = (src != dst) & (dst >= 0)
    key = np.unique(np.minimum(src[keep], dst[keep]) * n + np.maximum(src[keep], dst[keep]))
    del src, dst, keep
    a, b = key // n, key % n
    del key
    # Each list sorted once, then one merge of two sorted lists per edge: O(k) an edge instead of
    # the O(k^2) comparisons of every pair (40 billion at a million papers).
    rows = np.sort(np.where(knn >= 0, knn, -1).astype(np.int64), axis=1)
    w = np.empty(len(a), dtype=np.float64)
    for s in range(0, len(a), chunk):
        w[s : s + chunk] = _shared_counts(rows, a[s : s + chunk], b[s : s + chunk])
    return a, b, w


def _shared_counts(rows: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each pair ``(a[i], b[i])``, how many valid (>= 0) entries rows a and b share; rows sorted."""
    return _shared_counts_jit()(rows, a, b)


_SHARED_COUNTS = None


def _shared_counts_jit():
    global _SHARED_COUNTS
    if _SHARED_COUNTS is None:
        import numba

        @numba.njit(cache=True, nogil=True)
        def shared(rows, a, b):  # pragma: no cover - compiled
            out = np.empty(len(a), dtype=np.float64)
            width = rows.shape[1]
            for e in range(len(a)):
                ra, rb = rows[a[e]], rows[b[e]]
                i = j = 0
                count = 0
                while i < width and j < width:
                    x, y = ra[i], rb[j]
                    if x < y:
                        i += 1
                    elif y < x:
                        j += 1
                    else:
                        if x >= 0:
                            count += 1
                        i += 1
                        j += 1
                out[e] = count
            return out

        _SHARED_COUNTS = shared
    return _SHARED_COUNTS


class _Graph:
    """An igraph graph of the edges, built once for all Leiden runs."""

    def __init__(self, n: int, edges: tuple[np.ndarray, np.ndarray, np.ndarray]):
        self.n = n
        self.graph = _igraph(n, edges[0], edges[1])
        self.weights = edges[2].tolist()

    def leiden(self, resolution: float, seed: int, weights: list[float] | None = None) -> np.ndarray:
        """One Leiden run (modularity with ``resolution``), seeded; int64 community per paper."""
        import random

        import igraph as ig

        ig.set_random_number_generator(random.Random(seed))
        try:
            part = self.graph.community_leiden(
                objective_function="modularity",
                weights=self.weights if weights is None else weights,
                resolution=resolution,
                n_iterations=LEIDEN_ITERATIONS,
            )
        finally:
            ig.set_random_number_generator(random)
        return np.asarray(part.membership, dtype=np.int64)


#: Graphs with more edges than this are handed to igraph through its C edge-list reader.
EDGE_LIST_MIN = 200_000


def _igraph(n: int, a: np.ndarray, b: np.ndarray):
    """An undirected igraph graph with ``n`` vertices and edges ``(a[i], b[i])``, in that order.

    igraph's constructor reads edges one Python object at a time (over a minute for the 25 million
    edges of a million papers); a large graph is written as a text edge list by Arrow and read by
    igraph's C reader instead, which gives the same graph (same edges, same order) several times
    faster.
    """
    import igraph as ig

    if len(a) < EDGE_LIST_MIN:
        return ig.Graph(n=n, edges=np.column_stack([a, b]))
    import tempfile

    import pyarrow as pa
    import pyarrow.csv as pa_csv

    with tempfile.TemporaryDirectory(prefix="atlas-graph-") as folder:
        path = str(Path(folder) / "edges.txt")
        table = pa.table({"a": np.asarray(a, dtype=np.int64), "b": np.asarray(b, dtype=np.int64)})
        pa_csv.write_csv(table, path, write_options=pa_csv.WriteOptions(include_header=False, delimiter=" "))
        del table
        graph = ig.Graph.Read_Edgelist(path, directed=False)
    if graph.vcount() < n:  # the reader knows only vertices up to the largest id in an edge
        graph.add_vertices(n - graph.vcount())
    return graph


def graph_topics(knn: np.ndarray, embeddings: np.ndarray, p: ResolvedClusterParams) -> np.ndarray:
    """Topics from the kNN graph; border papers are ``-1`` (the caller places them).

    1. ``p.runs`` Leiden runs (modularity at ``p.resolution``, seeds from ``p.seed``) on the
       shared-neighbour graph (:func:`snn_edges`) find micro topics, about 2-3 times as many as
       the target. With :data:`SHARE_MIN_RUNS` runs or more, each run sees a random
       :data:`RUN_SHARE` of the papers (seeded by the run), the others sit it out.
    2. Consensus micro topics: Leiden once more, on the same edges weighted by the share of the
       runs that saw both ends which put them together.
    3. In each run and in the consensus, papers with fewer than ``CORE_SHARE`` of their
       neighbours in their own micro topic are border papers: left out of the merge.
    4. Each run's micro topics are merged to ``p.n_topics`` (average linkage on the cosine of their
       mean embeddings, :func:`merge_to`); the consensus micro topics are then merged by average
       linkage on how often those runs put their papers in one topic (evidence accumulation).
    """
    n = len(knn)
    a, b, w = snn_edges(knn)
    graph = _Graph(n, (a, b, w))
    resolution = p.resolution or calibrated_resolution(graph, p)
    subsample = RUN_SHARE < 1 and p.runs >= SHARE_MIN_RUNS
    if subsample:
        present = [np.random.default_rng(_run_seed(p.seed, r)).random(n) < RUN_SHARE for r in range(p.runs)]
    else:
        present = [np.ones(n, dtype=bool)] * p.runs
    runs = [
        graph.leiden(resolution, _run_seed(p.seed, r), None if keep.all() else (w * (keep[a] & keep[b])).tolist())
        for r, keep in zip(range(p.runs), present, strict=True)
    ]
    if len(runs) == 1:
        consensus = runs[0]
    elif subsample:
        together = sum(((r[a] == r[b]) & k[a] & k[b]).astype(np.float64) for r, k in zip(runs, present, strict=True))
        both = sum((k[a] & k[b]).astype(np.float64) for k in present)
        consensus = graph.leiden(resolution, _run_seed(p.seed, p.runs), (w * together / np.maximum(both, 1)).tolist())
    else:
        together = sum((r[a] == r[b]).astype(np.float64) for r in runs)
        consensus = graph.leiden(resolution, _run_seed(p.seed, p.runs), (w * together).tolist())
    micro = _core(consensus, knn)
    if (micro == -1).all():  # no paper has most of its neighbours in its community: keep them all
        micro = consensus
    if len(runs) == 1:
        return merge_to(micro, embeddings, p.n_topics)
    finals = [
        reassign_outliers(merge_to(_core_present(r, knn, keep), embeddings, p.n_topics), embeddings)
        for r, keep in zip(runs, present, strict=True)
    ]
    return merge_by_agreement(micro, finals, p.n_topics, embeddings)


#: Share of the papers each Leiden run of the graph clustering sees, when there are at least
#: :data:`SHARE_MIN_RUNS` runs (the others sit out that run: their edges weigh nothing there, and
#: they join the run's nearest topic before the vote). Runs that each miss a different fifth of
#: the papers agree only on structure that does not hang on a few papers, so the topics change less
#: when the corpus does (stability on 90% samples, EVALUATION.md "Since issue 20").
RUN_SHARE = 0.8
#: Fewer runs than this all see every paper (with 3 runs, one edge in twenty would have both ends
#: absent from every run).
SHARE_MIN_RUNS = 10


def _core_present(labels: np.ndarray, knn: np.ndarray, present: np.ndarray) -> np.ndarray:
    """:func:`_core` of a run that saw only the ``present`` papers (the others are -1)."""
    if present.all():
        return _core(labels, knn)
    seen = np.where(knn >= 0, present[np.clip(knn, 0, None)], False)
    out = _core(labels, np.where(seen, knn, -1))
    out[~present] = -1
    return out


def calibrated_resolution(graph: _Graph, p: ResolvedClusterParams) -> float:
    """Leiden's resolution for about ``MICRO_PER_TOPIC`` micro topics per target topic.

    One run at a first guess (6 up to 3,000 papers, growing as n^0.45: 9.8 at 9,800 papers, 13 at
    18,700; measured on the shared corpora) counts the communities; the number of communities
    grows about as resolution^0.7 (measured on IJCAI, ICML, ICLR and NeurIPS), which gives the
    resolution that hits the wanted count. Deterministic: the run is seeded.
    """
    guess = 6.0 * max(1.0, graph.n / 3_000) ** 0.45
    found = len(np.unique(graph.leiden(guess, _run_seed(p.seed, 999))))
    wanted = MICRO_PER_TOPIC * p.n_topics
    return float(np.clip(guess * (wanted / max(found, 1)) ** (1 / 0.7), 0.5, 1_000.0))


def _run_seed(seed: int, run: int) -> int:
    return int(seed) * 1_000 + run


def _core(labels: np.ndarray, knn: np.ndarray) -> np.ndarray:
    """``labels`` with border papers (fewer than CORE_SHARE of their neighbours alike) set to -1."""
    near = knn[:, 1:]
    valid = near >= 0
    alike = ((labels[near] == labels[:, None]) & valid).sum(axis=1)
    return np.where(alike >= CORE_SHARE * np.maximum(valid.sum(axis=1), 1), labels, -1)


def merge_by_agreement(
    micro: np.ndarray, finals: list[np.ndarray], k: int, embeddings: np.ndarray | None = None
) -> np.ndarray:
    """Merge micro topics into ``k`` topics by how often other clusterings put their papers together.

    The agreement of micro topics A and B is the mean over ``finals`` of the probability that a
    paper drawn from A and one drawn from B share a topic there; average linkage on
    ``1 - agreement`` merges them (micro topics are few, so the matrix is small).

    Args:
        micro: int ``(n,)`` micro topic per paper, ``-1`` for none.
        finals: int ``(n,)`` complete clusterings (no ``-1``) of the same papers.
        k: topics wanted (no merge when there are no more micro topics than that).
    """
    from scipy import sparse
    from sklearn.cluster import AgglomerativeClustering

    ids = np.unique(micro[micro != -1])
    if len(ids) <= k:
        return micro
    inlier = np.flatnonzero(micro != -1)
    rows = np.searchsorted(ids, micro[inlier])
    member = sparse.csr_matrix((np.ones(len(inlier)), (rows, inlier)), shape=(len(ids), len(micro)))
    member = sparse.diags(1.0 / np.asarray(member.sum(axis=1)).ravel()) @ member
    agreement = np.zeros((len(ids), len(ids)))
    for final in finals:
        onehot = sparse.csr_matrix(
            (np.ones(len(final)), (np.arange(len(final)), final)), shape=(len(final), int(final.max()) + 1)
        )
        share = (member @ onehot).toarray()  # (micro, topic): share of A's papers in each topic
        agreement += share @ share.T
    distance = 1.0 - agreement / len(finals)
    np.fill_diagonal(distance, 0.0)
    groups = AgglomerativeClustering(n_clusters=k, metric="precomputed", linkage="average").fit_predict(distance)
    groups = np.asarray(groups, dtype=np.int64)
    if embeddings is not None and CAP_LARGE:
        counts = np.bincount(rows, minlength=len(ids)).astype(np.float64)
        raw = sparse.csr_matrix((np.ones(len(inlier)), (rows, inlier)), shape=(len(ids), len(micro)))
        sums = np.zeros((len(ids), embeddings.shape[1]))
        for s in range(0, len(micro), 100_000):  # a block of papers at a time (embeddings may be memory-mapped)
            sums += raw[:, s : s + 100_000] @ np.asarray(embeddings[s : s + 100_000], dtype=np.float64)
        groups = cap_large(groups, distance, k, counts, sums, MAX_SHARE * len(inlier))
    lookup = np.full(len(micro), -1, dtype=np.int64)
    out = lookup.copy()
    out[inlier] = groups[rows]
    return out


#: No merge makes a topic of more than this share of the papers whose papers are less alike than
#: the median topic's (:func:`cap_large`).
MAX_SHARE = 0.12
#: Whether the graph clustering's merge keeps large topics to those as coherent as the median one.
CAP_LARGE = False


def _spread_of(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Mean cosine of a group's papers to their normalised mean: ``|sum| / count`` (unit vectors)."""
    return np.linalg.norm(sums, axis=-1) / np.maximum(counts, 1.0)


def cap_large(
    groups: np.ndarray, distance: np.ndarray, k: int, counts: np.ndarray, sums: np.ndarray, max_papers: float
) -> np.ndarray:
    """The merge of micro topics again, without topics larger than ``max_papers`` papers that are
    looser than the median topic, when the plain merge (``groups``) made any.

    Average linkage on ``distance`` (as the plain merge), except that a merge giving a group of
    more than ``max_papers`` papers whose spread (mean cosine of its papers to their mean) is below
    the median spread of the plain merge's topics is not made; the merging stops at ``k`` groups or
    when no merge is allowed (then there are more than ``k``). A large topic that holds one
    subject (as alike as the median topic) is still made: it is a field, not a grab bag.

    Args:
        groups: int ``(m,)`` the plain merge's topic of each micro topic.
        distance: float ``(m, m)`` agreement distance between micro topics.
        k: topics wanted.
        counts: float ``(m,)`` papers of each micro topic.
        sums: float ``(m, dim)`` sum of each micro topic's (unit) embeddings.
        max_papers: the size above which a topic must be as coherent as the median one.

    Returns:
        int ``(m,)`` topic of each micro topic (0, 1, ... by first micro topic).
    """
    ids = np.unique(groups)
    g_counts = np.array([counts[groups == g].sum() for g in ids])
    g_sums = np.stack([sums[groups == g].sum(axis=0) for g in ids])
    spreads = _spread_of(g_counts, g_sums)
    median = float(np.median(spreads))
    if not ((g_counts > max_papers) & (spreads < median)).any():
        return groups
    m = len(distance)
    d = np.array(distance, dtype=np.float64)
    np.fill_diagonal(d, np.inf)
    apart = np.zeros((m, m), dtype=bool)  # pairs whose merge would make a large, loose topic
    weight = np.ones(m)
    papers, total = counts.astype(np.float64).copy(), sums.astype(np.float64).copy()
    label = np.arange(m)
    alive = m
    while alive > k:
        i, j = divmod(int(np.argmin(np.where(apart, np.inf, d))), m)  # closest pair; ties: first in row order
        if not np.isfinite(d[i, j]) or apart[i, j]:
            break  # no merge left that is allowed
        size = papers[i] + papers[j]
        if size > max_papers and float(_spread_of(size, total[i] + total[j])) < median:
            apart[i, j] = apart[j, i] = True
            continue
        i, j = min(i, j), max(i, j)
        row = (weight[i] * d[i] + weight[j] * d[j]) / (weight[i] + weight[j])  # average linkage
        d[i], d[:, i] = row, row
        d[i, i] = np.inf
        d[j], d[:, j] = np.inf, np.inf
        apart[i], apart[:, i] = False, False  # the merged topic is checked again when its turn comes
        weight[i] += weight[j]
        papers[i], total[i] = size, total[i] + total[j]
        label[label == j] = i
        alive -= 1
    _, out = np.unique(label, return_inverse=True)
    return out.astype(np.int64)
