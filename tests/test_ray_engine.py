"""The Ray embedding engine: same batches and vectors as the local engine, the same cache, shards.

Ray runs locally with 2 CPUs (``ray.init(num_cpus=2)``); nothing needs a GPU or a network. Most
tests give both engines the deterministic hashing encoder (the Ray engine sends it to its workers);
one compares the real int8 model on both engines.
"""

from __future__ import annotations

import builtins
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from pipeline.core.config import EmbedParams
from pipeline.core.errors import PipelineError
from pipeline.embed import ray_engine
from pipeline.embed.embed import embed_texts
from pipeline.embed.embed_store import EmbeddingStore, text_hash
from pipeline.embed.encoders import HashingEncoder, OnnxEncoder
from pipeline.embed.ray_engine import RayEngine, RayParams, plan_batches
from tests.conftest import SMALL_CORPUS, fast_config

PARAMS = EmbedParams()
HASHING = HashingEncoder()  # injected into both engines instead of the real model


def _texts() -> list[str]:
    rows = [json.loads(line) for line in SMALL_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [f"{r.get('title') or ''}. {r.get('abstract') or ''}" for r in rows]


# --------------------------------------------------------------------------------------------
# Without Ray
# --------------------------------------------------------------------------------------------


def test_planned_batches_are_the_local_engines_batches(tmp_path):
    """int8 quantises activations per batch: the Ray engine must cut the batches the local engine cuts.

    Checked through ``embed_texts`` itself (the local engine), with more texts than one checkpoint of
    the store, so that any change to how the local engine orders or chunks its texts shows here.
    """
    seen: list[list[str]] = []

    class Recording(OnnxEncoder):
        key = "recording-test"

        def __init__(self):  # no model: only the batching is under test
            self.batch_size, self.dim = EmbedParams().batch_size, 3

        def _encode_batch(self, texts):
            seen.append(list(texts))
            return np.ones((len(texts), self.dim), dtype=np.float32)

    texts = [("x" * (i * 7 % 23)) + str(i) for i in range(2500)] + ["", "same length", "same length"]
    texts += texts[:40]  # repeats are embedded once, at their first appearance
    embed_texts(texts, EmbedParams(), tmp_path, encoder=Recording())
    distinct = list(dict.fromkeys(texts))
    planned = [[distinct[i] or " " for i in batch] for batch in plan_batches(distinct, EmbedParams().batch_size)]
    assert seen == planned
    # One planned batch given to the encoder on its own is encoded as exactly that batch.
    seen.clear()
    Recording().encode([distinct[i] for i in plan_batches(distinct, EmbedParams().batch_size)[3]])
    assert seen == [planned[3]]


def test_gpu_provider_is_asked_for_when_onnxruntime_has_cuda(monkeypatch):
    import onnxruntime as ort

    from pipeline.embed import encoders

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
    session = encoders._inference_session(ort, Path("m.onnx"), None)
    assert session.get_providers() == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    fail_cuda = True  # CUDA present but unusable: fall back to the CPU instead of failing
    assert encoders._inference_session(ort, Path("m.onnx"), None).get_providers() == ["CPUExecutionProvider"]
    fail_cuda = False
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # Ray's setting for an actor that asked for no GPU
    asked.clear()
    assert encoders._inference_session(ort, Path("m.onnx"), None).get_providers() == ["CPUExecutionProvider"]
    assert asked == [["CPUExecutionProvider"]]
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert encoders._inference_session(ort, Path("m.onnx"), None).get_providers() == ["CPUExecutionProvider"]


def test_nothing_missing_starts_no_ray(tmp_path, monkeypatch):
    texts = _texts()[:20]
    first = embed_texts(texts, PARAMS, tmp_path, encoder=HASHING)

    def no_ray(params):
        raise AssertionError("Ray started although every vector was cached")

    monkeypatch.setattr(ray_engine, "ray_session", no_ray)
    result = RayEngine()(texts, PARAMS, tmp_path, encoder=HASHING)
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


def test_nodes_that_cannot_see_the_shards_are_named(monkeypatch):
    """On a cluster without a shared staging folder the build stops before any work, naming the nodes."""
    import ray.util.scheduling_strategies as strategies

    class Probe:
        def options(self, scheduling_strategy):
            self.node = scheduling_strategy.node_id
            return self

        def remote(self, path):
            return ("10.0.0.2", False) if self.node == "b" else ("10.0.0.1", True)

    class FakeRay:
        def nodes(self):
            return [{"NodeID": "a", "Alive": True}, {"NodeID": "b", "Alive": True}, {"NodeID": "c", "Alive": False}]

        def remote(self, **options):
            return lambda fn: Probe()

        def get(self, refs):
            return refs

    monkeypatch.setattr(
        strategies, "NodeAffinitySchedulingStrategy", lambda node_id, soft: type("S", (), {"node_id": node_id})
    )
    with pytest.raises(PipelineError, match=r"nodes 10\.0\.0\.2 cannot read the staging folder .*--ray-staging"):
        ray_engine._check_nodes_see(FakeRay(), Path("/staging/run/shard-000000.parquet"))


def test_ray_flags_without_the_ray_engine_are_an_error(capsys):
    from pipeline.cli.cli import main

    assert main(["build", str(SMALL_CORPUS), "--ray-workers", "2"]) == 1
    assert "--ray-workers only apply with --engine ray" in capsys.readouterr().err


def test_bad_ray_settings_are_named():
    with pytest.raises(PipelineError, match="cpus_per_worker must be at least 1"):
        RayParams(cpus_per_worker=0)


# --------------------------------------------------------------------------------------------
# With a local Ray
# --------------------------------------------------------------------------------------------


def test_cli_flags_make_the_ray_engine():
    from pipeline.cli.cli import make_parser
    from pipeline.cli.cli_build import _engine

    args = make_parser().parse_args(["build", "x.csv"])
    assert _engine(args) is None  # the local engine: Ray is not even imported
    argv = ["build", "x.csv", "--engine", "ray", "--ray-address", "auto", "--ray-workers", "3"]
    engine = _engine(make_parser().parse_args([*argv, "--ray-cpus-per-worker", "2", "--ray-staging", "/shared/s"]))
    assert engine.params == RayParams(address="auto", workers=3, cpus_per_worker=2, staging="/shared/s")
    with pytest.raises(PipelineError, match="cpus_per_worker must be at least 1"):
        _engine(make_parser().parse_args([*argv, "--ray-cpus-per-worker", "0"]))


def test_build_starts_and_stops_its_own_local_ray(tmp_path):
    """The ray engine without an address starts a local Ray, embeds, writes the cache, shuts Ray down."""
    import ray

    from pipeline.build.build import build

    assert not ray.is_initialized()
    print_before = builtins.print
    root = tmp_path / "art"
    engine = RayEngine(RayParams(workers=2, shard_texts=64))
    first = build([SMALL_CORPUS], "s", root, fast_config(), engine=engine, encoder=HASHING)
    assert first.embedded == first.papers > 100 and engine.last_run["workers"] == 2
    assert not ray.is_initialized()
    # Ray's shutdown leaves its progress bars' print in builtins; numba cannot compile code that
    # prints through it (pynndescent's kNN graph after a Ray embedding failed): put back
    assert builtins.print is print_before
    assert not (root / ".cache" / "ray-staging").exists()  # the shards are cleaned up


@pytest.fixture(scope="module")
def local_ray():
    import ray

    print_before = builtins.print
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
    builtins.print = print_before  # as ray_session does: Ray leaves its own print behind


def test_ray_gives_the_local_vectors_and_fills_the_same_cache(local_ray, tmp_path):
    texts = _texts()
    texts = texts + texts[:7] + [""]  # repeated and empty texts, as real inputs have
    local = embed_texts(texts, PARAMS, tmp_path / "local", encoder=HASHING)
    cache = tmp_path / "ray"
    embed_texts(texts[:30], PARAMS, cache, encoder=HASHING)  # some are cached already
    engine = RayEngine(RayParams(shard_texts=32, store_chunk=40))
    seen = []
    result = engine(texts, PARAMS, cache, progress=lambda done, total: seen.append((done, total)), encoder=HASHING)
    np.testing.assert_array_equal(result.vectors, local.vectors)
    distinct_missing = len(set(texts) - set(texts[:30]))
    n_batches = -(-distinct_missing // PARAMS.batch_size)
    assert engine.last_run["workers"] == 2 and engine.last_run["shards"] == -(-n_batches // 2)
    assert result.cached == 30 + sum(t in set(texts[:30]) for t in texts[30:])
    assert result.computed == len(texts) - result.cached
    assert seen[-1] == (distinct_missing, distinct_missing)
    store = EmbeddingStore(cache / "embeddings", HASHING.key)
    found, vectors = store.lookup([text_hash(t) for t in texts])
    assert found.all()
    np.testing.assert_array_equal(vectors, local.vectors)
    again = embed_texts(texts, PARAMS, cache, encoder=HASHING)  # the local engine finds everything
    assert again.computed == 0


def test_build_with_the_ray_engine_then_a_local_build_embeds_nothing(local_ray, tmp_path):
    from pipeline.build.build import build

    root = tmp_path / "art"
    engine = RayEngine(RayParams(shard_texts=40))
    first = build([SMALL_CORPUS], "small", root, fast_config(), engine=engine, encoder=HASHING)
    assert first.embedded == first.papers and first.embeddings_cached == 0
    assert first.stages[1].name == "embed"
    second = build([SMALL_CORPUS], "small", root, fast_config(), force=True, encoder=HASHING)
    assert second.embedded == 0 and second.embeddings_cached == first.papers
    folder = root / "small"
    shutil.rmtree(root / ".cache" / "embeddings")
    third = build([SMALL_CORPUS], "small2", root, fast_config(), encoder=HASHING)  # recomputed locally
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


class PoisonedEncoder(HashingEncoder):
    """Fails on one text, as a worker running out of memory or meeting a bad input would."""

    def encode(self, texts, progress=None):
        if any("POISON" in t for t in texts):
            raise RuntimeError("poisoned batch")
        return super().encode(texts, progress)


def test_a_failing_worker_is_reported_and_what_came_back_is_kept(local_ray, tmp_path):
    texts = _texts()[:120]
    texts.append("POISON " + "x" * 5000)  # the longest text: in the last shard of the plan
    engine = RayEngine(RayParams(shard_texts=16, store_chunk=10_000))
    with pytest.raises(PipelineError, match=r"a Ray worker failed after ([\d,]+) of 121 texts") as failure:
        engine(texts, PARAMS, tmp_path, encoder=PoisonedEncoder())
    done = int(re.search(r"after ([\d,]+) of", str(failure.value)).group(1).replace(",", ""))
    store = EmbeddingStore(tmp_path / "embeddings", HASHING.key)
    found, _ = store.lookup([text_hash(t) for t in texts])
    assert found.sum() == done and not found[-1]  # flushed to the cache although below one chunk
    again = embed_texts(texts[:-1], PARAMS, tmp_path, encoder=HASHING)
    assert again.computed == 120 - done
