"""Keyword search at a million papers with and without the index narrowing the exact-phrase check
(``explorer.services.search.KeywordIndex.phrase_candidates``), same run, alternating.

Not part of the product or the tests. Three kinds of run, each a fresh process on a real build:

* ``on``: this checkout, a build whose ``keyword_index/`` indexes the shown titles and abstracts
  (``meta.json`` version 2 or later): the postings narrow the phrase check (from version 3 the
  signatures of adjacent words too; ``bench_first_round.py --signatures`` compares those alone);
* ``off``: the same code and build with the narrowing switched off (the index wrapped as an older
  build's), which checks the phrase as before: the like-for-like baseline, same hits (checked);
* ``before`` (with ``--before-code`` and ``--before-art``): the code of an earlier commit (a
  worktree) on the same papers with the index it built (version 1, of ``model_text``); its hits
  differ a little (another text indexed), so only its times are compared.

Each process loads the corpus, opens the index (untimed, as the app's warm-up does), then times
each query twice (the first search and a repeat) and counts the papers the phrase check read.
The files are in the page cache (a first untimed run reads them); with ``--cold`` the kernel's
page cache is emptied before each run instead (root only), as after a reboot, so the first query
reads the index's postings and the abstracts from the disk.

    .venv/bin/python benchmarks/bench_phrase_narrow.py --art /work/cache/v2/artifacts --name 1m \\
        --before-code /tmp/wt-base --before-art /work/cache/sid/artifacts --pairs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_app_grown import drop_page_cache  # noqa: E402
from benchmarks.bench_phrase_rounds import COUNT_READS, run_child  # noqa: E402

#: The rare phrases of BENCHMARKS.md ("The real 1M build again"), two more, and common ones.
QUERIES = [
    "diffusion models for image generation",
    "reinforcement learning exploration",
    "contrastive learning of protein structures",
    "federated learning with differential privacy",
    "graph neural networks",
    "large language models",
    "in this paper we propose",
]

CHILD = """
import json, sys, time
sys.path.insert(0, {code!r})
from pathlib import Path
from explorer.services import search
from explorer.state import data
{count_reads}
corpus = data.load_corpus(Path({art!r}), {name!r})
index = search.open_bm25(corpus)
if {off!r}:
    index = search.KeywordIndex(index.bm25, shown_text=False)
out = []
for q in {queries!r}:
    row = {{"query": q}}
    for when in ("first", "repeat"):
        read["papers"] = 0
        t = time.perf_counter(); hits = search.keyword_search(corpus, index, q, k=25)
        row[when + "_s"] = time.perf_counter() - t
    row["papers_read"] = read["papers"]
    row["rows"] = hits.rows.tolist()
    row["exact"] = int(hits.exact.sum())
    out.append(row)
print(json.dumps(out))
"""


def one(code: Path, art: Path, name: str, off: bool, cold: bool = False) -> list[dict]:
    if cold:
        drop_page_cache()
    child = CHILD.format(code=str(code), art=str(art), name=name, off=off, queries=QUERIES, count_reads=COUNT_READS)
    return run_child(child, code)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--art", type=Path, required=True, help="artifacts root of a build with a version 2 index")
    ap.add_argument("--name", default="1m")
    ap.add_argument("--before-code", type=Path, help="a worktree of the code before")
    ap.add_argument("--before-art", type=Path, help="artifacts root of the same papers built by that code")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="empty the page cache before each run (root)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "phrase-narrow.json")
    args = ap.parse_args()
    kinds = {"on": (ROOT, args.art, False), "off": (ROOT, args.art, True)}
    if args.before_code and args.before_art:
        kinds["before"] = (args.before_code, args.before_art, False)
    for code, art, off in kinds.values() if not args.cold else ():  # files into the page cache, untimed
        one(code, art, args.name, off)
    runs: dict[str, list[list[dict]]] = {k: [] for k in kinds}
    order = list(kinds)
    for i in range(args.pairs):
        for kind in order if i % 2 == 0 else order[::-1]:
            runs[kind].append(one(*kinds[kind][:2], args.name, kinds[kind][2], args.cold))
            print(
                kind, json.dumps([(r["query"][:24], round(r["first_s"], 3), r["papers_read"]) for r in runs[kind][-1]])
            )
    same = all(a == b for x, y in zip(runs["on"], runs["off"], strict=True) for a, b in zip(
        [(r["rows"], r["exact"]) for r in x], [(r["rows"], r["exact"]) for r in y], strict=True))  # fmt: skip
    table = []
    for q, query in enumerate(QUERIES):
        row = {"query": query}
        for kind in kinds:
            firsts = [run[q]["first_s"] for run in runs[kind]]
            repeats = [run[q]["repeat_s"] for run in runs[kind]]
            row[kind] = {
                "first_s_median": statistics.median(firsts), "first_s_range": [min(firsts), max(firsts)],
                "repeat_s_median": statistics.median(repeats), "papers_read": runs[kind][0][q]["papers_read"],
                "exact": runs[kind][0][q]["exact"],
            }  # fmt: skip
        table.append(row)
    result = {"same_hits_on_off": same, "pairs": args.pairs, "cold": args.cold, "queries": table,
              "load_average": Path("/proc/loadavg").read_text().split()[:3]}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
