"""Log-odds with an informative Dirichlet prior: frequent generic words do not win, real shifts do."""

import numpy as np
import pytest

from pipeline.model.logodds import log_odds


def test_a_word_used_evenly_scores_near_zero_however_frequent():
    terms = ["learning", "diffusion", "kernel", "rare"]
    a = np.array([900, 60, 5, 1])  # 1,000 papers now
    b = np.array([900, 5, 60, 0])  # 1,000 papers then
    result = log_odds(a, b)
    assert abs(result.z[0]) < 1.0  # "learning": everywhere, not distinctive
    assert result.z[1] > 3 and result.z[2] < -3  # real shifts, both ways
    assert result.top(1, terms=terms) == [1]
    assert result.top(1, terms=terms, side="b") == [2]


def test_a_word_seen_once_does_not_beat_a_well_supported_shift():
    a = np.array([1, 40, 500])
    b = np.array([0, 10, 500])
    result = log_odds(a, b)
    assert result.z[1] > result.z[0] > 0


def test_ties_break_by_term_and_min_count_filters():
    a = np.array([30, 30, 2, 100])
    b = np.array([3, 3, 0, 200])
    result = log_odds(a, b)
    assert result.z[0] == result.z[1] > result.z[2] > 0
    names = ["zeta", "alpha", "beta", "common"]
    assert result.top(3, terms=names) == [1, 0, 2]
    assert result.top(3, terms=names, min_count=5) == [1, 0]


def test_background_prior_and_shape_checks():
    a, b = np.array([5, 5]), np.array([5, 5])
    assert np.allclose(log_odds(a, b, background=np.array([100, 1])).z, 0)
    assert np.allclose(log_odds(np.zeros(2), np.zeros(2)).z, 0)
    with pytest.raises(ValueError):
        log_odds(np.ones(2), np.ones(3))
