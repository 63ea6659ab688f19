"""The warm-rebuild benchmark's table (benchmarks/bench_warm_vanilla.py): its verdicts follow the
medians it reports, with vanilla BERTopic and without it (a before/after of our builds only)."""

from __future__ import annotations

from benchmarks.bench_warm_vanilla import markdown


def _run(wall: float, **extra) -> dict:
    stages = {"ingest": 1.0, "cluster": wall - 1.0}
    return {"wall_s": wall, "papers": 1000, "topics": 9, "embedded": 0, "stages_s": stages, "peak_rss_mb": 900, **extra}


def _res(ours: list[float], before: list[float], vanilla: list[float]) -> dict:
    return {
        "date": "2026-12-06 06:00",
        "machine": "x86_64, 2 cores",
        "command": "python benchmarks/bench_warm_vanilla.py",
        "load": (1.0, 1.0, 1.0),
        "cores": 2,
        "ours": [_run(w) for w in ours],
        "before": [_run(w) for w in before],
        "vanilla": [_run(w, fit_s=w - 5, outlier_share=0.3) for w in vanilla],
        "baseline": "abc1234",
        "target_ratio": 2.0,
    }


def test_the_verdicts_follow_the_medians_with_vanilla() -> None:
    text = markdown(_res([40.0, 41.0, 60.0], [44.0, 45.0, 46.0], [80.0, 90.0, 100.0]))
    assert "| ours, warm rebuild | 1,000 | 41.0 (60.0) |" in text
    assert "41.0 s vs 90.0 s: 0.46x the time | met |" in text  # 90 / 41 >= 2
    assert "41.0 s vs 45.0 s before (0.91x the time) | met |" in text
    assert "rounds of the 3 runs" in text


def test_without_vanilla_only_the_before_after_is_judged() -> None:
    text = markdown(_res([50.0, 52.0, 51.0], [50.0, 50.5, 49.0], []))
    assert "vanilla BERTopic, same embeddings |" not in text
    assert "x the time of vanilla" not in text
    assert "51.0 s vs 50.0 s before (1.02x the time) | **missed** |" in text
    assert "pairs in alternating order" in text
    assert "median peak 900 MB" in text
