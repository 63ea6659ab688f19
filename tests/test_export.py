"""The offline HTML export: one self-contained file that works from disk with no network.

Unit tests read the written file (no external references, the data escaped and complete, the CLI).
Browser tests open it from ``file://`` in Debian's Chromium with the network off and every
non-``file:`` request aborted and recorded: the map draws every point, search ranks, clicks open
papers, filters reach the table and the map, downloads work, hostile records stay text, and the
console stays free of errors. They fail, never skip, when Chromium is missing.
"""

from __future__ import annotations

import csv
import json
import re
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from pipeline import artifacts, cli, schema
from pipeline.export import export_html

DATA_RE = re.compile(r'<script type="application/json" id="atlas-data">(.*?)</script>', re.S)
PLOTLY_RE = re.compile(r'<script id="plotly-js">.*?</script>', re.S)
HOSTILE_TITLE = "<script>window.__xss=1</script>Adversarial prompts for vision-language agents"
WORD = re.compile(r"[^\W_]+")  # the page's tokens: runs of letters and digits (JS /[\p{L}\p{N}]+/u)


@pytest.fixture(scope="module")
def exported(small_artifacts, tmp_path_factory) -> Path:
    return export_html(small_artifacts, "small", tmp_path_factory.mktemp("export") / "small.html")


@pytest.fixture(scope="module")
def page_html(exported) -> str:
    return exported.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def papers(small_artifacts) -> pd.DataFrame:
    return pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS)


@pytest.fixture(scope="module")
def topics(small_artifacts) -> pd.DataFrame:
    return pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.TOPICS)


def embedded(html: str) -> dict:
    match = DATA_RE.search(html)
    assert match, "no #atlas-data script in the export"
    return json.loads(match.group(1))


# ---- unit -------------------------------------------------------------------------------------------


def test_the_export_references_nothing_outside_the_file(page_html):
    own = PLOTLY_RE.sub("", page_html)  # plotly.js holds attribution URLs for map tiles we never use
    assert len(own) < len(page_html) - 1_000_000, "plotly.js is not inlined"
    assert not re.search(r"<script[^>]*\ssrc\s*=", page_html, re.I)
    assert not re.search(r"<(link|iframe|img|object|embed|base)\b", own, re.I)
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", own, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", own, re.I)
    assert not re.search(r"https?://", DATA_RE.sub("", own))  # the page itself names no URL at all
    assert "default-src 'none'" in own  # the CSP also forbids any fetch in the reviewer's browser


def test_a_title_with_script_tags_cannot_leave_the_data_element(page_html):
    assert HOSTILE_TITLE not in page_html
    assert "</script>Adversarial" not in page_html
    assert page_html.lower().count("</script") == 3  # plotly.js, the data, the page's script
    assert page_html.count("<!--") == 1  # only the template's own header comment
    data = embedded(page_html)
    assert HOSTILE_TITLE in data["papers"]["t"]  # intact once parsed


def test_every_paper_and_topic_is_embedded(page_html, papers, topics):
    data = embedded(page_html)
    p, meta = data["papers"], data["meta"]
    assert p["id"] == papers["doc_id"].tolist()
    assert all(len(v) == len(papers) for k, v in p.items() if k != "td")
    assert p["a"] == papers["abstract"].tolist()
    assert all(re.fullmatch(r"-?\d+(\.\d{1,3})?", str(v)) for v in p["x"] + p["y"])  # rounded
    assert meta["name"] == "small" and meta["papers"] == 137 and meta["topics"] == len(topics)
    assert meta["years"] == [2020, 2024] and meta["built"] and meta["model"]
    assert data["topics"]["id"] == topics["topic"].tolist()
    assert data["topics"]["size"] == topics["size"].tolist()
    assert [meta["venues"][v] for v in p["v"]] == papers["venue"].tolist()


def test_only_http_links_are_exported(page_html, papers):
    urls = dict(zip(embedded(page_html)["papers"]["id"], embedded(page_html)["papers"]["u"], strict=True))
    assert urls["latex-1"] == "https://example.org/paper"
    assert urls["xss-1"] is None  # javascript:alert(1) in the input
    assert "javascript:alert" not in page_html


def test_curated_tables_replace_the_stored_ones(small_artifacts, papers, topics, tmp_path):
    merged = papers.assign(topic=0)  # e.g. topic curation merged every topic into topic 0
    renamed = topics.assign(label=["<b>Agents</b> & planning"] + topics["label"].tolist()[1:])
    out = export_html(
        small_artifacts, "small", tmp_path / "curated.html", papers=merged, topics=renamed[["topic", "label"]]
    )
    data = embedded(out.read_text(encoding="utf-8"))
    assert data["topics"]["id"] == [0] and data["topics"]["size"] == [137]
    assert data["topics"]["label"] == ["<b>Agents</b> & planning"]
    assert data["topics"]["kw"] == [[]]  # not given: none
    assert data["meta"]["topics"] == 1


def test_missing_columns_are_reported(small_artifacts, papers, tmp_path):
    with pytest.raises(artifacts.ArtifactError, match="abstract"):
        export_html(small_artifacts, "small", tmp_path / "x.html", papers=papers.drop(columns="abstract"))


def test_cli_writes_the_file_and_prints_its_path(small_artifacts, tmp_path, capsys):
    out = tmp_path / "sub" / "review.html"
    assert cli.main(["export", "small", "--artifacts", str(small_artifacts), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert str(out) in printed and "MB" in printed
    assert out.stat().st_size > 1_000_000


def test_cli_writes_to_exports_in_the_current_folder_by_default(small_artifacts, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["export", "small", "--artifacts", str(small_artifacts)]) == 0
    assert (tmp_path / "exports" / "small.html").is_file()
    assert "exports/small.html" in capsys.readouterr().out


def test_cli_reports_an_unknown_corpus(small_artifacts, tmp_path, capsys):
    assert cli.main(["export", "nope", "--artifacts", str(small_artifacts), "--out", str(tmp_path / "n.html")]) == 1
    assert "no corpus named 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "n.html").exists()


# ---- real browser -------------------------------------------------------------------------------------

POINTS = """() => {
    const gd = document.getElementById('map'), L = gd._fullLayout, box = gd.getBoundingClientRect();
    const t = gd._fullData[1];
    return Array.from(t.customdata, (i, k) => ({i: i, x: box.left + L._size.l + L.xaxis.l2p(t.x[k]),
                                               y: box.top + L._size.t + L.yaxis.l2p(t.y[k]), top: box.top}));
}"""
ROW_IDS = "() => Array.from(document.querySelectorAll('#rows tr[data-id]'), r => r.dataset.id)"
SHOWN = "() => Number(document.getElementById('count').dataset.shown)"
MAP_COUNT = "() => document.getElementById('map').data[1].x.length"


class Offline:
    """The export opened from disk in a context with the network off; records what must not happen."""

    def __init__(self, browser, file: Path):
        self.context = browser.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
        self.context.set_offline(True)
        self.requests: list[str] = []  # anything not file:, data: or blob:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("request", self._request)
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("dialog", self._dialog)
        self.page.goto(file.as_uri())
        self.page.wait_for_function("() => window.__atlas && window.__atlas.ready", timeout=60_000)
        self.load_ms = self.page.evaluate("() => window.__atlas.loadMs")

    def _route(self, route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            self.requests.append(route.request.url)
            route.abort()

    def _request(self, request) -> None:
        if not request.url.startswith(("file:", "data:", "blob:")):
            self.requests.append(request.url)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def search(self, text: str) -> list[str]:
        self.page.fill("#q", text)
        self.page.press("#q", "Enter")
        self.page.wait_for_function("() => window.__atlas.state.q !== ''")
        return self.page.evaluate(ROW_IDS)

    def xss_fired(self) -> bool:
        return self.page.evaluate("() => window.__xss !== undefined")


@pytest.fixture
def tab(browser, exported):
    t = Offline(browser, exported)
    yield t
    requests, errors, dialogs, fired = t.requests, t.errors, t.dialogs, t.xss_fired()
    t.context.close()
    assert not requests, f"the export tried to reach the network: {requests}"
    assert not dialogs, f"dialogs opened: {dialogs}"
    assert not fired, "a hostile record ran script"
    assert not errors, "\n".join(errors)


def _unique_word(papers: pd.DataFrame, doc_id: str) -> str:
    """A word of the paper's abstract that no other paper uses and that begins no other word."""
    docs = {
        d: set(WORD.findall(f"{t} {a}".lower()))
        for d, t, a in zip(papers["doc_id"], papers["title"], papers["abstract"], strict=True)
    }
    df = Counter(w for words in docs.values() for w in words)
    vocab = set(df)
    own = set(WORD.findall(papers.set_index("doc_id").loc[doc_id, "abstract"].lower()))
    ok = [
        w
        for w in own
        if df[w] == 1 and len(w) >= 6 and not w.isdigit() and not any(v != w and v.startswith(w) for v in vocab)
    ]
    assert ok, f"no unique word in {doc_id}'s abstract"
    return sorted(ok, key=lambda w: (-len(w), w))[0]


@pytest.mark.browser
def test_the_map_draws_every_point_and_the_table_counts_every_paper(tab, papers, topics):
    page = tab.page
    assert page.evaluate(MAP_COUNT) == len(papers) == 137
    assert sorted(page.evaluate("() => document.getElementById('map').data[1].customdata")) == list(range(137))
    assert page.locator("#map canvas").count() >= 1  # WebGL
    assert page.evaluate(SHOWN) == 137 and "of 137" in page.inner_text("#page-info")
    assert len(page.evaluate(ROW_IDS)) == 50  # first page
    header = page.inner_text("header")
    assert "small" in header and "137" in header and "2020" in header and "2024" in header and "built" in header
    assert page.locator("#topic-list button").count() == len(topics)
    labels = page.evaluate("() => document.getElementById('map').layout.annotations.map(a => a.text)")
    assert set(labels) <= {t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") for t in topics["label"]}
    assert labels, "no topic label on the map"
    print(f"export loaded in {tab.load_ms:.0f} ms")


@pytest.mark.browser
def test_a_keyword_puts_its_paper_first_and_a_click_shows_its_abstract(tab, papers, output_dir):
    target = papers.iloc[len(papers) // 2]
    word = _unique_word(papers, target["doc_id"])
    ids = tab.search(word.upper())  # case-insensitive
    assert ids and ids[0] == target["doc_id"], (word, ids[:5])
    assert tab.page.evaluate(MAP_COUNT) == len(ids) == tab.page.evaluate(SHOWN)
    tab.page.click(f'#rows tr[data-id="{target["doc_id"]}"]')
    assert tab.page.inner_text("#d-title") == target["title"]
    assert tab.page.evaluate("() => document.getElementById('d-abstract').textContent") == target["abstract"]


@pytest.mark.browser
def test_search_ranks_by_matched_words(tab, papers, output_dir):
    words = [set(WORD.findall(f"{t} {a}".lower())) for t, a in zip(papers["title"], papers["abstract"], strict=True)]
    both = [d for d, w in zip(papers["doc_id"], words, strict=True) if {"makespan", "scheduling"} <= w]
    assert both == ["latex-1"]
    ids = tab.search("Scheduling makespan")
    assert ids[0] == "latex-1" and len(ids) > 1  # the paper with both words first, then partial matches
    tab.page.click('#rows tr[data-id="latex-1"]')
    link = tab.page.locator('#detail a[href="https://example.org/paper"]')
    assert link.count() == 1 and link.get_attribute("rel") == "noopener noreferrer"
    tab.page.locator("#topic-list button").nth(1).click()  # a topic highlighted on the map as well
    tab.page.click("#reset")
    tab.page.wait_for_function("() => Number(document.getElementById('count').dataset.shown) === 137")
    tab.page.fill("#q", "planning agents")
    tab.page.press("#q", "Enter")
    tab.page.wait_for_function("() => document.querySelectorAll('#rows tr[data-id]').length > 0")
    first = tab.page.evaluate(ROW_IDS)[0]
    tab.page.click(f'#rows tr[data-id="{first}"]')
    time.sleep(0.5)
    tab.page.screenshot(path=str(output_dir / "export.png"), full_page=True)


@pytest.mark.browser
def test_clicking_a_point_opens_its_paper(tab, papers):
    points = tab.page.evaluate(POINTS)
    assert len(points) == 137

    def isolation(p):
        return min((p["x"] - q["x"]) ** 2 + (p["y"] - q["y"]) ** 2 for q in points if q is not p)

    point = max((p for p in points if p["y"] > p["top"] + 60), key=isolation)  # clear of the modebar
    tab.page.mouse.move(point["x"], point["y"])
    tab.page.mouse.click(point["x"], point["y"])
    tab.page.wait_for_selector("#d-title")
    assert tab.page.inner_text("#d-title") == papers["title"].iloc[point["i"]]
    assert tab.page.evaluate("() => document.getElementById('map').data[2].x.length") == 1  # the ring marker


@pytest.mark.browser
def test_a_topic_click_filters_the_table_and_highlights_the_map(tab, papers, topics):
    small = topics.sort_values("size").iloc[0]
    tab.page.locator("#topic-list button", has_text=small["label"]).first.click()
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {small['size']}")
    gd = tab.page.evaluate(
        "() => { const d = document.getElementById('map').data; return {n: d[1].x.length, bg: d[0].visible}; }"
    )
    assert gd == {"n": small["size"], "bg": True}  # the others stay as grey context
    shown = tab.page.evaluate("() => document.getElementById('map').data[1].customdata")
    assert set(papers["topic"].iloc[shown]) == {small["topic"]}
    bold = tab.page.evaluate(
        "() => document.getElementById('map').layout.annotations.filter(a => a.text.startsWith('<b>')).length"
    )
    assert bold == 1
    assert tab.page.locator("#topic-list button.active").count() == 1
    tab.page.locator("#topic-list button", has_text=small["label"]).first.click()  # again: all topics
    tab.page.wait_for_function("() => Number(document.getElementById('count').dataset.shown) === 137")


@pytest.mark.browser
def test_year_and_venue_filters_reach_the_table_and_the_map(tab, papers):
    tab.page.select_option("#y0", "2023")
    tab.page.select_option("#y1", "2023")
    n2023 = int((papers["year"] == 2023).sum())
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {n2023}")
    assert tab.page.evaluate(MAP_COUNT) == n2023
    tab.page.click("#reset")
    venues = sorted(papers["venue"].unique())
    tab.page.select_option("#venue", str(venues.index("IJCAI 2021")))
    n = int((papers["venue"] == "IJCAI 2021").sum())
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {n}")
    assert tab.page.evaluate(MAP_COUNT) == n
    assert set(
        tab.page.evaluate("() => Array.from(document.querySelectorAll('#rows td.venue'), t => t.textContent)")
    ) == {"IJCAI 2021"}


@pytest.mark.browser
def test_hostile_records_show_their_markup_as_text(tab, papers):
    ids = tab.search("adversarial prompts vision")
    assert ids[0] == "xss-1"
    row_title = tab.page.evaluate("() => document.querySelector('#rows tr[data-id=\"xss-1\"] td.title').textContent")
    assert row_title.startswith(HOSTILE_TITLE)
    tab.page.click('#rows tr[data-id="xss-1"]')
    assert tab.page.evaluate("() => document.getElementById('d-title').textContent") == HOSTILE_TITLE
    abstract = tab.page.evaluate("() => document.getElementById('d-abstract').textContent")
    assert '<img src=x onerror="window.__xss=1">' in abstract and "[a link](javascript:window.__xss=1)" in abstract
    assert tab.page.locator("#detail img, #detail script, img").count() == 0
    assert tab.page.locator('a[href^="javascript"], #detail a').count() == 0  # its url was javascript:
    point = next(p for p in tab.page.evaluate(POINTS) if papers["doc_id"].iloc[p["i"]] == "xss-1")
    tab.page.mouse.move(point["x"], point["y"])
    tab.page.wait_for_selector("#map .hoverlayer .hovertext")
    hover = tab.page.evaluate("() => document.querySelector('#map .hoverlayer .hovertext').textContent")
    assert "<script>window.__xss=1</script>" in hover  # literal in plotly's hover label too
    assert not tab.xss_fired()


@pytest.mark.browser
def test_csv_of_the_current_selection_and_png_of_the_map_download(tab, papers, topics, tmp_path):
    small = topics.sort_values("size").iloc[0]
    tab.page.select_option("#topic-select", str(small["topic"]))
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {small['size']}")
    with tab.page.expect_download() as download:
        tab.page.click("#csv")
    path = tmp_path / "selection.csv"
    download.value.save_as(path)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == small["size"]
    expected = papers[papers["topic"] == small["topic"]]
    assert {r["doc_id"] for r in rows} == set(expected["doc_id"])
    by_id = {r["doc_id"]: r for r in rows}
    for doc_id, title, abstract in zip(expected["doc_id"], expected["title"], expected["abstract"], strict=True):
        assert by_id[doc_id]["title"] == title and by_id[doc_id]["abstract"] == abstract
    tab.page.hover("#map")
    with tab.page.expect_download() as download:
        tab.page.click('#map .modebar-btn[data-title="Download plot as a PNG"]')
    assert download.value.suggested_filename == "small-map.png"
    png = tmp_path / "map.png"
    download.value.save_as(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert tab.page.locator('#years .modebar-btn[data-title="Download plot as a PNG"]').count() == 1
