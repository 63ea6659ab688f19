"""Write a benchmark's figures into BENCHMARKS.md between its own markers (shared by the scripts)."""

from __future__ import annotations

from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


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
