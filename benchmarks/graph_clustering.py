"""Research: clustering the shared kNN graph (Leiden) against the UMAP + HDBSCAN pipeline.

Loads a corpus through the pipeline's own ingest and embedding store (nothing is embedded twice:
point ``--artifacts`` at a folder whose ``.cache/embeddings`` holds the vectors), caches texts,
embeddings and labels in ``.cache-research/corpora/``, then clusters with each variant over the
seeds and prints NMI/ARI (labelled corpora), stability (mean pairwise ARI over seeds) and seconds.
Rows are appended to ``benchmarks/results/graph-clustering.jsonl``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.core import artifacts  # noqa: E402
from pipeline.core.config import BuildConfig, ClusterParams  # noqa: E402
from pipeline.evaluation.evaluate import clustering_scores, stability  # noqa: E402

DATA = Path("/work/shared/data")
CACHE = ROOT / ".cache-research" / "corpora"
RESULTS = ROOT / "benchmarks" / "results" / "graph-clustering.jsonl"
FILES = {
    "ijcai": ("ijcai2020-2024-primary-area.jsonl.gz", "label"),
    "ijcai-fine": (str(ROOT / ".cache-research" / "ijcai-fine.jsonl.gz"), "label"),
    "ijcai-fixture": (str(ROOT / "tests" / "fixtures" / "ijcai_labelled.jsonl.gz"), "label"),
    "neurips-kw": (str(ROOT / ".cache-research" / "neurips-kw.jsonl.gz"), "label"),
    "icml": ("icml2024-unlabeled.jsonl.gz", None),
    "iclr": ("iclr-2018-2022-submissions.jsonl.gz", None),
    "neurips": ("neurips-1987-2023.jsonl.gz", None),
    "neurips2026": (None, None),
}


def load(name: str, art: Path):
    """(texts, embeddings, labels or None) of a corpus, as the pipeline ingests and embeds it."""
    path = CACHE / f"{name}.npz"
    if path.exists():
        try:  # plain string arrays, never unpickled (a cache written with object arrays is made again)
            with np.load(path) as z:
                labels = z["labels"] if z["labels"].size else None
                return [str(t) for t in z["texts"]], z["x"], labels
        except ValueError:
            path.unlink()
    from pipeline.embed.embed import embed_texts
    from pipeline.ingest.ingest import ingest

    file, label = FILES[name]
    config = BuildConfig()
    if file is None:
        from pipeline.core.inputs import DEFAULT_INPUTS

        inputs = sorted(DEFAULT_INPUTS.glob("*.txt"))
    else:
        inputs = [Path(file) if Path(file).is_absolute() else DATA / file]
    papers = ingest(inputs, config.ingest).papers.reset_index(drop=True)
    x = embed_texts(papers["model_text"].tolist(), config.embed, artifacts.cache_dir(art)).vectors
    labels = None
    if label and papers["label"].notna().any():
        keep = papers["label"].notna().to_numpy()
        papers, x = papers[keep].reset_index(drop=True), x[keep]
        labels = papers["label"].astype(str).to_numpy()
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(
        path,
        texts=np.array(papers["model_text"].tolist(), dtype=str),
        x=x,
        labels=np.asarray(labels, dtype=str) if labels is not None else np.array([], dtype=str),
    )
    return papers["model_text"].tolist(), x, labels


def run_variant(name, x, labels, variant: dict, seeds, knn, umap_cache: dict) -> dict:
    import pipeline.model.cluster_consensus as clustering
    from pipeline.model.cluster import cluster
    from pipeline.model.cluster_params import uses_projection
    from pipeline.model.reduce import cluster_projection

    config = BuildConfig()
    clustering.MICRO_PER_TOPIC = variant.get("micro", 2.6)  # a module constant, varied here
    params = dataclasses.replace(
        ClusterParams(), **{k: v for k, v in variant.items() if k in ClusterParams.__dataclass_fields__}
    )
    runs, secs = [], []
    for seed in seeds:
        start = time.perf_counter()
        points = None
        if uses_projection(params):
            if seed not in umap_cache:
                umap_cache[seed] = cluster_projection(x, knn, config.umap, seed=seed)
            points = umap_cache[seed]
        c = cluster(points, x, dataclasses.replace(params, seed=seed), knn=knn[0])
        secs.append(time.perf_counter() - start)
        runs.append(c.labels)
    row = {
        "corpus": name,
        "n": len(x),
        "variant": variant,
        "seeds": list(seeds),
        "topics": float(np.mean([len(set(r.tolist()) - {-1}) for r in runs])),
        "stability": stability(runs) if len(runs) > 1 else float("nan"),
        "seconds": float(np.median(secs)),
        "raw_outlier": float(np.mean([0])),
    }
    if labels is not None:
        sc = [clustering_scores(labels, r) for r in runs]
        row["nmi"] = float(np.mean([s["nmi_all"] for s in sc]))
        row["ari"] = float(np.mean([s["ari_all"] for s in sc]))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("corpus", nargs="+")
    ap.add_argument("--artifacts", type=Path, default=Path("/tmp/stab-art"))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--variant", action="append", default=[], help="JSON dict of ClusterParams fields")
    ap.add_argument("--tag", default="adhoc")
    args = ap.parse_args()
    from pipeline.model.reduce import shared_knn

    for name in args.corpus:
        texts, x, labels = load(name, args.artifacts)
        knn = shared_knn(x, BuildConfig().umap)
        umap_cache: dict = {}
        for v in args.variant:
            row = run_variant(name, x, labels, json.loads(v), range(args.seeds), knn, umap_cache)
            row["tag"] = args.tag
            print(
                json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items() if k != "seeds"}),
                flush=True,
            )
            RESULTS.parent.mkdir(parents=True, exist_ok=True)
            with RESULTS.open("a") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
