"""Labelled stand-ins for the held-out corpora of issue 10, derived from the shared data files.

``ijcai-fine``: fine-grained labels. Every IJCAI 2020-2024 paper carries author-chosen keywords of
the form "Area: Subarea" (e.g. "Machine Learning: ML: Federated learning"); a paper's label is the
subarea of its *first* keyword, lower-cased, with the area's abbreviation ("ML:", "CV:", ...)
removed, so that "ML: Federated learning" (2023) and "Federated Learning" (2021) are one label.
Generic subareas ("general", "journal track", "survey") are dropped, and only the ``--areas`` most
frequent subareas are kept. The result is noisy (near-duplicates such as "reinforcement learning"
and "deep reinforcement learning" stay apart, as authors chose them): a harder, finer target than
IJCAI's 16 primary areas, for checking that a setting tuned on the areas generalises.

``neurips-kw``: subfields of one field, from the free-text author keywords of NeurIPS 2022 and
2023 (OpenReview; the only NeurIPS years whose rows carry keywords). A keyword is normalised
(lower case, hyphens as spaces, a trailing "(...)" dropped, its last word singular, "deep" dropped
before a phrase of three or more words: "Deep Reinforcement Learning" -> "reinforcement learning")
and a few spellings of one subject are joined (:data:`SAME`). Keywords that name the whole field,
a property every subfield has or an architecture every subfield uses (:data:`FIELD_WIDE`: "deep
learning", "optimization", "generalization", "transformer", ...) are not subfields. The 20 most
frequent remaining keywords (counted once per paper) are the subfields, fixed before any
clustering was run on the file; a paper's label is the first of its own keywords, in the authors'
order, that is one of them (papers with none are left out): 1,940 papers, 20 labels, about the
size and grain of the hidden fine-grained set (2,260 papers, 20 subfields). Noisy as authors are:
"diffusion model" against "generative model", "reinforcement learning" against "offline
reinforcement learning" stay apart.

    .venv/bin/python benchmarks/make_proxies.py   # writes .cache-research/{ijcai-fine,neurips-kw}.jsonl.gz
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data")
SOURCE = DATA / "ijcai2020-2024-primary-area.jsonl.gz"
NEURIPS = DATA / "neurips-1987-2023.jsonl.gz"
OUT = ROOT / ".cache-research" / "ijcai-fine.jsonl.gz"
OUT_NEURIPS = ROOT / ".cache-research" / "neurips-kw.jsonl.gz"
ABBREVIATION = re.compile(r"^(ml|cv|nlp|kr|mas|dm|gtep|hai|plan|srch|uai|csat|rob|mta|ethics)\s*:?\s*", re.I)
GENERIC = {"", "general", "journal track", "survey", "survey track"}

#: Normalised keywords that name one subject.
SAME = {
    "large language model": "language model",
    "multi armed bandit": "bandit",
    "explainability": "interpretability",
    "causality": "causal inference",
}
#: Normalised keywords that are not a subfield of machine learning.
FIELD_WIDE = {
    "deep learning",
    "machine learning",
    "learning",
    "neural network",
    "representation learning",
    "generalization",
    "robustness",
    "optimization",
    "theory",
    "learning theory",
    "transformer",
    "classification",
    "computer vision",
    "natural language processing",
    "artificial intelligence",
    "benchmark",
    "dataset",
    "efficiency",
}


def subarea(keywords) -> str | None:
    """The normalised subarea of a paper's first keyword, or None."""
    if not isinstance(keywords, list) or not keywords:
        return None
    last = keywords[0].split(":")[-1].strip().lower()
    last = ABBREVIATION.sub("", last).strip()
    return None if last in GENERIC else last


def keyword(text: str) -> str:
    """An author keyword normalised: "Graph Neural Networks" -> "graph neural network"."""
    words = re.sub(r"\s*\(.*\)$", "", re.sub(r"[-_\s]+", " ", text.strip().lower())).split()
    if not words:
        return ""
    last = words[-1]
    if last.endswith("sses") or (last.endswith("es") and last[:-2].endswith(("ch", "sh", "x"))):
        last = last[:-2]
    elif last.endswith("s") and not last.endswith("ss") and len(last) > 3:
        last = last[:-1]
    words[-1] = last
    if words[0] == "deep" and len(words) > 2:
        words = words[1:]
    joined = " ".join(words)
    return SAME.get(joined, joined)


def neurips_keywords(areas: int) -> pd.DataFrame:
    """NeurIPS 2022-2023 papers labelled by their first keyword among the ``areas`` most frequent subfields."""
    df = pd.read_json(NEURIPS, lines=True, compression="gzip")
    df = df[df["keywords"].map(lambda k: isinstance(k, list) and len(k) > 0)].copy()
    df["normalised"] = df["keywords"].map(lambda ks: [keyword(k) for k in ks])
    counts = Counter(k for ks in df["normalised"] for k in set(ks) if k and k not in FIELD_WIDE)
    top = {k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:areas]}
    df["label"] = df["normalised"].map(lambda ks: next((k for k in ks if k in top), None))
    return df[df["label"].notna()][["id", "title", "abstract", "year", "venue", "label"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--areas", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--out-neurips", type=Path, default=OUT_NEURIPS)
    args = parser.parse_args()
    df = pd.read_json(SOURCE, lines=True, compression="gzip")
    df["label"] = df["keywords"].map(subarea)
    top = df["label"].value_counts().head(args.areas).index
    out = df[df["label"].isin(top)][["id", "title", "abstract", "year", "venue", "label"]]
    kw = neurips_keywords(args.areas)
    for path, frame in ((args.out, out), (args.out_neurips, kw)):
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_json(path, orient="records", lines=True, compression="gzip")
        print(f"{path}: {len(frame):,} papers, {frame['label'].nunique()} labels")
        print(frame["label"].value_counts().to_string())


if __name__ == "__main__":
    main()
