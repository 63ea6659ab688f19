"""Dashboard and map benchmark in real Chromium (headless, software WebGL), one command.

    .venv/bin/python benchmarks/bench_app.py --artifacts benchmarks/output/art-full --corpus neurips

Three parts, each written into the ``bench-app`` section of BENCHMARKS.md (figures are medians):

1. **The app** on each built corpus given with ``--corpus`` (any size: pass the large benchmark
   corpora when they exist): the map drawn after a click in the app, in a fresh tab, and on the
   first visit after a server start (the server is restarted for each of those runs); the bytes
   the browser receives for the map; a hover's round trip for a title; pan frame time; page
   switches, semantic search and a load test of concurrent sessions.
2. **Drawing only**, on synthetic points (``--draw``, default 100,000 and 1,000,000): the map
   component alone in a blank page, fed a generated points container. These numbers measure the
   renderer, not a corpus; the points, topics and labels are generated and say so.
3. **The offline export** of the first corpus, and of a synthetic enlargement of it to
   ``--export-scale`` papers (its abstracts repeated with new ids and jittered positions, named
   ``synthetic``): file size, time to open from disk with the network off, every paper drawn, and
   a paper found by a word only it uses.

Timings on a machine shared with other work are noisy; the lead re-runs this on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "output"
sys.path.insert(0, str(ROOT))

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

#: The map component on the page (frontend/src/map.ts): its own count of points drawn.
MAP = "(window.__atlasMaps || []).filter(m => m.el.isConnected)[0]"
DRAWN = f"() => {{ const m = {MAP}; return m ? Number(m.el.dataset.drawn || 0) : 0; }}"

SETTLED = """() => {
    const main = document.querySelector('[data-testid="stMain"] [data-testid="stElementContainer"]');
    const busy = document.querySelector('[data-testid="stSkeleton"], [data-testid="stStatusWidget"]');
    const charts = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'));
    return !!main && !busy && charts.every(c => c.querySelector('.main-svg'));
}"""
#: Resolves once the browser's main thread has been idle (the page finished drawing its charts).
IDLE = "() => new Promise(resolve => requestIdleCallback(() => resolve(true), {timeout: 5000}))"

QUERIES = [
    "privacy guarantees for federated learning",
    "graph neural networks for molecules",
    "exploration in reinforcement learning",
    "spiking neurons and synaptic plasticity",
    "diffusion models for image generation",
    "robustness to adversarial examples",
]
med = statistics.median


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(artifacts: Path, launcher: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """The app on a free port, once it answers; ``launcher`` runs streamlit (default ``python -m
    streamlit``; ``python tests/serve_app.py`` for builds made with the tests' hashing encoder)."""
    port = _free_port()
    OUT.mkdir(parents=True, exist_ok=True)
    log = (OUT / "bench-app-server.log").open("a")
    proc = subprocess.Popen(
        [*(launcher or [sys.executable, "-m", "streamlit"]), "run", str(ROOT / "app.py"), "--server.headless", "true",
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
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("streamlit did not start; see benchmarks/output/bench-app-server.log")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def rss_mb(pid: int) -> float:
    import psutil

    proc = psutil.Process(pid)
    return (proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))) / 2**20


async def wait_for(page, js: str, predicate, timeout: float = 180.0, poll: float = 0.02):
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        value = await page.evaluate(js)
        if predicate(value):
            return value
        await asyncio.sleep(poll)
    raise TimeoutError(f"timed out waiting for {js[:60]}")


# ------------------------------------------------------------------------------------------
# 1. The app
# ------------------------------------------------------------------------------------------


async def time_map(context, base: str, corpus: str, n: int, frames: list | None = None) -> float:
    """A new tab on the map page: seconds from navigation to all ``n`` points drawn."""
    page = await context.new_page()
    if frames is not None:
        page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(len(payload))))
    start = time.perf_counter()
    await page.goto(f"{base}/?corpus={corpus}")
    await wait_for(page, DRAWN, lambda v: v == n)
    elapsed = time.perf_counter() - start
    await page.close()
    return elapsed


async def time_plain_page(context, base: str, corpus: str) -> float:
    """A new tab on the Reading list page (no chart, no map): Streamlit's own boot, the baseline."""
    page = await context.new_page()
    start = time.perf_counter()
    await page.goto(f"{base}/list?corpus={corpus}")
    await wait_for(
        page, "() => Array.from(document.querySelectorAll('h1')).some(h => h.innerText.includes('Reading list'))", bool
    )
    await wait_for(page, SETTLED, bool)
    elapsed = time.perf_counter() - start
    await page.close()
    return elapsed


async def time_plain_navigation(page, base: str, corpus: str, rounds: int = 5) -> list[float]:
    """From the Topics page, click "Reading list": a page switch without a map, the baseline."""
    times = []
    for _ in range(rounds):
        await page.goto(f"{base}/topics?corpus={corpus}")
        await wait_for(page, SETTLED, bool)
        await page.evaluate(IDLE)
        await asyncio.sleep(0.5)
        link = page.locator('[data-testid="stSidebar"] a', has_text="Reading list").first
        start = time.perf_counter()
        await link.click()
        await wait_for(
            page,
            "() => Array.from(document.querySelectorAll('h1')).some(h => h.innerText.includes('Reading list'))",
            bool,
        )
        await wait_for(page, SETTLED, bool)
        times.append(time.perf_counter() - start)
    return times


async def time_map_navigation(page, base: str, corpus: str, n: int, rounds: int = 5) -> list[float]:
    """From the Topics page, click "Topic map" in the sidebar; time until all points are drawn."""
    times = []
    for _ in range(rounds):
        await page.goto(f"{base}/topics?corpus={corpus}")
        await wait_for(page, SETTLED, bool)
        await page.evaluate(IDLE)  # a reader clicks on a page already drawn
        await asyncio.sleep(0.5)
        link = page.locator('[data-testid="stSidebar"] a', has_text="Topic map").first
        start = time.perf_counter()
        await link.click()
        await wait_for(page, DRAWN, lambda v: v == n)
        times.append(time.perf_counter() - start)
    return times


async def time_hover(page, rounds: int = 12) -> list[float]:
    """Hover papers one after another: seconds until the tooltip shows the title fetched from the server."""
    await page.evaluate(f"() => {{ const m = {MAP}; m.zoomAt(3, m.w / 2, m.h / 2); }}")
    await asyncio.sleep(1.0)
    points = await page.evaluate(f"() => {MAP}.screenPoints(4000)")
    step = max(1, len(points) // rounds)
    times = []
    for p in points[::step][:rounds]:
        start = time.perf_counter()
        await page.mouse.move(p["x"], p["y"])
        try:
            await wait_for(
                page,
                f"() => {{ const t = {MAP}.el.querySelector('.tip .t'); return !!t && t.textContent !== '…' && !t.parentNode.hidden; }}",
                bool,
                timeout=10,
                poll=0.005,
            )
            times.append(time.perf_counter() - start)
        except TimeoutError:
            pass
        await page.mouse.move(2, 2)
        await asyncio.sleep(0.15)
    return times


async def time_search(page, query: str) -> float:
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
        search_s = await time_search(page, query)
        return {"map_s": map_s, "search_s": search_s, "ok": True}
    except Exception as exc:  # a failed session is a result, not a crash
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        await context.close()


def map_payload(artifacts: Path, corpus: str) -> dict:
    """The map's own bytes for this corpus, as the app builds them (the points container and the JSON state)."""
    from explorer.services import mapview
    from explorer.state import data
    from pipeline.formats.blobs import unpack

    c = data.load_corpus(artifacts, corpus)
    points = mapview.corpus_points(c)
    _, arrays = unpack(points.data)
    state = json.dumps(mapview.map_state(points))
    per_paper = sum(a.nbytes for a in arrays.values())
    return {
        "points": len(points),
        "arrays": per_paper,
        "header": len(points) - per_paper,
        "state": len(state),
        "n": c.n_papers,
    }


def server_side_search(artifacts: Path, corpus: str) -> dict:
    """Semantic search latency inside the server's code path, without the browser."""
    from explorer.services import search
    from explorer.state import data
    from explorer.ui import caches

    c = data.load_corpus(artifacts, corpus)
    encoder = caches.encoder_for(c)
    search.semantic_search(c, search.encode_query(encoder, "warm up"), k=25)
    times = []
    for q in QUERIES * 3:
        start = time.perf_counter()
        search.semantic_search(c, search.encode_query(encoder, q), k=25)
        times.append(time.perf_counter() - start)
    return {"median_ms": 1000 * med(times), "max_ms": 1000 * max(times)}


async def bench_app(args, corpus: str) -> dict:
    from playwright.async_api import async_playwright

    from pipeline.core import artifacts as art

    manifest = art.read_manifest(art.corpus_path(args.artifacts, corpus))
    n = manifest.counts.papers
    res: dict = {
        "corpus": corpus,
        "papers": n,
        "topics": manifest.counts.topics,
        "payload": map_payload(args.artifacts, corpus),
    }
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        # first visit after a server start: a fresh server each time
        res["map_cold_s"] = []
        for _ in range(args.restarts):
            proc, base = start_server(args.artifacts)
            try:
                ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
                res["map_cold_s"].append(await time_map(ctx, base, corpus, n))
                await ctx.close()
            finally:
                stop(proc)
        proc, base = start_server(args.artifacts)
        try:
            res["server_idle_mb"] = rss_mb(proc.pid)
            ctx = await browser.new_context(viewport={"width": 1280, "height": 800})
            await time_map(ctx, base, corpus, n)  # loads the corpus in this server
            frames: list[int] = []
            res["map_fresh_tab_s"] = [
                await time_map(ctx, base, corpus, n, frames if i == 0 else None) for i in range(5)
            ]
            res["ws_bytes_fresh_tab"] = sum(frames)
            res["plain_fresh_tab_s"] = [await time_plain_page(ctx, base, corpus) for _ in range(5)]
            page = await ctx.new_page()
            res["map_nav_s"] = await time_map_navigation(page, base, corpus, n)
            res["render_ms"] = await page.evaluate(f"() => {MAP}.debug().fullMs")
            res["pan_frame_ms"] = await page.evaluate(f"() => {MAP}.panFrames(30)")
            res["hover_s"] = await time_hover(page)
            res["plain_nav_s"] = await time_plain_navigation(page, base, corpus)
            res["page_switch_s"] = await time_page_switches(page, base, corpus, rounds=3)
            await page.goto(f"{base}/search?corpus={corpus}&mode=semantic")
            await wait_for(page, SETTLED, bool)
            await time_search(page, "warm up the encoder")
            res["search_browser_s"] = [await time_search(page, q) for q in QUERIES]
            await ctx.close()
            res["server_after_pages_mb"] = rss_mb(proc.pid)
            if args.sessions:
                res["load"] = await asyncio.gather(
                    *[
                        session(browser, base, corpus, n, QUERIES[i % len(QUERIES)] + f" {i}")
                        for i in range(args.sessions)
                    ]
                )
            res["server_after_load_mb"] = rss_mb(proc.pid)
        finally:
            stop(proc)
        await browser.close()
    res["search_server"] = server_side_search(args.artifacts, corpus)
    return res


# ------------------------------------------------------------------------------------------
# 2. Drawing only, synthetic points
# ------------------------------------------------------------------------------------------


def synthetic_points(n: int, topics: int, seed: int = 0):
    """A generated points container: ``topics`` Gaussian clusters of uneven size on a plane, 8%
    of points scattered as "reassigned". Labels read "synthetic topic K". Not real data."""
    import numpy as np
    import pandas as pd

    from pipeline.formats.blobs import points_blob

    rng = np.random.default_rng(seed)
    weights = rng.pareto(1.2, topics) + 0.2
    topic = rng.choice(topics, size=n, p=weights / weights.sum())
    centres = rng.uniform(-12, 12, size=(topics, 2))
    spread = rng.uniform(0.4, 1.6, size=topics)
    xy = centres[topic] + rng.normal(size=(n, 2)) * spread[topic, None]
    papers = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "topic": topic, "was_outlier": rng.random(n) < 0.08})
    table = pd.DataFrame({"topic": np.arange(topics), "label": [f"synthetic topic {k}" for k in range(topics)]})
    return points_blob(f"synthetic-{n}", papers, table, synthetic=True)


HARNESS = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>map drawing benchmark (synthetic)</title></head>
<body style="margin:0"><div id="map" style="width:1200px;height:720px"></div>
<script type="application/octet-stream" id="pts">{POINTS}</script>
<script type="module">{BUNDLE}</script>
<script type="module">
const A = globalThis.AtlasMap;
const t0 = performance.now();
const map = A.mount(document.getElementById('map'), {click() {}, select() {}, view() {}, topic() {}, need() {}});
const blob = A.putBlob(A.fromBase64(document.getElementById('pts').textContent));
const t1 = performance.now();
map.setData(A.datasetOf(blob));
map.setOptions({});
const drawn = () => Number(map.el.dataset.drawn || 0) > 0;
while (!drawn()) await new Promise((r) => setTimeout(r, 5));
window.result = {decodeMs: t1 - t0, firstDrawMs: performance.now() - t0};
window.map = map;
</script></body></html>"""


async def bench_draw(sizes: list[int]) -> list[dict]:
    from playwright.async_api import async_playwright

    bundle = (ROOT / "frontend" / "dist" / "atlas-map.js").read_text(encoding="utf-8")
    out = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for n in sizes:
            import base64

            blob = synthetic_points(n, topics=max(20, min(600, n // 1500)))
            html = HARNESS.replace("{POINTS}", base64.b64encode(blob.data).decode()).replace("{BUNDLE}", bundle)
            with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, encoding="utf-8") as f:
                f.write(html)
            runs = []
            for _ in range(3):
                page = await browser.new_page(viewport={"width": 1240, "height": 760})
                await page.goto(Path(f.name).as_uri())
                result = await wait_for(page, "() => window.result || null", bool)
                frames = await page.evaluate("() => window.map.panFrames(30)")
                picks = await page.evaluate(
                    "() => { const m = window.map, t = []; for (let k = 0; k < 40; k++) { const s = performance.now();"
                    " m.pick(200 + 20 * k, 360); t.push(performance.now() - s); } return t; }"
                )
                await page.evaluate("() => { const m = window.map; m.zoomAt(2, 600, 360); }")
                await wait_for(page, "() => !window.map.debug().busy", bool)
                await asyncio.sleep(0.3)
                await wait_for(page, "() => !window.map.debug().busy", bool)
                rerender = await page.evaluate("() => window.map.debug().fullMs")
                runs.append({**result, "pan_ms": med(frames[2:]), "pick_ms": med(picks), "rerender_ms": rerender})
                await page.close()
            os.unlink(f.name)
            out.append(
                {
                    "n": n,
                    "bytes": len(blob),
                    "first_draw_s": med(r["firstDrawMs"] for r in runs) / 1000,
                    "pan_frame_ms": med(r["pan_ms"] for r in runs),
                    "pick_ms": med(r["pick_ms"] for r in runs),
                    "rerender_s": med(r["rerender_ms"] for r in runs) / 1000,
                }
            )
            print("draw", out[-1], flush=True)
        await browser.close()
    return out


# ------------------------------------------------------------------------------------------
# 3. The offline export
# ------------------------------------------------------------------------------------------


def enlarge(papers, topics, n: int):
    """``papers`` repeated to ``n`` rows with new ids and jittered positions (synthetic: real
    abstracts, copied). Keeps each copy's topic, so the topics keep their share."""
    import numpy as np
    import pandas as pd

    reps = -(-n // len(papers))
    rng = np.random.default_rng(0)
    big = pd.concat(
        [papers.assign(doc_id=papers["doc_id"].astype(str) + f"~copy{r}") for r in range(reps)], ignore_index=True
    )
    big = big.iloc[:n].reset_index(drop=True)
    span = float(np.nanstd(papers["x"])) * 0.03
    big["x"] = big["x"] + rng.normal(scale=span, size=len(big))
    big["y"] = big["y"] + rng.normal(scale=span, size=len(big))
    return big, topics


def unique_word(papers, texts) -> tuple[str, str]:
    """A word only one paper uses (and no longer word starts with), and that paper's id."""
    words = [set(re.findall(r"[^\W_]{8,}", t.lower())) for t in texts]
    df = Counter(w for ws in words for w in ws)
    for doc_id, ws in zip(papers["doc_id"], words, strict=True):
        for w in sorted(ws):
            if df[w] == 1 and not w.isdigit():
                return w, str(doc_id)
    raise RuntimeError("no unique word")


async def open_export(path: Path, n: int, word: str, doc_id: str) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        ctx = await browser.new_context(viewport={"width": 1440, "height": 1000})
        await ctx.set_offline(True)
        requests: list[str] = []

        async def route(r) -> None:
            if r.request.url.startswith("file:"):
                await r.continue_()
            else:
                requests.append(r.request.url)
                await r.abort()

        await ctx.route("**/*", route)
        page = await ctx.new_page()
        start = time.perf_counter()
        await page.goto(path.as_uri())
        await wait_for(page, "() => !!(window.__atlas && window.__atlas.ready)", bool, timeout=600)
        open_s = time.perf_counter() - start
        drawn = await page.evaluate("() => window.__atlas.map.debug().drawn")
        start = time.perf_counter()
        ids = await page.evaluate(f"() => window.__atlas.search({json.dumps(word)})")
        search_s = time.perf_counter() - start
        await browser.close()
    return {"open_s": open_s, "drawn": drawn, "all_drawn": drawn == n, "found": bool(ids) and ids[0] == doc_id,
            "first_search_s": search_s, "network_requests": len(requests)}  # fmt: skip


async def bench_export(args, corpus: str) -> list[dict]:
    from pipeline.core import artifacts as art
    from pipeline.export.export import export_data, render_page

    folder = art.corpus_path(args.artifacts, corpus)
    manifest = art.read_manifest(folder)
    papers = art.read_table(folder, "papers.parquet")
    topics = art.read_table(folder, "topics.parquet")
    out = []
    texts = [f"{t} {a}" for t, a in zip(papers["title"].fillna(""), papers["abstract"].fillna(""), strict=True)]
    word, doc_id = unique_word(papers, texts)  # a word only one real paper uses
    cases = [(corpus, papers, topics, manifest)]
    if args.export_scale and args.export_scale > len(papers):
        big, big_topics = enlarge(papers, topics, args.export_scale)
        cases.append((f"synthetic-{args.export_scale}", big, big_topics, dataclasses.replace(manifest, synthetic=True)))
    for name, pp, tt, mm in cases:
        start = time.perf_counter()
        data = export_data(name, mm, pp, tt)
        page = render_page(data)
        build_s = time.perf_counter() - start
        path = OUT / f"bench-export-{name}.html"
        path.write_text(page, encoding="utf-8")
        found_id = doc_id if name == corpus else f"{doc_id}~copy0"  # copies tie; the lowest row wins
        opened = await open_export(path, len(pp), word, found_id)
        out.append({"name": name, "papers": len(pp), "bytes": path.stat().st_size, "parts": data.sizes, "build_s": build_s,
                    "word": word, **opened})  # fmt: skip
        print("export", out[-1], flush=True)
    return out


# ------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------


def write_markdown(res: dict, args) -> str:
    lines = [
        f"Measured {res['date']} on {res['machine']} with `{res['command']}`; headless Chromium with software WebGL "
        "(SwiftShader) on the same cores. Medians; the worst run in brackets.",
        "",
    ]

    def verdict(value, target):
        return "met" if value <= target else "**missed**"

    for app in res["apps"]:
        n = app["papers"]
        pay = app["payload"]
        per_paper = pay["arrays"] / n
        lines += [
            f"**{app['corpus']}** ({n:,} papers, {app['topics']} topics)",
            "",
            "| measure | median (worst) | target | verdict |",
            "|---|---|---|---|",
        ]

        def row(name, values, target, unit="s", scale=1.0, out=lines):
            values = [v * scale for v in values]
            t = f"{target} {unit}" if target is not None else ""
            v = verdict(med(values), target) if target is not None else ""
            out.append(f"| {name} | {med(values):.2f} {unit} ({max(values):.2f}) | {t} | {v} |")

        target_nav = 1.0 if n <= 20_000 else 2.0 if n <= 120_000 else 6.0
        row("map drawn after clicking it in the app (click to every point drawn)", app["map_nav_s"], target_nav)
        row("baseline: the same click to a page without a map (Reading list) settled", app["plain_nav_s"], None)
        row("baseline: a fresh tab of a page without a map (Streamlit's own boot)", app["plain_fresh_tab_s"], None)
        if n <= 20_000:
            row("map drawn in a fresh tab (Streamlit's frontend boots, then the map)", app["map_fresh_tab_s"], 1.5)
            row("map drawn on the first visit after a server start (loads the corpus)", app["map_cold_s"], 3.0)
        else:
            row("map drawn in a fresh tab", app["map_fresh_tab_s"], None)
            row("map drawn on the first visit after a server start", app["map_cold_s"], None)
        lines.append(
            f"| bytes for the map: arrays {pay['arrays']:,} B ({per_paper:.1f} B a paper) + header with the topic labels "
            f"{pay['header']:,} B + state {pay['state']:,} B | {per_paper:.1f} B a paper | 12 B a paper + labels | "
            f"{verdict(per_paper, 12)} |"
        )
        lines.append(
            f"| everything the fresh tab received over the websocket (page, sidebar, map, bundle) | "
            f"{app['ws_bytes_fresh_tab'] / 1024:.0f} kB | | |"
        )
        row("hover: title fetched from the server and shown (round trip)", app["hover_s"], None, "ms", 1000)
        row("pan: one frame while dragging (snapshot moved, labels placed)", app["pan_frame_ms"], None, "ms")
        lines.append(f"| points drawn again when the view rests | {app['render_ms']:.0f} ms | | |")
        row("page switch (click to the new page settled)", app["page_switch_s"], 1.0)
        row("semantic search in the browser (Enter to results shown)", app["search_browser_s"], 0.3)
        s = app["search_server"]
        lines.append(
            f"| semantic search, server code path | {s['median_ms']:.1f} ms ({s['max_ms']:.1f}) | 300 ms | "
            f"{verdict(s['median_ms'], 300)} |"
        )
        mem = app["server_after_load_mb"]
        lines.append(
            f"| app memory (idle / after all pages / after {args.sessions} sessions) | {app['server_idle_mb']:.0f} / "
            f"{app['server_after_pages_mb']:.0f} / {mem:.0f} MB | 2048 MB | {verdict(mem, 2048)} |"
        )
        ok = [r for r in app.get("load", []) if r["ok"]]
        if args.sessions:
            lines += [
                "",
                f"Load test: {args.sessions} browser sessions at once, each opening the map and running a semantic "
                f"search: {len(ok)}/{args.sessions} succeeded"
                + (
                    f"; map drawn in median {med([r['map_s'] for r in ok]):.1f} s (worst {max(r['map_s'] for r in ok):.1f} s), "
                    f"search in median {med([r['search_s'] for r in ok]):.2f} s (worst {max(r['search_s'] for r in ok):.2f} s)."
                    if ok
                    else "."
                ),
            ]
        lines.append("")
    if res.get("draw"):
        lines += [
            "Drawing only, on **synthetic points** (generated clusters, not a corpus: the renderer alone, in a blank "
            "page; medians of 3 page loads):",
            "",
            "| points | container | first draw | pan frame | hover pick | points redrawn after a zoom | target |",
            "|---|---|---|---|---|---|---|",
        ]
        for d in res["draw"]:
            target = "2 s (in the app)" if d["n"] <= 120_000 else "6 s (in the app), pan responsive"
            lines.append(
                f"| {d['n']:,} | {d['bytes'] / 2**20:.1f} MB | {d['first_draw_s']:.2f} s | {d['pan_frame_ms']:.1f} ms | "
                f"{d['pick_ms']:.2f} ms | {d['rerender_s']:.2f} s | {target} |"
            )
        lines.append("")
    if res.get("export"):
        lines += [
            "The offline export, opened from disk with the network off (a synthetic row repeats the corpus's real "
            "abstracts under new ids to reach its size):",
            "",
            "| file | papers | size | of which abstracts / index / metadata / points | written in | opened in | every paper drawn | found by a unique word | network requests |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for e in res["export"]:
            parts = e["parts"]
            lines.append(
                f"| {e['name']} | {e['papers']:,} | {e['bytes'] / 2**20:.1f} MB | {parts['abstracts'] / 2**20:.1f} / "
                f"{parts['index'] / 2**20:.1f} / {parts['papers'] / 2**20:.1f} / {parts['points'] / 2**20:.1f} MB | "
                f"{e['build_s']:.0f} s | {e['open_s']:.1f} s | {'yes' if e['all_drawn'] else 'NO'} | "
                f"{'yes' if e['found'] else 'NO'} (“{e['word']}”, {e['first_search_s']:.1f} s) | {e['network_requests']} |"
            )
    block = "\n".join(lines)
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    start, end = "<!-- bench-app:start -->", "<!-- bench-app:end -->"
    if start in text:
        text = text.split(start)[0] + start + "\n" + block + "\n" + end + text.split(end, 1)[1]
    else:
        text += f"\n## Dashboard\n\n{start}\n{block}\n{end}\n"
    path.write_text(text, encoding="utf-8")
    return block


async def run(args) -> dict:
    res: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": "python benchmarks/bench_app.py " + " ".join(sys.argv[1:]),
        "apps": [],
    }
    if "app" in args.parts:
        for corpus in args.corpus:
            res["apps"].append(await bench_app(args, corpus))
            print("app", {k: v for k, v in res["apps"][-1].items() if k != "load"}, flush=True)
    if "draw" in args.parts and args.draw:
        res["draw"] = await bench_draw(args.draw)
    if "export" in args.parts:
        res["export"] = await bench_export(args, args.corpus[0])
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifacts", type=Path, default=OUT / "art-full")
    parser.add_argument("--corpus", action="append", help="a built corpus (repeat for several; default neurips)")
    parser.add_argument("--sessions", type=int, default=10, help="concurrent sessions of the load test (0: none)")
    parser.add_argument("--restarts", type=int, default=3, help="server restarts for the first-visit figure")
    parser.add_argument("--draw", type=lambda s: [int(v) for v in s.split(",") if v], default=[100_000, 1_000_000],
                        help="synthetic point counts for the drawing-only part (comma-separated; empty: none)")  # fmt: skip
    parser.add_argument("--export-scale", type=int, default=100_000, help="papers of the synthetic export (0: none)")
    parser.add_argument("--parts", default="app,draw,export", help="which parts to run (comma-separated)")
    args = parser.parse_args()
    args.corpus = args.corpus or ["neurips"]
    args.parts = set(args.parts.split(","))
    OUT.mkdir(parents=True, exist_ok=True)
    res = asyncio.run(run(args))
    (OUT / "app.json").write_text(json.dumps(res, indent=2, default=str))
    print(write_markdown(res, args))


if __name__ == "__main__":
    main()
