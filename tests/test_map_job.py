"""The map made in a background process beside the clustering: the same map as the build's own,
the build's artifacts unchanged, and the build makes the map itself when the process fails."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import pipeline.build.map_job as map_job
from pipeline.build.build import build
from pipeline.core import artifacts, schema
from pipeline.core.config import BuildConfig, ClusterParams
from pipeline.model.reduce import map_projection, reduce, shared_knn
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config


def _points(n: int = 400, dim: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(5, dim))
    x = centres[rng.integers(5, size=n)] + 0.3 * rng.normal(size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_the_background_map_is_the_builds_own():
    embeddings = _points()
    params = BuildConfig().umap
    knn = shared_knn(embeddings, params)
    done = []
    job = map_job.MapJob(embeddings, knn, params, on_done=done.append)
    try:
        projection = job.projection()
    finally:
        job.close()
    assert job.mode == "background process"
    own = reduce(embeddings, params, knn=knn, with_cluster=False)
    np.testing.assert_array_equal(projection.map, own.map)  # bit for bit: same code, same graph, same seed
    np.testing.assert_array_equal(projection.knn_indices, knn[0])
    assert done == [projection] and job.projection() is projection  # cached once, made once


def test_a_failed_background_process_leaves_the_map_to_the_build(monkeypatch):
    def no_processes():
        raise OSError("no processes here")

    monkeypatch.setattr(map_job, "worker_pool", no_processes)
    embeddings = _points(seed=1)
    params = BuildConfig().umap
    knn = shared_knn(embeddings, params)
    job = map_job.MapJob(embeddings, knn, params)
    assert job.mode == "in the build (OSError)"
    np.testing.assert_array_equal(job.projection().map, map_projection(embeddings, knn, params))


def test_which_builds_make_their_map_in_the_background(monkeypatch):
    monkeypatch.setattr(map_job, "usable_cpus", lambda: 2)
    config = BuildConfig()
    assert map_job.map_in_background(18_661, config)
    assert not map_job.map_in_background(map_job.BACKGROUND_MIN_PAPERS - 1, config)  # a second Python costs more
    assert not map_job.map_in_background(map_job.BACKGROUND_MAX_PAPERS + 1, config)  # a second copy of a big corpus
    for method in ("agglomerative", "hdbscan"):  # these cluster a projection made in the same stage
        other = dataclasses.replace(config, cluster=ClusterParams(method=method))
        assert not map_job.map_in_background(18_661, other)
    monkeypatch.setattr(map_job, "usable_cpus", lambda: 1)
    assert not map_job.map_in_background(18_661, config)


@pytest.mark.parametrize("method", ["graph", "ward"])
def test_a_build_with_the_map_in_the_background_writes_the_same_corpus(tmp_path, monkeypatch, method):
    config = fast_config(method=method)
    build([SMALL_CORPUS], "here", tmp_path / "a", config, encoder=TEST_ENCODER)
    monkeypatch.setattr(map_job, "BACKGROUND_MIN_PAPERS", 1)
    monkeypatch.setattr(map_job, "usable_cpus", lambda: 2)
    build([SMALL_CORPUS], "here", tmp_path / "b", config, encoder=TEST_ENCODER)
    a = artifacts.corpus_path(tmp_path / "a", "here")
    b = artifacts.corpus_path(tmp_path / "b", "here")
    stages = {s.name: s for s in artifacts.read_manifest(b).stages}
    assert "map" in stages and "map" not in {s.name for s in artifacts.read_manifest(a).stages}
    assert stages["map"].note == "background process"
    for table in (schema.PAPERS, schema.TOPICS, schema.TOPIC_TERMS):
        pd.testing.assert_frame_equal(artifacts.read_table(a, table), artifacts.read_table(b, table))
    for array in (schema.EMBEDDINGS, schema.TOPIC_DISTRIBUTION):
        np.testing.assert_array_equal(np.load(a / array), np.load(b / array))
