"""Labelled stand-ins for the held-out corpora of issue 10, derived from the shared IJCAI file.

``ijcai-fine``: fine-grained labels. Every IJCAI 2020-2024 paper carries author-chosen keywords of
the form "Area: Subarea" (e.g. "Machine Learning: ML: Federated learning"); a paper's label is the
subarea of its *first* keyword, lower-cased, with the area's abbreviation ("ML:", "CV:", ...)
removed, so that "ML: Federated learning" (2023) and "Federated Learning" (2021) are one label.
Generic subareas ("general", "journal track", "survey") are dropped, and only the ``--areas`` most
frequent subareas are kept. The result is noisy (near-duplicates such as "reinforcement learning"
and "deep reinforcement learning" stay apart, as authors chose them): a harder, finer target than
IJCAI's 16 primary areas, for checking that a setting tuned on the areas generalises.

    .venv/bin/python benchmarks/make_proxies.py            # writes .cache-research/ijcai-fine.jsonl.gz
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SOURCE = Path("/work/shared/data/ijcai2020-2024-primary-area.jsonl.gz")
OUT = ROOT / ".cache-research" / "ijcai-fine.jsonl.gz"
ABBREVIATION = re.compile(r"^(ml|cv|nlp|kr|mas|dm|gtep|hai|plan|srch|uai|csat|rob|mta|ethics)\s*:?\s*", re.I)
GENERIC = {"", "general", "journal track", "survey", "survey track"}


def subarea(keywords) -> str | None:
    """The normalised subarea of a paper's first keyword, or None."""
    if not isinstance(keywords, list) or not keywords:
        return None
    last = keywords[0].split(":")[-1].strip().lower()
    last = ABBREVIATION.sub("", last).strip()
    return None if last in GENERIC else last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--areas", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    df = pd.read_json(SOURCE, lines=True, compression="gzip")
    df["label"] = df["keywords"].map(subarea)
    top = df["label"].value_counts().head(args.areas).index
    out = df[df["label"].isin(top)][["id", "title", "abstract", "year", "venue", "label"]]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    out.to_json(args.out, orient="records", lines=True, compression="gzip")
    print(f"{args.out}: {len(out):,} papers, {out['label'].nunique()} labels")
    print(out["label"].value_counts().to_string())


if __name__ == "__main__":
    main()
