"""The dashboard in a real browser (Debian's Chromium driven by Playwright) on the fixture corpus.

What only a browser shows: the WebGL map draws its points, a click on a point opens the paper,
links reopen the same view (also the first link opened after the server starts), the hostile
records execute nothing, and the console stays free of errors. Screenshots of every page are
left in tests/output/ for a human to look at.

These tests fail, never skip, when Chromium is missing: install it with ``make browser``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlsplit

import pandas as pd
import pytest

from pipeline.core import artifacts, schema
from tests.servers import free_port, stop, wait_until_healthy

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
#: Streamlit's frontend probes ``<page>/_stcore/health`` before ``/_stcore/health`` when a deep
#: link (``/paper?...``) is opened; those two 404s are its own, not the app's.
BASE_PATH_PROBE = re.compile(r"/[\w-]+/_stcore/(health|host-config)$")


@contextmanager
def serve(root: Path, log_path: Path, *, args: tuple[str, ...] = (), env: dict | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free port of 127.0.0.1 over the artifacts in ``root``; yields its
    base URL. ``args`` go to the app (after ``--``), ``env`` is added to the environment."""
    port = free_port()
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable, str(ROOT / "tests" / "serve_app.py"), "run", str(ROOT / "app.py"), "--server.headless", "true",
            "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
            "--", "--artifacts", str(root), *args,
        ],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base, proc, log_path)
        yield base
    finally:
        stop(proc)
        log.close()


@pytest.fixture(scope="module")
def server(small_artifacts, output_dir) -> Iterator[str]:
    with serve(small_artifacts, output_dir / "browser-server.log") as base:
        yield base


#: True once the page has been ready at four polls in a row (the count lives in the page).
SETTLED = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const main = document.querySelector('[data-testid="stMain"] [data-testid="stElementContainer"]');
    const busy = document.querySelector('[data-testid="stSkeleton"], [data-testid="stStatusWidget"], [data-stale="true"]');
    const charts = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'));
    const maps = (window.__atlasMaps || []).filter(m => m.el.isConnected);
    // Every map the page shows has mounted (its component's script may load after the run ends);
    // the other components (map data, the tour store) take no room.
    // (a page that mounts a map's data has a map coming, even before its component takes room).
    const shown = Math.max(
        Array.from(document.querySelectorAll('[data-testid^="stBidiComponent"]'))
            .filter(c => c.getBoundingClientRect().height > 20).length,
        document.querySelector('[class*="st-key-atlasdata_"]') ? 1 : 0);
    const ready = !!app && app.dataset.testScriptState === "notRunning"
        && app.dataset.testConnectionState === "CONNECTED"
        && !!main && !busy && charts.every(c => c.querySelector('.main-svg'))
        && maps.length >= shown && maps.every(m => m.el.dataset.drawn && !m.debug().busy);
    window.__atlasSettled = ready ? (window.__atlasSettled || 0) + 1 : 0;
    return window.__atlasSettled >= 4;
}"""


class Tab:
    """A fresh browser session (its own Streamlit session) that records console errors and dialogs."""

    def __init__(self, browser, base: str, width: int = 1280, height: int = 800):
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.context.set_default_timeout(60_000)  # Playwright's own waits get the minute settle() has
        self.page = self.context.new_page()
        self.base = base
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("dialog", self._dialog)

    def _console(self, msg) -> None:
        if msg.type != "error":
            return
        where = (msg.location or {}).get("url", "")
        if "404" in msg.text and BASE_PATH_PROBE.search(urlsplit(where).path):
            return
        self.errors.append(f"console: {msg.text} ({where})")

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, path: str) -> None:
        self.page.goto(self.base + path)
        self.settle()

    def settle(self, timeout: float = 60) -> None:
        """Wait until the app has rendered: its script run finished (Streamlit's own
        ``data-test-script-state``), no element left over from an earlier run (``data-stale``), no
        skeletons, charts and maps drawn; and still so at four checks in a row, 250 ms apart (a
        rerun a click asked for may start a moment later). A condition, not a time: a busy machine
        only makes it take longer. Wait first for what the action must show (``wait_for_text``),
        so that a rerun that has not started yet is not taken for one that has finished."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(SETTLED, polling=250, timeout=timeout * 1000)
        except PlaywrightTimeout:
            raise AssertionError(f"page did not settle: {self.page.url}") from None

    def wait_for(self, js: str, *, arg=None, timeout: float = 60) -> None:
        """Wait until the page function ``js`` returns something truthy (Playwright polls it)."""
        self.page.wait_for_function(js, arg=arg, timeout=timeout * 1000)

    def wait_for_text(self, selector: str, text: str, *, timeout: float = 60) -> None:
        """Wait until the first element matching ``selector`` contains ``text``, then settle."""
        self.wait_for(
            "([sel, text]) => { const e = document.querySelector(sel); return !!e && e.innerText.includes(text); }",
            arg=[selector, text], timeout=timeout,
        )  # fmt: skip
        self.settle(timeout)

    def url(self) -> str:
        """The address bar (``page.url`` can lag behind Streamlit's ``history.pushState``)."""
        return self.page.evaluate("() => location.href")

    def params(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.url()).query)

    def wait_for_url(self, pattern: str, timeout: float = 30) -> None:
        """Wait until the address bar matches ``pattern`` (a regular expression both Python and
        JavaScript read alike)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.wait_for("(p) => new RegExp(p).test(location.href)", arg=pattern, timeout=timeout)
        except PlaywrightTimeout:
            raise AssertionError(f"address bar is {self.url()}, expected {pattern}") from None

    def shot(self, output_dir: Path, name: str, full: bool = False) -> None:
        if full:  # Streamlit scrolls inside its own container: grow the window instead
            self.page.set_viewport_size({"width": self.page.viewport_size["width"], "height": 2200})
            self.wait_for("() => window.innerHeight === 2200")
            self.settle()  # charts and the map redraw at the new size
        self.page.screenshot(path=str(output_dir / f"{name}.png"))

    def xss_fired(self) -> bool:
        return self.page.evaluate("() => window.__xss !== undefined")

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def papers(small_artifacts) -> pd.DataFrame:
    return pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS).set_index("row")


#: The map component's own account of what it drew (``frontend/src/map.ts``: ``debug``), and the
#: page position of every shown paper in view, top-drawn first.
CURRENT = "window.__atlasMaps.filter(m => m.el.isConnected)[0]"
MAP = f"() => {CURRENT}.debug()"
MAP_POINTS = f"() => {CURRENT}.screenPoints()"
#: True once a map is on the page and has drawn (wait for it after opening a page with a map).
MAP_DRAWN = "() => (window.__atlasMaps || []).some(m => m.el.isConnected && m.el.dataset.drawn)"


#: The map's view is the one in the address bar (after a zoom, the app reruns with it).
VIEW_IN_URL = f"""() => {{ const v = {CURRENT}.debug().view;
    return !!v && new URLSearchParams(location.search).get("view") === v.text; }}"""


def on_map(tab: Tab, js: str):
    """Evaluate ``js`` (a function of the first map on the page) in the page."""
    return tab.page.evaluate(f"() => ({js})({CURRENT})")


# The first test opens a deep link on the freshly started server (the case that breaks when
# pages live in a folder named pages/).
def test_a_deep_link_works_first_after_a_restart(tab, papers, output_dir):
    tab.open("/paper?corpus=small&paper=latex-1")
    title = tab.page.locator("h2").first.inner_text()
    assert "recovery for scheduling" in title
    assert tab.page.locator('[data-testid="stSidebar"]').get_by_text("Filters").count() == 1  # the router ran
    assert tab.page.locator('[data-testid="stMain"] .katex').count() >= 3  # valid math rendered by KaTeX
    assert tab.page.locator('[data-testid="stMain"] a[href="https://example.org/code"]').count() == 1
    tab.shot(output_dir, "paper", full=True)


def test_the_root_url_works_first_after_a_restart(small_artifacts, browser, output_dir):
    # The other first-request case: "/" runs app.py inside Streamlit's old pages/ mode.
    with serve(small_artifacts, output_dir / "browser-server-root.log") as base:
        tab = Tab(browser, base)
        try:
            tab.open("/?corpus=small&topic=1")
            assert len(tab.page.evaluate(MAP_POINTS)) == 137
            assert "topic=1" in tab.page.evaluate("location.href")
            assert tab.page.locator('[data-testid="stSidebar"]').get_by_text("Filters").count() == 1
            assert not tab.errors and not tab.dialogs, tab.errors + tab.dialogs
        finally:
            tab.close()


def test_a_fresh_tab_runs_its_page_once(browser, server):
    # Every run of the map page sends the points container again while the browser has not yet
    # cached it (11 MB at a million papers): a component that reports on its first render (the
    # tour draft's store did, with nothing stored) made every fresh tab run its page twice.
    from streamlit.proto.BackMsg_pb2 import BackMsg

    for path in ("/?corpus=small", "/topics?corpus=small", "/search?corpus=small&q=learning"):
        tab = Tab(browser, server)
        sent: list[bytes] = []
        tab.page.on("websocket", lambda ws, sent=sent: ws.on("framesent", lambda frame: sent.append(frame or b"")))
        try:
            tab.open(path)
            if path.startswith("/?"):
                assert tab.page.evaluate(MAP)["drawn"] == 137
            messages = [BackMsg.FromString(p) for p in sent if isinstance(p, bytes) and p]
            reruns = [m for m in messages if m.WhichOneof("type") == "rerun_script"]
            assert len(reruns) == 1, (path, [str(m)[:300] for m in reruns])
            # nothing stored and no draft: nothing written either (a stored draft is still restored,
            # in a second run: tests/test_truth_browser.py, a tour being assembled survives a reload)
            assert tab.page.evaluate("() => window.localStorage.getItem('abstract-atlas:tour-draft')") is None
            assert not tab.errors, tab.errors
        finally:
            tab.close()


def test_the_map_draws_every_point_and_labels_every_topic_without_overlap(tab, output_dir):
    tab.open("/?corpus=small")
    state = tab.page.evaluate(MAP)
    assert state["n"] == 137 and state["drawn"] == 137 and state["shown"] == 137  # counted by the component
    assert sorted(p["row"] for p in tab.page.evaluate(MAP_POINTS)) == list(range(137))  # all in view
    labels = [lab for lab in state["labels"] if lab["kind"] == "topic"]
    assert sorted(lab["topic"] for lab in labels) == list(range(6))  # every topic of the small corpus
    boxes = [lab["box"] for lab in state["labels"]]
    assert not [
        (a, b)
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ], "two labels overlap"
    tab.shot(output_dir, "map")
    # a legend entry brings its topic forward while the pointer rests on it
    item = tab.page.locator('.legend li button[data-topic="2"]')
    item.hover()
    tab.page.wait_for_function(f"() => {CURRENT}.el.dataset.highlight === '2'")
    tab.page.mouse.move(5, 5)
    tab.page.wait_for_function(f"() => {CURRENT}.el.dataset.highlight === ''")
    tab.open("/?corpus=small&topic=1&years=2021-2023")
    state = tab.page.evaluate(MAP)
    assert state["highlight"] == 1 and state["drawn"] == 137  # filtered-out papers stay as grey context
    assert state["shown"] == int(on_map(tab, "m => m.el.dataset.shown")) < 137
    assert any(lab["kind"] == "highlight" and lab["topic"] == 1 for lab in state["labels"])
    tab.shot(output_dir, "map-topic")


@pytest.mark.parametrize("topic", [0, 3])
def test_a_highlighted_topics_label_sits_beside_its_papers_not_over_them(tab, topic):
    # The highlighted topic's label is boxed (white, nearly opaque): centred on the topic, it hid
    # the very papers it names, all of them for a small topic at the map's edge. It now sits
    # beside where most of them lie (the middle 80% of their x and of their y), not over it.
    tab.open(f"/?corpus=small&topic={topic}")
    state = tab.page.evaluate(MAP)
    (label,) = [lab for lab in state["labels"] if lab["kind"] == "highlight"]
    left, top = tab.page.evaluate(
        f"() => {{ const r = {CURRENT}.el.querySelector('.stage').getBoundingClientRect(); return [r.left, r.top]; }}"
    )
    own = [p for p in tab.page.evaluate(MAP_POINTS) if p["layer"] == 3]  # the highlighted topic's dots
    assert len(own) >= 10

    def middle(values: list[float]) -> tuple[float, float]:
        values = sorted(values)
        return values[int(0.1 * len(values))], values[min(len(values) - 1, int(0.9 * len(values)))]

    (x0, x1), (y0, y1) = middle([p["x"] - left for p in own]), middle([p["y"] - top for p in own])
    a0, b0, a1, b1 = label["box"]
    assert a1 <= x0 or x1 <= a0 or b1 <= y0 or y1 <= b0, (label["box"], (x0, y0, x1, y1))


def test_clicking_a_point_opens_its_paper(tab, papers):
    tab.open("/?corpus=small&years=2020-2023")
    points = tab.page.evaluate(MAP_POINTS)

    def isolation(p):
        return min((p["x"] - q["x"]) ** 2 + (p["y"] - q["y"]) ** 2 for q in points if q is not p)

    target = max(points, key=isolation)
    tab.page.mouse.move(target["x"], target["y"])
    tab.page.locator(".tip").wait_for(state="visible")
    tab.page.mouse.click(target["x"], target["y"])
    tab.wait_for_url(r"/paper\?")
    tab.settle()
    doc_id = papers.loc[target["row"], "doc_id"]
    assert tab.params()["paper"] == [doc_id]
    assert tab.params()["years"] == ["2020-2023"]  # the filters came along
    heading = tab.page.locator("h2").first.inner_text()
    assert " ".join(heading.split())[:40] == " ".join(papers.loc[target["row"], "title"].split())[:40]


def test_a_click_opens_the_dot_you_see(tab, papers):
    """With a topic highlighted, its dots are drawn over the faded others: a click where a bright dot
    and a faint one overlap opens the bright one, even when the faint one comes later in the corpus."""

    # Which topic and zoom give such an overlap depends on the fixture's map, which differs by
    # processor: look for a bright dot whose disk overlaps a later faint dot's (the disks' radii are
    # the map's own sizes) and a point inside both and inside no other dot.
    def click_point(points, sizes):
        own = {layer: sizes[layer] / 2 + 0.5 for layer in (1, 2, 3)}  # the disk pick() tests

        def dist(a, x, y):
            return ((a["x"] - x) ** 2 + (a["y"] - y) ** 2) ** 0.5

        for b in (p for p in points if p["layer"] == 3):
            for f in (p for p in points if p["layer"] == 1 and p["row"] > b["row"]):
                d = dist(b, f["x"], f["y"])
                if d > 0.8 * (own[1] + own[3]):
                    continue
                t = own[1] / (own[1] + own[3])  # split the gap by the radii: well inside both disks
                x, y = f["x"] + (b["x"] - f["x"]) * t, f["y"] + (b["y"] - f["y"]) * t
                others = (p for p in points if p["layer"] and p["row"] not in (b["row"], f["row"]))
                if all(dist(p, x, y) > own[p["layer"]] + 1 for p in others):
                    return b, x, y
        return None

    found = None
    for topic in sorted(set(papers["topic"].tolist())):
        tab.open(f"/?corpus=small&topic={topic}")
        for _ in range(2):
            on_map(tab, "m => { m.zoomAt(0.5, m.w / 2, m.h / 2); }")  # zoom out: dots come together
            tab.wait_for(VIEW_IN_URL)  # the rerun the new view asks for has begun, then settle
            tab.settle()
            found = click_point(tab.page.evaluate(MAP_POINTS), on_map(tab, "m => m.renderer.look.sizes"))
            if found:
                break
        if found:
            break
    assert found, "no bright dot overlaps a later faint one, apart from other dots, at any topic and zoom"
    b, x, y = found
    assert (
        on_map(
            tab,
            f"m => m.pick({x} - m.stage.getBoundingClientRect().left, {y} - m.stage.getBoundingClientRect().top).row",
        )
        == b["row"]
    )
    tab.page.mouse.move(x, y)
    tab.page.mouse.click(x, y)
    tab.wait_for_url(r"/paper\?")
    assert tab.params()["paper"] == [papers.loc[b["row"], "doc_id"]]


def test_this_papers_star_is_drawn_on_top_in_a_contrasting_colour(tab, papers, output_dir, tmp_path):
    from PIL import Image

    from pipeline.formats import palette

    tab.open("/paper?corpus=small&paper=latex-1")
    tab.page.locator(".stage").first.scroll_into_view_if_needed()
    tab.settle()
    overlay = on_map(tab, "m => m.opts.overlay")
    assert [o["label"] for o in overlay] == ["this paper"] and overlay[0]["colour"] == palette.STAR
    x, y = on_map(tab, f"m => m.screenOfPoint({overlay[0]['x']}, {overlay[0]['y']})")
    row = int(papers.index[papers["doc_id"] == "latex-1"][0])
    assert on_map(tab, f"m => m.screenOf({row})") == [x, y]  # over the paper's own dot
    shot = tmp_path / "star.png"
    tab.page.screenshot(path=str(shot), clip={"x": x - 20, "y": y - 20, "width": 40, "height": 40})
    pixel = Image.open(shot).convert("RGB").getpixel((20, 20))
    assert all(abs(a - b) <= 40 for a, b in zip(pixel, palette.rgb(palette.STAR), strict=True)), pixel  # not hidden
    tab.page.screenshot(
        path=str(output_dir / "paper-map-star.png"), clip={"x": x - 160, "y": y - 120, "width": 320, "height": 240}
    )


def test_the_view_and_zoom_go_into_the_url_and_a_copied_link_reopens_them(tab, browser, server, output_dir):
    tab.open("/?corpus=small")
    box = tab.page.locator(".stage").bounding_box()
    cx, cy = box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.6
    tab.page.mouse.move(cx, cy)
    for _ in range(4):
        zoom = tab.page.evaluate(MAP)["zoom"]
        tab.page.mouse.wheel(0, -240)
        tab.wait_for(f"(z) => {CURRENT}.debug().zoom > z", arg=zoom)  # this step zoomed in
    tab.page.mouse.move(cx, cy)
    tab.page.mouse.down()
    tab.page.mouse.move(cx + 60, cy - 40, steps=6)
    tab.page.mouse.up()
    tab.wait_for_url(r"view=")
    tab.settle()
    view = tab.params()["view"][0]
    x, y, zoom = (float(v) for v in view.split(","))
    assert zoom > 2
    here = tab.page.evaluate(MAP)
    assert here["view"] == {"x": x, "y": y, "zoom": zoom, "text": view}  # the URL holds the map's own string
    rows = {p["row"]: (p["x"], p["y"]) for p in tab.page.evaluate(MAP_POINTS)}
    assert 0 < len(rows) < 137  # zoomed in: only part of the map in view
    other = Tab(browser, server)
    try:
        other.open("/?" + urlsplit(tab.url()).query)
        again = other.page.evaluate(MAP)
        assert again["view"] == here["view"]
        moved = {p["row"]: (p["x"], p["y"]) for p in other.page.evaluate(MAP_POINTS)}
        assert set(moved) == set(rows)
        assert max(abs(moved[r][0] - rows[r][0]) + abs(moved[r][1] - rows[r][1]) for r in rows) < 2
        other.shot(output_dir, "map-zoomed")
        # "Show the whole map" takes the view out of the link
        other.page.locator('button[data-tool="reset"]').click()
        other.wait_for_url(r"^(?!.*view=)")
        assert not other.errors, other.errors
    finally:
        other.close()


def test_deep_zoom_labels_papers_with_their_titles(tab, papers):
    tab.open("/?corpus=small")
    # zoom into the densest place until few papers are in view: their titles become labels
    points = tab.page.evaluate(MAP_POINTS)
    p = points[0]
    on_map(
        tab, f"m => {{ const r = m.stage.getBoundingClientRect(); m.zoomAt(14, {p['x']} - r.left, {p['y']} - r.top); }}"
    )
    tab.page.wait_for_function(f"() => {CURRENT}.debug().labels.some(l => l.kind === 'title')")
    titles = [lab["text"] for lab in tab.page.evaluate(MAP)["labels"] if lab["kind"] == "title"]
    known = set(papers["title"])
    assert all(t in known or (t.endswith("…") and any(k.startswith(t[:-1]) for k in known)) for t in titles)


def test_links_carry_the_view_and_a_copied_url_reopens_it(tab, browser, server, output_dir):
    tab.open("/?corpus=small&years=2021-2023&text=learning")
    nav = tab.page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')
    from explorer.ui.shell import PAGES

    assert nav.count() == len(PAGES)  # the views, then reading list, tours, curation and adding a corpus
    for i in range(len(PAGES)):
        query = parse_qs(urlsplit(nav.nth(i).get_attribute("href")).query)
        assert query["corpus"] == ["small"] and query["years"] == ["2021-2023"] and query["text"] == ["learning"]
    tab.page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Topics", exact=True).click()
    tab.wait_for_url(r"/topics\?")
    tab.settle()
    assert tab.params()["years"] == ["2021-2023"]
    # choose a topic: the address bar follows
    tab.page.goto(server + "/topics?corpus=small&years=2021-2023&topic=1&lam=0.2")
    tab.settle()
    url = tab.url()
    assert "Topic 1 ·" in tab.page.locator("h2").first.inner_text()
    tab.shot(output_dir, "topics", full=True)
    # a colleague opens the copied link in a new session: same topic, same λ, same filters
    other = Tab(browser, server)
    try:
        other.page.goto(url)
        other.settle()
        assert "Topic 1 ·" in other.page.locator("h2").first.inner_text()
        assert other.page.get_by_text("0.20").count() >= 1
        assert other.page.locator('[data-testid="stSidebar"]').get_by_text("2021").count() >= 1
        assert not other.errors
    finally:
        other.close()


def test_a_topics_figures_are_shown_whole_at_1280_pixels(tab):
    # Seven figures share the topic's row; at 1280 pixels, in columns of one width, "Label
    # support" was cut to "Label sup…". Nothing in a figure may end in an ellipsis.
    tab.open("/topics?corpus=small&topic=0")
    assert tab.page.locator('[data-testid="stMetric"]').count() >= 6
    cut = tab.page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stMetric"] *')]
            .filter(e => getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1)
            .map(e => e.textContent.trim())"""
    )
    assert cut == []


#: What of a page's text a reader cannot see: a link in the page cut where its column ends, a
#: chart's category label or axis title that runs past the chart's own edges (plotly widens its
#: margin for labels only as far as the plot leaves room, then cuts them on the left: "17 · …"
#: read "7 · …").
CUT_TEXT = """() => {
    const cut = [];
    for (const e of document.querySelectorAll('[data-testid="stMain"] [data-testid="stPageLink-NavLink"] *'))
        if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow === 'hidden') cut.push(e.textContent.trim());
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg')) {
        const edge = chart.getBoundingClientRect();
        for (const t of chart.parentElement.querySelectorAll('.ytick text, .xtitle, .ytitle')) {
            const r = t.getBoundingClientRect();
            if (r.width && (r.left < edge.left - 1 || r.right > edge.right + 1)) cut.push(t.textContent.trim());
        }
    }
    return cut;
}"""


def test_a_papers_topic_and_closest_topics_are_read_whole_in_its_narrow_column(tab, papers):
    # The paper page's right column is about 260 pixels wide at 1280: the topic's link was cut
    # mid-word, and the closest topics' chart cut its labels' first characters (the numbers).
    sizes = papers.loc[papers["topic"] >= 0, "topic"].value_counts()
    row = papers[papers["topic"] == sizes.index[-1]].iloc[0]  # the smallest topic: the longest label here
    tab.open(f"/paper?corpus=small&paper={quote_plus(row['doc_id'])}")
    assert tab.page.locator('[data-testid="stPlotlyChart"] .ytick').count() >= 2
    assert tab.page.evaluate(CUT_TEXT) == []
    # narrower still (a 1024-pixel laptop): the small map's topic label is wider than the map,
    # and is broken and cut to fit rather than run past both edges
    tab.page.set_viewport_size({"width": 1024, "height": 800})
    tab.wait_for(f"() => {CURRENT}.debug().size[0] < 240")
    tab.settle()
    state = tab.page.evaluate(MAP)
    (label,) = [lab for lab in state["labels"] if lab["kind"] == "highlight"]
    assert label["box"][0] >= 0 and label["box"][2] <= state["size"][0], (label, state["size"])
    assert tab.page.evaluate(CUT_TEXT) == []
    tab.page.set_viewport_size({"width": 1280, "height": 800})
    tab.open("/trends?corpus=small")  # half-width charts: keywords and topics, emerging and declining
    assert tab.page.evaluate(CUT_TEXT) == []
    tab.page.set_viewport_size({"width": 1024, "height": 800})
    tab.open("/trends?corpus=small")
    assert tab.page.evaluate(CUT_TEXT) == []


def test_the_maps_semantic_switch_is_read_whole_beside_its_search_box(tab):
    # a fourth widget in the map's header row: its label must not be cut to "Sem…" on a laptop
    whole = """() => [...document.querySelectorAll('.st-key-map_semantic [data-testid="stMarkdownContainer"]')]
        .map((e) => [e.textContent, e.scrollWidth <= e.clientWidth + 1])"""
    for width in (1024, 1280):
        tab.page.set_viewport_size({"width": width, "height": 800})
        tab.open("/?corpus=small&q=planning+for+teams+of+agents&mode=semantic")
        assert tab.page.evaluate(whole) == [["Semantic", True]], width
        assert (
            "closest in meaning to “planning for teams of agents”"
            in tab.page.locator('[data-testid="stMain"]').inner_text()
        )
    tab.page.set_viewport_size({"width": 1280, "height": 800})


def test_a_link_to_another_paper_updates_the_address_bar(tab):
    tab.open("/paper?corpus=small&paper=latex-1")
    # the first link to another paper (the page also links to the paper it shows: clicking that
    # one changes nothing, and Back then leaves the app)
    links = tab.page.locator('[data-testid="stMain"] [data-testid="stPageLink-NavLink"][href*="paper="]')
    others = [(link, parse_qs(urlsplit(link.get_attribute("href")).query)["paper"][0]) for link in links.all()]
    link, target = next((lk, t) for lk, t in others if t != "latex-1")
    link.click()
    tab.wait_for_url("paper=" + re.escape(quote_plus(target)))
    tab.settle()
    tab.page.go_back()
    tab.wait_for_url("paper=latex-1")


def test_keyword_search_ranks_the_phrase_first(tab, papers, output_dir):
    row = papers[papers["doc_id"] == "ijcai2023-paper104"].iloc[0]
    phrase = " ".join(row["abstract"].split()[30:38])
    tab.open("/search?corpus=small&q=" + quote_plus(phrase))
    first = tab.page.locator('[data-testid="stMain"] [data-testid="stPageLink-NavLink"]').first
    assert parse_qs(urlsplit(first.get_attribute("href")).query)["paper"] == ["ijcai2023-paper104"]
    tab.shot(output_dir, "search", full=True)


def test_hostile_records_execute_nothing(tab, papers, output_dir):
    tab.open("/paper?corpus=small&paper=xss-1")
    main = tab.page.locator('[data-testid="stMain"]')
    assert "<script>window.__xss=1</script>" in main.inner_text()  # shown as text
    assert "onerror=" in main.inner_text()
    assert tab.page.locator('img[src="x"]').count() == 0
    assert tab.page.locator('a[href^="javascript"], a[href^="JAVASCRIPT"]').count() == 0
    assert not tab.xss_fired()
    tab.shot(output_dir, "paper-hostile", full=True)
    tab.open("/search?corpus=small&q=adversarial+prompts")
    assert "<script>" in tab.page.locator('[data-testid="stMain"]').inner_text()
    assert not tab.xss_fired()
    hostile = '<img src="x" onerror="window.__xss=1"> agents'
    tab.open("/search?corpus=small&q=" + quote_plus(hostile))  # the query, quoted in the results' caption
    assert f"sharing a word with “{hostile}”" in tab.page.locator('[data-testid="stMain"]').inner_text()
    assert tab.page.locator('img[src="x"]').count() == 0 and not tab.xss_fired()
    tab.open("/?corpus=small")
    row = int(papers.index[papers["doc_id"] == "xss-1"][0])
    on_map(
        tab,
        f"m => {{ const [x, y] = m.screenOf({row}); const r = m.stage.getBoundingClientRect(); m.zoomAt(4, x - r.left, y - r.top); }}",
    )
    tab.settle()
    point = next(p for p in tab.page.evaluate(MAP_POINTS) if p["row"] == row)
    tab.page.mouse.move(point["x"], point["y"])
    tip = tab.page.locator(".tip .t")
    tip.wait_for(state="visible")
    tab.page.wait_for_function(f"() => {CURRENT}.el.querySelector('.tip .t').textContent !== '…'")
    assert tip.text_content() == papers.loc[row, "title"]  # the fetched title, shown as text
    assert tab.page.locator(".tip script, .tip img").count() == 0
    assert not tab.xss_fired()


def test_other_pages_render_cleanly(tab, output_dir):
    tab.open("/trends?corpus=small")
    assert tab.page.get_by_text("Emerging and declining").count() == 1
    tab.shot(output_dir, "trends", full=True)
    tab.open("/?corpus=../../etc")
    assert tab.page.get_by_text("cannot be opened").count() >= 1
    tab.shot(output_dir, "bad-corpus")


def test_the_map_fills_a_tall_window_and_keeps_its_caption_below(browser, server):
    # 580 pixels left a third of a 1920x1080 screen empty; the map now grows with the window,
    # from 580 pixels (1280x800) up, and what follows it is pushed down, not covered.
    sizes = {}
    for width, height in ((1280, 800), (1920, 1080)):
        tab = Tab(browser, server, width, height)
        try:
            tab.open("/?corpus=small")
            sizes[height] = tab.page.evaluate(MAP)["size"][1]
            gap = tab.page.evaluate(
                """() => { const map = document.querySelector('[data-testid="stMain"] .st-key-map');
                    const caption = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
                        .find(c => c.textContent.startsWith('Each dot is a paper'));
                    return caption.getBoundingClientRect().top - map.getBoundingClientRect().bottom; }"""
            )
            assert gap >= 0, gap
        finally:
            tab.close()
    assert 560 <= sizes[800] <= 580 and sizes[1080] >= 780, sizes


def test_present_mode_makes_the_map_labels_grow(browser, server, output_dir):
    from explorer.state import tours

    tour = tours.Tour(
        "map", (tours.make_step("map", {"corpus": ["small"], "topic": ["0"]}, "Where the topics lie"),), "small"
    )
    normal = Tab(browser, server, 1920, 1080)
    big = Tab(browser, server, 1920, 1080)
    try:
        normal.open("/?corpus=small&topic=0")
        big.open(f"/?corpus=small&topic=0&tourdata={tours.encode(tour)}&step=1")
        big.settle()
        size = {}
        for name, t in (("normal", normal), ("present", big)):
            labels = t.page.evaluate(MAP)["labels"]
            size[name] = max(lab["box"][3] - lab["box"][1] for lab in labels if lab["kind"] == "highlight")
        assert size["present"] >= 1.3 * size["normal"], size  # the highlighted label, boxed, grows with the text
        big.shot(output_dir, "map-present-1920x1080")
        normal.shot(output_dir, "map-1920x1080")
        assert not big.errors and not normal.errors, big.errors + normal.errors
    finally:
        big.close()
        normal.close()
