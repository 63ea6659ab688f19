"""The evaluation runner, per-topic stability in the build, and (real model) the default pipeline
against k-means on labelled IJCAI papers."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import artifacts, cli, schema
from pipeline.config import BuildConfig, ClusterParams, StabilityParams
from pipeline.evaluate import keyword_problem
from pipeline.labels import is_generic
from pipeline.quality import METHODS, evaluate
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config

FIXTURES = Path(__file__).parent / "fixtures"
IJCAI_LABELLED = FIXTURES / "ijcai_labelled.jsonl.gz"


def _blobs(n_per: int = 30, k: int = 3, seed: int = 0):
    """Three well separated groups of papers: their own words and their own corner of the sphere."""
    rng = np.random.default_rng(seed)
    vocab = [
        ["protein folding", "amino acids", "residue contacts"],
        ["galaxy clusters", "dark matter", "redshift"],
        ["chess engines", "opening books", "endgame tables"],
    ]
    docs, vectors, labels = [], [], []
    for c in range(k):
        centre = np.zeros(32, dtype=np.float32)
        centre[c] = 1.0
        for i in range(n_per):
            words = " ".join(vocab[c][j % 3] for j in range(i % 3, i % 3 + 4))
            docs.append(f"We study {words} with {vocab[c][0]} and {vocab[c][1]} in case {i}.")
            vectors.append(centre + rng.normal(scale=0.05, size=32).astype(np.float32))
            labels.append(f"area-{c}")
    x = np.stack(vectors)
    return docs, x / np.linalg.norm(x, axis=1, keepdims=True), np.array(labels)


def test_evaluate_scores_every_method_on_separable_groups():
    docs, x, labels = _blobs()
    config = dataclasses.replace(BuildConfig(), cluster=ClusterParams(n_topics=3))
    result = evaluate(docs, x, labels, config, corpus="blobs", seeds=(0, 1), methods=("pipeline", "kmeans", "lda"))
    ours, km = result.result("pipeline"), result.result("kmeans")
    assert result.k == 3 and result.n_labels == 3 and result.n_papers == 90
    assert ours.scores["nmi_all"] == pytest.approx(1.0) and ours.scores["ari_all"] == pytest.approx(1.0)
    assert ours.scores["stability"] == pytest.approx(1.0) and ours.scores["outlier_share"] == 0.0
    assert km.scores["ari_all"] == pytest.approx(1.0)
    assert ours.scores["diversity"] > 0.5 and ours.scores["npmi"] > 0.3 and ours.scores["bad_keywords"] == 0
    assert math.isnan(km.scores.get("diversity", math.nan))  # k-means has no words
    assert len(ours.per_seed) == 2 and {r["seed"] for r in ours.per_seed} == {0, 1}
    table = result.markdown()
    assert "| **our pipeline (defaults)** | 3 |" in table and "NMI" in table
    data = result.to_dict()
    assert [m["method"] for m in data["methods"]] == ["pipeline", "kmeans", "lda"]
    json.dumps(data)  # plain JSON: no numpy values, no NaN


def test_evaluate_without_labels_reports_only_label_free_measures():
    docs, x, _ = _blobs()
    config = dataclasses.replace(BuildConfig(), cluster=ClusterParams(n_topics=3))
    result = evaluate(docs, x, None, config, seeds=(0, 1), methods=("pipeline", "kmeans"))
    assert result.k == 3  # our topic target
    assert "nmi_all" not in result.result("pipeline").scores
    assert "NMI" not in result.markdown() and "stability" in result.markdown()


def test_evaluate_rejects_unknown_methods_and_mismatched_rows():
    docs, x, labels = _blobs()
    with pytest.raises(ValueError):
        evaluate(docs, x, labels, methods=("pipeline", "top2vec"))
    with pytest.raises(ValueError):
        evaluate(docs[:-1], x, labels)


def test_ctfidf_words_are_the_keywords_of_the_build(small_artifacts):
    from pipeline.represent import ctfidf_words
    from pipeline.vocab import doc_terms

    folder = artifacts.corpus_path(small_artifacts, "small")
    papers = artifacts.read_table(folder, schema.PAPERS).sort_values("row")
    topics = artifacts.read_table(folder, schema.TOPICS)
    manifest = artifacts.read_manifest(folder)
    dt = doc_terms(papers["model_text"].tolist(), min_df=manifest["params"]["represent"]["min_df"])
    words = ctfidf_words(papers["topic"].to_numpy(), dt, 10)
    same = [set(w for w, _ in words[t]) == set(k) for t, k in zip(topics["topic"], topics["keywords"], strict=True)]
    assert np.mean(same) >= 0.8  # BERTopic joins a topic's papers: a rare two-word term may span two


def test_cli_evaluate_writes_markdown_and_json_for_a_built_corpus(small_artifacts, tmp_path, capsys):
    out = tmp_path / "report" / "small.md"
    code = cli.main(
        [
            "--artifacts",
            str(small_artifacts),
            "evaluate",
            "small",
            "--methods",
            "pipeline",
            "kmeans",
            "--seeds",
            "0",
            "1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    text = out.read_text()
    assert "python -m pipeline --artifacts" in text and "evaluate small" in text
    assert "| **our pipeline (defaults)** |" in text and "k-means" in text
    data = json.loads(out.with_suffix(".json").read_text())
    assert data["n_labels"] == 6 and data["seeds"] == [0, 1]
    assert {m["method"] for m in data["methods"]} == {"pipeline", "kmeans"}
    assert "stability" in data["methods"][0]["scores"]
    assert "| k-means (k = 6) |" in capsys.readouterr().out


def test_cli_evaluate_refuses_unknown_methods(small_artifacts, capsys):
    assert cli.main(["--artifacts", str(small_artifacts), "evaluate", "small", "--methods", "top2vec"]) == 1
    assert "unknown method" in capsys.readouterr().err


def test_evaluate_is_registered_with_an_example():
    assert "evaluate" in cli.COMMANDS and set(METHODS) == {"pipeline", "bertopic", "bertopic_reduce", "kmeans", "lda"}


# --- per-topic stability in the build -------------------------------------------------------------


def test_build_measures_each_topics_stability(small_artifacts):
    folder = artifacts.corpus_path(small_artifacts, "small")
    topics = artifacts.read_table(folder, schema.TOPICS)
    manifest = artifacts.read_manifest(folder)
    assert topics["stability"].between(0, 1).all()
    info = manifest["stability"]
    assert info["computed"] == "in the build" and info["seeds"] == [43, 44] and info["runs"] == 2
    assert info["mean"] == pytest.approx(topics["stability"].mean(), abs=1e-3)
    assert "stability in the build" in next(s["note"] for s in manifest["stages"] if s["name"] == "trends")


def test_stability_is_skipped_above_the_size_limit_and_on_request(tmp_path):
    from pipeline.build import build

    config = dataclasses.replace(fast_config(), stability=StabilityParams(max_papers=50))
    build([SMALL_CORPUS], "big", tmp_path, config, encoder=TEST_ENCODER)
    folder = artifacts.corpus_path(tmp_path, "big")
    assert artifacts.read_table(folder, schema.TOPICS)["stability"].isna().all()
    assert artifacts.read_manifest(folder)["stability"]["computed"].startswith("off: more than 50 papers")
    off = dataclasses.replace(fast_config(), stability=StabilityParams(runs=0))
    build([SMALL_CORPUS], "none", tmp_path, off, encoder=TEST_ENCODER)
    assert artifacts.read_table(artifacts.corpus_path(tmp_path, "none"), schema.TOPICS)["stability"].isna().all()


def test_stability_from_a_background_process_equals_the_one_computed_in_the_build(
    small_artifacts, tmp_path, monkeypatch
):
    import pipeline.build as build_module

    _background_everywhere(monkeypatch)
    # A spawned process re-runs the parent's main script; AppTest tests earlier in this process
    # leave app.py there, so give this build a plain main module, like `python -m pipeline`'s.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    config = dataclasses.replace(fast_config(), stability=StabilityParams(background_min_cpus=2))
    build_module.build([SMALL_CORPUS], "small", tmp_path, config, encoder=TEST_ENCODER)
    folder = artifacts.corpus_path(tmp_path, "small")
    assert artifacts.read_manifest(folder)["stability"]["computed"] == "background process"
    here = artifacts.read_table(artifacts.corpus_path(small_artifacts, "small"), schema.TOPICS)
    there = artifacts.read_table(folder, schema.TOPICS)
    np.testing.assert_allclose(here["stability"].to_numpy(), there["stability"].to_numpy())


def test_a_background_process_that_dies_costs_time_not_the_stability(small_artifacts, tmp_path, monkeypatch):
    import pipeline.build as build_module

    _background_everywhere(monkeypatch)
    script = tmp_path / "main_that_dies.py"
    script.write_text("raise SystemExit(3)\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)  # every spawned worker exits at start
    config = dataclasses.replace(fast_config(), stability=StabilityParams(background_min_cpus=2))
    build_module.build([SMALL_CORPUS], "small", tmp_path, config, encoder=TEST_ENCODER)
    folder = artifacts.corpus_path(tmp_path, "small")
    assert artifacts.read_manifest(folder)["stability"]["computed"].startswith(
        "in the build (background process failed"
    )
    here = artifacts.read_table(artifacts.corpus_path(small_artifacts, "small"), schema.TOPICS)
    there = artifacts.read_table(folder, schema.TOPICS)
    np.testing.assert_allclose(here["stability"].to_numpy(), there["stability"].to_numpy())


def _background_everywhere(monkeypatch):
    import pipeline.build as build_module
    import pipeline.stability_job as job_module

    monkeypatch.setattr(build_module, "BACKGROUND_MIN_PAPERS", 1)
    monkeypatch.setattr(job_module.os, "sched_getaffinity", lambda _pid: set(range(8)), raising=False)


# --- the real model on labelled IJCAI papers ---------------------------------------------------------


@pytest.fixture(scope="module")
def ijcai_root(tmp_path_factory):
    from pipeline.build import build

    root = tmp_path_factory.mktemp("ijcai")
    summary = build([IJCAI_LABELLED], "ijcai", root, BuildConfig())
    assert summary.papers >= 1600
    return root


@pytest.mark.real_model
def test_default_pipeline_beats_kmeans_on_labelled_ijcai(ijcai_root):
    folder = artifacts.corpus_path(ijcai_root, "ijcai")
    papers = artifacts.read_table(folder, schema.PAPERS).sort_values("row")
    x = artifacts.read_array(folder, schema.EMBEDDINGS)
    result = evaluate(
        papers["model_text"].tolist(),
        x,
        papers["label"].to_numpy(),
        BuildConfig(),
        seeds=(0, 1, 2, 3, 4),
        methods=("pipeline", "kmeans"),
    )
    ours, km = result.result("pipeline").scores, result.result("kmeans").scores
    assert result.k == 16
    # Measured on this fixture: NMI 0.381 vs 0.370, ARI 0.240 vs 0.194 (means over five seeds). On
    # 1,600-paper samples the ARI lead is steady and the NMI lead small (see EVALUATION.md).
    assert ours["nmi_all"] > km["nmi_all"], (ours, km)
    assert ours["ari_all"] > km["ari_all"] + 0.02, (ours, km)
    assert ours["nmi_all"] >= 0.35 and ours["ari_all"] >= 0.2
    assert ours["outlier_share"] <= 0.05 and ours["bad_keywords"] == 0 and ours["diversity"] >= 0.8


@pytest.mark.real_model
def test_ijcai_keywords_are_clean_and_labels_are_what_a_person_would_write(ijcai_root):
    folder = artifacts.corpus_path(ijcai_root, "ijcai")
    topics = artifacts.read_table(folder, schema.TOPICS)
    for keywords in topics["keywords"]:
        assert [k for k in keywords if keyword_problem(k)] == []
    labels = topics["label"].tolist()
    assert len(set(labels)) == len(labels)
    for label in labels:
        assert 2 <= len(label.split()) <= 5, label
        assert not is_generic(label.replace(" and ", " ")), label
        assert not any(w in {"paper", "papers", "method", "methods", "propose", "proposed"} for w in label.split()), (
            label
        )
    assert topics["stability"].between(0, 1).all() and topics["stability"].mean() > 0.5
    assert (pd.Series(labels).str.contains(",")).sum() == 0
