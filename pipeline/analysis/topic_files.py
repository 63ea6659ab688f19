"""A build's topic tables read back from its files, as the app and the offline export both show them.

:func:`read_topic_tables` is the one reader of ``topics.parquet``, ``topic_terms.parquet``,
``hierarchy.parquet`` and the topic arrays into a :class:`~pipeline.core.topic_tables.TopicTables`: the
app (``explorer.state.data.load_corpus``) and the export (``pipeline.export.export.export_html``) read a build
through it, and apply the user's topic edits to it with the same ``pipeline.analysis.topic_edits.curate``,
so a label marked weak, a renamed or a merged topic reads the same in both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import artifacts, schema
from pipeline.core.topic_tables import TopicTables
from pipeline.model.label_evidence import shown_labels
from pipeline.model.topic_parts import without_stale_parts


def text_column(series: pd.Series) -> pd.Series:
    """A text column as pandas' string dtype (all-null columns are stored as float or object)."""
    return series.astype("str")


def read_topics(folder: Path) -> pd.DataFrame:
    """topics.parquet in file order, with the labels as every page shows them and a ``curated``
    column (False until the edits are applied)."""
    topics = artifacts.read_table(folder, schema.TOPICS).reset_index(drop=True)
    topics["label"] = (
        text_column(topics["label"]).fillna("").where(lambda s: s != "", "topic " + topics["topic"].astype(str))
    )
    # A label its keywords and papers barely support is shown as such on every page ("... (?)"),
    # and in the offline export (the same function).
    support = topics["label_support"] if "label_support" in topics else pd.Series(np.nan, index=topics.index)
    topics["label_support"] = support.astype(float)
    topics["label"] = shown_labels(topics)
    topics["curated"] = False
    return without_stale_parts(topics)


def read_topic_arrays(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distribution memory-mapped, topic embeddings, similarity), the last two float32 and read-only."""
    distribution = artifacts.read_array(folder, schema.TOPIC_DISTRIBUTION, mmap=True)
    topic_embeddings = np.asarray(artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS), dtype=np.float32)
    similarity = np.asarray(artifacts.read_array(folder, schema.TOPIC_SIMILARITY), dtype=np.float32)
    for arr in (topic_embeddings, similarity):
        arr.setflags(write=False)
    return distribution, topic_embeddings, similarity


def read_topic_tables(folder: Path) -> TopicTables:
    """The build's topic tables (its shapes are checked by the caller, who knows the papers)."""
    distribution, topic_embeddings, similarity = read_topic_arrays(folder)
    return TopicTables(
        topics=read_topics(folder),
        topic_terms=artifacts.read_table(folder, schema.TOPIC_TERMS),
        hierarchy=artifacts.read_table(folder, schema.HIERARCHY),
        topic_embeddings=topic_embeddings,
        similarity=similarity,
        distribution=distribution,
    )
