"""How to measure per-topic stability cheaply: extra clustering runs with other UMAP seeds.

For a built corpus (its embeddings and settings), the main clustering (the build's seed and
epochs) is compared with extra runs on other seeds, first with UMAP's full epochs (the reference)
and then with fewer epochs; for each variant: seconds per extra run, mean per-topic stability
(``pipeline.evaluation.evaluate.topic_stability``), its correlation with the reference per topic, and the
global ARI between the runs. Results are appended to ``results/topic-stability.jsonl``.

    .venv/bin/python benchmarks/topic_stability.py --artifacts /tmp/full neurips ijcai --epochs 0 100 50
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pipeline.core import artifacts, schema
from pipeline.core.config import BuildConfig
from pipeline.evaluation.evaluate import stability, topic_stability
from pipeline.evaluation.quality import config_from_manifest
from pipeline.model.cluster import cluster
from pipeline.model.reduce import cluster_projection, shared_knn

RESULTS = Path(__file__).parent / "results" / "topic-stability.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--artifacts", type=Path, required=True)
    parser.add_argument("--epochs", nargs="+", type=int, default=[0, 100, 50], help="0 = UMAP's default")
    parser.add_argument("--extra", nargs="+", type=int, default=[1, 2], help="seed offsets of the extra runs")
    args = parser.parse_args()
    for name in args.corpora:
        folder = artifacts.corpus_path(args.artifacts, name)
        config = config_from_manifest(artifacts.read_manifest(folder), BuildConfig())
        x = artifacts.read_array(folder, schema.EMBEDDINGS)
        n = len(x)
        start = time.perf_counter()
        knn = shared_knn(x, config.umap)
        knn_s = time.perf_counter() - start
        cluster_projection(x[:300], shared_knn(x[:300], config.umap), config.umap, n_epochs=5)  # JIT warm-up
        start = time.perf_counter()
        main_labels = cluster(cluster_projection(x, knn, config.umap), x, config.cluster, knn=knn[0]).labels
        main_s = time.perf_counter() - start
        reference = None
        for epochs in args.epochs:
            runs, seconds = [], []
            for offset in args.extra:
                start = time.perf_counter()
                points = cluster_projection(
                    x, knn, config.umap, seed=config.umap.seed + offset, n_epochs=epochs or None
                )
                runs.append(cluster(points, x, config.cluster, knn=knn[0]).labels)
                seconds.append(time.perf_counter() - start)
            per_topic = topic_stability(main_labels, runs)
            values = np.array([per_topic[t] for t in sorted(per_topic)])
            if reference is None:
                reference = values
            row = {
                "corpus": name,
                "n": n,
                "epochs": epochs or "auto",
                "extra_seeds": [config.umap.seed + o for o in args.extra],
                "knn_seconds": round(knn_s, 2),
                "main_seconds": round(main_s, 2),
                "seconds_per_extra_run": round(float(np.mean(seconds)), 2),
                "mean_topic_stability": round(float(values.mean()), 4),
                "min_topic_stability": round(float(values.min()), 4),
                "corr_with_full_epochs": round(float(np.corrcoef(values, reference)[0, 1]), 4),
                "mean_abs_diff_vs_full": round(float(np.abs(values - reference).mean()), 4),
                "ari_stability": round(stability([main_labels, *runs]), 4),
            }
            print(json.dumps(row), flush=True)
            with RESULTS.open("a") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
