"""The offline export with a reference: what changed, in the file, offline.

Fixture corpora (hashing embedder): "late" (2023-2024) exported against "early" (2020-2022). Unit
tests decode the file's parts and hold them against the comparison the app shows; browser tests
open the file from ``file://`` in Chromium with the network off (``tests.test_export.Offline``): the
comparison's sections draw, the reference's map draws every reference paper with the new papers
on it, a novel paper opens in the corpus view, an app link or tour step of the What changed page
opens the same section, and a file without a reference is unchanged.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from explorer.state import tours
from pipeline.analysis import compare as cmp
from pipeline.analysis.comparison import Comparison
from pipeline.cli import cli
from pipeline.core import artifacts, schema
from pipeline.core.manifest import Manifest
from pipeline.export.export import export_html
from pipeline.export.export_compare import LISTED, PRIOR
from pipeline.formats.blobs import TITLE_CHARS, unpack
from pipeline.formats.palette import MANY_PLACED, placed_sizes
from tests.test_export import Offline, part, parts

SECTION_IDS = ("cmp-glance", "cmp-shares", "cmp-matching", "cmp-terms", "cmp-novelty", "cmp-map")


@pytest.fixture(scope="module")
def root(compare_artifacts, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export-compare") / "art"
    shutil.copytree(compare_artifacts, out, symlinks=True)
    return out


@pytest.fixture(scope="module")
def result(root) -> Comparison:
    return cmp.compare_builds(root, "late", "early")[0]


@pytest.fixture(scope="module")
def exported(root, result, tmp_path_factory) -> Path:
    return export_html(root, "late", tmp_path_factory.mktemp("x") / "late-vs-early.html", reference="early")


@pytest.fixture(scope="module")
def plain(root, tmp_path_factory) -> Path:
    return export_html(root, "late", tmp_path_factory.mktemp("x") / "late.html")


def compare_parts(html: str) -> dict:
    unzip = lambda name: json.loads(gzip.decompress(base64.b64decode(part(html, name))))  # noqa: E731
    return {
        "data": unzip("atlas-compare"),
        "points": unpack(base64.b64decode(part(html, "atlas-ref-points"))),
        "titles": unzip("atlas-ref-titles"),
    }


def table(root: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(artifacts.corpus_path(root, name) / schema.PAPERS).sort_values("row")


# ---- unit -------------------------------------------------------------------------------------------


def test_the_file_holds_the_comparison_the_app_shows(exported, result, root):
    html = exported.read_text(encoding="utf-8")
    d, own = compare_parts(html), parts(html)
    data, meta = d["data"], own["meta"]
    assert meta["compare"]["ref"] == "early" and meta["compare"]["titles"] is True
    assert data["summary"]["new"]["build_id"] == result.summary.new.build_id
    assert [r["topic"] for r in data["shares"]] == result.shares["topic"].tolist()
    assert [r["verdict"] for r in data["shares"]] == result.shares["verdict"].tolist()
    assert [r["lo_after"] for r in data["shares"]] == pytest.approx(result.shares["lo_after"].tolist())
    assert [t["term"] for t in data["terms"]] == result.terms["term"].tolist()
    assert [t["topic"] for t in data["new_topics"]] == result.matches.query("side == 'b'")["topic"].tolist()
    # The most novel papers, as rows of the file's own papers, with their closest prior work.
    ids = own["papers"]["id"]
    listed = result.papers.head(LISTED)
    assert [ids[r["row"]] for r in data["listed"]] == listed["doc_id"].tolist()
    early = table(root, "early").set_index("doc_id")
    for r, neighbours in zip(data["listed"], listed["neighbour_ids"], strict=True):
        assert [p[0] for p in r["prior"]] == list(neighbours)[:PRIOR]
        for doc_id, _ in r["prior"]:
            assert data["prior"][doc_id]["t"] == early.loc[doc_id, "title"]
    # Only the prior work's titles travel as records: never the reference's abstracts.
    assert set(data["prior"]) == {p[0] for r in data["listed"] for p in r["prior"]}
    abstracts = early["abstract"].dropna()
    assert not any(a[:80] in html for a in abstracts if len(a) > 80)
    decoded = json.dumps([d["data"], d["titles"]], ensure_ascii=False)
    assert not any(a[:80] in decoded for a in abstracts if len(a) > 80)
    # The reference's map: every paper, its topics' colours; the new papers on it.
    header, arrays = d["points"]
    assert header["n"] == len(early) and header["name"] == "early"
    assert arrays["x"].tolist() == pytest.approx(early["x"].astype("float32").tolist())
    assert len(data["overlay"]["row"]) == len(ids) and sum(data["overlay"]["far"]) == int(result.papers["far"].sum())
    assert data["overlay"]["sizes"] == list(placed_sizes(len(ids)))  # the marks the app draws (below)
    assert d["titles"]["t"] == [t[:TITLE_CHARS] for t in early["title"]]
    assert sum(data["novelty"]["counts"]) == len(ids)


def test_a_large_reference_travels_as_a_sample_without_its_titles(root, result, monkeypatch):
    from pipeline.export import export_compare
    from pipeline.export.export import data_ids, export_data

    monkeypatch.setattr(export_compare, "REF_MAP_MAX", 20)
    monkeypatch.setattr(export_compare, "REF_TITLES_MAX", 10)
    folder = artifacts.corpus_path(root, "late")
    own = export_data(
        "late", Manifest(), pd.read_parquet(folder / schema.PAPERS), pd.read_parquet(folder / schema.TOPICS)
    )  # fmt: skip
    papers, topics, _ = export_compare.reference_tables(root, "early")
    part = export_compare.compare_part(result, data_ids(own), papers, topics)
    header, arrays = unpack(part.ref_points.data)
    assert header["n"] == 20 and set(arrays["x"].tolist()) <= set(papers["x"].astype("float32").tolist())
    assert part.ref_titles is None and part.meta["titles"] is False
    assert part.meta["map_papers"] == 20 and part.meta["papers"] == len(papers)
    data = json.loads(gzip.decompress(part.data))
    assert all(w["t"] for w in data["prior"].values())  # the prior work keeps its titles
    assert len(header["topics"]) == len(topics)  # every topic keeps its colour and label


def test_the_file_stays_self_contained_and_hostile_text_stays_data(exported):
    html = exported.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\ssrc\s*=", html, re.I) and "plotly" not in html.lower()
    assert html.lower().count("</script") == 10  # the seven of every file and the comparison's three
    assert "<script>window.__xss" not in html  # the hostile title of "late" stays inside the data


def test_without_a_reference_the_file_has_no_comparison(plain):
    html = plain.read_text(encoding="utf-8")
    assert 'id="atlas-compare"' not in html and html.lower().count("</script") == 7
    assert "compare" not in parts(html)["meta"]


def test_cli_exports_with_a_reference_and_refuses_a_bad_one(root, tmp_path, capsys):
    out = tmp_path / "late.html"
    args = ["export", "late", "--artifacts", str(root), "--out", str(out)]
    assert cli.main([*args, "--reference", "early"]) == 0
    assert str(out) in capsys.readouterr().out and 'id="atlas-compare"' in out.read_text(encoding="utf-8")
    assert cli.main([*args, "--reference", "late"]) == 1
    assert "cannot be compared with itself" in capsys.readouterr().err
    assert cli.main([*args, "--reference", "nope"]) == 1
    assert "nope" in capsys.readouterr().err


def test_the_apps_download_with_a_reference_equals_the_cli_file(root, result):
    from explorer.services import downloads
    from explorer.state import data

    late, early = data.load_corpus(root, "late"), data.load_corpus(root, "early")
    page = downloads.offline_html(late, early, result)
    d = compare_parts(page)
    assert d["data"]["summary"]["reference"]["name"] == "early" and d["points"][0]["n"] == early.n_papers
    assert downloads.offline_html(late, early, result) is page  # built once
    assert 'id="atlas-compare"' not in downloads.offline_html(late)  # the plain file without a reference


# ---- real browser -------------------------------------------------------------------------------------


@pytest.mark.browser
def test_the_comparison_opens_offline_from_an_app_link(browser, exported, result, root, output_dir):
    t = Offline(browser, exported, "#corpus=late&ref=early&show=novelty", size=(1440, 1000))
    try:
        page = t.page
        assert page.evaluate("() => window.__atlas.view()") == "compare"
        assert not page.is_visible("main") and page.is_visible("#compare")
        assert page.inner_text("#cmp-title") == "What changed: late against early"
        for section in SECTION_IDS:
            assert page.is_visible(f"#{section}"), section
        glance = page.inner_text("#cmp-glance")
        for heading in ("What is new", "What grew", "What faded", "Far from everything before"):
            assert heading in glance
        far = int(result.papers["far"].sum())
        assert f"{far} of {len(result.papers)} papers" in glance
        own = result.matches[result.matches["side"] == "b"]
        unclear = len(cmp.unclear_topics(result.matches))  # the app's and the command line's number
        assert f"{unclear} of {len(own)} topics have no clear precursor" in glance
        assert "every one has earlier work close by" not in glance
        assert "62 new papers" in page.inner_text("#cmp-size") and "hints, not trends" in page.inner_text("#cmp-size")
        # Shares: one row per shown topic, the intervals in the tooltip; every topic in the table.
        rows = page.locator("#cmp-shares svg g[data-topic]")
        assert rows.count() == min(25, len(result.shares))
        assert page.locator("#cmp-shares details tbody tr").count() == len(result.shares)
        assert "change" in rows.first.locator("title").text_content()
        sides = result.terms["side"].value_counts()
        bars = min(15, sides.get("new", 0)) + min(15, sides.get("ref", 0))
        assert page.locator("#cmp-terms svg g[data-term]").count() == bars
        # The most novel papers with their closest prior work (titles of the reference's papers).
        items = page.locator("#cmp-novelty ol.novel > li")
        assert items.count() == min(LISTED, len(result.papers))
        first = result.papers.iloc[0]
        early = table(root, "early").set_index("doc_id")
        assert items.first.locator("button").get_attribute("data-id") == first["doc_id"]
        assert early.loc[first["neighbour_ids"][0], "title"] in items.first.inner_text()
        # The section the link named is on screen, below the sticky section bar.
        top = page.evaluate("() => document.getElementById('cmp-novelty').getBoundingClientRect().top")
        assert 0 <= top < 150, top
        page.screenshot(path=str(output_dir / "export-compare-novelty.png"))
        # The reference's map: every reference paper drawn, every new paper on top.
        page.click("#cmp-nav button[data-show=map]")
        page.wait_for_function("() => window.__atlas.refMap().el.dataset.drawn > 0")
        ref = page.evaluate("() => window.__atlas.refMap().debug()")
        assert ref["n"] == ref["drawn"] == len(early)
        assert page.evaluate("() => window.__atlas.refMap().opts.overlay.length") == len(result.papers)
        sizes = page.evaluate("() => window.__atlas.refMap().opts.overlay.map(o => [o.shape, o.size])")
        far, near = placed_sizes(len(result.papers))
        assert {tuple(x) for x in sizes} <= {("diamond", far), ("circle", near)}  # the app's marks
        assert "show=map" in page.evaluate("() => location.hash")
        page.screenshot(path=str(output_dir / "export-compare-map.png"))
        page.screenshot(path=str(output_dir / "export-compare.png"), full_page=True)
        # A novel paper opens in the corpus view, with its abstract.
        page.click("#cmp-nav button[data-show=novelty]")
        items.first.locator("button").click()
        page.wait_for_function("() => window.__atlas.view() === 'corpus' && document.getElementById('d-title')")
        assert page.is_visible("main") and not page.is_visible("#compare")
        assert "ref=" not in page.evaluate("() => location.hash")
        assert f"paper={first['doc_id']}" in page.evaluate("() => location.hash")
        t.settle()
    finally:
        t.close()


@pytest.mark.browser
def test_a_tour_step_of_what_changed_opens_its_section_in_the_file(browser, exported, output_dir):
    steps = (
        tours.make_step(
            "compare", {"corpus": ["late"], "ref": ["early"], "show": ["shares"]}, "Shares <i>then</i> and now"
        ),
        tours.make_step("lineage", {"corpus": ["late"], "topic": ["1"]}, "Not in the file"),
        tours.make_step("paper", {"corpus": ["late"], "paper": ["xss-1"]}, "A paper"),
    )
    blob = tours.encode(tours.Tour("demo", steps, "late"))
    t = Offline(browser, exported, f"#tourdata={blob}&step=1", size=(1920, 1080))
    try:
        page = t.page
        assert page.inner_text("#tour-note") == "Shares <i>then</i> and now"
        assert "What changed: late vs early · topic shares" in page.inner_text("#tour-where")
        assert page.evaluate("() => window.__atlas.view()") == "compare"
        page.wait_for_function("() => document.getElementById('cmp-shares').getBoundingClientRect().top < 200")
        font = page.evaluate("() => Number(document.querySelector('#cmp-shares svg text').getAttribute('font-size'))")
        assert font == pytest.approx(12.5 * 1.35)  # chart text for a projector
        assert page.evaluate("() => window.__atlas.refMap().opts.scale") == 1.5
        page.screenshot(path=str(output_dir / "export-compare-tour-1920x1080.png"))
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => window.__atlas.view() === 'corpus'")
        assert "Topic lineage page (not in this file)" in page.inner_text("#tour-where")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => document.getElementById('d-title')")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => window.__atlas.view() === 'compare'")
        page.keyboard.press("Escape")
        page.wait_for_function("() => document.getElementById('tour').hidden")
        font = page.evaluate("() => Number(document.querySelector('#cmp-shares svg text').getAttribute('font-size'))")
        assert font == pytest.approx(12.5)
    finally:
        t.close()


@pytest.mark.browser
def test_a_file_without_a_reference_is_unchanged_and_says_so_for_a_comparison_link(browser, plain):
    t = Offline(browser, plain, "#ref=early&show=shares")
    try:
        page = t.page
        assert page.evaluate("() => window.__atlas.view()") == "corpus"
        assert not page.is_visible("#views") and not page.is_visible("#compare") and page.is_visible("main")
        assert "not in this file" in page.inner_text("#note") and "--reference early" in page.inner_text("#note")
        drawn = page.evaluate("() => window.__atlas.map.debug()")
        assert drawn["drawn"] == drawn["n"] > 0
    finally:
        t.close()


def test_papers_placed_on_the_reference_map_are_drawn_smaller_when_many_in_the_app_and_the_file():
    # 2,594 papers of a conference drawn as 8-pixel dots with halos covered the reference's map
    from explorer.services import compare as cview

    for n in (MANY_PLACED, MANY_PLACED + 1):
        points = pd.DataFrame({"x": [0.0] * n, "y": [0.0] * n, "label": ["t"] * n, "colour": ["#000000"] * n,
                               "far": [i % 2 == 0 for i in range(n)]})  # fmt: skip
        marks = cview.overlay(points)
        far, near = placed_sizes(n)
        assert {m.size for m in marks if m.shape == "diamond"} == {far} and {
            m.size for m in marks if m.shape == "circle"
        } == {near}
    assert placed_sizes(MANY_PLACED + 1) < placed_sizes(MANY_PLACED)
