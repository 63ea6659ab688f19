"""The baselines our topics are compared with: vanilla BERTopic (with and without
``reduce_outliers``), k-means on the embeddings and LDA on word counts.

Each returns a :class:`BaselineResult` with labels, top words where meaningful, and seconds; the
measures of ``pipeline.evaluation.evaluate`` score them (``pipeline.evaluation.quality`` runs them).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.model import bertopic_import


@dataclass(frozen=True)
class BaselineResult:
    """What a baseline produced.

    Attributes:
        labels: ``(n,)`` int cluster or topic per document; ``-1`` marks outliers.
        topic_words: per topic (ordered by topic id, outliers excluded) its top words, best first;
            ``None`` for methods without a word representation (k-means).
        seconds: wall time of the fit (and outlier reduction, where applicable).
    """

    labels: np.ndarray
    topic_words: list[list[str]] | None
    seconds: float


def _bertopic_words(model: Any, top_n: int = 10) -> list[list[str]]:
    topics = sorted(t for t in model.get_topics() if t != -1)
    return [[word for word, _ in model.get_topic(t)[:top_n]] for t in topics]


def _fit_vanilla(docs: Sequence[str], embeddings: np.ndarray, embedding_model: Any, seed: int) -> tuple[Any, list[int]]:
    bertopic_import.prepare()  # as the pipeline imports it (the parts it skips are never used)
    from bertopic import BERTopic
    from umap import UMAP

    # BERTopic's own UMAP defaults, with a seed (which makes UMAP single-threaded).
    umap_model = UMAP(n_neighbors=15, n_components=5, min_dist=0.0, metric="cosine", random_state=seed)
    model = BERTopic(embedding_model=embedding_model, umap_model=umap_model)
    topics, _ = model.fit_transform(list(docs), embeddings=np.asarray(embeddings, dtype=np.float32))
    return model, list(topics)


def vanilla_bertopic(
    docs: Sequence[str], embeddings: np.ndarray, embedding_model: Any = None, seed: int = 0
) -> BaselineResult:
    """BERTopic with its default parameters (UMAP seeded) on precomputed embeddings.

    Args:
        docs: the ``n`` documents.
        embeddings: ``(n, dim)`` float32 document embeddings.
        embedding_model: passed to ``BERTopic(embedding_model=...)``; ``None`` is fine with
            precomputed embeddings and the default (c-TF-IDF) representation.
        seed: UMAP's ``random_state``.
    """
    start = time.perf_counter()
    model, topics = _fit_vanilla(docs, embeddings, embedding_model, seed)
    return BaselineResult(np.asarray(topics, dtype=np.int64), _bertopic_words(model), time.perf_counter() - start)


def vanilla_bertopic_reduce_outliers(
    docs: Sequence[str], embeddings: np.ndarray, embedding_model: Any = None, seed: int = 0
) -> BaselineResult:
    """:func:`vanilla_bertopic`, then ``reduce_outliers`` with its default strategy ("distributions").

    Topic words are those of the fit (``reduce_outliers`` does not update representations).
    """
    start = time.perf_counter()
    model, topics = _fit_vanilla(docs, embeddings, embedding_model, seed)
    if -1 in topics:
        topics = model.reduce_outliers(list(docs), topics)
    return BaselineResult(np.asarray(topics, dtype=np.int64), _bertopic_words(model), time.perf_counter() - start)


def vanilla_bertopic_pair(
    docs: Sequence[str], embeddings: np.ndarray, embedding_model: Any = None, seed: int = 0
) -> tuple[BaselineResult, BaselineResult]:
    """:func:`vanilla_bertopic` and :func:`vanilla_bertopic_reduce_outliers` from one fit.

    The second result's ``seconds`` include the fit.
    """
    start = time.perf_counter()
    model, topics = _fit_vanilla(docs, embeddings, embedding_model, seed)
    words = _bertopic_words(model)
    fitted = time.perf_counter() - start
    plain = BaselineResult(np.asarray(topics, dtype=np.int64), words, fitted)
    if -1 in topics:
        topics = model.reduce_outliers(list(docs), topics)
    reduced = BaselineResult(np.asarray(topics, dtype=np.int64), words, time.perf_counter() - start)
    return plain, reduced


def kmeans(embeddings: np.ndarray, k: int, seed: int = 0) -> BaselineResult:
    """k-means with ``k`` clusters on the (L2-normalised) embeddings; no outliers, no words."""
    from sklearn.cluster import KMeans

    start = time.perf_counter()
    labels = KMeans(n_clusters=k, random_state=seed).fit_predict(np.asarray(embeddings, dtype=np.float32))
    return BaselineResult(np.asarray(labels, dtype=np.int64), None, time.perf_counter() - start)


def lda(docs: Sequence[str], k: int, seed: int = 0, *, top_n: int = 10) -> BaselineResult:
    """Latent Dirichlet allocation with ``k`` topics on word counts (English stop words removed).

    Each document is labelled with its most probable topic; topic words are the ``top_n`` words of
    highest weight in each topic.
    """
    from sklearn.decomposition import LatentDirichletAllocation
    from sklearn.feature_extraction.text import CountVectorizer

    start = time.perf_counter()
    vectorizer = CountVectorizer(stop_words="english", min_df=min(2, len(docs)))
    counts = vectorizer.fit_transform(docs)
    model = LatentDirichletAllocation(n_components=k, random_state=seed)
    doc_topic = model.fit_transform(counts)
    terms = vectorizer.get_feature_names_out()
    words = [[str(terms[i]) for i in np.argsort(-weights)[:top_n]] for weights in model.components_]
    return BaselineResult(np.asarray(doc_topic.argmax(axis=1), dtype=np.int64), words, time.perf_counter() - start)
