"""Benchmark corpora's vocabulary growth (benchmarks/heaps.py): stitched texts that get new words
follow the Heaps curve fitted on the real ones."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from benchmarks.heaps import HEAPS, VocabularyGrowth, fit_heaps, tokens, vocabulary_curve
from tests.conftest import FIXTURES

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@pytest.fixture(scope="module")
def real() -> list[str]:
    return pd.read_json(FIXTURES / "ijcai_labelled.jsonl.gz", lines=True)["abstract"].tolist()


def _stitched(texts: list[str], n: int, seed: int) -> list[str]:
    """``n`` abstracts of real sentences: sentence i from a random paper (no new words)."""
    rng = np.random.default_rng(seed)
    sentences = [[s for s in _SENTENCE_END.split(t) if s] for t in texts]
    out = []
    for _ in range(n):
        length = len(sentences[rng.integers(len(texts))])
        out.append(" ".join(rng.choice(sentences[rng.integers(len(texts))]) for _ in range(length)))
    return out


def _size(texts: list[str]) -> tuple[int, int]:
    """(tokens, distinct words) of ``texts``."""
    words = tokens(" ".join(texts))
    return len(words), len(set(words))


def test_heaps_fit_recovers_a_known_law():
    rng = np.random.default_rng(0)
    # Words drawn from a Zipf law give a Heaps curve; the fit must describe it closely.
    texts = [" ".join(f"w{k}" for k in rng.zipf(1.6, size=120)) for _ in range(3000)]
    fit = fit_heaps(texts, orders=2)
    assert 0.3 < fit.beta < 0.9
    for n, v in fit.points[-10:]:
        assert abs(fit.types(n) - v) / v < 0.05


def test_fitted_constants_are_plausible_for_english_abstracts(real):
    # beta of English text is about 0.4-0.6; the fixture's own fit is near the shared data's one.
    fit = fit_heaps(real, orders=3, skip=100)
    assert 0.4 < HEAPS.beta < 0.6 and 0.4 < fit.beta < 0.65


def test_generated_vocabulary_follows_the_fitted_curve(real):
    fit = fit_heaps(real, orders=3, skip=100)
    generated = _stitched(real, 3 * len(real), seed=1)
    n0, v0 = _size(real)
    assert _size(real + generated)[1] == v0  # stitching alone: no new word

    growth = VocabularyGrowth(fit, real, seed=0)
    grown = [growth.apply(t) for t in generated]
    curve = vocabulary_curve(real + grown, points=30)
    checked = [(n, v) for n, v in curve if n > 1.2 * n0]
    assert len(checked) >= 3
    for n, v in checked:
        expected = v0 + fit.types(n) - fit.types(n0)
        assert abs(v - expected) / expected < 0.02, (n, v, expected)
        assert abs((v - v0) - (expected - v0)) / (expected - v0) < 0.1, (n, v, expected)
    assert (growth.n_tokens, growth.n_types) == curve[-1]

    coined = set(tokens(" ".join(grown))) - set(tokens(" ".join(real)))
    assert len(coined) == growth.n_coined and all(w.isalpha() and len(w) >= 6 for w in coined)
    uses = pd.Series(tokens(" ".join(grown))).value_counts()[sorted(coined)]
    assert uses.max() >= 5 and (uses == 1).mean() > 0.3  # some new words recur, most are rare
    changed = sum(a != b for a, b in zip(generated, grown, strict=True))
    assert changed < len(generated)  # sentences otherwise kept: most abstracts untouched or nearly
