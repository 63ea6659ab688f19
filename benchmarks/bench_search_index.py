"""Keyword search and corpus loading: the build's memory-mapped artifacts against the old paths.

Not part of the product or the tests. One command; the figures go into BENCHMARKS.md ("Keyword
index and corpus load"). Same run, like against like, each measurement in a fresh process:

* **Keyword search, old**: the app's path before ``keyword_index/``: the papers' texts in memory
  (read from Parquet, as the old corpus load did), the BM25 index built on the first search
  (``explorer.services.search.build_bm25``'s ``pipeline.analysis.bm25.build_index``), then the query.
* **Keyword search, new**: the build's ``keyword_index/`` loaded memory-mapped
  (``pipeline.analysis.bm25.load_index``) and the titles and abstracts memory-mapped from ``papers.arrow``
  (the phrase check reads them), then the query.
  Both run ``explorer.services.search.keyword_search`` itself (BM25, the exact-phrase check, the order).
* **Corpus load**: ``explorer.state.data.load_corpus`` on one build folder with ``papers.arrow`` (new)
  and on the same files without it (old: papers.parquet read in full).

Texts (no embeddings are needed here). The real shared abstracts (NeurIPS, ICLR, ICML, IJCAI,
about 35,000) as they are, then recombined papers up to the size: each takes the sentence count of
a random real abstract, and its sentence i is the sentence at the same relative position of one of
8 randomly drawn real abstracts; its title is the first of those papers'. Sentences alone add no new
words, and an index's vocabulary (and so its size) grows with the corpus in real text, so each
recombined abstract then gets new words from ``benchmarks/heaps.py`` (the corpora of
``make_corpora.py`` get theirs the same way): ``VocabularyGrowth`` with Heaps' law as fitted there on
the real abstracts' tokens (``heaps.HEAPS``, ``V = K N^beta``) replaces some of its content words by
coined ones (a real word's head joined to another's tail) and as many by earlier coined words, so the
abstracts' vocabulary grows beyond the real papers' at the law's rate. Model text is
``title. abstract`` (whitespace normalised, not cleaned: ``pipeline.ingest.clean`` is not the subject
here).

The corpus-load folder is the fixture corpus's build (137 papers, hashing embedder) with its
papers table, embeddings and topic distribution grown to the size (the texts above, random unit
vectors, random map positions); the other tables are the fixture's (small at any size).

Usage::

    .venv/bin/python benchmarks/bench_search_index.py --sizes 100k 1m --work /tmp/bench-search
    # the old paths (the baseline's code: at 1M ~6 min for the first search, ~12 s a query) at 100k only
    .venv/bin/python benchmarks/bench_search_index.py --sizes 100k 1m --old-sizes 100k --work /tmp/bench-search
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
#: A phase can run another checkout's code (the code before this change, for the old corpus load).
sys.path.insert(0, os.environ.get("BENCH_CODE_ROOT") or str(ROOT))
sys.path.insert(1, str(ROOT))
#: ``benchmarks`` has no ``__init__``: a namespace package over both roots, so a baseline without
#: ``heaps.py`` still finds this checkout's (only the texts, made in the parent process, use it).
from benchmarks import heaps  # noqa: E402
from benchmarks.make_corpora import DATA, SOURCES  # noqa: E402  (the shared data, found as the corpora script finds them)
from benchmarks.markdown_block import write_block  # noqa: E402

SIZES = {"5k": 5_000, "50k": 50_000, "100k": 100_000, "1m": 1_000_000}
DONORS = 8
SEED = 7
#: 20 queries a reader might type: single words, phrases (the exact-phrase check runs for 2+ words),
#: common and rare terms.
QUERIES = [
    "diffusion", "graph neural networks", "reinforcement learning", "transformer", "contrastive learning",
    "bayesian optimization", "adversarial robustness", "federated learning", "large language models",
    "spiking neurons", "optimal transport", "causal inference", "knowledge distillation", "sparse coding",
    "gaussian processes", "meta learning", "protein structure", "zero-shot", "variational inference",
    "multi-agent path finding",
]  # fmt: skip
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[$\\])")

LOAD_PATHS = {
    "load_old": "old: the code before this change (papers.parquet in full, ids made by the load)",
    "load_parquet": "new code, a build without papers.arrow (papers.parquet in full, ids on first use)",
    "load_new": "new: papers.arrow memory-mapped, ids on first use",
}
TARGETS_1M = {"first_s": 1.0, "query_s": 0.3, "load_s": 3.0, "load_mb": 1024}


# ------------------------------------------------------------------------------------------
# Texts
# ------------------------------------------------------------------------------------------


def real_papers() -> pd.DataFrame:
    frames = [pd.read_json(DATA / f, lines=True, compression="gzip")[["title", "abstract"]] for f in SOURCES]
    papers = pd.concat(frames, ignore_index=True)
    papers["abstract"] = papers["abstract"].astype(str).map(lambda a: " ".join(a.split()))
    papers["title"] = papers["title"].fillna("").astype(str).map(lambda a: " ".join(a.split()))
    return papers


def make_texts(n: int, out: Path) -> dict:
    """``out``: doc_id, title, abstract, model_text for ``n`` papers (real first, then recombined, each
    recombined abstract with the new words ``heaps.VocabularyGrowth`` gives it); what was made."""
    rng = np.random.default_rng(SEED)
    real = real_papers().sample(frac=1.0, random_state=SEED).reset_index(drop=True)
    sentences = [[s for s in _SENTENCE_END.split(a) if s] or [a] for a in real["abstract"]]
    m = len(real)
    titles, abstracts = real["title"].tolist()[:n], real["abstract"].tolist()[:n]
    growth = heaps.VocabularyGrowth(heaps.HEAPS, real["abstract"], seed=SEED)
    real_tokens, real_words = growth.n_tokens, growth.n_types
    for _ in range(max(0, n - m)):
        shape = sentences[rng.integers(m)]
        donors = rng.integers(m, size=DONORS)
        parts = []
        for j in range(len(shape)):
            d = sentences[donors[rng.integers(DONORS)]]
            parts.append(d[min(len(d) - 1, int(j * len(d) / len(shape)))])
        abstracts.append(growth.apply(" ".join(parts)))
        titles.append(titles[int(donors[0])])
    if n < m:  # only some of the real papers: count their words
        seen = {w for a in abstracts for w in heaps.tokens(a)}
        real_tokens = sum(len(heaps.tokens(a)) for a in abstracts)
        real_words = len(seen)
        all_tokens, all_words = real_tokens, real_words
    else:
        all_tokens, all_words = growth.n_tokens, growth.n_types
    frame = pd.DataFrame({"doc_id": [f"p{i:07d}" for i in range(n)], "title": titles, "abstract": abstracts})
    frame["model_text"] = frame["title"] + ". " + frame["abstract"]
    frame.to_parquet(out, index=False)
    return {
        "generator": "benchmarks/heaps.py",
        "real": min(n, m),
        "recombined": max(0, n - m),
        "coined_words": growth.n_coined,
        "K": heaps.HEAPS.k,
        "beta": heaps.HEAPS.beta,
        # Distinct words (heaps.tokens) and tokens of the abstracts: the real ones used, and all of them.
        "real_tokens": real_tokens,
        "real_words": real_words,
        "tokens": all_tokens,
        "words": all_words,
        # What the law asks for at that many tokens, continued from the real abstracts' count.
        "law_words": round(heaps.HEAPS.types(all_tokens) + growth.offset) if n > m else None,
    }


# ------------------------------------------------------------------------------------------
# Measurements (each in a fresh process)
# ------------------------------------------------------------------------------------------


def memory() -> dict:
    """This process's memory now, MB: resident (anonymous + file-backed pages) and its peak."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024)
    return out


def _code_module(*names: str):
    """The first of ``names`` the code under test has: the baseline (``--baseline``) may be from
    before the modules moved into stage folders (issue 21: ``explorer.search`` is now
    ``explorer.services.search``)."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not name.startswith(exc.name):
                raise  # the module exists but something it imports does not
    raise ModuleNotFoundError(f"none of {names} in {sys.path[0]}")


def _search():
    return _code_module("explorer.services.search", "explorer.search")


def _queries(corpus, index) -> dict:
    keyword_search = _search().keyword_search
    times, hits = [], []
    for q in QUERIES:
        t0 = time.perf_counter()
        h = keyword_search(corpus, index, q, k=25)
        times.append(time.perf_counter() - t0)
        hits.append(h.rows.tolist())
    return {"median_s": statistics.median(times), "max_s": max(times), "times": times, "hits": hits}


def phase_build(texts: Path, folder: Path) -> dict:
    """Build and save the index (as the build's keyword_index stage) and papers.arrow's texts."""
    from pipeline.analysis import bm25
    from pipeline.core import schema

    papers = pd.read_parquet(texts)
    before = memory()
    t0 = time.perf_counter()
    if hasattr(bm25, "ShownTexts"):  # the texts made a chunk at a time, as the build's stage makes them
        shown = bm25.ShownTexts(papers["title"], papers["abstract"])
    else:  # code before that: all of them first
        shown = bm25.index_texts(papers["title"].tolist(), papers["abstract"].tolist())
    index = bm25.build_index(shown)
    built = time.perf_counter() - t0
    after_build = memory()
    t0 = time.perf_counter()
    bm25.save_index(index, folder / schema.KEYWORD_INDEX, len(papers))
    saved = time.perf_counter() - t0
    size = sum(f.stat().st_size for f in (folder / schema.KEYWORD_INDEX).iterdir())
    return {
        "build_s": built,
        "save_s": saved,
        "size_mb": size / 2**20,
        "vocab": len(index.vocab_dict),
        "postings": int(index.scores["data"].shape[0]),
        "rss_before_mb": before["VmRSS"],
        "peak_mb": after_build["VmHWM"],
    }


def _search_phase(load_texts, open_index) -> dict:
    """Time ``load_texts()`` (the papers' texts), then the first keyword search with
    ``open_index(corpus)``'s index, then every query; memory after each step."""
    keyword_search = _search().keyword_search
    start = memory()
    t0 = time.perf_counter()
    papers = load_texts()
    load_s = time.perf_counter() - t0
    corpus = SimpleNamespace(n_papers=len(papers), papers=papers)
    loaded = memory()
    t0 = time.perf_counter()
    index = open_index(corpus)
    keyword_search(corpus, index, QUERIES[0], k=25)
    first = time.perf_counter() - t0
    q = _queries(corpus, index)
    return {
        "texts_load_s": load_s,
        "first_s": first,
        **q,
        "mem_start": start,
        "mem_loaded": loaded,
        "mem_after": memory(),
    }


def phase_old(texts: Path) -> dict:
    """Old path: texts in memory, index built by the first search (run with the baseline's code:
    its ``build_bm25`` and ``keyword_search``)."""

    def load_texts() -> pd.DataFrame:
        papers = pd.read_parquet(texts, columns=["title", "abstract", "model_text"])
        for c in papers.columns:
            papers[c] = papers[c].astype("str")
        return papers

    return _search_phase(load_texts, _search().build_bm25)


def phase_new(folder: Path) -> dict:
    """New path: the build's index memory-mapped, titles and abstracts memory-mapped from papers.arrow."""
    from explorer.state.corpus_files import map_arrow
    from pipeline.analysis import bm25
    from pipeline.core import schema

    def open_index(corpus):
        index = bm25.load_index(folder / schema.KEYWORD_INDEX, corpus.n_papers)
        assert index is not None
        return _search().KeywordIndex(index, shown_text=bm25.indexes_shown_text(folder / schema.KEYWORD_INDEX))

    return _search_phase(lambda: map_arrow(folder / "texts.arrow"), open_index)


def phase_load(folder: Path, name: str) -> dict:
    """``load_corpus`` on ``folder``, then what the map's first view reads (positions, topics, titles
    in view: here the first 200)."""
    data = _code_module("explorer.state.data", "explorer.data")

    start = memory()
    t0 = time.perf_counter()
    corpus = data.load_corpus(folder.parent, name, folder)
    load_s = time.perf_counter() - t0
    loaded = memory()
    t0 = time.perf_counter()
    _ = corpus.xy.sum(), corpus.topic_index.max(), corpus.papers["title"].iloc[:200].tolist()
    first_view_s = time.perf_counter() - t0
    return {
        "load_s": load_s,
        "first_view_s": first_view_s,
        "mem_start": start,
        "mem_loaded": loaded,
        "mem_after": memory(),
    }


def run_phase(*args: str, code: Path | None = None) -> dict:
    env = {**os.environ, "BENCH_CODE_ROOT": str(code or ROOT)}
    out = subprocess.run(
        [sys.executable, __file__, "--phase", *args], cwd=ROOT, capture_output=True, text=True, check=False, env=env
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------
# Preparing the folders
# ------------------------------------------------------------------------------------------


def baseline_tree(args) -> Path:
    """The baseline commit's files (``git archive``) under the work folder."""
    dest = args.work / f"code-{args.baseline}"
    if not (dest / "explorer").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", args.baseline], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def fixture_build(work: Path) -> Path:
    from pipeline.build.build import build
    from pipeline.core import artifacts
    from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config

    root = work / "fixture"
    if not (root / "small").exists():
        build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER)
    return artifacts.corpus_path(root, "small")


def grow_build(fixture: Path, texts: Path, dest: Path) -> None:
    """``dest``: the fixture build with papers, embeddings and topic distribution grown to ``texts``."""
    from pipeline.build import writer
    from pipeline.core import schema
    from pipeline.formats.ids import short_ids

    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(fixture, dest)
    shutil.rmtree(dest / schema.KEYWORD_INDEX)
    t = pd.read_parquet(texts)
    n = len(t)
    rng = np.random.default_rng(SEED)
    topics = pd.read_parquet(fixture / schema.TOPICS)["topic"].to_numpy()
    old = pd.read_parquet(fixture / schema.PAPERS)
    papers = pd.DataFrame(
        {
            "doc_id": t["doc_id"], "row": np.arange(n, dtype=np.int32), "title": t["title"],
            "title_derived": False, "abstract": t["abstract"], "model_text": t["model_text"],
            "year": pd.array(rng.integers(1987, 2025, n), dtype="Int64"), "venue": rng.choice(["NeurIPS", "ICLR", "ICML", "IJCAI"], n),
            "authors": "A. Author; B. Author", "url": None, "source_id": t["doc_id"], "label": None, "keywords": None,
            "source_file": "texts.parquet", "source_row": np.arange(1, n + 1), "extra": "{}",
            "topic": topics[rng.integers(len(topics), size=n)].astype(np.int32),
            "topic_prob": rng.random(n).astype(np.float32), "was_outlier": False, "placed": False,
            "x": rng.normal(size=n).astype(np.float32), "y": rng.normal(size=n).astype(np.float32),
        }
    )  # fmt: skip
    keep = ("row", "title_derived", "year", "source_row", "topic", "topic_prob", "was_outlier", "placed", "x", "y")
    papers = papers.astype({c: old[c].dtype for c in keep})
    papers.insert(1, "short_id", short_ids(papers["doc_id"]))  # as the build's writer makes them
    papers[list(schema.PAPER_COLUMNS)].to_parquet(dest / schema.PAPERS, index=False)
    writer.write_paper_arrow(dest / schema.PAPERS_ARROW, papers)
    writer.write_map(dest, papers, topics)  # the grown map's colours and spacing, as a build writes them
    dim = np.load(fixture / schema.EMBEDDINGS, mmap_mode="r").shape[1]
    emb = np.lib.format.open_memmap(dest / schema.EMBEDDINGS, mode="w+", dtype=np.float32, shape=(n, dim))
    dist = np.lib.format.open_memmap(
        dest / schema.TOPIC_DISTRIBUTION, mode="w+", dtype=np.float32, shape=(n, len(topics))
    )
    for lo in range(0, n, 100_000):
        hi = min(n, lo + 100_000)
        v = rng.normal(size=(hi - lo, dim)).astype(np.float32)
        emb[lo:hi] = v / np.linalg.norm(v, axis=1, keepdims=True)
        d = rng.random((hi - lo, len(topics))).astype(np.float32)
        dist[lo:hi] = d / d.sum(axis=1, keepdims=True)
    emb.flush()
    dist.flush()
    del emb, dist


def without_arrow(folder: Path, dest: Path) -> None:
    """``dest``: the same files as ``folder`` (hard links) except papers.arrow: a build from before it."""
    from pipeline.core import schema

    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(folder, dest, copy_function=os.link)
    (dest / schema.PAPERS_ARROW).unlink()


def texts_arrow(texts: Path, dest: Path) -> None:
    """The titles and abstracts as papers.arrow stores them (for the new search path)."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    from pipeline.build.writer import PAPER_BATCH_ROWS

    t = pd.read_parquet(texts, columns=["title", "abstract"])
    table = pa.Table.from_pandas(t, preserve_index=False)
    table = table.cast(pa.schema([pa.field(f.name, pa.large_string()) for f in table.schema]))
    with ipc.new_file(dest, table.schema) as out:
        out.write_table(table, max_chunksize=PAPER_BATCH_ROWS)


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------


def verdict(value: float, target: float, size: str) -> str:
    if size != "1m":
        return "(target is at 1M)"
    return "met" if value <= target else "**missed**"


def _texts_size(r: dict) -> str:
    """One size's texts: real and recombined papers, coined words, distinct words."""
    t = r["texts"]
    if not t["recombined"]:
        return f"{r['n']:,}: real papers only, no words coined, {t['words']:,} distinct words"
    return (
        f"{r['n']:,}: {t['real']:,} real + {t['recombined']:,} recombined, {t['coined_words']:,} coined words, "
        f"{t['real_words']:,} distinct words in the real abstracts and {t['words']:,} in all "
        f"(the law, continued from the real abstracts' count, asks for {t['law_words']:,})"
    )


def _sizes(rows: list[dict]) -> str:
    return ", ".join(f"{r['n']:,}" for r in rows)


def markdown(res: dict) -> str:
    runs = list(res["sizes"].values())
    with_old = [r for r in runs if "old" in r]
    without_old = [r for r in runs if "old" not in r]
    t0 = runs[0]["texts"] if runs else {"K": heaps.HEAPS.k, "beta": heaps.HEAPS.beta}
    lines = [
        f"Measured {res['date']} on {res['machine']} with `{res['command']}` (load average at the end: "
        f"{res['load']:.1f}; **a shared machine, 2 cores used by other sessions too: re-measure on a quiet one**). "
        "Every row is a fresh process; "
        + (
            "old and new ran in the same run on the same files"
            + (f" (the old paths only at {_sizes(with_old)})" if without_old else "")
            if with_old
            else "only the new paths ran (`--old-sizes` none)"
        )
        + ".",
        "",
        "**Texts**: the ~35k real shared abstracts as they are, then papers recombined from their sentences "
        f"(sentence i from one of {DONORS} random real abstracts at the same relative position, the title the "
        "first of those papers'). Sentences alone add no new words, while a real corpus's vocabulary keeps growing, "
        "so each recombined abstract gets new words from `benchmarks/heaps.py`, as the corpora of "
        "`benchmarks/make_corpora.py` do: Heaps' law fitted there on the real abstracts' tokens "
        f"(V = K N^beta, K = {t0['K']:.3f}, beta = {t0['beta']:.4f}), continued from the real abstracts' "
        "vocabulary; some content words are replaced by coined ones (a real word's head joined to another's tail) "
        "and as many by earlier coined words. Words counted in the abstracts, as `benchmarks/heaps.py` tokenises "
        "them ("
        + "; ".join(_texts_size(r) for r in runs)
        + "). Vocabulary growth matters: the index's vocabulary file and its memory grow with it, so stitched "
        "sentences alone (no new words) would flatter the index. Not embedded: this benchmark needs no vectors.",
        "",
        "**Keyword search** (`explorer.services.search.keyword_search`, BM25 and the exact-phrase check, 20 queries, 3 of them "
        "one word): *old* = the code before this change (`--baseline`): texts read into memory, index built by the "
        "first search, the phrase check by pandas; "
        "*new* = the build's `keyword_index/` and `papers.arrow` memory-mapped. *First search* is from a fresh "
        "process: index build or load plus the query. Memory: resident MB (anonymous + file-backed pages of the maps, "
        "which the kernel can drop) after loading the texts and after the 20 queries.",
        "",
        "| papers | path | index at build: s, MB on disk, terms | first search s | each search median / max s "
        "| RSS loaded MB (anon+file) | RSS after queries MB (anon+file) | verdict (1M: first ≤ 1 s, each ≤ 0.3 s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size, r in res["sizes"].items():
        b = r["build"]
        for path in ("old", "new"):
            if path not in r:
                continue
            p = r[path]
            built = (
                f"{b['build_s']:.1f} s + {b['save_s']:.1f} s save, {b['size_mb']:,.0f} MB, {b['vocab']:,}"
                if path == "new"
                else "-"
            )
            ml, ma = p["mem_loaded"], p["mem_after"]
            v = (
                f"first {verdict(p['first_s'], TARGETS_1M['first_s'], size)}, "
                f"each {verdict(p['max_s'], TARGETS_1M['query_s'], size)}"
            )
            lines.append(
                f"| {r['n']:,} | {path} | {built} | {p['first_s']:.2f} | {p['median_s']:.3f} / {p['max_s']:.3f} "
                f"| {ml['VmRSS']:,} ({ml['RssAnon']:,}+{ml['RssFile']:,}) | {ma['VmRSS']:,} ({ma['RssAnon']:,}+{ma['RssFile']:,}) | {v} |"
            )
    for r in res["sizes"].values():
        slow = sorted(zip(r["new"]["times"], QUERIES, strict=True), reverse=True)[:3]
        lines += [
            "",
            f"Slowest new searches at {r['n']:,}: "
            + ", ".join(f"'{q}' {t:.2f} s" for t, q in slow)
            + (f" (new rows re-measured: {r['new_rerun']})" if r.get("new_rerun") else "")
            + ".",
        ]
    compared = []
    if with_old:
        same = all(r["old"]["hits"] == r["new"]["hits"] for r in with_old)
        compared.append(
            f"Same results: the 25 hits of every query are {'identical' if same else '**not identical**'} on both "
            f"paths (at {_sizes(with_old)})."
        )
    if without_old:
        compared.append(
            f"The old paths (the baseline's search and corpus load) were not run at {_sizes(without_old)} "
            "(`--old-sizes`): no old rows there."
        )
    lines += [
        "",
        " ".join(
            [
                *compared,
                "Index build peak memory (at build, in the build's own process): "
                + ", ".join(f"{r['n']:,}: {r['build']['peak_mb']:,} MB" for r in runs)
                + ".",
            ]
        ),
        "",
        "**Corpus load** (`explorer.state.data.load_corpus`, a build folder grown from the fixture's: these texts, random "
        "unit vectors, random map positions; the same files for every row). *First view* reads what the map's first "
        "view needs (positions, topics, 200 titles).",
        "",
        "| papers | path | load s | first view s | RSS growth MB (anon+file) | verdict (1M: ≤ 3 s, ≤ 1 GB) |",
        "|---|---|---|---|---|---|",
    ]
    for size, r in res["sizes"].items():
        for path in ("load_old", "load_parquet", "load_new"):
            if path not in r:
                continue
            p = r[path]
            grow = {k: p["mem_after"][k] - p["mem_start"][k] for k in ("VmRSS", "RssAnon", "RssFile")}
            ok_t = verdict(p["load_s"], TARGETS_1M["load_s"], size)
            ok_m = verdict(grow["VmRSS"], TARGETS_1M["load_mb"], size)
            lines.append(
                f"| {r['n']:,} | {LOAD_PATHS[path]} | {p['load_s']:.2f} | {p['first_view_s']:.3f} "
                f"| {grow['VmRSS']:,} ({grow['RssAnon']:,}+{grow['RssFile']:,}) | time {ok_t}, memory {ok_m} |"
            )
    reruns = {r["rerun_load"] for r in res["sizes"].values() if r.get("rerun_load")}
    if reruns:
        lines += ["", f"Corpus loads re-measured, all rows of a size together: {'; '.join(sorted(reruns))}."]
    lines += [
        "",
        "Not measured here: the map's first visit and the server's memory after the map and both searches (need the "
        "app and a browser; `benchmarks/bench_scale.py` measures them on a built corpus).",
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["100k"], choices=list(SIZES), help="100k and/or 1m")
    ap.add_argument(
        "--old-sizes",
        nargs="*",
        choices=list(SIZES),
        metavar="SIZE",
        help="the sizes at which the old paths (the baseline's search and corpus load: slow, at 1M about 6 min "
        "for the first search and 12 s a query) run too (default: all of --sizes; none when given alone; "
        "sizes not in --sizes are ignored)",
    )
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-search-index"))
    ap.add_argument("--no-write", action="store_true", help="print the block, leave BENCHMARKS.md alone")
    ap.add_argument(
        "--baseline", default="4c179b5", help="commit whose corpus load is 'old' (default: the one before this change)"
    )
    ap.add_argument(
        "--rerun-new",
        metavar="WHY",
        help="measure only the new search path again (into the last run's results.json), saying why in BENCHMARKS.md",
    )
    ap.add_argument("--rerun-load", action="store_true", help="with --rerun-new: the corpus loads again too")
    ap.add_argument("--phase", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        kind, *rest = args.phase
        fn = {"build": phase_build, "old": phase_old, "new": phase_new, "load": phase_load}[kind]
        out = fn(*[Path(rest[0]), *([Path(rest[1])] if kind == "build" else rest[1:])])
        print(json.dumps(out, default=float))
        return
    old_sizes = args.sizes if args.old_sizes is None else args.old_sizes
    args.work.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/bench_search_index.py --sizes " + " ".join(args.sizes)
    if set(old_sizes) != set(args.sizes):
        command += " --old-sizes" + "".join(f" {s}" for s in old_sizes)
    res = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {round(os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30)} GB",
        "command": command,
        "sizes": {},
    }
    if args.rerun_new:  # the new search path again, into the results of the last full run
        res = json.loads((args.work / "results.json").read_text())
        for size in args.sizes:
            folder, r = args.work / size, res["sizes"][size]
            texts_arrow(folder / "texts.parquet", folder / "texts.arrow")
            r["new"] = run_phase("new", str(folder))
            r["new_rerun"] = args.rerun_new
            print(f"[{size}] new: first {r['new']['first_s']:.2f} s, median {r['new']['median_s']:.3f} s", flush=True)
            if args.rerun_load:  # the corpus loads again, one after the other
                bench_old, bench_new = folder / "build-old" / "bench", folder / "build-new" / "bench"
                if size in old_sizes:
                    r["load_old"] = run_phase("load", str(bench_old), "bench", code=baseline_tree(args))
                else:
                    r.pop("load_old", None)
                r["load_parquet"] = run_phase("load", str(bench_old), "bench")
                r["load_new"] = run_phase("load", str(bench_new), "bench")
                r["rerun_load"] = args.rerun_new
                print(f"  { ({k: round(v['load_s'], 2) for k, v in r.items() if k.startswith('load_')}) }", flush=True)
        (args.work / "results.json").write_text(json.dumps(res, indent=1, default=float))
        args.sizes = []
    else:
        fixture = fixture_build(args.work)
    for size in args.sizes:
        n = SIZES[size]
        folder = args.work / size
        folder.mkdir(exist_ok=True)
        texts = folder / "texts.parquet"
        print(f"[{size}] texts", flush=True)
        t0 = time.perf_counter()
        info_path = folder / "texts.json"
        info = json.loads(info_path.read_text()) if texts.is_file() and info_path.is_file() else {}
        if info.get("generator") != "benchmarks/heaps.py":  # none yet, or made by the generator before it
            info = make_texts(n, texts)
            info_path.write_text(json.dumps(info))
        print(f"  {time.perf_counter() - t0:.0f} s: {info}", flush=True)
        texts_arrow(texts, folder / "texts.arrow")
        shutil.rmtree(folder / "keyword_index", ignore_errors=True)
        r: dict = {"n": n, "texts": info}
        print(f"[{size}] index build", flush=True)
        r["build"] = run_phase("build", str(texts), str(folder))
        print(f"  {r['build']}", flush=True)
        if size in old_sizes:
            print(f"[{size}] old search", flush=True)
            r["old"] = run_phase("old", str(texts), code=baseline_tree(args))
            print(f"  first {r['old']['first_s']:.2f} s, median {r['old']['median_s']:.3f} s", flush=True)
        print(f"[{size}] new search", flush=True)
        r["new"] = run_phase("new", str(folder))
        print(f"  first {r['new']['first_s']:.2f} s, median {r['new']['median_s']:.3f} s", flush=True)
        print(f"[{size}] corpus load", flush=True)
        grow_build(fixture, texts, folder / "build-new" / "bench")
        without_arrow(folder / "build-new" / "bench", folder / "build-old" / "bench")
        if args.baseline and size in old_sizes:
            r["load_old"] = run_phase("load", str(folder / "build-old" / "bench"), "bench", code=baseline_tree(args))
        r["load_parquet"] = run_phase("load", str(folder / "build-old" / "bench"), "bench")
        r["load_new"] = run_phase("load", str(folder / "build-new" / "bench"), "bench")
        print(f"  { ({k: round(v['load_s'], 2) for k, v in r.items() if k.startswith('load_')}) }", flush=True)
        res["sizes"][size] = r
        (args.work / "results.json").write_text(json.dumps(res, indent=1, default=float))
    res["load"] = os.getloadavg()[0] if not args.rerun_new else res.get("load", os.getloadavg()[0])
    block = markdown(res)
    print(block)
    if not args.no_write:
        write_block("bench-search-index", "Keyword index and corpus load", block)


if __name__ == "__main__":
    main()
