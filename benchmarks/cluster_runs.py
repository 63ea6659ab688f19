"""What fewer Leiden runs cost: seed stability and time of the graph clustering per number of runs.

Not part of the test run. For a built corpus, clusters its papers with the pipeline's own stage
(``pipeline.model.cluster.cluster`` on the build's kNN graph, read from the stage cache or computed) once
per seed for each number of runs, and reports the mean pairwise ARI over the seeds (the seed
stability of ``pipeline.evaluation.evaluate.stability``) and the seconds per clustering. Used to choose the
size-dependent default of ``cluster.runs`` (``pipeline.model.cluster_params.default_runs``); the figures go to
``benchmarks/output/cluster_runs-NAME.json`` and, through ``bench_scale.py``, into BENCHMARKS.md.

    .venv/bin/python benchmarks/cluster_runs.py --artifacts /tmp/art neurips --runs 20 9 3 --seeds 3
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def measure(root: Path, name: str, runs: list[int], seeds: int) -> dict:
    """Seed stability and seconds per clustering for each number of runs."""
    import numpy as np

    from pipeline.build.build_fit import reduce_cached
    from pipeline.core import artifacts, schema
    from pipeline.core.settings import config_from_manifest
    from pipeline.evaluation.evaluate import stability
    from pipeline.model.cluster import cluster
    from pipeline.model.cluster_params import default_runs

    folder = artifacts.corpus_path(root, name)
    manifest = artifacts.read_manifest(folder)
    config = config_from_manifest(manifest, str(folder / schema.MANIFEST))
    embeddings = artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True)
    projection, _ = reduce_cached(embeddings, config, root)
    n = len(embeddings)
    out = {"corpus": name, "papers": n, "default_runs": default_runs(n), "seeds": seeds, "by_runs": {}}
    for r in runs:
        labels, seconds = [], []
        for seed in range(seeds):
            params = replace(config.cluster, runs=r, seed=config.cluster.seed + seed)
            start = time.perf_counter()
            labels.append(cluster(None, embeddings, params, knn=projection.knn_indices).labels)
            seconds.append(time.perf_counter() - start)
            print(f"  {name}: {r} runs, seed {seed}: {seconds[-1]:.1f} s", flush=True)
        out["by_runs"][str(r)] = {
            "stability_ari": round(stability(labels), 4),
            "seconds": round(float(np.median(seconds)), 1),
            "topics": int(np.median([len(set(x.tolist())) for x in labels])),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus")
    parser.add_argument("--artifacts", type=Path, required=True)
    parser.add_argument("--runs", type=int, nargs="+", default=[20, 9, 3])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    result = measure(args.artifacts, args.corpus, args.runs, args.seeds)
    out = ROOT / "benchmarks" / "output"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"cluster_runs-{args.corpus}.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
