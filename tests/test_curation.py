"""Topic curation: rename, merge, move, undo, and edits that survive a rebuild."""

from __future__ import annotations

import dataclasses
import shutil

import pandas as pd
import pytest

from pipeline.analysis.curation import Curation, CurationError, apply_edits, curation_path, resolve, topic_ref
from pipeline.build.build import build
from pipeline.core import artifacts, schema
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config


def _tables(root, name="small"):
    folder = artifacts.corpus_path(root, name)
    return pd.read_parquet(folder / schema.PAPERS), pd.read_parquet(folder / schema.TOPICS)


def test_rename_merge_move_and_undo(small_artifacts, tmp_path):
    papers, topics = _tables(small_artifacts)
    assert len(topics) >= 3, "the fixture needs at least three topics"
    t0, t1, t2 = topics["topic"].tolist()[:3]
    cur = Curation()
    cur.rename(topics, papers, t0, "  Multi-agent   planning ")
    doc = papers.loc[papers["topic"] == t1, "doc_id"].iloc[0]
    cur.move(topics, papers, doc, t2)
    cur.merge(topics, papers, [t1, t2])
    path = curation_path(tmp_path, "small")
    cur.save(path)
    loaded = Curation.load(path)
    assert [e["op"] for e in loaded.edits] == ["rename", "move", "merge"]

    out = apply_edits(papers, topics, loaded.edits)
    assert not out.skipped
    assert out.topics.loc[out.topics["topic"] == t0, "label"].item() == "Multi-agent planning"
    assert len(out.topics) == len(topics) - 1
    assert out.papers.loc[out.papers["doc_id"] == doc, "moved"].item()
    merged = set(out.papers["topic"]) - set(papers["topic"]) | ({t1, t2} & set(out.papers["topic"]))
    assert len(merged) == 1
    assert out.topics["size"].sum() == len(papers)
    kept = out.topics[out.topics["topic"].isin([t1, t2])]
    assert kept["coherence"].isna().all() and kept["stability"].isna().all()  # unknown, not stale
    assert out.topics["size"].tolist() == out.papers["topic"].value_counts().reindex(out.topics["topic"]).tolist()
    # the merged topic's keywords: the best-weighted terms of both, one form of each, as a build keeps them
    from pipeline.model.label_words import term_key

    words = list(kept["keywords"].item())
    assert len({term_key(w) for w in words}) == len(words) and 0 < len(words) <= 10
    weights = kept["keyword_weights"].item()
    assert list(weights) == sorted(weights, reverse=True)
    # each keyword keeps the term behind it (the one whose weight it shows), from its best-weighted topic
    best: dict[str, tuple[str, float]] = {}
    for _, row in topics[topics["topic"].isin([t1, t2])].iterrows():
        for k, t, w in zip(row["keywords"], row["keyword_terms"], row["keyword_weights"], strict=True):
            if w > best.get(k, ("", -1.0))[1]:
                best[k] = (str(t), float(w))
    assert [best[k][0] for k in words] == list(kept["keyword_terms"].item())
    assert [best[k][1] for k in words] == list(weights)

    assert loaded.undo()["op"] == "merge"
    out2 = apply_edits(papers, topics, loaded.edits)
    assert len(out2.topics) == len(topics)
    # The originals are untouched: edits apply to copies.
    assert "moved" not in papers.columns and "curated" not in topics.columns


def test_bad_edits_are_refused_with_a_reason(small_artifacts, tmp_path):
    papers, topics = _tables(small_artifacts)
    cur = Curation()
    with pytest.raises(CurationError, match="no topic 999"):
        cur.rename(topics, papers, 999, "x")
    with pytest.raises(CurationError, match="empty"):
        cur.rename(topics, papers, int(topics["topic"].iloc[0]), "   ")
    with pytest.raises(CurationError, match="at least two"):
        cur.merge(topics, papers, [int(topics["topic"].iloc[0])] * 2)
    with pytest.raises(CurationError, match="no paper"):
        cur.move(topics, papers, "nope", int(topics["topic"].iloc[0]))
    bad = tmp_path / "x.curation.json"
    bad.write_text("{oops")
    with pytest.raises(CurationError, match="damaged"):
        Curation.load(bad)
    assert Curation.load(tmp_path / "missing.json").edits == []


def test_references_follow_topics_when_ids_change(small_artifacts):
    papers, topics = _tables(small_artifacts)
    ref = topic_ref(topics, papers, int(topics["topic"].iloc[1]))
    shift = {t: (t + 7) for t in topics["topic"]}  # a rebuild that renumbered every topic
    papers2 = papers.assign(topic=papers["topic"].map(shift))
    topics2 = topics.assign(topic=topics["topic"].map(shift))
    assert resolve(ref, topics2, papers2) == ref["id"] + 7


def test_edits_survive_a_real_rebuild(small_artifacts, tmp_path):
    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    papers, topics = _tables(root)
    target = int(topics["topic"].iloc[0])
    cur = Curation()
    cur.rename(topics, papers, target, "renamed by a reviewer")
    cur.save(curation_path(root, "small"))
    members = set(papers.loc[papers["topic"] == target, "doc_id"])

    config = fast_config()
    config = dataclasses.replace(config, umap=dataclasses.replace(config.umap, seed=7))
    assert build([SMALL_CORPUS], "small", root, config, encoder=TEST_ENCODER).mode == "full"
    papers2, topics2 = _tables(root)
    out = apply_edits(papers2, topics2, Curation.load(curation_path(root, "small")).edits)
    renamed = out.topics.loc[out.topics["label"] == "renamed by a reviewer", "topic"]
    assert len(renamed) == 1
    new_members = set(papers2.loc[papers2["topic"] == renamed.item(), "doc_id"])
    # The label went to the rebuilt topic that shares the most papers with the renamed one.
    best = max(set(papers2["topic"]), key=lambda t: len(members & set(papers2.loc[papers2["topic"] == t, "doc_id"])))
    assert renamed.item() == best and len(members & new_members) / len(members | new_members) >= 0.4


def test_an_edit_whose_topic_is_gone_is_reported_not_applied(small_artifacts):
    papers, topics = _tables(small_artifacts)
    edit = {"op": "rename", "label": "ghost", "topic": {"id": 999, "keywords": ["zzz"], "members": ["nobody"]}}
    out = apply_edits(papers, topics, [edit])
    assert out.skipped == [edit] and "ghost" not in out.topics["label"].tolist()
