"""The ingest of one input file, this checkout against a baseline revision, in the same run.

    python benchmarks/bench_ingest_file.py --data FILE --baseline REV [--pairs 3] [--block NAME]

Each run is a fresh process that imports the side's ``pipeline`` (this checkout, or a git worktree
of ``--baseline`` under benchmarks/output) and times ``ingest([FILE])`` alone, with default
parameters; the sides alternate (ours first in odd pairs, the baseline first in even ones). Both
sides must give the same papers (a digest of every paper column, compared): a faster ingest that
changes a paper does not count. Writes ``benchmarks/output/NAME.json`` and the block NAME of
BENCHMARKS.md (default ``ingest-before-after``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_warm_vanilla import baseline_tree  # noqa: E402
from benchmarks.markdown_block import record, spread  # noqa: E402

# Run in a fresh interpreter with the side's tree first on sys.path; prints one JSON line.
CHILD = """
import hashlib, json, os, resource, sys, threading, time
sys.path.insert(0, {code!r})
WORKERS_MB = [0.0]
def watch(stop):
    # The worker processes' resident memory, summed, sampled every 50 ms (their ru_maxrss would
    # count the pages of this process that a fork shares before the new interpreter starts).
    while not stop.wait(0.05):
        total = 0
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{{entry}}/status") as status:
                    fields = dict(line.split(":", 1) for line in status if ":" in line)
                if int(fields["PPid"]) == os.getpid() and "VmRSS" in fields:
                    total += int(fields["VmRSS"].split()[0])
            except (OSError, ValueError, KeyError):
                pass
        WORKERS_MB[0] = max(WORKERS_MB[0], total / 1024)
def main():
    from pipeline.ingest.ingest import ingest
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(stop,), daemon=True)
    watcher.start()
    start = time.perf_counter()
    result = ingest([{data!r}])
    seconds = time.perf_counter() - start
    stop.set()
    watcher.join()
    papers = result.papers
    digest = hashlib.sha256()
    for column in sorted(papers.columns):
        digest.update(column.encode())
        digest.update("\\x1f".join(map(str, papers[column].tolist())).encode("utf-8", "surrogatepass"))
    print(json.dumps({{
        "seconds": seconds,
        "papers": len(papers),
        "digest": digest.hexdigest(),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "workers_peak_mb": WORKERS_MB[0],
    }}))
if __name__ == "__main__":
    main()
"""


def run(code: Path, data: Path) -> dict:
    """One ingest of ``data`` by the pipeline in ``code``, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(code=str(code), data=str(data))],
        cwd=str(code), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(runs: list[dict]) -> dict:
    return {
        **spread([r["seconds"] for r in runs]),
        "peak_mb": statistics.median(r["peak_mb"] for r in runs),
        "workers_peak_mb": max(r["workers_peak_mb"] for r in runs),
        "papers": runs[0]["papers"],
        "same_papers_every_run": len({r["digest"] for r in runs}) == 1,
    }


def markdown(result: dict) -> str:
    ours, base = result["ours"], result["baseline"]
    same = ours["same_papers_every_run"] and base["same_papers_every_run"] and result["same_papers"]
    ratio = ours["median_s"] / base["median_s"]
    rows = [
        f"Measured {result['date']} on {result['machine']} with `{result['command']}`: {result['pairs']} "
        "pairs in alternating order, each run a fresh process timing `ingest([FILE])` alone, "
        f"medians (range in brackets). Load average at the end (1 / 5 min): {result['load']}.",
        "",
        "| side | papers | ingest s | peak MB (the process) | peak MB (its workers together, sampled) |",
        "|---|---:|---|---:|---:|",
    ]
    for label, side in (("ours", ours), (f"before (`{result['baseline_rev']}`)", base)):
        rows.append(
            f"| {label} | {side['papers']:,} | {side['median_s']:.2f} ({side['min_s']:.2f}-{side['max_s']:.2f}) | "
            f"{side['peak_mb']:,.0f} | {side['workers_peak_mb']:,.0f} |"
        )
    verdict = "met" if ratio <= 1 and same else "**missed**"
    rows += [
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
        f"| the same papers, ingest not slower than before (same run) | {ratio:.2f}x the time; papers "
        f"{'identical' if same else '**differ**'} | {verdict} |",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="the input file to ingest")
    parser.add_argument("--baseline", required=True, help="git revision to compare with")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--block", default="ingest-before-after", help="BENCHMARKS.md block and output name")
    args = parser.parse_args(argv)

    base_tree = baseline_tree(args.baseline)
    runs: dict[str, list[dict]] = {"ours": [], "baseline": []}
    for pair in range(args.pairs):
        order = [("ours", ROOT), ("baseline", base_tree)]
        for side, code in order if pair % 2 == 0 else order[::-1]:
            runs[side].append(run(code, args.data.resolve()))
            print(side, json.dumps(runs[side][-1]), flush=True)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "command": f"python benchmarks/bench_ingest_file.py --data {args.data} --baseline {args.baseline} "
        f"--pairs {args.pairs} --block {args.block}",
        "baseline_rev": args.baseline,
        "pairs": args.pairs,
        "load": " / ".join(f"{x:.1f}" for x in os.getloadavg()[:2]),
        "ours": summary(runs["ours"]),
        "baseline": summary(runs["baseline"]),
        "same_papers": runs["ours"][0]["digest"] == runs["baseline"][0]["digest"],
        "runs": runs,
    }
    record(args.block, "Ingest of one file, before and after", result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
