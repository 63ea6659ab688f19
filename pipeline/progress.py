"""Progress reporting and per-stage measurement (time, peak memory) for the build runner.

Compute functions never print; they accept a ``progress(done, total)`` callback. The runner owns a
:class:`Reporter`, which turns those calls into throttled lines with counts, rate and ETA, and a
:class:`StageClock` per stage, which records wall time and the process's peak RSS during the stage.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

ProgressFn = Callable[[int, int], None]


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


@dataclass
class Reporter:
    """Writes progress lines for a human: stage headers, counts with rate and ETA, a summary.

    On a terminal the count line is rewritten in place; elsewhere (CI logs, pipes) a line is
    written at most every ``interval`` seconds so logs stay short, and once when done.
    """

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    quiet: bool = False
    interval: float = 10.0

    def __post_init__(self) -> None:
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = 0.0
        self._start = time.perf_counter()
        self._open_line = False

    def line(self, text: str) -> None:
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

        def progress(done: int, total: int) -> None:
            nonlocal reported_done
            if self.quiet or reported_done:
                return
            now = time.perf_counter()
            finished = done >= total
            if not finished and now - self._last < (0.25 if self._tty else self.interval):
                return
            reported_done = finished
            self._last = now
            elapsed = now - start
            rate = done / elapsed if elapsed > 0 else 0.0
            eta = (total - done) / rate if rate > 0 else float("nan")
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
