"""Embedding throughput: the Ray engine on 2 local workers against the local engine, in one run.

Not part of the test run. Both engines embed the same real NeurIPS abstracts into empty caches
(the ONNX export is made once beforehand and copied, so neither pays for it), each in a fresh
process, ``--repeats`` times in alternating order; the medians are compared. Writes
``benchmarks/output/ray.json`` and the figures into BENCHMARKS.md between the ``bench-ray`` markers.

    .venv/bin/python benchmarks/bench_ray.py              # 3,000 abstracts, 2 repeats (about 8 minutes here)
    .venv/bin/python benchmarks/bench_ray.py --n 300 --repeats 1   # a quick check of the script

Figures: "end to end" is the whole call (Ray: start-up, actors loading the model, shards, the
cache writes); "steady" counts from the first vectors back to the last, which is what a long job
on a cluster sees. The projection to a cluster assumes the per-core steady rate measured here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "output"
DATA = Path(
    os.environ.get("SHARED_DATA")
    or next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT / "shared" / "data")
)
PY = sys.executable
sys.path.insert(0, str(ROOT))
from benchmarks.markdown_block import write_block  # noqa: E402

RUN = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from pipeline.core.config import EmbedParams
    texts = json.loads(Path({texts!r}).read_text())
    cache = Path({cache!r})
    marks = []
    progress = lambda done, total: marks.append((time.perf_counter(), done))
    t0 = time.perf_counter()
    if {engine!r} == "ray":
        from pipeline.embed.ray_engine import RayEngine, RayParams
        engine = RayEngine(RayParams(local_cpus={cpus}, workers={cpus}))
        result = engine(texts, EmbedParams(), cache, progress=progress)
        info = engine.last_run
    else:
        from pipeline.embed.embed import embed_texts
        result = embed_texts(texts, EmbedParams(threads={cpus}), cache, progress=progress)
        info = {{}}
    wall = time.perf_counter() - t0
    np.save({vectors!r}, result.vectors)
    (t1, d1), (t2, d2) = marks[0], marks[-1]
    t2 = max(t2, t1 + 1e-9)  # one shard only: no steady rate
    print(json.dumps({{"wall_s": wall, "computed": result.computed, "steady_docs_per_s": (d2 - d1) / (t2 - t1),
                      "first_vectors_s": t1 - t0, "info": info}}))
    """
)


def sample_texts(n: int) -> list[str]:
    from pipeline.ingest.ingest import ingest

    papers = ingest([DATA / "neurips-1987-2023.jsonl.gz"]).papers
    rng = random.Random(0)
    return [papers["model_text"].iat[i] for i in sorted(rng.sample(range(len(papers)), n))]


def run_engine(engine: str, texts_path: Path, models: Path, cpus: int, tag: str) -> dict:
    cache = OUT / f"ray-bench-{tag}"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.copytree(models, cache / "models")
    vectors = OUT / f"ray-bench-{tag}.npy"
    code = RUN.format(
        root=str(ROOT), texts=str(texts_path), cache=str(cache), engine=engine, cpus=cpus, vectors=str(vectors)
    )
    proc = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True)
    shutil.rmtree(cache, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"{engine} run failed:\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["vectors"] = str(vectors)
    return out


def main() -> None:
    import numpy as np

    from pipeline.core.config import EmbedParams
    from pipeline.embed.embed_model import resolve_model_path
    from pipeline.embed.encoders import export_onnx, onnx_model_path

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3000, help="abstracts embedded by each engine (default 3000)")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each engine, alternating (default 2)")
    parser.add_argument("--cpus", type=int, default=2, help="local threads and Ray workers (default 2)")
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    args = parser.parse_args()

    OUT.mkdir(parents=True, exist_ok=True)
    texts = sample_texts(args.n)
    texts_path = OUT / "ray-bench-texts.json"
    texts_path.write_text(json.dumps(texts))
    models_cache = OUT / "ray-bench-models" / ".cache"
    params = EmbedParams()
    export_onnx(resolve_model_path(params.model), onnx_model_path(params, models_cache).parent, quantize=True)
    runs: dict[str, list[dict]] = {"local": [], "ray": []}
    load_before = os.getloadavg()[0]
    for r in range(args.repeats):
        for engine in ("local", "ray") if r % 2 == 0 else ("ray", "local"):
            print(f"{engine}, run {r + 1} ...", flush=True)
            runs[engine].append(run_engine(engine, texts_path, models_cache / "models", args.cpus, f"{engine}{r}"))
    diff = float(np.abs(np.load(runs["local"][0]["vectors"]) - np.load(runs["ray"][0]["vectors"])).max())

    def median(engine: str, key: str) -> float:
        return float(np.median([run[key] for run in runs[engine]]))

    res = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": "python benchmarks/bench_ray.py " + " ".join(sys.argv[1:]),
        "n": args.n,
        "cpus": args.cpus,
        "repeats": args.repeats,
        "runs": runs,
        "max_abs_diff": diff,
        # Other work on the machine skews every figure: the load says how quiet it was.
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
    }
    for engine in ("local", "ray"):
        wall = median(engine, "wall_s")
        res[engine] = {
            "wall_s": round(wall, 1),
            "docs_per_s": round(args.n / wall, 1),
            "steady_docs_per_s": round(median(engine, "steady_docs_per_s"), 1),
            "first_vectors_s": round(median(engine, "first_vectors_s"), 1),
        }
        # What the call costs beyond encoding at the steady rate: start-up, model loading, the tail.
        res[engine]["overhead_s"] = round(wall - args.n / res[engine]["steady_docs_per_s"], 1)
    (OUT / "ray.json").write_text(json.dumps(res, indent=2))
    if not args.no_write:
        write_markdown(res)
    print(json.dumps({k: v for k, v in res.items() if k != "runs"}, indent=2))


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min"


def write_markdown(res: dict) -> None:
    local, ray = res["local"], res["ray"]
    ratio_e2e = ray["docs_per_s"] / local["docs_per_s"]
    ratio_steady = ray["steady_docs_per_s"] / local["steady_docs_per_s"]
    per_core = ray["steady_docs_per_s"] / res["cpus"]
    startup = max(0.0, ray["overhead_s"])
    lines = [
        f"Measured {res['date']} on {res['machine']} with `{res['command']}`: {res['n']:,} NeurIPS abstracts "
        f"embedded into an empty cache by each engine, each run in a fresh process, {res['repeats']} run(s) each "
        "in alternating order, medians (onnx-int8, 256 tokens, batches of 16). Load average before / after: "
        f"{res['load_average'][0]} / {res['load_average'][1]} on {os.cpu_count()} cores"
        + (" (**the machine was busy: re-measure on a quiet one**)." if max(res["load_average"]) > 1.5 else "."),
        "",
        "| engine | wall s | docs/s end to end | docs/s steady | first vectors back after | overhead s |",
        "|---|---|---|---|---|---|",
        f"| local (one process, {res['cpus']} onnxruntime threads) | {local['wall_s']} | {local['docs_per_s']} | "
        f"{local['steady_docs_per_s']} | {local['first_vectors_s']} s | {local['overhead_s']} |",
        f"| ray ({res['cpus']} actors x 1 thread, local Ray started by the call) | {ray['wall_s']} | "
        f"{ray['docs_per_s']} | {ray['steady_docs_per_s']} | {ray['first_vectors_s']} s | {ray['overhead_s']} |",
        "",
        "Steady: documents per second from the first vectors back to the last. Overhead: wall time minus the "
        "documents at the steady rate (Ray: starting Ray and the actors, loading the model, the last shard's tail).",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
        f"| Ray on {res['cpus']} local workers >= 0.9 x local docs/s (steady) | {ratio_steady:.2f} x | "
        f"{'met' if ratio_steady >= 0.9 else '**missed**'} |",
        f"| (not a target) the same end to end, Ray's start-up included, {res['n']:,} texts | {ratio_e2e:.2f} x | "
        "start-up is paid once per build |",
        f"| same vectors as the local engine | max abs difference {res['max_abs_diff']:.1e} | "
        f"{'met' if res['max_abs_diff'] <= 1e-6 else '**missed**'} |",
        "",
        f"Projection for 1,000,000 papers, at this machine's {per_core:.1f} docs/s per core (steady rate of one "
        f"Ray worker) and about {startup:.0f} s of overhead: 32 cores about "
        f"{_duration(1e6 / (per_core * 32) + startup)}, 256 cores about {_duration(1e6 / (per_core * 256) + startup)} "
        f"(one core here: {_duration(1e6 / per_core)}). It assumes linear scaling: each actor works on its own shards "
        "and only 1.5 KB of vector per paper travels back to the driver (1.5 GB for 1M), which the driver writes "
        "into the cache in chunks of 50,000. Not measured on a cluster or on a GPU: no such machine was available.",
    ]
    write_block("bench-ray", "Ray engine", "\n".join(lines))


if __name__ == "__main__":
    main()
