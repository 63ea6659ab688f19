"""The build's full fit, stage by stage: reduce (from the stage cache when its key matches), check
an approximate kNN graph, cluster, count terms, represent the topics, then trends and stability.

``pipeline.build.build`` runs it when new papers cannot be placed into the current build's topics.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis.trends import compute_trends, growth_per_year
from pipeline.build.map_job import MapJob, map_in_background
from pipeline.build.results import FittedModel, TopicResult
from pipeline.build.stability_job import BACKGROUND_MIN_PAPERS, StabilityJob
from pipeline.build.stage_cache import StageCache, array_digest
from pipeline.core import artifacts
from pipeline.core.config import BuildConfig
from pipeline.core.topic_tables import TopicTables
from pipeline.evaluation.evaluate import npmi_coherence
from pipeline.evaluation.evaluate import topic_stability as evaluate_topic_stability
from pipeline.model.cluster import cluster
from pipeline.model.cluster_params import uses_projection
from pipeline.model.label_background import own_titles
from pipeline.model.reduce import RECALL_SAMPLE, REDUCE_VERSION, Projection, is_exact, knn_recall, reduce, shared_knn
from pipeline.model.represent import fit_topics
from pipeline.model.vocab import doc_terms


def reduce_cached(
    embeddings: np.ndarray, config: BuildConfig, root: Path, on_knn=None, *, map_jobs: list[MapJob] | None = None
) -> tuple[Projection | MapJob, bool]:
    """The projection from the stage cache or computed; ``on_knn(knn)`` is called once the kNN graph exists.

    With ``map_jobs`` (a list the caller closes), a corpus whose clustering does not read the map
    (``map_job.map_in_background``) gets a ``MapJob`` instead: the kNN graph now, the map from a
    background process when ``projection()`` is called (then cached as the computed one is)."""
    digest = array_digest(embeddings)
    digest.update(json.dumps(asdict(config.umap), sort_keys=True).encode())
    digest.update(f"{REDUCE_VERSION}-{uses_projection(config.cluster)}".encode())
    cache = StageCache(artifacts.cache_dir(root))
    entry = f"reduce-{digest.hexdigest()[:20]}"
    folder = cache.get(entry)
    if folder is not None:
        try:
            projection = Projection.load(folder)
            if on_knn:
                on_knn((projection.knn_indices, projection.knn_dists))
            return projection, True
        except (OSError, ValueError):  # damaged, or pruned while we read it: compute it again
            cache.discard(entry)
    knn = shared_knn(embeddings, config.umap)
    if on_knn:
        on_knn(knn)
    if map_jobs is not None and map_in_background(len(embeddings), config):
        job = MapJob(embeddings, knn, config.umap, on_done=lambda projection: cache.put(entry, projection.save))
        map_jobs.append(job)
        return job, False
    projection = reduce(embeddings, config.umap, knn=knn, with_cluster=uses_projection(config.cluster))
    cache.put(entry, projection.save)
    return projection, False


def fit_full(papers, texts: list[str], embeddings, config: BuildConfig, root: Path, embedder, run) -> TopicResult:
    job = StabilityJob(embeddings, config, artifacts.cache_dir(root), background_min_papers=BACKGROUND_MIN_PAPERS)
    map_jobs: list[MapJob] = []
    try:
        return _fit_full_with(job, map_jobs, papers, texts, embeddings, config, root, embedder, run)
    finally:
        job.close()
        for map_job in map_jobs:
            map_job.close()


def _fit_full_with(
    job, map_jobs, papers, texts: list[str], embeddings, config: BuildConfig, root, embedder, run
) -> TopicResult:
    """The full fit; ``texts`` is ``papers["model_text"]`` as one list (made once: a million
    Python strings are over a gigabyte)."""
    n = len(papers)
    reduced = _reduce_stage(job, map_jobs, embeddings, config, root, run)
    knn = _knn_info(embeddings, reduced.knn_indices, config)
    if knn["method"] != "exact":
        with run.stage("knn_recall", f"Checking the approximate kNN graph on {knn['recall_sample']:,} papers") as clock:
            knn["recall"] = round(knn_recall(embeddings, reduced.knn_indices, sample=knn["recall_sample"]), 4)
            clock.note = f"recall@{knn['k']} {knn['recall']:.3f}"
    # The graph clustering and Ward never read the projection: with the map still being made
    # (a MapJob) they get none, and BERTopic (which only hands it to our clusters) gets zeros.
    points = reduced.cluster if isinstance(reduced, Projection) else None
    with run.stage("cluster", "Clustering") as clock:
        clustering = cluster(points, embeddings, config.cluster, knn=reduced.knn_indices)
        clock.note = f"{clustering.n_clusters} clusters, {clustering.raw_outlier.mean() if n else 0:.1%} outliers"
    with run.stage("vocabulary", "Counting terms"):
        dt = doc_terms(texts, ngram_range=config.represent.ngram_range, min_df=config.represent.min_df)
    with run.stage("represent", "Building topic representations (c-TF-IDF, KeyBERTInspired, MMR, hierarchy)"):
        tm = fit_topics(
            texts,
            embeddings,
            points if points is not None else np.zeros((n, 2), dtype=np.float32),
            clustering.labels,
            clustering.raw_outlier,
            papers["doc_id"].tolist(),
            dt,
            config.represent,
            embedder,
            titles=own_titles(papers),
        )
    if isinstance(reduced, MapJob):
        with run.stage("map", "Waiting for the map (2-d UMAP, made beside the clustering)") as clock:
            projection = reduced.projection()
            clock.note = reduced.mode
    else:
        projection = reduced
    quality = f"stability across {len(job.seeds)} runs on 90% samples" if job.seeds else "no stability"
    with run.stage("trends", f"Computing trends and topic quality ({quality})") as clock:
        started = time.perf_counter()
        others = job.runs()
        per_topic = evaluate_topic_stability(tm.topics, others) if others else {}
        waited = time.perf_counter() - started
        clock.note = f"stability {job.mode if not job.error else 'failed: ' + job.error}" + (
            f", {waited:.1f}s" if job.seeds else ""
        )
        trends = compute_trends(papers["year"], tm.topics, dt, tm.written)
        topic_table = _finish_topic_table(tm.tables.topics, tm.topics, projection.map, trends, dt)
        topic_table["stability"] = [per_topic.get(int(t), np.nan) for t in topic_table["topic"]]
    topic_pos = {t: i for i, t in enumerate(topic_table["topic"].tolist())}
    probs = np.array(
        [tm.tables.distribution[i, topic_pos[t]] if t in topic_pos else 0.0 for i, t in enumerate(tm.topics)],
        dtype=np.float32,
    )
    return TopicResult(
        topics=tm.topics,
        topic_prob=probs,
        was_outlier=clustering.raw_outlier,
        placed=np.zeros(n, dtype=bool),
        xy=projection.map,
        tables=TopicTables(
            topics=topic_table,
            topic_terms=tm.tables.topic_terms,
            hierarchy=tm.tables.hierarchy,
            topic_embeddings=tm.tables.topic_embeddings,
            similarity=tm.tables.similarity,
            distribution=tm.tables.distribution,
        ),
        trends=trends,
        model=FittedModel(tm.model),
        cluster_params=asdict(clustering.params),
        fitted_papers=n,
        fitted_at=None,
        stability=job.info(list(per_topic.values())) if job.seeds else {"computed": job.mode},
        reassigned=int(clustering.raw_outlier.sum()) if config.cluster.reassign_outliers else 0,
        stability_mean=float(np.mean(list(per_topic.values()))) if per_topic else None,
        knn=knn,
    )


def _reduce_stage(job, map_jobs: list[MapJob], embeddings, config: BuildConfig, root, run) -> Projection | MapJob:
    """The reduce stage: the kNN graph (then the stability job starts) and the map, or a
    ``MapJob`` making the map in a background process."""
    what = (
        f"{config.umap.cluster_dims}-d for clustering, 2-d for the map"
        if uses_projection(config.cluster)
        else "kNN graph for clustering, 2-d map"
    )
    with run.stage("reduce", f"Projecting with UMAP ({what})") as clock:
        reduced, cached = reduce_cached(embeddings, config, root, on_knn=job.start, map_jobs=map_jobs)
        clock.note = "cached" if cached else ("the map in a background process" if map_jobs else "")
    return reduced


def _knn_info(embeddings, knn_indices: np.ndarray, config: BuildConfig) -> dict:
    """The manifest's ``knn`` section: how the shared kNN graph was found (and, when approximate,
    its recall against exact neighbours on a sample, filled in by the build)."""
    n, width = knn_indices.shape
    if is_exact(n, config.umap):
        return {"method": "exact", "k": int(width), "exact_knn_max": config.umap.exact_knn_max}
    return {
        "method": "pynndescent",
        "k": int(width),
        "exact_knn_max": config.umap.exact_knn_max,
        "recall_sample": min(RECALL_SAMPLE, n),
        "recall": None,
        "recall_measure": "mean over sampled papers of the share of their exact k nearest papers "
        "(cosine, self included) that the graph lists (pipeline.model.reduce.knn_recall)",
    }


def _finish_topic_table(table: pd.DataFrame, topics: np.ndarray, xy: np.ndarray, trends, dt) -> pd.DataFrame:
    """Add map positions, coherence and growth to the topic table."""
    table = table.copy()
    if not len(table):
        return table
    centres = {t: np.median(xy[topics == t], axis=0) for t in table["topic"]}
    table["x"] = [float(centres[t][0]) for t in table["topic"]]
    table["y"] = [float(centres[t][1]) for t in table["topic"]]
    table["coherence"] = _coherence(table["keyword_terms"].tolist(), dt)  # the vocabulary's terms
    growth = growth_per_year(trends.topic_years) if len(trends.years) >= 2 else {}
    table["growth"] = [growth.get(int(t), np.nan) for t in table["topic"]]
    return table


def _coherence(topic_words: list[list[str]], dt) -> list[float]:
    if dt.counts.shape[1] == 0:
        return [float("nan")] * len(topic_words)
    _, per_topic = npmi_coherence(topic_words, dt.presence(), dt.vocabulary, top_n=10)
    return [float(x) for x in per_topic]
