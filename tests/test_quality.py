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

from pipeline.cli import cli
from pipeline.core import artifacts, schema
from pipeline.core.config import BuildConfig, ClusterParams, StabilityParams
from pipeline.evaluation.evaluate import keyword_problem
from pipeline.evaluation.quality import evaluate
from pipeline.evaluation.quality_report import METHODS
from pipeline.model.label_candidates import is_generic
from pipeline.model.label_evidence import is_weak
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


def test_evaluate_reports_how_far_the_labels_agree_with_the_authors_keywords():
    from pipeline.embed.encoders import HashingEncoder
    from pipeline.evaluation.evaluate import keyword_agreement

    # two topics; a paper without keywords (None, "") counts for neither side
    topics = np.array([0, 0, 0, 0, 0, 1, 1, -1])
    keywords = ["Protein Folds; Biology", "protein folding", "proteins; folds", None, "Chemistry", "Chess", "", "x"]
    labels = {0: "protein folds and amino acids", 1: "chess engines"}
    # topic 0: 2 of its 4 papers with keywords hold a part ("proteins; folds" too, plurals folded;
    # not "protein folding", whose words are "protein" and "folding"); topic 1: 0 of 1 ("chess
    # engines" needs both words)
    assert keyword_agreement(labels, topics, keywords) == pytest.approx(2 / 5)
    assert math.isnan(keyword_agreement(labels, topics, [None] * 8))

    docs, x, truth = _blobs()
    config = dataclasses.replace(BuildConfig(), cluster=ClusterParams(n_topics=3))
    # the authors' keywords are their area's terms: the labels name them; shifted to another
    # area's terms, they name none
    area_words = [
        f"{a}; {b}; {c}"
        for a, b, c in (
            ("protein folding", "amino acids", "residue contacts"),
            ("galaxy clusters", "dark matter", "redshift"),
            ("chess engines", "opening books", "endgame tables"),
        )
    ]
    embed = HashingEncoder(dim=x.shape[1]).encode  # the labels' retrieval needs vectors of the corpus's size
    agreement = {}
    for shift in (0, 1):
        result = evaluate(
            docs,
            x,
            truth,
            config,
            seeds=(0,),
            methods=("pipeline",),
            embed=embed,
            keywords=[area_words[(int(a[-1]) + shift) % 3] if i % 2 else None for i, a in enumerate(truth)],
        )
        agreement[shift] = result.result("pipeline").scores["label_keywords"]
        assert "labels in the authors' keywords" in result.markdown()
    assert agreement == {0: 1.0, 1: 0.0}
    without = evaluate(docs, x, truth, config, seeds=(0,), methods=("pipeline",), embed=embed)
    assert "label_keywords" not in without.result("pipeline").scores
    assert "authors' keywords" not in without.markdown()


def test_evaluate_rejects_unknown_methods_and_mismatched_rows():
    docs, x, labels = _blobs()
    with pytest.raises(ValueError):
        evaluate(docs, x, labels, methods=("pipeline", "top2vec"))
    with pytest.raises(ValueError):
        evaluate(docs[:-1], x, labels)


def test_ctfidf_words_are_the_keywords_of_the_build(small_artifacts):
    from pipeline.model.keywords import FILL_DEPTH, keyword_list, phrase_of, term_uses
    from pipeline.model.represent import ctfidf_words, topic_texts
    from pipeline.model.vocab import doc_terms

    folder = artifacts.corpus_path(small_artifacts, "small")
    papers = artifacts.read_table(folder, schema.PAPERS).sort_values("row")
    topics = artifacts.read_table(folder, schema.TOPICS)
    manifest = artifacts.read_manifest(folder)
    dt = doc_terms(papers["model_text"].tolist(), min_df=manifest.params["represent"]["min_df"])
    words = ctfidf_words(papers["topic"].to_numpy(), dt, 10 * FILL_DEPTH)
    # The build's c-TF-IDF sums the papers' own term counts (represent.py), as ctfidf_words does:
    # the same words in the same order, with the same weights, for every topic, one form of each
    # term, none a part of another and no two written as one phrase (as the evaluation's keywords
    # are made), each keyword its term as that phrase.
    labels = papers["topic"].to_numpy()
    texts = topic_texts(papers["model_text"].tolist(), labels, sorted(words))
    folded = 0
    for topic, keywords, terms, weights in zip(
        topics["topic"], topics["keywords"], topics["keyword_terms"], topics["keyword_weights"], strict=True
    ):
        written = phrase_of(texts[topic])
        kept = keyword_list(words[topic], term_uses(labels, dt, topic), 10, written)
        assert [w for w, _ in kept] == list(terms), topic
        assert [written(w) for w, _ in kept] == list(keywords), topic
        np.testing.assert_allclose([s for _, s in kept], weights, rtol=1e-5, err_msg=str(topic))
        folded += [w for w, _ in words[topic][:10]] != list(terms)
    assert folded  # some topic's ranking holds two forms of a term, or a part of another


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
    info = manifest.stability
    assert info["computed"] == "in the build" and info["seeds"] == [43, 44] and info["runs"] == 2
    assert info["mean"] == pytest.approx(topics["stability"].mean(), abs=1e-3)
    assert "stability in the build" in next(s.note for s in manifest.stages if s.name == "trends")


def test_stability_is_skipped_above_the_size_limit_and_on_request(tmp_path):
    from pipeline.build.build import build

    config = dataclasses.replace(fast_config(), stability=StabilityParams(max_papers=50))
    build([SMALL_CORPUS], "big", tmp_path, config, encoder=TEST_ENCODER)
    folder = artifacts.corpus_path(tmp_path, "big")
    assert artifacts.read_table(folder, schema.TOPICS)["stability"].isna().all()
    assert artifacts.read_manifest(folder).stability["computed"].startswith("off: more than 50 papers")
    off = dataclasses.replace(fast_config(), stability=StabilityParams(runs=0))
    build([SMALL_CORPUS], "none", tmp_path, off, encoder=TEST_ENCODER)
    assert artifacts.read_table(artifacts.corpus_path(tmp_path, "none"), schema.TOPICS)["stability"].isna().all()


def test_stability_from_a_background_process_equals_the_one_computed_in_the_build(
    small_artifacts, tmp_path, monkeypatch
):
    import pipeline.build.build as build_module

    _background_everywhere(monkeypatch)
    # A spawned process re-runs the parent's main script; AppTest tests earlier in this process
    # leave app.py there, so give this build a plain main module, like `python -m pipeline`'s.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    config = dataclasses.replace(fast_config(), stability=StabilityParams(background_min_cpus=2))
    build_module.build([SMALL_CORPUS], "small", tmp_path, config, encoder=TEST_ENCODER)
    folder = artifacts.corpus_path(tmp_path, "small")
    assert artifacts.read_manifest(folder).stability["computed"] == "background process"
    here = artifacts.read_table(artifacts.corpus_path(small_artifacts, "small"), schema.TOPICS)
    there = artifacts.read_table(folder, schema.TOPICS)
    np.testing.assert_allclose(here["stability"].to_numpy(), there["stability"].to_numpy())


def test_a_background_process_that_dies_costs_time_not_the_stability(small_artifacts, tmp_path, monkeypatch):
    import pipeline.build.build as build_module

    _background_everywhere(monkeypatch)
    script = tmp_path / "main_that_dies.py"
    script.write_text("raise SystemExit(3)\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)  # every spawned worker exits at start
    config = dataclasses.replace(fast_config(), stability=StabilityParams(background_min_cpus=2))
    build_module.build([SMALL_CORPUS], "small", tmp_path, config, encoder=TEST_ENCODER)
    folder = artifacts.corpus_path(tmp_path, "small")
    assert artifacts.read_manifest(folder).stability["computed"].startswith("in the build (background process failed")
    here = artifacts.read_table(artifacts.corpus_path(small_artifacts, "small"), schema.TOPICS)
    there = artifacts.read_table(folder, schema.TOPICS)
    np.testing.assert_allclose(here["stability"].to_numpy(), there["stability"].to_numpy())


def _background_everywhere(monkeypatch):
    import pipeline.build.build_fit as build_fit
    import pipeline.core.background as background

    monkeypatch.setattr(build_fit, "BACKGROUND_MIN_PAPERS", 1)
    monkeypatch.setattr(background.os, "sched_getaffinity", lambda _pid: set(range(8)), raising=False)


# --- the real model on labelled IJCAI papers ---------------------------------------------------------


@pytest.fixture(scope="module")
def ijcai_root(tmp_path_factory):
    from pipeline.build.build import build

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
    # On this 1,603-paper sample every method's NMI is within a few hundredths (refined graph
    # clustering 0.361 over these five seeds with this build's embeddings, 0.375 over ten seeds in
    # EVALUATION.md; k-means 0.369-0.371); the steady leads are ARI and stability. On all 3,281
    # labelled papers the lead holds for NMI too (0.406 vs 0.371, EVALUATION.md).
    assert ours["nmi_all"] > km["nmi_all"] - 0.02, (ours, km)
    assert ours["ari_all"] > km["ari_all"] + 0.02, (ours, km)
    assert ours["stability"] > km["stability"] + 0.1, (ours, km)
    # Topics that hold when the corpus changes: 40 runs that each see 80% of the papers gave 0.774
    # across 90% samples on these five seeds; every run seeing every paper (20 runs, as before
    # issue 20's change) gave 0.662. Measured again with this build's embeddings, same run: border
    # papers by their nearest centroid 0.733 (NMI 0.373, ARI 0.246), by the runs' vote (today)
    # 0.742 (0.375, 0.246); this fixture was not looked at while choosing the vote. Ward's merge of
    # the consensus (CLUSTER_VERSION 8), same five seeds, measured after choosing it: 0.784 on
    # samples, 0.828 across seeds, NMI 0.386, ARI 0.254 (average linkage: 0.742, 0.807, 0.375, 0.246).
    assert ours["resampled_stability"] > 0.72, ours
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
    for label, support in zip(labels, topics["label_support"], strict=True):
        # one part, "A and B", or "A, B and C" (three parts only where they are not weak)
        head, _, last = label.partition(" and ")
        parts = [*head.split(", "), last] if last else [head]
        assert all(p and "," not in p and " and " not in p for p in parts) and len(parts) <= 3, label
        assert 1 <= len(label.split()) <= (6 if len(parts) == 3 else 5), label
        assert len(parts) < 3 or not is_weak(support), (label, support)
        # a part of generic words only ("neural networks") is a phrase, in a label that is not weak
        generic = [p for p in parts if is_generic(p)]
        assert all(len(p.split()) > 1 for p in generic) and (not generic or not is_weak(support)), label
        assert not any(w in {"paper", "papers", "method", "methods", "propose", "proposed"} for w in label.split()), (
            label
        )
    assert topics["stability"].between(0, 1).all() and topics["stability"].mean() > 0.5


# --- the graph clustering: seeded, the same on every machine, stable under resampling ----------


def _groups(n_per: int = 200, k: int = 4, dim: int = 48, seed: int = 0, scale: float = 0.12):
    """``k`` groups of papers around their own directions (enough papers for the graph method)."""
    rng = np.random.default_rng(seed)
    centres = np.eye(dim, dtype=np.float32)[:k]
    x = np.concatenate([c + rng.normal(scale=scale, size=(n_per, dim)).astype(np.float32) for c in centres])
    return x / np.linalg.norm(x, axis=1, keepdims=True), np.repeat(np.arange(k), n_per)


def test_graph_clustering_finds_the_groups_and_repeats_itself_for_a_seed():
    from sklearn.metrics import adjusted_rand_score

    from pipeline.model.cluster import cluster
    from pipeline.model.reduce import shared_knn

    x, truth = _groups()
    knn = shared_knn(x, BuildConfig().umap)
    params = ClusterParams(n_topics=4, runs=5)
    first = cluster(None, x, params, knn=knn[0])
    assert first.params.method == "graph" and first.n_clusters == 4
    assert adjusted_rand_score(truth, first.labels) > 0.95
    again = cluster(None, x, params, knn=knn[0])
    np.testing.assert_array_equal(first.labels, again.labels)
    sizes = np.bincount(first.labels)
    assert (np.diff(sizes) <= 0).all()  # canonical ids: largest topic first


def test_runs_that_each_leave_a_fifth_out_still_find_the_groups_and_repeat_for_a_seed():
    from sklearn.metrics import adjusted_rand_score

    from pipeline.model import cluster as C
    from pipeline.model import cluster_consensus
    from pipeline.model.reduce import shared_knn

    x, truth = _groups(seed=3)
    knn = shared_knn(x, BuildConfig().umap)[0]
    params = ClusterParams(n_topics=4, runs=cluster_consensus.SHARE_MIN_RUNS)
    first = C.cluster(None, x, params, knn=knn)
    assert adjusted_rand_score(truth, first.labels) > 0.95
    np.testing.assert_array_equal(first.labels, C.cluster(None, x, params, knn=knn).labels)
    # A paper a run left out is no core member of that run's topics, and its neighbours do not
    # count the papers that were absent.
    labels = np.repeat(np.arange(4), 200)
    present = np.ones(len(x), dtype=bool)
    present[::5] = False
    core = cluster_consensus._core_present(labels, knn, present)
    assert (core[~present] == -1).all() and (core[present] == labels[present]).mean() > 0.95


def test_a_border_paper_joins_the_topic_the_runs_put_it_with_not_its_nearest_centroid():
    from pipeline.model import cluster as C
    from pipeline.model.cluster_consensus import vote_topics

    # Topics 0 (papers 0-2) and 1 (papers 3-5) by the merge; papers 6 and 7 are border papers.
    merged = np.array([0, 0, 0, 1, 1, 1, -1, -1])
    finals = [
        np.array([0, 0, 0, 1, 1, 1, 1, 0]),  # paper 6 with topic 1 in all three runs,
        np.array([2, 2, 2, 1, 1, 1, 1, 1]),  # paper 7 with topic 0 in two of them
        np.array([0, 0, 4, 1, 1, 3, 1, 0]),  # (a run's topic ids are its own; one splits a topic)
    ]
    voted = vote_topics(merged, finals)
    np.testing.assert_array_equal(voted, [0, 0, 0, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(vote_topics(merged, finals, chunk=3), voted)  # memory-bounded blocks
    # Paper 6's embedding is nearest topic 0's centroid: the nearest-centroid rule would put it there.
    x = np.array([[1, 0], [1, 0.1], [1, -0.1], [0, 1], [0.1, 1], [-0.1, 1], [1, 0.2], [0.2, 1]], dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    assert C.reassign_outliers(merged, x)[6] == 0 and voted[6] == 1
    # A tie goes to the smaller topic id; a paper no run put with any core paper keeps -1.
    tie = [np.array([0, 0, 1, 1, 1]), np.array([0, 0, 1, 1, 0])]  # once with each topic
    np.testing.assert_array_equal(vote_topics(np.array([0, 0, 1, 1, -1]), tie), [0, 0, 1, 1, 0])
    alone = [np.array([0, 0, 1, 1, 2]), np.array([0, 0, 1, 1, 3])]
    np.testing.assert_array_equal(vote_topics(np.array([0, 0, 1, 1, -1]), alone), [0, 0, 1, 1, -1])
    np.testing.assert_array_equal(vote_topics(np.array([-1, -1]), [np.array([0, 0])]), [-1, -1])  # no topic


def test_a_topic_whose_own_core_papers_the_runs_vote_elsewhere_keeps_them(monkeypatch):
    from pipeline.model import cluster_consensus
    from pipeline.model.cluster_consensus import placed_topics, vote_topics

    # Merged topics 0 (papers 0-3), 1 (papers 4-7) and 2 (papers 8-11, a small subject the runs'
    # own merges split between their topics 0 and 1); paper 12 is a border paper.
    merged = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, -1])
    finals = [
        np.array([0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1]),
        np.array([5, 5, 5, 5, 7, 7, 7, 7, 5, 5, 7, 7, 7]),
        np.array([0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1]),
    ]
    remnant = vote_topics(merged, finals)
    assert (remnant[8:12] == 2).sum() <= 1  # the vote alone keeps at most one of topic 2's papers
    placed = placed_topics(merged, finals)
    np.testing.assert_array_equal(placed, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 1])  # the border paper by vote
    # Where the vote upholds every topic it decides alone (a core paper may move), and the rule can
    # be switched off.
    held = [np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 0, 1])] * 3
    np.testing.assert_array_equal(placed_topics(merged, held), vote_topics(merged, held))
    assert placed_topics(merged, held)[11] == 0
    monkeypatch.setattr(cluster_consensus, "KEEP_UNHELD", False)
    np.testing.assert_array_equal(placed_topics(merged, finals), remnant)


def test_the_graph_clustering_flags_the_border_papers_it_placed_by_the_runs_vote(monkeypatch):
    from pipeline.model import cluster as C
    from pipeline.model import cluster_consensus
    from pipeline.model.reduce import shared_knn

    x, _ = _groups(seed=5, scale=0.3)  # groups that touch: some papers have neighbours in two
    knn = shared_knn(x, BuildConfig().umap)[0]
    params = ClusterParams(n_topics=4, runs=cluster_consensus.SHARE_MIN_RUNS)
    voted = C.cluster(None, x, params, knn=knn)
    monkeypatch.setattr(cluster_consensus, "VOTE", False)
    nearest = C.cluster(None, x, params, knn=knn)
    np.testing.assert_array_equal(voted.raw_outlier, nearest.raw_outlier)  # the same papers were left out
    assert voted.raw_outlier.any() and (voted.labels >= 0).all()
    no_placing = C.cluster(None, x, dataclasses.replace(params, reassign_outliers=False), knn=knn)
    assert ((no_placing.labels == -1) == no_placing.raw_outlier).all()


def test_shared_neighbour_weights_count_common_neighbours_and_skip_missing_ones():
    from pipeline.model.cluster_graph import snn_edges

    knn = np.array([[0, 1, 2], [1, 0, 2], [2, 1, -1], [3, 2, 1]])
    a, b, w = snn_edges(knn)
    edges = {(int(i), int(j)): float(v) for i, j, v in zip(a, b, w, strict=True)}
    assert edges == {(0, 1): 3.0, (0, 2): 2.0, (1, 2): 2.0, (1, 3): 2.0, (2, 3): 2.0}


def test_canonical_labels_number_topics_by_size_then_first_paper():
    from pipeline.model.cluster_refine import canonical_labels

    out = canonical_labels(np.array([7, 3, 3, -1, 7, 5, 5, 5]))
    np.testing.assert_array_equal(out, [1, 2, 2, -1, 1, 0, 0, 0])


def test_top_k_breaks_ties_by_index():
    from pipeline.core.ranking import top_k

    scores = np.array([[1.0, 3.0, 3.0, 3.0, 0.0, 3.0], [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]])
    np.testing.assert_array_equal(top_k(scores, 2), [[1, 2], [0, 1]])
    np.testing.assert_array_equal(top_k(scores[0], 4), [1, 2, 3, 5])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 250, 251, 1000, 20_001])
@pytest.mark.parametrize("limit", [1, 2, 3, 250])
def test_an_even_sample_takes_the_first_and_last_rows_and_limit_rows_in_order(n, limit):
    from pipeline.core.ranking import evenly_spread

    rows = evenly_spread(n, limit)
    assert rows.dtype == np.int64
    assert len(rows) == min(n, limit)  # no two picks fall on one row, however n and limit divide
    assert np.all(np.diff(rows) > 0)
    if n:
        assert rows[0] == 0 and (limit == 1 or rows[-1] == n - 1)
    if n > limit > 1:
        gaps = np.diff(rows)
        assert gaps.max() - gaps.min() <= 1  # evenly spread: no stretch of papers is skipped over


def test_resampled_runs_leave_papers_out_and_stability_compares_only_shared_papers():
    from pipeline.evaluation.evaluate import ABSENT, stability, topic_stability
    from pipeline.evaluation.quality import resampled_clustering
    from pipeline.model.reduce import shared_knn

    x, truth = _groups(n_per=150)
    config = dataclasses.replace(BuildConfig(), cluster=ClusterParams(n_topics=4, runs=3))
    knn = shared_knn(x, config.umap)
    runs = [resampled_clustering(x, knn, config, seed) for seed in (1, 2)]
    for run in runs:
        assert (run == ABSENT).sum() == round(0.1 * len(x))
        assert set(run[run != ABSENT].tolist()) == {0, 1, 2, 3}
    assert not np.array_equal(runs[0] == ABSENT, runs[1] == ABSENT)
    assert stability(runs) > 0.95
    assert min(topic_stability(truth, runs).values()) > 0.95  # absent papers do not count against a topic
    broken = runs[0].copy()
    broken[broken >= 0] = np.arange((broken >= 0).sum()) % 4  # papers dealt out at random
    assert max(topic_stability(truth, [broken]).values()) < 0.5


_EMULATED_BUILD = """
import dataclasses, sys
from pathlib import Path
from pipeline.build.build import build
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config
build([SMALL_CORPUS], "small", Path(sys.argv[1]), fast_config(method="graph"), encoder=TEST_ENCODER)
"""


def test_another_processor_builds_the_same_topics_keywords_and_labels(tmp_path):
    """A build as on a generic x86-64 (numba for a generic CPU, numpy without its AVX-512 sorts) in
    a subprocess gives this machine's topics, keywords and labels (issue 10)."""
    import os
    import subprocess

    from sklearn.metrics import adjusted_rand_score

    from pipeline.build.build import build

    build([SMALL_CORPUS], "small", tmp_path / "here", fast_config(method="graph"), encoder=TEST_ENCODER)
    env = os.environ | {"NUMBA_CPU_NAME": "generic", "NPY_DISABLE_CPU_FEATURES": "AVX512_SPR AVX512_ICL X86_V4"}
    root = Path(__file__).resolve().parent.parent
    subprocess.run(
        [sys.executable, "-c", _EMULATED_BUILD, str(tmp_path / "there")], cwd=root, env=env, check=True, timeout=600
    )
    here, there = (artifacts.corpus_path(tmp_path / side, "small") for side in ("here", "there"))
    papers = [artifacts.read_table(f, schema.PAPERS).sort_values("doc_id") for f in (here, there)]
    assert adjusted_rand_score(papers[0]["topic"], papers[1]["topic"]) >= 0.95
    topics = [artifacts.read_table(f, schema.TOPICS).set_index("topic") for f in (here, there)]
    assert artifacts.read_manifest(here).params["cluster"]["method"] == "graph"
    for t in topics[0].index.intersection(topics[1].index):
        a, b = topics[0].loc[t], topics[1].loc[t]
        if a["size"] == b["size"]:  # the same topic: the same words
            assert list(a["keywords"]) == list(b["keywords"]) and a["label"] == b["label"]


_EMULATED_DEFAULT_BUILD = """
import sys
from pathlib import Path
from pipeline.build.build import build
from pipeline.core.inputs import default_inputs
build(default_inputs(), "neurips2026", Path(sys.argv[1]))
"""


@pytest.mark.real_model
def test_bundled_corpus_has_six_readable_topics_the_same_on_another_processor(tmp_path):
    import os
    import subprocess

    from pipeline.build.build import build
    from pipeline.core.inputs import default_inputs

    build(default_inputs(), "neurips2026", tmp_path / "here", BuildConfig())
    env = os.environ | {"NUMBA_CPU_NAME": "generic", "NPY_DISABLE_CPU_FEATURES": "AVX512_SPR AVX512_ICL X86_V4"}
    subprocess.run(
        [sys.executable, "-c", _EMULATED_DEFAULT_BUILD, str(tmp_path / "there")],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        check=True,
        timeout=900,
    )
    here, there = (artifacts.corpus_path(tmp_path / side, "neurips2026") for side in ("here", "there"))
    topics = artifacts.read_table(here, schema.TOPICS)
    assert 5 <= len(topics) <= 7 and topics["size"].min() >= 3
    for label, keywords in zip(topics["label"], topics["keywords"], strict=True):
        assert 1 <= len(label.split()) <= 5 and not is_generic(label.replace(" and ", " ")), label
        assert [k for k in keywords if keyword_problem(k)] == []
    papers = [artifacts.read_table(f, schema.PAPERS).sort_values("doc_id") for f in (here, there)]
    np.testing.assert_array_equal(papers[0]["topic"].to_numpy(), papers[1]["topic"].to_numpy())
    other = artifacts.read_table(there, schema.TOPICS)
    assert topics["label"].tolist() == other["label"].tolist()
    assert [list(k) for k in topics["keywords"]] == [list(k) for k in other["keywords"]]


# --- what the labels of issue 10's follow-up rest on: refined borders, keywords papers share --------


def test_refining_moves_a_paper_to_the_topic_it_is_most_like_and_leaves_outliers_alone():
    from pipeline.model.cluster_refine import refine

    x, truth = _groups(n_per=60, k=3)
    labels = truth.copy()
    wrong = np.array([0, 1, 2, 60, 61, 120])  # papers of topics 0, 1 and 2 dealt into the next topic
    labels[wrong] = (truth[wrong] + 1) % 3
    labels[5] = -1  # a paper the clustering left out stays out
    refined = refine(labels, x, steps=3)
    assert refined[5] == -1
    keep = np.arange(len(x)) != 5
    np.testing.assert_array_equal(refined[keep], truth[keep])
    np.testing.assert_array_equal(refine(labels, x, steps=3, chunk=7), refined)  # memory-bounded blocks
    np.testing.assert_array_equal(refine(labels, x, steps=0), labels)


def test_refining_breaks_a_tie_towards_the_smaller_topic():
    from pipeline.model.cluster_refine import refine

    s = np.sqrt(0.5)
    x = np.array([[1.0, 0.0], [0.0, 1.0], [s, s], [s, s]], dtype=np.float32)
    # the two topics' means mirror each other: the last two papers are exactly as close to both
    np.testing.assert_array_equal(refine(np.array([3, 5, 5, 3]), x, steps=1), [3, 5, 3, 3])


def test_a_term_weighs_by_the_papers_using_it_not_by_one_papers_repeats():
    from scipy import sparse

    from pipeline.model.represent import ctfidf_words
    from pipeline.model.vocab import DocTerms

    terms = np.array(["haphazard", "other", "transformers", "voting"], dtype=object)
    counts = np.zeros((10, 4), dtype=np.int32)
    counts[0, 0] = 9  # one paper of topic 0 names its library nine times
    counts[2:6, 2] = 1  # four of its six papers use "transformers" once
    counts[6:, 3] = 2  # topic 1's own word
    counts[:, 1] = 30  # the rest of each abstract
    labels = np.array([0] * 6 + [1] * 4)
    words = ctfidf_words(labels, DocTerms(sparse.csr_matrix(counts), terms))
    # counted over the joined papers (BERTopic's own way) the library's name came first
    assert [w for w, _ in words[0]][:2] == ["transformers", "haphazard"]


def test_a_word_every_topic_of_the_corpus_uses_is_no_label_on_its_own():
    # "observed" is in every paper of this topic, but the corpus's other topics use it as often:
    # its lift against the corpus is 1, so it names nothing; "scene graphs" is this topic's own.
    from pipeline.model.label_background import Background
    from pipeline.model.label_candidates import TopicTerms, topic_text
    from pipeline.model.label_choice import make_labels

    docs = [f"Scene graphs of rooms, as observed in study {i}." for i in range(3)] + [
        f"We observed that robots see scene graphs {i}." for i in range(3)
    ]
    others = [f"We observed protein folding {i}." for i in range(6)] + [
        f"Prices observed in auctions {i}." for i in range(6)
    ]
    topic = TopicTerms(
        [("observed", 1.0), ("scene graphs", 0.9), ("rooms", 0.5)], ["observed"], [], topic_text(docs), 6
    )
    label = make_labels({0: topic}, background=Background(docs + others), total=len(docs + others))[0]
    assert "observed" not in label and "scene graphs" in label, label
    # without the corpus to compare with, nothing tells "observed" from a subject
    assert make_labels({0: topic})[0] == "observed"
    # a corpus too small to measure it (here 18 papers) takes the broad background: the word stems
    # every NeurIPS subfield uses alike, "observed" among them
    from pipeline.model.label_candidates import SMALL_CORPUS, is_spread

    assert len(docs + others) < SMALL_CORPUS and is_spread("observed") and not is_spread("scene graphs")


def test_a_phrase_of_generic_words_names_a_topic_only_when_nothing_else_names_half_of_it():
    # A topic of deep-learning methods (as on NeurIPS 2021): every paper says "neural networks",
    # each a corner of its own (pruning, width, quantization, ...). Its distinctive corners name a
    # tenth of it; "neural networks" names all of it and the corpus's other papers use it less
    # (lift 4 here), so it is the label. "networks" alone is never one.
    from pipeline.model import labels as labels_module
    from pipeline.model.label_background import Background
    from pipeline.model.label_candidates import SMALL_CORPUS, TopicTerms, topic_text
    from pipeline.model.label_choice import make_labels
    from pipeline.model.label_evidence import is_weak, label_support

    corners = ["pruning", "width", "quantization", "dropout", "activations", "initialization", "pooling", "depth"]
    docs = [f"{'Deep neural' if i % 2 else 'Neural'} networks with {corners[i % 8]} in study {i}." for i in range(80)]
    others = (
        [f"Voting rules for elections {i}." for i in range(700)]
        + [f"Protein folding by neural networks {i}." for i in range(200)]
        + [f"Auctions and prices {i}." for i in range(100)]
    )
    corpus = docs + others
    assert len(corpus) >= SMALL_CORPUS
    ctfidf = [("neural networks", 1.0), ("networks", 0.9), ("pruning", 0.5), ("width", 0.45), ("quantization", 0.4)]
    topic = TopicTerms(ctfidf, [], [], topic_text(docs), len(docs))

    def label(background, total, topic=topic, **settings):
        # settings: constants of pipeline.model.labels set for this one labelling
        with pytest.MonkeyPatch.context() as patch:
            for name, value in settings.items():
                patch.setattr(labels_module, name, value)
            return make_labels({0: topic}, background=background, total=total)[0]

    named = label(Background(corpus), len(corpus))
    assert named == "neural networks", named
    assert not is_weak(label_support(named, topic).value)
    # without the rule, a corner that a tenth of the papers use, which the app must mark weak
    corner = label(Background(corpus), len(corpus), GENERIC_PHRASES=False)
    assert "neural networks" not in corner and is_weak(label_support(corner, topic).value), corner
    # a topic that one distinctive phrase names keeps it
    scenes = [f"Scene graphs by neural networks {i}." for i in range(80)]
    own = TopicTerms([("neural networks", 1.0), ("scene graphs", 0.9)], [], [], topic_text(scenes), len(scenes))
    assert label(Background(scenes + others), len(scenes + others), own) == "scene graphs"
    # a corpus under SMALL_CORPUS papers measures the lift on itself all the same (before
    # REPRESENT_VERSION 11 it never took a phrase of generic words, and kept the weak corner)
    small = docs + others[:300]
    assert len(small) < SMALL_CORPUS and label(Background(small), len(small)) == "neural networks"
    corner = label(Background(small), len(small), GENERIC_IN_SMALL_CORPORA=False)
    assert "neural networks" not in corner and is_weak(label_support(corner, topic).value), corner
    # ... and not where the rest of that corpus uses the phrase as much (no lift)
    alike = docs + [f"Protein folding by neural networks {i}." for i in range(80)]
    assert len(alike) < SMALL_CORPUS and "neural networks" not in label(Background(alike), len(alike))


def test_a_weak_label_of_generic_words_stands_where_half_of_the_papers_use_it():
    # The largest topic of NeurIPS 2018 with the build's seed (deep learning, GANs, adversarial
    # examples): its distinctive corners each name a tenth of it, "deep learning and classification"
    # 51% ("deep learning" alone 34%), too few papers to be sure (the lower bound of the share under
    # 0.5). It was named by a corner, which a tenth of its papers use; now by the phrase half of
    # them use, still marked weak. Under half, a corner stays: a phrase of generic words names a
    # topic only where most papers use it.
    from pipeline.model import labels as labels_module
    from pipeline.model.label_background import Background
    from pipeline.model.label_candidates import TopicTerms, topic_text
    from pipeline.model.label_choice import make_labels
    from pipeline.model.label_evidence import is_weak, label_support

    corners = ["pruning", "width", "quantization", "dropout", "activations", "initialization", "pooling", "depth"]
    others = (
        [f"Voting rules for elections {i}." for i in range(700)]
        + [f"Protein folding by neural networks {i}." for i in range(200)]
        + [f"Auctions and prices {i}." for i in range(100)]
    )

    def label(users: int, **settings) -> tuple[str, float]:
        # 80 papers, ``users`` of them on "neural networks"; settings: constants of labels_module
        docs = [
            f"{'Neural networks' if i < users else 'Estimators'} with {corners[i % 8]} in study {i}." for i in range(80)
        ]
        ctfidf = [("neural networks", 1.0), ("pruning", 0.5), ("width", 0.45), ("quantization", 0.4)]
        topic = TopicTerms(ctfidf, [], [], topic_text(docs), len(docs))
        with pytest.MonkeyPatch.context() as patch:
            for name, value in settings.items():
                patch.setattr(labels_module, name, value)
            named = make_labels({0: topic}, background=Background(docs + others), total=len(docs + others))[0]
        return named, label_support(named, topic).value

    named, support = label(44)  # 55% of the papers, lower bound 0.48
    assert "neural networks" in named and is_weak(support) and support > 0.4, (named, support)
    corner, support = label(44, GENERIC_WHEN_WEAK=False)  # before: a corner, a tenth of the papers
    assert "neural networks" not in corner and support < 0.2, (corner, support)
    corner, support = label(36)  # 45%: under half, no phrase of generic words
    assert "neural networks" not in corner and is_weak(support), (corner, support)
    named, support = label(70)  # 88%: not weak, named so with or without the rule
    assert named == label(70, GENERIC_WHEN_WEAK=False)[0] and "neural networks" in named and not is_weak(support)


def test_a_weak_label_of_generic_words_is_no_option_beside_one_that_is_not_weak():
    # NeurIPS 2016 built with the seed every build uses: its topic was "classification, machine
    # learning and labels" (support 0.52); the first form of the rule above added the weak
    # "classification and machine learning" (0.45) to its options, which then won the choice. A
    # weak label of generic words is an option only where every other option is weak.
    from pipeline.model.label_background import Background
    from pipeline.model.label_candidates import TopicTerms, topic_text
    from pipeline.model.labels import topic_options

    corners = ["pruning", "width", "quantization", "dropout", "activations", "initialization", "pooling", "depth"]
    kinds = [(14, "Neural networks and kernels"), (36, "Neural networks"), (20, "Neural networks for classification")]
    kinds += [(34, "Classification"), (16, "Kernels"), (80, "Estimators")]
    openings = [opening for count, opening in kinds for _ in range(count)]
    docs = [f"{opening} with {corners[i % 8]} in study {i}." for i, opening in enumerate(openings)]
    others = (
        [f"Voting rules for elections {i}." for i in range(700)]
        + [f"Protein folding by neural networks {i}." for i in range(100)]
        + [f"Auctions and prices {i}." for i in range(100)]
    )
    ctfidf = [("classification", 1.0), ("neural networks", 0.9), ("kernels", 0.6), ("pruning", 0.5)]
    topic = TopicTerms(ctfidf, [], [], topic_text(docs), len(docs))
    options = topic_options(topic, background=Background(docs + others), total=len(docs + others))
    named = {o.label: o for o in options}
    # 60% use the three parts (not weak); 52% "neural networks and classification", too few to be
    # sure (weak): with the label that is not weak at hand, it is no option
    assert not named["neural networks, classification and kernels"].weak
    assert "neural networks and classification" not in named, [(o.label, o.coverage, o.weak) for o in options]


def test_spread_is_zero_for_a_word_every_topic_uses_alike_and_large_for_one_topics_word():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository: benchmarks/ as a package
    from benchmarks.make_spread_words import spread_bits

    labels = np.repeat(np.arange(4), 50)
    presence = np.zeros((200, 2))
    presence[::5, 0] = 1  # "everywhere": one paper in five of every topic
    presence[:50:2, 1] = 1  # "privacy": half of topic 0, nowhere else
    bits = spread_bits(labels, presence, np.array(["everywhere", "privacy"], dtype=object), min_share=0.0)
    assert bits["everywhere"] == pytest.approx(0.0, abs=1e-9)
    assert bits["privacy"] == pytest.approx(2.0)  # log2 of four equally large topics


@pytest.mark.real_model
def test_ijcai_labels_are_used_by_their_papers_distinct_and_retrieve_their_topic(ijcai_root):
    """Issue 20's label measures on the build of 1,603 labelled IJCAI papers (real model): most of
    a topic's papers use its label's words, a large topic whose label few use is marked weak, no
    label holds another's words, and each label, embedded, is nearest its own topic."""
    from pipeline.embed.embed import embed_texts
    from pipeline.evaluation.evaluate import label_scores
    from pipeline.model.cluster_refine import centroids

    folder = artifacts.corpus_path(ijcai_root, "ijcai")
    papers = artifacts.read_table(folder, schema.PAPERS).sort_values("row")
    topics = artifacts.read_table(folder, schema.TOPICS).set_index("topic")
    labels = papers["topic"].to_numpy()
    names = topics["label"].to_dict()
    ids, vectors = centroids(labels, artifacts.read_array(folder, schema.EMBEDDINGS))
    embedded = embed_texts([names[int(t)] for t in ids], BuildConfig().embed, artifacts.cache_dir(ijcai_root)).vectors
    scores = label_scores(names, labels, papers["model_text"].tolist(), label_vectors=embedded, centroids=vectors)
    assert scores.weighted_coverage >= 0.6, scores.coverage
    assert scores.contained == []
    assert scores.retrieval >= 0.9
    assert all(is_weak(topics.loc[t, "label_support"]) for t in scores.low_large), scores.low_large
    # the stored support is the lower bound of the coverage measured here (on up to 250 papers)
    for t in ids:
        assert topics.loc[int(t), "label_support"] <= scores.coverage[int(t)] + 0.08, (names[int(t)], scores.coverage)


def test_a_word_the_papers_seldom_put_in_their_titles_names_no_topic():
    # Efficiency papers (as on NeurIPS 2022): every abstract reports its accuracy on ImageNet, no
    # title says ImageNet; the titles say quantization or pruning. "imagenet" covers every paper and
    # no other topic uses it, so by coverage and lift alone it would be the label; the papers'
    # titles say it is where they measure, not what they are about.
    from pipeline.model.label_background import Background, own_titles
    from pipeline.model.label_candidates import TopicTerms, topic_text
    from pipeline.model.label_choice import make_labels
    from pipeline.model.label_evidence import label_parts
    from pipeline.model.labels import MIN_TITLE_SHARE, names_setting

    titles = [f"Quantization of networks, study {i}" for i in range(12)] + [
        f"Pruning of networks, study {i}" for i in range(8)
    ]
    docs = [f"{t}. We compress models and report accuracy on ImageNet." for t in titles]
    other_titles = [f"Voting rules for elections {i}" for i in range(40)] + [
        f"Auctions and prices {i}" for i in range(40)
    ]
    corpus, corpus_titles = docs + [f"{t}. We study them." for t in other_titles], titles + other_titles
    topic = TopicTerms(
        [("imagenet", 1.0), ("quantization", 0.8), ("pruning", 0.7)], [], [], topic_text(docs), len(docs)
    )
    imagenet = frozenset(label_parts("imagenet")[0])
    with_titles = Background(corpus, titles=corpus_titles)
    assert with_titles.title_share(imagenet) == pytest.approx(1 / 22)  # 0 of 20 titles, one of each added
    assert with_titles.title_share(frozenset(label_parts("quantization")[0])) == pytest.approx(13 / 14)
    assert names_setting(with_titles, imagenet) and MIN_TITLE_SHARE > 1 / 22
    label = make_labels({0: topic}, background=with_titles, total=len(corpus))[0]
    assert label == "quantization and pruning", label
    # without the titles nothing tells the benchmark from a subject
    assert Background(corpus).title_share(imagenet) is None
    assert make_labels({0: topic}, background=Background(corpus), total=len(corpus))[0] == "imagenet"
    # where the label without it would be marked weak (each subject names 3 of 20 papers), it
    # stays: the label says what the papers share rather than turn weak
    spread = [f"Study {i} of {'pruning' if i < 3 else 'quantization' if i < 6 else 'scaling'}" for i in range(20)]
    scattered = [f"{t}. We report accuracy on ImageNet." for t in spread]
    loose = TopicTerms(
        [("imagenet", 1.0), ("pruning", 0.8), ("quantization", 0.7)], [], [], topic_text(scattered), len(scattered)
    )
    beside = Background(scattered + corpus[20:], titles=spread + corpus_titles[20:])
    assert names_setting(beside, imagenet)
    assert make_labels({0: loose}, background=beside, total=len(corpus))[0] == "imagenet"
    # a paper without a title of its own (one made from its abstract) does not count either way
    papers = pd.DataFrame({"title": ["Pruning", "We prune", None], "title_derived": [False, True, False]})
    assert own_titles(papers) == ["Pruning", None, None]
    with pytest.raises(ValueError, match="2 titles for 3 papers"):
        Background(["a", "b", "c"], titles=["a", "b"])


def _online_learning_topic(n_games: int, n_bandits: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """60 papers of online learning: the first ``n_games`` write "games" in their abstracts only,
    the first ``n_bandits`` "bandits" in title and abstract; beside them 6 papers titled for games
    (so "games" is a subject of the corpus, not a setting) and 120 on voting and auctions."""
    titles = [f"Regret bounds for bandits {i}" if i < n_bandits else f"A note, part {i}" for i in range(60)]
    docs = [
        f"{t}. We prove results"
        + (" about games" if i < n_games else "")
        + (" for bandits" if i < n_bandits else "")
        + "."
        for i, t in enumerate(titles)
    ]
    others = [f"Games with many players {i}" for i in range(6)] + [
        f"{subject} {i}" for subject in ("Voting rules for elections", "Auctions and prices") for i in range(60)
    ]
    return titles, docs, others, [f"{t}. We study them." for t in others]


def test_of_two_labels_the_abstracts_support_alike_the_one_the_titles_name_wins(monkeypatch):
    # As "regret and games" became "regret and bandits" on NeurIPS 2022 and 2023: 44 of 60 papers
    # mention games in their abstracts, 40 are about bandits and say so in their titles.
    from pipeline.model import labels
    from pipeline.model.label_background import Background
    from pipeline.model.label_candidates import TopicTerms, topic_text
    from pipeline.model.label_choice import make_labels

    def label(n_games, n_bandits, *, topic_titles=True):
        titles, docs, others, other_docs = _online_learning_topic(n_games, n_bandits)
        terms = TopicTerms(
            [("games", 1.0), ("bandits", 1.0)],
            [],
            [],
            topic_text(docs),
            len(docs),
            titles=tuple(titles) if topic_titles else None,
        )
        background = Background(docs + other_docs, titles=titles + others)
        assert not labels.names_setting(background, frozenset({"game"}))  # the old title rule says nothing here
        return make_labels({0: terms}, background=background, total=len(docs) + len(other_docs))[0]

    assert label(44, 40) == "bandits"
    # the topic's titles unknown, or not counted: the abstracts' word, which covers 4 more papers
    assert label(44, 40, topic_titles=False) == "games"
    monkeypatch.setattr(labels, "TITLE_WEIGHT", 0.0)
    assert label(44, 40) == "games"
    monkeypatch.undo()
    # a label fewer than half of the papers use (28 of 60) gains nothing from the titles: 30 papers
    # mention games (also weak), and the titles do not decide between two weak labels
    assert label(30, 28) == "games"
