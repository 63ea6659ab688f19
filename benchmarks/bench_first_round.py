"""The first keyword search after a cold start at a million papers, for two sizes of the exact-phrase
check's first round (``explorer.services.search.PHRASE_FIRST_ROUND``), alternating.

Not part of the product or the tests. Uses the grown build of ``bench_app_grown.py`` (made there and
reused, ``--work``). Every query is measured as the first search of a fresh process started after
the kernel's page cache was emptied (root only), as after a reboot: the process loads the corpus,
opens the keyword index and builds the phrase pattern's whitespace class before the clock starts
(the app's search warm-up does both in the background after the first page), then times the query,
the same query again, and every other query once (the index and the papers' file now partly in the
page cache). The papers the phrase check read are counted. Both sizes must give the same hits (the
result rows are compared): the rounds go on until the page's papers with the phrase are found, so
the first round's size changes only how many papers are read to find them.

    .venv/bin/python benchmarks/bench_first_round.py --work /tmp/app-grown --pairs 3 --sizes 256 64

``--read-ahead`` compares instead the phrase check with and without asking the kernel for the
rows' pages first (``explorer.services.readahead``; off: the same code with the hint withheld), at
the first round's default size; results in ``benchmarks/results/read-ahead.json``.
``--signatures`` compares the phrase check narrowed by the index's signatures of adjacent words
(``pipeline.analysis.bm25_pairs``, ``keyword_index/pairs.npy``) and by its words alone (off: the
same code and files with the signatures withheld, as an index of version 2 is read), read-ahead on
in both; results in ``benchmarks/results/pair-signatures.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_app_grown import NAME, drop_page_cache, make  # noqa: E402
from benchmarks.bench_phrase_narrow import QUERIES  # noqa: E402
from benchmarks.bench_phrase_rounds import COUNT_READS, run_child  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from explorer.services import phrase_scan, search
from explorer.state import data
search.PHRASE_FIRST_ROUND = {size}
if not {read_ahead}:
    from pipeline.core import pages
    pages.madvise = lambda: None
{count_reads}
corpus = data.load_corpus(Path({art!r}), {name!r})
index = search.open_bm25(corpus)
if not {signatures}:
    index.bm25.pairs = None
phrase_scan.python_space()
out = []
for q in [{first!r}, {first!r}] + [q for q in {queries!r} if q != {first!r}]:
    read["papers"] = 0
    t = time.perf_counter(); hits = search.keyword_search(corpus, index, q, k=25)
    out.append({{"query": q, "s": time.perf_counter() - t, "papers_read": read["papers"], "rows": hits.rows.tolist()}})
print(json.dumps(out))
"""


def one(art: Path, size: int, first: str, read_ahead: bool = True, signatures: bool = True) -> list[dict]:
    """A fresh process after the page cache was emptied: ``first`` cold, again, then the others."""
    drop_page_cache()
    code = CHILD.format(
        root=str(ROOT),
        art=str(art),
        name=NAME,
        queries=QUERIES,
        first=first,
        size=size,
        count_reads=COUNT_READS,
        read_ahead=read_ahead,
        signatures=signatures,
    )
    return run_child(code, ROOT)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=1_000_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/app-grown"))
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs=2, default=[256, 64])
    ap.add_argument("--read-ahead", action="store_true", help="compare read-ahead on and off, not two sizes")
    ap.add_argument("--signatures", action="store_true", help="compare the pairs' signatures on and off")
    ap.add_argument(
        "--out", type=Path, help="results (default: benchmarks/results/first-round.json or read-ahead.json)"
    )
    args = ap.parse_args()
    kind = "pair-signatures" if args.signatures else "read-ahead" if args.read_ahead else "first-round"
    out = args.out or ROOT / "benchmarks" / "results" / f"{kind}.json"
    art = make(args.work, args.papers)
    from explorer.services.search import PHRASE_FIRST_ROUND as default

    variants = {
        "pair-signatures": {"on": (default, True, True), "off": (default, True, False)},
        "read-ahead": {"on": (default, True, True), "off": (default, False, True)},
        "first-round": {s: (s, True, True) for s in args.sizes},
    }[kind]
    names = list(variants)
    runs: dict = {name: [] for name in names}
    for i in range(args.pairs):
        for query in QUERIES:
            for name in names if (i + QUERIES.index(query)) % 2 == 0 else names[::-1]:
                size, ahead, signatures = variants[name]
                searches = one(art, size, query, ahead, signatures)
                runs[name].append(searches)
                print(json.dumps({"variant": name, "query": query, "cold_s": round(searches[0]["s"], 3),
                                  "again_s": round(searches[1]["s"], 3), "papers_read": searches[0]["papers_read"],
                                  "others_max_s": round(max(s["s"] for s in searches[2:]), 3)}), flush=True)  # fmt: skip
    a, b = (runs[name] for name in names)
    same = all(x["rows"] == y["rows"] for r, o in zip(a, b, strict=True) for x, y in zip(r, o, strict=True))
    summary = {}
    for name in names:
        per_query = {}
        for query in QUERIES:
            rows = [r for r in runs[name] if r[0]["query"] == query]
            cold = [r[0]["s"] for r in rows]
            per_query[query] = {
                "cold_s_median": round(statistics.median(cold), 3),
                "cold_s_range": [round(min(cold), 3), round(max(cold), 3)],
                "again_s_median": round(statistics.median(r[1]["s"] for r in rows), 3),
                "papers_read": rows[0][0]["papers_read"],
            }
        later = [s["s"] for r in runs[name] for s in r[1:]]
        summary[str(name)] = {
            "queries": per_query,
            "later_s_max": round(max(later), 3),
            "later_s_median": round(statistics.median(later), 3),
        }
    result = {"same_hits": same, "pairs": args.pairs, "papers": args.papers, "summary": summary,
              "load_average": Path("/proc/loadavg").read_text().split()[:3]}  # fmt: skip
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
