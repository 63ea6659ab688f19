"""Progress reporting and per-stage measurement (time, peak memory) for the build runner.

Compute functions never print; they accept a ``progress(done, total)`` callback. The runner owns a
:class:`Reporter`, which turns those calls into throttled lines with counts, rate and ETA, and a
:class:`StageClock` per stage, which records wall time and the process's peak RSS during the stage.

For a program that follows a build (the dashboard's "Add a corpus" page), the Reporter also writes
the same progress as JSON Lines to a file (:class:`EventLog`, ``python -m pipeline build
--progress-json FILE``); the human output is the same with or without it.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

ProgressFn = Callable[[int, int], None]

#: How the build runner announces its stage k: ``[k] title`` (one line, before the stage starts).
STAGE_LINE = re.compile(r"^\[(\d+)\] (.+)$")


def format_seconds(seconds: float) -> str:
    """``75.2`` -> ``"1m15s"``; ``4.25`` -> ``"4.2s"``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def _rss_bytes() -> int:
    import psutil

    return psutil.Process().memory_info().rss


@dataclass
class StageRecord:
    """What one stage cost."""

    name: str
    seconds: float
    peak_rss_mb: float
    note: str = ""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "seconds": round(self.seconds, 3),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "note": self.note,
        }


class StageClock:
    """Context manager measuring a stage's wall time and peak RSS (sampled every 50 ms)."""

    def __init__(self, name: str):
        self.name = name
        self.note = ""
        self._peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.record: StageRecord | None = None

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self._peak = max(self._peak, _rss_bytes())

    def __enter__(self) -> StageClock:
        self._peak = _rss_bytes()
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        self._peak = max(self._peak, _rss_bytes())
        self.record = StageRecord(self.name, time.perf_counter() - self._start, self._peak / 2**20, self.note)


class EventLog:
    """Machine-readable progress: one JSON object per line, appended to ``path`` and flushed at once.

    Every object has ``event`` and ``t`` (Unix time, seconds):

    * ``{"event": "start", "pid": 4242}``: once, when the log is opened;
    * ``{"event": "stage", "step": 3, "title": "Projecting with UMAP (...)"}``: stage ``step`` begins
      (the runner's ``[3] ...`` line);
    * ``{"event": "count", "label": "embedded", "unit": "papers", "done": 120, "total": 4000,
      "rate": 61.2, "eta": 63.4, "elapsed": 1.96}``: a counter of the current stage, at most every
      ``interval`` seconds and always when it finishes (``rate`` per second; ``eta`` seconds left,
      null while unknown);
    * ``{"event": "line", "text": "..."}``: any other line the build reports.

    A reader may see the last line half-written; it should skip a line that does not parse.
    """

    def __init__(self, path: str | Path, *, interval: float = 0.5):
        self.path = Path(path)
        self.interval = interval
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("a", encoding="utf-8")
        self.write("start", pid=os.getpid())

    def write(self, event: str, **fields) -> None:
        record = {"event": event, "t": round(time.time(), 3), **fields}
        self._handle.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
        self._handle.flush()

    def line(self, text: str) -> None:
        """A line of the human output: a stage header becomes a ``stage`` event."""
        match = STAGE_LINE.match(text)
        if match:
            self.write("stage", step=int(match.group(1)), title=match.group(2))
        else:
            self.write("line", text=text)

    def close(self) -> None:
        self._handle.close()


@dataclass
class Reporter:
    """Writes progress lines for a human: stage headers, counts with rate and ETA, a summary.

    On a terminal the count line is rewritten in place; elsewhere (CI logs, pipes) a line is
    written at most every ``interval`` seconds so logs stay short, and once when done. With
    ``events`` (a file path) the same progress also goes to an :class:`EventLog`, quiet or not.
    """

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    quiet: bool = False
    interval: float = 10.0
    events: str | Path | None = None

    def __post_init__(self) -> None:
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = 0.0
        self._start = time.perf_counter()
        self._open_line = False
        self._events = EventLog(self.events) if self.events is not None else None

    def line(self, text: str) -> None:
        if self._events is not None:
            self._events.line(text)
        if self.quiet:
            return
        if self._open_line:
            self.stream.write("\n")
            self._open_line = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def counter(self, label: str, unit: str = "items") -> ProgressFn:
        """A ``progress(done, total)`` callback that prints ``label: done/total unit, rate, ETA``."""
        start = time.perf_counter()
        self._last = start
        reported_done = False
        evented = start - 1e9  # when the last event was written
        events = self._events

        def progress(done: int, total: int) -> None:
            nonlocal reported_done, evented
            if reported_done:
                return
            now = time.perf_counter()
            finished = done >= total
            elapsed = now - start
            rate = done / elapsed if elapsed > 0 else 0.0
            eta = (total - done) / rate if rate > 0 else float("nan")
            if events is not None and (finished or now - evented >= events.interval):
                evented = now
                events.write(
                    "count", label=label, unit=unit, done=done, total=total, rate=round(rate, 2),
                    eta=round(eta, 1) if eta == eta and not finished else (0.0 if finished else None),
                    elapsed=round(elapsed, 2),
                )  # fmt: skip
                reported_done = finished and self.quiet
            if self.quiet:
                return
            if not finished and now - self._last < (0.25 if self._tty else self.interval):
                return
            reported_done = finished
            self._last = now
            pct = 100.0 * done / total if total else 100.0
            text = f"  {label}: {done:,}/{total:,} {unit} ({pct:.0f}%), {rate:.1f}/s"
            text += (
                f", done in {format_seconds(elapsed)}"
                if finished
                else (f", ETA {format_seconds(eta)}" if eta == eta else "")
            )
            if self._tty:
                self.stream.write("\r" + text.ljust(78))
                self._open_line = not finished
                if finished:
                    self.stream.write("\n")
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

        return progress
