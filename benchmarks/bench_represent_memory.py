"""Peak memory and time of the representation stage (``pipeline.model.represent.fit_topics``), before and
after a change, on the same inputs in the same run. Figures go into BENCHMARKS.md ("Represent
memory").

Not part of the test run. The inputs are made once and shared by every run:

* texts: the 35,267 shared real abstracts (all four files, ingested and cleaned as a build does);
  above that, each further paper is stitched from the sentences of real papers of one cluster
  (sentence i from one of 8 papers, at the same relative position; as ``make_corpora.py`` does with
  nearest neighbours), so its words are real words;
* clusters: k-means on a TF-IDF/SVD projection of the real texts (k = 0.43 sqrt(n), the topic
  count the pipeline finds at 18.7k, 100k and 1M papers); a stitched paper takes its donors' cluster;
* vectors: **synthetic**, a random unit vector per cluster plus Gaussian noise, renormalised (the
  model embeds 60 abstracts a second here: 30 minutes for 100k); words and representative papers
  are embedded with the deterministic hashing test encoder. Right for a memory measure, not for
  topic quality;
* term counts: ``pipeline.model.vocab.doc_terms`` of the texts, as the build's vocabulary stage.

Each run is a fresh process importing the code under test (``--baseline``: ``pipeline/`` and
``assets/`` extracted with ``git archive``; "after": this checkout), loading the inputs, resetting
the kernel's peak-RSS mark (``/proc/self/clear_refs``), then fitting; it reports the peak RSS while
fitting (VmHWM), what the fit added to the RSS it started from, and the wall time. Runs alternate
before/after ``--rounds`` times.

    .venv/bin/python benchmarks/bench_represent_memory.py --papers 100000 --rounds 2 --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.check_represent_identity import baseline_tree  # noqa: E402
from benchmarks.make_corpora import DATA, SOURCES  # noqa: E402
from benchmarks.markdown_block import write_block  # noqa: E402

HEADING = "Represent memory"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[$\\])")
#: Build peak at a million papers today and the issue's target (BENCHMARKS.md "Scale", issue 23), MB.
PEAK_1M_MB, TARGET_1M_MB = 21_567, 16 * 1024
#: The highest peak of the 1M build's other stages (reduce: kNN graph and UMAP; BENCHMARKS.md "Scale"), MB.
OTHER_STAGES_1M_MB = 19_200

_WORKER = r"""
import json, sys, time
from pathlib import Path
import numpy as np
from scipy import sparse
from pipeline.core.config import RepresentParams
from pipeline.embed.encoders import HashingEncoder
from pipeline.model.represent import fit_topics
from pipeline.model.vocab import DocTerms

def status(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024  # kB -> MB

src = Path(sys.argv[1])
docs = json.loads((src / "docs.json").read_text(encoding="utf-8"))
embeddings = np.load(src / "embeddings.npy")
labels = np.load(src / "labels.npy")
outlier = np.load(src / "outlier.npy")
dt = DocTerms(sparse.load_npz(src / "counts.npz").tocsr(), np.array(json.loads((src / "terms.json").read_text()), dtype=object))
ids = [f"p{i}" for i in range(len(docs))]
reduced = embeddings[:, :5].copy()
encoder = HashingEncoder()
phases = {}
if len(sys.argv) > 2:  # --phases: each step's own peak (VmHWM reset at its start) and duration
    import pipeline.model.represent as rep
    from pipeline.model.bertopic_adapter import RankedBERTopic

    def timed(name, func):
        def wrapper(*args, **kwargs):
            Path("/proc/self/clear_refs").write_text("5")
            start = time.perf_counter()
            out = func(*args, **kwargs)
            phases[name] = (status("VmHWM"), time.perf_counter() - start)
            Path("/proc/self/clear_refs").write_text("5")
            return out
        return wrapper

    for name in ("topic_distribution", "_topic_terms", "_topic_rows", "topic_labels", "_hierarchy"):
        setattr(rep, name, timed(name, getattr(rep, name)))
    RankedBERTopic.fit_transform = timed("BERTopic fit_transform", RankedBERTopic.fit_transform)
Path("/proc/self/clear_refs").write_text("5")  # VmHWM := current RSS
rss = status("VmRSS")
start = time.perf_counter()
model = fit_topics(docs, embeddings, reduced, labels, outlier, ids, dt, RepresentParams(), encoder.encode)
seconds = time.perf_counter() - start
peak = max([status("VmHWM")] + [p for p, _ in phases.values()])
print(json.dumps({"rss_before_mb": rss, "peak_mb": peak, "added_mb": peak - rss, "seconds": seconds,
                  "topics": int(len(model.tables.topics)), "phases": phases}))
"""


def real_texts() -> list[str]:
    """The shared real abstracts' modelling texts, as a build cleans them."""
    from pipeline.ingest.ingest import ingest

    return ingest([DATA / name for name in SOURCES]).papers["model_text"].tolist()


def clusters(texts: list[str], k: int, seed: int) -> np.ndarray:
    """k-means labels of ``texts`` on a 64-d TF-IDF/SVD projection."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    tfidf = TfidfVectorizer(min_df=5, max_df=0.5, stop_words="english", sublinear_tf=True).fit_transform(texts)
    x = normalize(TruncatedSVD(64, random_state=seed).fit_transform(tfidf))
    return MiniBatchKMeans(k, random_state=seed, n_init=3, batch_size=4096).fit_predict(x)


def stitched(texts: list[str], labels: np.ndarray, n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """``n`` papers: the real ones, then papers stitched from sentences of 8 papers of one cluster."""
    rng = np.random.default_rng(seed)
    sentences = [[s for s in _SENTENCE_END.split(t) if s] for t in texts]
    members = {c: np.flatnonzero(labels == c) for c in np.unique(labels)}
    out, out_labels = list(texts), list(labels.tolist())
    while len(out) < n:
        source = int(rng.integers(len(texts)))
        group = members[labels[source]]
        donors = rng.choice(group, size=min(8, len(group)), replace=False)
        length = len(sentences[source])
        parts = []
        for position in range(length):
            sents = sentences[int(rng.choice(donors))]
            parts.append(sents[round(position * (len(sents) - 1) / max(length - 1, 1))])
        out.append(" ".join(parts))
        out_labels.append(int(labels[source]))
    return out[:n], np.asarray(out_labels[:n])


def make_inputs(folder: Path, n: int, seed: int) -> dict:
    """Write the shared inputs of every run into ``folder``; what they are."""
    from scipy import sparse

    from pipeline.model.vocab import doc_terms

    start = time.perf_counter()
    real = real_texts()
    k = max(2, round(0.43 * n**0.5))
    labels = clusters(real, k, seed)
    docs, labels = stitched(real, labels, n, seed)
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((k, 384)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = centres[labels] + rng.standard_normal((n, 384)).astype(np.float32) * (0.8 / np.sqrt(384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dt = doc_terms(docs)
    (folder / "docs.json").write_text(json.dumps(docs), encoding="utf-8")
    np.save(folder / "embeddings.npy", vectors)
    np.save(folder / "labels.npy", labels)
    np.save(folder / "outlier.npy", rng.random(n) < 0.1)
    sparse.save_npz(folder / "counts.npz", dt.counts)
    (folder / "terms.json").write_text(json.dumps(dt.terms.tolist()), encoding="utf-8")
    return {
        "papers": n,
        "real": min(n, len(real)),
        "clusters": k,
        "terms": len(dt.terms),
        "text_mb": sum(len(t) for t in docs) / 2**20,
        "seconds": time.perf_counter() - start,
    }


def run(code_root: Path, inputs: Path, phases: bool = False) -> dict:
    env = os.environ | {"PYTHONPATH": str(code_root), "PYTHONHASHSEED": "0"}
    argv = [sys.executable, "-c", _WORKER, str(inputs), *(["phases"] if phases else [])]
    proc = subprocess.run(argv, cwd=code_root, env=env, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"run in {code_root} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def markdown(args, info: dict, results: dict[str, list[dict]], baseline: str) -> str:
    def best(side: str, key: str) -> float:
        return min(r[key] for r in results[side])

    rows = [
        f"| {side} | {best(side, 'peak_mb'):,.0f} | {best(side, 'added_mb'):,.0f} | {best(side, 'seconds'):.1f} | "
        f"{', '.join(format(r['peak_mb'], ',.0f') for r in results[side])} |"
        for side in ("before", "after")
    ]
    saved = best("before", "added_mb") - best("after", "added_mb")
    per_100k = saved * 100_000 / info["papers"]
    at_1m = PEAK_1M_MB - per_100k * 10
    load = os.getloadavg()[0]
    return "\n".join(
        [
            f"Measured {time.strftime('%Y-%m-%d %H:%M')} on {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()} with `python benchmarks/bench_represent_memory.py --papers {info['papers']} "
            f"--rounds {args.rounds}`; before = `{baseline}`, after = this checkout; load average at the end {load:.1f} "
            "(a shared machine).",
            "",
            f"Inputs: {info['papers']:,} papers ({info['real']:,} real abstracts, the rest stitched from their sentences), "
            f"{info['clusters']} clusters, {info['terms']:,} terms, {info['text_mb']:.0f} MB of text; **synthetic "
            "vectors** (a random unit vector per cluster plus noise) and the hashing test encoder for words, so the "
            "figures measure memory and time, not topics.",
            "",
            "| represent stage | peak RSS MB (best) | added by the fit MB (best) | seconds (best) | peak RSS of each run |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"Saved: {saved:,.0f} MB at {info['papers']:,} papers, **{per_100k:,.0f} MB per 100,000 papers**. "
            f"*Extrapolated, not measured*, linearly in the papers: at 1,000,000 papers the represent stage's peak "
            f"would be about {per_100k * 10:,.0f} MB lower, {at_1m:,.0f} MB instead of {PEAK_1M_MB:,} MB; the build's "
            f"peak is then the highest stage's, {max(at_1m, OTHER_STAGES_1M_MB):,.0f} MB (reduce peaked at "
            f"{OTHER_STAGES_1M_MB:,} MB), against the target of {TARGET_1M_MB:,} MB: "
            f"{'met' if max(at_1m, OTHER_STAGES_1M_MB) <= TARGET_1M_MB else 'not met by this change alone'}.",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="before/after pairs, alternating (default 2)")
    parser.add_argument("--baseline", default=None, help="git ref of the code before (default: merge-base with main)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", action="store_true", help="write the figures into BENCHMARKS.md")
    parser.add_argument(
        "--phases", action="store_true", help="one more run of this checkout: each step's peak RSS and seconds"
    )
    args = parser.parse_args()
    baseline = (
        args.baseline
        or subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()[:7]
    )
    with tempfile.TemporaryDirectory(prefix="bench-represent-") as tmp:
        inputs = Path(tmp) / "inputs"
        inputs.mkdir()
        info = make_inputs(inputs, args.papers, args.seed)
        print(f"inputs: {info}", flush=True)
        code = {"before": baseline_tree(baseline, Path(tmp) / "before"), "after": ROOT}
        results: dict[str, list[dict]] = {"before": [], "after": []}
        for _round in range(args.rounds):
            for side in ("before", "after"):
                results[side].append(run(code[side], inputs))
                print(f"{side}: {results[side][-1]}", flush=True)
        if args.phases:
            print(f"phases (this checkout): {run(ROOT, inputs, phases=True)}", flush=True)
    if not args.rounds:
        return
    block = markdown(args, info, results, baseline)
    print(block)
    out = ROOT / "benchmarks" / "output"
    out.mkdir(exist_ok=True)
    (out / "represent-memory.json").write_text(json.dumps({"baseline": baseline, "inputs": info, "runs": results}))
    if args.markdown:
        write_block("bench-represent-memory", HEADING, block)


if __name__ == "__main__":
    main()
