"""Derived titles: short, unique, and naming the contribution when the abstract names one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.ingest.titles import derive_title

SEEDS = Path(__file__).resolve().parent.parent / "assets" / "neurips2026"

#: Seed papers that introduce a named system, method or benchmark, by the start of their abstract.
NAMED = {
    "Distributed training is essential": "nnTrace",
    "Haphazard inputs arise": "haphazard",
    "Large language models (LLMs) are increasingly asked": "WorldCoder-Bench",
    "In real-world applications, being able to explain": "RULES",
    "Radio astronomy is an indispensable": "VVTRec",
    "Byte-level byte-pair encoding": "Universal Byte-Level Encoding",
    "Real-world applications of modern AI systems": "Cross Environment Co-Play",
    "List-wise reranking arranges": "Task Grounded Diffusion Interface",
    "Two-sided matching platforms": "Strategic deferral",
    "The rapid scale-up of AI infrastructure": "DrWatson",
    "3D scene graph prediction": "Contextual Hellinger Triplet Geometry",
    "Graphic-design layouts are structured": "GraphicDesignBench",
    "Backpropagation remains the dominant": "Approx PC",
    "This paper studies the problem of jointly learning": (
        "Constrained Bi-level Optimization for Preference-Based Reinforcement Learning"
    ),
    "Activation functions play a central role": "Heavy-Tailed Activation Function",
}


def seed_abstracts() -> list[str]:
    """The 38 abstracts of the bundled corpus: paragraphs after each file's title line."""
    abstracts = []
    for path in sorted(SEEDS.glob("*.txt")):
        paragraphs = [p.replace("\n", " ").strip() for p in path.read_text().split("\n\n") if p.strip()]
        abstracts += paragraphs[1:]
    return abstracts


@pytest.fixture(scope="module")
def seed_titles() -> dict[str, str]:
    return {a: derive_title(a) for a in seed_abstracts()}


def description(title: str) -> str:
    """The part of a title after "NAME: ", or the whole title."""
    return title.split(": ", 1)[1] if ": " in title else title


def test_seed_titles_are_short_unique_and_clean(seed_titles):
    titles = list(seed_titles.values())
    assert len(titles) == 38
    assert len(set(titles)) == 38
    for title in titles:
        assert title and title == title.strip()
        assert not title.endswith((".", ",", ";", ":"))
        assert len(description(title).split()) <= 12, title
        assert "$" not in title and "\\" not in title and "http" not in title


def test_seed_papers_with_a_named_system_get_name_and_description(seed_titles):
    for start, name in NAMED.items():
        abstract = next(a for a in seed_titles if a.startswith(start))
        title = seed_titles[abstract]
        assert title.startswith(f"{name}: "), title
        assert len(description(title).split()) >= 2, title


def test_first_seed_title_reads_like_the_paper(seed_titles):
    title = seed_titles[seed_abstracts()[0]]
    assert (
        title == "nnTrace: differential testing system for detecting and localizing silent bugs in distributed training"
    )


@pytest.mark.parametrize(
    ("abstract", "expected"),
    [
        (
            "We present DrWatson, an AI-driven hardware diagnosis system that pioneers a foundation-model "
            "approach to automated datacenter maintenance. It works.",
            "DrWatson: AI-driven hardware diagnosis system",
        ),
        (
            "To this end, we propose a novel framework, FedSaC, which balances similarity and "
            "complementarity in FL cooperation.",
            "FedSaC: framework that balances similarity and complementarity in FL cooperation",
        ),
        (
            "In this paper, we study the problem of learning sparse graphs from few samples.",
            "Learning sparse graphs from few samples",
        ),
        (
            "We propose a weighted conformal approach for constructing confidence sets for cluster labels.",
            "Weighted conformal approach for constructing confidence sets for cluster labels",
        ),
        (
            "As models grow, evaluation on $\\mathcal{D}$ is expensive and noisy for every benchmark we know.",
            "Evaluation on D is expensive and noisy for every benchmark we know",
        ),
        (
            "In practice, $\\epsilon$-greedy exploration has $O(\\log T)$ regret on $k$-armed bandits.",
            "ε-greedy exploration has O(log T) regret on k-armed bandits",
        ),
    ],
)
def test_derived_title_examples(abstract, expected):
    assert derive_title(abstract) == expected


def test_a_long_formula_is_left_out_and_prices_are_not_formulas():
    long = "Evaluation of $\\sum_{i=1}^{n} \\tilde{f}(x_i)/n$ is expensive."
    assert "sum" not in derive_title(long) and "\\" not in derive_title(long)
    assert derive_title("Training costs $5 and $6 per hour on a rented machine.") == (
        "Training costs 6 per hour on a rented machine"
    )


def test_ingest_derives_the_same_title(tmp_path):
    """Ingest hands its cleaned text to ``derive_title``; a formula in the abstract still shows."""
    from pipeline.ingest.ingest import ingest

    abstract = "As models grow, evaluation on $\\mathcal{D}$ is expensive and noisy for every benchmark we know."
    path = tmp_path / "papers.jsonl"
    path.write_text(json.dumps({"abstract": abstract}) + "\n", encoding="utf-8")
    assert ingest([path]).papers["title"].tolist() == [derive_title(abstract)]


def test_long_first_sentence_is_cut_at_a_word_boundary():
    abstract = "Word0 " + " ".join(f"word{i}" for i in range(1, 40)) + "."
    title = derive_title(abstract)
    assert title.endswith("…")
    assert title.split() == [*abstract.split()[:11], "word11…"]


@pytest.mark.parametrize("abstract", ["", "   ", "$x$", "<b></b>"])
def test_empty_abstract_gives_empty_title(abstract):
    assert derive_title(abstract) == ""


def test_max_words_is_respected():
    abstract = "Modern training pipelines for language model agents begin with a supervised fine-tuning stage."
    assert len(derive_title(abstract, max_words=5).split()) <= 5


PIECES = ["We", "we", "propose", "present", "introduce", "a", "the", "novel", "FooNet", "method", ", which",
          ", a", ", that", ".", "(ABC)", "In this paper, we", "study", "this", "e.g.", "et al.", ":", "called",
          "$x$", "\n"]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.lists(st.sampled_from(PIECES), max_size=40).map(" ".join), st.text(max_size=200)))
def test_derived_title_properties(abstract):
    title = derive_title(abstract)
    assert title == title.strip()
    assert not title.endswith((".", ",", ";", ":"))
    assert len(description(title).split()) <= 12
