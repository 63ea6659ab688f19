"""Unit tests of the pipeline stages on small synthetic inputs (no model, no UMAP compile)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.analysis.trends import compute_trends
from pipeline.core import artifacts, schema
from pipeline.core.config import ClusterParams, EmbedParams, UmapParams
from pipeline.embed.embed import embed_texts
from pipeline.embed.embed_store import EmbeddingStore, text_hash
from pipeline.embed.encoders import HashingEncoder
from pipeline.model.cluster import cluster
from pipeline.model.cluster_params import resolve_params
from pipeline.model.cluster_refine import merge_to, reassign_outliers
from pipeline.model.label_candidates import TopicTerms, candidate_terms, is_generic, topic_text
from pipeline.model.label_choice import make_labels
from pipeline.model.label_evidence import is_weak, label_support
from pipeline.model.label_words import terms_overlap
from pipeline.model.place import nearest, place_on_map, topic_distribution
from pipeline.model.reduce import exact_knn, reduce
from pipeline.model.vocab import doc_terms


def _unit(x):
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _blobs(n_per=30, k=4, dim=16, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, dim)) * 5
    x = np.concatenate([c + rng.normal(size=(n_per, dim)) for c in centres])
    return _unit(x), np.repeat(np.arange(k), n_per)


# --- embedding store -------------------------------------------------------------------------


class CountingEncoder(HashingEncoder):
    key = "counting-test"

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def encode(self, texts, progress=None):
        self.seen.extend(texts)
        return super().encode(texts, progress)


def test_embed_texts_computes_only_unseen_texts(tmp_path):
    enc = CountingEncoder()
    first = embed_texts(["alpha beta", "gamma delta", "alpha beta"], EmbedParams(), tmp_path, encoder=enc)
    assert first.computed == 3 and first.cached == 0
    assert enc.seen == ["alpha beta", "gamma delta"]  # the duplicate text is embedded once
    np.testing.assert_allclose(first.vectors[0], first.vectors[2])
    second = embed_texts(["gamma delta", "new text here"], EmbedParams(), tmp_path, encoder=enc)
    assert second.cached == 1 and second.computed == 1
    assert enc.seen[-1] == "new text here"
    np.testing.assert_allclose(second.vectors[0], first.vectors[1], atol=1e-6)


def test_store_ignores_a_damaged_cache(tmp_path):
    store = EmbeddingStore(tmp_path, "k")
    store.add([text_hash("a"), text_hash("b")], np.eye(2, 4, dtype=np.float32))
    found, vecs = store.lookup([text_hash("b"), text_hash("zz")])
    assert found.tolist() == [True, False]
    np.testing.assert_allclose(vecs[0], [0, 1, 0, 0])
    (shard,) = (tmp_path / "k").glob("*.shard")
    shard.write_bytes(b"garbage")
    found, _ = store.lookup([text_hash("a")])
    assert not found.any()


def test_hashing_encoder_is_deterministic_and_normalised():
    enc = HashingEncoder()
    a = enc.encode(["graph neural networks for molecules", "graph neural networks for molecules"])
    b = enc.encode(["sparse attention in transformers"])
    np.testing.assert_allclose(a[0], a[1])
    assert abs(np.linalg.norm(a[0]) - 1) < 1e-5
    assert float(a[0] @ a[1]) > float(a[0] @ b[0])


# --- reduction and clustering ----------------------------------------------------------------


def test_exact_knn_matches_brute_force_and_puts_self_first():
    x, _ = _blobs(n_per=20, k=3)
    idx, dist = exact_knn(x, 5, block=7)
    sims = x @ x.T
    for i in range(len(x)):
        assert idx[i, 0] == i and dist[i, 0] == 0
        expected = set(np.argsort(-sims[i])[:5].tolist())
        assert set(idx[i].tolist()) == expected
    assert (np.diff(dist, axis=1) >= -1e-6).all()


def test_exact_knn_is_the_same_on_any_number_of_threads():
    x, _ = _blobs(n_per=30, k=4)
    one = exact_knn(x, 6, block=9, threads=1)
    for threads in (2, 3):
        many = exact_knn(x, 6, block=9, threads=threads)
        np.testing.assert_array_equal(one[0], many[0])
        np.testing.assert_array_equal(one[1], many[1])


def test_reduce_tiny_corpus_uses_pca_without_error():
    x, _ = _blobs(n_per=2, k=2)
    proj = reduce(x, UmapParams())
    assert proj.cluster.shape == (4, 5) and proj.map.shape == (4, 2)
    assert np.isfinite(proj.map).all()
    single = reduce(x[:1], UmapParams())
    assert single.map.shape == (1, 2)


def test_cluster_separates_blobs_and_reassigns_outliers():
    x, truth = _blobs(n_per=40, k=4)
    result = cluster(x, x, ClusterParams(method="hdbscan", min_cluster_size=10, n_topics=4))
    assert result.n_clusters == 4
    assert (result.labels != -1).all()
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(truth, result.labels) > 0.95


def test_reassign_outliers_uses_the_nearest_centroid():
    emb = _unit([[1, 0], [1, 0.1], [0, 1], [0.1, 1], [0.9, 0.2]])
    labels = np.array([0, 0, 1, 1, -1])
    assert reassign_outliers(labels, emb).tolist() == [0, 0, 1, 1, 0]


def test_merge_to_caps_the_topic_count():
    x, _ = _blobs(n_per=10, k=6)
    labels = np.repeat(np.arange(6), 10)
    merged = merge_to(labels, x, 3)
    assert len(set(merged.tolist())) == 3
    # Papers of one original cluster stay together.
    for c in range(6):
        assert len(set(merged[labels == c].tolist())) == 1


def test_cluster_params_adapt_to_corpus_size():
    small, large = resolve_params(ClusterParams(), 38), resolve_params(ClusterParams(), 18_682)
    assert small.min_cluster_size < large.min_cluster_size
    assert (small.method, large.method) == ("ward", "graph")
    assert (small.n_topics, resolve_params(ClusterParams(), 3_281).n_topics, large.n_topics) == (6, 25, 59)
    assert resolve_params(ClusterParams(min_cluster_size=7), 10_000).min_cluster_size == 7
    assert resolve_params(ClusterParams(smooth_k=0), 10_000).smooth_k == 0
    # the graph clustering's runs' vote places its border papers: no smoothing unless asked for
    assert resolve_params(ClusterParams(), 10_000).smooth_k == 0
    assert resolve_params(ClusterParams(smooth_k=7), 10_000).smooth_k == 7
    assert resolve_params(ClusterParams(method="hdbscan"), 10_000).smooth_k == 15


def test_smoothing_takes_the_neighbourhood_majority():
    from pipeline.model.cluster_refine import smooth

    labels = np.array([0, 0, 0, 1, 1, 1, 0])
    knn = np.array([[0, 1, 2], [1, 0, 2], [2, 0, 1], [3, 4, 5], [4, 3, 5], [5, 3, 4], [6, 3, 4]])
    assert smooth(labels, knn, 2).tolist() == [0, 0, 0, 1, 1, 1, 1]
    assert smooth(np.array([-1, 0, 0]), np.array([[0, 1, 2], [1, 0, 2], [2, 1, 0]]), 2).tolist() == [-1, 0, 0]


# --- vocabulary, labels, trends --------------------------------------------------------------


def test_vocabulary_drops_numbers_stop_words_and_keeps_compounds():
    texts = [
        "We propose a novel self-supervised method with 2023 results on 10 datasets.",
        "Self-supervised learning of graph neural networks improves 3 benchmarks.",
        "Graph neural networks meet self-supervised pretraining.",
    ]
    dt = doc_terms(texts, min_df=1)
    terms = set(dt.terms.tolist())
    assert "self-supervised" in terms and "graph neural" in terms
    assert not any(t.replace(" ", "").isdigit() for t in terms)
    for generic in ("propose", "novel", "method", "results", "we", "the"):
        assert generic not in terms


def _words(label: str) -> list[str]:
    return label.split()


def test_labels_are_unique_readable_and_not_generic():
    reps = {
        0: TopicTerms(
            [("diffusion", 0.9), ("sampling", 0.7), ("diffusion sampling", 0.6), ("score", 0.5)], ["diffusion"]
        ),
        1: TopicTerms([("diffusion", 0.8), ("sampling", 0.6), ("diffusion sampling", 0.5), ("guidance", 0.4)]),
        2: TopicTerms([("method", 0.9), ("results", 0.8), ("graph", 0.7), ("graph neural", 0.65), ("molecules", 0.3)]),
        3: TopicTerms([("paper", 0.9), ("propose", 0.8)]),
        4: TopicTerms([("diffusions", 0.9), ("samplings", 0.7), ("diffusion samplings", 0.6)]),
    }
    labels = make_labels(reps)
    assert labels[0] == "diffusion sampling"
    assert labels[2] == "graph neural"
    assert len(set(labels.values())) == 5
    assert labels[4] != "diffusion samplings"  # the same label up to plurals is the same label
    for label in labels.values():
        assert 2 <= len(_words(label)) <= 5, label
        assert not is_generic(label.replace(" and ", " ")), label
        for generic in ("paper", "method", "propose", "results"):
            assert generic not in _words(label), label


def _topic(docs, ctfidf, keybert=(), mmr=()):
    return TopicTerms(list(ctfidf), list(keybert), list(mmr), topic_text(docs))


def _candidates(docs, ctfidf, keybert=()):
    """The candidate terms of a topic of ``docs`` with these c-TF-IDF (and KeyBERT) terms."""
    return [t for t, _ in candidate_terms(_topic(docs, ctfidf, keybert=keybert))]


def test_labels_complete_phrases_the_papers_write():
    docs = [f"We train graph neural networks on molecules {i}. Graph neural networks scale." for i in range(6)]
    docs += [f"Support vector machines {i} with kernels. Kernel support vector machines for text." for i in range(4)]
    reps = {
        0: _topic(docs[:6], [("graph neural", 0.9), ("molecules", 0.5)]),
        1: _topic(docs[6:], [("vector machines", 0.9), ("kernels", 0.4)]),
    }
    labels = make_labels(reps)
    assert labels[0] == "graph neural networks"
    assert labels[1] == "support vector machines"


@pytest.mark.parametrize(
    "docs",
    [
        ["Graph neural networks, graph neural nets (GNNs) and graph graph graph kernels.", "Graph."],
        ["a a a b a", "a | a a", "A-b a's a_b a", ""],
        [f"Diffusion models {i}; diffusion. Diffusion models diffusion models sample." for i in range(5)],
    ],
)
def test_the_words_after_a_term_are_what_the_regular_expression_finds(docs):
    # the labels' phrase searches count the word after (and, in the reversed text, before) each
    # use of a term without compiling a pattern per term: the same counts, repeated words included
    import re
    from collections import Counter

    from pipeline.model.label_candidates import words_after

    text = topic_text(docs)
    reverse = " ".join(reversed(text.split(" ")))
    words = set(text.split(" ")) | {"graph graph", "a a", "diffusion models", "|", "||", "b a", "nope"}
    for term in sorted(words - {""}):
        for t in (text, reverse):
            assert words_after(t, term) == Counter(re.findall(rf" {re.escape(term)} ([^ |]+)", t)), term


# words, every kind of whitespace (line breaks of other kinds among them), clause breaks, hyphens
_SPACED = ["Graph", "neural", "nets", "(GNNs)", "a", "-", "|", ",", ". ", "\n", "\r\n", "\t", " ", "\u2028", "\x85"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(), st.lists(st.sampled_from(_SPACED)).map("".join)), max_size=5))
def test_a_topics_text_is_what_the_whitespace_pattern_made(docs):
    # topic_text collapses whitespace with str.split; before, two passes of a pattern did it
    import re

    from pipeline.model.label_candidates import _NOT_WORD, _abbreviations_apart

    spaces = re.compile(r"[^\S\n]+")
    text = "\n".join(_abbreviations_apart(d).replace("\n", " ") for d in docs).lower()
    text = spaces.sub(" ", _NOT_WORD.sub(" | ", text)).replace("\n", " || ")
    assert topic_text(docs) == " " + spaces.sub(" ", text).strip(" ") + " "


def test_labels_reject_phrases_nobody_wrote_and_modifiers():
    # "language llms" is a vectorizer artefact of "large language models (LLMs)"; "adversarial" is
    # always followed by another word, so it is a modifier, not a label.
    docs = [
        f"Large language models (LLMs) answer questions {i}. Adversarial attacks and adversarial training."
        for i in range(5)
    ]
    docs += ["Prompting large language models (LLMs) for reasoning."] * 3
    topic = _topic(
        docs,
        [("language llms", 1.0), ("adversarial", 0.95), ("prompting", 0.5), ("reasoning", 0.45)],
        keybert=["language llms", "adversarial"],
    )
    label = make_labels({0: topic})[0]
    parts = label.split(" and ")
    assert "language llms" not in label and "adversarial" not in parts, label
    assert 1 <= len(_words(label)) <= 5


def test_labels_reject_verbs_predicates_and_adverbs():
    # "reduces" takes an object ("reduces the"), "biased" follows "is", "exponentially" is
    # "exponential" + "ly": the papers use none of them as a noun, so none names the topic, however
    # high it ranks, alone or ending a phrase ("cost grows exponentially"); "pruning", a gerund used
    # as a noun, and "anomaly scores", a noun ending in "ly", do.
    docs = [
        f"Pruning transformers reduces the cost {i}. The exponential cost grows exponentially and "
        f"the estimate is biased. Anomaly scores and pruning."
        for i in range(6)
    ]
    topic = _topic(
        docs,
        [("reduces", 1.0), ("exponentially", 0.98), ("biased", 0.97), ("pruning", 0.5), ("anomaly", 0.45)],
        keybert=["reduces", "exponentially", "biased"],
    )
    cands = [t for t, _ in candidate_terms(topic)]
    assert not [t for t in cands if {"reduces", "exponentially", "biased"} & set(t.split())], cands
    assert {"pruning", "anomaly scores"} <= set(cands), cands
    parts = make_labels({0: topic})[0].split(" and ")
    assert {"reduces", "exponentially", "biased"}.isdisjoint(parts), parts


def test_a_label_part_must_end_a_phrase_more_than_once():
    # NeurIPS 2018 named a topic of 14 papers "fairness and discriminatory": the word had three
    # uses, two followed by a noun and one at the end of a clause, a share of 0.33 over the
    # modifier limit (0.3) from a single use. "discrimination", which ends a phrase twice in three
    # uses here, still may; so does "parity", used twice and ending a phrase both times.
    docs = [
        "Fair classifiers reduce discriminatory behavior. Discrimination in lending.",
        "Removing discriminatory proxies. Measuring discrimination and parity.",
        "Outcomes are discriminatory. Discrimination audits for credit.",
        "Fairness constraints for ranking. Demographic parity.",
    ]
    cands = _candidates(docs, [("discriminatory", 1.0), ("discrimination", 0.6), ("parity", 0.5)])
    assert "discriminatory" not in cands, cands
    assert {"discrimination", "parity"} <= set(cands), cands


def test_labels_reject_adjectives_in_able_that_the_papers_never_pluralize():
    # "interpretable" named a topic of the NeurIPS keyword proxy ("explanations and interpretable"):
    # it ends a clause in a third of its uses ("models that are more interpretable."), so the
    # modifier check passes it; a word in "-able" that the papers never write in the plural is an
    # adjective. "variable", a noun in "-able" (the papers also write "variables"), stays.
    docs = [
        f"Models that are more interpretable {i}. Interpretable classifiers and explanations. "
        f"Feature explanations for each variable. Rules are less interpretable. Latent variables."
        for i in range(5)
    ]
    cands = _candidates(docs, [("interpretable", 1.0), ("explanations", 0.6), ("variable", 0.5)], ["interpretable"])
    assert "interpretable" not in cands, cands
    assert "explanations" in cands and any("variable" in t for t in cands), cands


def test_labels_reject_an_adverb_with_the_one_word_it_qualifies():
    # "communication and strongly convex" named a topic of ICLR 2020: an adverb in "-ly" qualifies
    # an adjective, a participle or a verb, so two words led by one are no noun phrase, even where
    # they end clauses ("... is strongly convex."), and a word adverbs often qualify is none either
    # ("convex", which then named it). Three words can carry the noun ("weakly supervised
    # learning") and stay.
    docs = [
        f"Communication is costly {i}. The loss is strongly convex. For strongly convex and smooth "
        "objectives. A strong baseline. Weakly supervised learning with weak labels. "
        "Weakly supervised learning helps."
        for i in range(5)
    ]
    cands = _candidates(
        docs, [("strongly convex", 1.0), ("convex", 0.8), ("communication", 0.6), ("weakly supervised", 0.5)]
    )
    assert not {"strongly convex", "convex"} & set(cands), cands
    assert {"communication", "weakly supervised learning"} <= set(cands), cands


def test_a_word_written_mostly_inside_hyphenated_words_is_no_label_on_its_own():
    # ICLR 2019's few-shot topic was "classification and shots": a label's coverage counts a
    # hyphenated word's parts, so "shots" covered every paper writing "few-shot", though they
    # wrote "shot" on its own once. "few-shot learning" is the phrase they use; "agents", written
    # on its own as often as in "multi-agent", stays.
    docs = [
        f"Paper {i} studies few-shot learning of new classes. A zero-shot baseline is weak. Few-shot "
        "classification. Each episode has one shot per class. Agents cooperate in multi-agent systems "
        "with other agents."
        for i in range(5)
    ]
    ctfidf = [("shot", 1.0), ("few-shot learning", 0.8), ("agents", 0.5)]
    cands = _candidates(docs, ctfidf)
    assert not {"shot", "shots"} & set(cands), cands
    assert {"few-shot learning", "agents"} <= set(cands), cands


def test_the_word_for_the_text_itself_is_no_label_on_its_own():
    # IJCAI 2022's topic of logic and argumentation was "logic, reasoning and abstract": its papers
    # from the conference's journal track write "In this extended abstract, we ...". "abstract"
    # names the text, as "paper" does; "abstract argumentation" names a subject and stays.
    docs = [
        f"Paper {i}: in this extended abstract, we summarize logic. Semantics of abstract "
        "argumentation. Abstract argumentation and logic programs. This abstract, in short, reports."
        for i in range(5)
    ]
    cands = _candidates(docs, [("abstract", 1.0), ("abstract argumentation", 0.8), ("logic", 0.6)])
    assert "abstract" not in cands, cands
    assert {"abstract argumentation", "logic"} <= set(cands), cands


def test_a_bracketed_abbreviation_does_not_end_the_phrase_it_stands_in(monkeypatch):
    # "out-of-distribution (OOD) detection": the bracket ended the clause, so "out-of-distribution"
    # read as a noun ending a phrase in three uses of four, and became a label part (NeurIPS 2021's
    # "labels, domain adaptation and out-of-distribution"). With the abbreviation moved out of the
    # way, every use is followed by the noun it qualifies; the abbreviation is still the paper's word.
    from pipeline.model import label_candidates
    from pipeline.model.label_candidates import PhraseStats, topic_text

    docs = [
        f"Paper {i}: out-of-distribution (OOD) detection for images. We flag out-of-distribution (OOD) "
        "samples and out-of-distribution (OOD) inputs. Robust out-of-distribution detection."
        for i in range(5)
    ]
    ctfidf = [("out-of-distribution", 1.0), ("out-of-distribution detection", 0.8), ("images", 0.5)]
    cands = _candidates(docs, ctfidf)
    assert "out-of-distribution" not in cands and "out-of-distribution detection" in cands, cands
    text = PhraseStats(topic_text(docs))
    assert text.doc_share("out-of-distribution detection") == 1.0 and "ood" in text.doc_stems[0]
    monkeypatch.setattr(label_candidates, "ABBREVIATIONS_APART", False)
    assert "out-of-distribution" in _candidates(docs, ctfidf)  # the bracket read as the phrase's end


def test_a_counted_noun_takes_the_number_of_its_uses_as_a_noun():
    # ICLR 2021's graph topic was "graph": its papers write "graph" mostly before another noun
    # ("graph neural networks"), which outnumbered "graphs" more than three to one. As a noun on
    # its own ("on a graph") they write the plural more often, so the label names the things:
    # "graphs". "language" is no noun the papers count (never "a language" on its own): it keeps
    # every use and stays "language", though as a noun on its own "languages" is as frequent.
    from pipeline.model.label_candidates import PhraseStats
    from pipeline.model.labels import _number

    graphs = [
        f"Paper {i}: graph neural networks learn on a graph. Graph classification with graph neural "
        "networks. Message passing on graphs. Graph neural networks scale."
        for i in range(5)
    ]
    language = [
        f"Paper {i}: language models generate natural language. Large language models and language "
        "understanding. Low-resource languages."
        for i in range(5)
    ]
    assert _number([("graph", 1.0), ("graphs", 1.0)], PhraseStats(topic_text(graphs))) == "graphs"
    assert _number([("language", 1.0), ("languages", 1.0)], PhraseStats(topic_text(language))) == "language"


def test_three_parts_are_tried_where_the_best_label_of_two_is_weak():
    # "dynamics and recordings" ranks best but is used by 45% of the topic's papers; "dynamics and
    # brain" is used by 60% but ranks lower ("brain" is written all over the corpus). Three parts
    # name 70% of the papers and rank best; they used to be tried only where no option of two parts
    # reached half of the papers, so the topic kept the weak label.
    import types

    from pipeline.model import labels

    def part(term, papers, rows, start, score):
        used = np.zeros(20, dtype=bool)
        used[list(papers)] = True
        return labels._Part(term, score, used, float(used.mean()), 5.0, np.arange(start, start + rows, dtype=np.int32))

    parts = [
        part("dynamics", range(7), 8, 0, 1.0),
        part("recordings", [0, 1, 2, 7, 8], 6, 100, 0.8),
        part("brain", range(9, 14), 80, 1000, 0.6),
    ]
    scorer = labels._Scorer(types.SimpleNamespace(n=400), 0.05, 400)
    best = labels._label_options(parts, scorer)[0]
    assert (best.label, round(best.coverage, 2)) == ("dynamics, brain and recordings", 0.7), best
    old = labels.THREE_PARTS_BY_BEST
    try:
        labels.THREE_PARTS_BY_BEST = False
        before = labels._label_options(parts, scorer)
    finally:
        labels.THREE_PARTS_BY_BEST = old
    assert before[0].label == "dynamics and recordings" and max(o.coverage for o in before) == 0.6, before
    assert not any(o.label.count(",") for o in before), before
    # the same where the best label of two parts reaches half of the papers but too few of them to
    # be sure (11 of 20: support 0.41, weak): three parts, 14 of 20, are not weak
    parts = [
        part("graphs", range(7), 8, 0, 1.0),
        part("molecules", range(7, 11), 5, 100, 0.8),
        part("proteins", range(11, 14), 4, 1000, 0.6),
    ]
    best = labels._label_options(parts, scorer)[0]
    assert (best.label, round(best.coverage, 2)) == ("graphs, molecules and proteins", 0.7), best
    try:
        labels.THREE_PARTS_BY_BEST = False
        before = labels._label_options(parts, scorer)
    finally:
        labels.THREE_PARTS_BY_BEST = old
    assert (before[0].label, round(before[0].coverage, 2)) == ("graphs and molecules", 0.55), before
    assert not any(o.label.count(",") for o in before), before


def test_labels_reject_a_phrase_that_starts_with_a_verb():
    # "learn visual" (ICLR 2018 once named a topic "images and learn visual") follows "to" or an
    # adverb ("jointly": the papers also write "joint") in every use: a verb and the first word of
    # its object, not a subject; "visual concepts", after "to" in one use of three ("robust to
    # visual concepts"), is a noun.
    docs = [
        f"We propose to learn visual and textual features {i}. Agents jointly learn visual and spatial skills. Models "
        f"robust to visual concepts. Visual concepts in scenes. New visual concepts in a joint model."
        for i in range(6)
    ]
    topic = _topic(docs, [("learn visual", 1.0), ("visual concepts", 0.6)], keybert=["learn visual"])
    cands = [t for t, _ in candidate_terms(topic)]
    assert "learn visual" not in cands and "visual concepts" in cands, cands
    assert "learn visual" not in make_labels({0: topic})[0], make_labels({0: topic})


def test_a_larger_topic_gives_up_a_label_a_smaller_one_needs_more():
    # Larger topics choose first. The larger one here is as well named by "reasoning" (all its
    # papers) as by "language models"; the smaller one has no other label its papers share
    # ("transformers" in half of them), and "language models and transformers" would contain the
    # larger one's words. The repair gives the smaller one its label and the larger one its other.
    from pipeline.model import label_choice

    big = [f"Language models for mathematical reasoning {i}. Reasoning with chains of thought." for i in range(30)]
    small = [f"We train language models on code {i}." for i in range(10)]
    small += [f"We build language models from transformers and attention {i}." for i in range(10)]
    reps = {
        0: TopicTerms([("language models", 0.9), ("reasoning", 0.8)], text=topic_text(big), size=len(big)),
        1: TopicTerms([("language models", 0.9), ("transformers", 0.5)], text=topic_text(small), size=len(small)),
    }
    labels = make_labels(reps, order=[0, 1])
    assert labels == {0: "reasoning", 1: "language models"}, labels
    old = label_choice.REPAIR
    try:
        label_choice.REPAIR = False
        first = make_labels(reps, order=[0, 1])
    finally:
        label_choice.REPAIR = old
    assert first[0] == "language models" and first[1] != "language models", first
    # the exchange stands only when the sizes weigh for it: a larger topic that would lose more
    # than the smaller one gains keeps its label
    reps[0] = TopicTerms(
        [("language models", 0.9), ("reasoning", 0.8)],
        text=topic_text(big[:20] + [f"We scale language models to many tasks {i}." for i in range(20)]),
        size=400,
    )
    assert make_labels(reps, order=[0, 1])[0] == "language models"


def test_a_label_does_not_name_one_subject_twice_in_two_forms():
    # a word and its relative by an ending are one word to the labeller: the second part of
    # "A and B" must add a subject, not repeat the first ("spiking neural networks and spike")
    for a, b in [("spiking neural networks", "spike"), ("medical imaging", "images"), ("layered", "layers")]:
        assert terms_overlap(a, b) and terms_overlap(b, a), (a, b)
    for a, b in [("spiking neural networks", "neurons"), ("tree search", "trends"), ("images", "imitation")]:
        assert not terms_overlap(a, b), (a, b)


def test_labels_expand_acronyms_and_join_two_words():
    nas = [
        f"Neural architecture search (NAS) finds cells {i}. NAS on ImageNet with neural architecture search."
        for i in range(6)
    ]
    # half the papers are about voting rules, half about elections: one word names half of them
    voting = [f"Voters rank candidates by voting, in study {i}." for i in range(6)]
    voting += [f"Elections in districts, in study {i}." for i in range(6)]
    labels = make_labels(
        {
            0: _topic(nas, [("nas", 1.0), ("imagenet", 0.5), ("architecture search", 0.5)]),
            1: _topic(voting, [("voting", 1.0), ("elections", 0.9), ("voters", 0.5)]),
        }
    )
    assert labels[0] == "neural architecture search"
    assert labels[1].split(" and ")[0] in ("voting", "elections") and " and " in labels[1], labels[1]


def test_a_topic_no_one_or_two_parts_describe_is_named_by_three():
    # five subjects, a fifth of the papers each: any two name 40% of them (weak), three name 60%
    subjects = ["pruning", "quantization", "distillation", "sparsity", "caching"]
    docs = [f"Efficient models by {s} of weights, in study {i}." for s in subjects for i in range(10)]
    label = make_labels({0: _topic(docs, [(s, 1.0 - 0.01 * j) for j, s in enumerate(subjects)])})[0]
    first, _, last = label.partition(" and ")
    parts = [p.strip() for p in first.split(",")] + [last]
    assert len(parts) == 3 and set(parts) <= set(subjects), label
    support = label_support(label, _topic(docs, []))
    assert abs(support.used / support.of - 0.6) < 1e-9 and not is_weak(support.value), support
    # two subjects, half the papers each: two parts name them all, no third is added
    two = make_labels({0: _topic(docs[:20], [(s, 1.0 - 0.01 * j) for j, s in enumerate(subjects[:2])])})[0]
    assert two in ("pruning and quantization", "quantization and pruning"), two


def test_a_topic_with_nothing_distinctive_gets_a_plain_non_generic_label():
    label = make_labels({0: TopicTerms([("paper", 0.9), ("method", 0.8)])})[0]
    assert label == "miscellaneous topics" and not is_generic(label)


def test_trends_normalise_by_year_and_never_leak_later_vocabulary():
    texts = ["transformers attention heads"] * 2 + ["kernel machines margin"] * 3 + ["transformers scaling laws"] * 5
    years = pd.Series([2019, 2019, 2019, 2019, 2019, 2023, 2023, 2023, 2023, 2023], dtype="Int16")
    topics = np.array([0, 0, 1, 1, 1, 0, 0, 0, 0, 0])
    dt = doc_terms(texts, min_df=1)
    tr = compute_trends(years, topics, dt)
    assert tr.years.set_index("year")["n_papers"].to_dict() == {2019: 5, 2023: 5}
    ky = tr.keyword_years
    scaling = ky[ky["term"] == "scaling"]
    assert scaling["year"].tolist() == [2023]  # absent, not zero-filled from later years
    tf = ky[(ky["term"] == "transformers")].set_index("year")
    assert tf.loc[2019, "df"] == 2 and tf.loc[2019, "share"] == pytest.approx(0.4)
    assert tf.loc[2023, "share"] == pytest.approx(1.0)
    ty = tr.topic_years.set_index(["topic", "year"])
    assert ty.loc[(0, 2019), "share"] == pytest.approx(0.4)
    assert ty.loc[(1, 2023), "n"] == 0


def test_trends_without_years_are_empty_but_terms_remain():
    dt = doc_terms(["alpha beta gamma", "beta gamma delta"], min_df=1)
    tr = compute_trends(pd.Series([None, None], dtype="Int16"), np.array([0, 0]), dt)
    assert tr.years.empty and tr.keyword_years.empty and tr.topic_years.empty
    assert tr.terms.set_index("term").loc["beta", "df"] == 2


def test_added_papers_keep_the_forms_of_the_terms_and_a_build_before_them_gets_the_terms():
    from scipy import sparse

    from pipeline.analysis.trends import Trends, add_papers
    from pipeline.model.vocab import DocTerms

    texts = ["fast SGD with momentum", "local SGD steps", "momentum helps"]
    years = pd.Series([2020, 2021, 2021], dtype="Int16")
    dt = doc_terms(texts, min_df=1)
    before = compute_trends(years, np.array([0, 0, 0]), dt, {"sgd": "SGD"})
    assert before.terms.set_index("term")["written"].to_dict()["local sgd"] == "local SGD"
    new = np.array([False, False, False, True])
    counts = DocTerms(sparse.csr_matrix((1, len(before.terms))), np.sort(before.terms["term"].to_numpy()))  # no term
    after = add_papers(before, pd.concat([years, pd.Series([2022], dtype="Int16")]), np.zeros(4, int), new, counts)
    assert after.terms.set_index("term")["written"].to_dict() == before.terms.set_index("term")["written"].to_dict()
    old = Trends(before.terms.drop(columns="written"), before.years, before.topic_years, before.keyword_years)
    older = add_papers(old, pd.concat([years, pd.Series([2022], dtype="Int16")]), np.zeros(4, int), new, counts)
    assert (older.terms["written"] == older.terms["term"]).all()


# --- placement -------------------------------------------------------------------------------


def test_placement_helpers():
    corpus = _unit(np.eye(4) + 0.01)
    xy = np.array([[0, 0], [10, 0], [0, 10], [10, 10]], dtype=np.float32)
    dist = topic_distribution(corpus, corpus[:2])
    np.testing.assert_allclose(dist.sum(axis=1), 1, rtol=1e-5)
    assert dist[0].argmax() == 0 and dist[1].argmax() == 1
    idx, sims = nearest(corpus[:2], corpus, 2, exclude=np.array([0, 1]))
    assert 0 not in idx[0] and 1 not in idx[1]
    pos = place_on_map(corpus[3:4], corpus, xy, k=2)
    assert np.linalg.norm(pos[0] - xy[3]) < 3


def test_nearest_ranks_equal_rows_by_row_however_the_queries_are_batched():
    # a matrix product can round two equal rows' similarities apart by where they fall in its
    # blocks; the ranking must not depend on that: equal rows tie, lower row first, in any batch
    rng = np.random.default_rng(0)
    corpus = _unit(rng.normal(size=(600, 48))).astype(np.float32)
    corpus[41] = corpus[300] = corpus[7]
    queries = np.concatenate([corpus[7:8], _unit(rng.normal(size=(60, 48))).astype(np.float32)])
    together = nearest(queries, corpus, 5)
    for i in range(len(queries)):
        alone = nearest(queries[i : i + 1], corpus, 5)
        assert np.array_equal(alone[0][0], together[0][i]) and np.array_equal(alone[1][0], together[1][i])
    assert together[0][0][:3].tolist() == [7, 41, 300] and len(set(together[1][0][:3].tolist())) == 1
    idx, _ = nearest(queries[:1], corpus, 5, exclude=np.array([7]))
    assert idx[0][:2].tolist() == [41, 300]


# --- artifacts -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../etc", "..", "a/b", "", ".hidden", "x" * 65, "a b", "/etc/passwd"])
def test_bad_corpus_names_are_refused(tmp_path, name):
    with pytest.raises(artifacts.ArtifactError):
        artifacts.corpus_path(tmp_path, name)


def test_a_link_leaving_the_artifacts_folder_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    root.mkdir()
    (root / "evil").symlink_to(outside)
    with pytest.raises(artifacts.ArtifactError, match="outside"):
        artifacts.corpus_path(root, "evil")


def _fake_build(root, name, manifest=None):
    folder = artifacts.new_build_dir(root, name)
    artifacts.write_json(folder / schema.MANIFEST, manifest or {"schema_version": schema.SCHEMA_VERSION, "name": name})
    return folder


def test_publish_swaps_builds_and_discarding_removes_only_the_old_one(tmp_path):
    first = _fake_build(tmp_path, "c")
    artifacts.publish(tmp_path, "c", first)
    assert artifacts.corpus_path(tmp_path, "c") == first.resolve()
    second = _fake_build(tmp_path, "c")
    artifacts.publish(tmp_path, "c", second)
    assert artifacts.corpus_path(tmp_path, "c") == second.resolve()
    assert first.exists()  # publishing only swaps: nothing is deleted in the same step
    artifacts.discard_stale_builds(tmp_path, "c")
    assert not first.exists() and artifacts.corpus_path(tmp_path, "c") == second.resolve()


def test_list_corpora_reports_broken_ones_and_keeps_the_rest(tmp_path):
    artifacts.publish(tmp_path, "good", _fake_build(tmp_path, "good"))
    artifacts.publish(tmp_path, "old", _fake_build(tmp_path, "old", {"schema_version": 0}))
    bad = _fake_build(tmp_path, "bad")
    (bad / schema.MANIFEST).write_text("{not json")
    artifacts.publish(tmp_path, "bad", bad)
    entries = {e.name: e for e in artifacts.list_corpora(tmp_path)}
    assert entries["good"].ok
    assert "schema" in entries["old"].error and "Rebuild" in entries["old"].error
    assert "damaged" in entries["bad"].error


def test_build_lock_refuses_a_second_build(tmp_path):
    with (
        artifacts.build_lock(tmp_path, "c"),
        pytest.raises(artifacts.ArtifactError, match="another build"),
        artifacts.build_lock(tmp_path, "c"),
    ):
        pass


def test_read_array_never_unpickles(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(artifacts.ArtifactError, match="damaged"):
        artifacts.read_array(tmp_path, "obj.npy")


def test_write_json_is_atomic_and_readable(tmp_path):
    artifacts.write_json(tmp_path / "m.json", {"a": 1})
    assert json.loads((tmp_path / "m.json").read_text()) == {"a": 1}
    assert not list(tmp_path.glob(".*tmp"))


def _micro_topics(rng, centres, per, scatter):
    """Micro topics as (count, sum of unit embeddings) around the given unit centres."""
    counts, sums = [], []
    for centre, n, s in zip(centres, per, scatter, strict=True):
        x = centre + s * rng.normal(size=(n, len(centre)))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        counts.append(n)
        sums.append(x.sum(axis=0))
    return np.array(counts, dtype=float), np.stack(sums)


def test_the_merge_makes_no_large_topic_looser_than_the_median_one():
    from pipeline.model.cluster_consensus import _spread_of, cap_large

    rng = np.random.default_rng(0)
    dim = 16
    axes = np.eye(dim)
    # micro topics 0-3 lie on four different subjects but the runs often put them together
    # (distance 0.1): the plain merge makes one large, loose topic of them; 4-9 are small and tight.
    centres = [axes[i] for i in range(4)] + [axes[4 + i // 2] for i in range(6)]
    counts, sums = _micro_topics(rng, centres, [60] * 4 + [20] * 6, [0.2] * 4 + [0.05] * 6)
    distance = np.full((10, 10), 0.9)
    distance[:4, :4] = 0.1
    for a in range(4, 10, 2):
        distance[a, a + 1] = distance[a + 1, a] = 0.2
    np.fill_diagonal(distance, 0.0)
    plain = np.array([0, 0, 0, 0, 1, 1, 2, 2, 3, 3])
    total = counts.sum()
    capped = cap_large(plain, distance, 4, counts, sums, 0.3 * total)
    spreads = [_spread_of(counts[capped == g].sum(), sums[capped == g].sum(axis=0)) for g in np.unique(capped)]
    plain_spreads = [_spread_of(counts[plain == g].sum(), sums[plain == g].sum(axis=0)) for g in range(4)]
    for g, spread in zip(np.unique(capped), spreads, strict=True):
        assert counts[capped == g].sum() <= 0.3 * total or spread >= np.median(plain_spreads)
    assert len(set(capped[:4].tolist())) > 1  # the four subjects are not one topic
    assert len(np.unique(capped[4:])) == 3 and all(capped[a] == capped[a + 1] for a in range(4, 10, 2))
    # nothing large and loose: the merge is the plain one
    np.testing.assert_array_equal(cap_large(plain, distance, 4, counts, sums, 1.0 * total), plain)


def test_ward_merge_of_weighted_points_is_wards_method_on_the_papers():
    """A micro topic of n papers weighs as n papers at one point: the merge is scipy's Ward on the
    points repeated n times (each point's copies stay together), and unweighted it is scipy's Ward."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from sklearn.metrics import adjusted_rand_score

    from pipeline.model.cluster_consensus import ward_merge

    rng = np.random.default_rng(3)
    points = np.concatenate([rng.normal(loc=c, scale=0.6, size=(8, 5)) for c in (0.0, 2.0, 4.0, 6.0)])
    ones = np.ones(len(points))
    for k in (2, 3, 4, 6):
        theirs = fcluster(linkage(points, method="ward"), k, criterion="maxclust")
        ours = ward_merge(points, ones, k)
        assert len(np.unique(ours)) == k and adjusted_rand_score(theirs, ours) == 1.0, k
    sizes = rng.integers(1, 6, size=len(points))
    repeated = np.repeat(points, sizes, axis=0)
    for k in (2, 3, 5):
        theirs = fcluster(linkage(repeated, method="ward"), k, criterion="maxclust")
        ours = ward_merge(points, sizes.astype(float), k)
        assert adjusted_rand_score(theirs, np.repeat(ours, sizes)) == 1.0, k


def test_ward_merge_weighs_papers_and_breaks_ties_by_order():
    from pipeline.model.cluster_consensus import ward_merge

    # two near points and a far one: alone, the near ones merge; weighing 100 papers each, merging
    # them costs more than taking the far single paper in (Ward keeps large groups apart)
    line = np.array([[0.0], [1.0], [3.0]])
    assert ward_merge(line, np.ones(3), 2).tolist() == [0, 0, 1]
    assert ward_merge(line, np.array([100.0, 100.0, 1.0]), 2).tolist() == [0, 1, 1]
    # equal costs everywhere: the first pair merges first, on every processor
    square = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert ward_merge(square, np.ones(4), 3).tolist() == [0, 0, 1, 2]
    assert ward_merge(square, np.ones(4), 1).tolist() == [0, 0, 0, 0]


def test_ward_merge_makes_no_group_above_its_size_limit():
    """The limit skips a merge that would make too heavy a group and takes the next cheapest; below
    the limit, or without one, the merge is Ward's as before."""
    from pipeline.model.cluster_consensus import ward_merge

    # four groups on a line, the two middle ones close: Ward's joins them first, then takes the
    # left one in (a tie with the right one: the first pair first); with a limit of 40 papers the
    # middle group cannot grow, and the two outer ones join instead
    line = np.array([[0.0], [10.0], [11.0], [21.0]])
    sizes = np.array([10.0, 20.0, 20.0, 10.0])
    assert ward_merge(line, sizes, 2).tolist() == [0, 0, 0, 1]
    assert ward_merge(line, sizes, 2, max_size=40.0).tolist() == [0, 1, 1, 0]  # the outer ones join
    # a limit no merge reaches changes nothing
    assert ward_merge(line, sizes, 2, max_size=60.0).tolist() == ward_merge(line, sizes, 2).tolist()
    # a limit nothing can meet: the merge stops with more groups than asked, never a heavier one
    assert len(np.unique(ward_merge(line, sizes, 1, max_size=40.0))) == 2


def test_the_size_limit_never_stops_a_merge_to_few_topics():
    """Asked for 2 topics, four micro topics of 10 papers each become two of 20 (50%, above the
    quarter the limit allows a topic of a conference-sized clustering)."""
    from pipeline.model.cluster_consensus import GIANT_SHARE, merge_by_agreement

    assert GIANT_SHARE is not None and GIANT_SHARE < 0.5
    micro = np.repeat(np.arange(4), 10)
    final = np.repeat(np.arange(2), 20)  # the runs put micro topics 0 and 1, and 2 and 3, together
    merged = merge_by_agreement(micro, [final, final, final], 2)
    assert len(np.unique(merged)) == 2
    assert (merged[:20] == merged[0]).all() and (merged[20:] == merged[20]).all()


def test_labels_are_written_as_their_papers_write_them_inside_a_sentence():
    # the vectorizer's terms are lower case: "distributed sgd", "gaussian processes", "vlms"
    from pipeline.model.label_case import written_forms, written_label
    from pipeline.model.label_evidence import label_parts

    texts = [
        "We train with distributed SGD and Gaussian processes on VLMs.",
        "Compression for distributed SGD. Graphs help. Graphs matter here.",  # "Graphs" opens sentences
        "Local SGD and gaussian processes, then graphs of VLMs.",
        "Sparse Gaussian processes scale.",
    ]
    forms = written_forms(texts)
    assert forms == {"sgd": "SGD", "gaussian": "Gaussian", "vlms": "VLMs"}
    label = "graphs, distributed sgd and gaussian processes"
    assert written_label(label, forms) == "graphs, distributed SGD and Gaussian processes"
    assert written_label("vlms", forms) == "VLMs"
    # only the case changes: a label's measures read it in lower case
    assert label_parts(written_label(label, forms)) == label_parts(label)
    # a form half of the uses have is not enough ("Transformer" once, "transformer" once)
    assert written_forms(["a Transformer block", "a transformer block"]) == {}
    # word by word: the capitals of an abbreviated phrase stay with its name
    mdps = [
        "we solve Markov Decision Processes (MDPs)",
        "a decision rule, a Markov chain",
        "a Markov process, a decision",
    ]
    assert written_label("markov decision processes", written_forms(mdps)) == "Markov decision processes"
    # one paper's style is not the corpus's: a form needs two papers
    assert written_forms(["with Ethical AI and Ethical AI again", "an AI view, ethical or not"]) == {"ai": "AI"}
    assert written_forms(["with Ethical AI", "an Ethical view", "ethical or not"]) == {"ethical": "Ethical"}
    # the bracket may follow without a space, and the phrase's words count only right after a word
    assert written_forms(["in Markov Decision Processes(MDPs)", "a decision"]) == {}
    assert written_forms(["a Decision here", "(x) Decision (y)", "the Decision"]) == {"decision": "Decision"}
    assert written_forms(["in Markov Decision Processes (MDPs)", "a Markov chain", "the Markov property"]) == {
        "markov": "Markov"  # the abbreviated phrase's paper does not count for its words
    }


def test_the_forms_are_read_without_the_papers_titles_even_where_a_title_ends_a_sentence():
    # title case is a style: a paper's own title is no evidence of how the corpus writes a word,
    # and a title may hold a question or a full stop ("Are GANs Created Equal? A Large-Scale Study")
    from pipeline.model.label_case import corpus_forms

    title = "Are Deep Nets Created Equal? A Study of Wide Nets"
    docs = [
        f"{title} We compare deep nets at scale.",
        "Deep Nets Made Simple. We train Wide Nets on a Large-Scale benchmark.",
        "Another Title. A Large-Scale test with Large-Scale data.",
    ]
    titles = [title, "Deep Nets Made Simple", "Another Title"]
    # "Wide Nets" is written so by one abstract and one title's second sentence: no form
    assert corpus_forms(docs, titles) == {"large-scale": "Large-Scale"}
    assert corpus_forms(docs, None)["wide"] == "Wide"  # read with the titles, it would have one
    # a text that does not start with its title as given (cleaned otherwise) ends it at its first
    # sentence end
    cleaned = ["Cleaned Title. We use Wide Nets.", "Cleaned Title. We use Wide Nets too."]
    assert corpus_forms(cleaned, ["Cleaned  Title"] * 2) == {"wide": "Wide", "nets": "Nets"}


def test_the_forms_of_words_are_the_same_however_the_texts_are_read():
    # the forms are counted over all texts at once (abbreviations read backwards, for speed); the
    # same rule read one use at a time, forwards, gives the same forms
    import re
    from collections import Counter

    from pipeline.model.label_case import written_forms

    texts = [
        "We use Markov Decision Processes (MDPs) and SGD. Then SGD again, with sgd-style Adam (Kingma).",
        "the Adam optimiser, an adam variant, a Gaussian Process (GP) prior; x-Ray (see) data, by SGD",
        "Deep Q-Networks (DQN) beat the Atari suite, with Q-learning and Deep learning, a BERT model",
        "numbers 4 and 3D scenes, 3D Vision (3DV); the BERT model's BERT-base and BERT, a Markov chain",
        "a 3D scene, (an) Adam step, the Atari suite",
    ]
    uses: Counter = Counter()
    papers: dict = {}
    for i, text in enumerate(texts):
        for m in re.finditer(r"(?<![\w'-])[\w'-]+", text):
            if re.search(r"\w +$", text[: m.start()]) and not re.match(r"(?: [A-Z][\w'-]*)* ?\(", text[m.end() :]):
                uses[m.group(0)] += 1
                papers.setdefault(m.group(0), set()).add(i)
    expected = {}
    for word in {form.lower() for form in uses if not form.islower()}:
        counts = {form: n for form, n in uses.items() if form.lower() == word}
        form, count = min(counts.items(), key=lambda item: (-item[1], item[0]))
        if word.islower() and not form.islower() and 2 * count > sum(counts.values()) and len(papers[form]) >= 2:
            expected[word] = form
    assert written_forms(texts) == expected
    assert expected["sgd"] == "SGD" and expected["bert"] == "BERT" and expected["3d"] == "3D"
    assert "markov" not in expected and "atari" in expected and "deep" not in expected


def test_a_papers_title_is_no_evidence_of_how_it_writes_a_word():
    from pipeline.model.label_case import corpus_forms

    docs = ["Learning With Graph Kernels. We study graph kernels.", "On Graph Kernels. Graph kernels, again."]
    assert corpus_forms(docs, ["Learning With Graph Kernels", "On Graph Kernels"]) == {}
    # read as abstracts, the titles' "With Graph Kernels" would name it
    assert corpus_forms(["We use Graph Kernels", "with Graph Kernels"], None) == {
        "graph": "Graph",
        "kernels": "Kernels",
    }
