"""The "What changed" and "Topic lineage" pages through AppTest, opened from URLs as links would.

Fixture corpora (hashing embedder): "late" (2023-2024) against "early" (2020-2022), "all"
holding both, and a single-year copy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer.state import tours
from pipeline.analysis import compare as cmp
from pipeline.core import artifacts, schema
from tests.test_pages import link_params, main_links, map_data, plotly_specs, qp, run, texts, unescape

COMPARE = "pages/compare.py"
LINEAGE = "pages/lineage.py"


@pytest.fixture(scope="module")
def root(compare_artifacts, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compare-pages") / "art"
    shutil.copytree(compare_artifacts, out, symlinks=True)
    one = out / "oneyear"
    shutil.copytree(artifacts.corpus_path(out, "late"), one)
    papers = pd.read_parquet(one / schema.PAPERS)
    papers["year"] = pd.array([2026] * len(papers), dtype="Int16")
    papers.to_parquet(one / schema.PAPERS, index=False)
    pd.DataFrame(
        {"year": np.array([2026], dtype=np.int32), "n_papers": np.array([len(papers)], dtype=np.int32)}
    ).to_parquet(one / schema.YEARS, index=False)
    return out


def test_the_overview_answers_the_four_questions(root, monkeypatch):
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early")
    assert at.title[0].value == "What changed"
    body = unescape(texts(at.markdown))
    for heading in ("What is new", "What grew", "What faded", "Far from everything before"):
        assert heading in body
    result = cmp.compare(cmp.load_side(root, "late"), cmp.load_side(root, "early"))
    assert f"{int(result.papers['far'].sum())} of {len(result.papers)} papers" in body
    # 62 papers: the page says plainly how large a change it can see.
    assert "62 new papers" in texts(at.info) and "hints, not trends" in texts(at.info)
    assert qp(at, "ref") == ["early"] and qp(at, "show") is None
    far = result.papers[result.papers["far"]]
    linked = {link_params(link).get("paper", [None])[0] for link in main_links(at)}
    assert set(far["doc_id"].head(3)) <= linked  # the most novel of the far papers
    assert not set(result.papers.loc[~result.papers["far"], "doc_id"]) & linked  # and none that is not far
    assert len(far) > 3 and f"and {len(far) - 3:,} more (Far from earlier work)." in texts(at.caption)


def test_the_reference_defaults_to_earlier_work_and_a_bad_one_is_named(root, monkeypatch):
    at = run(root, monkeypatch, COMPARE, corpus="late")
    assert qp(at, "ref") == ["early"]  # ends before "late" starts (all and oneyear do not)
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="nope")
    assert "no corpus **nope**" in texts(at.warning)
    assert at.selectbox(key="compare_ref").value == "early"


@pytest.mark.parametrize(
    ("view", "expect"),
    [
        ("shares", "intervals that hold for all"),
        ("matching", "matches"),
        ("terms", "Log-odds ratios"),
        ("novelty", "conformal p-value"),
        ("map", "placed on it from their"),
    ],
)
def test_every_section_opens_from_its_url(root, monkeypatch, view, expect):
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early", show=view)
    assert at.segmented_control(key="compare_view").value == view
    assert expect in unescape(texts(at.caption))
    specs = plotly_specs(at)
    assert specs or view in ("terms", "map")  # terms may have nothing clear on a tiny corpus (then a note says so)
    if view == "matching":
        assert specs[0]["data"][0]["type"] == "sankey"
        assert len(at.dataframe) == 2  # the topics of each corpus, with their status
        table = at.dataframe[0].value
        assert {"status", "partners", "keywords", "partner_keywords"} <= set(table.columns)
        assert table["partner_keywords"].str.len().gt(0).all()  # top terms side by side
    if view == "map":  # the reference's map (the map component), the new corpus's papers on top
        state, blobs = map_data(at)
        header, _ = blobs[state["points"]]
        late = pd.read_parquet(artifacts.corpus_path(root, "late") / schema.PAPERS)
        early = pd.read_parquet(artifacts.corpus_path(root, "early") / schema.PAPERS)
        assert header["n"] == len(early) and len(state["overlay"]) == len(late)
        assert {o["shape"] for o in state["overlay"]} <= {"diamond", "circle"}
        assert set(late["title"]) >= {o["label"] for o in state["overlay"]}  # titles, on hover


def test_every_run_sends_the_linked_view_with_its_picker(root, monkeypatch):
    """A run cut short by a rerun never reaches the browser; the picker of the run after it must
    still carry the link's view, or the browser shows "At a glance" over the shares and sends it
    back with the next click (a tour step then recorded the wrong view, on a loaded machine)."""
    from explorer.ui.compare_panels import VIEWS

    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early", show="shares")
    for _ in range(2):  # the first run after the link, then one with the URL unchanged
        picker = at.segmented_control(key="compare_view")
        assert picker.proto.set_value and list(picker.proto.raw_values) == [VIEWS["shares"]]
        at.run()
    assert qp(at, "show") == ["shares"]


def test_closest_prior_work_links_to_the_reference_papers_page(root, monkeypatch):
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early", show="novelty")
    early_ids = set(pd.read_parquet(artifacts.corpus_path(root, "early") / schema.PAPERS)["doc_id"])
    prior = [link for link in main_links(at) if "closest prior work" in link.proto.label]
    assert len(prior) >= 3
    for link in prior:
        params = link_params(link)
        assert params["corpus"] == ["early"] and params["paper"][0] in early_ids
        assert link.proto.page.endswith("paper")


def test_papers_both_corpora_hold_are_left_out_of_the_reference(root, monkeypatch):
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="all")
    assert "62 papers both corpora hold are left out" in unescape(texts(at.caption))


def test_a_corpus_with_nothing_to_compare_with_says_how_to_get_a_reference(tmp_path, compare_artifacts, monkeypatch):
    lone = tmp_path / "art"
    lone.mkdir()
    shutil.copytree(artifacts.corpus_path(compare_artifacts, "late"), lone / "late")
    at = run(lone, monkeypatch, COMPARE, corpus="late")
    assert "no other corpus" in texts(at.info) and "python -m pipeline build" in texts(at.info)


def test_a_pair_too_large_for_the_app_points_to_the_cli(root, monkeypatch):
    from explorer.services import compare as cview

    monkeypatch.setattr(cview, "MAX_PAIRS", 100)
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early")
    assert "`python -m pipeline compare late early`" in unescape(texts(at.warning))
    # Once the CLI has stored it, the page reads it instead.
    cmp.compare_builds(root, "late", "early", force=True)
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early")
    assert "What is new" in unescape(texts(at.markdown))


def test_compare_views_can_be_tour_steps_named_by_what_they_show(root):
    from explorer.services.tour_steps import describe
    from explorer.state import data

    step = tours.make_step("compare", {"corpus": ["late"], "ref": ["early"], "show": ["novelty"]}, "far papers")
    assert step.query() == {"corpus": ["late"], "ref": ["early"], "show": ["novelty"]}
    tour = tours.decode(tours.encode(tours.Tour("t", (step, tours.make_step("lineage", {"topic": ["2"]})), "late")))
    assert [s.page for s in tour.steps] == ["compare", "lineage"]
    assert describe(step) == "What changed: late vs early · far from earlier work"
    glance = tours.make_step("compare", {"corpus": ["late"], "ref": ["early"], "years": ["2023"]})
    assert describe(glance) == "What changed: late vs early · at a glance"  # filters do not apply there: not named
    everything = data.load_corpus(root, "all")
    lineage = tours.make_step(
        "lineage", {"corpus": ["all"], "topic": ["1"], "periods": ["2020-2021,2022-2024"], "at": ["emerging"]}
    )
    name = f"Topic lineage: roots of {everything.topic_label(1)}, 2020–2021 to 2022–2024 · emerging and declining"
    assert describe(lineage, everything) == name
    many = tours.make_step("lineage", {"periods": ["2020,2021,2022,2023-2024"]})
    assert describe(many, everything) == "Topic lineage: the ten largest topics, 2020–2024 in 4 periods"


def test_the_lineage_link_names_the_periods_and_topic_it_shows(root, monkeypatch):
    at = run(root, monkeypatch, LINEAGE, corpus="all")
    starts = at.multiselect(key="lineage_starts").value
    assert qp(at, "periods") and [int(p.split("-")[0]) for p in qp(at, "periods")[0].split(",")[1:]] == starts
    focus = at.selectbox(key="lineage_topic").value
    assert qp(at, "topic") == (None if focus is None else [str(focus)])
    at = run(root, monkeypatch, LINEAGE, corpus="all", topic="1")
    assert qp(at, "topic") == ["1"] and qp(at, "periods")
    assert [h.proto.anchor for h in at.subheader] == ["emerging", "flow"]  # where a tour step can start


def test_the_offline_html_downloaded_with_a_reference_holds_the_comparison(root, monkeypatch):
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early")
    labels = [b.proto.label for b in at.sidebar.get("download_button")]
    assert labels[0] == "Offline HTML: corpus and what changed"
    assert "With what changed against early" in at.sidebar.get("download_button")[0].proto.help
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="nope")  # a reference that is not there: the plain file
    assert [b.proto.label for b in at.sidebar.get("download_button")][0] == "Offline HTML of the corpus"


def test_lineage_follows_a_topic_across_periods(root, monkeypatch):
    at = run(root, monkeypatch, LINEAGE, corpus="all")
    assert at.title[0].value == "Topic lineage"
    assert at.multiselect(key="lineage_starts").value  # default periods
    specs = plotly_specs(at)
    assert specs[-1]["data"][0]["type"] == "sankey"
    at = run(root, monkeypatch, LINEAGE, corpus="all", topic="1", periods="2020-2021,2022-2024")
    assert at.selectbox(key="lineage_topic").value == 1
    assert at.multiselect(key="lineage_starts").value == [2022]
    assert "papers of" in unescape(texts(at.markdown))  # its roots, in words
    nodes = plotly_specs(at)[-1]["data"][0]["node"]
    assert len(nodes["label"]) >= 2 and json.dumps(nodes).count("2020") >= 1


def test_lineage_of_a_single_year_corpus_says_why_there_is_none(root, monkeypatch):
    at = run(root, monkeypatch, LINEAGE, corpus="oneyear")
    assert "one year" in texts(at.info)


def test_switching_to_the_reference_itself_picks_another_reference(root, monkeypatch):
    at = run(root, monkeypatch, COMPARE, corpus="early", ref="early")
    assert not at.warning and at.selectbox(key="compare_ref").value != "early"


def test_topics_without_a_clear_precursor_are_one_number_everywhere(root, monkeypatch):
    result = cmp.compare(cmp.load_side(root, "late"), cmp.load_side(root, "early"))
    unclear = cmp.unclear_topics(result.matches)
    own = result.matches[result.matches["side"] == "b"]
    assert set(unclear["topic"]) == set(own.loc[own["status_text"] == "no clear precursor", "topic"])
    assert len(unclear), "the fixture pair has topics without a clear precursor"
    n = len(unclear)
    cli = "\n".join(cmp.describe(result))
    assert f"without a clear precursor: {n} (" in cli and f"{n} no clear precursor" in cli
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early")
    body = unescape(texts(at.markdown))
    assert f"{n} of {len(own)} topics have no clear precursor" in body
    assert "every one has earlier work close by" not in body  # never said beside topics that have none
    # the flow chart labels the same topics so
    at = run(root, monkeypatch, COMPARE, corpus="late", ref="early", show="matching")
    sankey = next(s for s in plotly_specs(at) if s["data"][0]["type"] == "sankey")
    assert sum("(no clear precursor)" in label for label in sankey["data"][0]["node"]["label"]) == n


def test_reference_topics_the_matching_diagram_leaves_out_are_named():
    # A reference topic whose papers spread thinly over the new topics has no link of 10% of a
    # new topic: the diagram cannot draw it, and the page says which ones are missing.
    from explorer.services import compare as cview

    flows = pd.DataFrame(
        [
            {"topic_a": 0, "topic_b": 0, "papers_b": 90.0, "from_b": 0.9, "from_a": 0.9},
            {"topic_a": 1, "topic_b": 0, "papers_b": 5.0, "from_b": 0.05, "from_a": 0.5},
            {"topic_a": 1, "topic_b": 1, "papers_b": 8.0, "from_b": 0.08, "from_a": 0.5},
            {"topic_a": 2, "topic_b": 1, "papers_b": 92.0, "from_b": 0.92, "from_a": 1.0},
        ]
    )
    matches = pd.DataFrame(
        [{"side": s, "topic": t, "label": f"{s}{t}", "status": "matched", "status_text": "matched"}
         for s, ts in (("a", (0, 1, 2)), ("b", (0, 1))) for t in ts]
    )  # fmt: skip
    assert cview.undrawn_reference_topics(flows, matches) == [1]
    nodes = list(cview.matching_sankey(flows, matches, left="ref", right="new").data[0].node.label)
    assert not any(n.startswith("1 · ") for n in nodes[:2]) and len(nodes) == 4  # a0, a2 | b0, b1
