"""Warm rebuild against vanilla BERTopic, like for like: both start from the SAME cached embeddings.

Not part of the test run. One corpus (default: ICML 2024, 2,610 papers) is built once, which
embeds it and caches the vectors. Then, in alternating pairs and each in a fresh process:

* ours: the pipeline's command line, ``build --force`` with the stage cache cleared (the kNN
  graph, UMAP, clustering, stability runs, representations, trends and artifacts are all
  computed; only the embeddings are looked up in the cache);
* vanilla: ``BERTopic(vectorizer_model=<the project's CountVectorizer>).fit_transform(docs,
  embeddings=E)`` with BERTopic's default UMAP + HDBSCAN, where ``docs`` and ``E`` are the build's
  own cleaned texts and ``embeddings.npy`` (read from the built corpus, inside the timing).

Both are timed from outside, start of the process to its end (interpreter, imports, reading the
inputs, fitting; ours also ingests, writes artifacts and runs its quality measures, which vanilla
does not). The vanilla process also reports its ``fit_transform`` alone. Medians over the pairs.
With ``--baseline REV`` each round also builds with that revision's code (same papers, same cached
embeddings, its own corpus name): a same-run "before" row; the kinds take turns going first.
Results go to ``benchmarks/output/warm-vanilla.json`` and BENCHMARKS.md (``bench-warm-vanilla``).

    .venv/bin/python benchmarks/bench_warm_vanilla.py               # ICML 2024, 3 pairs
    .venv/bin/python benchmarks/bench_warm_vanilla.py --pairs 5 --data other.jsonl.gz
    .venv/bin/python benchmarks/bench_warm_vanilla.py --data neurips-1987-2023.jsonl.gz --name nips \
        --artifacts /tmp/art --baseline main~3 --target-ratio 2   # issue 23: 18.7k, <= 0.5x vanilla
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "output"
sys.path.insert(0, str(ROOT))
from benchmarks.markdown_block import write_block  # noqa: E402

DATA = Path(
    os.environ.get("SHARED_DATA")
    or next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT / "shared" / "data")
)
PY = sys.executable
#: The target this benchmark checks: a warm rebuild at least this many times faster than vanilla.
TARGET_RATIO = 10.0
HEADING = "Warm rebuild against vanilla BERTopic"

VANILLA = textwrap.dedent(
    """
    import json, resource, sys, time
    sys.path.insert(0, {root!r})
    import numpy as np
    from pipeline.core import artifacts, schema
    from pipeline.model.vocab import make_vectorizer
    folder = artifacts.corpus_path(__import__("pathlib").Path({art!r}), {name!r})
    papers = artifacts.read_table(folder, schema.PAPERS, columns=["row", "model_text"]).sort_values("row")
    docs = papers["model_text"].tolist()
    embeddings = np.asarray(artifacts.read_array(folder, schema.EMBEDDINGS), dtype=np.float32)
    from bertopic import BERTopic
    t0 = time.perf_counter()
    topics, _ = BERTopic(vectorizer_model=make_vectorizer(ngram_range=(1, 2))).fit_transform(docs, embeddings=embeddings)
    fit = time.perf_counter() - t0
    print(json.dumps({{"fit_s": fit, "papers": len(docs), "topics": len(set(topics) - {{-1}}),
                      "outlier_share": sum(t == -1 for t in topics) / len(topics),
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
    """
)


def run_ours(art: Path, name: str, data: Path, code: Path = ROOT) -> dict:
    """One ``build --force`` in a fresh process, stage cache cleared; wall time and the manifest's
    figures. ``code``: the source tree whose pipeline runs (this checkout, or ``--baseline``'s)."""
    shutil.rmtree(art / ".cache" / "stages", ignore_errors=True)
    cmd = [PY, "-m", "pipeline", "--artifacts", str(art), "build", str(data), "--name", name, "--quiet", "--force"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=code, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"build failed: {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    from pipeline.core import artifacts

    manifest = artifacts.read_manifest(artifacts.corpus_path(art, name))
    return {
        "wall_s": wall,
        "papers": manifest.counts.papers,
        "topics": manifest.counts.topics,
        "embedded": manifest.embedding.computed,
        "stages_s": {s.name: round(s.seconds, 1) for s in manifest.stages},
        "peak_rss_mb": manifest.peak_rss_mb,
    }


def run_vanilla(art: Path, name: str) -> dict:
    code = VANILLA.format(root=str(ROOT), art=str(art), name=name)
    start = time.perf_counter()
    proc = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"vanilla BERTopic failed:\n{proc.stderr[-3000:]}")
    return {"wall_s": wall, **json.loads(proc.stdout.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA / "icml2024-unlabeled.jsonl.gz", help="corpus file")
    parser.add_argument("--name", default="icml", help="corpus name")
    parser.add_argument(
        "--pairs", type=int, default=3, help="alternating pairs (ours, vanilla), order swapped each pair"
    )
    parser.add_argument("--artifacts", type=Path, default=OUT / "art-warm-vanilla", help="artifacts folder (kept)")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also build with this revision's code in each round (a 'before' row: same papers, same cached embeddings)",
    )
    parser.add_argument(
        "--target-ratio",
        type=float,
        default=TARGET_RATIO,
        help=f"the target: vanilla's time / ours at least this (default {TARGET_RATIO:g}; 2 = ours at most half)",
    )
    parser.add_argument(
        "--markdown-only", action="store_true", help="rewrite BENCHMARKS.md from the last results, run nothing"
    )
    args = parser.parse_args()
    if args.markdown_only:
        write_block("bench-warm-vanilla", HEADING, markdown(json.loads((OUT / "warm-vanilla.json").read_text())))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    print("first build (embeds and caches the vectors) ...", flush=True)
    first = run_ours(args.artifacts, args.name, args.data)
    before_code = baseline_tree(args.baseline) if args.baseline else None
    ours, vanilla, before = [], [], []
    kinds = ["ours", "vanilla"] + (["before"] if before_code else [])
    for i in range(args.pairs):
        order = kinds[i % len(kinds) :] + kinds[: i % len(kinds)]  # each kind first in turn
        for which in order:
            print(f"round {i + 1}/{args.pairs}: {which} ...", flush=True)
            if which == "ours":
                ours.append(run_ours(args.artifacts, args.name, args.data))
            elif which == "before":  # same cached embeddings (same folder), its own corpus name
                before.append(run_ours(args.artifacts, f"{args.name}-before", args.data, code=before_code))
            else:
                vanilla.append(run_vanilla(args.artifacts, args.name))
    res = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": f"python benchmarks/bench_warm_vanilla.py --pairs {args.pairs}"
        + (f" --data {args.data.name}" if args.data.name != "icml2024-unlabeled.jsonl.gz" else "")
        + (f" --baseline {args.baseline}" if args.baseline else "")
        + (f" --target-ratio {args.target_ratio:g}" if args.target_ratio != TARGET_RATIO else ""),
        "load": os.getloadavg(),
        "cores": os.cpu_count(),
        "first": first,
        "ours": ours,
        "vanilla": vanilla,
        "before": before,
        "baseline": args.baseline,
        "target_ratio": args.target_ratio,
    }
    (OUT / "warm-vanilla.json").write_text(json.dumps(res, indent=2))
    write_block("bench-warm-vanilla", HEADING, markdown(res))
    print(json.dumps(res, indent=2))


def markdown(res: dict) -> str:
    ours, van = res["ours"], res["vanilla"]
    med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
    o, v, vf = med(ours, "wall_s"), med(van, "wall_s"), med(van, "fit_s")
    papers = ours[0]["papers"]
    stages = ", ".join(f"{k} {val}" for k, val in ours[len(ours) // 2]["stages_s"].items())
    load = " / ".join(f"{x:.1f}" for x in res["load"][:2])
    if res["load"][1] > res.get("cores", 2):
        load += f" on {res.get('cores', 2)} cores (**the machine was busy: re-measure on a quiet one**)"
    ratio = v / o
    target = res.get("target_ratio", TARGET_RATIO)
    before = res.get("before") or []
    b = med(before, "wall_s") if before else None
    before_rows = (
        [
            f"| ours before (`{res['baseline']}`), warm rebuild | {before[0]['papers']:,} | {b:.1f} "
            f"({max(r['wall_s'] for r in before):.1f}) | {before[0]['topics']} | stages (s): "
            + ", ".join(f"{k} {val}" for k, val in before[len(before) // 2]["stages_s"].items())
            + " |"
        ]
        if before
        else []
    )
    target_text = (
        f"warm rebuild at most {1 / target:.2g}x the time of vanilla BERTopic on the same embeddings"
        if target < 10
        else f"warm rebuild >= {target:.0f}x faster than vanilla BERTopic on the same embeddings"
    )
    before_verdict = (
        [
            f"| nothing slower than before (`{res['baseline']}`, same run) | {o:.1f} s vs {b:.1f} s before "
            f"({o / b:.2f}x the time) | {'met' if o <= b else '**missed**'} |"
        ]
        if before
        else []
    )
    return "\n".join(
        [
            f"Measured {res['date']} on {res['machine']} with `{res['command']}`: {len(ours)} "
            + ("rounds of the three runs, each kind first in one round" if before else "pairs in alternating order")
            + f", each run a fresh process, medians (worst in brackets). Load average at the end (1 / 5 min): {load}.",
            "",
            "Both sides start from the same cached embeddings of the same papers (the build's `embeddings.npy`): ours "
            "is `build --force` with the stage cache cleared, vanilla is `BERTopic(vectorizer_model=<the project's "
            "CountVectorizer>).fit_transform(docs, embeddings=E)` with BERTopic's default UMAP + HDBSCAN. Both are "
            "timed from process start to end; ours also ingests the file, adds KeyBERTInspired and MMR "
            "representations and labels, computes trends, writes the artifacts and the keyword index and, up to "
            "5,000 papers, clusters 2 more times for per-topic stability; vanilla does none of these.",
            "",
            "| run | papers | wall s | topics | notes |",
            "|---|---|---|---|---|",
            f"| ours, warm rebuild | {papers:,} | {o:.1f} ({max(r['wall_s'] for r in ours):.1f}) | "
            f"{ours[0]['topics']} | {ours[0]['embedded']} embedded; stages (s): {stages} |",
            *before_rows,
            f"| vanilla BERTopic, same embeddings | {van[0]['papers']:,} | {v:.1f} ({max(r['wall_s'] for r in van):.1f}) | "
            f"{van[0]['topics']} | `fit_transform` alone {vf:.1f} s; {van[0]['outlier_share']:.0%} outliers; "
            f"peak {van[0]['peak_rss_mb']:.0f} MB |",
            "",
            "| target | measured | verdict |",
            "|---|---|---|",
            f"| {target_text} ({papers:,} papers) | {o:.1f} s vs {v:.1f} s: "
            + (f"{o / v:.2f}x the time | " if target < 10 else f"{ratio:.2f}x faster | ")
            + f"{'met' if ratio >= target else '**missed**'} |",
            *before_verdict,
        ]
    )


def baseline_tree(rev: str) -> Path:
    """A checkout of ``rev`` (a detached git worktree under benchmarks/output), made once."""
    commit = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True)
    tree = OUT / f"baseline-{commit.stdout.strip()[:12]}"
    if not (tree / "pipeline").is_dir():
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, check=True)
    return tree


if __name__ == "__main__":
    main()
