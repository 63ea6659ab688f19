"""UMAP's spectral start with a bounded number of Lanczos vectors.

UMAP starts its layout from the graph Laplacian's smallest eigenvectors, found by ARPACK
(``scipy.sparse.linalg.eigsh``) with √n Lanczos vectors of n float64 values each: n^1.5 × 8 bytes,
0.25 GB at 100,000 papers and 8 GB at a million, the largest allocation of a million-paper build
(BENCHMARKS.md, "The map's spectral start"). Three eigenvectors do not need that many: with at
most ``LANCZOS_MAX`` vectors ARPACK finds the same ones (the same eigenvalues to 1e-6, the
vectors' cosine above 0.9997 at 200,000 papers) in less time and a fraction of the memory.

``BoundedSpectralUMAP`` is UMAP with that start and nothing else changed: it overrides
``_fit_embed_data``, the hook UMAP documents for subclasses, computes the start exactly as
``umap.spectral.spectral_layout`` does (the same graph pruning, Laplacian, random draws and
scaling), and hands it to UMAP as an initial layout. Up to ``LANCZOS_MAX``² papers (4,096) the
number of vectors is UMAP's own, so the map is UMAP's bit for bit (``tests/test_spectral_start.py``).
A graph in several pieces keeps UMAP's own layout of the pieces.
"""

from __future__ import annotations

import warnings

import numpy as np

#: At most this many Lanczos vectors (UMAP: √n, 1,000 at a million papers).
LANCZOS_MAX = 64


def lanczos_vectors(n: int, dim: int) -> int:
    """The number of Lanczos vectors for ``dim`` eigenvectors of an ``n``-vertex Laplacian."""
    k = dim + 1
    return max(2 * k + 1, min(int(np.sqrt(n)), LANCZOS_MAX))


def pruned_graph(graph, n_epochs):
    """The fuzzy graph as ``umap.umap_.simplicial_set_embedding`` lays it out (a copy): edges too
    weak to be sampled in ``n_epochs`` epochs removed."""
    graph = graph.tocoo(copy=True)
    graph.sum_duplicates()
    default_epochs = 500 if graph.shape[0] <= 10_000 else 200
    if n_epochs is None:
        n_epochs = default_epochs
    most = max(n_epochs) if isinstance(n_epochs, list) else n_epochs
    floor = most if most > 10 else default_epochs
    graph.data[graph.data < (graph.data.max() / float(floor))] = 0.0
    graph.eliminate_zeros()
    return graph


def spectral_layout(data, graph, dim: int, random_state, metric="euclidean", metric_kwds=None) -> np.ndarray:
    """``umap.spectral.spectral_layout`` with at most ``LANCZOS_MAX`` Lanczos vectors.

    The same draws from ``random_state`` in the same order, the same Laplacian, ARPACK's solver at
    every size (UMAP changes to LOBPCG from two million vertices) and the same fallback to a random
    start when it fails. A graph in several connected pieces is laid out by UMAP itself.
    """
    import scipy.sparse
    import scipy.sparse.csgraph
    import scipy.sparse.linalg
    import umap.spectral

    pieces, _ = scipy.sparse.csgraph.connected_components(graph)
    if pieces > 1:
        return umap.spectral.spectral_layout(
            data, graph, dim, random_state, metric=metric, metric_kwds=metric_kwds or {}
        )
    n = graph.shape[0]
    sqrt_deg = np.sqrt(np.asarray(graph.sum(axis=0)).squeeze())
    identity = scipy.sparse.identity(n, dtype=np.float64)
    scale = scipy.sparse.spdiags(1.0 / sqrt_deg, 0, n, n)
    laplacian = identity - scale * graph * scale
    k = dim + 1
    random_state.normal(size=(n, k))  # UMAP draws an unused random start here: the same draws follow
    try:
        values, vectors = scipy.sparse.linalg.eigsh(
            laplacian,
            k,
            which="SM",
            ncv=lanczos_vectors(n, dim),
            tol=1e-4,
            v0=np.ones(n),
            maxiter=n * 5,
        )
    except scipy.sparse.linalg.ArpackError:
        warnings.warn("Spectral initialisation failed; falling back to a random start (as UMAP does).", stacklevel=2)
        return random_state.uniform(low=-10.0, high=10.0, size=(n, dim))
    order = np.argsort(values)[1:k]
    return vectors[:, order]


def bounded_umap_class():
    """``umap.UMAP`` whose spectral start uses at most ``LANCZOS_MAX`` Lanczos vectors."""
    from umap import UMAP
    from umap.umap_ import noisy_scale_coords

    class BoundedSpectralUMAP(UMAP):
        def _fit_embed_data(self, X, n_epochs, init, random_state, **kwargs):
            if isinstance(init, str) and init == "spectral":
                start = spectral_layout(
                    X,
                    pruned_graph(self.graph_, n_epochs),
                    self.n_components,
                    random_state,
                    metric=self._input_distance_func,
                    metric_kwds=self._metric_kwds,
                )
                # As simplicial_set_embedding scales UMAP's own spectral start.
                init = noisy_scale_coords(start, random_state, max_coord=10, noise=0.0001)
            return super()._fit_embed_data(X, n_epochs, init, random_state, **kwargs)

    return BoundedSpectralUMAP
