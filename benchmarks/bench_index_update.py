"""Papers added to a built corpus: the keyword index updated (``bm25_update``) against built again.

    python benchmarks/bench_index_update.py --sizes 100k 1m --add 1000 10000 [--pairs 3]

The texts are ``bench_index_build.py``'s (``bench_search_index.make_texts``: the real shared
abstracts, then recombined ones with new words at Heaps' law's rate), made once per size under
``--work``. The previous build's index is that of all but the last ADD papers (this checkout's
``bm25.build_index`` and ``save_index``, not timed); then, alternating, each in a fresh process:

* **updated**: what a build that adds the ADD papers does in its ``keyword_index`` stage
  (``bm25_update.previous_counts`` of the previous index, memory-mapped; ``update_index``, which
  tokenises the new papers only; ``save_index``);
* **built**: what it did before (``bm25.build_index`` of every paper; ``save_index``).

Both must write the same files, byte for byte: an update that differs does not count. Peak memory
is the process's own (``VmHWM``). Writes ``benchmarks/output/NAME.json`` and the block NAME of
BENCHMARKS.md.
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
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import bench_search_index as texts_bench  # noqa: E402
from benchmarks.bench_index_build import same_files, texts_for  # noqa: E402
from benchmarks.markdown_block import record, spread  # noqa: E402


def phase(kind: str, texts: Path, add: int, folder: Path) -> dict:
    """One run in this process: ``prepare`` (the previous index), ``updated`` or ``built``."""
    from pipeline.analysis import bm25, bm25_update

    papers = pd.read_parquet(texts)
    n, old = len(papers), len(papers) - add
    out = folder / "keyword_index"
    shutil.rmtree(out, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if kind == "prepare":
        index = bm25.build_index(bm25.ShownTexts(papers["title"].iloc[:old], papers["abstract"].iloc[:old]))
        n = old
    elif kind == "updated":
        previous = bm25_update.previous_counts(folder.parent / "previous" / "keyword_index", old)
        if previous is None:
            raise RuntimeError("the previous index cannot be updated")
        rows = np.concatenate([np.arange(old), np.full(add, -1)])
        index = bm25_update.update_index(previous, rows, papers["title"], papers["abstract"])
        del previous
    else:
        index = bm25.build_index(bm25.ShownTexts(papers["title"], papers["abstract"]))
    made = time.perf_counter() - t0
    t0 = time.perf_counter()
    bm25.save_index(index, out, n)
    saved = time.perf_counter() - t0
    return {"made_s": made, "save_s": saved, "total_s": made + saved, "peak_mb": texts_bench.memory()["VmHWM"]}


def run_phase(kind: str, texts: Path, add: int, folder: Path) -> dict:
    cmd = [sys.executable, __file__, "--phase", kind, str(texts), str(add), str(folder)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def summary(runs: list[dict]) -> dict:
    return {
        **spread([r["total_s"] for r in runs]),
        "made_s": statistics.median(r["made_s"] for r in runs),
        "save_s": statistics.median(r["save_s"] for r in runs),
        "peak_mb": statistics.median(r["peak_mb"] for r in runs),
    }


def markdown(res: dict) -> str:
    rows = [
        f"Measured {res['date']} on {res['machine']} with `{res['command']}`: {res['pairs']} pairs in "
        "alternating order, each run a fresh process making and saving the index of every paper; "
        f"medians (range in brackets). Load average at the end (1 / 5 min): {res['load']}.",
        "",
        "| papers, of them added | side | stage, s | index made, s | saved, s | peak MB |",
        "|---|---|---|---:|---:|---:|",
    ]
    verdicts = []
    for r in res["cases"]:
        for side in ("updated", "built"):
            s = r[side]
            rows.append(
                f"| {r['n']:,}, {r['add']:,} | {side} | {s['median_s']:.1f} ({s['min_s']:.1f}-{s['max_s']:.1f}) | "
                f"{s['made_s']:.1f} | {s['save_s']:.1f} | {s['peak_mb']:,.0f} |"
            )
        ratio = r["updated"]["median_s"] / r["built"]["median_s"]
        ok = ratio <= 0.5 and r["same_files"] and r["updated"]["peak_mb"] <= r["built"]["peak_mb"]
        verdicts.append(
            f"| {r['n']:,} papers, {r['add']:,} added: the same index files, in at most half the time and "
            f"no more memory (same run) | {ratio:.2f}x the time, {r['updated']['peak_mb']:,.0f} MB against "
            f"{r['built']['peak_mb']:,.0f} MB; files {'identical' if r['same_files'] else '**differ**'} | "
            f"{'met' if ok else '**missed**'} |"
        )
    return "\n".join([*rows, "", "| target | measured | verdict |", "|---|---|---|", *verdicts])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["100k"], choices=list(texts_bench.SIZES))
    ap.add_argument("--add", nargs="+", type=int, default=[1000], help="papers added (the last ones of the texts)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-index-build"))
    ap.add_argument("--block", default="index-update", help="BENCHMARKS.md block and output name")
    ap.add_argument("--phase", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.phase:
        kind, texts, add, folder = args.phase
        print(json.dumps(phase(kind, Path(texts), int(add), Path(folder))))
        return 0
    res = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "command": f"python benchmarks/bench_index_update.py --sizes {' '.join(args.sizes)} "
        f"--add {' '.join(map(str, args.add))} --pairs {args.pairs}",
        "pairs": args.pairs,
        "cases": [],
    }
    for size in args.sizes:
        texts = texts_for(size, args.work)
        for add in args.add:
            work = args.work / size / f"add-{add}"
            run_phase("prepare", texts, add, work / "previous")
            runs: dict[str, list[dict]] = {"updated": [], "built": []}
            for pair in range(args.pairs):
                order = ["updated", "built"] if pair % 2 == 0 else ["built", "updated"]
                for side in order:
                    runs[side].append(run_phase(side, texts, add, work / side))
                    print(size, add, side, json.dumps(runs[side][-1]), flush=True)
            res["cases"].append(
                {
                    "n": texts_bench.SIZES[size],
                    "add": add,
                    "updated": summary(runs["updated"]),
                    "built": summary(runs["built"]),
                    "same_files": same_files(work / "updated" / "keyword_index", work / "built" / "keyword_index"),
                    "runs": runs,
                }
            )
    res["load"] = " / ".join(f"{x:.1f}" for x in os.getloadavg()[:2])
    record(args.block, "Papers added: the keyword index updated, not built again", res, markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
