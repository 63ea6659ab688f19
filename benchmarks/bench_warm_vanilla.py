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
    .venv/bin/python benchmarks/bench_warm_vanilla.py --data /work/cache/bench/corpus-100k/papers-000.parquet \
        --name b100k --artifacts /work/cache/bench/artifacts-real --baseline REV --no-vanilla \
        --block bench-before-100k   # issue 23: 100k, nothing slower than REV (its own block)

``--no-vanilla`` leaves vanilla out (ours and ``--baseline`` only: a before/after of our builds);
``--block`` writes another marked block of BENCHMARKS.md (appended as a section of its own where the
file has no such markers yet), so a run on another corpus does not replace the 18.7k figures.
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
#: The BENCHMARKS.md block (and ``benchmarks/output/BLOCK.json``) a run writes by default.
BLOCK = "bench-warm-vanilla"

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
    default_data = DATA / "icml2024-unlabeled.jsonl.gz"
    parser.add_argument("--data", type=Path, default=default_data, help="corpus file")
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
    parser.add_argument("--no-vanilla", action="store_true", help="leave vanilla out: ours against --baseline only")
    parser.add_argument("--block", default=BLOCK, help=f"BENCHMARKS.md block to write (default {BLOCK})")
    parser.add_argument(
        "--heading",
        default=None,
        help=f"the section a new block is appended under (default: {HEADING!r} for {BLOCK}, the block's name otherwise)",
    )
    parser.add_argument(
        "--markdown-only", action="store_true", help="rewrite BENCHMARKS.md from the last results, run nothing"
    )
    args = parser.parse_args()
    if args.no_vanilla and not args.baseline:
        parser.error("--no-vanilla needs --baseline (there would be nothing to compare)")
    results = OUT / ("warm-vanilla.json" if args.block == BLOCK else f"{args.block}.json")
    # A block of its own never lands under a second copy of the default block's heading.
    heading = args.heading or (HEADING if args.block == BLOCK else args.block)
    if args.markdown_only:
        write_block(args.block, heading, markdown(json.loads(results.read_text())))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    print("first build (embeds and caches the vectors) ...", flush=True)
    first = run_ours(args.artifacts, args.name, args.data)
    before_code = baseline_tree(args.baseline) if args.baseline else None
    ours, vanilla, before = [], [], []
    kinds = ["ours"] + ([] if args.no_vanilla else ["vanilla"]) + (["before"] if before_code else [])
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
        + (f" --data {args.data.name if args.data.parent == DATA else args.data}" if args.data != default_data else "")
        + (f" --baseline {args.baseline}" if args.baseline else "")
        + (f" --target-ratio {args.target_ratio:g}" if args.target_ratio != TARGET_RATIO else "")
        + (" --no-vanilla" if args.no_vanilla else "")
        + (f" --block {args.block}" if args.block != BLOCK else ""),
        "load": os.getloadavg(),
        "cores": os.cpu_count(),
        "first": first,
        "ours": ours,
        "vanilla": vanilla,
        "before": before,
        "baseline": args.baseline,
        "target_ratio": args.target_ratio,
    }
    results.write_text(json.dumps(res, indent=2))
    write_block(args.block, heading, markdown(res))
    print(json.dumps(res, indent=2))


def markdown(res: dict) -> str:
    ours, van, before = res["ours"], res["vanilla"], res.get("before") or []
    med = lambda rows, key: statistics.median(r[key] for r in rows)  # noqa: E731
    worst = lambda rows: max(r["wall_s"] for r in rows)  # noqa: E731
    stages = lambda rows: ", ".join(  # noqa: E731
        f"{k} {statistics.median(r['stages_s'].get(k, 0.0) for r in rows):.1f}" for k in rows[0]["stages_s"]
    )
    o, papers = med(ours, "wall_s"), ours[0]["papers"]
    load = " / ".join(f"{x:.1f}" for x in res["load"][:2])
    if res["load"][1] > res.get("cores", 2):
        load += f" on {res.get('cores', 2)} cores (**the machine was busy: re-measure on a quiet one**)"
    kinds = 1 + bool(van) + bool(before)
    rows = [
        f"| ours, warm rebuild | {papers:,} | {o:.1f} ({worst(ours):.1f}) | {ours[0]['topics']} | "
        f"{ours[0]['embedded']} embedded; median peak {med(ours, 'peak_rss_mb'):,.0f} MB; stages (s, medians): {stages(ours)} |"
    ]
    verdicts = []
    if before:
        b = med(before, "wall_s")
        rows.append(
            f"| ours before (`{res['baseline']}`), warm rebuild | {before[0]['papers']:,} | {b:.1f} ({worst(before):.1f}) | "
            f"{before[0]['topics']} | median peak {med(before, 'peak_rss_mb'):,.0f} MB; stages (s, medians): {stages(before)} |"
        )
        verdicts.append(
            f"| nothing slower than before (`{res['baseline']}`, same run) | {o:.1f} s vs {b:.1f} s before "
            f"({o / b:.2f}x the time) | {'met' if o <= b else '**missed**'} |"
        )
    if van:
        v, vf, target = med(van, "wall_s"), med(van, "fit_s"), res.get("target_ratio", TARGET_RATIO)
        rows.append(
            f"| vanilla BERTopic, same embeddings | {van[0]['papers']:,} | {v:.1f} ({worst(van):.1f}) | "
            f"{van[0]['topics']} | `fit_transform` alone {vf:.1f} s; {van[0]['outlier_share']:.0%} outliers; "
            f"peak {van[0]['peak_rss_mb']:.0f} MB |"
        )
        target_text = (
            f"warm rebuild at most {1 / target:.2g}x the time of vanilla BERTopic on the same embeddings"
            if target < 10
            else f"warm rebuild >= {target:.0f}x faster than vanilla BERTopic on the same embeddings"
        )
        verdicts.insert(
            0,
            f"| {target_text} ({papers:,} papers) | {o:.1f} s vs {v:.1f} s: "
            + (f"{o / v:.2f}x the time | " if target < 10 else f"{v / o:.2f}x faster | ")
            + f"{'met' if v / o >= target else '**missed**'} |",
        )
    what = (
        "Both sides start from the same cached embeddings of the same papers (the build's `embeddings.npy`): ours "
        "is `build --force` with the stage cache cleared, vanilla is `BERTopic(vectorizer_model=<the project's "
        "CountVectorizer>).fit_transform(docs, embeddings=E)` with BERTopic's default UMAP + HDBSCAN. Both are "
        "timed from process start to end; ours also ingests the file, adds KeyBERTInspired and MMR "
        "representations and labels, computes trends, writes the artifacts and the keyword index and, up to "
        "5,000 papers, clusters 2 more times for per-topic stability; vanilla does none of these."
        if van
        else "Both sides are `build --force` of the same file with the stage cache cleared, from the same cached "
        "embeddings (one artifacts folder, each side its own corpus name), timed from process start to end; "
        "peak memory is the build's own record (its manifest)."
    )
    return "\n".join(
        [
            f"Measured {res['date']} on {res['machine']} with `{res['command']}`: {len(ours)} "
            + (f"rounds of the {kinds} runs, each kind first in turn" if kinds > 2 else "pairs in alternating order")
            + f", each run a fresh process, medians (worst in brackets). Load average at the end (1 / 5 min): {load}.",
            "",
            what,
            "",
            "| run | papers | wall s | topics | notes |",
            "|---|---|---|---|---|",
            *rows,
            "",
            "| target | measured | verdict |",
            "|---|---|---|",
            *verdicts,
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
