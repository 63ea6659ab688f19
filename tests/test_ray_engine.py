"""The Ray embedding engine: same batches and vectors as the local engine, the same cache, shards.

Ray runs locally with 2 CPUs (``ray.init(num_cpus=2)``); nothing needs a GPU or a network. Most
tests use the deterministic hashing encoder; one compares the real int8 model on both engines.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import EmbedParams
from pipeline.embed import EmbeddingStore, OnnxEncoder, embed_texts, model_key, text_hash
from pipeline.engines import ray_engine
from pipeline.engines.ray_engine import RayEngine, RayParams, plan_batches
from pipeline.errors import PipelineError
from tests.conftest import SMALL_CORPUS, fast_config

HASHING = EmbedParams(backend="hashing")


def _texts() -> list[str]:
    rows = [json.loads(line) for line in SMALL_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [f"{r.get('title') or ''}. {r.get('abstract') or ''}" for r in rows]


# --------------------------------------------------------------------------------------------
# Without Ray
# --------------------------------------------------------------------------------------------


def test_planned_batches_are_the_local_encoders_batches():
    """int8 quantises activations per batch: the Ray engine must cut the same batches as the local one."""
    seen: list[list[str]] = []

    class Recording(OnnxEncoder):
        def __init__(self):  # no model: only the batching is under test
            self.batch_size, self.dim = 5, 3

        def _encode_batch(self, texts):
            seen.append(list(texts))
            return np.ones((len(texts), self.dim), dtype=np.float32)

    texts = [("x" * (i * 7 % 23)) + str(i) for i in range(37)] + ["", "same length", "same length"]
    Recording().encode(texts)
    planned = [[texts[i] or " " for i in batch] for batch in plan_batches(texts, 5)]
    assert seen == planned
    # One planned batch given to the encoder on its own is encoded as exactly that batch.
    seen.clear()
    Recording().encode([texts[i] for i in plan_batches(texts, 5)[3]])
    assert seen == [planned[3]]


def test_gpu_provider_is_asked_for_when_onnxruntime_has_cuda(monkeypatch):
    import onnxruntime as ort

    from pipeline import embed

    asked = []

    class Session:
        def __init__(self, path, options, providers):
            asked.append(providers)
            if providers[0] == "CUDAExecutionProvider" and fail_cuda:
                raise RuntimeError("no CUDA device")
            self.providers = providers

        def get_providers(self):
            return self.providers

    monkeypatch.setattr(ort, "InferenceSession", Session)
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    fail_cuda = False
    session = embed._inference_session(ort, Path("m.onnx"), None)
    assert session.get_providers() == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    fail_cuda = True  # CUDA present but unusable: fall back to the CPU instead of failing
    assert embed._inference_session(ort, Path("m.onnx"), None).get_providers() == ["CPUExecutionProvider"]
    fail_cuda = False
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # Ray's setting for an actor that asked for no GPU
    asked.clear()
    assert embed._inference_session(ort, Path("m.onnx"), None).get_providers() == ["CPUExecutionProvider"]
    assert asked == [["CPUExecutionProvider"]]
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert embed._inference_session(ort, Path("m.onnx"), None).get_providers() == ["CPUExecutionProvider"]


def test_nothing_missing_starts_no_ray(tmp_path, monkeypatch):
    texts = _texts()[:20]
    first = embed_texts(texts, HASHING, tmp_path)

    def no_ray(params):
        raise AssertionError("Ray started although every vector was cached")

    monkeypatch.setattr(ray_engine, "ray_session", no_ray)
    result = RayEngine()(texts, HASHING, tmp_path)
    assert result.computed == 0 and result.cached == 20
    np.testing.assert_array_equal(result.vectors, first.vectors)


def test_shards_hold_whole_planned_batches(tmp_path):
    import pyarrow.parquet as pq

    texts = _texts()[:50]
    hashes = [text_hash(t) for t in texts]
    batches = plan_batches(texts, 4)
    paths = ray_engine.write_shards(tmp_path, texts, hashes, batches, shard_texts=10)
    assert len(paths) == 7  # 13 batches of <= 4 texts, 2 whole batches (8 texts) a shard
    rows = [row for p in paths for row in pq.read_table(p).to_pylist()]
    assert [r["texts"] for r in rows] == [[texts[i] for i in b] for b in batches]
    assert [r["hashes"] for r in rows] == [[hashes[i] for i in b] for b in batches]


def test_ray_flags_without_the_ray_engine_are_an_error(capsys):
    from pipeline.cli import main

    assert main(["build", str(SMALL_CORPUS), "--ray-workers", "2"]) == 1
    assert "--ray-workers only apply with --engine ray" in capsys.readouterr().err


def test_bad_ray_settings_are_named():
    with pytest.raises(PipelineError, match="cpus_per_worker must be at least 1"):
        RayParams(cpus_per_worker=0)


# --------------------------------------------------------------------------------------------
# With a local Ray
# --------------------------------------------------------------------------------------------


def test_cli_build_starts_and_stops_its_own_local_ray(tmp_path, capsys):
    """`--engine ray` without an address starts a local Ray, embeds, writes the cache, shuts Ray down."""
    import ray

    from pipeline.cli import main

    assert not ray.is_initialized()
    config = tmp_path / "settings.toml"
    config.write_text('[embed]\nbackend = "hashing"\n[stability]\nruns = 0\n')
    root = tmp_path / "art"
    argv = ["--artifacts", str(root), "build", str(SMALL_CORPUS), "--name", "s", "--config", str(config)]
    assert main([*argv, "--engine", "ray", "--ray-workers", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    papers = int(re.search(r"([\d,]+) kept", out).group(1))
    assert f"embeddings: {papers} computed, 0 from cache" in out and papers > 100
    assert not ray.is_initialized()
    assert not (root / ".cache" / "ray-staging").exists()  # the shards are cleaned up
    # A later local build finds every vector in the cache.
    assert main([*argv, "--force", "--quiet"]) == 0
    assert f"embeddings: 0 computed, {papers} from cache" in capsys.readouterr().out


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_gives_the_local_vectors_and_fills_the_same_cache(local_ray, tmp_path):
    texts = _texts()
    texts = texts + texts[:7] + [""]  # repeated and empty texts, as real inputs have
    local = embed_texts(texts, HASHING, tmp_path / "local")
    cache = tmp_path / "ray"
    embed_texts(texts[:30], HASHING, cache)  # some are cached already
    engine = RayEngine(RayParams(shard_texts=32, store_chunk=40))
    seen = []
    result = engine(texts, HASHING, cache, progress=lambda done, total: seen.append((done, total)))
    np.testing.assert_array_equal(result.vectors, local.vectors)
    distinct_missing = len(set(texts) - set(texts[:30]))
    n_batches = -(-distinct_missing // HASHING.batch_size)
    assert engine.last_run["workers"] == 2 and engine.last_run["shards"] == -(-n_batches // 2)
    assert result.cached == 30 + sum(t in set(texts[:30]) for t in texts[30:])
    assert result.computed == len(texts) - result.cached
    assert seen[-1] == (distinct_missing, distinct_missing)
    store = EmbeddingStore(cache / "embeddings", model_key(HASHING))
    found, vectors = store.lookup([text_hash(t) for t in texts])
    assert found.all()
    np.testing.assert_array_equal(vectors, local.vectors)
    again = embed_texts(texts, HASHING, cache)  # the local engine finds everything
    assert again.computed == 0


def test_build_with_the_ray_engine_then_a_local_build_embeds_nothing(local_ray, tmp_path):
    from pipeline.build import build

    root = tmp_path / "art"
    first = build([SMALL_CORPUS], "small", root, fast_config(), engine=RayEngine(RayParams(shard_texts=40)))
    assert first.embedded == first.papers and first.embeddings_cached == 0
    assert first.stages[1].name == "embed"
    second = build([SMALL_CORPUS], "small", root, fast_config(), force=True)
    assert second.embedded == 0 and second.embeddings_cached == first.papers
    folder = root / "small"
    shutil.rmtree(root / ".cache" / "embeddings")
    third = build([SMALL_CORPUS], "small2", root, fast_config())  # recomputed locally: same vectors
    a = np.load(folder / "embeddings.npy")
    b = np.load(root / "small2" / "embeddings.npy")
    np.testing.assert_array_equal(a, b)
    assert third.embedded == first.papers


@pytest.mark.real_model
def test_real_int8_model_gives_the_same_vectors_on_ray_and_locally(local_ray, tmp_path):
    """Same export, same batches: the int8 vectors agree to float rounding (measured: identical)."""
    params = EmbedParams()
    texts = _texts()[:96]
    local = embed_texts(texts, params, tmp_path / "local")
    shutil.copytree(tmp_path / "local" / "models", tmp_path / "ray" / "models")  # the same cached export
    result = RayEngine(RayParams(shard_texts=48))(texts, params, tmp_path / "ray")
    assert result.computed == len(texts)
    assert np.abs(result.vectors - local.vectors).max() <= 1e-6
    cosine = np.sum(result.vectors * local.vectors, axis=1)
    assert cosine.min() >= 0.99999
