"""The "What changed" and "Topic lineage" pages in Chromium: every view draws, the sections and the
closest prior work are links that reopen the same view, both join a tour as a user adds them (named
by what they show, presented with their notes, large chart text and the chosen section), and the
console stays clean.

Screenshots of every view are left in tests/output/compare-*.png for a human to look at.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.analysis import compare as cmp
from tests.test_browser import Tab, serve

pytestmark = pytest.mark.browser

VIEWS = ("shares", "matching", "terms", "novelty", "map")


@pytest.fixture(scope="module")
def root(compare_artifacts, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compare-browser") / "art"
    shutil.copytree(compare_artifacts, out, symlinks=True)
    return out


@pytest.fixture(scope="module")
def server(root, output_dir) -> Iterator[str]:
    with serve(root, output_dir / "compare-browser-server.log") as base:
        yield base


def ready(tab, text: str, timeout: float = 90) -> None:
    """Wait until ``text`` is on the page and the app has settled (the comparison is computed once,
    behind a spinner)."""
    deadline = time.time() + timeout
    while not tab.page.get_by_text(text).count():
        if time.time() > deadline:
            raise AssertionError(f"{text!r} never appeared on {tab.url()}")
        time.sleep(0.25)
    tab.settle()


def test_the_overview_then_a_section_then_the_closest_prior_work(tab, root, output_dir):
    tab.open("/compare?corpus=late&ref=early")
    ready(tab, "Far from everything before")
    for heading in ("What is new", "What grew", "What faded"):
        assert tab.page.get_by_text(heading).count() == 1
    tab.shot(output_dir, "compare-overview", full=True)
    tab.page.get_by_text("Far from earlier work", exact=True).click()
    tab.wait_for_url(r"show=novelty")
    ready(tab, "closest prior work")
    assert tab.params()["ref"] == ["early"] and tab.params()["corpus"] == ["late"]
    tab.shot(output_dir, "compare-novelty", full=True)
    link = tab.page.locator('[data-testid="stPageLink"] a', has_text="closest prior work").first
    title = link.inner_text().split(": ", 1)[1]
    link.click()
    tab.wait_for_url(r"/paper\?.*corpus=early")
    tab.settle()
    assert tab.page.locator("h2").first.inner_text().strip()[:30] == title.strip()[:30]
    assert tab.params()["paper"][0] in set(cmp.load_side(root, "early").doc_ids)


@pytest.mark.parametrize("view", VIEWS)
def test_every_section_draws_and_reopens_from_its_link(tab, root, output_dir, view):
    tab.open(f"/compare?corpus=late&ref=early&show={view}")
    ready(tab, "Compare with")
    deadline = time.time() + 60
    drawn = ".stage canvas" if view == "map" else '[data-testid="stPlotlyChart"] .main-svg'
    while not tab.page.locator(drawn).count() and view != "terms":
        assert time.time() < deadline, "no chart drawn"
        time.sleep(0.25)
    tab.settle()
    assert tab.params()["show"] == [view]  # the link reopened this section
    if view == "matching":
        assert tab.page.locator(".sankey-node").count() >= 2
    if view == "map":  # the reference's map with the new corpus's papers on top
        late = len(cmp.load_side(root, "late").doc_ids)
        assert (
            tab.page.evaluate("() => window.__atlasMaps.filter(m => m.el.isConnected)[0].opts.overlay.length") == late
        )
    tab.shot(output_dir, f"compare-{view}", full=True)


def test_lineage_draws_the_flow_and_follows_a_topic(tab, output_dir):
    tab.open("/lineage?corpus=all")
    ready(tab, "Follow the roots of")
    deadline = time.time() + 60
    while not tab.page.locator(".sankey-node").count():
        assert time.time() < deadline, "no flow chart drawn"
        time.sleep(0.25)
    tab.shot(output_dir, "lineage-overview", full=True)
    tab.open("/lineage?corpus=all&topic=1")
    ready(tab, "papers of")
    assert tab.params()["topic"] == ["1"]
    assert tab.page.locator(".sankey-node").count() >= 2
    tab.shot(output_dir, "lineage-topic", full=True)


def _add_to_tour(tab, note: str, section: str | None = None) -> None:
    """The sidebar's "Add this view to the tour", as a user fills it."""
    tab.page.locator('[data-testid="stSidebar"] [data-testid="stPopoverButton"]', has_text="to the tour").click()
    tab.page.get_by_label("Note shown with this view").fill(note)
    if section:
        tab.page.get_by_label("Start the view at").click()
        tab.page.get_by_role("option", name=section).click()
    tab.page.locator(".st-key-tour_add button").click()
    tab.page.get_by_text("Added as step").wait_for()
    tab.settle()


def _chart_font(tab) -> float:
    """The base font size of the first plotly chart drawn on the page (its layout as drawn)."""
    return tab.page.evaluate(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter(p => p.isConnected)[0]._fullLayout.font.size"
    )


def test_what_changed_and_lineage_views_join_a_tour(browser, server, root, output_dir):
    from pipeline.core import artifacts, schema

    topics = artifacts.read_table(artifacts.corpus_path(root, "all"), schema.TOPICS)
    from pipeline.model.label_evidence import shown_labels

    label = dict(zip(topics["topic"], shown_labels(topics), strict=True))[1]  # topic 1's label as the app shows it
    big = Tab(browser, server, 1920, 1080)
    try:
        big.open("/compare?corpus=late&ref=early&show=shares")
        ready(big, "Share of papers")
        big.wait_for_url(r"show=shares")  # the view the step will record
        normal = _chart_font(big)
        _add_to_tour(big, "Shares then and now <b>with intervals</b>")
        big.open("/lineage?corpus=all&topic=1")
        ready(big, "Follow the roots of")
        assert big.params()["periods"] == ["2020-2022,2023-2024"]  # the link names the periods it shows
        _add_to_tour(big, "Where planning and search comes from", "the flow of topics")
        big.page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Tours").click()
        big.wait_for_url(r"/tour\?")
        big.settle()
        main = big.page.locator('[data-testid="stMain"]').inner_text()
        assert "What changed: late vs early · topic shares" in main
        assert f"Topic lineage: roots of {label}, 2020–2022 to 2023–2024 · the flow of topics" in main
        big.shot(output_dir, "compare-tour-editor")

        big.page.get_by_role("link", name="Present").click()  # step 1 reopens the same view, with its note
        big.wait_for_url(r"/compare\?.*step=1")
        ready(big, "Share of papers")
        shown = {k: big.params()[k][0] for k in ("corpus", "ref", "show")}
        assert shown == {"corpus": "late", "ref": "early", "show": "shares"}
        bar = big.page.locator(".st-key-tour_bar").inner_text()
        assert "step 1 of 2: What changed: late vs early · topic shares" in bar
        assert "Shares then and now <b>with intervals</b>" in bar  # the note, as text
        assert not big.page.locator('[data-testid="stSidebar"]').is_visible()
        assert _chart_font(big) == normal * 1.5  # chart text for a projector (present.scale)
        big.shot(output_dir, "compare-tour-step1-1920x1080")

        big.page.keyboard.press("ArrowRight")
        big.wait_for_url(r"/lineage\?.*step=2")
        ready(big, "Where the topics come from")
        assert big.params()["topic"] == ["1"] and big.params()["at"] == ["flow"]
        assert "Where planning and search comes from" in big.page.locator(".st-key-tour_note").inner_text()
        deadline = time.time() + 15  # the step starts at the flow chart's heading, below the sticky bar
        while True:
            top, bar_bottom = big.page.evaluate(
                "() => [document.getElementById('flow').getBoundingClientRect().top,"
                " document.querySelector('.st-key-tour_bar').getBoundingClientRect().bottom]"
            )
            if bar_bottom - 5 <= top < 400:
                break
            assert time.time() < deadline, (top, bar_bottom)
            time.sleep(0.25)
        assert big.page.locator(".sankey-node").count() >= 2
        big.shot(output_dir, "compare-tour-step2-1920x1080")
        big.page.keyboard.press("Escape")
        big.wait_for_url(r"/lineage\?(?!.*tour)")
        big.page.locator('[data-testid="stSidebar"]').wait_for(state="visible")
        assert not big.errors and not big.dialogs, big.errors + big.dialogs
    finally:
        big.close()


def test_the_offline_html_downloaded_from_what_changed_holds_the_comparison(browser, tab, tmp_path, output_dir):
    from tests.test_export import Offline

    tab.open("/compare?corpus=late&ref=early&show=terms")
    ready(tab, "Log-odds ratios")
    with tab.page.expect_download() as download:
        tab.page.get_by_role("button", name="Offline HTML: corpus and what changed").click()
    assert download.value.suggested_filename == "late-vs-early.html"
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    offline = Offline(browser, path, "#" + tab.url().split("?", 1)[1])  # the page's own link, after #
    try:
        assert offline.page.evaluate("() => window.__atlas.view()") == "compare"
        assert offline.page.inner_text("#cmp-title") == "What changed: late against early"
        assert offline.page.evaluate("() => window.__atlas.refMap().debug().drawn") > 0
        assert "show=terms" in offline.page.evaluate("() => location.hash")
    finally:
        offline.close()
