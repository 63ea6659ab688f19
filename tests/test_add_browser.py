"""Adding a corpus in a real browser (Debian's Chromium through Playwright), servers on 127.0.0.1.

An editor drops a spreadsheet with unusual column names and a PDF, maps the columns with the
select boxes, builds (the worker runs ``python -m pipeline build`` with the hashing test embedder),
watches it from a second tab and opens the new corpus's map; a build is cancelled and the corpus
stays as it was; a read-only server offers no upload at all. Screenshots go to tests/output/.

These tests fail, never skip, when Chromium is missing: install it with ``make browser``.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.services import job_queue
from explorer.state import data, uploads
from pipeline.core import artifacts
from tests.test_add import new_rows, unusual_csv
from tests.test_browser import MAP_DRAWN, MAP_POINTS, Tab, serve
from tests.test_share import TOKEN, files_under

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def root(small_artifacts, tmp_path_factory) -> Path:
    """A private copy of the fixture artifacts (corpus "small", built from a file still on disk)."""
    root = tmp_path_factory.mktemp("add") / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    return root


@pytest.fixture(scope="module")
def hold(tmp_path_factory) -> Path:
    """While this file exists, builds started from the page wait as their cluster stage starts."""
    return tmp_path_factory.mktemp("hold") / "hold"


@pytest.fixture(scope="module")
def server(root, hold, output_dir) -> Iterator[str]:
    # builds started from the page use the test encoder through tests/serve_app.py
    with serve(root, output_dir / "add-server.log", env={"ATLAS_TEST_BUILD_HOLD": str(hold)}) as base:
        yield base


def main_text(tab: Tab) -> str:
    return tab.page.locator('[data-testid="stMain"]').inner_text()


def choose(tab: Tab, label: str, option: str) -> None:
    """Pick ``option`` in the select box labelled ``label`` (in the main area), until it shows it:
    a rerun that redraws the box closes its open list, so the list is opened again then."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = tab.page.locator('[data-testid="stMain"]').get_by_label(label, exact=True)
    for _ in range(5):
        tab.settle()
        box.click()
        try:
            tab.page.get_by_role("option", name=option, exact=True).click(timeout=10_000)
        except PlaywrightTimeout:
            continue
        tab.settle()
        return
    raise AssertionError(f"{option!r} never appeared in the list of {label!r}")


def pick(tab: Tab, option: str, *, shows) -> None:
    """Click the radio choice ``option`` until the locator ``shows`` (what that choice draws) is
    visible: a click that lands while a rerun redraws the radios is tried again, never waited out."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(5):
        tab.settle()
        tab.page.get_by_text(option, exact=True).click()
        try:
            shows.wait_for(timeout=20_000)
        except PlaywrightTimeout:
            continue
        tab.settle()
        return
    raise AssertionError(f"choosing {option!r} never showed its controls; the page says:\n{main_text(tab)[:3000]}")


def wait_for_text(tab: Tab, pattern: str, timeout: float = 120) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        text = main_text(tab)
        if re.search(pattern, text):
            return text
        time.sleep(0.3)
    raise AssertionError(f"{pattern!r} never appeared; the page says:\n{main_text(tab)[:3000]}")


def test_upload_map_the_columns_build_and_open_the_map(tab, browser, server, root, tmp_path, output_dir):
    spreadsheet = tmp_path / "reading group.csv"
    spreadsheet.write_bytes(unusual_csv(new_rows(40), short=(3,)))
    slides = tmp_path / "slides.pdf"
    slides.write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3 binary")
    tab.open("/add")
    tab.page.locator('[data-testid="stMain"] input[type="file"]').set_input_files([spreadsheet, slides])
    tab.wait_for_text('[data-testid="stMain"]', "This file will be left out.")  # the preview ran
    text = main_text(tab)
    assert "slides.pdf: expected text (text), found a PDF document (extract its text first)." in text
    assert "This file will be left out." in text
    assert "the app chose Paper Body" in text  # no column is named like an abstract: the longest texts
    for label, column in (("Title", "Headline"), ("Year", "Yr"), ("Venue", "Where")):
        choose(tab, label, column)
    assert tab.page.get_by_label("Name", exact=True).input_value() == "reading-group"
    tab.shot(output_dir, "add-1-mapped", full=True)
    tab.page.set_viewport_size({"width": 1280, "height": 800})
    tab.page.get_by_role("button", name="Build the corpus").click()
    wait_for_text(tab, r"Building reading-group|reading-group is ready")
    job = job_queue.list_jobs(root)[-1]  # the select boxes' mapping, given to the build
    assert job.columns == {"abstract": "Paper Body", "title": "Headline", "year": "Yr", "venue": "Where"}
    assert job.files == ("reading-group.csv",)  # the PDF was left out

    other = Tab(browser, server)  # a second tab (its own session) sees the same build
    try:
        other.page.goto(server + "/add")
        assert re.search(r"Building reading-group|reading-group is ready", wait_for_text(other, "reading-group"))
        assert not other.errors, other.errors
    finally:
        other.close()
    tab.page.reload()  # and so does this one after a reload
    text = wait_for_text(tab, r"reading-group is ready[\s\S]*row skipped", timeout=180)
    assert "reading-group is ready (just now): 39 papers in" in text and "1 row skipped while reading the files" in text
    tab.shot(output_dir, "add-2-done", full=True)
    tab.page.set_viewport_size({"width": 1280, "height": 800})
    with tab.page.expect_download() as download:
        tab.page.get_by_role("button", name="Download the ingest report (CSV)").click()
    report = Path(download.value.path()).read_text().splitlines()
    assert report[0] == "source_file,source_row,action,reason,detail" and len(report) == 2
    assert report[1].startswith('reading-group.csv,4,skipped,short_abstract,"abstract has 2 word(s), fewer than 8')

    tab.page.get_by_role("button", name="Open the map of reading-group").click()
    tab.wait_for_url(r"corpus=reading-group")
    tab.wait_for(MAP_DRAWN, timeout=120)  # the map page, not the add page it replaces
    tab.settle()
    assert len(tab.page.evaluate(MAP_POINTS)) == 39
    tab.page.locator('[data-testid="stSidebar"]').get_by_label("Corpus").click()  # the picker lists it
    assert tab.page.get_by_role("option", name="reading-group · 39 papers").count() == 1
    tab.shot(output_dir, "add-3-map")


def test_cancelling_a_build_leaves_the_corpus_as_it_was(tab, root, hold, tmp_path, output_dir):
    build = artifacts.corpus_path(root, "small").name
    more = tmp_path / "week 2.csv"
    more.write_bytes(unusual_csv(new_rows(80)[40:]).replace(b"Headline,Paper Body,Yr", b"title,abstract,year", 1))
    tab.open("/add")
    tab.page.locator('[data-testid="stMain"] input[type="file"]').set_input_files([more])
    tab.wait_for_text('[data-testid="stMain"]', "CSV · 40 records")  # the upload's rerun drew its preview
    into = tab.page.locator('[data-testid="stMain"]').get_by_label("Corpus", exact=True)  # that choice's box
    pick(tab, "Add them to a corpus", shows=into)
    choose(tab, "Corpus", "small")
    tab.page.get_by_text("Find the topics again from scratch").click()  # a full fit
    tab.settle()
    hold.touch()  # the build waits as its cluster stage starts, so it is still running when cancelled
    try:
        tab.page.get_by_role("button", name="Add the papers to small").click()
        wait_for_text(tab, r"Step [2-8] of 9")
        tab.shot(output_dir, "add-4-running")
        tab.page.get_by_role("button", name="Cancel").click()
        text = wait_for_text(tab, r"was cancelled", timeout=60)
    finally:
        hold.unlink(missing_ok=True)
    assert "The build of small was cancelled" in text and "small is as it was before" in text
    tab.shot(output_dir, "add-5-cancelled")
    # the previous artifacts are intact and load; the files of the cancelled build are gone again
    assert artifacts.corpus_path(root, "small").name == build
    assert data.load_corpus(root, "small").n_papers == 137
    assert not (root / uploads.INPUTS / "small").exists()
    assert [p.name for p in (root / artifacts.BUILDS / "small").iterdir()] == [build]  # no half-written build left
    job = job_queue.list_jobs(root)[-1]
    assert (job.corpus, job.status) == ("small", "cancelled") and job.exit_code != 0


def test_a_read_only_server_offers_no_upload(small_artifacts, browser, tmp_path, output_dir):
    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    before = files_under(root)
    with serve(root, output_dir / "add-readonly.log", args=("--read-only",), env={"ATLAS_EDITOR_TOKEN": TOKEN}) as base:
        viewer = Tab(browser, base)
        try:
            viewer.open("/add")
            assert "read-only: adding corpora is switched off" in main_text(viewer)
            assert viewer.page.locator('input[type="file"]').count() == 0
            assert viewer.page.locator('[data-testid="stSidebar"] a[href*="add"]').count() == 0
            viewer.shot(output_dir, "add-read-only")
            assert not viewer.errors, viewer.errors
        finally:
            viewer.close()
        editor = Tab(browser, base)
        try:
            editor.open(f"/add?token={TOKEN}")
            assert editor.page.locator('[data-testid="stMain"] input[type="file"]').count() == 1
            assert editor.page.locator('[data-testid="stSidebar"] a[href*="add"]').count() == 1
            assert not editor.errors, editor.errors
        finally:
            editor.close()
    assert files_under(root) == before, "a session of a read-only server wrote a file"
