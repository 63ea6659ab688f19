"""A build's topic tables read back from its files, as the app and the offline export both show them.

:func:`read_topic_tables` is the one reader of ``topics.parquet``, ``topic_terms.parquet``,
``hierarchy.parquet`` and the topic arrays into a :class:`~pipeline.core.topic_tables.TopicTables`: the
app (``explorer.state.data.load_corpus``) and the export (``pipeline.export.export.export_html``) read a build
through it, and apply the user's topic edits to it with the same ``pipeline.analysis.topic_edits.curate``,
so a label marked weak, a renamed or a merged topic reads the same in both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import artifacts, schema
from pipeline.core.artifacts import ArtifactError
from pipeline.core.topic_tables import TopicTables
from pipeline.model.label_case import shown_term
from pipeline.model.label_evidence import shown_labels
from pipeline.model.topic_parts import without_stale_parts


def text_column(series: pd.Series) -> pd.Series:
    """A text column as pandas' string dtype (all-null columns are stored as float or object)."""
    return series.astype("str")


#: The topics' columns of terms, shown as the corpus's papers write them.
TERM_LIST_COLUMNS = ("keywords", "keybert", "mmr")


def written_forms(terms: pd.DataFrame) -> dict[str, str]:
    """The terms of a ``terms.parquet`` table whose ``written`` form differs from the term, with
    it ("llms": "LLMs"); none for a build made before the column."""
    if "written" not in terms:
        return {}
    term, written = terms["term"].astype(str).to_numpy(), terms["written"].astype(str).to_numpy()
    differs = term != written
    return dict(zip(term[differs].tolist(), written[differs].tolist(), strict=True))


def read_terms_written(folder: Path, columns: Sequence[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """``columns`` of the build's ``terms.parquet`` and its :func:`written_forms`, in one read.

    Raises:
        ArtifactError: the file is missing or damaged (``artifacts.read_table``).
    """
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(folder / schema.TERMS).names
    except Exception:  # missing or damaged: the read below says so
        names = []
    extra = ["term", "written"] if "written" in names else []
    table = artifacts.read_table(folder, schema.TERMS, list(dict.fromkeys([*columns, *extra])))
    return table[list(columns)], written_forms(table)


def read_written(folder: Path) -> dict[str, str]:
    """:func:`written_forms` of the build's ``terms.parquet``; none where it cannot be read (the
    reader of the terms says why)."""
    try:
        return read_terms_written(folder, ["term"])[1]
    except ArtifactError:
        return {}


def with_written_terms(topics: pd.DataFrame, written: dict[str, str]) -> pd.DataFrame:
    """``topics`` with its lists of terms (:data:`TERM_LIST_COLUMNS`) as the papers write them."""
    if not written:
        return topics
    topics = topics.copy()
    for column in TERM_LIST_COLUMNS:
        if column in topics:
            topics[column] = [
                [shown_term(str(t), written) for t in terms] if isinstance(terms, list | tuple | np.ndarray) else terms
                for terms in topics[column]
            ]
    return topics


def read_topics(folder: Path, written: dict[str, str] | None = None) -> pd.DataFrame:
    """topics.parquet in file order, with the labels as every page shows them (and its keywords as
    the papers write them: :func:`with_written_terms`) and a ``curated``
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
    return without_stale_parts(with_written_terms(topics, read_written(folder) if written is None else written))


def read_topic_arrays(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distribution memory-mapped, topic embeddings, similarity), the last two float32 and read-only."""
    distribution = artifacts.read_array(folder, schema.TOPIC_DISTRIBUTION, mmap=True)
    topic_embeddings = np.asarray(artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS), dtype=np.float32)
    similarity = np.asarray(artifacts.read_array(folder, schema.TOPIC_SIMILARITY), dtype=np.float32)
    for arr in (topic_embeddings, similarity):
        arr.setflags(write=False)
    return distribution, topic_embeddings, similarity


def read_topic_tables(folder: Path, written: dict[str, str] | None = None) -> TopicTables:
    """The build's topic tables (its shapes are checked by the caller, who knows the papers), their
    terms written as ``written`` says (:func:`written_forms`; None: read from the build's terms)."""
    distribution, topic_embeddings, similarity = read_topic_arrays(folder)
    topic_terms = artifacts.read_table(folder, schema.TOPIC_TERMS)
    written = read_written(folder) if written is None else written
    if written:
        topic_terms["term"] = [shown_term(str(t), written) for t in topic_terms["term"]]
    return TopicTables(
        topics=read_topics(folder, written),
        topic_terms=topic_terms,
        hierarchy=artifacts.read_table(folder, schema.HIERARCHY),
        topic_embeddings=topic_embeddings,
        similarity=similarity,
        distribution=distribution,
    )
