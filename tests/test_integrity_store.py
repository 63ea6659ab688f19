"""The embedding store and the stage cache under concurrent writers, and the store's cost of adding.

Writers are real processes started together; afterwards every vector of every writer must be
found, and every stage-cache entry must load.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.build.stage_cache import StageCache
from pipeline.core import artifacts
from pipeline.embed.embed import embed_texts
from pipeline.embed.embed_store import SMALL_SHARD, EmbeddingStore, text_hash
from pipeline.embed.encoders import HashingEncoder
from tests.conftest import ROOT, SMALL_CORPUS

PY = sys.executable


def _texts(prefix: str, n: int) -> list[str]:
    return [f"{prefix} paper {i} about topic {i % 17} and method {i % 5}" for i in range(n)]


def _start_together(script: str, args: list[list[str]], tmp_path: Path) -> list[subprocess.Popen]:
    """Start one process per argument list running ``script``; they begin work at the same moment."""
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([PY, "-c", script, str(go), *a], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for a in args
    ]
    time.sleep(1.0)  # imports done
    go.write_text("go")
    return procs


def _wait(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-3000:]


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pipeline.core.config import EmbedParams
    from pipeline.embed.encoders import HashingEncoder
    from pipeline.embed.embed import embed_texts

    go, cache, prefix, rounds, size = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    while not go.exists():
        time.sleep(0.01)
    encoder = HashingEncoder()
    for r in range(rounds):  # many small builds: every one adds a shard and may compact
        texts = [f"{prefix} paper {r * size + i} about topic {(r * size + i) % 17} and method {(r * size + i) % 5}"
                 for i in range(size)]
        embed_texts(texts, EmbedParams(), cache, encoder=encoder)
    """
)


def test_two_processes_embedding_different_corpora_into_one_store_lose_nothing(tmp_path):
    cache = tmp_path / ".cache"
    rounds, size = 60, 40
    procs = _start_together(
        WRITER, [[str(cache), prefix, str(rounds), str(size)] for prefix in ("neurips", "icml")], tmp_path
    )
    _wait(procs)
    store = EmbeddingStore(cache / "embeddings", HashingEncoder.key)
    encoder = HashingEncoder()
    for prefix in ("neurips", "icml"):
        texts = _texts(prefix, rounds * size)
        found, vectors = store.lookup([text_hash(t) for t in texts])
        assert found.all(), f"{prefix}: {int((~found).sum())} of {len(texts)} vectors lost"
        np.testing.assert_allclose(vectors, encoder.encode(texts), atol=1e-6)
    stats = store.stats()
    assert stats["shards"] <= 12, stats  # compaction kept the shard count small
    assert not list((cache / "embeddings" / HashingEncoder.key).glob("*.tmp"))


def test_a_reader_finds_every_vector_while_another_process_adds_and_compacts(tmp_path):
    shared = EmbeddingStore(tmp_path / ".cache" / "embeddings", HashingEncoder.key)
    first = _texts("first", 500)
    shared.add([text_hash(t) for t in first], HashingEncoder().encode(first))
    procs = _start_together(WRITER, [[str(tmp_path / ".cache"), "other", "80", "30"]], tmp_path)
    misses = 0
    while procs[0].poll() is None:
        found, _ = shared.lookup([text_hash(t) for t in first])
        misses += int((~found).sum())
    _wait(procs)
    assert misses == 0
    assert shared.lookup([text_hash(t) for t in first])[0].all()


def test_adding_writes_only_the_new_vectors(tmp_path):
    store = EmbeddingStore(tmp_path, "k")
    n, dim = 20_000, 384
    rng = np.random.default_rng(0)
    big = [bytes(rng.bytes(16)) for _ in range(n)]
    store.add(big, rng.normal(size=(n, dim)).astype(np.float32))
    (existing,) = (tmp_path / "k").glob("*.shard")
    before = existing.stat()
    new = [bytes(rng.bytes(16)) for _ in range(10)]
    store.add(new, rng.normal(size=(10, dim)).astype(np.float32))
    after = existing.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    shards = sorted((tmp_path / "k").glob("*.shard"))
    assert len(shards) == 2
    added = [p for p in shards if p != existing][0]
    assert added.stat().st_size < 10 * (dim * 4 + 16) + 512  # the new vectors and two small headers
    assert store.lookup(new + big[:5])[0].all()


def test_compaction_keeps_every_vector_and_the_first_one_of_a_text(tmp_path):
    store = EmbeddingStore(tmp_path, "k")
    keys = [text_hash(f"t{i}") for i in range(3000)]
    vectors = np.eye(3000, 8, dtype=np.float32)
    for start in range(0, 3000, 100):
        store.add(keys[start : start + 100], vectors[start : start + 100])
    assert store.stats()["shards"] < 8
    # a second vector of known texts, as two writers embedding the same text at once leave
    store.add(keys[:10], np.full((10, 8), 9, dtype=np.float32), compact=False)
    found, got = store.lookup(keys)
    assert found.all()
    np.testing.assert_array_equal(got, vectors)  # the first vector of each text wins
    assert store.compact(full=True) >= 2
    assert store.stats()["shards"] == 1
    np.testing.assert_array_equal(store.lookup(keys)[1], vectors)
    assert store.remove(keys[:5] + [text_hash("unknown")]) == 5
    assert store.lookup(keys[:6])[0].tolist() == [False] * 5 + [True]


def test_shard_sizes_grow_geometrically(tmp_path):
    store = EmbeddingStore(tmp_path, "k")
    for r in range(64):
        store.add([text_hash(f"{r}-{i}") for i in range(SMALL_SHARD // 4)], np.ones((SMALL_SHARD // 4, 4), np.float32))
    stats = store.stats()
    assert stats["vectors"] == 64 * (SMALL_SHARD // 4) and stats["shards"] <= 8, stats


def test_a_legacy_single_file_store_is_read_and_merged_transparently(tmp_path):
    """The keys.npy + vectors.npy layout of earlier versions (what users have on disk)."""
    folder = tmp_path / "model-key"
    folder.mkdir()
    texts = _texts("old", 50)
    keys = np.array([text_hash(t) for t in texts], dtype="S16")
    vectors = HashingEncoder().encode(texts)
    order = np.argsort(keys)
    np.save(folder / "keys.npy", keys[order], allow_pickle=False)
    np.save(folder / "vectors.npy", vectors[order], allow_pickle=False)
    (folder / "info.json").write_text(json.dumps({"key": "model-key", "count": 50}))
    store = EmbeddingStore(tmp_path, "model-key")
    found, got = store.lookup([text_hash(t) for t in texts])
    assert found.all()
    np.testing.assert_allclose(got, vectors)
    new = _texts("new", 5)
    store.add([text_hash(t) for t in new], HashingEncoder().encode(new))
    assert (folder / "keys.npy").exists()  # adding does not rewrite it
    assert store.compact(full=True) == 2
    assert not (folder / "keys.npy").exists() and not (folder / "info.json").exists()
    assert store.lookup([text_hash(t) for t in texts + new])[0].all()


def test_an_interrupted_add_leaves_no_partial_shard(tmp_path, monkeypatch):
    store = EmbeddingStore(tmp_path, "k")
    store.add([text_hash("a")], np.ones((1, 4), np.float32))

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr("pipeline.embed.embed_store.os.replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.add([text_hash("b")], np.ones((1, 4), np.float32))
    monkeypatch.undo()
    assert [p.suffix for p in (tmp_path / "k").iterdir() if not p.name.startswith(".")] == [".shard"]
    assert store.lookup([text_hash("a"), text_hash("b")])[0].tolist() == [True, False]


def test_embed_texts_keeps_what_it_computed_before_an_interrupt(tmp_path, monkeypatch):
    import pipeline.embed.embed

    monkeypatch.setattr(pipeline.embed.embed, "CHECKPOINT_TEXTS", 10)
    calls = []

    class Failing(HashingEncoder):
        def encode(self, texts, progress=None):
            calls.append(len(texts))
            if len(calls) == 3:
                raise KeyboardInterrupt
            return super().encode(texts, progress)

    texts = _texts("x", 35)
    params = pipeline.embed.embed.EmbedParams(batch_size=5)  # checkpoints: whole batches, here every 10 texts
    with pytest.raises(KeyboardInterrupt):
        embed_texts(texts, params, tmp_path, encoder=Failing())
    again = embed_texts(texts, params, tmp_path, encoder=HashingEncoder())
    assert again.cached == 20 and again.computed == 15
    assert calls == [10, 10, 10]
    steps = []
    monkeypatch.setattr(pipeline.embed.embed, "CHECKPOINT_TEXTS", 10)

    class Counting(HashingEncoder):
        def encode(self, texts, progress=None):
            steps.append(len(texts))
            return super().encode(texts, progress)

    embed_texts(_texts("y", 35), pipeline.embed.embed.EmbedParams(batch_size=4), tmp_path, encoder=Counting())
    assert steps == [8, 8, 8, 8, 3]  # 10 rounded down to whole batches of 4


# ------------------------------------------------------------------------------------------
# Stage cache
# ------------------------------------------------------------------------------------------

STAGE_WRITER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from pathlib import Path
    from pipeline.build.stage_cache import StageCache

    go, cache, me = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    while not go.exists():
        time.sleep(0.01)
    stages = StageCache(cache, keep=3)
    for i in range(150):
        name = f"reduce-{(i + me) % 6}"  # the same keys from every process, more than are kept
        folder = stages.get(name)
        if folder is not None:
            try:
                assert np.load(folder / "x.npy").tolist() == [(i + me) % 6] * 100
                continue
            except (OSError, ValueError):  # pruned while being read: a miss
                stages.discard(name)
        value = np.full(100, (i + me) % 6)
        stages.put(name, lambda f: np.save(f / "x.npy", value))
    """
)


def test_processes_sharing_the_stage_cache_never_fail_or_read_a_partial_entry(tmp_path):
    procs = _start_together(STAGE_WRITER, [[str(tmp_path / ".cache"), str(k)] for k in range(3)], tmp_path)
    _wait(procs)
    stages = StageCache(tmp_path / ".cache", keep=3)
    entries = [p for p in stages.root.iterdir() if not p.name.startswith(".")]
    assert 1 <= len(entries) <= 3 + 3  # pruned to `keep`, give or take entries published meanwhile
    for entry in entries:
        assert (entry / "done").is_file() and (entry / "x.npy").is_file()


BUILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from pipeline.build.build import build
    from pipeline.core.config import BuildConfig
    from pipeline.embed.encoders import HashingEncoder

    go, root, name, src = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    while not go.exists():
        time.sleep(0.01)
    build([src], name, root, BuildConfig(), encoder=HashingEncoder())
    """
)


def test_two_builds_sharing_one_cache_at_once_both_succeed(tmp_path):
    """Same papers under two names: the same store texts and the same stage-cache keys, at once."""
    src = tmp_path / "p.jsonl"
    src.write_text("".join(SMALL_CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)[:7]))  # no UMAP JIT
    root = tmp_path / "art"
    procs = _start_together(BUILD, [[str(root), name, str(src)] for name in ("one", "two")], tmp_path)
    _wait(procs)
    from explorer.state.data import load_corpus

    one, two = load_corpus(root, "one"), load_corpus(root, "two")
    assert one.n_papers == two.n_papers == 7
    np.testing.assert_array_equal(one.papers["topic"].to_numpy(), two.papers["topic"].to_numpy())
    stages = [p for p in (artifacts.cache_dir(root) / "stages").iterdir() if not p.name.startswith(".")]
    assert {p.name.split("-")[0] for p in stages} == {"reduce", "stability"}
    assert all((p / "done").is_file() for p in stages)
    store = EmbeddingStore(artifacts.cache_dir(root) / "embeddings", HashingEncoder.key)
    assert store.lookup([text_hash(t) for t in one.papers["model_text"]])[0].all()
