"""The per-topic tables of a build, one bundle under one set of names wherever they travel.

The representation stage makes them (``pipeline.model.represent.TopicModel.tables``), the build hands
them to the writer (``pipeline.build.results.TopicResult.tables``), which writes them to
``topics.parquet``, ``topic_terms.parquet``, ``hierarchy.parquet``, ``topic_embeddings.npy``,
``topic_similarity.npy`` and ``topic_distribution.npy``; the app loads them back into the same
bundle (``explorer.state.data.Corpus.tables``), curation edits replace it, and the offline export reads
it. Nothing here reads or writes files: this module sits below every stage.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True, eq=False)
class TopicTables:
    """The tables describing a build's k topics (n papers); row ``j`` of every per-topic table or
    array is row ``j`` of ``topics``.

    Attributes:
        topics: topics.parquet's rows (``schema.TOPIC_COLUMNS``; in the app plus ``label_support``
            and ``curated``), one per topic.
        topic_terms: topic_terms.parquet (``schema.TOPIC_TERM_COLUMNS``), a long table.
        hierarchy: hierarchy.parquet (``schema.HIERARCHY_COLUMNS``).
        topic_embeddings: float32 ``(k, dim)``.
        similarity: float32 ``(k, k)`` cosine similarity of the topic embeddings.
        distribution: float32 ``(n, k)`` per-paper topic distribution (rows sum to 1); the app
            memory-maps it.
    """

    topics: pd.DataFrame
    topic_terms: pd.DataFrame
    hierarchy: pd.DataFrame
    topic_embeddings: np.ndarray
    similarity: np.ndarray
    distribution: np.ndarray
