"""Share and present in a real browser (Debian's Chromium through Playwright), servers on 127.0.0.1.

A reading-list link opens its papers and exports them; the map's box selection fills a list; a
tour opens at step N on a projector-sized window and moves with the keyboard; a read-only server
(a real subprocess) shows no edit widget and writes nothing, while the editor token unlocks
editing without ever showing in the page. Screenshots go to tests/output/ for a human to look at.

These tests fail, never skip, when Chromium is missing: install it with ``make browser``.
"""

from __future__ import annotations

import math
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from explorer.state import data, tours
from explorer.state.access import Access
from pipeline.analysis.curation import Curation, curation_path
from pipeline.formats.ids import short_id
from tests.test_browser import CURRENT, MAP_POINTS, Tab, serve
from tests.test_share import TOKEN, files_under

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def root(small_artifacts, tmp_path_factory) -> Path:
    """A private copy of the fixture artifacts with a saved tour."""
    root = tmp_path_factory.mktemp("share") / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    steps = (
        tours.make_step("topics", {"corpus": ["small"], "topic": ["1"]}, "Topic 1 and the keywords that define it"),
        tours.make_step("paper", {"corpus": ["small"], "paper": ["latex-1"]}, "A paper worth reading <b>twice</b>"),
        tours.make_step("trends", {"corpus": ["small"], "kw": ["planning"]}, "Planning over the years"),
    )
    tours.save(Access(), root, tours.Tour("demo", steps, "small"))
    return root


@pytest.fixture(scope="module")
def server(root, output_dir) -> Iterator[str]:
    with serve(root, output_dir / "share-server.log") as base:
        yield base


def download_text(tab: Tab, locator) -> tuple[str, str]:
    with tab.page.expect_download() as info:
        locator.click()
    path = info.value.path()
    return info.value.suggested_filename, Path(path).read_text(encoding="utf-8")


def test_a_reading_list_link_opens_its_papers_and_exports_them(tab, root, output_dir):
    corpus = data.load_corpus(root, "small")
    docs = ["latex-1", "xss-1", "ijcai2023-paper104"]
    ids = [short_id(d) for d in docs]
    tab.open("/list?corpus=small&list=" + ",".join(ids))
    main = tab.page.locator('[data-testid="stMain"]')
    titles = [corpus.papers["title"].iat[corpus.paper_pos(d)] for d in docs]
    text = main.inner_text()
    positions = [text.find(" ".join(t.split())[:40]) for t in titles]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), positions  # every paper, in order
    assert not tab.xss_fired()
    tab.shot(output_dir, "reading-list", full=True)
    name, md = download_text(tab, tab.page.get_by_role("button", name="Markdown"))
    assert name == "small-reading-list.md"
    assert md.startswith("# Reading list: small") and md.count("\n1. ") + md.count("\n2. ") + md.count("\n3. ") == 3
    assert "list=" + "%2C".join(ids) in md and "127.0.0.1" in md  # the link that reopens the list
    assert "\\<script\\>" in md and "<script>" not in md
    name, bib = download_text(tab, tab.page.get_by_role("button", name="BibTeX"))
    assert name == "small-reading-list.bib" and bib.count("@inproceedings{") == 3
    assert "url = {https://example.org/paper}" in bib and bib.count("{") == bib.count("}")
    # a page link carries the list; a bookmark on a search result adds to it
    tab.open("/search?corpus=small&q=planning&list=" + ",".join(ids))
    tab.page.locator('[data-testid="stMain"] [class*="st-key-rl_hit_"] button').first.click()
    tab.wait_for_url(r"list=[a-z2-7]+(%2C|,)[a-z2-7]+(%2C|,)[a-z2-7]+(%2C|,)[a-z2-7]+")
    tab.settle()
    href = tab.page.locator('[data-testid="stSidebar"] [data-testid="stPageLink-NavLink"]').first.get_attribute("href")
    assert len(parse_qs(urlsplit(href).query)["list"][0].split(",")) == 4


def _drag(tab: Tab, path: list[tuple[float, float]]) -> None:
    tab.page.mouse.move(*path[0])
    tab.page.mouse.down()
    for x, y in path[1:]:
        tab.page.mouse.move(x, y, steps=3)
    tab.page.mouse.up()


def _added(tab: Tab) -> int:
    add = tab.page.get_by_role("button", name="to the reading list")
    n = int(re.search(r"Add (\d+) selected", add.inner_text()).group(1))
    add.click()
    tab.wait_for_url(r"list=")
    tab.settle()
    assert len(tab.params()["list"][0].split(",")) == n
    assert "/paper" not in tab.url()  # a selection selects; only a click opens a paper
    return n


def test_a_box_on_the_map_lists_its_papers_for_the_list(tab, output_dir):
    tab.open("/?corpus=small")
    points = tab.page.evaluate(MAP_POINTS)
    xs, ys = sorted(p["x"] for p in points), sorted(p["y"] for p in points)
    x0, x1 = xs[len(xs) // 4], xs[3 * len(xs) // 4]
    y0, y1 = ys[len(ys) // 4], ys[3 * len(ys) // 4]

    def inside(margin: float) -> int:  # points in the box, give or take a few pixels of rounding
        return sum(x0 + margin <= p["x"] <= x1 - margin and y0 + margin <= p["y"] <= y1 - margin for p in points)

    tab.page.locator('button[data-tool="box"]').click()
    _drag(tab, [(x0, y0), ((x0 + x1) / 2, (y0 + y1) / 2), (x1, y1)])
    tab.page.get_by_text("selected on the map").wait_for(timeout=30_000)
    tab.settle()
    listed = tab.page.get_by_text("selected on the map").inner_text()
    n = int(re.search(r"(\d+) papers? selected", listed).group(1))
    assert inside(3) <= n <= inside(-3) and n >= 10
    assert tab.page.locator('[data-testid="stDataFrame"]').count() >= 1  # the papers themselves are listed
    tab.shot(output_dir, "map-selection")
    assert _added(tab) == n


def test_a_lasso_adds_the_papers_it_encloses_to_the_reading_list(tab, output_dir):
    tab.open("/?corpus=small")
    points = tab.page.evaluate(MAP_POINTS)
    cx = sorted(p["x"] for p in points)[len(points) // 2]
    cy = sorted(p["y"] for p in points)[len(points) // 2]
    r = 90
    ring = [(cx + r * math.cos(2 * math.pi * k / 24), cy + r * math.sin(2 * math.pi * k / 24)) for k in range(25)]

    def enclosed(margin: float) -> int:
        return sum(math.hypot(p["x"] - cx, p["y"] - cy) <= r * math.cos(math.pi / 24) - margin for p in points)

    tab.page.locator('button[data-tool="lasso"]').click()
    _drag(tab, ring)
    tab.page.get_by_text("selected on the map").wait_for(timeout=30_000)
    tab.settle()
    n = int(re.search(r"(\d+) papers? selected", tab.page.get_by_text("selected on the map").inner_text()).group(1))
    assert enclosed(3) <= n <= enclosed(-3) and n >= 5, (enclosed(3), n, enclosed(-3))
    assert "(lasso" in tab.page.locator("p", has_text="selected on the map").inner_text()
    assert _added(tab) == n
    # the reading list is marked on the map (the map takes its new marks after the rerun)
    tab.wait_for(f"(n) => {CURRENT}.opts.marks.some(m => m.shape === 'diamond' && m.rows.length === n)", arg=n)


def test_a_tour_opens_at_its_step_and_moves_with_the_keyboard(browser, server, output_dir):
    big = Tab(browser, server, 1920, 1080)
    try:
        big.open("/?corpus=small&tour=demo&step=2")  # a link to step 2 opens that step's own page
        big.wait_for_url(r"/paper\?.*paper=latex-1")
        big.settle()
        assert big.params()["step"] == ["2"] and big.params()["tour"] == ["demo"]
        note = big.page.locator(".st-key-tour_note")
        assert "A paper worth reading <b>twice</b>" in note.inner_text()  # the note, as text
        size = big.page.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('.st-key-tour_note [data-testid=\"stMarkdownContainer\"] p')).fontSize)"
        )
        assert size >= 32, size  # legible on a projector
        assert not big.page.locator('[data-testid="stSidebar"]').is_visible()
        big.shot(output_dir, "tour-step2-1920x1080")
        big.page.keyboard.press("ArrowRight")
        big.wait_for_url(r"/trends\?.*step=3")
        big.settle()
        assert "Planning over the years" in big.page.locator(".st-key-tour_note").inner_text()
        big.shot(output_dir, "tour-step3-1920x1080")
        # the last step: "next" is disabled, so the key does nothing (the handler clicks no button)
        assert big.page.locator(".st-key-tour_next button").is_disabled()
        big.page.keyboard.press("ArrowRight")
        big.settle()
        assert big.params()["step"] == ["3"]
        big.page.keyboard.press("PageUp")  # a presentation clicker's "back"
        big.wait_for_url(r"/paper\?.*step=2")
        big.settle()
        big.page.keyboard.press("ArrowLeft")
        big.wait_for_url(r"/topics\?.*step=1")
        big.settle()
        assert "Topic 1 ·" in big.page.locator("h2").first.inner_text()
        big.shot(output_dir, "tour-step1-1920x1080")
        big.page.keyboard.press("PageDown")
        big.wait_for_url(r"/paper\?.*step=2")
        big.settle()
        big.page.keyboard.press("Escape")
        big.wait_for_url(r"/paper\?(?!.*tour=)")
        big.settle()
        # the present-mode style goes when the exit's run replaces the page (it can lag the address bar)
        big.page.locator('[data-testid="stSidebar"]').wait_for(state="visible")
        assert not big.errors and not big.dialogs, big.errors + big.dialogs
    finally:
        big.close()


def test_a_tour_inside_the_link_needs_no_file(browser, server, root, output_dir):
    big = Tab(browser, server, 1920, 1080)
    try:
        blob = tours.encode(tours.load(root, "small", "demo"))
        big.open(f"/?corpus=small&tourdata={blob}&step=1")
        big.wait_for_url(r"/topics\?.*step=1")
        big.settle()
        assert "Topic 1 and the keywords" in big.page.locator(".st-key-tour_note").inner_text()
        big.page.keyboard.press("ArrowRight")
        big.wait_for_url(r"/paper\?.*tourdata=.*step=2|/paper\?.*step=2.*tourdata=")
        assert not big.errors, big.errors
    finally:
        big.close()


def test_a_read_only_server_refuses_edits_and_writes_nothing(small_artifacts, browser, tmp_path, output_dir):
    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    before = files_under(root)
    env = {"ATLAS_EDITOR_TOKEN": TOKEN}
    with serve(root, output_dir / "share-readonly.log", args=("--read-only",), env=env) as base:
        viewer = Tab(browser, base)
        try:
            viewer.open("/curate?corpus=small&topic=0")
            main = viewer.page.locator('[data-testid="stMain"]')
            assert "read-only" in main.inner_text()
            assert main.locator("input, textarea, button").count() == 0  # no edit widget at all
            assert viewer.page.locator('[data-testid="stSidebar"] a[href*="curate"]').count() == 0
            viewer.shot(output_dir, "read-only-curate")
            viewer.open("/paper?corpus=small&paper=latex-1")
            assert viewer.page.locator('[data-testid="stMain"] a[href*="curate"]').count() == 0
            viewer.page.get_by_role("button", name="Add to reading list").click()
            viewer.wait_for_url(r"list=")
            viewer.settle()
            viewer.page.get_by_text("Add this view to the tour").click()
            viewer.page.get_by_role("button", name="Add to the tour").click()
            viewer.settle()
            viewer.page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Tours").click()  # same session
            viewer.wait_for_url(r"/tour\?")
            viewer.settle()
            assert viewer.page.get_by_role("button", name="Save as").count() == 0
            assert "switched off on this read-only server" in viewer.page.locator('[data-testid="stMain"]').inner_text()
            with viewer.page.expect_download() as csv:
                viewer.page.get_by_role("button", name="CSV of the").click()
            assert csv.value.suggested_filename == "small-selection.csv"
            viewer.open("/search?corpus=small&q=planning+agents&mode=semantic")
            assert viewer.page.locator('[data-testid="stMain"] [data-testid="stPageLink-NavLink"]').count() > 0
            assert not viewer.errors, viewer.errors
        finally:
            viewer.close()
        assert files_under(root) == before, "a viewer of a read-only server wrote a file"

        editor = Tab(browser, base)
        try:
            editor.open(f"/curate?corpus=small&token={TOKEN}")
            assert "token" not in editor.params()  # out of the address bar
            assert TOKEN not in editor.page.content()
            hrefs = editor.page.evaluate("() => Array.from(document.querySelectorAll('a'), a => a.href).join(' ')")
            assert TOKEN not in hrefs
            editor.page.get_by_label("New label").fill("Named by the editor")
            editor.page.get_by_role("button", name="Rename").click()
            deadline = time.time() + 30
            while not curation_path(root, "small").exists() and time.time() < deadline:
                time.sleep(0.2)
            assert [e["label"] for e in Curation.load(curation_path(root, "small")).edits] == ["Named by the editor"]
            assert not editor.errors, editor.errors
        finally:
            editor.close()
