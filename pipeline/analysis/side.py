"""One build as a comparison reads it (``Side``): shared by ``pipeline.analysis.compare``, which loads and
compares two of them, and ``pipeline.analysis.distinctive``, which finds the terms that tell them apart.

A module of its own so that neither imports the other for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True, eq=False)
class Side:
    """What a comparison reads of one build.

    Attributes:
        name, build_id: which build.
        model_key: the embedding model's key (two builds must share it to be compared).
        doc_ids: object ``(n,)``.
        topics: int ``(n,)`` each paper's topic id.
        years: float ``(n,)`` each paper's year, NaN when unknown.
        embeddings: float32 ``(n, dim)`` normalised (a memory map is fine).
        xy: float32 ``(n, 2)`` map positions.
        topic_table: one row per topic: topic, label, size, keywords (list of str).
        topic_embeddings: float32 ``(topics, dim)``, row j is ``topic_table`` row j.
        terms: the vocabulary with document frequencies: term, df.
        texts: ``texts(rows) -> list[str]``, the modelling text of those papers (for counting
            terms on the other build's vocabulary).
        written: the vocabulary's terms its papers write otherwise than in lower case, with that
            form (``pipeline.analysis.topic_files.written_forms``): how the comparison shows them.
    """

    name: str
    build_id: str
    model_key: str
    doc_ids: np.ndarray
    topics: np.ndarray
    years: np.ndarray
    embeddings: np.ndarray
    xy: np.ndarray
    topic_table: pd.DataFrame
    topic_embeddings: np.ndarray
    terms: pd.DataFrame
    texts: Callable[[np.ndarray], list[str]] = field(repr=False)
    ngram_range: tuple[int, int] = (1, 2)
    written: dict[str, str] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.doc_ids)

    @property
    def labels(self) -> dict[int, str]:
        return dict(zip(self.topic_table["topic"].astype(int), self.topic_table["label"].astype(str), strict=True))
