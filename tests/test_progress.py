"""Progress lines: counts, rate, ETA, one final line, quiet when asked."""

from __future__ import annotations

import io

from pipeline.progress import Reporter, StageClock, format_seconds


def test_counter_reports_counts_eta_and_finishes_once():
    out = io.StringIO()
    rep = Reporter(stream=out, interval=0.0)
    progress = rep.counter("embedded", "papers")
    progress(5, 10)
    progress(10, 10)
    progress(10, 10)  # a second "done" is not repeated
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert "5/10 papers (50%)" in lines[0] and "ETA" in lines[0]
    assert "10/10 papers (100%)" in lines[1] and "done in" in lines[1]


def test_quiet_reporter_prints_nothing():
    out = io.StringIO()
    rep = Reporter(stream=out, quiet=True)
    rep.line("hello")
    rep.counter("x")(1, 1)
    assert out.getvalue() == ""


def test_stage_clock_measures_time_and_memory():
    with StageClock("s") as clock:
        data = bytearray(50 * 2**20)
        del data
    assert clock.record.seconds >= 0 and clock.record.peak_rss_mb > 10


def test_format_seconds():
    assert format_seconds(4.25) == "4.2s" and format_seconds(75.2) == "1m15s" and format_seconds(7300) == "2h01m"
