"""Dashboard benchmark in real Chromium: map drawn, page switch, semantic search, memory, and a
load test with concurrent sessions, on a built corpus (the 18,682-paper NeurIPS one by default).

Not part of the test run. It starts ``streamlit run app.py`` on a free port of 127.0.0.1 over the
given artifacts, drives Debian's Chromium with Playwright, and writes ``benchmarks/output/app.json``
and the ``bench-app`` section of BENCHMARKS.md.

    .venv/bin/python benchmarks/bench_app.py --artifacts benchmarks/output/art-full --corpus neurips
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "output"
sys.path.insert(0, str(ROOT))

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

#: Points of the WebGL map traces once plotly has drawn them (0 until then).
POINTS_DRAWN = """() => {
    const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
    if (!gd || !gd._fullData || !gd.querySelector('canvas')) return 0;
    let n = 0;
    for (const t of gd._fullData) if (t.type === 'scattergl' && t.customdata) n += t.x.length;
    return n;
}"""

SETTLED = """() => {
    const main = document.querySelector('[data-testid="stMain"] [data-testid="stElementContainer"]');
    const busy = document.querySelector('[data-testid="stSkeleton"], [data-testid="stStatusWidget"]');
    return !!main && !busy;
}"""

QUERIES = [
    "privacy guarantees for federated learning",
    "graph neural networks for molecules",
    "exploration in reinforcement learning",
    "spiking neurons and synaptic plasticity",
    "diffusion models for image generation",
    "robustness to adversarial examples",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(artifacts: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    OUT.mkdir(parents=True, exist_ok=True)
    log = (OUT / "bench-app-server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--", "--artifacts", str(artifacts)],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc, base
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("streamlit did not start; see benchmarks/output/bench-app-server.log")


def rss_mb(pid: int) -> float:
    import psutil

    proc = psutil.Process(pid)
    return (proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))) / 2**20


async def wait_for(page, js: str, predicate, timeout: float = 120.0, poll: float = 0.02):
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        value = await page.evaluate(js)
        if predicate(value):
            return value
        await asyncio.sleep(poll)
    raise TimeoutError(f"timed out waiting for {js[:60]}")


async def time_map(context, base: str, corpus: str, n: int) -> float:
    page = await context.new_page()
    start = time.perf_counter()
    await page.goto(f"{base}/?corpus={corpus}")
    await wait_for(page, POINTS_DRAWN, lambda v: v == n)
    elapsed = time.perf_counter() - start
    await page.close()
    return elapsed


async def time_map_navigation(page, base: str, corpus: str, n: int, rounds: int = 5) -> list[float]:
    """From the Topics page, click "Topic map" in the sidebar; time until all points are drawn."""
    times = []
    for _ in range(rounds):
        await page.goto(f"{base}/topics?corpus={corpus}")
        await wait_for(page, SETTLED, bool)
        link = page.locator('[data-testid="stSidebar"] a', has_text="Topic map").first
        start = time.perf_counter()
        await link.click()
        await wait_for(page, POINTS_DRAWN, lambda v: v == n)
        times.append(time.perf_counter() - start)
    return times


async def time_search(page, base: str, corpus: str, query: str) -> float:
    """Type a semantic query into the search box; time until its results are on the page."""
    box = page.get_by_label("Search", exact=True)
    await box.fill(query)
    start = time.perf_counter()
    await box.press("Enter")
    await wait_for(
        page,
        "() => Array.from(document.querySelectorAll('[data-testid=\"stCaptionContainer\"]'))"
        ".some(e => / results · cosine/.test(e.innerText)) && !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        f" && decodeURIComponent(location.search.replace(/\\+/g, ' ')).includes({json.dumps(query)})",
        bool,
    )
    return time.perf_counter() - start


async def time_page_switches(page, base: str, corpus: str, rounds: int) -> list[float]:
    await page.goto(f"{base}/?corpus={corpus}")
    await wait_for(page, SETTLED, bool)
    times = []
    for _ in range(rounds):
        for title, path in [
            ("Topics", "/topics"),
            ("Keyword trends", "/trends"),
            ("Search", "/search"),
            ("Topic map", "/"),
        ]:
            link = page.locator('[data-testid="stSidebar"] a', has_text=title).first
            start = time.perf_counter()
            await link.click()
            await wait_for(
                page,
                f"() => location.pathname.endsWith({json.dumps(path)}) && "
                f"Array.from(document.querySelectorAll('h1')).some(h => h.innerText.trim() === {json.dumps(title)})",
                bool,
            )
            await wait_for(page, SETTLED, bool)
            times.append(time.perf_counter() - start)
    return times


async def session(browser, base: str, corpus: str, n: int, query: str) -> dict:
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        map_s = await time_map(context, base, corpus, n)
        page = await context.new_page()
        await page.goto(f"{base}/search?corpus={corpus}&mode=semantic")
        await wait_for(page, SETTLED, bool)
        search_s = await time_search(page, base, corpus, query)
        return {"map_s": map_s, "search_s": search_s, "ok": True}
    except Exception as exc:  # a failed session is a result, not a crash
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        await context.close()


def server_side_search(artifacts: Path, corpus: str) -> dict:
    """Semantic search latency inside the server's code path, without the browser."""
    from explorer import data, search

    c = data.load_corpus(artifacts, corpus)
    encoder = search.encoder_for(c)
    search.semantic_search(c, search.encode_query(encoder, "warm up"), k=25)
    times = []
    for q in QUERIES * 3:
        start = time.perf_counter()
        search.semantic_search(c, search.encode_query(encoder, q), k=25)
        times.append(time.perf_counter() - start)
    return {"median_ms": 1000 * statistics.median(times), "max_ms": 1000 * max(times)}


async def run(args) -> dict:
    from playwright.async_api import async_playwright

    from pipeline import artifacts as art

    manifest = art.read_manifest(art.corpus_path(args.artifacts, args.corpus))
    n = manifest["counts"]["papers"]
    proc, base = start_server(args.artifacts)
    res: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": f"python benchmarks/bench_app.py --artifacts {args.artifacts} --corpus {args.corpus}",
        "papers": n,
        "topics": manifest["counts"]["topics"],
    }
    try:
        res["server_idle_mb"] = rss_mb(proc.pid)
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
            res["map_first_s"] = await time_map(ctx, base, args.corpus, n)  # includes loading the corpus
            res["map_warm_s"] = [await time_map(ctx, base, args.corpus, n) for _ in range(5)]
            page = await ctx.new_page()
            res["map_nav_s"] = await time_map_navigation(page, base, args.corpus, n)
            res["page_switch_s"] = await time_page_switches(page, base, args.corpus, rounds=3)
            await page.goto(f"{base}/search?corpus={args.corpus}&mode=semantic")
            await wait_for(page, SETTLED, bool)
            await time_search(page, base, args.corpus, "warm up the encoder")
            res["search_browser_s"] = [await time_search(page, base, args.corpus, q) for q in QUERIES]
            await ctx.close()
            res["server_after_pages_mb"] = rss_mb(proc.pid)
            results = await asyncio.gather(
                *[
                    session(browser, base, args.corpus, n, QUERIES[i % len(QUERIES)] + f" {i}")
                    for i in range(args.sessions)
                ]
            )
            res["load"] = results
            res["server_after_load_mb"] = rss_mb(proc.pid)
            await browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    res["search_server"] = server_side_search(args.artifacts, args.corpus)
    return res


def write_markdown(res: dict, sessions: int) -> None:
    med = statistics.median
    ok = [r for r in res["load"] if r["ok"]]
    lines = [
        f"Measured {res['date']} on {res['machine']} with `{res['command']}` "
        f"({res['papers']:,} papers, {res['topics']} topics; headless Chromium with software WebGL on the same 2 cores).",
        "",
        "| measure | median | worst | target | verdict |",
        "|---|---|---|---|---|",
    ]

    def row(name, values, target, unit="s"):
        worst = max(values)
        verdict = "met" if med(values) <= target else "**missed**"
        lines.append(f"| {name} | {med(values):.2f} {unit} | {worst:.2f} {unit} | {target} {unit} | {verdict} |")

    lines.append(f"| map drawn, first visit (loads the corpus) | {res['map_first_s']:.2f} s | | | |")
    row("map drawn after clicking it in the app (click to all points on the canvas)", res["map_nav_s"], 2)
    row("map drawn from a fresh page load (new tab: Streamlit's frontend boots, then the map)", res["map_warm_s"], 2)
    row("page switch (click to the new page settled)", res["page_switch_s"], 1)
    row("semantic search in the browser (Enter to results shown)", res["search_browser_s"], 0.3)
    lines.append(
        f"| semantic search, server code path (encode + cosine, {res['papers']:,} papers) | "
        f"{res['search_server']['median_ms']:.1f} ms | {res['search_server']['max_ms']:.1f} ms | 300 ms | "
        f"{'met' if res['search_server']['median_ms'] <= 300 else '**missed**'} |"
    )
    mem = res["server_after_load_mb"]
    lines.append(
        f"| app memory (idle / after all pages / after {sessions} sessions) | {res['server_idle_mb']:.0f} / "
        f"{res['server_after_pages_mb']:.0f} / {mem:.0f} MB | | 2048 MB | {'met' if mem < 2048 else '**missed**'} |"
    )
    lines += [
        "",
        f"Load test: {sessions} browser sessions at once, each opening the map and running a semantic search: "
        f"{len(ok)}/{sessions} succeeded"
        + (
            f"; map drawn in median {med([r['map_s'] for r in ok]):.1f} s (worst {max(r['map_s'] for r in ok):.1f} s), "
            f"search in median {med([r['search_s'] for r in ok]):.2f} s (worst {max(r['search_s'] for r in ok):.2f} s); "
            f"server memory {res['server_after_pages_mb']:.0f} MB before, {mem:.0f} MB after (one shared copy of the "
            "corpus: cached resources, not one per session)."
            if ok
            else "."
        ),
    ]
    block = "\n".join(lines)
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    start, end = "<!-- bench-app:start -->", "<!-- bench-app:end -->"
    if start in text:
        text = text.split(start)[0] + start + "\n" + block + "\n" + end + text.split(end, 1)[1]
    else:
        text += f"\n## Dashboard\n\n{start}\n{block}\n{end}\n"
    path.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifacts", type=Path, default=OUT / "art-full")
    parser.add_argument("--corpus", default="neurips")
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    res = asyncio.run(run(args))
    (OUT / "app.json").write_text(json.dumps(res, indent=2))
    write_markdown(res, args.sessions)
    print(json.dumps({k: v for k, v in res.items() if k != "load"}, indent=2))
    print("load:", [r if not r["ok"] else {k: round(v, 2) for k, v in r.items() if k != "ok"} for r in res["load"]])


if __name__ == "__main__":
    main()
