"""From how many abstracts does NPMI coherence mean something?

NPMI scores a topic's top words by how often they occur together in the corpus's abstracts. A
corpus of 38 abstracts has almost no co-occurrences to count: most pairs of words never meet, and
every topic scores near -1 whatever its words. This script measures at which corpus size the
figure becomes trustworthy, on a built corpus (NeurIPS 1987-2023 by default):

for each size m, it draws random subsets of m papers (keeping the build's topics), describes each
topic of the subset by its own top 10 c-TF-IDF words (as a build of those m papers would), and
compares the NPMI of those words measured on the m papers with the NPMI of the same words on the
whole corpus: the median absolute error and the rank correlation over topics. The app hides
coherence below the smallest size where the error falls under 0.07 and the rank correlation nears
0.9 (``explorer.services.analysis.MIN_PAPERS_FOR_COHERENCE``; 2,000 on NeurIPS 1987-2023).

    .venv/bin/python benchmarks/coherence_size.py ARTIFACTS/neurips    # a build folder or corpus folder
    .venv/bin/python benchmarks/coherence_size.py DIR --repeats 5 --write   # also into BENCHMARKS.md

Writes benchmarks/output/coherence_size.json; with ``--write`` the table between the
``coherence-size`` markers of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "output"
sys.path.insert(0, str(ROOT))

SIZES = (38, 100, 250, 500, 1000, 2000, 3000, 5000)
MIN_TOPIC = 3  # topics with fewer papers in a subset are not described


def measure(folder: Path, sizes=SIZES, repeats: int = 3, seed: int = 0) -> list[dict]:
    import pandas as pd
    from scipy.stats import spearmanr

    from pipeline.evaluation.evaluate import npmi_coherence
    from pipeline.model.represent import ctfidf_words
    from pipeline.model.vocab import DocTerms, doc_terms

    papers = pd.read_parquet(folder / "papers.parquet").sort_values("row")
    dt = doc_terms(papers["model_text"].tolist())
    presence = dt.presence()
    vocab = dt.vocabulary
    topics = papers["topic"].to_numpy()
    rng = np.random.default_rng(seed)
    rows = []
    for m in [s for s in sizes if s < len(papers)]:
        errors, ranks, n_topics = [], [], []
        for _ in range(repeats):
            pick = np.sort(rng.choice(len(papers), size=m, replace=False))
            labels = topics[pick].copy()
            counts = pd.Series(labels).value_counts()
            labels[np.isin(labels, counts[counts < MIN_TOPIC].index)] = -1
            used = np.flatnonzero(np.asarray(presence[pick].sum(axis=0)).ravel() > 0)  # the subset's own vocabulary
            sub = DocTerms(dt.counts[pick][:, used], dt.terms[used])
            words = [[w for w, _ in ws] for t, ws in sorted(ctfidf_words(labels, sub, top_n=10).items())]
            words = [w for w in words if len(w) >= 2]
            if len(words) < 3:
                continue
            _, small = npmi_coherence(words, presence[pick], vocab)
            _, full = npmi_coherence(words, presence, vocab)
            small, full = np.asarray(small), np.asarray(full)
            ok = np.isfinite(small) & np.isfinite(full)
            errors.append(float(np.median(np.abs(small[ok] - full[ok]))))
            ranks.append(float(spearmanr(small[ok], full[ok]).statistic))
            n_topics.append(int(ok.sum()))
        rows.append(
            {
                "papers": m,
                "topics": int(np.median(n_topics)) if n_topics else 0,
                "median_abs_error": round(float(np.mean(errors)), 3) if errors else None,
                "rank_correlation": round(float(np.mean(ranks)), 2) if ranks else None,
                "repeats": len(errors),
            }
        )
    return rows


def table(rows: list[dict], corpus: str) -> str:
    lines = [
        f"NPMI coherence of each topic's top 10 words measured on a random subset of {corpus}, against the same "
        "words on the whole corpus (`benchmarks/coherence_size.py`):",
        "",
        "| papers | topics | median abs. error | rank correlation over topics |",
        "|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['papers']:,} | {r['topics']} | {r['median_abs_error']} | {r['rank_correlation']} |"
        for r in rows
        if r["repeats"]
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a built corpus (its folder under the artifacts)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    args = parser.parse_args(argv)
    from pipeline.core import artifacts

    folder = args.folder
    if not (folder / "papers.parquet").exists():
        folder = artifacts.corpus_path(folder.parent, folder.name)
    started = time.perf_counter()
    rows = measure(folder, repeats=args.repeats)
    OUT.mkdir(exist_ok=True)
    (OUT / "coherence_size.json").write_text(json.dumps(rows, indent=2) + "\n")
    text = table(rows, args.folder.name)
    print(text)
    print(f"({time.perf_counter() - started:.0f}s)")
    if args.write:
        bench = ROOT / "BENCHMARKS.md"
        body = bench.read_text(encoding="utf-8")
        block = f"<!-- coherence-size:start -->\n{text}\n<!-- coherence-size:end -->"
        body = re.sub(r"<!-- coherence-size:start -->.*?<!-- coherence-size:end -->", block, body, flags=re.S)
        bench.write_text(body, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
