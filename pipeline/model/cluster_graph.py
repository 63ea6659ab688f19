"""The kNN graph that the graph clustering runs Leiden on: shared-neighbour edges and the igraph
graph built from them once for all runs.

Weights are integer counts of shared neighbours, so the same papers give the same graph on any
processor (``pipeline.model.cluster_consensus`` runs Leiden on it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.core.background import stop_pool, usable_cpus, worker_pool

#: Leiden iterations per run (each iteration refines until no paper moves; a bound, not a target:
#: on tiny graphs an unbounded run can cycle).
LEIDEN_ITERATIONS = 10


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


class LeidenGraph:
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


#: Graphs of this many papers or more run their Leiden runs in worker processes, one per CPU
#: (:func:`leiden_runs`; below, starting the workers costs about what they save), up to
#: ``PARALLEL_MAX_PAPERS`` (each worker holds a copy of the graph).
PARALLEL_MIN_PAPERS = 5_000
PARALLEL_MAX_PAPERS = 300_000


def leiden_runs(
    graph: LeidenGraph,
    edges: tuple[np.ndarray, np.ndarray, np.ndarray],
    resolution: float,
    seeds: list[int],
    keeps: list[np.ndarray | None],
) -> list[np.ndarray]:
    """Leiden runs on ``graph`` (made from ``edges``): run i seeded ``seeds[i]``, on the edges whose
    two ends ``keeps[i]`` both holds (None: every edge).

    The runs are independent: on two CPUs or more, for graphs of ``PARALLEL_MIN_PAPERS`` to
    ``PARALLEL_MAX_PAPERS`` papers, worker processes (one per CPU) make them, each on its own copy
    of the graph, with the same results bit for bit; where the workers cannot start or one fails,
    they are made here.
    """
    workers = min(usable_cpus(), len(seeds))
    if workers >= 2 and PARALLEL_MIN_PAPERS <= graph.n <= PARALLEL_MAX_PAPERS:
        runs = _runs_in_workers(workers, graph.n, edges, resolution, seeds, keeps)
        if runs is not None:
            return runs
    return _runs_on(graph, edges, resolution, seeds, keeps)


def _runs_in_workers(workers: int, n: int, edges, resolution: float, seeds: list[int], keeps: list) -> list | None:
    """:func:`leiden_runs` in ``workers`` processes, run i in worker i % workers; None when they
    cannot start or one dies. The edges go with each worker's one task, never as start-up
    arguments (see ``pipeline.core.background.worker_pool``)."""
    try:
        pool = worker_pool(workers)
    except (OSError, RuntimeError):
        return None
    finished = False
    try:
        parts = [
            pool.submit(_leiden_part, n, edges, resolution, seeds[w::workers], keeps[w::workers])
            for w in range(workers)
        ]
        done = [part.result() for part in parts]
        finished = True
        return [done[i % workers][i // workers] for i in range(len(seeds))]
    except Exception:  # a worker died: the caller makes the runs itself
        return None
    finally:
        stop_pool(pool, finished=finished)


def _runs_on(graph: LeidenGraph, edges, resolution: float, seeds: list[int], keeps: list) -> list[np.ndarray]:
    return [graph.leiden(resolution, s, _kept_weights(edges, k)) for s, k in zip(seeds, keeps, strict=True)]


def _kept_weights(edges: tuple[np.ndarray, np.ndarray, np.ndarray], keep: np.ndarray | None) -> list[float] | None:
    """The edges' weights with those touching a paper outside ``keep`` set to 0 (None: all kept)."""
    if keep is None:
        return None
    a, b, w = edges
    return (w * (keep[a] & keep[b])).tolist()


def _leiden_part(n: int, edges, resolution: float, seeds: list[int], keeps: list) -> list[np.ndarray]:
    """In a worker process: some of :func:`leiden_runs`'s runs, on its own copy of the graph."""
    return _runs_on(LeidenGraph(n, edges), edges, resolution, seeds, keeps)


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
