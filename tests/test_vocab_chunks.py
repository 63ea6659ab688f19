"""Terms counted in chunks (and in worker processes) are scikit-learn's counts of the whole
corpus: the same terms, and the same matrix entry for entry, in the same order within each row."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.core import background
from pipeline.model import vocab

FIXTURES = Path(__file__).parent / "fixtures"


def abstracts() -> list[str]:
    with gzip.open(FIXTURES / "ijcai_labelled.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line)["abstract"] for line in lines]


def small() -> list[str]:
    return [json.loads(line)["abstract"] for line in (FIXTURES / "small_corpus.jsonl").read_text().splitlines()]


def sklearn_terms(texts, *, ngram_range=(1, 2), min_df=None):
    """``vocab.doc_terms`` as it was: one ``fit_transform`` of every text by scikit-learn."""
    n = len(texts)
    min_df = min(min_df or vocab.default_min_df(n), max(n, 1))
    vec = vocab.make_vectorizer(ngram_range=ngram_range, min_df=min_df, max_df=0.6 if n >= 20 else 1.0)
    try:
        counts = vec.fit_transform(texts)
    except ValueError:
        return None
    terms = vec.get_feature_names_out()
    keep = np.array([all(vocab.keeps_token(t) for t in term.split()) for term in terms], dtype=bool)
    return counts[:, keep].tocsr(), terms[keep]


def test_fewer_papers_are_counted_by_scikit_learn_at_once(monkeypatch):
    def no_chunks(*args, **kwargs):
        raise AssertionError("counted in chunks")

    monkeypatch.setattr(vocab, "map_chunks", no_chunks)
    given = small()
    assert_same(vocab.doc_terms(given), sklearn_terms(given))


def assert_same(ours: vocab.DocTerms, theirs) -> None:
    if theirs is None:
        assert ours.counts.shape[1] == 0 and len(ours.terms) == 0
        return
    counts, terms = theirs
    assert ours.terms.tolist() == terms.tolist()
    assert ours.counts.shape == counts.shape
    assert ours.counts.dtype == counts.dtype == np.int32
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(ours.counts, name), getattr(counts, name)), name


@pytest.mark.parametrize(
    ("texts", "kwargs", "chunk"),
    [
        (abstracts, {}, 97),
        (abstracts, {"min_df": 1}, 500),
        (abstracts, {"ngram_range": (1, 3)}, 333),
        (abstracts, {"ngram_range": (1, 1)}, 10_000),
        (small, {"min_df": 2}, 10),
        (small, {}, 1),
        (lambda: ["the and of", "we propose a novel method", "is it"] * 10, {}, 4),  # only stop words
        (lambda: ["graph neural networks"] * 30, {}, 7),  # every term in every paper: max_df leaves none
        (lambda: ["graph networks", "neural graph", "x"], {"min_df": 1}, 2),
    ],
)
def test_chunks_count_as_scikit_learn_counts_the_whole_corpus(texts, kwargs, chunk, monkeypatch):
    monkeypatch.setattr(vocab, "PARALLEL_MIN_DOCS", 1)
    monkeypatch.setattr(background, "usable_cpus", lambda: 1)  # the chunks counted in this process
    monkeypatch.setattr(vocab, "TERMS_CHUNK", chunk)
    given = texts()
    assert_same(vocab.doc_terms(given, **kwargs), sklearn_terms(given, **kwargs))


def test_across_phrases_too(monkeypatch):
    monkeypatch.setattr(vocab, "PARALLEL_MIN_DOCS", 1)
    monkeypatch.setattr(background, "usable_cpus", lambda: 1)
    monkeypatch.setattr(vocab, "WITHIN_PHRASES", False)
    monkeypatch.setattr(vocab, "TERMS_CHUNK", 250)
    given = abstracts()[:800]
    assert_same(vocab.doc_terms(given), sklearn_terms(given))


def test_workers_count_as_this_process_does(monkeypatch):
    started = []
    original = background.worker_pool

    def pool(workers=1):
        started.append(workers)
        return original(workers)

    monkeypatch.setattr(background, "usable_cpus", lambda: 2)
    monkeypatch.setattr(background, "worker_pool", pool)
    monkeypatch.setattr(vocab, "PARALLEL_MIN_DOCS", 1)
    monkeypatch.setattr(vocab, "TERMS_CHUNK", 400)
    given = abstracts()
    assert_same(vocab.doc_terms(given), sklearn_terms(given))
    assert started == [2]
