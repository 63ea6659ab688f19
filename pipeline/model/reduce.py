"""Dimensionality reduction: one cosine kNN graph, and UMAP to 2-d (the map).

The kNN graph is computed once. The default graph clustering (``pipeline.model.cluster``, Leiden on
this graph) clusters the graph itself and needs no projection; the map's UMAP run reuses the graph
(``precomputed_knn``) instead of searching for neighbours again. Only the ``hdbscan`` clustering
method (``pipeline.model.cluster_params.uses_projection``) also needs a ``cluster_dims``-d UMAP projection
(5-d by default), made from the same graph, as are the stability runs' projections for that
method. Up to ``exact_knn_max`` papers the graph is exact (blocked matrix products on the
normalised embeddings: BLAS uses every core and the result is deterministic); beyond that
pynndescent approximates it.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from pipeline.core.config import UmapParams
from pipeline.core.ranking import top_k
from pipeline.model import spectral_start

#: Bump when the reduction's output for the same inputs and params changes.
REDUCE_VERSION = 4


@dataclass(frozen=True)
class Projection:
    """UMAP output.

    Attributes:
        cluster: float32 ``(n, params.cluster_dims)`` UMAP projection for the ``hdbscan``
            clustering method; otherwise the 2-d map itself (the graph clustering, the default,
            clusters the kNN graph and ignores it; ``agglomerative`` clusters the map).
        map: float32 ``(n, 2)``, the topic map.
        knn_indices: int32 ``(n, k)`` cosine nearest neighbours (self first).
        knn_dists: float32 ``(n, k)`` their cosine distances.
    """

    cluster: np.ndarray
    map: np.ndarray
    knn_indices: np.ndarray
    knn_dists: np.ndarray

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, value in asdict(self).items():
            np.save(folder / f"{name}.npy", value, allow_pickle=False)

    @classmethod
    def load(cls, folder: Path) -> Projection:
        """The arrays memory-mapped, read-only: the stages only read them."""
        return cls(
            **{
                name: np.load(folder / f"{name}.npy", allow_pickle=False, mmap_mode="r")
                for name in cls.__dataclass_fields__
            }
        )


def exact_knn(
    embeddings: np.ndarray, k: int, block: int = 2048, threads: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Exact cosine kNN of L2-normalised rows, self included as the first neighbour.

    Blocks of rows run on ``threads`` threads (default: the CPUs available, at most 4): the matrix
    product is multi-threaded anyway, but the partial sort that follows is not, and numpy releases
    the GIL for it. Each block's result is independent of the others, so the output is the same
    for any number of threads.

    Returns:
        ``(indices, distances)``, int32 and float32 of shape ``(n, k)``, nearest first.
    """
    n = len(embeddings)
    k = min(k, n)
    x = np.ascontiguousarray(embeddings, dtype=np.float32)
    indices = np.empty((n, k), dtype=np.int32)
    dists = np.empty((n, k), dtype=np.float32)

    def one(start: int) -> None:
        sims = x[start : start + block] @ x.T
        rows = np.arange(len(sims))
        sims[rows, start + rows] = 2.0  # self first even among exact duplicates
        best_idx = top_k(sims, k)  # ties by row: the same graph on every machine
        indices[start : start + block] = best_idx
        best = np.take_along_axis(sims, best_idx, axis=1)
        best[:, 0] = 1.0
        dists[start : start + block] = np.clip(1.0 - best, 0.0, 2.0)

    starts = range(0, n, block)
    workers = min(threads or _cpus(), 4, len(starts))
    if workers <= 1:
        for start in starts:
            one(start)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, starts))
    return indices, dists


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def neighbours_for(n: int, params: UmapParams) -> int:
    """UMAP's n_neighbors: the setting, else about n/600 between 15 and 30 (tuned: larger graphs
    make large corpora's topics steadier across seeds and hurt small ones)."""
    return int(params.n_neighbors or min(30, max(15, round(n / 600))))


def knn_graph(embeddings: np.ndarray, params: UmapParams) -> tuple[np.ndarray, np.ndarray]:
    """Cosine kNN graph for UMAP: exact up to ``params.exact_knn_max`` rows, else pynndescent."""
    k = min(neighbours_for(len(embeddings), params) + 1, len(embeddings))
    if is_exact(len(embeddings), params):
        return exact_knn(embeddings, k)
    from pynndescent import NNDescent

    index = NNDescent(embeddings, n_neighbors=k, metric="cosine", random_state=params.seed, low_memory=True)
    idx, dist = index.neighbor_graph
    return idx.astype(np.int32), dist.astype(np.float32)


def is_exact(n: int, params: UmapParams) -> bool:
    """Whether the kNN graph of ``n`` papers is exact (else pynndescent approximates it)."""
    return n <= params.exact_knn_max


#: Papers whose approximate neighbours are checked against exact ones (:func:`knn_recall`).
RECALL_SAMPLE = 500


def knn_recall(
    embeddings: np.ndarray, indices: np.ndarray, *, sample: int = RECALL_SAMPLE, seed: int = 0, block: int = 100
) -> float:
    """Recall of a kNN graph against the exact one on a random sample of its rows.

    For each sampled paper, the share of its exact ``k`` nearest papers (cosine, self included,
    as in the graph) that the graph lists; the mean over the sample. Exact neighbours come from
    blocks of ``block`` rows against all papers (``block * n`` similarities at once: 400 MB at a
    million papers), so the cost is ``sample * n * dim`` multiply-adds (about 10 s at a million
    papers here).

    Args:
        embeddings: float32 ``(n, dim)`` L2-normalised (a memory map is fine).
        indices: int ``(n, k)`` the graph's neighbours, self first; ``-1`` for none.
        sample: rows checked (all of them when ``n`` is smaller).
        seed: which rows.

    Returns:
        Mean recall in [0, 1].
    """
    n, k = indices.shape
    if n == 0 or k == 0:
        return 1.0
    rows = np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))
    found = 0
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        sims = np.asarray(embeddings[part], dtype=np.float32) @ np.asarray(embeddings, dtype=np.float32).T
        sims[np.arange(len(part)), part] = np.inf  # itself first, as in the graph
        exact = top_k(sims, k)
        graph = indices[part]
        found += sum(len(np.intersect1d(e, g[g >= 0])) for e, g in zip(exact, graph, strict=True))
    return found / (len(rows) * k)


def _pca(embeddings: np.ndarray, dims: int) -> np.ndarray:
    """Tiny corpora (too few points for UMAP): PCA, zero-padded to ``dims`` columns."""
    centred = embeddings - embeddings.mean(axis=0)
    out = np.zeros((len(embeddings), dims), dtype=np.float32)
    if len(embeddings) > 1:
        u, s, _ = np.linalg.svd(centred, full_matrices=False)
        keep = min(dims, len(s))
        out[:, :keep] = u[:, :keep] * s[:keep]
    return out


_JIT_CACHED = False


def cache_umap_jit() -> None:
    """Let numba keep UMAP's compiled functions on disk, so that only the first process compiles.

    UMAP compiles its layout and graph functions with numba in every new process (about 9 s
    here, most of a small corpus's reduction) because they are not declared ``cache=True``;
    ``enable_caching`` on those dispatchers turns numba's own on-disk cache on for them (beside
    the package, or in ``NUMBA_CACHE_DIR`` when that is read-only). The compiled code and the
    results are the same; a function numba cannot cache is simply compiled as before.
    """
    global _JIT_CACHED
    if _JIT_CACHED:
        return
    _JIT_CACHED = True
    try:
        import umap.layouts
        import umap.spectral
        import umap.umap_
        from numba.core.registry import CPUDispatcher
    except ImportError:  # pragma: no cover - umap is a requirement
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module in (umap.umap_, umap.layouts, umap.spectral):
            for value in list(vars(module).values()):
                if isinstance(value, CPUDispatcher) and value._cache.__class__.__name__ == "NullCache":
                    with contextlib.suppress(Exception):  # caching is an optimisation only
                        value.enable_caching()


def _umap(embeddings, knn, *, dims: int, min_dist: float, params: UmapParams) -> np.ndarray:
    cache_umap_jit()

    n = len(embeddings)
    # UMAP with a spectral start of at most 64 Lanczos vectors (UMAP's √n: 8 GB at a million papers).
    model = spectral_start.bounded_umap_class()(
        n_neighbors=knn[0].shape[1],
        n_components=dims,
        min_dist=min_dist,
        metric="cosine",
        n_epochs=params.n_epochs,
        random_state=params.seed,
        precomputed_knn=(knn[0], knn[1], None),
        low_memory=True,
        init="spectral" if n > 4 * dims else "random",
        transform_mode="embedding",
    )
    with warnings.catch_warnings():
        # The precomputed graph has no search index (we never call transform) and random_state
        # forces one thread; both are intended.
        warnings.filterwarnings("ignore", message=".*(precomputed_knn|n_jobs|search index|disconnected).*")
        warnings.filterwarnings("ignore", category=UserWarning, module="umap")
        out = model.fit_transform(embeddings)
    return np.asarray(out, dtype=np.float32)


def shared_knn(embeddings: np.ndarray, params: UmapParams) -> tuple[np.ndarray, np.ndarray]:
    """The kNN graph every projection of these embeddings is built from (any seed).

    Returns:
        ``(indices, distances)``, int32 and float32 ``(n, k)``, self first.
    """
    n = len(embeddings)
    if n <= 1:
        return np.zeros((n, 1), np.int32), np.zeros((n, 1), np.float32)
    return knn_graph(embeddings, params)


def cluster_projection(
    embeddings: np.ndarray,
    knn: tuple[np.ndarray, np.ndarray],
    params: UmapParams,
    *,
    seed: int | None = None,
    n_epochs: int | None = None,
) -> np.ndarray:
    """The clustering projection alone (no map), on a precomputed kNN graph.

    Only the ``hdbscan`` clustering method clusters it: the build's main fit and the extra seeds of
    its per-topic stability, and the evaluation's seeds, use this same code path; only the seed
    (and optionally the epochs) differ.

    Args:
        embeddings: float32 ``(n, dim)``, L2-normalised.
        knn: ``shared_knn(embeddings, params)``.
        params: UMAP settings.
        seed: overrides ``params.seed``.
        n_epochs: overrides ``params.n_epochs``.

    Returns:
        float32 ``(n, params.cluster_dims)``.
    """
    n = len(embeddings)
    if n < params.min_points_for_umap:
        return _pca(embeddings, params.cluster_dims)
    k = min(neighbours_for(n, params), n - 1)
    run = replace(
        params, seed=params.seed if seed is None else seed, n_epochs=params.n_epochs if n_epochs is None else n_epochs
    )
    return _umap(
        embeddings,
        (knn[0][:, :k], knn[1][:, :k]),
        dims=params.cluster_dims,
        min_dist=params.min_dist_cluster,
        params=run,
    )


def reduce(
    embeddings: np.ndarray,
    params: UmapParams,
    knn: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    with_cluster: bool = True,
) -> Projection:
    """Project embeddings for the map and, when the clustering needs one, for clustering.

    Args:
        embeddings: float32 ``(n, dim)``, L2-normalised.
        params: UMAP settings; ``n_neighbors`` is capped at ``n - 1``.
        knn: ``shared_knn(embeddings, params)`` when the caller has it already.
        with_cluster: compute the ``cluster_dims``-d clustering projection (only the ``hdbscan``
            method clusters it); without it (every other method, the graph clustering by default)
            ``Projection.cluster`` is the 2-d map and one UMAP run is saved.

    Returns:
        The projections and the kNN graph they were built from.
    """
    n = len(embeddings)
    knn = shared_knn(embeddings, params) if knn is None else knn
    if n < params.min_points_for_umap:
        map_2d = _normalise_map(_pca(embeddings, 2))
        cluster = cluster_projection(embeddings, knn, params) if with_cluster else map_2d
        return Projection(cluster, map_2d, knn[0], knn[1])
    map_2d = map_projection(embeddings, knn, params)
    cluster = cluster_projection(embeddings, knn, params) if with_cluster else map_2d
    return Projection(cluster, map_2d, knn[0], knn[1])


def map_projection(embeddings: np.ndarray, knn: tuple[np.ndarray, np.ndarray], params: UmapParams) -> np.ndarray:
    """The 2-d map alone (UMAP on the shared kNN graph, centred and scaled), as ``reduce`` makes it.

    Args:
        embeddings: float32 ``(n, dim)``, L2-normalised, at least ``params.min_points_for_umap`` rows.
        knn: ``shared_knn(embeddings, params)``.
        params: UMAP settings.

    Returns:
        float32 ``(n, 2)``.
    """
    n = len(embeddings)
    k = min(neighbours_for(n, params), n - 1)
    map_2d = _umap(embeddings, (knn[0][:, :k], knn[1][:, :k]), dims=2, min_dist=params.min_dist_map, params=params)
    return _normalise_map(map_2d)


def _normalise_map(xy: np.ndarray) -> np.ndarray:
    """Centre the map and scale it to roughly [-10, 10] so maps of different corpora look alike."""
    xy = xy - np.median(xy, axis=0)
    scale = np.percentile(np.abs(xy), 99) if len(xy) else 1.0
    return (xy * (10.0 / scale if scale > 0 else 1.0)).astype(np.float32)
