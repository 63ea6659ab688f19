"""Quality measures on small synthetic cases whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from pipeline.evaluation.baselines import kmeans, lda
from pipeline.evaluation.evaluate import (
    binary_doc_term,
    clustering_scores,
    keyword_problem,
    npmi_coherence,
    reference_doc_term,
    stability,
    topic_diversity,
    topic_stability,
)


def test_perfect_clustering_scores_one_even_with_renamed_clusters():
    truth = np.array(["a"] * 20 + ["b"] * 30 + ["c"] * 10)
    pred = np.array([7] * 20 + [3] * 30 + [0] * 10)
    scores = clustering_scores(truth, pred)
    assert scores["nmi_all"] == pytest.approx(1.0)
    assert scores["ari_all"] == pytest.approx(1.0)
    assert scores["outlier_share"] == 0.0
    assert scores["n_clusters"] == 3


def test_random_clustering_has_ari_near_zero():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 5, 5000)
    pred = rng.integers(0, 5, 5000)
    scores = clustering_scores(truth, pred)
    assert abs(scores["ari_all"]) < 0.01
    assert scores["nmi_all"] < 0.01


def test_outliers_count_as_a_cluster_overall_and_are_dropped_for_inliers():
    truth = np.array([0] * 10 + [1] * 10)
    pred = np.array([0] * 8 + [-1] * 2 + [1] * 8 + [-1] * 2)
    scores = clustering_scores(truth, pred)
    assert scores["outlier_share"] == pytest.approx(0.2)
    assert scores["n_clusters"] == 2
    assert scores["nmi_inliers"] == pytest.approx(1.0)
    assert scores["ari_inliers"] == pytest.approx(1.0)
    assert scores["ari_all"] < 0.9


def test_all_outliers_gives_nan_inlier_scores():
    scores = clustering_scores([0, 1, 1], [-1, -1, -1])
    assert math.isnan(scores["nmi_inliers"]) and scores["n_clusters"] == 0


def test_clustering_scores_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        clustering_scores([0, 1], [0, 1, 1])


def test_diversity_of_disjoint_and_identical_word_lists():
    disjoint = [[f"w{t}_{i}" for i in range(10)] for t in range(4)]
    identical = [[f"w{i}" for i in range(10)]] * 4
    assert topic_diversity(disjoint) == pytest.approx(1.0)
    assert topic_diversity(identical) == pytest.approx(0.25)
    assert topic_diversity(disjoint, top_n=5) == pytest.approx(1.0)


def _doc_term(rows: list[list[int]]) -> sp.csr_array:
    return sp.csr_array(np.array(rows, dtype=np.int8))


def test_npmi_of_words_that_always_co_occur_is_one():
    # columns: a, b (always together, in half of the docs), c (the other half)
    doc_term = _doc_term([[1, 1, 0]] * 5 + [[0, 0, 1]] * 5)
    vocab = {"a": 0, "b": 1, "c": 2}
    mean, per_topic = npmi_coherence([["a", "b"]], doc_term, vocab)
    assert mean == pytest.approx(1.0, abs=1e-6)
    assert per_topic == [pytest.approx(1.0, abs=1e-6)]


def test_npmi_of_words_that_never_co_occur_is_minus_one():
    doc_term = _doc_term([[1, 1, 0]] * 5 + [[0, 0, 1]] * 5)
    vocab = {"a": 0, "b": 1, "c": 2}
    mean, _ = npmi_coherence([["a", "c"]], doc_term, vocab)
    assert mean == pytest.approx(-1.0, abs=0.1)
    assert mean < -0.9


def test_npmi_of_independent_words_is_near_zero():
    # a in docs 0-9 of 20, b in even docs: p(a,b) = p(a) p(b)
    a = [1 if i < 10 else 0 for i in range(20)]
    b = [1 if i % 2 == 0 else 0 for i in range(20)]
    doc_term = sp.csr_array(np.array([a, b]).T)
    mean, _ = npmi_coherence([["a", "b"]], doc_term, {"a": 0, "b": 1})
    assert mean == pytest.approx(0.0, abs=1e-6)


def test_npmi_skips_unknown_words_and_scores_topics_separately():
    doc_term = _doc_term([[1, 1, 0]] * 5 + [[0, 0, 1]] * 5)
    vocab = {"a": 0, "b": 1, "c": 2}
    mean, per_topic = npmi_coherence([["a", "zzz", "b"], ["a", "c"], ["zzz", "c"]], doc_term, vocab)
    assert per_topic[0] == pytest.approx(1.0, abs=1e-6)
    assert per_topic[1] < -0.9
    assert math.isnan(per_topic[2])  # one usable word: no pair
    assert mean == pytest.approx((per_topic[0] + per_topic[1]) / 2)


def test_npmi_accepts_bigram_terms_from_binary_doc_term():
    docs = ["neural network training"] * 4 + ["graph coloring heuristics"] * 4
    doc_term, vocab = binary_doc_term(docs)
    assert "neural network" in vocab
    _, per_topic = npmi_coherence([["neural network", "training"], ["neural network", "graph"]], doc_term, vocab)
    assert per_topic[0] == pytest.approx(1.0, abs=1e-6)
    assert per_topic[1] < -0.9


def test_stability_of_identical_assignments_is_one_and_of_random_ones_near_zero():
    labels = np.repeat(np.arange(5), 40)
    assert stability([labels, labels.copy(), labels.copy()]) == pytest.approx(1.0)
    renamed = (labels + 3) % 5
    assert stability([labels, renamed]) == pytest.approx(1.0)
    rng = np.random.default_rng(1)
    assert abs(stability([rng.integers(0, 5, 2000) for _ in range(3)])) < 0.02
    with pytest.raises(ValueError):
        stability([labels])


def test_kmeans_baseline_recovers_separated_blobs():
    rng = np.random.default_rng(0)
    centers = np.eye(8, dtype=np.float32)[:3] * 10
    x = np.concatenate([c + rng.normal(size=(30, 8)).astype(np.float32) for c in centers])
    truth = np.repeat(np.arange(3), 30)
    result = kmeans(x, 3, seed=0)
    assert clustering_scores(truth, result.labels)["ari_all"] == pytest.approx(1.0)
    assert result.topic_words is None and result.seconds >= 0


def test_lda_baseline_gives_labels_and_top_words():
    docs = ["protein folding structure molecule"] * 10 + ["galaxy star telescope orbit"] * 10
    result = lda(docs, 2, seed=0, top_n=4)
    assert result.labels.shape == (20,)
    assert result.topic_words is not None and len(result.topic_words) == 2
    assert all(len(words) == 4 for words in result.topic_words)
    assert clustering_scores(np.repeat([0, 1], 10), result.labels)["ari_all"] == pytest.approx(1.0)


def test_topic_stability_of_identical_split_and_scattered_topics():
    labels = np.repeat([0, 1, 2], 20)
    assert topic_stability(labels, [labels.copy(), (labels + 1) % 3]) == {0: 1.0, 1: 1.0, 2: 1.0}
    split = labels.copy()
    split[10:20] = 5  # topic 0 is cut in half by the other run
    scores = topic_stability(labels, [split])
    assert scores[0] == pytest.approx(0.5) and scores[1] == 1.0
    rng = np.random.default_rng(0)
    scattered = topic_stability(np.repeat(np.arange(10), 100), [rng.integers(0, 10, 1000) for _ in range(2)])
    assert max(scattered.values()) < 0.1


def test_topic_stability_ignores_outliers_and_needs_other_runs():
    labels = np.array([0, 0, 0, -1, 1, 1])
    other = np.array([0, 0, -1, 0, 1, 1])
    scores = topic_stability(labels, [other])
    assert set(scores) == {0, 1}
    assert scores[0] == pytest.approx(2 / 4) and scores[1] == 1.0  # {0, 1} shared of {0, 1, 2, 3}
    assert all(math.isnan(v) for v in topic_stability(labels, []).values())
    with pytest.raises(ValueError):
        topic_stability(labels, [other[:-1]])


@pytest.mark.parametrize(
    ("term", "problem"),
    [
        ("graph neural networks", None),
        ("self-supervised", None),
        ("gpt-4", None),
        ("3d", None),
        ("mathbf", "latex"),
        ("\\alpha", "latex"),
        ("$x$", "latex"),
        ("https", "url"),
        ("www.example.org", "url"),
        ("2023", "number"),
        ("0.5", "number"),
        ("the", "stop word"),
        ("of learning", "stop word"),
        ("x", "too short"),
    ],
)
def test_keyword_problem_names_latex_url_number_and_stop_word_fragments(term, problem):
    assert keyword_problem(term) == problem


def test_reference_doc_term_finds_each_methods_terms():
    docs = ["Self-supervised learning of graph neural networks.", "The graph of neural nets.", "Nothing here."]
    matrix, vocab = reference_doc_term(docs, ["self-supervised", "graph neural", "the", "self", "absent"])
    present = matrix.toarray()
    assert present[:, vocab["self-supervised"]].tolist() == [1, 0, 0]  # a compound, as the pipeline counts it
    assert present[:, vocab["self"]].tolist() == [1, 0, 0]  # a word, as plain tokenisation counts it
    # a phrase as written, word after word: "graph of neural" has a stop word between (REPRESENT_VERSION 12)
    assert present[:, vocab["graph neural"]].tolist() == [1, 0, 0]
    assert present[:, vocab["the"]].tolist() == [0, 1, 0]
    assert present[:, vocab["absent"]].sum() == 0
