"""Levers on seed stability, measured with the pipeline's own stages on a built corpus.

Each setting clusters the corpus once per seed (UMAP projections are cached in
``.cache-research/levers/``) and reports NMI/ARI against the labels (IJCAI) and stability (mean
pairwise ARI) over all seeds and over seeds 0-2. Results: benchmarks/results/clustering-tuning.md,
"Stability measured with the real pipeline".

    B=".venv/bin/python benchmarks/stability_levers.py --artifacts /tmp/full"
    $B ijcai --seeds 10 base rounds=2 smooth_k=20 ms=5 mcs=15,ms=8 k=20 k=30 views=2 views=3
    $B ijcai --seeds 10 n_epochs=1000 cluster_dims=10 n_neighbors=20 consensus=3
    $B icml --seeds 8 base k=15 k=30

Clustering settings (mcs, ms, k, smooth_k, rounds) change only the step after UMAP; ``views=V``
concatenates V projections with independent seeds (s, s+100, ...); ``consensus=V`` clusters V
projections as the pipeline does and joins them by co-association (average linkage, same k);
UMAP settings (n_epochs, cluster_dims, n_neighbors) refit the projections.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import artifacts, schema
from pipeline.evaluation.evaluate import clustering_scores, stability
from pipeline.evaluation.quality import config_from_manifest
from pipeline.model.cluster import _hdbscan
from pipeline.model.cluster_params import resolve_params
from pipeline.model.cluster_refine import merge_to, reassign_outliers, smooth
from pipeline.model.reduce import cluster_projection, shared_knn

CACHE = Path(__file__).resolve().parent.parent / ".cache-research" / "levers"
UMAP_KEYS = ("n_epochs", "cluster_dims", "n_neighbors")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus")
    parser.add_argument("settings", nargs="+", help="base, or key=value[,key=value]")
    parser.add_argument("--artifacts", type=Path, required=True)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    folder = artifacts.corpus_path(args.artifacts, args.corpus)
    config = config_from_manifest(artifacts.read_manifest(folder))
    papers = artifacts.read_table(folder, schema.PAPERS).sort_values("row")
    x = artifacts.read_array(folder, schema.EMBEDDINGS)
    labels = papers["label"].to_numpy()
    keep = pd.notna(labels) if pd.notna(labels).any() else np.ones(len(x), dtype=bool)
    x, truth = x[keep], (labels[keep] if pd.notna(labels).any() else None)
    seeds = list(range(args.seeds))
    for setting in args.settings:
        kw = {} if setting == "base" else {k: int(v) for k, v in (kv.split("=") for kv in setting.split(","))}
        umap = dataclasses.replace(config.umap, **{k: kw.pop(k) for k in UMAP_KEYS if k in kw})
        knn = shared_knn(x, umap)
        views = kw.pop("views", 1)
        consensus = kw.pop("consensus", 0)
        n_proj = max(views, consensus, 1)
        runs = []
        for s in seeds:
            points = [_projection(args.corpus, x, knn, umap, s + 100 * j) for j in range(n_proj)]
            if consensus:
                runs.append(_consensus([_cluster(p, x, knn, config, {}) for p in points], config, len(x)))
            else:
                runs.append(_cluster(np.hstack(points), x, knn, config, kw))
        _report(setting, runs, truth)


def _projection(name, x, knn, umap, seed) -> np.ndarray:
    key = "-".join(f"{k}{getattr(umap, k)}" for k in UMAP_KEYS)
    path = CACHE / f"{name}-{len(x)}-{key}-seed{seed}.npy"
    if path.exists():
        return np.load(path, allow_pickle=False)
    points = cluster_projection(x, knn, umap, seed=seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, points, allow_pickle=False)
    return points


def _cluster(points, x, knn, config, kw) -> np.ndarray:
    p = resolve_params(config.cluster, len(x))
    p = dataclasses.replace(
        p, min_cluster_size=kw.get("mcs", p.min_cluster_size), min_samples=kw.get("ms", p.min_samples)
    )
    labels = reassign_outliers(merge_to(_hdbscan(points, p), x, kw.get("k", p.n_topics)), x)
    for _ in range(kw.get("rounds", 1)):
        labels = smooth(labels, knn[0], kw.get("smooth_k", p.smooth_k))
    return labels


def _consensus(runs, config, n) -> np.ndarray:
    from sklearn.cluster import AgglomerativeClustering

    together = np.zeros((n, n), dtype=np.float32)
    for labels in runs:
        together += labels[:, None] == labels[None, :]
    k = resolve_params(config.cluster, n).n_topics
    return AgglomerativeClustering(k, metric="precomputed", linkage="average").fit_predict(1 - together / len(runs))


def _report(setting, runs, truth) -> None:
    triples = [stability([runs[a], runs[b], runs[c]]) for a, b, c in itertools.combinations(range(len(runs)), 3)]
    line = f"{setting:32s} stability {stability(runs):.3f} (seeds 0-2: {stability(runs[:3]):.3f}; triples {min(triples):.2f}-{max(triples):.2f})"
    if truth is not None:
        scores = [clustering_scores(truth, r) for r in runs]
        line += (
            f"  NMI {np.mean([s['nmi_all'] for s in scores]):.3f}  ARI {np.mean([s['ari_all'] for s in scores]):.3f}"
        )
    print(line, flush=True)


if __name__ == "__main__":
    main()
