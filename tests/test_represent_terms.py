"""The relevance slider's topic terms, computed sparse, are the dense computation's exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

from pipeline.model import vocab
from pipeline.model.represent import _topic_terms
from pipeline.model.vocab import DocTerms


def _dense_topic_terms(topic_ids, doc_topics, dt, ctfidf, ctfidf_terms, n_terms):
    """The former implementation: a dense (topics x terms) matrix of counts."""
    vocab = dt.vocabulary
    rows_of = np.array([topic_ids.index(t) for t in doc_topics])
    topic_counts = np.zeros((len(topic_ids), dt.counts.shape[1]))
    np.add.at(topic_counts, rows_of, dt.counts.toarray())
    corpus_counts = topic_counts.sum(axis=0)
    total = corpus_counts.sum() or 1.0
    col_of = np.array([vocab.get(t, -1) for t in ctfidf_terms.tolist()])
    rows = []
    for i, topic in enumerate(topic_ids):
        weights = ctfidf[i].toarray().ravel()
        by_weight = np.argsort(-weights, kind="stable")[:n_terms]
        by_weight = by_weight[weights[by_weight] > 0]
        cols = [c for c in col_of[by_weight] if c >= 0]
        by_count = np.argsort(-topic_counts[i], kind="stable")[:n_terms]
        by_count = by_count[topic_counts[i][by_count] > 0]
        weight_of = {col_of[j]: weights[j] for j in by_weight if col_of[j] >= 0}
        topic_total = topic_counts[i].sum() or 1.0
        for c in dict.fromkeys(cols + by_count.tolist()):
            n = topic_counts[i, c]
            rows.append(
                (topic, dt.terms[c], float(weight_of.get(c, 0.0)), int(n), n / topic_total, corpus_counts[c] / total)
            )
    columns = ["topic", "term", "ctfidf", "count", "p_topic", "p_corpus"]
    return pd.DataFrame(rows, columns=columns).astype({"topic": "int32", "count": "int32"})


def test_sparse_topic_terms_equal_the_dense_ones_ties_included():
    rng = np.random.default_rng(0)
    n_docs, n_terms = 300, 400
    counts = sparse.random(n_docs, n_terms, density=0.05, random_state=1, data_rvs=lambda k: rng.integers(1, 4, k))
    dt = DocTerms(
        sparse.csr_matrix(counts, dtype=np.int32), np.array([f"t{i:03d}" for i in range(n_terms)], dtype=object)
    )
    topic_ids = [0, 1, 2, 5]
    doc_topics = rng.choice(topic_ids, size=n_docs)
    ctfidf = sparse.random(len(topic_ids), n_terms, density=0.1, random_state=2, format="csr")
    ctfidf.data = np.round(ctfidf.data, 1)  # ties in weight too
    terms = dt.terms[rng.permutation(n_terms)]
    for n in (5, 50, 1000):
        got = _topic_terms(topic_ids, doc_topics, dt, ctfidf, terms, n)
        pd.testing.assert_frame_equal(got, _dense_topic_terms(topic_ids, doc_topics, dt, ctfidf, terms, n))


def test_terms_are_phrases_the_papers_write():
    """No two-word term joins words a stop word or punctuation stands between; single words and
    their counts are scikit-learn's (ICML 2024: 29% of its two-word terms were such joins)."""
    docs = [
        "Large language models (LLMs) reason with chain of thought prompting.",
        "Chain of thought prompting helps large language models. Images, language and video.",
        "We train deep neural networks; neural networks generalise - sometimes.",
        "Deep neural networks and self-supervised learning of images.",
        "An encoder/decoder with 10% more $x$-noise.",
    ]
    terms = vocab.doc_terms(docs, min_df=1)
    got = set(terms.terms.tolist())
    assert {"thought prompting", "deep neural", "neural networks", "self-supervised learning"} <= got
    joined_up = (
        "language llms",
        "chain thought",
        "images language",
        "language video",
        "networks neural",
        "encoder decoder",
    )
    for joined in joined_up:
        assert joined not in got
    # every two-word term occurs as written, word after word, in some paper
    written = " | ".join(d.lower() for d in docs)
    assert all(t in written for t in got if " " in t)
    # single words: the same terms and counts as scikit-learn's vectorizer with the same settings
    plain = CountVectorizer(
        lowercase=True, stop_words=vocab.stop_words(), token_pattern=vocab.TOKEN_PATTERN, ngram_range=(1, 1)
    )
    counts = plain.fit_transform(docs)
    ours = [terms.vocabulary[w] for w in plain.get_feature_names_out() if vocab.keeps_token(w)]
    theirs = [i for i, w in enumerate(plain.get_feature_names_out()) if vocab.keeps_token(w)]
    assert (terms.counts[:, ours] != counts[:, theirs]).nnz == 0
    # longer n-grams follow the same rule
    analyse = vocab.make_vectorizer(ngram_range=(1, 3)).build_analyzer()
    assert "deep neural networks" in analyse("We train deep neural networks.")
    assert "language llms" not in analyse("large language models (LLMs)")
    assert analyse("models and methods, we propose") == []


def test_keywords_hold_one_form_of_each_term_and_fill_from_the_ranking():
    from pipeline.model.keywords import topic_keywords
    from pipeline.model.label_words import one_form_each, term_key

    # the forms of one term share a key; other terms do not
    assert term_key("images") == term_key("image") and term_key("LLMs") == term_key("llm")
    assert term_key("neural networks") == term_key("neural network") == term_key("neural-network")
    assert term_key("time-series") == term_key("time series") != term_key("series")
    assert term_key("graph neural") != term_key("graph neural networks")  # a longer term is another term
    assert one_form_each(["image", "vision", "images", "video", "Image"], 3) == [0, 1, 3]
    assert one_form_each(["a", "b"], 5) == [0, 1]

    terms = np.array(["image", "images", "video", "vision", "scene", "scenes", "object"], dtype=object)
    ctfidf = sparse.csr_matrix(
        np.array(
            [
                [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3],  # two forms of "image" among the top 3
                [0.0, 0.0, 0.9, 0.8, 0.0, 0.0, 0.7],  # no second form
            ]
        )
    )
    counts = pd.DataFrame({"topic": [0] * 7 + [1] * 3, "term": [*terms, "video", "vision", "object"], "count": 1})
    rows = [
        {"topic": 0, "keywords": ["image", "images", "video"], "keyword_weights": [0.9, 0.8, 0.7]},
        {"topic": 1, "keywords": ["video", "vision", "object"], "keyword_weights": [0.9, 0.8, 0.7]},
    ]
    out = topic_keywords(rows, ctfidf, terms, counts, 3)
    assert out[0]["keywords"] == ["image", "video", "vision"]  # the next term takes the place
    assert out[0]["keyword_weights"] == [0.9, 0.7, 0.6] and out[0]["topic"] == 0
    assert out[1] == {**rows[1], "keyword_terms": rows[1]["keywords"]}  # a list that needs no change stays
    assert rows[0]["keywords"] == ["image", "images", "video"]  # the input is not changed
    # a topic whose ranking runs out keeps what it has
    short = topic_keywords(
        [{"topic": 0, "keywords": ["scene", "scenes"], "keyword_weights": [0.5, 0.4]}],
        sparse.csr_matrix(np.array([[0, 0, 0, 0, 0.5, 0.4, 0]])),
        terms,
        counts,
        3,
    )
    assert short[0]["keywords"] == ["scene"]


def test_a_keyword_its_list_holds_in_a_longer_one_in_most_of_its_uses_gives_its_place():
    from pipeline.model.keywords import keyword_list, part_of_another

    uses = {"series": 100, "time series": 92, "time": 150, "forecasting": 60, "graph": 100, "graph neural": 30}
    count = uses.get
    # "series" is written as the end of "time series" in 92 of 100 uses (more than PREFIX_SHARE)
    assert part_of_another("series", ["time series", "series"], count)
    # "time" starts "time series" in 92 of 150 uses (more than half)
    assert part_of_another("time", ["time series"], count)
    # "graph" starts "graph neural" in 30 of 100: a keyword of its own
    assert not part_of_another("graph", ["graph neural"], count)
    assert not part_of_another("time series", ["time", "series"], count)  # only longer terms hold one
    assert not part_of_another("unseen", ["unseen data"], lambda t: 0.0)  # no uses counted: kept
    ranked = [("time series", 0.9), ("series", 0.8), ("time", 0.7), ("forecasting", 0.6), ("graph", 0.5)]
    assert keyword_list(ranked, count, 3) == [("time series", 0.9), ("forecasting", 0.6), ("graph", 0.5)]
    # only a longer term of the list itself holds one: "neural networks" ranked below the list is none
    ranked = [("neural", 0.9), ("networks", 0.85), ("neural networks", 0.8), ("deep", 0.7), ("deep learning", 0.6)]
    ranked += [("layer", 0.5)]
    wide = {"neural": 10, "networks": 10, "neural networks": 8, "deep": 10, "deep learning": 8, "layer": 5}.get
    assert keyword_list(ranked, wide, 2) == [("neural", 0.9), ("networks", 0.85)]
    # a term that comes in to fill a place may hold one that came in before it: that one goes too
    assert keyword_list(ranked, wide, 3) == [("neural networks", 0.8), ("deep learning", 0.6), ("layer", 0.5)]


def test_a_keyword_is_written_as_the_phrase_its_papers_write_it_in():
    from pipeline.model.keywords import keyword_list, phrase_of, same_phrase, topic_keywords
    from pipeline.model.label_candidates import topic_text

    docs = [
        "We study time series forecasting with graph neural networks.",
        "Multivariate time series forecasting is hard; graph neural networks help.",
        "A benchmark for time series forecasting and anomaly detection.",
        "Long horizon time series forecasting with transformers and graph neural networks.",
        "Anomaly detection in sensors, and anomaly scores.",
    ]
    written = phrase_of(topic_text(docs))
    assert written("series forecasting") == "time series forecasting"  # "time" before it in 4 of 4
    assert written("graph neural") == "graph neural networks"  # "networks" after it in 3 of 3
    assert written("neural networks") == "graph neural networks"
    assert written("anomaly") == "anomaly"  # "detection" after it in 2 of its 3 uses: too few to complete
    assert written("unseen words") == "unseen words"  # never written: the term itself
    one = [*docs, "Our solver: exact dynamic programming algorithms. Dynamic programming algorithms, "
           "and faster dynamic programming algorithms."]  # fmt: skip
    assert phrase_of(topic_text(one))("dynamic programming") == "dynamic programming"  # one paper's phrase only
    assert phrase_of(topic_text([*one, "Dynamic programming algorithms again."]))("dynamic programming") == (
        "dynamic programming algorithms"  # two papers write it
    )
    assert phrase_of(None)("graph neural") == "graph neural"  # no text: the term itself
    assert phrase_of("")("graph neural") == "graph neural"
    # two terms written as one phrase are one keyword: the later gives its place to the next term
    assert same_phrase(["graph neural", "forecasting", "neural networks"], written) == {"neural networks"}
    ranked = [("graph neural", 0.9), ("series forecasting", 0.8), ("neural networks", 0.7), ("anomaly", 0.6)]
    uses = {"graph neural": 3, "series forecasting": 4, "neural networks": 3, "anomaly": 3}.get
    kept = keyword_list(ranked, uses, 3, written)
    assert kept == [("graph neural", 0.9), ("series forecasting", 0.8), ("anomaly", 0.6)]
    assert keyword_list(ranked, uses, 3) == ranked[:3]  # without phrases both stay

    terms = np.array([t for t, _ in ranked], dtype=object)
    ctfidf = sparse.csr_matrix(np.array([[0.9, 0.8, 0.7, 0.6]]))
    counts = pd.DataFrame({"topic": 0, "term": terms, "count": [3, 4, 3, 3]})
    row = {"topic": 0, "keywords": [t for t, _ in ranked[:3]], "keyword_weights": [0.9, 0.8, 0.7]}
    out = topic_keywords([row], ctfidf, terms, counts, 3, {0: topic_text(docs)})[0]
    assert out["keywords"] == ["graph neural networks", "time series forecasting", "anomaly"]
    assert out["keyword_terms"] == ["graph neural", "series forecasting", "anomaly"]  # the terms behind them
    assert out["keyword_weights"] == [0.9, 0.8, 0.6]  # each keyword weighs what its term weighs
    assert topic_keywords([row], ctfidf, terms, counts, 3)[0]["keywords"] == [
        "graph neural",
        "series forecasting",
        "neural networks",
    ]


def test_a_term_left_out_as_a_part_does_not_take_the_longer_term_with_it():
    from pipeline.model.keywords import keyword_list

    # "reinforcement" ranks first and is written "reinforcement learning", as that term is; it is
    # left out as a part of it, and the longer term keeps its place (not left out as a second phrase)
    written = {"reinforcement": "reinforcement learning"}.get
    ranked = [("reinforcement", 0.9), ("reinforcement learning", 0.8), ("policy", 0.7), ("reward", 0.6)]
    uses = {"reinforcement": 10, "reinforcement learning": 9, "policy": 5, "reward": 4}.get
    kept = keyword_list(ranked, uses, 3, lambda t: written(t) or t)
    assert kept == [("reinforcement learning", 0.8), ("policy", 0.7), ("reward", 0.6)]
