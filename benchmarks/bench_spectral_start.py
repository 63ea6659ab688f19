"""UMAP's spectral start with √n Lanczos vectors (UMAP's own) against at most 64
(``pipeline.model.spectral_start``): memory, time and what the map keeps, side by side.

Not part of the product or the tests. For each size, the first N rows of an embeddings file
(``--embeddings``, float32 ``(n, 384)``, e.g. a grown build's ``embeddings.npy``) and their kNN graph
as the build makes it (``reduce.shared_knn``, computed once and kept in ``--work``). Each
measurement runs in a fresh process (one each, one after the other), and reports the peak resident memory
it added over its inputs (sampled every 20 ms) and its seconds:

* ``--starts``: the spectral start alone (the Laplacian's eigenvectors), on the fuzzy graph UMAP
  lays out; also the eigenvalues and the cosine between the two ways' eigenvectors;
* ``--maps``: the whole map (``reduce.map_projection``); also each map's neighbourhood kept (the
  share of a paper's 10 nearest papers in the kNN graph that are among its 10 nearest on the map,
  2,000 papers) and how many of those map neighbours the two maps share; for scale, UMAP's own map
  with the next seed is made too, and its neighbours compared with UMAP's map the same way.

    .venv/bin/python benchmarks/bench_spectral_start.py --embeddings /tmp/grown/embeddings.npy \\
        --work /tmp/spectral --starts 200000 1000000 --maps 20000 200000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys, threading, time
sys.path.insert(0, {root!r})
import numpy as np, psutil
import umap
import pipeline.model.spectral_start as ss
from pipeline.core.config import BuildConfig
from pipeline.model import reduce

def rss():
    return psutil.Process().memory_info().rss

peak = [0]
def sample():
    while True:
        peak[0] = max(peak[0], rss()); time.sleep(0.02)

params = BuildConfig().umap
emb = np.array(np.load({embeddings!r}, mmap_mode="r")[:{n}], dtype=np.float32)
saved = np.load({knn!r})
knn = (saved["idx"], saved["dist"])
k = min(reduce.neighbours_for({n}, params), {n} - 1)
out = {{}}
if {part!r} == "start":
    from umap.umap_ import fuzzy_simplicial_set
    graph = fuzzy_simplicial_set(emb, k, np.random.RandomState(0), "cosine", knn_indices=knn[0][:, :k],
                                 knn_dists=knn[1][:, :k])[0]
    graph = ss.pruned_graph(graph, params.n_epochs)
    layout = umap.spectral.spectral_layout if {way!r} == "umap" else ss.spectral_layout
    base = rss(); peak[0] = base; threading.Thread(target=sample, daemon=True).start()
    t = time.perf_counter()
    result = layout(emb, graph, 2, np.random.RandomState(0), metric="cosine")
    out["seconds"] = time.perf_counter() - t
    np.save({save!r}, np.asarray(result, dtype=np.float64))
else:
    if {way!r} in ("umap", "umap-seed"):
        ss.bounded_umap_class = lambda: umap.UMAP
    if {way!r} == "umap-seed":
        import dataclasses
        params = dataclasses.replace(params, seed=params.seed + 1)
    base = rss(); peak[0] = base; threading.Thread(target=sample, daemon=True).start()
    t = time.perf_counter()
    result = reduce.map_projection(emb, knn, params)
    out["seconds"] = time.perf_counter() - t
    np.save({save!r}, result)
time.sleep(0.05)
out["added_mb"] = (peak[0] - base) / 2**20
print(json.dumps(out))
"""


def run_child(embeddings: Path, knn: Path, n: int, part: str, way: str, save: Path) -> dict:
    code = CHILD.format(
        root=str(ROOT), embeddings=str(embeddings), knn=str(knn), n=n, part=part, way=way, save=str(save)
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def knn_file(embeddings: Path, n: int, work: Path) -> Path:
    path = work / f"knn-{n}.npz"
    if not path.exists():
        from pipeline.core.config import BuildConfig
        from pipeline.model.reduce import shared_knn

        emb = np.array(np.load(embeddings, mmap_mode="r")[:n], dtype=np.float32)
        idx, dist = shared_knn(emb, BuildConfig().umap)
        np.savez(path, idx=idx, dist=dist)
    return path


def kept(xy: np.ndarray, knn_idx: np.ndarray, rows: np.ndarray, k: int = 10) -> tuple[float, list[np.ndarray]]:
    """Share of each sampled paper's ``k`` nearest papers in the graph among its ``k`` nearest on the map."""
    near = []
    shared = 0
    for row in rows:
        d = ((xy - xy[row]) ** 2).sum(axis=1)
        d[row] = np.inf
        on_map = np.argpartition(d, k)[:k]
        near.append(on_map)
        shared += len(np.intersect1d(on_map, knn_idx[row, 1 : k + 1]))
    return shared / (len(rows) * k), near


def shared(near_a: list[np.ndarray], near_b: list[np.ndarray]) -> float:
    """Mean share of a paper's map neighbours that two maps have in common."""
    return float(np.mean([len(np.intersect1d(x, y)) / 10 for x, y in zip(near_a, near_b, strict=True)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embeddings", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--starts", type=int, nargs="*", default=[])
    parser.add_argument("--maps", type=int, nargs="*", default=[])
    parser.add_argument(
        "--map-ways",
        nargs="+",
        choices=["umap", "bounded", "umap-seed"],
        default=["umap", "bounded", "umap-seed"],
        help="maps made: umap and bounded (and umap-seed) to compare them, or bounded alone (at 1M)",
    )
    args = parser.parse_args()
    if args.map_ways != ["bounded"] and not {"umap", "bounded"} <= set(args.map_ways):
        parser.error("--map-ways: umap and bounded (and umap-seed), or bounded alone")
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.starts:
        knn = knn_file(args.embeddings, n, args.work)
        got = {}
        for way in ("umap", "bounded"):
            got[way] = run_child(args.embeddings, knn, n, "start", way, args.work / f"start-{way}-{n}.npy")
        a, b = (np.load(args.work / f"start-{way}-{n}.npy") for way in ("umap", "bounded"))
        cos = [abs(a[:, i] @ b[:, i]) / (np.linalg.norm(a[:, i]) * np.linalg.norm(b[:, i])) for i in range(2)]
        rows.append(
            f"| spectral start | {n:,} | {got['umap']['added_mb']:,.0f} MB, {got['umap']['seconds']:.1f} s "
            f"| {got['bounded']['added_mb']:,.0f} MB, {got['bounded']['seconds']:.1f} s "
            f"| eigenvectors' cosine {min(cos):.5f} |"
        )
        print(rows[-1], flush=True)
    for n in args.maps:
        knn = knn_file(args.embeddings, n, args.work)
        ways = args.map_ways
        got = {way: run_child(args.embeddings, knn, n, "map", way, args.work / f"map-{way}-{n}.npy") for way in ways}
        if ways == ["bounded"]:
            rows.append(
                f"| map | {n:,} | not made | {got['bounded']['added_mb']:,.0f} MB, "
                f"{got['bounded']['seconds']:.1f} s | - |"
            )
            print(rows[-1], flush=True)
            continue
        knn_idx = np.load(knn)["idx"]
        sample = np.random.default_rng(0).choice(n, size=min(2000, n), replace=False)
        maps = {way: np.load(args.work / f"map-{way}-{n}.npy") for way in ways}
        score = {way: kept(xy, knn_idx, sample) for way, xy in maps.items()}

        identical = np.array_equal(maps["umap"], maps["bounded"])
        agreement = (
            "identical" if identical else f"map neighbours shared {shared(score['umap'][1], score['bounded'][1]):.3f}"
        )
        if "umap-seed" in score:
            agreement += (
                f"; UMAP's own with the next seed: kept {score['umap-seed'][0]:.3f}, map neighbours shared "
                f"with UMAP's {shared(score['umap'][1], score['umap-seed'][1]):.3f}"
            )
        rows.append(
            f"| map | {n:,} | {got['umap']['added_mb']:,.0f} MB, {got['umap']['seconds']:.1f} s, kept "
            f"{score['umap'][0]:.3f} | {got['bounded']['added_mb']:,.0f} MB, {got['bounded']['seconds']:.1f} s, "
            f"kept {score['bounded'][0]:.3f} | {agreement} |"
        )
        print(rows[-1], flush=True)
    print("\n| part | papers | UMAP's start (√n vectors) | at most 64 vectors | agreement |\n|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
