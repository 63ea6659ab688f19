"""The offline HTML export: one self-contained file that works from disk with no network.

Unit tests read the written file (no external references, the data escaped and complete, the
keyword index scoring exactly as the app's, the CLI). Browser tests open it from ``file://`` in
Debian's Chromium with the network off and every non-``file:`` request aborted and recorded: the
map (the app's own component) draws every point, search ranks as the app's keyword search, its CSV
holds the results, clicks open papers, filters reach the table and the map, a reading-list or tour
link opens, hostile records stay text, and the console stays free of errors. They fail, never
skip, when Chromium is missing.
"""

from __future__ import annotations

import base64
import csv
import gzip
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer.services import analysis, downloads, search
from explorer.state import data, readinglist, tours
from pipeline.analysis import bm25
from pipeline.analysis.compare import load_side
from pipeline.cli import cli
from pipeline.core import artifacts, schema
from pipeline.export.export import export_html
from pipeline.export.export_compare import reference_tables
from pipeline.formats.blobs import unpack
from pipeline.formats.ids import short_id, short_ids
from pipeline.model.label_evidence import WEAK_MARK, weak_labels_note

HOSTILE_TITLE = "<script>window.__xss=1</script>Adversarial prompts for vision-language agents"
#: Queries the app and the file must rank identically: phrases, repeats, stop words, case, digits,
#: punctuation, unknown words.
QUERIES = [
    "planning",
    "Scheduling makespan",
    "graph neural networks",
    "adversarial prompts vision",
    "the of planning planning",
    "multi-agent reinforcement learning",
    "multi-agent",
    "3d pose estimation",
    "zzzz unknownword",
    "learning",
]


def part(html: str, name: str) -> str:
    match = re.search(rf'<script type="application/(?:json|octet-stream)" id="{name}"[^>]*>(.*?)</script>', html, re.S)
    assert match, f"no #{name} in the export"
    return match.group(1)


def parts(html: str) -> dict:
    """Every data part of an exported page, decoded as the page decodes them."""
    unzip = lambda name: gzip.decompress(base64.b64decode(part(html, name)))  # noqa: E731
    header, arrays = unpack(base64.b64decode(part(html, "atlas-points")))
    return {
        "meta": json.loads(part(html, "atlas-meta")),
        "points": (header, arrays),
        "papers": json.loads(unzip("atlas-papers")),
        "abstracts": json.loads(unzip("atlas-abstracts")),
        "index": unzip("atlas-index"),
    }


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


@pytest.fixture(scope="module")
def corpus(small_artifacts):
    return data.load_corpus(small_artifacts, "small")


def app_ranking(corpus, query: str, mask=None) -> list[str]:
    """The doc ids the app's keyword search returns for ``query``, best first (all of them)."""
    hits = search.keyword_search(corpus, search.build_bm25(corpus), query, mask=mask, k=corpus.n_papers)
    return corpus.papers["doc_id"].to_numpy()[hits.rows].tolist()


# ---- unit -------------------------------------------------------------------------------------------


def test_the_export_references_nothing_outside_the_file(page_html):
    assert not re.search(r"<script[^>]*\ssrc\s*=", page_html, re.I)
    assert not re.search(r"<(link|iframe|img|object|embed|base)\b", page_html, re.I)
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:)?//""", page_html, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", page_html, re.I)
    assert "default-src 'none'" in page_html and "unsafe-eval" not in page_html  # no fetch, no eval
    assert "plotly" not in page_html.lower()  # the map is the app's component, not a second map
    bundle = (Path(__file__).resolve().parent.parent / "frontend" / "dist" / "atlas-map.js").read_text()
    assert bundle in page_html  # the same bundle as the app's


def test_a_title_with_script_tags_cannot_leave_the_data_element(page_html):
    assert HOSTILE_TITLE not in page_html and "</script>Adversarial" not in page_html
    assert page_html.lower().count("</script") == 7  # five data parts, the bundle, the page's script
    assert page_html.count("<!--") == 1  # only the template's own header comment
    assert HOSTILE_TITLE in parts(page_html)["papers"]["t"]  # intact once decoded


def test_every_paper_and_topic_is_embedded_with_the_apps_colours(page_html, papers, topics, corpus):
    d = parts(page_html)
    p, meta, (header, arrays) = d["papers"], d["meta"], d["points"]
    assert p["id"] == papers["doc_id"].tolist() and d["abstracts"] == papers["abstract"].tolist()
    assert all(len(v) == len(papers) for k, v in p.items() if k != "td")
    assert p["sid"] == short_ids(papers["doc_id"]).tolist()  # reading-list links resolve offline
    assert np.array_equal(arrays["x"], papers["x"].to_numpy(np.float32)) and header["n"] == 137
    assert meta["name"] == "small" and meta["papers"] == 137 and meta["topics"] == len(topics)
    assert meta["years"] == [2020, 2024] and meta["built"] and meta["model"]
    assert [t["id"] for t in meta["topic_list"]] == topics["topic"].tolist()
    assert [t["size"] for t in meta["topic_list"]] == topics["size"].tolist()
    # the keywords as the app shows them: as the papers write them ("SAT"), stored in lower case
    assert [t["kw"] for t in meta["topic_list"]] == [list(k)[:10] for k in corpus.tables.topics["keywords"]]
    assert [[k.lower() for k in t["kw"]] for t in meta["topic_list"]] == [list(k)[:10] for k in topics["keywords"]]
    assert any(k != k.lower() for t in meta["topic_list"] for k in t["kw"])
    assert {t["id"]: t["colour"] for t in header["topics"]} == corpus.colouring.colours  # the app's colours
    assert [meta["venues"][v] for v in p["v"]] == papers["venue"].tolist()


def test_the_files_search_index_scores_exactly_as_the_app(page_html, corpus):
    index = parts(page_html)["index"]
    app = search.build_bm25(corpus).bm25
    for query in QUERIES:
        ids = app.get_tokens_ids(search.tokenize([query])[0])
        expected = np.asarray(app.get_scores(ids), dtype=np.float32) if ids else np.zeros(corpus.n_papers, np.float32)
        assert np.array_equal(bm25.scores(index, query), expected), query  # bit for bit, float32


def test_only_http_links_are_exported(page_html):
    p = parts(page_html)["papers"]
    urls = dict(zip(p["id"], p["u"], strict=True))
    assert urls["latex-1"] == "https://example.org/paper"
    assert urls["xss-1"] is None  # javascript:alert(1) in the input
    assert "javascript:alert" not in page_html


def test_curated_tables_replace_the_stored_ones(small_artifacts, papers, topics, tmp_path):
    merged = papers.assign(topic=0)  # e.g. topic curation merged every topic into topic 0
    renamed = topics.assign(label=["<b>Agents</b> & planning"] + topics["label"].tolist()[1:])
    out = export_html(
        small_artifacts, "small", tmp_path / "curated.html", papers=merged, topics=renamed[["topic", "label"]]
    )
    d = parts(out.read_text(encoding="utf-8"))
    assert [(t["id"], t["size"], t["label"], t["kw"]) for t in d["meta"]["topic_list"]] == [
        (0, 137, "<b>Agents</b> & planning", [])
    ]
    assert [t["label"] for t in d["points"][0]["topics"]] == ["<b>Agents</b> & planning"]  # the map's label too
    assert d["meta"]["topics"] == 1


def test_weak_labels_carry_the_apps_mark_on_the_map_and_in_the_topic_list(small_artifacts, topics, tmp_path):
    """The file shows a label exactly as the app does: weak ones end in " (?)", decided on the
    support as shown (0.496 is shown as 0.50 and is not weak at a cut of 0.5; 0.494 is)."""
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), tmp_path / "weak")
    support = [0.494, 0.496, 0.5] + [0.9] * (len(topics) - 3)
    topics.assign(label_support=support).to_parquet(tmp_path / "weak" / schema.TOPICS)
    d = parts(export_html(tmp_path, "weak", tmp_path / "weak.html").read_text(encoding="utf-8"))
    labels = [topics["label"].iat[0] + WEAK_MARK, *topics["label"].iloc[1:]]
    shown = dict(zip(topics["topic"], labels, strict=True))
    assert {t["id"]: t["label"] for t in d["meta"]["topic_list"]} == shown  # the topic list (and its CSV)
    assert {t["id"]: t["label"] for t in d["points"][0]["topics"]} == shown  # the map's labels
    assert d["meta"]["weak_note"] == weak_labels_note(labels)  # what the mark means, said as the app says it
    assert d["meta"]["weak_note"].startswith("(?) marks 1 weak label:")
    app = data.load_corpus(tmp_path, "weak").tables.topics
    assert dict(zip(app["topic"], app["label"], strict=True)) == shown  # as the app shows them
    assert load_side(tmp_path, "weak").labels == shown  # a comparison's rows, stored or in the file
    ref = reference_tables(tmp_path, "weak")[1]
    assert dict(zip(ref["topic"], ref["label"], strict=True)) == shown  # the reference's map in the file


def test_the_papers_score_is_their_cosine_to_the_topic_as_in_the_app(page_html, small_artifacts, corpus):
    """Each paper's score in the file is what the app's map page shows: its cosine similarity to its
    topic's embedding, a plain decimal, named as such, never a softmax "probability" in percent."""
    p = parts(page_html)["papers"]
    assert "p" not in p
    folder = artifacts.corpus_path(small_artifacts, "small")
    stored = pd.read_parquet(folder / schema.PAPERS)
    emb, t_emb = np.load(folder / schema.EMBEDDINGS), np.load(folder / schema.TOPIC_EMBEDDINGS)
    pos = {t: i for i, t in enumerate(pd.read_parquet(folder / schema.TOPICS)["topic"])}
    cosine = [float(emb[r] @ t_emb[pos[t]]) for r, t in zip(stored["row"], stored["topic"], strict=True)]
    assert np.allclose(p["ts"], np.round(cosine, 2), atol=0.0051)
    from_app = parts(downloads.offline_html(corpus))["papers"]["ts"]  # the app's download
    assert np.allclose(from_app, p["ts"], atol=0.0051)
    page = (Path(__file__).resolve().parent.parent / "pipeline" / "export" / "templates" / "export.html").read_text()
    assert "Topic prob" not in page and "softmax" not in page and "Similarity to topic" in page
    assert "'topic_similarity'" in page and "Not a probability" in page


def test_after_a_merge_the_files_scores_are_the_apps(small_artifacts, papers, topics, tmp_path):
    """With a curation file merging two topics, the file's scores are those of the app's curated
    corpus: cosine to the merged topic's embedding (the size-weighted mean of the two)."""
    from pipeline.analysis.curation import Curation, curation_path

    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), tmp_path / "cur")
    edits = Curation()
    edits.merge(topics, papers, [int(topics["topic"].iat[0]), int(topics["topic"].iat[1])])
    edits.save(curation_path(tmp_path, "cur"))
    d = parts(export_html(tmp_path, "cur", tmp_path / "cur.html").read_text(encoding="utf-8"))
    corpus = data.with_edits(data.load_corpus(tmp_path, "cur"), edits.edits, "merge")
    app = dict(zip(corpus.papers["doc_id"], analysis.topic_similarity(corpus), strict=True))
    assert len(d["meta"]["topic_list"]) == len(topics) - 1
    assert np.allclose(d["papers"]["ts"], [app[i] for i in d["papers"]["id"]], atol=0.0051)


def test_missing_columns_are_reported(small_artifacts, papers, tmp_path):
    with pytest.raises(artifacts.ArtifactError, match="abstract"):
        export_html(small_artifacts, "small", tmp_path / "x.html", papers=papers.drop(columns="abstract"))


def test_cli_writes_the_file_and_prints_its_path(small_artifacts, tmp_path, capsys):
    out = tmp_path / "sub" / "review.html"
    assert cli.main(["export", "small", "--artifacts", str(small_artifacts), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert str(out) in printed and "MB" in printed
    assert out.stat().st_size > 50_000


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

ROW_IDS = "() => Array.from(document.querySelectorAll('#rows tr[data-id]'), r => r.dataset.id)"
SHOWN = "() => Number(document.getElementById('count').dataset.shown)"
MAP = "() => window.__atlas.map.debug()"
MAP_POINTS = "() => window.__atlas.map.screenPoints()"


class Offline:
    """The export opened from disk in a context with the network off; records what must not happen."""

    def __init__(self, browser, file: Path, fragment: str = "", size=(1440, 1000)):
        self.context = browser.new_context(viewport={"width": size[0], "height": size[1]}, accept_downloads=True)
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
        self.page.goto(file.as_uri() + fragment)
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
        self.page.wait_for_function(f"() => window.__atlas.state.q === {json.dumps(text.strip())}")
        self.page.wait_for_function("() => !document.getElementById('how').hidden")
        return self.page.evaluate(ROW_IDS)

    def settle(self) -> None:
        self.page.wait_for_function("() => window.__atlas.map.el.dataset.drawn && !window.__atlas.map.debug().busy")

    def xss_fired(self) -> bool:
        return self.page.evaluate("() => window.__xss !== undefined")

    def close(self) -> None:
        requests, errors, dialogs, fired = self.requests, self.errors, self.dialogs, self.xss_fired()
        self.context.close()
        assert not requests, f"the export tried to reach the network: {requests}"
        assert not dialogs, f"dialogs opened: {dialogs}"
        assert not fired, "a hostile record ran script"
        assert not errors, "\n".join(errors)


def download_csv(t: Offline, tmp_path: Path) -> tuple[str, list[dict]]:
    """Click *Download CSV*: the file's suggested name and its rows."""
    with t.page.expect_download() as download:
        t.page.click("#csv")
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return download.value.suggested_filename, list(csv.DictReader(handle))


@pytest.fixture
def tab(browser, exported):
    t = Offline(browser, exported)
    yield t
    t.close()


@pytest.mark.browser
def test_the_map_draws_every_point_and_the_table_counts_every_paper(tab, papers, topics, corpus, output_dir):
    page = tab.page
    state = page.evaluate(MAP)
    assert state["n"] == state["drawn"] == state["shown"] == 137  # counted by the map component
    assert sorted(p["row"] for p in page.evaluate(MAP_POINTS)) == list(range(137))
    assert page.evaluate(SHOWN) == 137 and "of 137" in page.inner_text("#page-info")
    assert len(page.evaluate(ROW_IDS)) == 50  # first page
    header = page.inner_text("header")
    assert "small" in header and "137" in header and "2020" in header and "2024" in header and "built" in header
    assert page.locator(".legend li button").count() == len(topics)
    labels = {lab["topic"] for lab in state["labels"] if lab["kind"] == "topic"}
    assert labels == set(topics["topic"])  # every topic labelled, on the canvas (never as HTML)
    colours = page.evaluate("() => window.__atlas.map.ds.topics.map(t => [t.id, t.colour])")
    assert {t: c for t, c in colours} == corpus.colouring.colours  # the app's colours
    tab.page.screenshot(path=str(output_dir / "export.png"), full_page=True)
    print(f"export loaded in {tab.load_ms:.0f} ms")


@pytest.mark.browser
def test_the_file_says_under_its_map_what_a_weak_labels_mark_means(browser, small_artifacts, topics, tmp_path):
    """The (?) the legend shows is explained under the map, as the app's map page explains it; a
    file whose labels are all sure says nothing."""
    for name, support in (("weak", [0.3, 0.44] + [0.9] * (len(topics) - 2)), ("sure", [0.9] * len(topics))):
        shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), tmp_path / name)
        topics.assign(label_support=support).to_parquet(tmp_path / name / schema.TOPICS)
        t = Offline(browser, export_html(tmp_path, name, tmp_path / f"{name}.html"), size=(1280, 720))
        try:
            note = t.page.locator("#map-note")
            if name == "weak":
                assert note.is_visible() and t.page.locator(".legend .weak").count() == 2
                assert note.inner_text() == weak_labels_note([WEAK_MARK] * 2), note.inner_text()
            else:
                assert not note.is_visible() and t.page.locator(".legend .weak").count() == 0
        finally:
            t.close()


@pytest.mark.browser
def test_search_ranks_as_the_apps_keyword_search_and_says_how(tab, corpus):
    for query in QUERIES:
        expected = app_ranking(corpus, query)
        assert tab.page.evaluate(f"() => window.__atlas.search({json.dumps(query)})") == expected, query
    ids = tab.search("Scheduling makespan")
    assert ids == app_ranking(corpus, "Scheduling makespan")[:25]  # the 25 best, as the app's Search page
    how = tab.page.inner_text("#how")
    assert (
        "BM25" in how
        and "exact phrase" in how
        and f"of {len(app_ranking(corpus, 'Scheduling makespan'))} papers" in how
    )
    assert tab.page.evaluate(SHOWN) == len(ids)
    marks = tab.page.evaluate("() => window.__atlas.map.opts.marks.map(m => [m.shape, m.rows.length])")
    assert ["ring", len(ids)] in marks  # the results are marked on the map


@pytest.mark.browser
def test_search_respects_the_filters_as_the_app_does(tab, corpus):
    tab.page.select_option("#y0", "2022")
    tab.page.select_option("#y1", "2023")
    mask = corpus.papers["year"].between(2022, 2023).fillna(False).to_numpy(dtype=bool)
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {int(mask.sum())}")
    assert tab.search("planning agents") == app_ranking(corpus, "planning agents", mask)[:25]


@pytest.mark.browser
def test_a_keyword_puts_its_paper_first_and_a_click_shows_its_abstract(tab, papers):
    ids = tab.search("makespan")
    target = papers.set_index("doc_id").loc[ids[0]]
    tab.page.click(f'#rows tr[data-id="{ids[0]}"]')
    assert tab.page.inner_text("#d-title") == target["title"]
    tab.page.wait_for_function("() => document.getElementById('d-abstract').textContent !== '…'")
    assert tab.page.evaluate("() => document.getElementById('d-abstract').textContent") == target["abstract"]
    link = tab.page.locator('#detail a[href="https://example.org/paper"]')
    assert ids[0] != "latex-1" or (link.count() == 1 and link.get_attribute("rel") == "noopener noreferrer")
    assert "paper=" in tab.page.evaluate("location.hash")  # the view is in the fragment


@pytest.mark.browser
def test_the_csv_holds_only_the_listed_matches(tab, corpus, tmp_path):
    ids = tab.search("learning")
    assert 0 < len(ids) == 25 < len(app_ranking(corpus, "learning"))
    name, rows = download_csv(tab, tmp_path)
    assert name == "small-search.csv"
    assert [r["doc_id"] for r in rows] == ids and [r["rank"] for r in rows] == [str(i) for i in range(1, 26)]
    assert tab.page.inner_text("#more") == "Show 25 more results"  # as the app's Search page says it
    tab.page.click("#more")
    tab.page.wait_for_function(
        f"() => Number(document.getElementById('count').dataset.shown) === {min(50, len(app_ranking(corpus, 'learning')))}"
    )


@pytest.mark.browser
def test_clicking_a_point_opens_its_paper(tab, papers):
    points = tab.page.evaluate(MAP_POINTS)

    def isolation(p):
        return min((p["x"] - q["x"]) ** 2 + (p["y"] - q["y"]) ** 2 for q in points if q is not p)

    point = max((p for p in points if p["y"] > 200), key=isolation)  # clear of the toolbar
    tab.page.mouse.move(point["x"], point["y"])
    tab.page.locator(".tip").wait_for(state="visible")
    tab.page.mouse.click(point["x"], point["y"])
    tab.page.wait_for_selector("#d-title")
    assert tab.page.inner_text("#d-title") == papers["title"].iloc[point["row"]]
    overlay = tab.page.evaluate("() => window.__atlas.map.opts.overlay")
    assert [o["label"] for o in overlay] == ["this paper"]  # the star over the dot


@pytest.mark.browser
def test_a_topic_from_the_legend_is_highlighted_and_its_papers_listed(tab, papers, topics):
    small = topics.sort_values("size").iloc[0]
    tab.page.locator(f'.legend li button[data-topic="{small["topic"]}"]').click()
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {small['size']}")
    state = tab.page.evaluate(MAP)
    assert state["highlight"] == small["topic"] and state["drawn"] == 137  # the others stay as faded context
    listed = tab.page.evaluate("() => window.__atlas.listed()")
    assert set(papers.set_index("doc_id").loc[listed, "topic"]) == {small["topic"]}
    assert any(lab["kind"] == "highlight" for lab in state["labels"])
    assert f"topic={small['topic']}" in tab.page.evaluate("location.hash")


@pytest.mark.browser
def test_year_and_venue_filters_reach_the_table_and_the_map(tab, papers):
    tab.page.select_option("#y0", "2023")
    tab.page.select_option("#y1", "2023")
    n2023 = int((papers["year"] == 2023).sum())
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {n2023}")
    tab.settle()
    assert tab.page.evaluate(MAP)["shown"] == n2023  # the rest drawn as grey context
    tab.page.click("#reset")
    tab.page.select_option("#venue", "IJCAI 2021")
    n = int((papers["venue"] == "IJCAI 2021").sum())
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {n}")
    assert set(
        tab.page.evaluate("() => Array.from(document.querySelectorAll('#rows td.venue'), t => t.textContent)")
    ) == {"IJCAI 2021"}
    assert "venue=IJCAI+2021" in tab.page.evaluate("location.hash")


@pytest.mark.browser
def test_the_year_axis_is_not_clipped(tab):
    boxes = tab.page.evaluate(
        """() => { const svg = document.querySelector('#years svg'), r = svg.getBoundingClientRect();
        return {svg: [r.left, r.top, r.right, r.bottom], ticks: Array.from(svg.querySelectorAll('text[data-year]'), t => {
            const b = t.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })}; }"""
    )
    ticks, (x0, y0, x1, y1) = boxes["ticks"], boxes["svg"]
    assert len(ticks) >= 2
    assert all(x0 <= t[0] and t[2] <= x1 and y0 <= t[1] and t[3] <= y1 for t in ticks)  # inside the chart
    assert all(a[2] <= b[0] for a, b in zip(ticks, ticks[1:], strict=False))  # and apart


@pytest.mark.browser
def test_hostile_records_show_their_markup_as_text(tab, papers):
    ids = tab.search("adversarial prompts vision")
    assert ids[0] == "xss-1"
    row = int(papers.index[papers["doc_id"] == "xss-1"][0])
    x, y = tab.page.evaluate(f"() => window.__atlas.map.screenOf({row})")
    tab.page.mouse.move(x, y)
    tip = "() => document.querySelector('#map').shadowRoot.querySelector('.tip .t')"
    tab.page.wait_for_function(f"() => {{ const t = ({tip})(); return t && t.textContent !== '…'; }}")
    assert tab.page.evaluate(f"() => ({tip})().textContent") == HOSTILE_TITLE  # literal in the map's tooltip
    row_title = tab.page.evaluate("() => document.querySelector('#rows tr[data-id=\"xss-1\"] td.title').textContent")
    assert row_title.startswith(HOSTILE_TITLE)
    tab.page.click('#rows tr[data-id="xss-1"]')
    assert tab.page.evaluate("() => document.getElementById('d-title').textContent") == HOSTILE_TITLE
    tab.page.wait_for_function("() => document.getElementById('d-abstract').textContent !== '…'")
    abstract = tab.page.evaluate("() => document.getElementById('d-abstract').textContent")
    assert '<img src=x onerror="window.__xss=1">' in abstract and "[a link](javascript:window.__xss=1)" in abstract
    assert tab.page.locator("#detail img, #detail script, img").count() == 0
    assert tab.page.locator('a[href^="javascript"], #detail a').count() == 0  # its url was javascript:
    assert not tab.xss_fired()


@pytest.mark.browser
def test_the_map_png_and_a_topics_csv_download(tab, papers, topics, tmp_path):
    small = topics.sort_values("size").iloc[0]
    tab.page.select_option("#topic-select", str(small["topic"]))
    tab.page.wait_for_function(f"() => Number(document.getElementById('count').dataset.shown) === {small['size']}")
    name, rows = download_csv(tab, tmp_path)
    assert name == f"small-topic-{small['topic']}.csv"
    expected = papers[papers["topic"] == small["topic"]]
    assert {r["doc_id"] for r in rows} == set(expected["doc_id"])
    by_id = {r["doc_id"]: r for r in rows}
    for doc_id, title, abstract in zip(expected["doc_id"], expected["title"], expected["abstract"], strict=True):
        assert by_id[doc_id]["title"] == title and by_id[doc_id]["abstract"] == abstract
    tab.settle()
    with tab.page.expect_download() as download:
        tab.page.locator('button[data-tool="png"]').click()
    assert download.value.suggested_filename == f"small-map-topic-{small['topic']}.png"
    png = tmp_path / "map.png"
    download.value.save_as(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


@pytest.mark.browser
def test_a_reading_list_link_of_the_app_opens_in_the_file(browser, exported, corpus, tmp_path):
    docs = ["latex-1", "xss-1", "ijcai2023-paper104"]
    sids = ",".join(short_id(d) for d in docs)
    t = Offline(browser, exported, f"#list={sids}")
    try:
        assert t.page.evaluate("() => window.__atlas.listed()") == docs  # the list, in its order
        items = t.page.evaluate(
            "() => Array.from(document.querySelectorAll('#list-items button.linkish'), b => b.dataset.id)"
        )
        assert items == docs
        marks = t.page.evaluate("() => window.__atlas.map.opts.marks.map(m => [m.shape, Array.from(m.rows)])")
        rows = [corpus.paper_pos(d) for d in docs]
        assert ["diamond", rows] in marks  # drawn on the map
        name, rows = download_csv(t, tmp_path)
        assert name == "small-reading-list.csv" and [r["doc_id"] for r in rows] == docs
        t.page.locator("#list-items li").first.locator("button.rm").click()  # removing one updates the fragment
        t.page.wait_for_function(f"() => location.hash.includes('list={sids.split(',', 1)[1].replace(',', '%2C')}')")
    finally:
        t.close()


@pytest.mark.browser
def test_the_lists_notes_travel_into_the_file_as_plain_text(browser, exported, tmp_path):
    docs = ["latex-1", "xss-1"]
    sids = [short_id(d) for d in docs]
    hostile = "Ana presents <img src=x onerror=window.__xss=1> =1+1"
    blob = readinglist.encode_notes({sids[1]: hostile}, sids)
    notes_of = "() => Array.from(document.querySelectorAll('#list-items li'), li => li.querySelector('.note')?.textContent ?? '')"
    t = Offline(browser, exported, f"#list={','.join(sids)}&notes={blob}")
    try:
        assert t.page.evaluate(notes_of) == ["", hostile]  # as text, never as HTML
        assert t.page.locator("#list-items img").count() == 0
        name, rows = download_csv(t, tmp_path)
        assert name == "small-reading-list.csv" and [r["note"] for r in rows] == ["", hostile]
        t.page.locator("#list-items li").first.locator("button.rm").click()  # the notes stay in the fragment
        t.page.wait_for_function(
            f"() => location.hash.includes('notes={blob}') && !location.hash.includes('{sids[0]}')"
        )
    finally:
        t.close()
    # a damaged value is said, not fatal; a tour step of the reading list shows its notes
    t = Offline(browser, exported, f"#list={sids[0]}&notes=garbage")
    try:
        assert "notes in this link cannot be read" in t.page.inner_text("#note")
    finally:
        t.close()
    step = tours.make_step("list", {"corpus": ["small"], "list": [",".join(sids)], "notes": [blob]}, "Our list")
    t = Offline(browser, exported, f"#tourdata={tours.encode(tours.Tour('group', (step,), 'small'))}&step=1")
    try:
        t.page.wait_for_function(f"() => ({notes_of})().length === 2")
        assert t.page.evaluate(notes_of) == ["", hostile] and t.page.inner_text("#tour-note") == "Our list"
    finally:
        t.close()


@pytest.mark.browser
def test_a_tour_link_of_the_app_opens_in_the_file(browser, exported, output_dir):
    steps = (
        tours.make_step("topics", {"corpus": ["small"], "topic": ["1"]}, "Topic 1 and its papers"),
        tours.make_step("paper", {"corpus": ["small"], "paper": ["latex-1"]}, "A paper worth reading <b>twice</b>"),
        tours.make_step("search", {"corpus": ["small"], "q": ["planning agents"], "mode": ["semantic"]}, "Searching"),
    )
    blob = tours.encode(tours.Tour("demo", steps, "small"))
    t = Offline(browser, exported, f"#tourdata={blob}&step=2", size=(1920, 1080))
    try:
        assert t.page.inner_text("#tour-note") == "A paper worth reading <b>twice</b>"  # the note, as text
        assert "Step 2 of 3" in t.page.inner_text("#tour-where") and "meaning" not in t.page.inner_text("#tour-where")
        assert t.page.inner_text("#d-title").startswith("Sparse")
        t.page.screenshot(path=str(output_dir / "export-tour-1920x1080.png"))
        t.page.keyboard.press("ArrowRight")
        t.page.wait_for_function("() => window.__atlas.state.q === 'planning agents'")
        t.page.wait_for_function("() => location.hash.includes('step=3')")
        # the app searched by meaning; the file has no model, and says what it marks instead
        assert "by meaning in the app: this file marks the papers sharing its words" in t.page.inner_text("#tour-where")
        t.page.keyboard.press("PageUp")
        t.page.keyboard.press("PageUp")
        t.page.wait_for_function("() => window.__atlas.state.topic === 1 && window.__atlas.state.q === ''")
        assert t.page.evaluate("() => window.__atlas.map.opts.scale") == 1.5  # present mode: larger map text
        t.page.keyboard.press("Escape")
        t.page.wait_for_function("() => document.getElementById('tour').hidden && !location.hash.includes('tourdata')")
    finally:
        t.close()
