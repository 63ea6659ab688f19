"""The comparison's typed summary (pipeline/analysis/comparison.py): ``comparison.json`` as saved before it was
typed reads into :class:`ComparisonSummary` and writes back to the same JSON, keys in the same order."""

from __future__ import annotations

import copy
import json
import math

import pytest

from pipeline.analysis.comparison import CompareParams, ComparisonSummary, ReferenceSummary, SideSummary
from pipeline.core import artifacts

#: A summary as the untyped code saved it (``comparison.json`` of the fixture corpora, late vs early).
SAVED = {
    "version": 2,
    "created_at": "2026-12-01T21:31:35+0000",
    "seconds": 0.093,
    "new": {"name": "late", "build_id": "20261201T213134-f905676a", "papers": 62, "topics": 6, "years": [2023, 2024]},
    "reference": {
        "name": "early",
        "build_id": "20261201T213134-9bb5b5a9",
        "papers": 75,
        "topics": 6,
        "years": [2020, 2022],
        "papers_used": 75,
        "papers_shared": 0,
    },
    "params": {
        "k": 10,
        "novelty_k": 5,
        "novel_alpha": 0.05,
        "level": 0.95,
        "majority": 0.5,
        "part": 0.25,
        "min_papers": 3,
        "null_sample": 2000,
        "null_recent": True,
        "listed": 5,
        "top_terms": 40,
        "prior_mass": 1000.0,
        "seed": 0,
    },
    "matching": {"method": "nearest neighbours", "shared": 0},
    "calibration": {
        "null_papers": 75,
        "novelty_p50": 0.7170075654983521,
        "novelty_p95": 0.7572560262680054,
        "far_papers": 7,
    },
    "shares": {
        "z": 2.638257273476751,
        "typical_share": 0.14,
        "detectable_rise": 0.2081720430107527,
        "grew": 0,
        "shrank": 1,
    },
}


def test_a_summary_saved_before_reads_into_typed_sections():
    s = ComparisonSummary.from_dict(SAVED)
    assert isinstance(s.new, SideSummary) and isinstance(s.reference, ReferenceSummary)
    assert (s.new.name, s.new.papers, s.new.years) == ("late", 62, (2023, 2024))
    assert (s.reference.papers_used, s.reference.papers_shared, s.reference.years) == (75, 0, (2020, 2022))
    assert s.params == CompareParams()
    assert s.matching.method == "nearest neighbours" and s.calibration.far_papers == 7
    assert s.shares.shrank == 1 and s.shares.typical_share == 0.14


def test_the_summary_writes_back_the_same_json(tmp_path):
    back = ComparisonSummary.from_dict(SAVED).to_dict()
    assert back == SAVED
    assert json.dumps(back, indent=2) == json.dumps(SAVED, indent=2)  # same keys, same order
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    artifacts.write_json(first, SAVED)
    artifacts.write_json(second, ComparisonSummary.from_dict(json.loads(first.read_text(encoding="utf-8"))).to_dict())
    assert first.read_bytes() == second.read_bytes()


def test_a_summary_without_years_or_a_measurable_change_round_trips():
    saved = copy.deepcopy(SAVED)
    saved["new"]["years"] = None
    saved["shares"]["typical_share"] = saved["shares"]["detectable_rise"] = float("nan")
    s = ComparisonSummary.from_dict(json.loads(json.dumps(saved)))
    assert s.new.years is None and math.isnan(s.shares.detectable_rise)
    assert json.dumps(s.to_dict(), indent=2) == json.dumps(saved, indent=2)


def test_a_summary_of_another_shape_is_refused():
    broken = copy.deepcopy(SAVED)
    del broken["calibration"]["far_papers"]
    with pytest.raises(TypeError):
        ComparisonSummary.from_dict(broken)
    unknown = copy.deepcopy(SAVED)
    unknown["params"]["radius"] = 3
    with pytest.raises(TypeError):
        ComparisonSummary.from_dict(unknown)
