"""The "What changed" and "Topic lineage" pages in Chromium: every view draws, the sections and the
closest prior work are links that reopen the same view, and the console stays clean.

Screenshots of every view are left in tests/output/compare-*.png for a human to look at.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline import compare as cmp
from tests.test_browser import serve

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
