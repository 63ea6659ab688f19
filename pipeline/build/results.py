"""Typed results passed between the build's stages and the writer.

The embedding, reduction and clustering stages have their own result types next to their code
(``pipeline.embed.embed.EmbedResult``, ``pipeline.model.reduce.Projection``, ``pipeline.model.cluster.Clustering``,
``pipeline.model.represent.TopicModel``). :class:`TopicResult` is what a full fit
(``pipeline.build.build``) or an incremental placement (``pipeline.build.incremental``) hands to the writer
(``pipeline.build.writer``): the same fields whichever path made it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pipeline.core.topic_tables import TopicTables
from pipeline.model.represent import save_bertopic


class ModelSource(Protocol):
    """Where the build's BERTopic model comes from; ``save`` writes it into a build folder."""

    def save(self, dest: Path) -> None: ...


@dataclass(frozen=True)
class FittedModel:
    """A BERTopic model fitted by this build (saved with safetensors)."""

    model: Any

    def save(self, dest: Path) -> None:
        save_bertopic(self.model, dest)


@dataclass(frozen=True)
class PreviousModel:
    """The previous build's saved BERTopic model, reused unchanged by an incremental build."""

    folder: Path

    def save(self, dest: Path) -> None:
        shutil.copytree(self.folder, dest)


@dataclass(frozen=True)
class TopicResult:
    """Topics of every paper and the tables describing them (n papers, k topics).

    Attributes:
        topics: int ``(n,)`` canonical topic id per paper.
        topic_prob: float32 ``(n,)`` probability of each paper's topic.
        was_outlier: bool ``(n,)`` clustering left the paper out (it was placed afterwards).
        placed: bool ``(n,)`` added after the fit and placed into an existing topic.
        xy: float32 ``(n, 2)`` map positions.
        tables: the per-topic tables (``pipeline.core.topic_tables.TopicTables``); ``tables.topics``
            has topics.parquet's columns (``schema.TOPIC_COLUMNS``), one row per topic.
        trends: ``pipeline.analysis.trends.Trends`` (terms, years, topic_years, keyword_years tables).
        model: the BERTopic model to save (fitted now, or copied from the previous build).
        cluster_params: the resolved clustering parameters, for the manifest.
        fitted_papers: papers the topics were fitted on.
        fitted_at: when the topics were fitted (None: by this build).
        stability: the manifest's ``stability`` section.
        reassigned: papers clustering left out that were placed afterwards.
        placed_new: papers this build placed into existing topics.
        stability_mean: mean per-topic stability, or None when not measured.
        knn: how the fit's kNN graph was found (exact, or approximate with its measured recall).
    """

    topics: np.ndarray
    topic_prob: np.ndarray
    was_outlier: np.ndarray
    placed: np.ndarray
    xy: np.ndarray
    tables: TopicTables
    trends: Any
    model: ModelSource
    cluster_params: dict
    fitted_papers: int
    fitted_at: str | None
    stability: dict
    reassigned: int
    placed_new: int = 0
    stability_mean: float | None = None
    knn: dict | None = None

    @property
    def outlier_share(self) -> float:
        return float(self.was_outlier.mean()) if len(self.was_outlier) else 0.0
