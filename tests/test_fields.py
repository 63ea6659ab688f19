"""Fields (``pipeline.model.fields``): topics grouped into a few named subjects, the map's labels when
zoomed out. They nest (a field is whole topics), come out the same for the same topics on any
machine, are named by the topics' labeller, and read the same in the app's map and the export's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.formats.blobs import points_blob, unpack
from pipeline.model.fields import MAX_FIELDS, MIN_TOPICS, field_count, field_table, group_topics
from pipeline.model.label_evidence import WEAK_MARK


def _topics_in_groups(groups: int = 3, per: int = 4, dim: int = 32, seed: int = 0, noise: float = 0.15):
    """``groups`` directions with ``per`` topics around each: (topic ids, centroids, sizes, group of each)."""
    rng = np.random.default_rng(seed)
    base = np.eye(dim)[:groups]
    group = np.repeat(np.arange(groups), per)
    centroids = base[group] + rng.normal(scale=noise, size=(len(group), dim))
    sizes = rng.integers(20, 200, size=len(group))
    ids = np.arange(len(group))[rng.permutation(len(group))]  # ids unrelated to the groups
    return ids, centroids, sizes, group


def test_the_number_of_fields_grows_with_the_square_root_of_the_topics_and_is_bounded():
    assert [field_count(k) for k in (0, 5, MIN_TOPICS - 1)] == [0, 0, 0]
    assert field_count(MIN_TOPICS) == 3 and field_count(24) == 5 and field_count(59) == 8
    assert field_count(435) == MAX_FIELDS


def test_topics_of_one_subject_share_a_field_numbered_by_papers():
    ids, centroids, sizes, group = _topics_in_groups()
    fields = group_topics(ids, centroids, sizes)
    assert sorted(fields) == sorted(ids.tolist())
    by_group = {g: {fields[int(t)] for t in ids[group == g]} for g in range(3)}
    assert all(len(f) == 1 for f in by_group.values()) and len({next(iter(f)) for f in by_group.values()}) == 3
    papers = [sum(int(s) for t, s in zip(ids, sizes, strict=True) if fields[int(t)] == f) for f in range(3)]
    assert papers == sorted(papers, reverse=True)  # field 0 holds the most papers


def test_fields_do_not_change_with_the_last_bits_of_the_topic_vectors():
    """Another processor sums the papers' vectors in another order, so their last bits differ. A topic
    exactly between two subjects (a tie at the cut) must join the same one on every machine."""
    e = np.eye(8)
    centroids = np.stack([e[0]] * 3 + [e[1]] * 3 + [e[2]] * 2 + [(e[0] + e[1]) / np.sqrt(2)])
    ids, sizes = np.arange(9), np.full(9, 50)
    here = group_topics(ids, centroids, sizes)
    assert len(set(here.values())) == 3 and here[8] in (here[0], here[3])
    rng = np.random.default_rng(0)
    for _ in range(20):
        there = group_topics(ids, centroids + rng.normal(scale=1e-12, size=centroids.shape), sizes)
        assert there == here


def test_too_few_topics_have_no_fields():
    ids, centroids, sizes, _ = _topics_in_groups(groups=2, per=3)
    assert group_topics(ids, centroids, sizes) == {}


def _table() -> pd.DataFrame:
    """Five topics in two fields; field 0 lies in two places on the map (a clump of two topics and one far off)."""
    return pd.DataFrame(
        {
            "topic": [0, 1, 2, 3, 4],
            "label": ["a", "b", "c", "d", "e"],
            "size": [40, 30, 10, 25, 5],
            "x": [0.0, 0.5, 10.0, 5.0, 5.2],
            "y": [0.0, 0.0, 0.0, 5.0, 5.1],
            "field": pd.array([0, 0, 0, 1, 1], dtype="Int64"),
            "field_label": ["learning and images", "learning and images", "learning and images", "logic", "logic"],
            "field_label_support": [0.31, 0.31, 0.31, 0.72, 0.72],
        }
    )


def test_a_field_row_sums_its_topics_marks_a_weak_label_and_sits_on_its_own_papers():
    fields = field_table(_table())
    assert fields["field"].tolist() == [0, 1]
    assert fields["label"].tolist() == ["learning and images" + WEAK_MARK, "logic"]
    assert fields["size"].tolist() == [80, 30] and fields["n_topics"].tolist() == [3, 2]
    assert fields["topics"].tolist() == [[0, 1, 2], [3, 4]]
    # the label sits on one of the field's topics (the clump), not at the mean of its two places
    assert (fields["x"].iat[0], fields["y"].iat[0]) in {(0.0, 0.0), (0.5, 0.0)}
    assert (fields["x"].iat[1], fields["y"].iat[1]) == (5.0, 5.0)  # the larger of two equally central topics


def test_a_table_without_fields_has_no_field_rows():
    table = _table()
    assert field_table(table.drop(columns=["field", "field_label", "field_label_support"])).empty
    assert field_table(table.assign(field=pd.array([None] * 5, dtype="Int64"))).empty


def test_the_maps_points_carry_each_topics_field_and_the_fields_labels():
    table = _table()
    rng = np.random.default_rng(0)
    papers = pd.DataFrame({"topic": rng.integers(0, 5, 300)})
    papers["x"] = table["x"].to_numpy()[papers["topic"]] + rng.normal(scale=0.1, size=300)
    papers["y"] = table["y"].to_numpy()[papers["topic"]] + rng.normal(scale=0.1, size=300)
    header, _ = unpack(points_blob("t", papers, table, fields=field_table(table)).data)
    assert [t["field"] for t in header["topics"]] == [0, 0, 0, 1, 1]
    assert [(f["id"], f["label"], f["size"]) for f in header["fields"]] == [
        (0, "learning and images" + WEAK_MARK, 80),
        (1, "logic", 30),
    ]
    plain, _ = unpack(points_blob("t", papers, table.drop(columns=["field"])).data)
    assert plain["fields"] == [] and all(t["field"] is None for t in plain["topics"])


@pytest.mark.parametrize("missing", [True, False])
def test_the_writer_keeps_field_columns_and_adds_them_to_a_table_made_before_fields(tmp_path, missing):
    from pipeline.build.writer import write_topic_tables
    from pipeline.core import artifacts, schema
    from pipeline.core.topic_tables import TopicTables

    table = _table()
    for column in schema.TOPIC_COLUMNS:
        if column not in table:
            table[column] = None
    if missing:
        table = table.drop(columns=["field", "field_label", "field_label_support"])
    k = len(table)
    write_topic_tables(
        tmp_path,
        TopicTables(
            table, pd.DataFrame(), pd.DataFrame(), np.eye(k, dtype=np.float32), np.eye(k), np.eye(k)[:3]
        ),
    )
    back = artifacts.read_table(tmp_path, schema.TOPICS)
    assert list(back.columns) == list(schema.TOPIC_COLUMNS)
    assert back["field"].isna().all() if missing else back["field"].tolist() == [0, 0, 0, 1, 1]
