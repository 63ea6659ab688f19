"""Benchmark corpora of 100,000 and 1,000,000 papers, grown from the 35,000 real shared abstracts.

Not part of the product or the tests. What is real and what is synthetic (BENCHMARKS.md says the same):

* **Real**: every shared abstract (NeurIPS 1987-2023, ICLR 2018-2022, ICML 2024, IJCAI 2020-2024)
  is in both corpora as it is, with its real vector from the embedding cache.
* **Synthetic papers** fill the rest. Each is made from a real *source* paper and its nearest
  neighbours of the same venue and year (cosine of the real vectors, 8 neighbours): sentence i of
  the new abstract is the sentence at the same relative position of a randomly chosen one of those
  9 abstracts, so it keeps their topic and the usual order (motivation, method, results). Every
  sentence is real text; the combination is new and unique (checked like ingest's near-duplicate
  key). Title: the title of the paper that gave most sentences; venue and year: the group's.
* **New words**: stitched sentences bring no word the real papers lack, while a real corpus's
  vocabulary keeps growing (Heaps' law, V = K * N**beta, measured on the real abstracts:
  ``benchmarks/heaps.py``). Each synthetic abstract has some content words replaced by new, unique
  word forms (a real word's head joined to another's tail) and as many by earlier new ones, so the
  corpus's vocabulary grows beyond the real papers at the fitted law's rate (``--no-new-words``:
  sentences only, as the corpora of 2026-12-01 were made).
* **Prepared vectors** (1M corpus; 100k on request): the mean of the donors' real vectors weighted by
  the sentences each gave, plus Gaussian noise, renormalised; written straight into the embedding
  cache (``EmbeddingStore.add`` in chunks, keyed by ``text_hash`` of the text ingest makes), so a
  build embeds nothing. A vector already in the cache is never replaced. The script embeds a sample
  of synthetic texts with the real model and reports how close the prepared vectors are.

Output (outside the repository; never commit it)::

    OUT/corpus-100k/papers-000.parquet            100,000 rows
    OUT/corpus-1m/papers-000.parquet ... -009     1,000,000 rows, 100,000 a file
    OUT/artifacts/.cache/embeddings/              the embedding cache to build with (--artifacts OUT/artifacts)
    OUT/corpora.json                              what was made, how long it took, the vector checks

Usage::

    .venv/bin/python benchmarks/make_corpora.py --out /work/cache/bench \\
        --cache-from /work/cache/artifacts/.cache     # copy the real vectors first (else they are embedded)
    .venv/bin/python benchmarks/make_corpora.py --out /work/cache/bench --verify 1m   # a build embeds nothing?
    .venv/bin/python -m pipeline --artifacts /work/cache/bench/artifacts build \\
        /work/cache/bench/corpus-1m/*.parquet --name bench1m
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.heaps import HEAPS, VocabularyGrowth  # noqa: E402
from benchmarks.markdown_block import write_block  # noqa: E402

# The shared data sit beside the checkout (or beside the folder of worktrees); SHARED_DATA overrides.
DATA = Path(
    os.environ.get("SHARED_DATA")
    or next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT / "shared" / "data")
)
SOURCES = (
    "neurips-1987-2023.jsonl.gz",
    "iclr-2018-2022-submissions.jsonl.gz",
    "icml2024-unlabeled.jsonl.gz",
    "ijcai2020-2024-primary-area.jsonl.gz",
)
SIZES = {"100k": 100_000, "1m": 1_000_000}
ROWS_PER_FILE = 100_000
STORE_CHUNK = 50_000
NEIGHBOURS = 8
#: Norm of the Gaussian noise added to a prepared vector (unit vectors; 0.2 moves it by about 11 degrees).
NOISE = 0.2
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[$\\])")


@dataclass
class Sources:
    """The real papers: table (doc_id, title, abstract, year, venue, label), their vectors and sentences."""

    papers: pd.DataFrame
    vectors: np.ndarray  # (n, 384) float32, the model's vectors of papers.model_text
    sentences: list[list[str]]
    neighbours: list[np.ndarray]  # per paper: itself, then its nearest papers of the same venue and year


def load_sources(cache_dir: Path) -> Sources:
    """Ingest the shared corpora and look up (or embed) their vectors."""
    from pipeline.core.config import EmbedParams
    from pipeline.core.progress import Reporter
    from pipeline.embed.embed import embed_texts
    from pipeline.ingest.ingest import ingest

    papers = ingest([DATA / name for name in SOURCES]).papers.reset_index(drop=True)
    result = embed_texts(
        papers["model_text"].tolist(), EmbedParams(), cache_dir, progress=Reporter().counter("embedded", "papers")
    )
    print(f"  {len(papers):,} real papers, {result.cached:,} vectors cached, {result.computed:,} embedded", flush=True)
    sentences = [[s for s in _SENTENCE_END.split(" ".join(a.split())) if s] for a in papers["abstract"]]
    return Sources(papers, result.vectors, sentences, _neighbours(papers, result.vectors))


def _neighbours(papers: pd.DataFrame, vectors: np.ndarray) -> list[np.ndarray]:
    out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(papers)
    groups = papers.groupby([papers["venue"].fillna(""), papers["year"].fillna(0)], sort=True).indices
    for rows in groups.values():
        rows = np.asarray(rows)
        sims = vectors[rows] @ vectors[rows].T
        np.fill_diagonal(sims, np.inf)  # itself first
        k = min(NEIGHBOURS + 1, len(rows))
        top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        for i, row in enumerate(rows):
            out[row] = rows[top[i]]
    return out


def _near_key(text: str) -> bytes:
    kept = re.sub(r"[\W_]+", "", text.lower())
    return hashlib.blake2b(kept.encode(), digest_size=8).digest()


def synthesise(src: Sources, n: int, seed: int, seen: set[bytes], growth: VocabularyGrowth | None = None):
    """Yield ``(row dict, vector, donors)`` for ``n`` new papers (unique abstracts, added to ``seen``);
    with ``growth``, each abstract then gets the new words that keep the vocabulary on its curve."""
    rng = np.random.default_rng(seed)
    papers = src.papers
    titles, years, venues, ids = (papers[c].tolist() for c in ("title", "year", "venue", "doc_id"))
    made = 0
    order = rng.permutation(len(papers))
    cursor = 0
    while made < n:
        if cursor == len(order):
            order, cursor = rng.permutation(len(papers)), 0
        source = int(order[cursor])
        cursor += 1
        donors = src.neighbours[source]
        length = len(src.sentences[source])
        if len(donors) < 2 or length < 2:
            continue
        for _attempt in range(4):
            picks = rng.choice(donors, size=length)
            if len(set(picks.tolist())) < 2:
                picks[rng.integers(length)] = donors[1 + rng.integers(len(donors) - 1)]
            parts = []
            for position, donor in enumerate(picks):
                sents = src.sentences[donor]
                parts.append(sents[round(position * (len(sents) - 1) / (length - 1))])
            abstract = " ".join(parts)
            key = _near_key(abstract)
            if key not in seen:
                break
        else:
            continue
        seen.add(key)
        if growth is not None:
            abstract = growth.apply(abstract)
        counts = np.bincount(np.searchsorted(np.sort(donors), picks), minlength=len(donors))
        used = np.sort(donors)
        main = int(used[np.argmax(counts)])
        mix = (counts[:, None] * src.vectors[used]).sum(axis=0)
        mix /= np.linalg.norm(mix)
        noisy = mix + rng.standard_normal(mix.shape[0]).astype(np.float32) * (NOISE / np.sqrt(mix.shape[0]))
        row = {
            "id": f"syn-{seed}-{made:07d}",
            "title": titles[main],
            "abstract": abstract,
            "year": years[main] if not pd.isna(years[main]) else None,
            "venue": venues[main],
            "label": None,
            "derived_from": ids[main],
        }
        yield row, (noisy / np.linalg.norm(noisy)).astype(np.float32)
        made += 1


def _real_rows(src: Sources) -> pd.DataFrame:
    p = src.papers
    return pd.DataFrame(
        {
            "id": p["doc_id"],
            # A title ingest derived from the abstract is not the input's: writing it would change the text.
            "title": p["title"].where(~p["title_derived"].astype(bool), None),
            "abstract": p["abstract"],
            "year": p["year"].astype("Int16"),
            "venue": p["venue"],
            "label": p["label"],
            "derived_from": pd.Series([None] * len(p), dtype="str"),
        }
    )


def _flush(store, hashes: list[bytes], vectors: list[np.ndarray], chunk: int | None) -> int:
    """Add pending vectors to ``store`` in chunks of ``chunk`` (a partial chunk stays pending; with
    None, all of them at once); how many were added."""
    done = len(hashes) if chunk is None else len(hashes) - len(hashes) % chunk
    step = chunk or max(done, 1)
    for lo in range(0, done, step):
        store.add(hashes[lo : lo + step], np.stack(vectors[lo : lo + step]))
    del hashes[:done], vectors[:done]
    return done


def make_corpus(
    src: Sources, name: str, n: int, out: Path, store, seed: int, prepare: bool, new_words: bool = True
) -> dict:
    """Write corpus ``name`` (real papers + synthetic ones up to ``n``) and, if asked, its vectors."""
    from pipeline.embed.embed_store import text_hash
    from pipeline.ingest.ingest import ingest

    started = time.perf_counter()
    folder = out / f"corpus-{name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    real = _real_rows(src)
    seen = {_near_key(a) for a in real["abstract"]}
    growth = VocabularyGrowth(HEAPS, real["abstract"], seed=seed) if new_words else None
    generator = synthesise(src, n - len(real), seed, seen, growth)
    written = prepared = kept_existing = real_cached = 0
    stats = {"files": [], "seconds_generate": 0.0, "seconds_ingest": 0.0, "seconds_store": 0.0}
    file_no = 0
    pending_hashes: list[bytes] = []
    pending_vectors: list[np.ndarray] = []
    while written < n:
        t0 = time.perf_counter()
        take = min(ROWS_PER_FILE, n - written)
        frame_parts, vectors = [], []
        if written == 0:
            frame_parts.append(real.iloc[:take])
        rows = []
        for _ in range(take - sum(len(f) for f in frame_parts)):
            row, vector = next(generator)
            rows.append(row)
            vectors.append(vector)
        if rows:
            frame_parts.append(pd.DataFrame(rows).astype({"year": "Int16"}))
        frame = pd.concat(frame_parts, ignore_index=True)
        n_real = len(frame) - len(rows)
        path = folder / f"papers-{file_no:03d}.parquet"
        frame.to_parquet(path, index=False)
        stats["files"].append(path.name)
        stats["seconds_generate"] += time.perf_counter() - t0
        written += len(frame)
        file_no += 1
        if prepare and rows:
            t0 = time.perf_counter()
            ingested = ingest([path]).papers  # the exact texts a build embeds (same cleaning, same title join)
            stats["seconds_ingest"] += time.perf_counter() - t0
            t0 = time.perf_counter()
            synthetic = ingested[ingested["source_row"] > n_real]
            real_found, _ = store.lookup(
                [text_hash(t) for t in ingested.loc[ingested["source_row"] <= n_real, "model_text"]]
            )
            real_cached += int(real_found.sum())
            hashes = [text_hash(t) for t in synthetic["model_text"]]
            found, _ = store.lookup(hashes)
            kept_existing += int(found.sum())
            block = np.stack(vectors)[synthetic["source_row"].to_numpy() - 1 - n_real]
            for h, v, f in zip(hashes, block, found, strict=True):
                if not f:  # never replace a vector the cache already has (a real one wins)
                    pending_hashes.append(h)
                    pending_vectors.append(v)
            prepared += _flush(store, pending_hashes, pending_vectors, STORE_CHUNK)
            stats["seconds_store"] += time.perf_counter() - t0
        print(f"  {name}: {written:,} / {n:,} rows written", flush=True)
    t0 = time.perf_counter()
    prepared += _flush(store, pending_hashes, pending_vectors, None)
    stats["seconds_store"] += time.perf_counter() - t0
    stats.update(
        rows=written,
        real=len(real),
        synthetic=written - len(real),
        vectors_prepared=prepared,
        vectors_already_cached=kept_existing,
        real_vectors_cached=real_cached if prepare else None,
        seconds=round(time.perf_counter() - started, 1),
        bytes=sum((folder / f).stat().st_size for f in stats["files"]),
    )
    for key in ("seconds_generate", "seconds_ingest", "seconds_store"):
        stats[key] = round(stats[key], 1)
    return stats


def check_vectors(src: Sources, folder: Path, store, sample: int, seed: int) -> dict:
    """How prepared vectors compare with the model's, and nearest-neighbour cosines, real vs corpus."""
    from pipeline.core.config import EmbedParams
    from pipeline.embed.embed_store import text_hash
    from pipeline.embed.encoders import load_encoder
    from pipeline.ingest.ingest import ingest

    rng = np.random.default_rng(seed)
    papers = ingest([sorted(folder.glob("*.parquet"))[-1]]).papers
    synthetic = papers[papers["doc_id"].str.startswith("syn-")]
    picked = synthetic.sample(min(sample, len(synthetic)), random_state=seed)
    texts = picked["model_text"].tolist()
    found, prepared = store.lookup([text_hash(t) for t in texts])
    encoder = load_encoder(EmbedParams(), store.root.parent)
    real = encoder.encode(texts)
    cosine = np.sum(prepared[found] * real[found], axis=1)
    # How close each paper is to its nearest other paper: the synthetic papers must not sit on top of
    # their sources (a kNN graph of near-duplicates would flatter the later stages).
    queries = rng.choice(len(src.vectors), size=min(1000, len(src.vectors)), replace=False)
    sims = src.vectors[queries] @ src.vectors.T
    sims[np.arange(len(queries)), queries] = -1
    real_nn = sims.max(axis=1)
    corpus_vectors = store.lookup([text_hash(t) for t in synthetic["model_text"]])[1]
    pool = np.concatenate([src.vectors, corpus_vectors])
    q = corpus_vectors[rng.choice(len(corpus_vectors), size=min(1000, len(corpus_vectors)), replace=False)]
    sims = q @ pool.T
    sims[sims > 0.99999] = -1  # itself
    syn_nn = sims.max(axis=1)
    return {
        "sample": int(found.sum()),
        "cosine_prepared_to_model_mean": round(float(cosine.mean()), 4),
        "cosine_prepared_to_model_p10": round(float(np.quantile(cosine, 0.1)), 4),
        "cosine_prepared_to_model_min": round(float(cosine.min()), 4),
        "nn_cosine_real_median": round(float(np.median(real_nn)), 4),
        "nn_cosine_synthetic_median": round(float(np.median(syn_nn)), 4),
        "nn_pool": int(len(pool)),
    }


def verify(out: Path, name: str) -> dict:
    """Ingest a corpus as a build does and look its texts up: a build of it must embed nothing."""
    import resource

    from pipeline.core.config import EmbedParams
    from pipeline.embed.embed_model import model_key
    from pipeline.embed.embed_store import EmbeddingStore, text_hash
    from pipeline.ingest.ingest import ingest

    started = time.perf_counter()
    result = ingest(sorted((out / f"corpus-{name}").glob("*.parquet")))
    seconds_ingest = time.perf_counter() - started
    peak_ingest = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    papers = result.papers
    store = EmbeddingStore(out / "artifacts" / ".cache" / "embeddings", model_key(EmbedParams()))
    found, _ = store.lookup([text_hash(t) for t in papers["model_text"]])
    skipped = result.report[result.report["action"] == "skipped"]
    return {
        "papers": len(papers),
        "skipped": skipped["reason"].value_counts().to_dict(),
        "vectors_found": int(found.sum()),
        "seconds_ingest": round(seconds_ingest, 1),
        "peak_rss_mb_ingest": round(peak_ingest, 1),
        "papers_frame_mb": round(papers.memory_usage(deep=True).sum() / 2**20, 1),
        "peak_rss_mb_with_lookup": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def write_markdown(report: dict) -> None:
    """The corpora section of BENCHMARKS.md, between the ``bench-corpora`` markers."""
    lines = [
        f"Made {report['date']} on {report['machine']} with `{report['command']}` in "
        f"{report['seconds'] / 60:.0f} min (peak memory {report['peak_rss_mb']:,.0f} MB"
        + (f"; load average {report['load_average_end']} at the end" if "load_average_end" in report else "")
        + ").",
        "",
        "| corpus | papers | real | synthetic | vectors prepared | files | seconds (generate / ingest / cache) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, c in report["corpora"].items():
        lines.append(
            f"| {name} | {c['rows']:,} | {c['real']:,} | {c['synthetic']:,} | {c['vectors_prepared']:,} | "
            f"{len(c['files'])} Parquet, {c['bytes'] / 1e6:,.0f} MB | {c['seconds']} "
            f"({c['seconds_generate']} / {c['seconds_ingest']} / {c['seconds_store']}) |"
        )
    lines += [
        "",
        f"**What is real.** All {report['real_papers']:,} shared abstracts (NeurIPS 1987-2023, ICLR 2018-2022, ICML "
        "2024, IJCAI 2020-2024) are in both corpora as they are, with the model's vectors. Every sentence of every "
        "abstract is a real sentence.",
        "",
        "**What is synthetic.** The other papers. Each takes a real source paper and its "
        f"{report['neighbours']} nearest papers of the same venue and year (cosine of the real vectors); sentence i "
        "of the new abstract is the sentence at the same relative position of one of those papers, drawn at random "
        "(at least two papers contribute), so it keeps their topic and the usual order of an abstract. Title: that "
        "of the paper giving most sentences (so titles repeat); venue and year: the group's; id `syn-...`; the "
        "column `derived_from` names the main source. No two abstracts are equal up to case and punctuation.",
        "",
        (
            f"**New words.** Heaps' law fitted on the real abstracts (K = {report['heaps']['k']}, beta = "
            f"{report['heaps']['beta']}; `benchmarks/heaps.py`): each synthetic abstract has some content words "
            "replaced by new, unique word forms and as many by earlier new ones, so the vocabulary grows beyond the "
            "real papers at the law's rate (BENCHMARKS.md, *Vocabulary growth*)."
            if report.get("heaps")
            else "**No new words**: the synthetic abstracts use only the real papers' words (made before "
            "`benchmarks/heaps.py`, or with `--no-new-words`)."
        ),
        "",
        "**Prepared vectors** (1M corpus): the mean of the contributing papers' real vectors weighted by the "
        f"sentences each gave, plus Gaussian noise of norm {report['noise']}, renormalised; written into the "
        "embedding cache under the text's key, so a build embeds nothing. They are not what the model would give:",
        "",
    ]
    for name, c in report["corpora"].items():
        v = c.get("vector_check")
        if not v:
            continue
        lines.append(
            f"- {name}: cosine of the prepared vector to the model's own vector of the same text, on {v['sample']} "
            f"synthetic papers: mean {v['cosine_prepared_to_model_mean']}, 10th percentile "
            f"{v['cosine_prepared_to_model_p10']}, min {v['cosine_prepared_to_model_min']}. Median cosine to the "
            f"nearest other paper: real papers among the real ones {v['nn_cosine_real_median']}; synthetic papers "
            f"among {v['nn_pool']:,} (the real ones and the last file of synthetic ones) "
            f"{v['nn_cosine_synthetic_median']}. Synthetic papers sit closer to their nearest neighbour than real "
            "ones (a real corpus of that size would be denser too, by how much is unknown): treat the 1M corpus's "
            "topics as a load test, not as a measure of topic quality."
        )
    for name, c in report["corpora"].items():
        v = c.get("build_check")
        if v:
            lines.append(
                f"- {name}, checked with `--verify {name}`: ingesting it as a build does keeps {v['papers']:,} "
                f"papers (skipped: {v['skipped'] or 'none'}) and finds {v['vectors_found']:,} of their vectors in the "
                f"cache, so a build embeds {v['papers'] - v['vectors_found']:,}. That ingest took "
                f"{v['seconds_ingest']:.0f} s and peaked at {v['peak_rss_mb_ingest']:,.0f} MB (the papers table itself: "
                f"{v['papers_frame_mb']:,.0f} MB), {v['peak_rss_mb_with_lookup']:,.0f} MB with the vectors looked up."
            )
    lines += [
        "",
        "The corpora and their cache live outside the repository (regenerate them with the command above; about "
        "2 GB on disk for both). The cache they come with holds synthetic vectors: never copy it into a real "
        "artifacts folder.",
    ]
    write_block("bench-corpora", "Benchmark corpora (100,000 and 1,000,000 papers)", "\n".join(lines))


def main() -> None:
    import resource

    from pipeline.core.config import EmbedParams
    from pipeline.embed.embed_model import model_key
    from pipeline.embed.embed_store import EmbeddingStore

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for the corpora and their cache")
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument(
        "--prepare", nargs="*", choices=list(SIZES), default=["1m"], help="corpora whose vectors are prepared"
    )
    parser.add_argument("--cache-from", type=Path, help="an .cache folder whose embeddings and models to copy first")
    parser.add_argument("--check-sample", type=int, default=200, help="synthetic texts embedded to check vectors")
    parser.add_argument("--limit", type=int, help="cap every size (a quick check of the script)")
    parser.add_argument(
        "--no-new-words",
        action="store_true",
        help="stitched sentences only: no new words (the vocabulary stops growing)",
    )
    parser.add_argument(
        "--verify", choices=list(SIZES), help="after a run: check that a build of this corpus embeds nothing"
    )
    parser.add_argument(
        "--markdown-only", action="store_true", help="only write BENCHMARKS.md from OUT/corpora.json of a past run"
    )
    args = parser.parse_args()
    if args.verify:
        path = args.out / "corpora.json"
        report = json.loads(path.read_text())
        report["corpora"][args.verify]["build_check"] = verify(args.out, args.verify)
        path.write_text(json.dumps(report, indent=2))
        write_markdown(report)
        print(json.dumps(report["corpora"][args.verify]["build_check"], indent=2))
        return
    if args.markdown_only:
        write_markdown(json.loads((args.out / "corpora.json").read_text()))
        return
    sizes = {name: min(n, args.limit or n) for name, n in SIZES.items()}

    started = time.perf_counter()
    cache = args.out / "artifacts" / ".cache"
    if args.cache_from and not (cache / "embeddings").exists():
        cache.mkdir(parents=True, exist_ok=True)
        for part in ("embeddings", "models"):
            if (args.cache_from / part).exists():
                shutil.copytree(args.cache_from / part, cache / part)
    print("real papers ...", flush=True)
    src = load_sources(cache)
    store = EmbeddingStore(cache / "embeddings", model_key(EmbedParams()))
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "command": "python benchmarks/make_corpora.py " + " ".join(sys.argv[1:]),
        "real_papers": len(src.papers),
        "noise": NOISE,
        "neighbours": NEIGHBOURS,
        "heaps": None if args.no_new_words else {"k": HEAPS.k, "beta": HEAPS.beta},
        "corpora": {},
    }
    for seed, name in enumerate(args.sizes, start=1):
        print(f"{name} ...", flush=True)
        report["corpora"][name] = make_corpus(
            src, name, sizes[name], args.out, store, seed, name in args.prepare, new_words=not args.no_new_words
        )
        if name in args.prepare:
            report["corpora"][name]["vector_check"] = check_vectors(
                src, args.out / f"corpus-{name}", store, args.check_sample, seed
            )
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    report["load_average_end"] = round(os.getloadavg()[0], 1)  # other work on the machine stretches the times
    (args.out / "corpora.json").write_text(json.dumps(report, indent=2))
    if not args.limit:
        write_markdown(report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
