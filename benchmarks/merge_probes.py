"""Research: why the graph clustering agreed less with fine-grained labels than k-means, and what helps.

Each probe changes one step after the Leiden runs (the rest is the default clustering) and prints
NMI/ARI against the labels and the stability over ten seeds, one JSON line per corpus; rows are
appended to ``benchmarks/results/label-agreement.jsonl``. Corpora come from
``benchmarks/graph_clustering.py``'s cache (``make_proxies.py`` makes the proxies).

    .venv/bin/python benchmarks/merge_probes.py ijcai,ijcai-fine,neurips-kw default
    .venv/bin/python benchmarks/merge_probes.py ijcai kmeans:16 kmeans:25 topics:16
    .venv/bin/python benchmarks/merge_probes.py ijcai,ijcai-fine,neurips-kw,icml steps:1:smooth steps:5:nosmooth
    .venv/bin/python benchmarks/merge_probes.py ijcai,ijcai-fine,neurips-kw minsize:0.2:runs propagate linkage:ward

Probes: ``default``; ``kmeans:K`` (k-means, the baseline); ``topics:K`` (the default merged to K
topics); ``steps:N:smooth|nosmooth`` (N refining k-means steps, with or without the smoothing
vote); ``propagate`` (border papers take their neighbours' majority topic instead of the nearest
topic mean, no refining); ``minsize:F[:runs]`` (the merge's tree is cut where ``k`` of its groups
hold at least F * n / k papers each, smaller groups become border papers; ``:runs`` does the same
in each run's own merge); ``linkage:METHOD`` (the agreement merge with scipy's METHOD linkage).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from graph_clustering import load  # noqa: E402

import pipeline.model.cluster as C  # noqa: E402
import pipeline.model.cluster_consensus as consensus  # noqa: E402
import pipeline.model.cluster_params as params  # noqa: E402
import pipeline.model.cluster_refine as refine  # noqa: E402
from pipeline.core.config import BuildConfig, ClusterParams  # noqa: E402
from pipeline.evaluation.evaluate import clustering_scores, stability  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "label-agreement.jsonl"
ART = Path("/tmp/stab-art")


def _cut(distance: np.ndarray, sizes: np.ndarray, k: int, min_size: float, method: str) -> np.ndarray:
    """Groups of an agglomerative tree on ``distance``: the first cut with ``k`` groups of at least
    ``min_size`` papers; the papers of smaller groups are -1."""
    from scipy.cluster.hierarchy import cut_tree, linkage
    from scipy.spatial.distance import squareform

    tree = linkage(squareform(np.clip(distance, 0, None), checks=False), method=method)
    counts = list(range(k, len(sizes) + 1))
    cuts = cut_tree(tree, n_clusters=counts)
    for j in range(len(counts)):
        groups = cuts[:, j]
        big = np.bincount(groups, weights=sizes) >= min_size
        if big.sum() >= k:
            return np.where(big[groups], groups, -1)
    return cuts[:, 0]


def _agreement(micro: np.ndarray, finals: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from scipy import sparse

    ids = np.unique(micro[micro != -1])
    inlier = np.flatnonzero(micro != -1)
    rows = np.searchsorted(ids, micro[inlier])
    member = sparse.csr_matrix((np.ones(len(inlier)), (rows, inlier)), shape=(len(ids), len(micro)))
    sizes = np.asarray(member.sum(axis=1)).ravel()
    member = sparse.diags(1.0 / sizes) @ member
    agreement = np.zeros((len(ids), len(ids)))
    for final in finals:
        onehot = sparse.csr_matrix(
            (np.ones(len(final)), (np.arange(len(final)), final)), shape=(len(final), int(final.max()) + 1)
        )
        share = (member @ onehot).toarray()
        agreement += share @ share.T
    distance = 1.0 - agreement / len(finals)
    np.fill_diagonal(distance, 0.0)
    return distance, sizes, inlier, rows


def patch_merge(min_share: float, runs_too: bool, method: str) -> None:
    """Replace the merges in ``pipeline.model.cluster`` and ``pipeline.model.cluster_consensus`` (a probe; the
    modules are changed in place)."""
    original_merge_to = refine.merge_to

    def merge_by_agreement(micro, finals, k):
        if len(np.unique(micro[micro != -1])) <= k:
            return micro
        distance, sizes, inlier, rows = _agreement(micro, finals)
        groups = _cut(distance, sizes, k, min_share * len(micro) / k, method)
        out = np.full(len(micro), -1, dtype=np.int64)
        out[inlier] = groups[rows]
        return out

    def merge_to(labels, embeddings, k):
        if not runs_too:
            return original_merge_to(labels, embeddings, k)
        from sklearn.metrics.pairwise import cosine_distances

        ids, vectors = refine.centroids(labels, embeddings)
        if len(ids) <= k:
            return labels
        sizes = np.array([(labels == i).sum() for i in ids], dtype=float)
        distance = cosine_distances(vectors).astype(np.float64)
        distance = (distance + distance.T) / 2
        np.fill_diagonal(distance, 0.0)
        groups = _cut(distance, sizes, k, min_share * len(labels) / k, "average")
        lookup = dict(zip(ids.tolist(), groups.tolist(), strict=True))
        return np.array([lookup.get(int(c), -1) for c in labels], dtype=np.int64)

    consensus.merge_by_agreement = merge_by_agreement
    consensus.merge_to = C.merge_to = merge_to


def propagate(labels: np.ndarray, knn: np.ndarray, rounds: int = 20) -> np.ndarray:
    """Border papers (-1) take the majority topic of their placed neighbours, round after round."""
    out = labels.copy()
    near = knn[:, 1:]
    for _ in range(rounds):
        missing = np.flatnonzero(out == -1)
        changed = False
        for i in missing:
            votes = out[near[i][near[i] >= 0]]
            votes = votes[votes >= 0]
            if len(votes):
                out[i], changed = np.bincount(votes).argmax(), True
        if not changed:
            break
    return out


def clusterer(probe: str):
    """A function (embeddings, knn, seed) -> labels for one probe."""
    name, *args = probe.split(":")
    if name == "kmeans":
        from sklearn.cluster import KMeans

        return lambda x, knn, seed: KMeans(n_clusters=int(args[0]), random_state=seed).fit_predict(x)
    if name == "topics":
        return lambda x, knn, seed: C.cluster(None, x, ClusterParams(n_topics=int(args[0]), seed=seed), knn=knn).labels
    if name == "minsize":
        patch_merge(float(args[0]), args[1:] == ["runs"], "average")
    if name == "linkage":
        patch_merge(0.0, False, args[0])
    if name in ("steps", "propagate"):
        steps, smoothing = (int(args[0]), args[1] == "smooth") if name == "steps" else (0, True)

        def run(x, knn, seed):
            p = params.resolve_params(dataclasses.replace(ClusterParams(), seed=seed), len(x))
            labels = consensus.graph_topics(knn, x, p).labels
            labels = refine.reassign_outliers(propagate(labels, knn) if name == "propagate" else labels, x)
            labels = refine.refine(labels, x, steps)
            if smoothing and p.smooth_k:
                labels = refine.smooth(labels, knn, p.smooth_k)
            return refine.canonical_labels(labels)

        return run
    return lambda x, knn, seed: C.cluster(None, x, ClusterParams(seed=seed), knn=knn).labels


def main() -> None:
    from pipeline.model.reduce import shared_knn

    corpora, probes = sys.argv[1].split(","), sys.argv[2:]
    data = {}
    for probe in probes:
        fn = clusterer(probe)
        for name in corpora:
            if name not in data:
                _, x, labels = load(name, ART)
                data[name] = (x, labels, shared_knn(x, BuildConfig().umap)[0])
            x, labels, knn = data[name]
            runs, seconds = [], []
            for seed in range(10):
                start = time.perf_counter()
                runs.append(np.asarray(fn(x, knn, seed)))
                seconds.append(time.perf_counter() - start)
            row = {"corpus": name, "probe": probe, "code": f"cluster v{C.CLUSTER_VERSION}", "n": len(x)}
            row["stability"] = stability(runs)
            row["topics"] = float(np.mean([len(set(r.tolist()) - {-1}) for r in runs]))
            row["seconds"] = float(np.median(seconds))
            if labels is not None:
                scores = [clustering_scores(labels, r) for r in runs]
                row["nmi"] = float(np.mean([s["nmi_all"] for s in scores]))
                row["ari"] = float(np.mean([s["ari_all"] for s in scores]))
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}), flush=True)
            with RESULTS.open("a") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
