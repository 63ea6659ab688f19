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
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlsplit

import pandas as pd
import pytest

from pipeline import artifacts, schema

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
#: Streamlit's frontend probes ``<page>/_stcore/health`` before ``/_stcore/health`` when a deep
#: link (``/paper?...``) is opened; those two 404s are its own, not the app's.
BASE_PATH_PROBE = re.compile(r"/[\w-]+/_stcore/(health|host-config)$")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(root: Path, log_path: Path, *, args: tuple[str, ...] = (), env: dict | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free port of 127.0.0.1 over the artifacts in ``root``; yields its
    base URL. ``args`` go to the app (after ``--``), ``env`` is added to the environment."""
    port = _free_port()
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
            "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
            "--", "--artifacts", str(root), *args,
        ],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"streamlit did not start; see {log_path}")
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def server(small_artifacts, output_dir) -> Iterator[str]:
    with serve(small_artifacts, output_dir / "browser-server.log") as base:
        yield base


class Tab:
    """A fresh browser session (its own Streamlit session) that records console errors and dialogs."""

    def __init__(self, browser, base: str, width: int = 1280, height: int = 800):
        self.context = browser.new_context(viewport={"width": width, "height": height})
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
        """Wait until the app has rendered: no skeletons, no running script, charts drawn."""
        stable, deadline = 0, time.time() + timeout
        while time.time() < deadline:
            ready = self.page.evaluate(
                """() => {
                const main = document.querySelector('[data-testid="stMain"] [data-testid="stElementContainer"]');
                const busy = document.querySelector('[data-testid="stSkeleton"], [data-testid="stStatusWidget"]');
                const charts = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'));
                return !!main && !busy && charts.every(c => c.querySelector('.main-svg'));
            }"""
            )
            stable = stable + 1 if ready else 0
            if stable >= 4:
                return
            time.sleep(0.25)
        raise AssertionError(f"page did not settle: {self.page.url}")

    def url(self) -> str:
        """The address bar (``page.url`` can lag behind Streamlit's ``history.pushState``)."""
        return self.page.evaluate("() => location.href")

    def params(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.url()).query)

    def wait_for_url(self, pattern: str, timeout: float = 30) -> None:
        deadline = time.time() + timeout
        while not re.search(pattern, self.url()):
            if time.time() > deadline:
                raise AssertionError(f"address bar is {self.url()}, expected {pattern}")
            time.sleep(0.1)

    def shot(self, output_dir: Path, name: str, full: bool = False) -> None:
        if full:  # Streamlit scrolls inside its own container: grow the window instead
            self.page.set_viewport_size({"width": self.page.viewport_size["width"], "height": 2200})
            time.sleep(1.0)
        self.page.screenshot(path=str(output_dir / f"{name}.png"))

    def xss_fired(self) -> bool:
        return self.page.evaluate("() => window.__xss !== undefined")

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def papers(small_artifacts) -> pd.DataFrame:
    return pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS).set_index("row")


MAP_POINTS = """() => {
    const gd = document.querySelector('[data-testid="stPlotlyChart"] .js-plotly-plot');
    const traces = gd._fullData.filter(t => t.type === 'scattergl' && t.customdata);
    const L = gd._fullLayout, box = gd.getBoundingClientRect();
    const points = [];
    for (const t of traces) for (let i = 0; i < t.x.length; i++)
        points.push({row: t.customdata[i], x: box.left + L._size.l + L.xaxis.l2p(t.x[i]),
                     y: box.top + L._size.t + L.yaxis.l2p(t.y[i])});
    return points;
}"""


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


def test_the_map_draws_every_point(tab, output_dir):
    tab.open("/?corpus=small")
    points = tab.page.evaluate(MAP_POINTS)
    assert len(points) == 137
    assert sorted(p["row"] for p in points) == list(range(137))
    tab.shot(output_dir, "map")
    tab.open("/?corpus=small&topic=1")
    tab.shot(output_dir, "map-topic")


def test_clicking_a_point_opens_its_paper(tab, papers):
    tab.open("/?corpus=small&years=2020-2023")
    points = tab.page.evaluate(MAP_POINTS)
    target = points[len(points) // 2]
    tab.page.mouse.move(target["x"], target["y"])
    time.sleep(0.3)
    tab.page.mouse.click(target["x"], target["y"])
    tab.wait_for_url(r"/paper\?")
    tab.settle()
    doc_id = papers.loc[target["row"], "doc_id"]
    assert tab.params()["paper"] == [doc_id]
    assert tab.params()["years"] == ["2020-2023"]  # the filters came along
    heading = tab.page.locator("h2").first.inner_text()
    assert " ".join(heading.split())[:40] == " ".join(papers.loc[target["row"], "title"].split())[:40]


def test_links_carry_the_view_and_a_copied_url_reopens_it(tab, browser, server, output_dir):
    tab.open("/?corpus=small&years=2021-2023&text=learning")
    nav = tab.page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]')
    from explorer.shell import PAGES

    assert nav.count() == len(PAGES)  # the views, then reading list, tours and curation
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


def test_a_link_to_another_paper_updates_the_address_bar(tab):
    tab.open("/paper?corpus=small&paper=latex-1")
    first = tab.page.locator('[data-testid="stMain"] [data-testid="stPageLink-NavLink"][href*="paper="]').first
    target = parse_qs(urlsplit(first.get_attribute("href")).query)["paper"][0]
    first.click()
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
    tab.open("/?corpus=small")
    row = int(papers.index[papers["doc_id"] == "xss-1"][0])
    point = next(p for p in tab.page.evaluate(MAP_POINTS) if p["row"] == row)
    tab.page.mouse.move(point["x"], point["y"])
    tab.page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
    assert "<script>" in tab.page.locator(".hoverlayer").text_content()  # shown, not run
    assert not tab.xss_fired()


def test_other_pages_render_cleanly(tab, output_dir):
    tab.open("/trends?corpus=small")
    assert tab.page.get_by_text("Emerging and declining").count() == 1
    tab.shot(output_dir, "trends", full=True)
    tab.open("/?corpus=../../etc")
    assert tab.page.get_by_text("cannot be opened").count() >= 1
    tab.shot(output_dir, "bad-corpus")


def test_projector_layout(browser, server, output_dir):
    big = Tab(browser, server, 1920, 1080)
    try:
        big.open("/?corpus=small&topic=0")
        big.shot(output_dir, "map-1920x1080")
        assert not big.errors
    finally:
        big.close()
