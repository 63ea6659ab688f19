"""Share and present, through AppTest and plain functions on the fixture corpus: downloads, reading
lists, topic curation (stored, applied, undone, surviving a rebuild), tours and read-only sharing.

Browser checks of the same features (a reading-list link, tour keys on a projector-sized window,
a read-only server in a subprocess) are in ``tests/test_share_browser.py``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer.services import downloads, mapview, overview_figures
from explorer.state import access, curate, data, readinglist, tours
from explorer.state.access import Access, ReadOnlyError
from explorer.ui import caches
from pipeline.analysis.curation import Curation, curation_path
from pipeline.build.build import build
from pipeline.cli import cli
from pipeline.core import artifacts
from pipeline.formats.blobs import unpack
from pipeline.formats.ids import short_id, short_ids
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config
from tests.test_pages import APP, _as_after_first_run, link_params, qp, run, texts, unescape

TOKEN = "s3cret-editor-token-for-tests"


def open_app(root: Path, monkeypatch, view: str | None = None, *, args: tuple[str, ...] = (), **params) -> AppTest:
    """The app at ``view`` with ``params`` in the URL and ``args`` after ``--``, as a link would open it."""
    return run(root, monkeypatch, view, args=args, **params)


def button(at: AppTest, label: str):
    matches = [b for b in at.button if b.label == label]
    assert matches, f"no button {label!r} among {[b.label for b in at.button]}"
    return matches[0]


def files_under(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time (to prove nothing was written)."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def own_root(small_artifacts, tmp_path) -> Path:
    """A private copy of the fixture artifacts (tests here write curation files and tours)."""
    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    return root


@pytest.fixture(scope="module")
def corpus(small_artifacts):
    return data.load_corpus(small_artifacts, "small")


# ------------------------------------------------------------------------------------------
# Downloads
# ------------------------------------------------------------------------------------------


def test_every_chart_downloads_as_a_png_named_after_its_view(small_artifacts, monkeypatch):
    views = [
        (None, {"topic": "1"}),
        ("pages/topics.py", {"topic": "0"}),
        ("pages/trends.py", {}),
        ("pages/paper.py", {"paper": "latex-1"}),
    ]
    names = []
    for view, params in views:
        at = open_app(small_artifacts, monkeypatch, view, corpus="small", years="2020-2023", **params)
        charts = at.main.get("plotly_chart")
        maps = [json.loads(c.proto.json) for c in at.main.get("bidi_component") if c.proto.json]
        assert charts or maps
        for state in maps:  # the map component: its own PNG button, named the same way
            assert state["tools"] and re.fullmatch(r"small-[A-Za-z0-9._-]+", state["pngName"]), state
            names.append(state["pngName"])
        for chart in charts:
            config = json.loads(chart.proto.config)
            assert "toImage" not in config.get("modeBarButtonsToRemove", []), config  # the download button stays
            options = config["toImageButtonOptions"]
            assert options["format"] == "png" and options["scale"] >= 2
            assert re.fullmatch(r"small-[A-Za-z0-9._-]+", options["filename"]), options
            names.append(options["filename"])
    assert "small-map-topic-1-filtered" in names and "small-topic-0-keywords" in names
    assert len(set(names)) == len(names), "two charts would download under the same name"


def test_the_sidebar_offers_the_offline_html_and_the_filtered_csv(small_artifacts, monkeypatch, corpus):
    at = open_app(small_artifacts, monkeypatch, corpus="small", years="2021")
    labels = [b.proto.label for b in at.sidebar.get("download_button")]
    n2021 = int((corpus.papers["year"] == 2021).sum())
    assert labels == ["Offline HTML of the corpus", f"CSV of the {n2021} papers shown"]
    mask = (corpus.papers["year"] == 2021).to_numpy()
    rows = pd.read_csv(pd.io.common.StringIO(downloads.selection_csv(corpus, mask)))
    assert sorted(rows["doc_id"]) == sorted(corpus.papers.loc[mask, "doc_id"])
    assert list(rows.columns) == readinglist.COLUMNS
    page = downloads.offline_html(corpus)
    assert page.startswith("<!DOCTYPE html>") and "default-src 'none'" in page
    assert downloads.offline_html(corpus) is page  # built once per corpus version


def test_csv_cells_that_look_like_formulas_are_defused():
    column = pd.Series(['=HYPERLINK("http://x")', "+1", "plain", "-2", "@SUM(A1)", None])
    assert defused(column) == ['\'=HYPERLINK("http://x")', "'+1", "plain", "'-2", "'@SUM(A1)", None]


def defused(column: pd.Series) -> list:
    out = readinglist.defuse_formulas(column)
    return [None if pd.isna(v) else v for v in out.tolist()]


# ------------------------------------------------------------------------------------------
# Reading lists
# ------------------------------------------------------------------------------------------


def test_short_ids_are_short_stable_and_unique(corpus):
    ids = corpus.short_ids
    assert len(set(ids)) == len(ids) == corpus.n_papers
    assert all(re.fullmatch(r"[a-z2-7]{8}", s) for s in ids)
    assert short_id("xss-1") == ids[corpus.paper_pos("xss-1")]  # a hash of the doc id: survives rebuilds
    forced = short_ids(["a", "b", "a2"])
    assert len({len(s) for s in forced}) == 1
    # Two ids whose 8 characters collide (found by hashing 3 million ids) get 13, the others keep 8.
    assert short_id("paper-800074") == short_id("paper-2153829")
    clash = short_ids(pd.Series(["paper-800074", "x", "paper-2153829"], dtype="str"))
    assert clash.tolist() == [short_id("paper-800074", 13), short_id("x"), short_id("paper-2153829", 13)]
    assert len(set(clash)) == 3 and [len(s) for s in clash] == [13, 8, 13]
    parsed, problems = readinglist.parse("ABCDEFGH, abcdefgh,bad!,x")
    assert parsed == ("abcdefgh",) and problems


def test_a_reading_list_link_round_trips(small_artifacts, monkeypatch, corpus):
    docs = ["latex-1", "xss-1", "ijcai2022-paper114"]
    ids = [short_id(d) for d in docs]
    at = open_app(small_artifacts, monkeypatch, "pages/list.py", corpus="small", list=",".join(ids))
    assert at.title[0].value == "Reading list"
    paper_links = [link for link in at.main.get("page_link") if link.proto.page == "paper"]
    assert [link_params(link)["paper"][0] for link in paper_links] == docs  # in list order
    assert "<script>" in unescape(paper_links[1].proto.label)  # shown, escaped
    assert not re.search(r"(?<!\\)<", paper_links[1].proto.label)
    code = at.get("code")[0].proto.code_text
    assert "list=" + "%2C".join(ids) in code and "corpus=small" in code
    assert [b.proto.label for b in at.main.get("download_button")] == ["Markdown", "CSV", "BibTeX"]
    # the list travels with every page link, like the filters
    nav = list(at.sidebar.get("page_link"))
    assert all(link_params(link)["list"] == [",".join(ids)] for link in nav)
    assert any(link.proto.label == "Reading list (3)" for link in nav)
    # an unknown id is named, not fatal
    at = open_app(small_artifacts, monkeypatch, "pages/list.py", corpus="small", list=ids[0] + ",zzzzzzzz")
    assert "1 paper in this link is not in" in texts(at.warning)


def test_reading_list_exports(corpus):
    rows = np.array([corpus.paper_pos("latex-1"), corpus.paper_pos("xss-1")])
    table = readinglist.papers_table(corpus, rows)
    table.loc[1, "title_derived"] = True  # as for a paper whose input had no title
    md = readinglist.to_markdown(table, corpus_name="small", link="http://127.0.0.1/list?list=x")
    assert md.startswith("# Reading list: small")
    assert "1. **Sparse \\$\\\\ell\\_1\\$ recovery for scheduling**" in md
    assert "\\<script\\>window.\\_\\_xss=1\\</script\\>" in md and "<script>" not in md
    second = next(line for line in md.splitlines() if line.startswith("2. "))
    assert second.endswith("*\\[derived title\\]*") and "derived" not in md.split("2. ")[0]
    assert "<https://example.org/paper>" in md and "javascript" not in md
    bib = readinglist.to_bibtex(table)
    entries = bib.strip().split("\n\n")
    assert len(entries) == 2 and entries[0].startswith("@inproceedings{")
    assert "title = {{Sparse \\$\\textbackslash{}ell\\_1\\$ recovery for scheduling}}" in entries[0]
    assert "url = {https://example.org/paper}" in entries[0]
    assert "note = {Title derived from the abstract" in entries[1] and "note" not in entries[0]
    assert bib.count("{") == bib.count("}")  # balanced, whatever the titles held
    assert "javascript" not in bib
    csv = pd.read_csv(pd.io.common.StringIO(readinglist.to_csv(table)))
    assert csv["doc_id"].tolist() == ["latex-1", "xss-1"] and csv["title_derived"].tolist() == [False, True]


def test_papers_join_the_list_from_any_page(small_artifacts, monkeypatch, corpus):
    sid = short_id("latex-1")
    at = open_app(small_artifacts, monkeypatch, "pages/paper.py", corpus="small", paper="latex-1")
    button(at, "Add to reading list").click().run()
    assert qp(at, "list") == [sid]
    button(at, "Remove from reading list").click().run()
    assert qp(at, "list") is None
    # search results: the bookmark beside each result
    at = open_app(small_artifacts, monkeypatch, "pages/search.py", corpus="small", q="planning")
    first = at.button(key=next(b.key for b in at.button if b.key and b.key.startswith("rl_hit_")))
    first.click().run()
    assert len(qp(at, "list")[0].split(",")) == 1
    # a topic's papers on the map: select rows, add them
    at = open_app(small_artifacts, monkeypatch, corpus="small", topic="1", list=sid)
    n = int((corpus.papers["topic"] == 1).sum())
    if n <= 50:
        at.button(key="rl_map_topic_all").click().run()
        assert len(qp(at, "list")[0].split(",")) == n + (corpus.papers.loc[corpus.paper_pos("latex-1"), "topic"] != 1)


def test_map_selection_rows():
    import base64

    import numpy as np

    from explorer.ui.mapcomponent import _selection

    raw = base64.b64encode(np.array([5, 3, 3, 12], dtype="<u4").tobytes()).decode()
    rows, kind = _selection({"kind": "lasso", "n": 4, "rows": raw, "seq": 1}, 10)
    assert rows.tolist() == [3, 5] and kind == "lasso"  # unique, sorted, rows beyond the corpus dropped
    assert _selection({"kind": "box", "n": 0, "rows": ""}, 10)[0].size == 0  # cleared
    assert _selection(None, 10)[1] is None
    assert _selection({"n": 1, "rows": "not base64!"}, 10)[0].size == 0


# ------------------------------------------------------------------------------------------
# Curation
# ------------------------------------------------------------------------------------------


def test_with_edits_keeps_tables_and_arrays_aligned(corpus):
    ids = corpus.topic_ids.tolist()
    doc = corpus.papers.loc[corpus.papers["topic"] == ids[0], "doc_id"].iloc[0]
    cur = Curation()
    cur.rename(corpus.tables.topics, corpus.papers, ids[0], "Renamed")
    cur.merge(corpus.tables.topics, corpus.papers, [ids[1], ids[2]])
    cur.move(corpus.tables.topics, corpus.papers, doc, ids[3])
    out = data.with_edits(corpus, cur.edits, "k1")
    k = len(out.tables.topics)
    assert k == len(corpus.tables.topics) - 1 and out.key != corpus.key and out.text_key == corpus.text_key
    assert out.tables.distribution.shape == (corpus.n_papers, k) and out.tables.similarity.shape == (k, k)
    assert np.allclose(np.asarray(out.tables.distribution).sum(axis=1), 1, atol=1e-4)
    assert out.tables.topic_embeddings.shape[0] == k and set(out.tables.topic_terms["topic"]) <= set(out.topic_ids)
    known = out.topic_index >= 0
    assert (out.topic_ids[out.topic_index[known]] == out.papers["topic"].to_numpy()[known]).all()
    assert out.topic_label(ids[0]) == "Renamed" and out.tables.topics["curated"].sum() == 2
    row = out.paper_pos(doc)
    assert out.papers["topic"].iat[row] == ids[3] and out.papers["moved"].iat[row]
    assert out.papers["topic_prob"].iat[row] == pytest.approx(out.tables.distribution[row, out.topic_pos(ids[3])])
    header, _ = unpack(mapview.corpus_points(out).data)
    assert [t["label"] for t in header["topics"] if t["id"] == ids[0]] == ["Renamed"]  # the map's labels follow
    assert (
        out.tables.topics["size"].sum() == corpus.n_papers and corpus.topic_label(ids[0]) != "Renamed"
    )  # base untouched
    assert (
        overview_figures.linkage_from_hierarchy(out.tables.hierarchy, out.topic_ids) is None
    )  # the stored tree no longer fits


def test_curation_through_the_ui_is_stored_applied_undoable_and_survives_a_rebuild(own_root, monkeypatch):
    base = data.load_corpus(own_root, "small")
    t0, t1, t2 = base.topic_ids.tolist()[:3]
    path = curation_path(own_root, "small")
    label = "Reviewer's <b>label</b>"

    at = open_app(own_root, monkeypatch, "pages/curate.py", corpus="small", topic=str(t0))
    at.text_input(key="cur_rename_label").input(label)
    at.button(key="cur_rename_go").click().run()
    assert [e["op"] for e in Curation.load(path).edits] == ["rename"]
    at.multiselect(key="cur_merge_topics").set_value([t1, t2])
    at.button(key="cur_merge_go").click().run()
    assert [e["op"] for e in Curation.load(path).edits] == ["rename", "merge"]
    assert "2 edits in force" in " ".join(e.label for e in at.expander)
    kept = next(t for t in (t1, t2) if t in caches.get_corpus(own_root, "small").topic_ids)

    doc = base.papers.loc[base.papers["topic"] == t0, "doc_id"].iloc[-1]
    at = open_app(own_root, monkeypatch, "pages/curate.py", corpus="small", paper=doc)
    at.selectbox(key="cur_move_to").set_value(kept)
    at.button(key="cur_move").click().run()
    assert [e["op"] for e in Curation.load(path).edits] == ["rename", "merge", "move"]

    # applied everywhere: topic table, map labels, paper page, the offline HTML
    at = open_app(own_root, monkeypatch, "pages/topics.py", corpus="small")
    table = at.dataframe[0].value
    assert label in table["label"].tolist() and len(table) == len(base.tables.topics) - 1
    at = open_app(own_root, monkeypatch, corpus="small")
    blobs = [unpack(c.proto.bytes)[0] for c in at.main.get("bidi_component") if c.proto.bytes.startswith(b"ATLM")]
    labels = [t["label"] for b in blobs if b["kind"] == "points" for t in b["topics"]]
    assert "Reviewer's <b>label</b>" in labels  # as text: the map draws labels on a canvas, never as HTML
    at = open_app(own_root, monkeypatch, "pages/paper.py", corpus="small", paper=doc)
    assert "moved here by hand" in texts(at.caption)
    curated = caches.get_corpus(own_root, "small")
    assert '"Reviewer\'s \\u003cb\\u003elabel\\u003c/b\\u003e"' in downloads.offline_html(curated)

    # undo, one edit at a time
    at = open_app(own_root, monkeypatch, "pages/curate.py", corpus="small")
    at.button(key="cur_undo").click().run()
    assert [e["op"] for e in Curation.load(path).edits] == ["rename", "merge"]
    assert caches.get_corpus(own_root, "small").papers.set_index("doc_id").loc[doc, "topic"] == t0

    # a rebuild with another seed: the rename and the merge find their topics again by content
    config = fast_config()
    config = dataclasses.replace(config, umap=dataclasses.replace(config.umap, seed=7))
    assert build([SMALL_CORPUS], "small", own_root, config, encoder=TEST_ENCODER).mode == "full"
    rebuilt = caches.get_corpus(own_root, "small")
    assert rebuilt.build_id != base.build_id
    assert label in rebuilt.tables.topics["label"].tolist() and not rebuilt.skipped_edits
    assert len(rebuilt.tables.topics) == len(data.load_corpus(own_root, "small").tables.topics) - 1
    at = open_app(own_root, monkeypatch, "pages/topics.py", corpus="small")
    assert label in at.dataframe[0].value["label"].tolist()

    # an edit that no longer matches anything is shown plainly, not applied
    cur = Curation.load(path)
    cur.edits.append({"op": "move", "doc_id": "gone-paper", "to": {"id": 999, "members": ["x"], "keywords": []}})
    cur.save(path)
    at = open_app(own_root, monkeypatch, "pages/curate.py", corpus="small")
    assert "1 edit no longer match" in unescape(texts(at.warning)) and "gone\\-paper" in texts(at.warning)


def test_the_cli_export_includes_the_curation(own_root, tmp_path, capsys):
    base = data.load_corpus(own_root, "small")
    curate.rename(Access(), base, int(base.topic_ids[0]), "Curated for export")
    out = tmp_path / "small.html"
    assert cli.main(["export", "small", "--artifacts", str(own_root), "--out", str(out)]) == 0
    assert '"Curated for export"' in out.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------------------
# Tours
# ------------------------------------------------------------------------------------------


def test_tours_encode_validate_and_save(own_root):
    step = tours.make_step("topics", {"corpus": ["small"], "topic": ["1"], "token": ["x"], "list": ["a"]}, " A  note ")
    assert step.query() == {"corpus": ["small"], "topic": ["1"]} and step.note == "A note"  # no token, no list
    tour = tours.Tour(name="week-1", steps=(step, tours.make_step("paper", {"paper": ["xss-1"]})), corpus="small")
    assert tours.decode(tours.encode(tour)) == tour
    assert tours.slug("Reading group: week 1!") == "reading-group-week-1"
    for bad in ("", "!!", "A" * (tours.MAX_BLOB + 1), tours.encode(tour)[:-6]):
        with pytest.raises(tours.TourError):
            tours.decode(bad)
    import base64
    import zlib

    bomb = base64.urlsafe_b64encode(zlib.compress(b"[" * 5_000_000)).decode().rstrip("=")
    with pytest.raises(tours.TourError):
        tours.decode(bomb)
    with pytest.raises(tours.TourError):
        tours.from_dict({"name": "x", "steps": [{"page": "../../etc", "params": {}}]})
    with pytest.raises(ReadOnlyError):
        tours.save(access.VIEWER, own_root, tour)
    assert not (own_root / tours.FOLDER).exists()
    file = tours.save(Access(), own_root, tour)
    assert file == own_root / ".tours" / "small" / "week-1.json"
    assert tours.load(own_root, "small", "week-1") == tour and tours.saved(own_root, "small") == ["week-1"]
    assert "small" in [e.name for e in artifacts.list_corpora(own_root)] and len(artifacts.list_corpora(own_root)) == 1


def test_a_tour_is_built_saved_and_presented(own_root, monkeypatch):
    at = open_app(own_root, monkeypatch, "pages/topics.py", corpus="small", topic="1")
    at.text_area(key="tour_add_note").input("Topic one, with its <b>keywords</b>")
    at.button(key="tour_add").click().run()
    at.switch_page("pages/paper.py")
    at.query_params["paper"] = "latex-1"
    at.run()
    at.button(key="tour_add").click().run()
    at.switch_page("pages/trends.py")  # as the sidebar's link does: the paper stays behind
    del at.query_params["paper"]
    at.run()
    at.text_area(key="tour_add_note").input("Trends")
    at.button(key="tour_add").click().run()
    at.switch_page("pages/tour.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len([t for t in at.text_input if t.key.startswith("tour_note_")]) == 3
    at.text_input(key=present_name()).input("Reading group").run()
    at.button(key="tour_save").click().run()
    saved = tours.load(own_root, "small", "reading-group")
    assert [s.page for s in saved.steps] == ["topics", "paper", "trends"]
    assert saved.steps[0].query()["topic"] == ["1"] and saved.steps[0].note == "Topic one, with its <b>keywords</b>"
    code = at.get("code")[0].proto.code_text
    assert "tourdata=" in code and "step=1" in code

    # ?tour=NAME&step=2 opens step 2's own page, with the bar on top
    at = open_app(own_root, monkeypatch, corpus="small", tour="reading-group", step="2")
    assert qp(at, "paper") == ["latex-1"] and qp(at, "step") == ["2"]
    assert "step 2 of 3" in texts(at.caption)
    assert at.button(key="tour_prev").proto.disabled is False
    at.button(key="tour_next").click().run()
    assert qp(at, "step") == ["3"] and qp(at, "paper") is None
    assert "Trends" in texts(at.markdown)
    assert at.button(key="tour_next").proto.disabled
    at.button(key="tour_prev").click().run()
    at.button(key="tour_prev").click().run()
    assert qp(at, "step") == ["1"] and qp(at, "topic") == ["1"]
    assert "Topic one, with its \\<b\\>keywords\\</b\\>" in texts(at.markdown)  # the note is escaped
    at.button(key="tour_exit").click().run()
    assert qp(at, "tour") is None and qp(at, "topic") == ["1"]

    # the same tour inside the link, for a read-only viewer
    blob = tours.encode(saved)
    at = open_app(own_root, monkeypatch, corpus="small", tourdata=blob, step="3", args=("--read-only",))
    assert "step 3 of 3" in texts(at.caption)
    at = open_app(own_root, monkeypatch, corpus="small", tourdata="garbage!", step="1")
    assert "cannot be shown" in texts(at.warning)


def present_name() -> str:
    from explorer.ui import tour_draft

    return tour_draft.DRAFT_NAME


# ------------------------------------------------------------------------------------------
# Read-only sharing
# ------------------------------------------------------------------------------------------


def test_options_from_the_command_line_and_the_environment(tmp_path):
    o = access.options(["app.py", "--artifacts", str(tmp_path)], tmp_path, {})
    assert o.root == tmp_path and not o.read_only and o.editor_token is None
    assert access.options(["app.py", "--", "--read-only"], tmp_path, {}).read_only
    o = access.options(["app.py"], tmp_path, {access.TOKEN_ENV: "abc"})
    assert o.read_only and o.editor_token == "abc"  # a token implies read-only
    assert access.options(["app.py"], tmp_path, {access.READ_ONLY_ENV: "1"}).read_only
    assert access.token_matches("abc", "abc") and not access.token_matches("abd", "abc")
    assert not access.token_matches("", "") and not access.token_matches("abc", None)


def _other_topic(corpus, doc_id: str) -> int:
    """A topic the paper is not in (a move into its own topic is refused for that reason)."""
    papers = corpus.papers
    own = int(papers.loc[papers["doc_id"] == doc_id, "topic"].iloc[0])
    return next(int(t) for t in corpus.topic_ids if int(t) != own)


def test_write_functions_refuse_a_viewer_before_touching_a_file(own_root):
    corpus = data.load_corpus(own_root, "small")
    before = files_under(own_root)
    t = int(corpus.topic_ids[0])
    for attempt in (
        lambda: curate.rename(access.VIEWER, corpus, t, "x"),
        lambda: curate.merge(access.VIEWER, corpus, [t, int(corpus.topic_ids[1])]),
        lambda: curate.move(access.VIEWER, corpus, "latex-1", _other_topic(corpus, "latex-1")),
        lambda: curate.undo(access.VIEWER, corpus),
        lambda: tours.save(access.VIEWER, own_root, tours.Tour("x", (tours.make_step("map", {}),), "small")),
        lambda: tours.delete(access.VIEWER, own_root, "small", "x"),
        lambda: curate.rename(None, corpus, t, "x"),  # anything but an Access is refused too
    ):
        with pytest.raises(ReadOnlyError):
            attempt()
    assert files_under(own_root) == before


def test_a_read_only_server_never_writes_a_model_export(tmp_path):
    from explorer.services import search
    from pipeline.core.config import EmbedParams
    from pipeline.embed.encoders import onnx_model_path

    params = EmbedParams(backend="onnx-int8")
    assert search.read_only_params(params, tmp_path).backend == "torch"  # no export yet: torch, nothing written
    assert not any(tmp_path.iterdir())
    export = onnx_model_path(params, tmp_path / ".cache")
    export.parent.mkdir(parents=True)
    export.write_bytes(b"onnx")
    assert search.read_only_params(params, tmp_path) == params  # the build's export is only read
    torch = EmbedParams(backend="torch")
    assert search.read_only_params(torch, tmp_path) == torch


def test_a_read_only_app_has_no_edit_widgets_and_writes_nothing(own_root, monkeypatch):
    before = files_under(own_root)
    args = ("--read-only",)
    at = open_app(own_root, monkeypatch, "pages/curate.py", corpus="small", args=args)
    assert "read-only" in texts(at.info)
    assert not [w for kind in ("text_input", "button", "multiselect", "selectbox") for w in at.main.get(kind)]
    assert "curate" not in [link.proto.page for link in at.sidebar.get("page_link")]
    at = open_app(own_root, monkeypatch, "pages/topics.py", corpus="small", topic="0", args=args)
    assert not [link for link in at.main.get("page_link") if link.proto.page == "curate"]
    at = open_app(own_root, monkeypatch, "pages/paper.py", corpus="small", paper="latex-1", args=args)
    assert not [link for link in at.main.get("page_link") if link.proto.page == "curate"]
    at.button(key="tour_add").click().run()  # a viewer may assemble a tour (in the session) ...
    at.switch_page("pages/tour.py")
    at.run()
    assert "switched off on this read-only server" in texts(at.caption)  # ... and share it, not save it
    assert not [b for b in at.button if b.key == "tour_save"]
    at = open_app(own_root, monkeypatch, "pages/search.py", corpus="small", q="planning", mode="semantic", args=args)
    assert "Read-only" in texts(at.sidebar.caption)
    assert files_under(own_root) == before


def test_the_editor_token_unlocks_editing_and_never_shows(own_root, monkeypatch):
    args = ("--editor-token", TOKEN)
    at = open_app(own_root, monkeypatch, corpus="small", token="wrong", args=args)
    assert "not valid" in texts(at.warning) and qp(at, "token") is None
    at.switch_page("pages/curate.py")
    at.run()
    assert "read-only" in texts(at.info) and not at.main.get("text_input")
    at = open_app(own_root, monkeypatch, corpus="small", token=TOKEN, args=args)
    assert qp(at, "token") is None  # out of the address bar at once
    at.switch_page("pages/curate.py")
    at.run()
    assert at.text_input(key="cur_rename_label")
    everything = json.dumps([str(e.proto) for e in at.main] + [str(e.proto) for e in at.sidebar])
    assert TOKEN not in everything
    at.text_input(key="cur_rename_label").input("Editor's label")
    at.button(key="cur_rename_go").click().run()
    assert curation_path(own_root, "small").exists()
    # the environment variable works the same (and keeps the token out of `ps`)
    monkeypatch.setattr(sys, "argv", ["app.py", "--artifacts", str(own_root)])
    monkeypatch.setenv(access.TOKEN_ENV, TOKEN)
    _as_after_first_run(monkeypatch)
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params["corpus"] = "small"
    at.run()
    at.switch_page("pages/curate.py")
    at.run()
    assert "read-only" in texts(at.info)


def test_readme_documents_share_and_present():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    for needle in ("## Share and present", "make share", "--read-only", "ATLAS_EDITOR_TOKEN", "caddy reverse-proxy",
                   "proxy_set_header Upgrade", "/_stcore/stream", "enableXsrfProtection", "list=", "tour="):  # fmt: skip
        assert needle in readme, needle
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^share:", makefile, re.M) and "--read-only" in makefile


# ------------------------------------------------------------------------------------------
# Notes for a reading group
# ------------------------------------------------------------------------------------------

HOSTILE_NOTE = 'Ana presents <img src=x onerror=alert(1)> [x](javascript:alert(1)) =HYPERLINK("http://e") {\\evil}'


def test_notes_pack_into_the_link_bounded_and_checked():
    ids = ("aaaaaaaa", "bbbbbbbb")
    notes = {"aaaaaaaa": "  Ana presents:\n is it robust? ", "bbbbbbbb": "", "cccccccc": "not in the list"}
    blob = readinglist.encode_notes(notes, ids)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", blob)
    assert readinglist.parse_notes(blob, ids) == ({"aaaaaaaa": "Ana presents: is it robust?"}, [])
    assert readinglist.encode_notes({"aaaaaaaa": " "}, ids) is None  # no note, no parameter
    long = "x" * (readinglist.MAX_NOTE + 20)
    assert readinglist.clean_note(long)[0] == "x" * readinglist.MAX_NOTE
    raw = base64_notes({"aaaaaaaa": long})
    notes, problems = readinglist.parse_notes(raw, ids)
    assert len(notes["aaaaaaaa"]) == readinglist.MAX_NOTE and "at most 280, so it was cut" in problems[0]
    for bad in ("garbage!", "eNqr", "A" * (readinglist.MAX_NOTES_PARAM + 1), base64_notes(["a list"])):
        notes, problems = readinglist.parse_notes(bad, ids)
        assert notes == {} and problems and problems[0].startswith("notes: "), bad
    # the view reads them for the list's papers only, and writes them back with the list
    from explorer.state import state

    view = state.parse({"list": [",".join(ids)], "notes": [blob]})
    assert view.note_of == {"aaaaaaaa": "Ana presents: is it robust?"} and not view.problems
    assert state.shared(view)["notes"] == blob
    assert "notes" not in state.shared(state.parse({"notes": [blob]}))  # no list, no notes


def base64_notes(data) -> str:
    import base64
    import zlib

    return base64.urlsafe_b64encode(zlib.compress(json.dumps(data).encode())).decode().rstrip("=")


def test_notes_export_with_the_list_escaped(corpus):
    rows = np.array([corpus.paper_pos("latex-1"), corpus.paper_pos("xss-1")])
    sids = [str(s) for s in corpus.short_ids[rows]]
    table = readinglist.papers_table(corpus, rows, {sids[0]: HOSTILE_NOTE})
    assert table["note"].tolist() == [HOSTILE_NOTE, ""]
    md = readinglist.to_markdown(table, corpus_name="small")
    line = next(x for x in md.splitlines() if "Note:" in x)
    assert line.startswith("   *Note:* Ana presents") and not re.search(r"(?<!\\)<img", md) and "\\<img" in line
    assert "](javascript" not in md
    bib = readinglist.to_bibtex(table).strip().split("\n\n")
    assert "note = {Ana presents" in bib[0] and "\\{\\textbackslash{}evil\\}" in bib[0] and "note" not in bib[1]
    assert bib[0].count("{") == bib[0].count("}")
    csv = pd.read_csv(pd.io.common.StringIO(readinglist.to_csv(table)), keep_default_na=False)
    assert csv["note"].tolist() == [HOSTILE_NOTE, ""]  # starts with a letter: nothing to defuse
    defused = readinglist.to_csv(readinglist.papers_table(corpus, rows[:1], {sids[0]: "=1+1"}))
    assert "'=1+1" in defused


def test_notes_are_written_on_the_list_page_travel_and_show_when_presenting(own_root, monkeypatch, corpus):
    docs = ["latex-1", "xss-1"]
    ids = [short_id(d) for d in docs]
    at = open_app(own_root, monkeypatch, "pages/list.py", corpus="small", list=",".join(ids))
    assert not at.exception, [e.value for e in at.exception]
    at.text_input(key=f"note_{ids[1]}").input(HOSTILE_NOTE).run()
    blob = qp(at, "notes")[0]
    assert readinglist.parse_notes(blob, ids)[0] == {ids[1]: HOSTILE_NOTE}
    code = at.get("code")[0].proto.code_text
    assert f"notes={blob}" in code  # the link to share holds them
    assert f"notes={blob}" in texts(at.caption)  # so does the offline file's fragment
    md = next(b for b in at.main.get("download_button") if b.proto.label == "Markdown")
    assert md is not None
    # every page link carries them with the list
    nav = list(at.sidebar.get("page_link"))
    assert all(link_params(link)["notes"] == [blob] for link in nav)
    # removing the paper drops its note
    at = open_app(own_root, monkeypatch, "pages/list.py", corpus="small", list=",".join(ids), notes=blob)
    assert at.text_input(key=f"note_{ids[1]}").value == HOSTILE_NOTE
    at.button(key=f"rl_list_{ids[1]}").click().run()
    assert qp(at, "list") == [ids[0]] and qp(at, "notes") is None

    # a tour step on the reading list keeps the list and its notes; present mode shows them, escaped
    step = tours.make_step("list", {"corpus": ["small"], "list": [",".join(ids)], "notes": [blob]}, "Our list")
    assert step.query()["notes"] == [blob]
    assert "list" not in tours.make_step("map", {"list": [",".join(ids)], "notes": [blob]}).query()
    tour = tours.Tour(name="group", steps=(step,), corpus="small")
    at = open_app(own_root, monkeypatch, "pages/list.py", corpus="small", tourdata=tours.encode(tour), step="1")
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at.markdown)
    assert "Ana presents \\<img src\\=x onerror\\=alert\\(1\\)\\>" in shown and not re.search(r"(?<!\\)<img", shown)
    assert not [t for t in at.text_input if t.key and t.key.startswith("note_")]  # nothing to edit on a slide
