"""Scale benchmark: the stages after embedding at 18,661, 100,000 and 1,000,000 papers, and the app
on the largest corpus built. One command; the figures go into BENCHMARKS.md ("Scale").

Not part of the test run. Each build runs the pipeline's command line in a fresh process with its
embeddings cached (the embedding stage only looks them up) and the stage cache cleared (the kNN
graph, UMAP and the stability runs are computed), with ``--force``; peak memory is sampled from
the process and its children every 0.2 s. The 18,661-paper NeurIPS build is also run with the code
of ``--baseline`` (default ``main``, extracted with ``git archive``) in the same run, so its
before/after figures share the machine's state.

    .venv/bin/python benchmarks/bench_scale.py                 # 18.7k (before/after), 100k, 1M, app on 1M
    .venv/bin/python benchmarks/bench_scale.py --sizes 18k 100k --app 100k

Inputs (see BENCHMARKS.md, "Benchmark corpora"; make them with ``benchmarks/make_corpora.py``):

* 18k: ``shared/data/neurips-1987-2023.jsonl.gz`` with the real vectors of ``/work/cache/artifacts``;
* 100k: ``BENCH/corpus-100k`` (35,267 real + 64,733 recombined abstracts) with the model's real
  vectors, in ``BENCH/artifacts-real`` (its store is seeded from the shared real vectors; the
  64,733 recombined texts are embedded once, about 18 minutes here, and cached);
* 1m: ``BENCH/corpus-1m`` with its prepared (synthetic) vectors in ``BENCH/artifacts``.

It refuses to start a size whose expected peak does not fit in the memory available (another
large job running); ``--busy-ok`` overrides that.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "output"
sys.path.insert(0, str(ROOT))
from benchmarks.markdown_block import write_block  # noqa: E402

DATA = Path(
    os.environ.get("SHARED_DATA")
    or next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT / "shared" / "data")
)
BENCH = Path(os.environ.get("BENCH_DIR", "/work/cache/bench"))
REAL_CACHE = Path(os.environ.get("REAL_CACHE", "/work/cache/artifacts/.cache"))
PY = sys.executable

#: Targets of issue 11 (seconds for everything except embedding, MB of peak memory).
TARGETS = {"100k": (300, 6 * 1024), "1m": (3600, 20 * 1024)}
#: Time targets of the app on a large corpus (s): the dashboard's for a semantic search in the
#: browser, and the drawing benchmark's "6 s in the app" for a million points for the map's first
#: visit. Keyword search has none: it is reported, not judged.
APP_TARGETS = {"map_first_visit_s": 6.0, "semantic_search_s": 0.3}
#: A build is stopped when the machine has less memory than this left (MB).
MIN_AVAILABLE_MB = 1_000
#: Memory a size needs free before it starts (MB): its target peak, with room.
NEEDS_MB = {"18k": 3_000, "100k": 6_500, "1m": 20_500}


def sizes() -> dict[str, dict]:
    real = BENCH / "artifacts-real"
    return {
        "18k": {"inputs": [DATA / "neurips-1987-2023.jsonl.gz"], "root": real, "name": "neurips"},
        "100k": {"inputs": sorted((BENCH / "corpus-100k").glob("*.parquet")), "root": real, "name": "bench100k"},
        "1m": {
            "inputs": sorted((BENCH / "corpus-1m").glob("*.parquet")),
            "root": BENCH / "artifacts",
            "name": "bench1m",
        },
    }


def seed_real_store(root: Path) -> None:
    """A real-vector artifacts folder starts with a copy of the shared real vectors (never the
    benchmark corpora's synthetic ones)."""
    for part in ("embeddings", "models"):
        if not (root / ".cache" / part).exists() and (REAL_CACHE / part).exists():
            (root / ".cache").mkdir(parents=True, exist_ok=True)
            shutil.copytree(REAL_CACHE / part, root / ".cache" / part)


def baseline_tree(ref: str) -> Path:
    """The pipeline of git ref ``ref``, extracted into a temporary folder."""
    dest = Path(tempfile.mkdtemp(prefix="bench-scale-baseline-"))
    archive = subprocess.run(["git", "archive", ref, "pipeline"], cwd=ROOT, capture_output=True, check=True).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(dest, filter="data")
    return dest


def available_mb() -> float:
    import psutil

    return psutil.virtual_memory().available / 2**20


def run_build(code_root: Path, root: Path, name: str, inputs: list[Path], *extra: str) -> dict:
    """One command-line build in a fresh process (the code of ``code_root``); wall time, the
    manifest's figures and the peak memory of the process and its children."""
    import psutil

    shutil.rmtree(root / ".cache" / "stages", ignore_errors=True)
    cmd = [PY, "-m", "pipeline", "--artifacts", str(root), "build", *map(str, inputs), "--name", name, "--quiet"]
    cmd += list(extra)
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=code_root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    watched = psutil.Process(proc.pid)
    stopped = None
    while proc.poll() is None:
        try:
            rss = watched.memory_info().rss + sum(c.memory_info().rss for c in watched.children(recursive=True))
            peak = max(peak, rss / 2**20)
        except psutil.Error:
            pass
        if psutil.virtual_memory().available < MIN_AVAILABLE_MB * 2**20 and stopped is None:
            # The machine is about to run out: stop this build rather than let the kernel kill
            # another user's process.
            stopped = f"stopped at {peak:,.0f} MB: the machine had less than {MIN_AVAILABLE_MB} MB left"
            proc.terminate()
        time.sleep(0.2)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if stopped:
        return {"error": stopped, "peak_mb": round(peak), "wall_s": round(wall, 1)}
    if proc.returncode != 0:
        return {"error": f"build failed (exit {proc.returncode}): {err[-1500:]}", "peak_mb": round(peak)}
    manifest = json.loads((root / name / "manifest.json").read_text())
    stages = {s["name"]: round(s["seconds"], 1) for s in manifest["stages"]}
    return {
        "wall_s": round(wall, 1),
        "embed_s": stages.get("embed", 0.0),
        "rest_s": round(wall - stages.get("embed", 0.0), 1),
        "stages_s": stages,
        "peak_mb": round(peak),
        "manifest_peak_mb": manifest.get("peak_rss_mb"),
        "papers": manifest["counts"]["papers"],
        "topics": manifest["counts"]["topics"],
        "computed": manifest["embedding"]["computed"],
        "runs": manifest.get("cluster_params", {}).get("runs"),
        "knn": manifest.get("knn"),
        "mode": manifest["mode"],
        "load": os.getloadavg(),
    }


def cluster_runs(root: Path, name: str, runs: list[int], seeds: int) -> dict:
    proc = subprocess.run(
        [PY, str(ROOT / "benchmarks" / "cluster_runs.py"), name, "--artifacts", str(root), "--seeds", str(seeds),
         "--runs", *map(str, runs)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads((OUT / f"cluster_runs-{name}.json").read_text())


RECALL = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, {root!r})
    from dataclasses import replace
    from pathlib import Path
    from pipeline.core.config import EmbedParams, UmapParams
    from pipeline.embed.embed import embed_texts
    from pipeline.ingest.ingest import ingest
    from pipeline.model.reduce import knn_graph, knn_recall
    papers = ingest([Path(p) for p in {inputs!r}]).papers
    vectors = embed_texts(papers["model_text"].tolist(), EmbedParams(), Path({cache!r})).vectors
    params = replace(UmapParams(), exact_knn_max=0)  # pynndescent, as above the threshold
    t = time.perf_counter(); idx, _ = knn_graph(vectors, params); seconds = time.perf_counter() - t
    print(json.dumps({{"papers": len(papers), "k": int(idx.shape[1]), "seconds": seconds,
                      "recall": knn_recall(vectors, idx, sample={sample}), "sample": {sample}}}))
    """
)
#: The real abstracts of the shared corpora (their vectors are in the shared store).
REAL_SOURCES = (
    "neurips-1987-2023.jsonl.gz",
    "iclr-2018-2022-submissions.jsonl.gz",
    "icml2024-unlabeled.jsonl.gz",
    "ijcai2020-2024-primary-area.jsonl.gz",
)


def real_recall(root: Path, sample: int = 2_000) -> dict:
    """pynndescent's recall on the 35,267 real shared abstracts with the model's own vectors (the
    benchmark corpora's synthetic papers sit closer to their neighbours than real ones)."""
    inputs = [str(DATA / name) for name in REAL_SOURCES]
    code = RECALL.format(root=str(ROOT), inputs=inputs, cache=str(root / ".cache"), sample=sample)
    proc = subprocess.run([PY, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


APP_SERVER = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, {root!r})
    import psutil
    from pathlib import Path
    from explorer.services import search
    from explorer.state import data
    from explorer.ui import caches
    proc = psutil.Process()
    before = proc.memory_info().rss
    t = time.perf_counter(); corpus = data.load_corpus(Path({art!r}), {name!r}); load_s = time.perf_counter() - t
    loaded = proc.memory_info().rss
    t = time.perf_counter(); index = search.build_bm25(corpus); bm25_s = time.perf_counter() - t
    indexed = proc.memory_info().rss
    kw, sem = [], []
    encoder = caches.encoder_for(corpus)
    search.semantic_search(corpus, search.encode_query(encoder, "warm up"), k=25)
    for q in {queries!r}:
        t = time.perf_counter(); hits = search.keyword_search(corpus, index, q, k=25); kw.append((time.perf_counter() - t, len(hits)))
        t = time.perf_counter(); hits = search.semantic_search(corpus, search.encode_query(encoder, q), k=25); sem.append((time.perf_counter() - t, len(hits)))
    print(json.dumps({{"papers": corpus.n_papers, "load_s": load_s, "load_mb": (loaded - before) / 2**20,
                      "bm25_s": bm25_s, "bm25_mb": (indexed - loaded) / 2**20, "rss_mb": indexed / 2**20,
                      "keyword": kw, "semantic": sem}}))
    """
)
QUERIES = ["diffusion models for image generation", "graph neural networks", "reinforcement learning exploration"]


def app_check(root: Path, name: str) -> dict:
    """The app on a large corpus: loading it and searching it in the server's code, then in
    Chromium the map drawn on the first visit after a server start, a keyword and a semantic search."""
    import asyncio

    proc = subprocess.run(
        [PY, "-c", APP_SERVER.format(root=str(ROOT), art=str(root), name=name, queries=QUERIES)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    res = {"server_code": json.loads(proc.stdout.strip().splitlines()[-1])}
    try:
        res["browser"] = asyncio.run(_browser_check(root, name, res["server_code"]["papers"]))
    except Exception as exc:  # the browser part is reported, not fatal
        res["browser"] = {"error": f"{type(exc).__name__}: {exc}"}
    return res


async def _browser_check(root: Path, name: str, n: int) -> dict:
    from playwright.async_api import async_playwright

    from benchmarks.bench_app import CHROMIUM_ARGS, SETTLED, rss_mb, start_server, stop, time_map, time_search, wait_for

    out: dict = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        server, base = start_server(root)
        try:
            out["server_idle_mb"] = rss_mb(server.pid)
            ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
            out["map_first_visit_s"] = await time_map(ctx, base, name, n)  # loads the corpus in the server
            out["server_after_map_mb"] = rss_mb(server.pid)
            out["map_fresh_tab_s"] = await time_map(ctx, base, name, n)
            page = await ctx.new_page()
            start = time.perf_counter()
            await page.goto(f"{base}/search?corpus={name}&q={QUERIES[0].replace(' ', '+')}")
            await wait_for(
                page,
                "() => Array.from(document.querySelectorAll('[data-testid=\"stCaptionContainer\"]'))"
                ".some(e => / results · BM25/.test(e.innerText))",
                bool,
                timeout=900,
            )
            await wait_for(page, SETTLED, bool, timeout=300)
            out["keyword_first_search_s"] = time.perf_counter() - start  # builds the BM25 index
            await page.goto(f"{base}/search?corpus={name}&mode=semantic")
            await wait_for(page, SETTLED, bool, timeout=300)
            await time_search(page, "warm up the encoder")
            out["semantic_search_s"] = [await time_search(page, q) for q in QUERIES]
            out["server_after_search_mb"] = rss_mb(server.pid)
            await ctx.close()
        finally:
            stop(server)
        await browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", choices=["18k", "100k", "1m"], default=["18k", "100k", "1m"])
    parser.add_argument("--baseline", default="main", help="git ref whose pipeline builds 18k before (empty: none)")
    parser.add_argument("--app", nargs="*", default=None, help="sizes whose app is checked (default: the largest)")
    parser.add_argument("--stability-seeds", type=int, default=3, help="seeds per number of runs (0: skip)")
    parser.add_argument("--busy-ok", action="store_true", help="run even when memory looks short")
    parser.add_argument("--merge", action="store_true", help="keep the other sizes' results of the last run")
    parser.add_argument("--no-recall", action="store_true", help="skip pynndescent's recall on the real abstracts")
    args = parser.parse_args()
    import psutil

    OUT.mkdir(parents=True, exist_ok=True)
    result_path = OUT / "scale.json"
    res: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB, "
        f"Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": "python benchmarks/bench_scale.py " + " ".join(sys.argv[1:]),
        "builds": {},
    }
    if args.merge and result_path.exists():
        last = json.loads(result_path.read_text())
        for part in ("builds", "runs", "app", "real_recall"):
            if part in last:
                res[part] = {**last[part], **res.get(part, {})}
        res["command"] = "python benchmarks/bench_scale.py (in parts, --merge)"
    table = sizes()
    for size in args.sizes:
        spec = table[size]
        if not spec["inputs"] or not all(p.exists() for p in spec["inputs"]):
            print(
                f"{size}: inputs missing ({spec['inputs'][:1]}); make them with benchmarks/make_corpora.py", flush=True
            )
            continue
        if spec["root"].name == "artifacts-real":
            seed_real_store(spec["root"])
        free = available_mb()
        if free < NEEDS_MB[size] and not args.busy_ok:
            print(f"{size}: only {free:,.0f} MB available, {NEEDS_MB[size]:,} needed; skipped (--busy-ok runs it)")
            continue
        if size == "18k" and args.baseline:
            print(f"{size}: baseline ({args.baseline}) ...", flush=True)
            tree = baseline_tree(args.baseline)
            try:
                res["builds"]["18k-before"] = run_build(
                    tree, spec["root"], spec["name"] + "-before", spec["inputs"], "--force"
                )
            finally:
                shutil.rmtree(tree, ignore_errors=True)
        print(f"{size}: build ...", flush=True)
        res["builds"][size] = run_build(ROOT, spec["root"], spec["name"], spec["inputs"], "--force")
        print(json.dumps(res["builds"][size]), flush=True)
        result_path.write_text(json.dumps(res, indent=2))
        if "error" in res["builds"][size]:
            continue
        if args.stability_seeds and size in ("18k", "100k"):
            runs = [20, 9, 3] if size == "18k" else [9, 3]
            print(f"{size}: seed stability for {runs} runs ...", flush=True)
            res.setdefault("runs", {})[size] = cluster_runs(spec["root"], spec["name"], runs, args.stability_seeds)
        result_path.write_text(json.dumps(res, indent=2))
    if not args.no_recall:
        print("recall of the approximate kNN graph on the real abstracts ...", flush=True)
        seed_real_store(BENCH / "artifacts-real")
        res["real_recall"] = real_recall(BENCH / "artifacts-real")
        result_path.write_text(json.dumps(res, indent=2))
    built = [s for s in args.sizes if s in res["builds"] and "error" not in res["builds"][s]]
    for size in args.app if args.app is not None else built[-1:]:
        if size in res["builds"]:
            print(f"{size}: app ...", flush=True)
            res.setdefault("app", {})[size] = app_check(table[size]["root"], table[size]["name"])
            result_path.write_text(json.dumps(res, indent=2))
    result_path.write_text(json.dumps(res, indent=2))
    write_block("bench-scale", "Scale", markdown(res))
    print(json.dumps(res, indent=2))


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def markdown(res: dict) -> str:
    b = res["builds"]
    load = [v["load"][0] for v in b.values() if "load" in v]
    lines = [
        f"Measured {res['date']} on {res['machine']} with `{res['command'].strip()}` (load average at the builds' ends: "
        + ", ".join(f"{x:.1f}" for x in load)
        + "; **on a shared machine: re-measure on a quiet one**).",
        "",
        "Each build: a fresh process, embeddings cached, stage cache cleared (kNN graph, UMAP and stability computed), "
        "`--force`. *Rest* is everything except embedding (wall time minus the embedding stage, which only looks "
        "vectors up here); peak memory is sampled from the build process and its children.",
        "",
        "| build | papers | rest s | peak MB | topics | Leiden runs | kNN graph | stages (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    labels = {
        "18k-before": "NeurIPS 1987-2023, before (baseline code)",
        "18k": "NeurIPS 1987-2023",
        "100k": "100k (35,267 real + 64,733 recombined, real vectors)",
        "1m": "1M (prepared vectors)",
    }
    for key, label in labels.items():
        if key not in b:
            continue
        r = b[key]
        if "error" in r:
            lines.append(f"| {label} | - | - | {r.get('peak_mb', 0):,} | - | - | - | {r['error'][:300]} |")
            continue
        knn = r.get("knn") or {}
        graph = (
            "exact"
            if knn.get("method") == "exact"
            else (f"pynndescent, recall@{knn.get('k')} {knn['recall']:.3f}" if knn.get("recall") is not None else "-")
        )
        stages = ", ".join(f"{k} {v}" for k, v in r["stages_s"].items())
        lines.append(
            f"| {label} | {r['papers']:,} | {r['rest_s']} | {r['peak_mb']:,} | {r['topics']} | {r.get('runs') or '-'} | "
            f"{graph} | {stages} |"
        )
    lines += ["", "| target | measured | verdict |", "|---|---|---|"]
    b = {k: v for k, v in b.items() if "error" not in v}
    if "18k" in b and "18k-before" in b:
        before, after = b["18k-before"], b["18k"]
        lines.append(
            f"| 18,661 NeurIPS: today's figures or faster (same run) | rest {after['rest_s']} s vs {before['rest_s']} s "
            f"before ({before['rest_s'] / max(after['rest_s'], 0.1):.2f}x); peak {after['peak_mb']:,} vs "
            f"{before['peak_mb']:,} MB | {_verdict(after['rest_s'] <= before['rest_s'] * 1.05)} |"
        )
    for size, (secs, mb) in TARGETS.items():
        if size in b:
            r = b[size]
            lines.append(
                f"| {size}: everything except embedding <= {secs // 60} min | {r['rest_s']} s | {_verdict(r['rest_s'] <= secs)} |"
            )
            lines.append(
                f"| {size}: peak memory <= {mb // 1024} GB | {r['peak_mb']:,} MB | {_verdict(r['peak_mb'] <= mb)} |"
            )
    for size, a in res.get("app", {}).items():
        sc, br = a.get("server_code", {}), a.get("browser", {})
        if "error" in a:
            lines.append(f"| {size}: the app opens and searches it | failed: {a['error'][-200:]} | **missed** |")
            continue
        kw = max(t for t, _ in sc["keyword"])
        sem = max(t for t, _ in sc["semantic"])
        ok = all(n > 0 for _, n in sc["keyword"] + sc["semantic"]) and "error" not in br
        lines.append(
            f"| {size}: the app opens it and every search returns papers (no time in this target) | corpus loaded in "
            f"{sc['load_s']:.1f} s (+{sc['load_mb']:,.0f} MB); server memory after the searches "
            + (f"{br['server_after_search_mb']:,.0f} MB" if "error" not in br else "unknown")
            + f" | {_verdict(ok)} |"
        )
        if "error" in br:
            lines.append(f"| {size}: the app in Chromium | browser check failed: {br['error'][:200]} | **missed** |")
            continue
        first, sem_browser = br["map_first_visit_s"], max(br["semantic_search_s"])
        lines += [
            f"| {size}: map drawn on the first visit after a server start <= {APP_TARGETS['map_first_visit_s']:.0f} s "
            f"| {first:.1f} s (loads the corpus; a fresh tab afterwards {br['map_fresh_tab_s']:.1f} s) | "
            f"{_verdict(first <= APP_TARGETS['map_first_visit_s'])} |",
            f"| {size}: semantic search in the browser <= {APP_TARGETS['semantic_search_s']} s | {sem_browser:.2f} s "
            f"(server code at most {sem * 1000:.0f} ms) | {_verdict(sem_browser <= APP_TARGETS['semantic_search_s'])} |",
            f"| {size}: keyword search (no target set) | first search in the browser {br['keyword_first_search_s']:.1f} s "
            f"(it builds the BM25 index: {sc['bm25_s']:.1f} s, +{sc['bm25_mb']:,.0f} MB); later queries at most "
            f"{kw * 1000:,.0f} ms in the server's code | not judged: no target |",
        ]
    rr = res.get("real_recall")
    if rr and "error" not in rr:
        lines += [
            "",
            f"The approximate kNN graph on real abstracts: pynndescent (the pipeline's settings, as above "
            f"`umap.exact_knn_max`) on the {rr['papers']:,} real shared abstracts with the model's own vectors: "
            f"recall@{rr['k']} {rr['recall']:.3f} against exact neighbours on {rr['sample']:,} random papers "
            f"({rr['seconds']:.0f} s). The builds above record the same measure on 500 papers in their manifests "
            "(`knn.recall`); the 1M corpus's prepared vectors sit closer to their neighbours than real ones, so its "
            "figure is not a measure for real data.",
        ]
    if res.get("runs"):
        lines += [
            "",
            "What fewer Leiden runs cost (`benchmarks/cluster_runs.py`: the build's graph clustering once per seed; "
            "stability = mean pairwise ARI over the seeds):",
            "",
            "| corpus | papers | runs | seed stability (ARI) | seconds per clustering | topics |",
            "|---|---|---|---|---|---|",
        ]
        for size, r in res["runs"].items():
            if "error" in r:
                lines.append(f"| {size} | - | - | failed: {r['error'][-120:]} | | |")
                continue
            for runs, v in r["by_runs"].items():
                default = " (default)" if int(runs) == r["default_runs"] else ""
                lines.append(
                    f"| {r['corpus']} | {r['papers']:,} | {runs}{default} | {v['stability_ari']:.3f} | {v['seconds']} | {v['topics']} |"
                )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
