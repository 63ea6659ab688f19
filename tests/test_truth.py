"""What the screen says must be true (issue 14, and issue 13's one-year corpora): labels their
evidence supports, a paper's fit that means something, trends that are not common words, measures
hidden where a corpus is too small for them, periods and queries a link cannot silently change.

Constructed cases for the mechanisms (they do not depend on today's clustering), the fixture build
for the stored columns, and AppTest for what each page says. Browser checks of the same pages are in
tests/test_truth_browser.py.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from explorer.services import analysis
from explorer.state import data, state, tours
from explorer.state.filters import Filters, apply
from pipeline.core import artifacts, schema
from pipeline.ingest.clean import CLEAN_VERSION
from pipeline.model import background
from pipeline.model.label_candidates import TopicTerms, topic_text
from pipeline.model.label_choice import make_labels
from pipeline.model.label_evidence import (
    SUPPORT_DIGITS,
    WEAK_MARK,
    WEAK_SUPPORT,
    is_weak,
    label_support,
    shown_label,
    shown_support,
    wilson_lower,
)
from pipeline.model.vocab import VOCAB_VERSION
from tests.test_pages import plotly_specs, qp, run, texts, unescape

# ------------------------------------------------------------------------------------------
# Labels against their evidence
# ------------------------------------------------------------------------------------------


def _topic(docs, ctfidf, keybert=(), mmr=()):
    return TopicTerms(list(ctfidf), list(keybert), list(mmr), topic_text(docs))


PRUNING = [
    f"Network pruning removes weights {i}. We prune filters of convolutional networks with a saliency score."
    for i in range(18)
] + ["Pruning with gradient descent on a sparsity penalty.", "Training by gradient descent, then magnitude pruning."]
PRUNING_TERMS = [("pruning", 1.0), ("neural networks", 0.8), ("filters", 0.6), ("weights", 0.5), ("sparsity", 0.3)]


def test_support_is_low_for_a_label_its_keywords_and_papers_do_not_use():
    topic = _topic(PRUNING, PRUNING_TERMS)
    wrong = label_support("gradient descent", topic)
    right = label_support("network pruning", topic)
    assert wrong.keywords == 0.0 and wrong.used == 2 and wrong.of == 20
    assert wrong.value < 0.1 < right.value  # the share of the topic's papers using its words (lower bound)
    assert wrong.value < WEAK_SUPPORT <= right.value
    assert right.used == 18 and right.keywords == 1.0  # two papers say "pruning" without "network"


def test_the_labeller_prefers_a_supported_label_to_a_keybert_phrase_few_papers_write():
    # KeyBERTInspired ranks "gradient descent" first (close to the topic's embedding), but the
    # topic's keywords are about pruning and 2 of its 20 papers mention gradient descent.
    topic = _topic(PRUNING, PRUNING_TERMS, keybert=["gradient descent", "pruning", "sparsity"])
    label = make_labels({0: topic})[0]
    assert "gradient descent" not in label and "prun" in label, label
    assert not is_weak(label_support(label, topic).value)


def test_a_grab_bag_topic_keeps_a_label_marked_weak():
    # The bundled corpus's "supervised fine-tuning" topic: ten papers on ten subjects.
    docs = [
        "nnTrace detects silent bugs in distributed training.",
        "haphazard: a library for reproducible benchmarking of haphazard inputs.",
        "A benchmark is not merely a collection of test questions.",
        "When to propagate newly released model versions to downstream users.",
        "Diffusion interface denoising at the item level for recommendation.",
        "DrWatson: AI-driven hardware diagnosis.",
        "Modern pipelines for language model agents begin with supervised fine-tuning.",
        "Scaling has been the central driver of progress in AI.",
        "Online data selection driven by per-sample scores.",
        "Agents built on large language models rely on reliability checks.",
    ]
    topic = _topic(
        docs,
        [("ai", 1.0), ("update", 0.9), ("item", 0.8), ("nntrace", 0.7), ("haphazard", 0.6), ("bugs", 0.5)],
        keybert=["supervised fine-tuning", "distributed training"],
    )
    label = make_labels({0: topic})[0]
    support = label_support(label, topic).value
    # whatever names one or two of ten papers on ten subjects is weak, and shown so
    assert label_support(label, topic).used <= 2 and is_weak(support), (label, support)
    assert shown_label(label, support) == label + WEAK_MARK


def test_support_is_a_share_of_the_topics_papers_one_can_be_sure_of_and_weak_below_half():
    # "cancer and disease" in a six-paper topic: two of its papers use either word.
    docs = ["Cell-free DNA for cancer detection.", "Ancestry and disease risk."] + [
        "Tabular foundation models.",
        "Conformal sets for cluster labels.",
        "The partition function of a quantum spin Hamiltonian.",
        "A criterion equivalent to the edgewise criterion for linear structural causal models.",
    ]
    topic = _topic(docs, [("ancestry", 1.0), ("disease", 0.9), ("cancer", 0.8), ("tabular", 0.7)])
    support = label_support("cancer and disease", topic)
    assert support.keywords == 1.0 and support.used == 2 and support.of == 6
    assert is_weak(support.value)
    # every word of a part must be there: "quantum spin" needs both, plurals folded
    assert label_support("quantum spins", topic).used == 1
    assert label_support("spin glasses", topic).used == 0
    assert WEAK_SUPPORT == 0.5 and is_weak(0.49) and not is_weak(0.5)
    # 6 of 9 papers is weaker evidence than 150 of 250: the support is the share's lower bound
    assert wilson_lower(6, 9) < WEAK_SUPPORT < wilson_lower(150, 250) < 0.6


def test_each_part_of_a_joined_label_must_be_used():
    docs = ["Voting rules and elections."] * 5 + ["Voters rank candidates in elections."] * 5
    topic = _topic(docs, [("voting", 1.0), ("elections", 0.9), ("voters", 0.5), ("candidates", 0.4)])
    assert not is_weak(label_support("voting and elections", topic).value)
    side = _topic(docs + ["Rare words about auctions."], [("voting", 1.0), ("elections", 0.9), ("auctions", 0.3)])
    # auctions is one paper's subject: the label claims it for the topic, its support is capped
    assert is_weak(label_support("elections and auctions", side).value)


def test_the_build_stores_label_support_and_the_app_marks_weak_labels(small_artifacts):
    folder = artifacts.corpus_path(small_artifacts, "small")
    stored = pd.read_parquet(folder / schema.TOPICS)
    assert "label_support" in stored and stored["label_support"].between(0, 1).all()
    corpus = data.load_corpus(small_artifacts, "small")
    for raw, support, shown in zip(
        stored["label"], stored["label_support"], corpus.tables.topics["label"], strict=True
    ):
        assert shown == (raw + WEAK_MARK if round(support, 2) < WEAK_SUPPORT else raw)
        assert corpus.topic_label(int(stored.loc[stored["label"] == raw, "topic"].iat[0])) == shown


def test_the_weak_flag_is_decided_on_the_support_as_shown(small_artifacts, tmp_path, monkeypatch):
    """A support of 0.496 is shown as 0.50 and so is not flagged below a cut of 0.5; 0.494 is
    shown as 0.49 and is: the number on the page and the mark never disagree."""
    assert WEAK_SUPPORT == 0.5 and SUPPORT_DIGITS == 2
    assert (f"{shown_support(0.496):.2f}", is_weak(0.496)) == ("0.50", False)
    assert (f"{shown_support(0.5):.2f}", is_weak(0.5)) == ("0.50", False)
    assert (f"{shown_support(0.494):.2f}", is_weak(0.494)) == ("0.49", True)
    assert not is_weak(float("nan"))
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), tmp_path / "small")
    topics = pd.read_parquet(tmp_path / "small" / schema.TOPICS)
    topics["label_support"] = [0.496, 0.494] + [0.9] * (len(topics) - 2)
    topics.to_parquet(tmp_path / "small" / schema.TOPICS, index=False)
    for pos, value, weak in ((0, "0.50", False), (1, "0.49", True)):
        topic, label = int(topics["topic"].iat[pos]), topics["label"].iat[pos]
        at = run(tmp_path, monkeypatch, "pages/topics.py", corpus="small", topic=str(topic))
        assert not at.exception
        assert next(m.value for m in at.metric if m.label == "Label support") == value
        heading = unescape(texts(at.header))
        assert label in heading and (label + WEAK_MARK in heading) == weak
        assert (f"support {value})" in unescape(texts(at.caption))) == weak


def test_the_map_page_says_what_the_weak_mark_means_when_a_label_carries_it(small_artifacts, tmp_path, monkeypatch):
    """A "(?)" in the map's legend is explained beside the map, with how many labels carry it and
    what the number behind it is; with no weak label there is nothing to explain."""
    source = artifacts.corpus_path(small_artifacts, "small")
    topics = pd.read_parquet(source / schema.TOPICS)
    cases = {"weak": [0.3, 0.45] + [0.9] * (len(topics) - 2), "sure": [0.9] * len(topics)}
    for name, support in cases.items():
        shutil.copytree(source, tmp_path / name)
        topics.assign(label_support=support).to_parquet(tmp_path / name / schema.TOPICS, index=False)
    weak = unescape(texts(run(tmp_path, monkeypatch, "pages/map.py", corpus="weak").caption))
    assert "(?) marks 2 weak labels:" in weak and "lower bound of an 80% confidence interval" in weak, weak
    sure = unescape(texts(run(tmp_path, monkeypatch, "pages/map.py", corpus="sure").caption))
    assert "(?)" not in sure and "weak label" not in sure, sure


def test_a_build_without_label_support_still_opens(small_artifacts, tmp_path):
    root = tmp_path / "art"
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), root / "small")
    topics = pd.read_parquet(root / "small" / schema.TOPICS).drop(columns="label_support")
    topics.to_parquet(root / "small" / schema.TOPICS, index=False)
    corpus = data.load_corpus(root, "small")
    assert (
        corpus.tables.topics["label_support"].isna().all()
        and not corpus.tables.topics["label"].str.endswith(WEAK_MARK).any()
    )


# ------------------------------------------------------------------------------------------
# A paper's fit, and when its topic and its distribution disagree
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(small_artifacts):
    return data.load_corpus(small_artifacts, "small")


def test_neighbour_topics_are_the_topics_of_the_most_similar_papers(corpus):
    rows = [0, 5]
    near = analysis.neighbour_topics(corpus, rows, 10)
    assert near.shape == (2, 10)
    emb = np.asarray(corpus.embeddings)
    for row, topics in zip(rows, near, strict=True):
        sims = emb @ emb[row]
        sims[row] = -np.inf
        expected = corpus.papers["topic"].to_numpy()[np.argsort(-sims, kind="stable")[:10]]
        assert topics.tolist() == expected.tolist()


@pytest.fixture(scope="module")
def disagreeing(small_artifacts, tmp_path_factory):
    """A copy of the fixture build where paper row 3's abstract lies closest to another topic's
    embedding than to its own (as BourGAN's does on NeurIPS: clustering says topic 7, its abstract
    topic 19): its embedding is that topic's. (root, row, first, cosine to its own topic)."""
    root = tmp_path_factory.mktemp("disagree")
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), root / "small")
    path = root / "small" / schema.EMBEDDINGS
    emb = np.load(path)
    t_emb = np.load(root / "small" / schema.TOPIC_EMBEDDINGS)
    papers = pd.read_parquet(root / "small" / schema.PAPERS).sort_values("row")
    topics = pd.read_parquet(root / "small" / schema.TOPICS)["topic"].to_numpy()
    row = 3
    own = int(np.flatnonzero(topics == papers["topic"].iat[row])[0])
    other = (own + 1) % len(topics)
    emb[row] = t_emb[other]
    np.save(path, emb.astype(np.float32), allow_pickle=False)
    return root, row, int(topics[other]), float(t_emb[other] @ t_emb[own])


def test_the_paper_page_says_why_its_topic_and_its_abstracts_closest_topic_differ(disagreeing, monkeypatch):
    root, row, first, own_cosine = disagreeing
    corpus = data.load_corpus(root, "small")
    doc = corpus.papers["doc_id"].iat[row]
    topic = int(corpus.papers["topic"].iat[row])
    at = run(root, monkeypatch, "pages/paper.py", corpus="small", paper=doc)
    captions = unescape(texts(at.caption))
    assert f"Why it is in topic {topic} and not {first}" in captions
    assert "most similar papers are in this topic" in captions
    assert "fit " not in captions  # the softmax probability is no longer called a fit
    spec = next(s for s in plotly_specs(at) if "Closest topics" in s["layout"].get("title", {}).get("text", ""))
    names = spec["data"][0]["y"]
    assert sum(n.startswith(f"<b>▶ {topic} · ") for n in names) == 1 and names[0].startswith(f"{first} · ")
    # The bars and the caption give cosine similarities as plain numbers, not shares of a softmax.
    assert f"cosine 1.00 against {own_cosine:.2f}" in captions and "%" not in captions
    assert spec["data"][0]["x"][0] == pytest.approx(1.0, abs=1e-4) and spec["data"][0]["text"][0] == "1.00"
    assert "not a probability" in captions and "%" not in spec["layout"]["xaxis"].get("ticksuffix", "")


def test_the_paper_page_is_quiet_when_they_agree(small_artifacts, corpus, monkeypatch):
    sims = np.asarray(corpus.embeddings) @ np.asarray(corpus.tables.topic_embeddings).T
    agree = np.flatnonzero(corpus.topic_ids[np.argmax(sims, axis=1)] == corpus.papers["topic"].to_numpy())
    at = run(
        small_artifacts, monkeypatch, "pages/paper.py", corpus="small", paper=corpus.papers["doc_id"].iat[agree[0]]
    )
    assert "Why it is in topic" not in unescape(texts(at.caption))


# ------------------------------------------------------------------------------------------
# Measures that mean nothing at a size
# ------------------------------------------------------------------------------------------


def test_coherence_is_hidden_below_the_measured_size(corpus):
    assert corpus.n_papers < analysis.MIN_PAPERS_FOR_COHERENCE
    note = analysis.coherence_note(corpus)
    assert note and "too few" in note
    assert analysis.topic_table(corpus)["coherence"].isna().all()
    assert corpus.tables.topics["coherence"].notna().all()  # stored, just not shown


# ------------------------------------------------------------------------------------------
# Trends
# ------------------------------------------------------------------------------------------


def _counts(rows):
    return pd.DataFrame(rows, columns=["term", "year", "n"])


def test_log_odds_ranks_a_specific_rise_above_a_frequent_word():
    # "learning" is in half the papers and gains 15 points; "diffusion" goes from 1% to 10%.
    totals = pd.Series({2019: 1000, 2020: 1000, 2022: 1000, 2023: 1000})
    counts = _counts(
        [("learning", y, n) for y, n in ((2019, 500), (2020, 500), (2022, 650), (2023, 650))]
        + [("diffusion", y, n) for y, n in ((2019, 10), (2020, 10), (2022, 100), (2023, 100))]
        + [("data", y, n) for y, n in ((2019, 500), (2020, 500), (2022, 500), (2023, 500))]
        + [("rare", 2023, 3)]
    )
    table = analysis.period_changes(counts, totals, (2019, 2020), (2022, 2023), key="term", min_support=5)
    assert "rare" not in set(table["term"])  # 3 papers are not a trend
    up = analysis.emerging(table)
    assert up["term"].tolist()[:2] == ["diffusion", "learning"]
    assert (
        table.loc[table["term"] == "learning", "change"].iat[0]
        > table.loc[table["term"] == "diffusion", "change"].iat[0]
    )
    assert set(table.columns) >= {"delta", "z", "change", "ratio"}


def test_default_periods_are_recent_years_against_the_years_before():
    assert analysis.default_periods(range(1987, 2024)) == ((2016, 2020), (2021, 2023))
    assert analysis.default_periods([2018, 2019, 2020, 2021, 2022]) == ((2018, 2021), (2022, 2022))
    assert analysis.default_periods([2020, 2024]) == ((2020, 2020), (2024, 2024))


def test_periods_out_of_range_or_overlapping_are_said():
    span, fallback = (1987, 2023), (2016, 2020)
    period, note = analysis.fit_period((1000, 3000), span, fallback, name="earlier")
    assert period == (1987, 2023) and "cut to 1987–2023" in note
    period, note = analysis.fit_period((3000, 3100), span, fallback, name="earlier")
    assert period == fallback and "outside" in note
    assert analysis.fit_period((2000, 2010), span, fallback, name="earlier") == ((2000, 2010), None)
    assert "overlap" in analysis.period_notes((2010, 2020), (2015, 2023))[0]
    assert "comes before" in analysis.period_notes((2020, 2023), (2000, 2005))[0]
    assert analysis.period_notes((2010, 2015), (2016, 2023)) == []


def test_suggested_keywords_do_not_repeat_a_word():
    assert analysis.distinct(["llms", "prompts", "prompt", "clip", "llm"], 3) == ["llms", "prompts", "clip"]


def test_the_trends_page_says_what_the_link_asked_for_that_cannot_be(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/trends.py", corpus="small", before="3000-1000", after="2022-2024")
    warnings = unescape(texts(at.warning))
    assert "goes beyond the years of these papers" in warnings and "cut to 2020–2024" in warnings
    assert "overlap" in warnings
    assert at.slider(key="trend_before").value == (2020, 2024)


def test_the_top_chart_follows_the_chosen_periods(small_artifacts, monkeypatch):
    corpus = data.load_corpus(small_artifacts, "small")
    totals = analysis.papers_per_year(corpus, apply(corpus, Filters()))
    counts = analysis.keyword_counts(corpus)
    support = analysis.default_support(corpus.n_papers)
    chosen = {}
    for before, after in (((2020, 2021), (2022, 2024)), ((2020, 2022), (2023, 2024))):
        table = analysis.period_changes(counts, totals, before, after, key="term", min_support=support)
        expected = analysis.distinct(analysis.emerging(table, 30)["term"].tolist(), 3)
        at = run(
            small_artifacts,
            monkeypatch,
            "pages/trends.py",
            corpus="small",
            before=state.format_range(before),
            after=state.format_range(after),
        )
        assert at.multiselect(key="trend_kw").value == expected
        chosen[before] = expected
        lines = next(s for s in plotly_specs(at) if s["layout"]["title"]["text"].startswith("Share of each year"))
        assert {t["name"] for t in lines["data"]} == set(expected)
        assert f"rose most surely from {state.format_range(before)} to {state.format_range(after)}" in unescape(
            texts(at.caption)
        )
    assert chosen[(2020, 2021)] != chosen[(2020, 2022)]


def test_choosing_periods_changes_the_suggestions_in_the_same_session(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/trends.py", corpus="small")
    first = at.multiselect(key="trend_kw").value
    at.slider(key="trend_after").set_value((2021, 2024)).run()
    at.slider(key="trend_before").set_value((2020, 2020)).run()
    assert qp(at, "before") == ["2020"] and qp(at, "after") == ["2021-2024"]
    assert at.multiselect(key="trend_kw").value != first


# ------------------------------------------------------------------------------------------
# One-year corpora: distinctive terms against the shipped background
# ------------------------------------------------------------------------------------------


def test_the_shipped_background_is_small_and_named():
    bg = background.load()
    size = (background.FOLDER / background.TERMS_FILE).stat().st_size
    assert size < 400_000 and bg.n_docs > 10_000 and len(bg.terms) > 10_000
    assert {s["file"] for s in bg.info["sources"]} >= {
        "neurips-1987-2023.jsonl.gz",
        "iclr-2018-2022-submissions.jsonl.gz",
    }
    assert (bg.df >= bg.info["min_df"]).all() and len(set(bg.terms.tolist())) == len(bg.terms)
    assert bg.counts_for(["learning", "no such term here"])[1] == 0
    assert bg.counts_for(["learning"])[0] > bg.n_docs * 0.2


def test_the_shipped_background_is_counted_as_builds_count_terms_today():
    # a background counted with another cleaning or vocabulary compares terms a build no longer
    # makes (or makes differently) with the corpus's: run benchmarks/make_background.py again
    info = background.load().info
    assert info.get("versions") == {"clean": CLEAN_VERSION, "vocabulary": VOCAB_VERSION}, (
        "assets/background is out of date: run .venv/bin/python benchmarks/make_background.py"
    )


def test_distinctive_terms_are_not_the_most_frequent_ones():
    bg = background.Background(
        terms=np.array(["data", "learning", "training", "cfdna", "haphazard"], dtype=object),
        df=np.array([9000, 12000, 8000, 12, 0]),
        n_docs=20_000,
        info={},
    )
    terms = pd.DataFrame({"term": ["data", "learning", "training", "cfdna", "ancestry"], "df": [20, 25, 18, 3, 1]})
    table = analysis.distinctive_terms(terms, 38, bg, min_papers=2)
    assert table["term"].iloc[0] == "cfdna"  # 3 of 38 papers against 12 of 20,000 abstracts
    assert "ancestry" not in set(table["term"])  # one paper says nothing about a corpus
    assert table.loc[table["term"] == "learning", "z"].iat[0] < table["z"].iat[0]


def test_the_one_year_view_uses_the_background(small_artifacts, tmp_path, monkeypatch):
    root = tmp_path / "art"
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), root / "oneyear")
    papers = pd.read_parquet(root / "oneyear" / schema.PAPERS)
    papers["year"] = pd.array([2026] * len(papers), dtype="Int16")
    papers.to_parquet(root / "oneyear" / schema.PAPERS, index=False)
    pd.DataFrame({"year": [2026], "n_papers": [len(papers)]}).astype("int32").to_parquet(
        root / "oneyear" / schema.YEARS, index=False
    )
    manifest = json.loads((root / "oneyear" / schema.MANIFEST).read_text())
    (root / "oneyear" / schema.MANIFEST).write_text(json.dumps({**manifest, "name": "oneyear"}))
    at = run(root, monkeypatch, "pages/trends.py", corpus="oneyear")
    spec = plotly_specs(at)[0]
    assert spec["layout"]["title"]["text"].startswith("Distinctive terms")
    shown = spec["data"][0]["y"]
    most_used = data.load_corpus(root, "oneyear").terms["term"].head(5).tolist()
    assert shown and shown[:5] != most_used
    assert "log-odds" in texts(at.caption) and "ML abstracts" in texts(at.caption)


# ------------------------------------------------------------------------------------------
# Links stay faithful; tours name their steps
# ------------------------------------------------------------------------------------------


def test_one_query_limit_for_the_box_and_the_link():
    long = "graph " * 4000
    view = state.parse({"q": [long]})
    assert len(view.q) == state.MAX_QUERY_CHARS and any("2,000" in p for p in view.problems)
    assert state.parse({"q": [long[: state.MAX_QUERY_CHARS]]}).problems == ()
    assert tours.MAX_VALUE >= state.MAX_QUERY_CHARS  # a tour step keeps the whole query


def test_steps_are_named_by_what_they_show(corpus):
    from explorer.services.tour_steps import describe

    topic = int(corpus.topic_ids[0])
    label = corpus.topic_label(topic)
    step = tours.make_step("topics", {"corpus": ["small"], "topic": [str(topic)]})
    assert describe(step, corpus) == f"Topic: {label}"
    paper = tours.make_step("paper", {"corpus": ["small"], "paper": ["latex-1"]})
    assert describe(paper, corpus).startswith("Paper: ") and "latex-1" not in describe(paper, corpus)
    trend = tours.make_step("trends", {"corpus": ["small"], "at": ["emerging"], "before": ["2020-2021"]})
    assert describe(trend, corpus) == "Trends: emerging and declining, 2020-2021"
    # keywords as the papers write them, as the chart's legend shows them (the link keeps kw=mdps)
    charted = tours.make_step("trends", {"corpus": ["small"], "kw": ["mdps", "planning"]})
    assert describe(charted, corpus) == "Trends: keywords MDPs, planning"
    assert describe(charted) == "Trends: keywords mdps, planning"  # no corpus to ask
    assert describe(tours.make_step("search", {"q": ["graph neural"]}), corpus) == "Search: “graph neural”"
    ringed = tours.make_step("map", {"corpus": ["small"], "q": ["graph neural"], "mode": ["semantic"]})
    assert describe(ringed, corpus) == "Map: all topics, “graph neural” ringed (semantic)"
    ringed = tours.make_step("map", {"corpus": ["small"], "topic": [str(topic)], "q": ["graph"]})
    assert describe(ringed, corpus) == f"Topic: {label} on the map, “graph” ringed"


def test_a_paper_far_from_every_other_is_said_to_be(small_artifacts, corpus, monkeypatch):
    reference = analysis.closest_similarities(corpus)
    _, sims = analysis.neighbours(corpus, np.arange(corpus.n_papers), 1)
    far, near = int(np.argmin(sims[:, 0])), int(np.argmax(sims[:, 0]))
    assert (reference > sims[far, 0]).mean() >= 0.9
    at = run(small_artifacts, monkeypatch, "pages/paper.py", corpus="small", paper=corpus.papers["doc_id"].iat[far])
    assert "It is far from every paper here" in unescape(texts(at.caption))
    at = run(small_artifacts, monkeypatch, "pages/paper.py", corpus="small", paper=corpus.papers["doc_id"].iat[near])
    captions = unescape(texts(at.caption))
    assert "far from every paper" not in captions and f"cosine similarity {sims[near, 0]:.2f}" in captions


def test_narrowing_the_years_keeps_the_period_sliders_in_range(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/trends.py", corpus="small")
    at.slider(key="trend_before").set_value((2020, 2021)).run()
    at.slider(key="f_years:small").set_value((2022, 2024)).run()
    assert not at.exception
    before, after = at.slider(key="trend_before").value, at.slider(key="trend_after").value
    assert 2022 <= before[0] <= before[1] <= 2024 and 2022 <= after[0] <= after[1] <= 2024


def test_the_map_tables_score_is_named_for_what_it_is_not_a_fit(small_artifacts, monkeypatch, corpus):
    from explorer.ui import panels

    topic = int(corpus.topic_ids[0])
    at = run(small_artifacts, monkeypatch, "pages/map.py", corpus="small", topic=str(topic))
    table = at.dataframe[0]
    column = json.loads(table.proto.columns)["similarity"]
    assert column["label"] == "Similarity to topic" and column["help"] == panels.TOPIC_SIMILARITY_HELP
    assert f"{panels.NEIGHBOURS} most similar papers" in panels.TOPIC_SIMILARITY_HELP  # says what the fit is instead
    assert "not a probability" in panels.TOPIC_SIMILARITY_HELP and "%" not in column.get("format", "")
    assert "by cosine similarity to the topic's embedding" in texts(at.caption)
    shown = table.value["similarity"].to_numpy()
    assert (np.diff(shown) <= 0).all()  # most typical first, by the number shown
    rows = corpus.papers.index[corpus.papers["topic"] == topic].to_numpy()
    expected = np.asarray(corpus.embeddings)[rows] @ np.asarray(corpus.tables.topic_embeddings)[0]
    assert np.allclose(np.sort(shown)[::-1], np.sort(expected)[::-1], atol=1e-5)  # the cosine it says it is
