"""UMAP's spectral start with at most 64 Lanczos vectors: UMAP's own map where UMAP uses as few,
the same eigenvectors where it uses more, UMAP's own layout for a graph in pieces."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
import umap
import umap.spectral
from umap.umap_ import fuzzy_simplicial_set

from pipeline.core.config import BuildConfig
from pipeline.model import spectral_start
from pipeline.model.reduce import map_projection, shared_knn
from pipeline.model.spectral_start import LANCZOS_MAX, lanczos_vectors, pruned_graph, spectral_layout


def _points(n: int, dim: int = 16, groups: int = 6, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(groups, dim))
    x = centres[rng.integers(groups, size=n)] + 0.5 * rng.normal(size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _graph(x: np.ndarray, k: int = 15):
    knn = shared_knn(x, BuildConfig().umap)
    graph = fuzzy_simplicial_set(
        x, k, np.random.RandomState(0), "cosine", knn_indices=knn[0][:, :k], knn_dists=knn[1][:, :k]
    )[0]
    return pruned_graph(graph, None)


def test_how_many_lanczos_vectors():
    assert lanczos_vectors(400, 2) == 20  # UMAP's √n
    assert lanczos_vectors(LANCZOS_MAX**2, 2) == LANCZOS_MAX
    assert lanczos_vectors(1_000_000, 2) == LANCZOS_MAX  # UMAP: 1,000 vectors, 8 GB
    assert lanczos_vectors(4, 2) == 7  # at least 2k + 1, as UMAP


def test_the_map_is_umaps_own_where_umap_uses_as_few_vectors(monkeypatch):
    x = _points(900)
    params = BuildConfig().umap
    knn = shared_knn(x, params)
    calls = []
    ours = spectral_start.spectral_layout

    def spy(*args, **kwargs):
        calls.append(args[1].shape)
        return ours(*args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(spectral_start, "spectral_layout", spy)
        bounded = map_projection(x, knn, params)
    assert calls == [(900, 900)]  # the build's map starts from our layout, not UMAP's
    monkeypatch.setattr(spectral_start, "bounded_umap_class", lambda: umap.UMAP)
    own = map_projection(x, knn, params)
    np.testing.assert_array_equal(bounded, own)  # bit for bit: the same draws, the same start


def test_the_same_eigenvectors_with_fewer_vectors():
    x = _points(5_000)  # UMAP: 70 Lanczos vectors; here 64
    graph = _graph(x)
    assert lanczos_vectors(graph.shape[0], 2) < int(np.sqrt(graph.shape[0]))
    ours = spectral_layout(x, graph, 2, np.random.RandomState(3))
    theirs = umap.spectral.spectral_layout(x, graph, 2, np.random.RandomState(3))
    cos = np.abs((ours * theirs).sum(axis=0)) / (np.linalg.norm(ours, axis=0) * np.linalg.norm(theirs, axis=0))
    assert cos.min() > 0.999
    # ... and the same draws from the random state, so what follows the start is UMAP's too
    a, b = np.random.RandomState(3), np.random.RandomState(3)
    spectral_layout(x, graph, 2, a)
    umap.spectral.spectral_layout(x, graph, 2, b)
    assert a.randint(1 << 30) == b.randint(1 << 30)


def test_a_graph_in_pieces_is_laid_out_by_umap():
    x = _points(300, groups=2, seed=1)
    graph = _graph(x).tocsr()
    half = np.arange(300) < 150
    graph = scipy.sparse.coo_matrix(graph.multiply(np.equal.outer(half, half)))  # two pieces
    graph.eliminate_zeros()
    ours = spectral_layout(x, graph, 2, np.random.RandomState(0))
    theirs = umap.spectral.spectral_layout(x, graph, 2, np.random.RandomState(0))
    np.testing.assert_array_equal(ours, theirs)


def test_a_failed_solver_falls_back_to_a_random_start_as_umap_does(monkeypatch):
    def fails(*args, **kwargs):
        raise scipy.sparse.linalg.ArpackNoConvergence("no", np.zeros(0), np.zeros((0, 0)))

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", fails)
    x = _points(200, groups=1)  # one piece: our own solver runs
    with pytest.warns(UserWarning, match="random start"):
        out = spectral_layout(x, _graph(x), 2, np.random.RandomState(0))
    assert out.shape == (200, 2) and np.abs(out).max() <= 10
