"""What the screen shows, in Chromium (Playwright) on the fixture corpus: present mode on a
projector (text that grows, a topic step that opens at the topic, a step that opens at a section,
arrow keys after a click in a table, steps named by what they show, buttons never cut), a tour
being assembled that survives a reload, the keyword picker's Enter, weak labels marked, and a
query that reopens as it ran. Screenshots go to tests/output/ for a human to look at.

These tests fail, never skip, when Chromium is missing: install it with ``make browser``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote_plus, urlsplit

import pandas as pd
import pytest
from playwright.sync_api import expect

from explorer.state import data, state, tours
from pipeline.core import artifacts, schema
from pipeline.model.label_evidence import WEAK_MARK
from tests.test_browser import Tab, serve

pytestmark = pytest.mark.browser

PROJECTOR = (1400, 900)


@pytest.fixture(scope="module")
def root(small_artifacts, tmp_path_factory) -> Path:
    """A private copy of the fixture artifacts where topic 0's label is weak (support 0.05)."""
    root = tmp_path_factory.mktemp("truth") / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    folder = artifacts.corpus_path(root, "small")
    topics = pd.read_parquet(folder / schema.TOPICS)
    topics.loc[topics["topic"] == 0, "label_support"] = 0.05
    topics.to_parquet(folder / schema.TOPICS, index=False)
    return root


@pytest.fixture(scope="module")
def server(root, output_dir) -> Iterator[str]:
    with serve(root, output_dir / "truth-server.log") as base:
        yield base


@pytest.fixture(scope="module")
def corpus(root):
    return data.load_corpus(root, "small")


def _tour(*steps) -> str:
    return tours.encode(tours.Tour("projector", tuple(tours.make_step(p, q, n) for p, q, n in steps), "small"))


def _font(tab: Tab, selector: str) -> float:
    return tab.page.evaluate(f"() => parseFloat(getComputedStyle(document.querySelector({selector!r})).fontSize)")


CHART_FONTS = """() => Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot'))
                     .filter(gd => gd._fullLayout).map(gd => gd._fullLayout.font.size)"""


def _chart_fonts(tab: Tab, timeout: float = 30) -> list[float]:
    """The base font size of every plotly chart on the page, as drawn (waiting for the first one)."""
    tab.wait_for(f"() => ({CHART_FONTS})().length > 0", timeout=timeout)
    return tab.page.evaluate(CHART_FONTS)


def _truncated_buttons(tab: Tab) -> list[str]:
    return tab.page.evaluate(
        """() => Array.from(document.querySelectorAll('[data-testid="stMain"] button, .st-key-tour_bar button'))
                 .filter(b => b.offsetParent !== null)
                 .filter(b => Array.from(b.querySelectorAll('p, span, div')).some(e => e.scrollWidth > e.clientWidth + 1))
                 .map(b => b.innerText)"""
    )


#: Whether the element of a selector is near the top of the window (a page function).
IN_VIEW = """(selector) => { const e = document.querySelector(selector); if (!e) return false;
                const r = e.getBoundingClientRect(); return r.top >= -2 && r.top < window.innerHeight * 0.5; }"""


def _in_view(tab: Tab, selector: str) -> bool:
    return tab.page.evaluate(IN_VIEW, selector)


def test_present_mode_on_a_projector(browser, server, corpus, output_dir):
    topic = int(corpus.topic_ids[1])
    label = corpus.topic_label(topic)
    blob = _tour(
        ("topics", {"corpus": ["small"]}, "All the topics"),
        ("topics", {"corpus": ["small"], "topic": [str(topic)]}, "One topic"),
        ("trends", {"corpus": ["small"], "at": ["emerging"]}, "What rose"),
    )
    tab = Tab(browser, server, *PROJECTOR)
    try:
        tab.open(f"/topics?corpus=small&tourdata={blob}&step=1")
        normal = 15.0  # figures.FONT
        assert min(_chart_fonts(tab)) >= normal * 1.4  # charts grow with the note
        # a click in the table focuses the grid; the arrow keys still turn the slides
        box = tab.page.locator('[data-testid="stDataFrame"]').first.bounding_box()
        tab.page.mouse.click(box["x"] + 160, box["y"] + 60)
        # the grid has the keyboard now
        tab.wait_for("() => document.activeElement?.closest('[data-testid=\"stDataFrame\"]') != null")
        tab.page.keyboard.press("ArrowRight")
        tab.wait_for_url(r"step=2")
        tab.wait_for_text(".st-key-tour_note", "step 2 of 3")  # step 2 drawn, its run finished
        assert tab.page.locator('[data-testid="stDataFrame"]').count() == 0  # no 59-row table first
        assert f"Topic {topic} · {label}" in tab.page.locator("h2").first.inner_text()
        assert _in_view(tab, "#topic")
        assert f"step 2 of 3: Topic: {label}" in tab.page.locator(".st-key-tour_note").inner_text()
        assert _truncated_buttons(tab) == []
        tab.shot(output_dir, "truth-present-topic-1400x900")
        tab.page.keyboard.press("ArrowRight")
        tab.wait_for_url(r"/trends\?.*step=3")
        tab.wait_for_text(".st-key-tour_note", "step 3 of 3")
        tab.wait_for(f"() => ({IN_VIEW})('#emerging')")  # the step points at a section
        bar = tab.page.locator(".st-key-tour_bar").bounding_box()
        assert bar["y"] >= -1 and bar["y"] + bar["height"] <= PROJECTOR[1] / 2  # the note stays on screen
        assert "Trends: emerging and declining" in tab.page.locator(".st-key-tour_note").inner_text()
        assert min(_chart_fonts(tab)) >= normal * 1.4
        tab.shot(output_dir, "truth-present-emerging-1400x900")
        assert not tab.errors, tab.errors
    finally:
        tab.close()
    big = Tab(browser, server, 1920, 1080)
    try:
        big.open(f"/trends?corpus=small&tourdata={blob}&step=3")
        assert _truncated_buttons(big) == [] and min(_chart_fonts(big)) >= normal * 1.4
        big.shot(output_dir, "truth-present-emerging-1920x1080")
        assert not big.errors, big.errors
    finally:
        big.close()


def test_charts_keep_their_size_outside_present_mode(tab):
    tab.open("/trends?corpus=small")
    assert set(_chart_fonts(tab)) == {15}


def test_a_tour_being_assembled_survives_a_reload(browser, server, output_dir):
    tab = Tab(browser, server, *PROJECTOR)
    try:
        tab.open("/trends?corpus=small")
        tab.page.get_by_text("Add this view to the tour").click()
        tab.page.get_by_label("Note shown with this view").fill("Keywords that rose")
        tab.page.get_by_role("button", name="Add to the tour").click()
        expect(tab.page.get_by_text("Add to the tour (1 step)")).to_have_count(1, timeout=60_000)  # its rerun ran
        tab.settle()
        # the draft reaches local storage on the next render
        tab.wait_for("() => !!window.localStorage.getItem('abstract-atlas:tour-draft')")
        tab.page.reload()
        tab.settle()
        expect(tab.page.get_by_text("Add to the tour (1 step)")).to_have_count(1, timeout=60_000)
        tab.page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Tours").click()
        tab.wait_for_url(r"/tour\?")
        tab.settle()
        main = tab.page.locator('[data-testid="stMain"]')
        assert "Trends: keyword trends" in main.inner_text()  # named by what it shows
        assert main.locator("input[value='Keywords that rose']").count() == 1
        assert tab.page.get_by_label("Tour name").input_value() == ""  # an unnamed draft stays unnamed
        tab.shot(output_dir, "truth-tour-editor", full=True)
        assert not tab.errors, tab.errors
    finally:
        tab.close()


def test_enter_in_the_keyword_picker_picks_the_best_match(tab, corpus):
    term = corpus.terms["term"].iat[0]
    tab.open("/trends?corpus=small&kw=")
    picker = tab.page.locator('[data-testid="stMain"] [data-testid="stMultiSelect"] input').first
    picker.click()
    picker.type(term)
    # the list has been filtered by what was typed: the term itself comes first
    tab.wait_for(
        """(term) => { const o = document.querySelector('[role="option"]');
                       return !!o && o.innerText.toLowerCase().includes(term.toLowerCase()); }""",
        arg=term,
    )
    matches = tab.page.locator('[role="option"]').all_inner_texts()
    assert len(matches) >= 1 and not any("matches" in m.lower() for m in matches)
    tab.page.keyboard.press("Enter")
    tab.wait_for_url(r"kw=[^&]")
    tab.settle()
    assert tab.params()["kw"] == [matches[0]]


def test_weak_labels_are_marked_on_the_pages_that_show_labels(tab, corpus):
    label = corpus.topic_label(0)
    assert label.endswith(WEAK_MARK)
    row = int((corpus.papers["topic"] == 0).to_numpy().nonzero()[0][0])
    for path in (
        "/topics?corpus=small&topic=0",
        f"/paper?corpus=small&paper={quote_plus(corpus.papers['doc_id'].iat[row])}",
        "/search?corpus=small&q=" + quote_plus(corpus.papers["title"].iat[row]),
    ):
        tab.open(path)
        assert label in tab.page.locator('[data-testid="stMain"]').inner_text(), path
    tab.open("/topics?corpus=small&topic=0")
    assert "because its evidence is weak" in tab.page.locator('[data-testid="stMain"]').inner_text()


def test_a_long_query_reopens_as_it_ran(tab, browser, server):
    query = ("planning agents under uncertainty " * 700)[:21_300]
    tab.open("/search?corpus=small")
    box = tab.page.locator("input[aria-label='Search']")
    box.fill(query)  # a paste of 21,300 characters
    box.press("Enter")
    tab.wait_for_url(r"q=")
    tab.settle()
    ran = box.input_value()
    assert len(ran) <= state.MAX_QUERY_CHARS and ran == tab.params()["q"][0]  # the box shows what ran
    said = re.search(r"had ([\d,]+) characters", tab.page.locator('[data-testid="stMain"]').inner_text())
    assert said and int(said.group(1).replace(",", "")) >= 21_000, said  # and says it was cut
    url = tab.url()
    other = Tab(browser, server)
    try:
        other.page.goto(url)
        other.settle()
        assert other.page.locator("input[aria-label='Search']").input_value() == ran
        first = other.page.locator('[data-testid="stMain"] [data-testid="stPageLink-NavLink"]').first
        mine = tab.page.locator('[data-testid="stMain"] [data-testid="stPageLink-NavLink"]').first
        assert (
            parse_qs(urlsplit(first.get_attribute("href")).query)["paper"]
            == parse_qs(urlsplit(mine.get_attribute("href")).query)["paper"]
        )
        assert not other.errors, other.errors
    finally:
        other.close()
