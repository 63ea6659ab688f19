"""The build's keyword index (``keyword_index/``), this checkout against a baseline revision.

    python benchmarks/bench_index_build.py --sizes 100k 1m --baseline REV [--pairs 3]

The texts are ``bench_search_index.py``'s (the real shared abstracts, then recombined ones with
new words at Heaps' law's rate), made once per size under ``--work``. Each run is a fresh process
(``bench_search_index.py``'s ``build`` phase: ``bm25.build_index`` of the papers' titles and
abstracts, then ``bm25.save_index``, as the build's ``keyword_index`` stage does), with this
checkout's code or the baseline's (``git archive``); the sides alternate. Both sides' index files
must be the same bytes: a faster index that differs does not count. Peak memory is the process's
own (``VmHWM``; worker processes, where the code starts them, hold one chunk of texts each).
Writes ``benchmarks/output/NAME.json`` and the block NAME of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import bench_search_index as texts_bench  # noqa: E402
from benchmarks.markdown_block import record, spread  # noqa: E402


def texts_for(size: str, work: Path) -> Path:
    """``work/SIZE/texts.parquet``, made by ``bench_search_index.make_texts`` unless it is there."""
    folder = work / size
    folder.mkdir(parents=True, exist_ok=True)
    texts, info = folder / "texts.parquet", folder / "texts.json"
    if not (texts.is_file() and info.is_file()):
        info.write_text(json.dumps(texts_bench.make_texts(texts_bench.SIZES[size], texts)))
    return texts


def one_run(texts: Path, folder: Path, code: Path) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return texts_bench.run_phase("build", str(texts), str(folder), code=code)


def same_files(a: Path, b: Path, changed: tuple[str, ...] = ()) -> bool:
    """Whether folders ``a`` and ``b`` hold the same files, byte for byte, except ``changed`` (files a
    change adds or rewrites on purpose, which either side may lack)."""
    names = sorted(p.name for p in a.iterdir() if p.name not in changed)
    if names != sorted(p.name for p in b.iterdir() if p.name not in changed):
        return False
    return all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


def summary(runs: list[dict]) -> dict:
    return {
        **spread([r["build_s"] for r in runs]),
        "save_s": statistics.median(r["save_s"] for r in runs),
        "peak_mb": statistics.median(r["peak_mb"] for r in runs),
        "vocab": runs[0]["vocab"],
        "postings": runs[0]["postings"],
    }


def markdown(res: dict) -> str:
    rows = [
        f"Measured {res['date']} on {res['machine']} with `{res['command']}`: {res['pairs']} pairs in "
        "alternating order, each run a fresh process building and saving the index of the texts; "
        f"medians (range in brackets). Load average at the end (1 / 5 min): {res['load']}.",
        "",
        "| papers | side | index built, s | saved, s | peak MB | words | postings |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    verdicts = []
    for r in res["sizes"].values():
        for label, side in (("ours", r["ours"]), (f"before (`{res['baseline']}`)", r["baseline"])):
            rows.append(
                f"| {r['n']:,} | {label} | {side['median_s']:.1f} ({side['min_s']:.1f}-{side['max_s']:.1f}) | "
                f"{side['save_s']:.1f} | {side['peak_mb']:,.0f} | {side['vocab']:,} | {side['postings']:,} |"
            )
        ratio = r["ours"]["median_s"] / r["baseline"]["median_s"]
        ok = ratio <= 1 and r["same_files"] and r["ours"]["peak_mb"] <= r["baseline"]["peak_mb"]
        but = f" except {', '.join(res['changed'])} (changed on purpose)" if res.get("changed") else ""
        verdicts.append(
            f"| {r['n']:,} papers: the same index files{but}, built no slower and in no more memory (same run) | "
            f"{ratio:.2f}x the time, {r['ours']['peak_mb']:,.0f} MB against {r['baseline']['peak_mb']:,.0f} MB; "
            f"files {'identical' if r['same_files'] else '**differ**'}{but} | {'met' if ok else '**missed**'} |"
        )
    return "\n".join([*rows, "", "| target | measured | verdict |", "|---|---|---|", *verdicts])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["100k"], choices=list(texts_bench.SIZES))
    ap.add_argument("--baseline", required=True, help="git revision to compare with")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-index-build"))
    ap.add_argument("--block", default="index-build-before-after", help="BENCHMARKS.md block and output name")
    ap.add_argument(
        "--changed", nargs="*", default=[], help="index files the change adds or rewrites on purpose (not compared)"
    )
    args = ap.parse_args(argv)

    base = texts_bench.baseline_tree(args)
    res = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "command": f"python benchmarks/bench_index_build.py --sizes {' '.join(args.sizes)} --baseline {args.baseline} "
        f"--pairs {args.pairs}" + (f" --changed {' '.join(args.changed)}" if args.changed else ""),
        "baseline": args.baseline,
        "pairs": args.pairs,
        "changed": args.changed,
        "sizes": {},
    }
    for size in args.sizes:
        texts = texts_for(size, args.work)
        runs: dict[str, list[dict]] = {"ours": [], "baseline": []}
        for pair in range(args.pairs):
            order = [("ours", ROOT), ("baseline", base)]
            for side, code in order if pair % 2 == 0 else order[::-1]:
                runs[side].append(one_run(texts, args.work / size / side, code))
                print(size, side, json.dumps(runs[side][-1]), flush=True)
        res["sizes"][size] = {
            "n": texts_bench.SIZES[size],
            "ours": summary(runs["ours"]),
            "baseline": summary(runs["baseline"]),
            "same_files": same_files(
                args.work / size / "ours" / "keyword_index",
                args.work / size / "baseline" / "keyword_index",
                tuple(args.changed),
            ),
            "runs": runs,
        }
    res["load"] = " / ".join(f"{x:.1f}" for x in os.getloadavg()[:2])
    record(args.block, "Keyword index build, before and after", res, markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
