"""Write a benchmark's figures into BENCHMARKS.md between its own markers (shared by the scripts)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"
OUTPUT = Path(__file__).resolve().parent / "output"


def write_block(name: str, heading: str, block: str, path: Path = BENCHMARKS) -> None:
    """Replace the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` with ``block``;
    without the markers, append a ``## heading`` section holding them."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start in text:
        text = text.split(start)[0] + start + "\n" + block + "\n" + end + text.split(end, 1)[1]
    else:
        text += f"\n## {heading}\n\n{start}\n{block}\n{end}\n"
    path.write_text(text, encoding="utf-8")


def record(name: str, heading: str, results: dict, block: str) -> None:
    """Keep a run's figures as ``benchmarks/output/NAME.json``, write ``block`` as the block NAME of
    BENCHMARKS.md (see :func:`write_block`) and print it."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    (OUTPUT / f"{name}.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    write_block(name, heading, block)
    print(block)


def spread(seconds: list[float]) -> dict:
    """Median, least and most of some runs' seconds, as the tables print them."""
    return {"median_s": statistics.median(seconds), "min_s": min(seconds), "max_s": max(seconds)}
