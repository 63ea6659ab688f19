"""Broad topics and their parts (``pipeline.model.topic_parts``): which topics are broad, how they
are split and named, and that the parts disappear where they no longer describe the topic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis.curation import apply_edits, topic_ref
from pipeline.export.export_common import topic_table as export_topics
from pipeline.model import topic_parts as tp
from pipeline.model.label_evidence import LabelSupport


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _corpus(seed: int = 0):
    """Seven topics of 10-dim embeddings: topic 0 (30 of 100 papers, so three parts) made of three
    far-apart groups (14 near axis 0, 10 near axis 1, 6 near axis 2), the others (11-12 papers, under
    12% each) tight around their own axis."""
    rng = np.random.default_rng(seed)
    topics = np.array([0] * 30 + [1] * 12 + [2] * 12 + [3] * 12 + [4] * 12 + [5] * 11 + [6] * 11)
    centre = np.zeros((100, 10))
    centre[:14, 0] = 1  # topic 0, first group
    centre[14:24, 1] = 1  # topic 0, second group
    centre[24:30, 2] = 1  # topic 0, third group
    for t in range(1, 7):
        centre[topics == t, t + 2] = 1
    emb = _unit(centre + 0.05 * rng.standard_normal(centre.shape))
    return topics, emb


@pytest.fixture(autouse=True)
def _small_parts(monkeypatch):
    """The synthetic topics here are a few dozen papers: parts of 5 papers may be made."""
    monkeypatch.setattr(tp, "MIN_PART_PAPERS", 5)


@pytest.fixture(scope="module")
def parted_artifacts(tmp_path_factory) -> Path:
    """The fixture corpus ("small", 137 papers, topics of 4-37) built with parts of 5 papers
    allowed, so that its large loose topics are split (the real floor, 20, splits none of them)."""
    from pipeline.build.build import build
    from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config

    root = tmp_path_factory.mktemp("parted")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tp, "MIN_PART_PAPERS", 5)
        build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER)
    return root


def _support(value: float) -> LabelSupport:
    return LabelSupport(papers=value, keywords=1.0)


def test_a_large_loose_topic_is_broad_and_a_large_tight_one_is_not():
    spread = {0: 0.50, 1: 0.60, 2: 0.70, 3: 0.80, 4: 0.90}
    sizes = {0: 30, 1: 13, 2: 20, 3: 25, 4: 12}
    # 0: 30% and under the median (0.70); 3: 25% but tighter than the median; 1: loose but 13%
    assert tp.broad_topics(spread, sizes, 100) == [0, 1]
    assert tp.broad_topics(spread, {t: 10 for t in spread}, 100) == []  # none above 12%
    assert tp.broad_topics({0: 0.5}, {0: 100}, 100) == []  # one topic: no median to be looser than


def test_parts_are_as_many_as_keep_each_near_twelve_percent():
    assert tp.n_parts(13, 100) == 2
    assert tp.n_parts(24, 100) == 2
    assert tp.n_parts(25, 100) == 3
    assert tp.n_parts(90, 100) == tp.MAX_PARTS


def test_split_finds_the_groups_largest_first():
    topics, emb = _corpus()
    parts = tp.split_topic(emb[topics == 0], 3)
    assert parts.tolist() == [0] * 14 + [1] * 10 + [2] * 6
    order = np.r_[24:30, 0:24]  # the smallest group first: still numbered by size
    assert tp.split_topic(emb[topics == 0][order], 3).tolist() == [2] * 6 + [0] * 14 + [1] * 10


def test_split_of_a_sample_places_every_paper(monkeypatch):
    topics, emb = _corpus()
    monkeypatch.setattr(tp, "SPLIT_SAMPLE", 12)  # the split reads 12 of the 30 papers, the rest join the nearest part
    parts = tp.split_topic(emb[topics == 0], 3)
    assert parts.tolist() == [0] * 14 + [1] * 10 + [2] * 6


def test_topic_parts_names_each_part_and_keeps_its_central_papers():
    topics, emb = _corpus()
    ids = [f"p{i}" for i in range(100)]
    seen = {}

    def label(parts):
        seen["parts"] = parts.copy()
        return {0: ("first group", _support(0.8)), 1: ("second group", _support(0.3)), 2: ("third", _support(0.6))}

    spread, parts = tp.topic_parts(topics, emb, ids, label)
    assert sorted(spread) == list(range(7)) and spread[0] < min(spread[t] for t in range(1, 7))
    assert list(parts) == [0]  # only the large loose topic
    assert seen["parts"].tolist() == [0] * 14 + [1] * 10 + [2] * 6 + [-1] * 70
    got = parts[0]
    assert got["part_labels"] == ["first group", "second group", "third"]
    assert got["part_sizes"] == [14, 10, 6]
    assert got["part_supports"] == [0.8, 0.3, 0.6]
    assert all(int(d[1:]) < 14 for d in got["part_doc_ids"][0]) and len(got["part_doc_ids"][0]) == tp.PART_PAPERS
    assert all(14 <= int(d[1:]) < 24 for d in got["part_doc_ids"][1])
    assert all(24 <= int(d[1:]) < 30 for d in got["part_doc_ids"][2])


def _table(topics, emb):
    ids = [f"p{i}" for i in range(len(topics))]
    spread, parts = tp.topic_parts(
        topics,
        emb,
        ids,
        lambda p: {0: ("first group", _support(0.8)), 1: ("second group", _support(0.3)), 2: ("third", _support(0.6))},
    )
    sizes = np.bincount(topics)
    table = pd.DataFrame(
        {
            "topic": range(7),
            "label": [f"topic {t}" for t in range(7)],
            "size": sizes,
            "share": sizes / len(topics),
            "keywords": [["k"]] * 7,
            "keyword_weights": [[1.0]] * 7,
            "n_reassigned": 0,
            "x": 0.0,
            "y": 0.0,
        }
    )
    return tp.add_part_columns(table, spread, parts), ids


def test_shown_parts_mark_a_weak_part_and_the_reason_states_the_numbers():
    topics, emb = _corpus()
    table, _ = _table(topics, emb)
    row = table.iloc[0]
    assert tp.shown_parts(row) == [
        ("first group", 14, 0.8, list(row["part_doc_ids"][0])),
        ("second group (?)", 10, 0.3, list(row["part_doc_ids"][1])),
        ("third", 6, 0.6, list(row["part_doc_ids"][2])),
    ]
    assert tp.shown_parts(table.iloc[1]) == []
    median = float(np.median(table["spread"]))
    reason = tp.broad_reason(row, median)
    assert "30% of the papers" in reason and f"{row['spread']:.2f} against {median:.2f}" in reason
    assert "3 groups" in reason


def test_parts_go_where_they_no_longer_describe_the_topic():
    topics, emb = _corpus()
    table, ids = _table(topics, emb)
    papers = pd.DataFrame({"doc_id": ids, "topic": topics, "x": 0.0, "y": 0.0})
    ref = {t: topic_ref(table, papers, t) for t in (0, 1)}
    renamed = apply_edits(papers, table, [{"op": "rename", "topic": ref[0], "label": "my name"}]).topics
    assert renamed["part_labels"].iat[0] == ["first group", "second group", "third"]
    # one paper out and one in: the size is the same, the parts are not
    swapped = apply_edits(
        papers, table, [{"op": "move", "doc_id": "p0", "to": ref[1]}, {"op": "move", "doc_id": "p40", "to": ref[0]}]
    ).topics
    assert swapped["size"].iat[0] == 30 and swapped["part_labels"].iat[0] == []
    merged = apply_edits(papers, table, [{"op": "merge", "topics": [ref[0], ref[1]]}]).topics
    assert merged["part_labels"].iat[0] == [] and np.isnan(merged["spread"].iat[0])
    grown = table.assign(size=table["size"] + 1)  # papers added to the build later
    assert tp.without_stale_parts(grown)["part_labels"].iat[0] == []
    old = tp.without_stale_parts(table.drop(columns=[*tp.PART_COLUMNS, "spread"]))  # a build made before parts
    assert old["part_labels"].tolist() == [[]] * 7 and old["spread"].isna().all()


def test_the_export_lists_a_broad_topics_parts_as_the_app_does():
    topics, emb = _corpus()
    table, _ = _table(topics, emb)
    out = export_topics(table, topics)
    assert out["parts"].iat[0] == [["first group", 14, 0.8], ["second group (?)", 10, 0.3], ["third", 6, 0.6]]
    assert out["broad"].iat[0] == tp.broad_reason(table.iloc[0], float(np.median(table["spread"])))
    assert out["parts"].iat[1] == [] and pd.isna(out["broad"].iat[1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parts_do_not_depend_on_the_papers_order(seed):
    topics, emb = _corpus(seed)
    order = np.random.default_rng(seed).permutation(30)
    parts = tp.split_topic(emb[topics == 0], 3)
    shuffled = tp.split_topic(emb[topics == 0][order], 3)
    # the same groups, numbered by size whatever the order
    assert (shuffled == parts[order]).all()


def test_the_topics_page_shows_a_broad_topics_parts_and_only_there(parted_artifacts, monkeypatch):
    from tests.test_pages import link_params, main_links, run, texts, unescape

    topics = pd.read_parquet(parted_artifacts / "small" / "topics.parquet")
    broad = topics[[len(p) > 0 for p in topics["part_labels"]]]
    plain = topics[[len(p) == 0 for p in topics["part_labels"]]]
    assert len(broad) and len(plain), "the fixture corpus should have both kinds of topic"
    row = broad.iloc[0]
    at = run(parted_artifacts, monkeypatch, "pages/topics.py", corpus="small", topic=str(int(row["topic"])))
    shown = unescape(texts(at.markdown))
    assert "A broad topic, read by its parts" in shown
    for label, size, support, _ in tp.shown_parts(row):
        assert f"**{label}** · {size:,} papers" in shown and f"label support {support:.2f}" in shown
    assert f"spread {row['spread']:.2f} against {np.median(topics['spread']):.2f}" in unescape(texts(at.caption))
    linked = {link_params(link).get("paper", [""])[0] for link in main_links(at)}
    assert {d for ids in row["part_doc_ids"] for d in ids} <= linked  # each part's central papers
    table = at.dataframe[0].value.set_index("topic")
    assert all(table.at[int(t), "parts"] for t in broad["topic"])
    assert not any(table.at[int(t), "parts"] for t in plain["topic"])
    assert "*Parts*" in texts(at.caption)
    at = run(parted_artifacts, monkeypatch, "pages/topics.py", corpus="small", topic=str(int(plain.iloc[0]["topic"])))
    assert "A broad topic" not in texts(at.markdown)
    # the map, with the broad topic chosen, names its parts and points to its page
    at = run(parted_artifacts, monkeypatch, None, corpus="small", topic=str(int(row["topic"])))
    line = unescape(texts(at.caption))
    assert "A broad topic" in line and all(f"{label} ({size:,})" in line for label, size, _, _ in tp.shown_parts(row))
    at = run(parted_artifacts, monkeypatch, None, corpus="small", topic=str(int(plain.iloc[0]["topic"])))
    assert "A broad topic" not in texts(at.caption)


@pytest.mark.browser
def test_the_offline_export_says_what_the_topics_page_says(browser, parted_artifacts, tmp_path):
    from pipeline.export.export import export_html
    from tests.test_export import Offline

    topics = pd.read_parquet(parted_artifacts / "small" / "topics.parquet")
    broad = topics[[len(p) > 0 for p in topics["part_labels"]]].iloc[0]
    plain = topics[[len(p) == 0 for p in topics["part_labels"]]].iloc[0]
    t = Offline(browser, export_html(parted_artifacts, "small", tmp_path / "small.html"), size=(1280, 720))
    try:
        t.page.select_option("#topic-select", str(int(broad["topic"])))
        t.page.wait_for_function("() => !document.getElementById('topic-note').hidden")
        note = t.page.inner_text("#topic-note")
        for label, size, support, _ in tp.shown_parts(broad):
            assert f"{label} ({size} papers, label support {support:.2f})" in note
        assert tp.broad_reason(broad, float(np.median(topics["spread"]))) in note
        t.page.select_option("#topic-select", str(int(plain["topic"])))
        t.page.wait_for_function("() => document.getElementById('topic-note').hidden")
    finally:
        t.close()


def test_a_split_of_real_groups_holds_and_a_split_of_noise_is_called_one_way_among_several():
    topics, emb = _corpus()
    groups = emb[topics == 0]
    assert tp.split_stability(groups, tp.split_topic(groups, 3)) == pytest.approx(1.0)
    blob = _unit(np.random.default_rng(0).standard_normal((200, 10)))  # no groups at all
    noise = tp.split_stability(blob, tp.split_topic(blob, 3))
    assert noise < tp.STEADY_PARTS
    assert "one way among several" in tp.steadiness(noise) and "read the groups as hints" in tp.steadiness(noise)
    assert tp.steadiness(1.0).startswith("The split holds") and tp.steadiness(float("nan")) == ""


def test_no_part_is_smaller_than_the_floor_and_small_topics_are_not_split(monkeypatch):
    topics, emb = _corpus()
    monkeypatch.setattr(tp, "MIN_PART_PAPERS", 8)  # the third group (6 papers) is too small to be a part
    assert tp.n_parts(30, 100) == 3
    found = tp._parts_of(emb[topics == 0], 3)
    assert np.bincount(found).min() >= 8 and found.max() == 1  # two parts, the small group in one of them
    monkeypatch.setattr(tp, "MIN_PART_PAPERS", 16)  # 30 papers cannot hold two parts of 16
    spread, parts = tp.topic_parts(topics, emb, [str(i) for i in range(100)], lambda p: {})
    assert parts == {} and spread
    # six topics of a tiny corpus: a topic of 12% is smaller than the average one, not broad
    sizes = {0: 20, 1: 16, 2: 16, 3: 16, 4: 16, 5: 16}
    spread6 = {0: 0.5, 1: 0.55, 2: 0.6, 3: 0.7, 4: 0.8, 5: 0.9}
    monkeypatch.setattr(tp, "MIN_PART_PAPERS", 5)
    assert tp.broad_topics(spread6, sizes, 100) == [0, 1, 2]  # the criterion, as evaluated
    assert tp.to_split(spread6, sizes, 100) == [0]  # only topic 0 is larger than the average topic
