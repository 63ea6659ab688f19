"""Progress lines: counts, rate, ETA, one final line, quiet when asked; the same as JSON Lines events."""

from __future__ import annotations

import io

from pipeline.core.progress import Reporter, StageClock, format_seconds


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


def _events(path):
    import json

    return [json.loads(line) for line in path.read_text().splitlines()]


def test_event_log_mirrors_stages_and_counts_without_changing_the_human_output(tmp_path):
    plain, with_events = io.StringIO(), io.StringIO()
    for out, events in ((plain, None), (with_events, tmp_path / "events.jsonl")):
        rep = Reporter(stream=out, interval=0.0, events=events)
        rep.line("[1] Reading 2 input file(s)")
        progress = rep.counter("rows", "rows")
        progress(50, 100)
        progress(100, 100)
        rep.line("[2] Embedding 100 papers (onnx-int8)")
        rep.line("a note")
    assert [line.split(",")[0] for line in plain.getvalue().splitlines()] == [
        line.split(",")[0] for line in with_events.getvalue().splitlines()
    ]  # the same lines (rates differ with timing)
    events = _events(tmp_path / "events.jsonl")
    assert [e["event"] for e in events] == ["start", "stage", "count", "count", "stage", "line"]
    assert events[1] == {"event": "stage", "t": events[1]["t"], "step": 1, "title": "Reading 2 input file(s)"}
    assert (events[2]["done"], events[2]["total"], events[2]["label"], events[2]["unit"]) == (50, 100, "rows", "rows")
    assert events[2]["eta"] is not None and events[2]["eta"] >= 0
    assert events[3]["done"] == 100 and events[3]["eta"] == 0.0
    assert events[5]["text"] == "a note"


def test_event_log_is_written_when_quiet_and_throttled(tmp_path):
    out = io.StringIO()
    rep = Reporter(stream=out, quiet=True, events=tmp_path / "e.jsonl")
    progress = rep.counter("embedded", "papers")
    for done in range(1, 1001):
        progress(done, 1000)
    progress(1000, 1000)  # a second "done" is not repeated
    counts = [e for e in _events(tmp_path / "e.jsonl") if e["event"] == "count"]
    assert out.getvalue() == ""
    assert 1 <= len(counts) <= 10 and counts[-1]["done"] == 1000  # at most one every 0.5 s, and the end
