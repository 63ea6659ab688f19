"""Topics on "another machine": the pipeline's kNN graph and clustering of a corpus, natively and in
a subprocess that emulates a generic x86-64 processor (numba for a generic CPU, numpy without its
AVX-512 code paths), compared by ARI; also the seconds each step takes (the clustering's cost).

    .venv/bin/python benchmarks/cross_machine.py ijcai icml iclr neurips neurips2026

Corpora come from ``benchmarks/graph_clustering.py``'s cache (``.cache-research/corpora``). Rows are
appended to ``benchmarks/results/cross-machine.jsonl``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results" / "cross-machine.jsonl"
EMULATE = {"NUMBA_CPU_NAME": "generic", "NPY_DISABLE_CPU_FEATURES": "AVX512_SPR AVX512_ICL X86_V4"}


def labels_for(name: str, out: Path) -> dict:
    """Cluster one corpus with the defaults; save the labels; return the timings."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from graph_clustering import load

    from pipeline.core.config import BuildConfig
    from pipeline.model.cluster import cluster
    from pipeline.model.reduce import shared_knn

    _, x, _ = load(name, Path("/tmp/stab-art"))
    config = BuildConfig()
    start = time.perf_counter()
    knn = shared_knn(x, config.umap)
    knn_s = time.perf_counter() - start
    start = time.perf_counter()
    result = cluster(None, x, config.cluster, knn=knn[0])
    cluster_s = time.perf_counter() - start
    np.save(out, result.labels)
    return {"n": len(x), "method": result.params.method, "knn_seconds": knn_s, "cluster_seconds": cluster_s}


def main() -> None:
    if sys.argv[1] == "--one":
        print(json.dumps(labels_for(sys.argv[2], Path(sys.argv[3]))))
        return
    from sklearn.metrics import adjusted_rand_score

    for name in sys.argv[1:]:
        rows = {}
        for side, env in (("native", {}), ("emulated", EMULATE)):
            out = Path(f"/tmp/stab-cross-{name}-{side}.npy")
            done = subprocess.run(
                [sys.executable, __file__, "--one", name, str(out)],
                env=os.environ | env,
                capture_output=True,
                text=True,
                check=True,
            )
            rows[side] = json.loads(done.stdout.strip().splitlines()[-1]) | {"labels": np.load(out)}
        from pipeline.model.cluster import CLUSTER_VERSION

        row = {
            "corpus": name,
            "code": f"cluster v{CLUSTER_VERSION}",
            "n": rows["native"]["n"],
            "method": rows["native"]["method"],
            "ari_native_vs_emulated": adjusted_rand_score(rows["native"]["labels"], rows["emulated"]["labels"]),
            "identical": bool(np.array_equal(rows["native"]["labels"], rows["emulated"]["labels"])),
            "knn_seconds": round(rows["native"]["knn_seconds"], 2),
            "cluster_seconds": round(rows["native"]["cluster_seconds"], 2),
        }
        print(json.dumps(row), flush=True)
        with RESULTS.open("a") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
