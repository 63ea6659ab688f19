"""The typed manifest: a written manifest reads and writes back to the same JSON; an old one with
missing sections reads with the defaults its readers have always assumed."""

from __future__ import annotations

import json

import pytest

from pipeline.core import artifacts, schema
from pipeline.core.errors import PipelineError
from pipeline.core.manifest import Counts, EmbeddingInfo, Manifest, Stage
from pipeline.core.settings import config_from_manifest


def test_a_written_manifest_round_trips_to_the_same_json(small_artifacts):
    folder = artifacts.corpus_path(small_artifacts, "small")
    text = (folder / schema.MANIFEST).read_text(encoding="utf-8")
    raw = json.loads(text)
    manifest = artifacts.read_manifest(folder)
    assert isinstance(manifest, Manifest)
    # the same keys in the same order, the same values: the file as the build wrote it
    assert json.dumps(manifest.to_dict(), indent=2) == json.dumps(raw, indent=2) == text
    assert manifest.name == "small" and manifest.build_id == folder.name and manifest.mode == "full"
    assert isinstance(manifest.counts, Counts) and manifest.counts.papers == raw["counts"]["papers"]
    assert manifest.counts.years == raw["counts"]["years"]
    assert (
        isinstance(manifest.embedding, EmbeddingInfo) and manifest.embedding.model_key == raw["embedding"]["model_key"]
    )
    assert all(isinstance(s, Stage) for s in manifest.stages)
    assert [s.name for s in manifest.stages] == [s["name"] for s in raw["stages"]]
    assert manifest.params == raw["params"] and manifest.knn == raw["knn"]
    assert Manifest.from_dict(manifest.to_dict()) == manifest


def test_an_old_manifest_missing_sections_reads_with_the_readers_defaults(tmp_path):
    old = {"schema_version": schema.SCHEMA_VERSION, "name": "old", "counts": {"papers": 12, "topics": 3}}
    manifest = Manifest.from_dict(old)
    assert manifest.counts.papers == 12 and manifest.counts.topics == 3
    assert manifest.counts.skipped == 0 and manifest.counts.placed == 0 and manifest.counts.years is None
    assert manifest.counts.fitted_papers is None  # incremental placement falls back to all old papers
    assert manifest.embedding.model_key is None and manifest.embedding.computed == 0
    assert manifest.stages == [] and manifest.inputs == [] and manifest.cluster_params == {}
    assert manifest.created_at is None and manifest.stability is None and manifest.knn is None
    assert manifest.peak_rss_mb is None and manifest.synthetic is False
    assert manifest.to_dict() == old and list(manifest.to_dict()) == list(old)  # nothing added on the way back
    with pytest.raises(PipelineError, match="no settings"):
        config_from_manifest(manifest, "old")


def test_unknown_keys_and_damaged_sections_are_kept_or_read_as_empty():
    raw = {"name": "x", "synthetic": True, "later_key": {"a": 1}, "counts": {"papers": 2, "new_count": 5}}
    manifest = Manifest.from_dict(raw)
    assert manifest.synthetic is True and manifest.counts.papers == 2
    assert manifest.to_dict() == raw and list(manifest.to_dict()) == list(raw)
    assert Manifest.from_dict({"embedding": None}).embedding == EmbeddingInfo()
    assert Manifest.from_dict({"stages": [{"name": "embed", "seconds": 1.5}]}).stages[0].note == ""
