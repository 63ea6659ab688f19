"""The bundled corpus and corpus names: what a build reads when given no files, and what a corpus
built from a file is called. Shared by the CLI and the app (its first screen, its uploads); it
imports nothing, so the app need not import the CLI for it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = "neurips2026"
DEFAULT_INPUTS = ROOT / "assets" / DEFAULT_CORPUS


def default_inputs() -> list[Path]:
    """The bundled NeurIPS 2026 abstracts (assets/neurips2026/*.txt)."""
    return sorted(DEFAULT_INPUTS.glob("*.txt"))


def corpus_name(path: Path) -> str:
    """The corpus name for inputs starting with ``path``: its file name without the input
    suffixes, letters, digits and ``._-`` only, at most 64 characters."""
    stem = path.name
    for suffix in (".gz", ".jsonl", ".json", ".csv", ".tsv", ".parquet", ".txt"):
        stem = stem.removesuffix(suffix)
    cleaned = "".join(c if c.isalnum() or c in "._-" else "-" for c in stem).strip("-._") or "corpus"
    return cleaned[:64]
