"""One identity for every cache.

The build fingerprint follows the model's content (a changed model rebuilds, a moved one does
not); in the app one key (``explorer.state.data.build_key``) identifies a build in every derived cache,
so a corpus folder replaced by hand never serves the previous build's index, figures or export.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from pathlib import Path

import pytest

from explorer.services import downloads
from explorer.state import data
from explorer.ui import caches, mapcomponent, panels
from pipeline.build.build import build
from pipeline.core import artifacts, schema
from pipeline.core.config import BuildConfig, EmbedParams
from pipeline.embed.embed_model import default_model_path, model_fingerprint
from pipeline.formats.blobs import unpack
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config

LINES = SMALL_CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)


def _corpus_file(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------
# The model's content, not its path
# ------------------------------------------------------------------------------------------


def _flip_weight_bytes(model: Path) -> None:
    """Change a few low-order bytes of the last layer's weights (inside the last MiB)."""
    weights = model / "model.safetensors"
    size = weights.stat().st_size
    with weights.open("r+b") as handle:
        handle.seek(size - 700_000)  # encoder.layer.5.output.dense.weight (the pooler follows it)
        chunk = bytearray(handle.read(64))
        for i in range(0, 64, 4):
            chunk[i] ^= 0x01  # the lowest mantissa byte of a float32: a tiny change
        handle.seek(size - 700_000)
        handle.write(chunk)


def test_model_fingerprint_follows_content_not_path(tmp_path):
    model = tmp_path / "a" / "minilm"
    shutil.copytree(default_model_path(), model)
    original = model_fingerprint(model)
    moved = tmp_path / "b" / "minilm"
    shutil.copytree(model, moved)
    assert model_fingerprint(moved) == original
    _flip_weight_bytes(moved)
    assert model_fingerprint(moved) != original
    (model / "config.json").write_text((model / "config.json").read_text() + " ")
    assert model_fingerprint(model) != original


@pytest.mark.real_model
def test_a_changed_model_triggers_a_rebuild_and_a_moved_one_does_not(tmp_path):
    src = _corpus_file(tmp_path / "p.jsonl", LINES[:7])  # under UMAP's minimum: PCA, no JIT
    model = tmp_path / "models" / "minilm"
    shutil.copytree(default_model_path(), model)
    config = BuildConfig(embed=EmbedParams(model=str(model), backend="torch"))
    root = tmp_path / "art"
    first = build([src], "m", root, config)
    assert first.mode == "full" and first.embedded == 7
    assert build([src], "m", root, config).mode == "up-to-date"
    # the same model in another folder: nothing to do
    moved = tmp_path / "elsewhere" / "minilm"
    shutil.copytree(model, moved)
    moved_config = BuildConfig(embed=EmbedParams(model=str(moved), backend="torch"))
    assert build([src], "m", root, moved_config).mode == "up-to-date"
    # retrained weights in the same folder: new vectors, new topics
    before = artifacts.read_manifest(artifacts.corpus_path(root, "m")).embedding
    _flip_weight_bytes(model)
    again = build([src], "m", root, config)
    assert again.mode == "full" and again.embedded == 7 and again.embeddings_cached == 0
    after = artifacts.read_manifest(artifacts.corpus_path(root, "m")).embedding
    assert after.model_fingerprint != before.model_fingerprint and after.model_key != before.model_key


def test_the_app_refuses_queries_with_a_model_that_changed_since_the_build(small_artifacts, tmp_path):
    from pipeline.core.errors import PipelineError

    corpus = data.load_corpus(small_artifacts, "small")
    manifest = dataclasses.replace(
        corpus.manifest, embedding=dataclasses.replace(corpus.manifest.embedding, model_key="model-0000-onnx-v1")
    )
    changed = dataclasses.replace(corpus, manifest=manifest)
    with pytest.raises(PipelineError, match="that model now has other content"):
        caches.encoder_for(changed)


# ------------------------------------------------------------------------------------------
# One key for every derived cache in the app
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory) -> tuple[Path, Path]:
    """Two different builds of corpus "c": 60 and 45 papers of the fixture corpus."""
    tmp = tmp_path_factory.mktemp("two")
    a, b = tmp / "a", tmp / "b"
    build([_corpus_file(tmp / "a.jsonl", LINES[:60])], "c", a, fast_config(), encoder=TEST_ENCODER)
    build([_corpus_file(tmp / "b.jsonl", LINES[70:115])], "c", b, fast_config(), encoder=TEST_ENCODER)
    return artifacts.corpus_path(a, "c"), artifacts.corpus_path(b, "c")


def _replace_by_hand(root: Path, build_folder: Path) -> None:
    """What a user does: delete the corpus folder and copy another build in its place."""
    target = root / "c"
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    shutil.copytree(build_folder, target)  # a plain folder, named like the corpus


def _derived(corpus: data.Corpus) -> dict:
    """Everything the app derives from a build and caches, through the app's own cached functions."""
    index = caches.bm25_index(corpus)
    header, _ = unpack(mapcomponent.points(corpus).data)  # the map's cached points
    tree, distance, heat = panels._overview_figures(corpus.key, None, corpus)
    return {
        "bm25_docs": int(index.bm25.scores["num_docs"]),
        "map_points": int(header["n"]),
        "overview_topics": len(heat.data[0].z),
        "html_papers": int(re.search(r'"papers":(\d+)', downloads.offline_html(corpus)).group(1)),
    }


def test_a_hand_replaced_corpus_folder_never_serves_the_old_builds_derived_data(two_builds, tmp_path):
    build_a, build_b = two_builds
    root = tmp_path / "art"
    root.mkdir()
    _replace_by_hand(root, build_a)
    corpus_a = caches.get_corpus(root, "c")
    seen_a = _derived(corpus_a)
    assert corpus_a.n_papers == 60 and seen_a["bm25_docs"] == 60 and seen_a["map_points"] == 60
    _replace_by_hand(root, build_b)
    corpus_b = caches.get_corpus(root, "c")
    assert corpus_b.build_id == corpus_a.build_id == "c"  # the folder name alone cannot tell them apart
    assert corpus_b.key != corpus_a.key and corpus_b.text_key != corpus_a.text_key
    assert corpus_b.n_papers == 45
    seen_b = _derived(corpus_b)
    assert seen_b == {
        "bm25_docs": 45,
        "map_points": 45,
        "overview_topics": len(corpus_b.tables.topics),
        "html_papers": 45,
    }
    # and back again: the first build's entries are found again, not rebuilt wrongly
    _replace_by_hand(root, build_a)
    assert _derived(caches.get_corpus(root, "c")) == seen_a


def test_build_key_changes_when_a_copy_keeps_the_modification_time(two_builds, tmp_path):
    build_a, build_b = two_builds
    root = tmp_path / "art"
    root.mkdir()
    shutil.copytree(build_a, root / "c")
    key_a = data.build_key(root / "c")
    shutil.rmtree(root / "c")
    shutil.copytree(build_b, root / "c")
    stat_a = (build_a / schema.MANIFEST).stat()
    os.utime(root / "c" / schema.MANIFEST, ns=(stat_a.st_atime_ns, stat_a.st_mtime_ns))  # like `cp -a` of a twin
    assert data.build_key(root / "c") != key_a


def test_the_map_page_follows_a_hand_replaced_folder(two_builds, tmp_path, monkeypatch):
    from tests.test_pages import map_data, run

    build_a, build_b = two_builds
    root = tmp_path / "art"
    root.mkdir()
    _replace_by_hand(root, build_a)
    at = run(root, monkeypatch, corpus="c")
    assert not at.exception
    assert "60 papers" in " ".join(c.value for c in at.sidebar.caption)
    _replace_by_hand(root, build_b)
    at = run(root, monkeypatch, corpus="c")
    assert not at.exception
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "45 papers" in captions and "60 papers" not in captions
    state, blobs = map_data(at)
    header, arrays = blobs[state["points"]]
    assert header["n"] == 45 and len(arrays["x"]) == 45
