"""The first keyword search after a cold start at a million papers, for two round growths of the
exact-phrase check (``explorer.services.search.PHRASE_ROUND_GROWTH``), alternating.

Not part of the product or the tests. Uses the grown build of ``bench_app_grown.py`` (made there
and reused, ``--work``). Each measurement is a fresh process started after the kernel's page cache
was emptied (root only), as after a reboot: it loads the corpus, opens the keyword index, then
times the three queries of ``bench_app_grown.QUERIES`` and counts the papers the phrase check
read. Both growths give the same hits (checked: the result rows are compared).

    .venv/bin/python benchmarks/bench_phrase_rounds.py --work /tmp/app-grown --pairs 4 --growths 8 4
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_app_grown import NAME, QUERIES, drop_page_cache, make  # noqa: E402

#: A child's lines that count the papers the exact-phrase check reads (``read["papers"]``), after
#: ``from explorer.services import search``.
COUNT_READS = """
read = {"papers": 0}
check = search.phrase_rows
def counted(corpus, rows, query):
    read["papers"] += len(rows)
    return check(corpus, rows, query)
search.phrase_rows = counted
"""

CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from explorer.services import search
from explorer.state import data
search.PHRASE_ROUND_GROWTH = {growth}
{count_reads}
corpus = data.load_corpus(Path({art!r}), {name!r})
t = time.perf_counter(); index = search.open_bm25(corpus); opened = time.perf_counter() - t
out = []
for q in {queries!r}:
    read["papers"] = 0
    t = time.perf_counter(); hits = search.keyword_search(corpus, index, q, k=25)
    out.append({{"query": q, "s": time.perf_counter() - t, "papers_read": read["papers"], "rows": hits.rows.tolist()}})
print(json.dumps({{"index_open_s": opened, "searches": out}}))
"""


def one(art: Path, growth: int) -> dict:
    drop_page_cache()
    code = CHILD.format(
        root=str(ROOT), art=str(art), name=NAME, queries=QUERIES, growth=growth, count_reads=COUNT_READS
    )
    return run_child(code, ROOT)


def run_child(code: str, cwd: Path):
    """Run ``code`` in a fresh Python process in ``cwd``; its last line of output, read as JSON."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=1_000_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/app-grown"))
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--growths", type=int, nargs=2, default=[8, 4])
    args = ap.parse_args()
    art = make(args.work, args.papers)
    runs: dict[int, list[dict]] = {g: [] for g in args.growths}
    for i in range(args.pairs):
        for g in args.growths if i % 2 == 0 else args.growths[::-1]:
            row = one(art, g)
            runs[g].append(row)
            print(json.dumps({"growth": g, "index_open_s": round(row["index_open_s"], 3),
                              "first_s": round(row["searches"][0]["s"], 3),
                              "papers_read": [s["papers_read"] for s in row["searches"]],
                              "later_s": [round(s["s"], 3) for s in row["searches"][1:]]}), flush=True)  # fmt: skip
    a, b = (runs[g] for g in args.growths)
    same = all(
        x["rows"] == y["rows"]
        for r, o in zip(a, b, strict=True)
        for x, y in zip(r["searches"], o["searches"], strict=True)
    )
    summary = {
        str(g): {
            "first_s_median": statistics.median(r["searches"][0]["s"] for r in runs[g]),
            "first_s_range": [min(r["searches"][0]["s"] for r in runs[g]), max(r["searches"][0]["s"] for r in runs[g])],
        }
        for g in args.growths
    }
    print(
        json.dumps(
            {"same_hits": same, "summary": summary, "load_average": Path("/proc/loadavg").read_text().split()[:3]}
        )
    )


if __name__ == "__main__":
    main()
