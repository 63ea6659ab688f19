"""The build runner: ingest -> embed -> reduce -> cluster -> represent -> trends -> write -> publish.

The stages are pure functions in their own modules; this runner does the orchestration, the
caching, the progress reporting and the measurements. The writer (``pipeline.writer``), the
stability job (``pipeline.stability_job``), incremental placement (``pipeline.incremental``) and
the stage cache (``pipeline.stage_cache``) have their own modules.

Three ways a build can go:

* ``up-to-date``: the inputs, the model's content and the settings that change results
  (:func:`fingerprint`) match the current build; nothing is done.
* ``incremental``: the current build was fitted with the same settings and model and its papers
  are a subset of the new inputs; the new papers are embedded and placed into the existing topics
  (nearest topic embedding, map position from their nearest papers). ``refit=True`` forces a full
  fit instead.
* ``full``: everything is fitted; embeddings and projections come from the caches when their keys
  match.

Interrupts and failures (the contract the CLI, the app's "add a corpus" worker and tests rely on):
everything a build writes, the final manifest with its stage timings included, is written into a
new unpublished folder while the corpus's build lock is held; publishing is one atomic swap of the
``<name>`` link (``pipeline.artifacts.publish``), after which the build writes nothing into it.
Older builds are deleted only after the swap, and never the current one. So whenever a build stops,
by an exception, Ctrl-C (``KeyboardInterrupt``), SIGTERM turned into one (the CLI does) or even
SIGKILL, exactly one complete build is loadable: the previous one if the swap had not happened (the
new folder is deleted), the new one if it had (it is kept). ``pipeline.artifacts.current_build``
tells which. Vectors embedded before an interrupt stay in the embedding store and are reused.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import artifacts, incremental, schema, writer
from pipeline.cluster import CLUSTER_VERSION, cluster
from pipeline.cluster_params import uses_projection
from pipeline.config import BuildConfig
from pipeline.embed import embed_texts
from pipeline.embed_model import EMBED_VERSION, model_fingerprint, model_key, resolve_model_path
from pipeline.encoders import Encoder, load_encoder
from pipeline.errors import PipelineError
from pipeline.evaluate import npmi_coherence
from pipeline.evaluate import topic_stability as evaluate_topic_stability
from pipeline.ingest import ingest
from pipeline.progress import Reporter, StageClock, StageRecord, format_seconds
from pipeline.reduce import RECALL_SAMPLE, REDUCE_VERSION, Projection, is_exact, knn_recall, reduce, shared_knn
from pipeline.represent import REPRESENT_VERSION, fit_topics, growth_per_year
from pipeline.results import FittedModel, TopicResult
from pipeline.settings import config_from_manifest, result_settings
from pipeline.stability_job import BACKGROUND_MIN_PAPERS, StabilityJob
from pipeline.stage_cache import StageCache, array_digest
from pipeline.topic_tables import TopicTables
from pipeline.trends import compute_trends
from pipeline.vocab import doc_terms

__all__ = ["BACKGROUND_MIN_PAPERS", "BuildSummary", "StageRunner", "build", "fingerprint", "fit_settings_key"]


@dataclass
class BuildSummary:
    """What a build did, for the screen and for tests."""

    name: str
    folder: Path
    mode: str  # "full", "incremental" or "up-to-date"
    read: int = 0
    papers: int = 0
    skipped: int = 0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    changed: int = 0
    topics: int = 0
    outlier_share: float = 0.0
    reassigned: int = 0
    placed: int = 0
    stability: float | None = None
    embedded: int = 0
    embeddings_cached: int = 0
    build_id: str = ""
    stages: list[StageRecord] = field(default_factory=list)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """The summary printed at the end of a build."""
        if self.mode == "up-to-date":
            return [
                f"{self.name}: artifacts are up to date ({self.papers:,} papers, {self.topics} topics) in {self.folder}"
            ]
        out = [
            f"Built {self.name!r} ({self.mode}) in {format_seconds(self.seconds)} -> {self.folder} (build {self.build_id})",
            f"  papers: {self.read:,} read, {self.papers:,} kept, {self.skipped:,} skipped"
            + (
                f" ({', '.join(f'{k}: {v}' for k, v in sorted(self.skipped_by_reason.items()))})"
                if self.skipped
                else ""
            )
            + (f", {self.changed:,} changed (see ingest_report.parquet)" if self.changed else ""),
            f"  embeddings: {self.embedded:,} computed, {self.embeddings_cached:,} from cache",
            f"  topics: {self.topics}; outliers: {self.outlier_share:.1%} of papers"
            + (f", {self.reassigned:,} placed in their nearest topic" if self.reassigned else ""),
        ]
        if self.stability is not None:
            out.append(
                f"  stability: {self.stability:.2f} (mean over topics of the best overlap with the topics of runs on 90% samples)"
            )
        if self.placed:
            out.append(f"  {self.placed:,} new papers placed into the existing topics (--refit to refit all)")
        out.append("  time per stage: " + ", ".join(f"{s.name} {format_seconds(s.seconds)}" for s in self.stages))
        out.append(f"  peak memory: {max((s.peak_rss_mb for s in self.stages), default=0):,.0f} MB")
        return out


def fingerprint(inputs: list[dict], config: BuildConfig, embedding_key: str) -> str:
    """Hash of everything that decides a build's result: the input files' contents, the model's
    content (``embedding_key``: ``pipeline.embed_model.model_key``, or an injected encoder's key), the
    settings that change results (``pipeline.settings.result_settings``: not threads, batch size
    or where stability runs) and the stages' versions."""
    payload = {
        "inputs": sorted(i["sha256"] for i in inputs),
        "config": result_settings(config),
        "embedding": embedding_key,
        "versions": [EMBED_VERSION, REDUCE_VERSION, CLUSTER_VERSION, REPRESENT_VERSION, schema.SCHEMA_VERSION],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:20]


def fit_settings_key(config: BuildConfig, embedding_key: str) -> str:
    """What makes two fits comparable, so that new papers can be placed into an old fit: the model
    and the settings that change results, except ingest (it only selects papers) and stability
    (measured beside the fit; it never changes the topics)."""
    cfg = result_settings(config)
    cfg.pop("ingest", None)
    cfg.pop("stability", None)
    cfg["embedding"] = embedding_key
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


class StageRunner:
    """Runs the build's stages: a numbered progress line and a :class:`StageClock` per stage."""

    def __init__(self, reporter: Reporter):
        self.reporter = reporter
        self.records: list[StageRecord] = []

    def stage(self, name: str, title: str):
        """A context manager for one stage; its record is kept when it ends (even by an error)."""
        self.reporter.line(f"[{len(self.records) + 1}] {title}")
        clock = StageClock(name)
        runner = self

        class _Stage:
            def __enter__(self):
                return clock.__enter__()

            def __exit__(self, *exc):
                clock.__exit__(*exc)
                runner.records.append(clock.record)
                return False

        return _Stage()


@dataclass(frozen=True)
class _Embedding:
    """Which vectors this build uses: the store key, and what the manifest says about them."""

    key: str
    manifest: dict


def _embedding_identity(config: BuildConfig, encoder: Encoder | None) -> _Embedding:
    """The embedding key and manifest entry; resolves the model folder (a missing one fails here,
    before any input is read)."""
    injected = getattr(encoder, "key", None)
    if injected:
        return _Embedding(
            injected,
            {
                "model": f"{type(encoder).__name__} (injected)",
                "model_key": injected,
                "model_fingerprint": None,
                "backend": "injected",
            },
        )
    path = resolve_model_path(config.embed.model)
    return _Embedding(
        model_key(config.embed),
        {
            "model": config.embed.model,
            "model_key": model_key(config.embed),
            "model_fingerprint": model_fingerprint(path),
            "backend": config.embed.backend,
        },
    )


def _previous_build(root: Path, name: str, *, needed: bool) -> incremental.PreviousBuild | None:
    """The corpus's current build with its validated settings, or None.

    Raises:
        PipelineError: its manifest's settings are not valid (edited by hand) and ``needed``
            (an incremental build would use them; ``refit`` does not).
    """
    current = artifacts.current_build(root, name)
    if current is None:
        return None
    manifest = artifacts.read_manifest(current.folder)
    try:
        config = config_from_manifest(manifest, str(current.folder / schema.MANIFEST))
    except PipelineError:
        if needed:
            raise
        return None
    return incremental.PreviousBuild(current.folder, manifest, config)


def build(
    inputs: list[Path],
    name: str,
    root: Path,
    config: BuildConfig = BuildConfig(),
    *,
    refit: bool = False,
    force: bool = False,
    reporter: Reporter | None = None,
    encoder: Encoder | None = None,
    engine=None,
) -> BuildSummary:
    """Build corpus ``name`` from ``inputs`` into ``root/name``.

    Settings are validated when ``config`` is made (``pipeline.config``); the model folder and the
    previous build's manifest are checked before any input is read.

    Args:
        inputs: input files (any supported format).
        name: corpus name (folder name under ``root``).
        root: the artifacts folder.
        config: all settings.
        refit: fit everything even when new papers could be placed into the existing topics.
        force: rebuild even when the artifacts are up to date.
        reporter: progress output (quiet if None).
        encoder: an encoder to use instead of loading ``config.embed``'s model. If it has a ``key``
            attribute (tests' injected encoders), its vectors are stored, fingerprinted and
            recorded under that key; otherwise it stands for the configured model (e.g. the same
            model run elsewhere) and the model's key applies.
        engine: computes the missing paper embeddings instead of this process (``pipeline.engines``,
            e.g. ``RayEngine``); None: the local engine.

    Raises:
        PipelineError: unusable input or settings; ArtifactError: another build holds the lock.
        KeyboardInterrupt: interrupted; see the module docstring for what is left behind.
    """
    reporter = reporter or Reporter(quiet=True)
    root = Path(root)
    artifacts.check_name(name)
    embedding = _embedding_identity(config, encoder)
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    run = StageRunner(reporter)
    with artifacts.build_lock(root, name):
        artifacts.discard_stale_builds(root, name)
        previous = _previous_build(root, name, needed=not refit)
        folder: Path | None = None
        try:
            with run.stage("ingest", f"Reading {len(inputs)} input file(s)"):
                result = ingest(inputs, config.ingest, progress=reporter.counter("rows", "rows"))
            papers = result.papers.reset_index(drop=True)
            ingest_summary = result.summary()
            input_dicts = [i.to_dict() for i in result.inputs]
            fp = fingerprint(input_dicts, config, embedding.key)
            summary = BuildSummary(
                name=name,
                folder=root / name,
                mode="full",
                read=ingest_summary.get("read", 0),
                papers=len(papers),
                skipped=ingest_summary.get("skipped", 0),
                skipped_by_reason={
                    k: v
                    for k, v in result.report.loc[result.report["action"] == "skipped", "reason"].value_counts().items()
                },
                changed=ingest_summary.get("changed", 0),
            )
            refit_needed = refit and previous is not None and previous.manifest.get("mode") == "incremental"
            if previous is not None and not force and not refit_needed and previous.manifest.get("fingerprint") == fp:
                summary.mode = "up-to-date"
                summary.topics = previous.manifest.get("counts", {}).get("topics", 0)
                summary.build_id = previous.folder.name
                return summary

            texts = papers["model_text"].tolist()
            on = f" on {engine.name}" if engine is not None else ""
            with run.stage("embed", f"Embedding {len(texts):,} papers ({embedding.manifest['backend']}{on})") as clock:
                embedder = _Embedder(config, root, encoder, embedding.key, engine)
                emb = embedder.embed_papers(texts, reporter)
                summary.embedded, summary.embeddings_cached = emb.computed, emb.cached
                clock.note = f"{emb.computed} computed, {emb.cached} cached"
            folder = artifacts.new_build_dir(root, name)
            # The vectors go into the build's embeddings.npy now; every later stage reads them
            # from there, memory-mapped (the page cache holds them, not the build's heap).
            embeddings = writer.save_embeddings(folder, emb.vectors)
            del emb

            fit_key = fit_settings_key(config, embedding.key)
            plan = None if refit else incremental.plan(previous, papers, fit_key)
            if plan is not None:
                summary.mode = "incremental"
                with run.stage("place", f"Placing {plan.n_new:,} new papers into the existing topics"):
                    topics = incremental.place(plan, papers, embeddings)
                with run.stage("trends", "Recomputing trends"):
                    topics = incremental.with_trends(topics, papers, plan)
            else:
                topics = _fit_full(papers, texts, embeddings, config, root, embedder, run)
            with run.stage("write", "Writing artifacts"):
                writer.write_tables(folder, topics, papers, embeddings, result.report)
            # Every build writes the whole index again, an incremental one too: an index with
            # the new papers' terms and the corpus's new statistics (idf, mean length).
            with run.stage("keyword_index", f"Indexing {len(papers):,} papers for keyword search"):
                writer.write_keyword_index(folder, texts)
            summary.topics = len(topics.tables.topics)
            summary.stability = topics.stability_mean
            summary.outlier_share = topics.outlier_share
            summary.reassigned = topics.reassigned
            summary.placed = topics.placed_new
            summary.stages = run.records
            summary.seconds = time.perf_counter() - started
            summary.build_id = folder.name
            manifest = writer.manifest(
                build_id=folder.name,
                summary=summary,
                result=topics,
                papers=papers,
                embeddings=embeddings,
                inputs=input_dicts,
                config=config,
                fingerprint=fp,
                fit_settings=fit_key,
                embedding=embedding.manifest,
            )
            writer.write_manifest(folder, manifest)
            artifacts.publish(root, name, folder)
            artifacts.discard_stale_builds(root, name)
        except BaseException:
            if folder is not None:
                current = artifacts.current_build(root, name)
                if current is None or current.folder != folder.resolve():
                    shutil.rmtree(folder, ignore_errors=True)
            raise
    return summary


class _Embedder:
    """Embeds papers and, for KeyBERTInspired/MMR, words; both through the per-text store."""

    def __init__(self, config: BuildConfig, root: Path, encoder: Encoder | None, key: str, engine=None):
        self.config = config
        self.cache = artifacts.cache_dir(root)
        self._encoder = encoder
        self.key = key
        self.engine = engine  # papers only: the few words of KeyBERTInspired stay local

    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = load_encoder(self.config.embed, self.cache)
        return self._encoder

    def _for_store(self) -> Encoder:
        return _LazyEncoder(self) if self._encoder is None else self._encoder

    def embed_papers(self, texts: list[str], reporter: Reporter):
        if self.engine is not None:
            progress = reporter.counter("embedded", "papers")
            return self.engine(texts, self.config.embed, self.cache, progress=progress, encoder=self._encoder)
        return embed_texts(
            texts,
            self.config.embed,
            self.cache,
            progress=reporter.counter("embedded", "papers"),
            encoder=self._for_store(),
        )

    def __call__(self, texts: list[str]) -> np.ndarray:
        return embed_texts(texts, self.config.embed, self.cache, encoder=self._for_store()).vectors


class _LazyEncoder(Encoder):
    """Loads the real encoder only when a text is missing from the store."""

    def __init__(self, owner: _Embedder):
        self.owner = owner
        self.key = owner.key

    def encode(self, texts, progress=None):
        return self.owner.encoder().encode(texts, progress=progress)


def _reduce_cached(embeddings: np.ndarray, config: BuildConfig, root: Path, on_knn=None) -> tuple[Projection, bool]:
    """The projection from the stage cache or computed; ``on_knn(knn)`` is called once the kNN graph exists."""
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
    projection = reduce(embeddings, config.umap, knn=knn, with_cluster=uses_projection(config.cluster))
    cache.put(entry, projection.save)
    return projection, False


def _fit_full(
    papers, texts: list[str], embeddings, config: BuildConfig, root: Path, embedder, run: StageRunner
) -> TopicResult:
    job = StabilityJob(embeddings, config, artifacts.cache_dir(root), background_min_papers=BACKGROUND_MIN_PAPERS)
    try:
        return _fit_full_with(job, papers, texts, embeddings, config, root, embedder, run)
    finally:
        job.close()


def _fit_full_with(
    job, papers, texts: list[str], embeddings, config: BuildConfig, root, embedder, run: StageRunner
) -> TopicResult:
    """The full fit; ``texts`` is ``papers["model_text"]`` as one list (made once: a million
    Python strings are over a gigabyte)."""
    n = len(papers)
    what = (
        f"{config.umap.cluster_dims}-d for clustering, 2-d for the map"
        if uses_projection(config.cluster)
        else "kNN graph for clustering, 2-d map"
    )
    with run.stage("reduce", f"Projecting with UMAP ({what})") as clock:
        projection, cached = _reduce_cached(embeddings, config, root, on_knn=job.start)
        clock.note = "cached" if cached else ""
    knn = _knn_info(embeddings, projection, config)
    if knn["method"] != "exact":
        with run.stage("knn_recall", f"Checking the approximate kNN graph on {knn['recall_sample']:,} papers") as clock:
            knn["recall"] = round(knn_recall(embeddings, projection.knn_indices, sample=knn["recall_sample"]), 4)
            clock.note = f"recall@{knn['k']} {knn['recall']:.3f}"
    with run.stage("cluster", "Clustering") as clock:
        clustering = cluster(projection.cluster, embeddings, config.cluster, knn=projection.knn_indices)
        clock.note = f"{clustering.n_clusters} clusters, {clustering.raw_outlier.mean() if n else 0:.1%} outliers"
    with run.stage("vocabulary", "Counting terms"):
        dt = doc_terms(texts, ngram_range=config.represent.ngram_range, min_df=config.represent.min_df)
    with run.stage("represent", "Building topic representations (c-TF-IDF, KeyBERTInspired, MMR, hierarchy)"):
        tm = fit_topics(
            texts,
            embeddings,
            projection.cluster,
            clustering.labels,
            clustering.raw_outlier,
            papers["doc_id"].tolist(),
            dt,
            config.represent,
            embedder,
        )
    quality = f"stability across {len(job.seeds)} runs on 90% samples" if job.seeds else "no stability"
    with run.stage("trends", f"Computing trends and topic quality ({quality})") as clock:
        started = time.perf_counter()
        others = job.runs()
        per_topic = evaluate_topic_stability(tm.topics, others) if others else {}
        waited = time.perf_counter() - started
        clock.note = f"stability {job.mode if not job.error else 'failed: ' + job.error}" + (
            f", {waited:.1f}s" if job.seeds else ""
        )
        trends = compute_trends(papers["year"], tm.topics, dt)
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


def _knn_info(embeddings, projection: Projection, config: BuildConfig) -> dict:
    """The manifest's ``knn`` section: how the shared kNN graph was found (and, when approximate,
    its recall against exact neighbours on a sample, filled in by the build)."""
    n, width = projection.knn_indices.shape
    if is_exact(n, config.umap):
        return {"method": "exact", "k": int(width), "exact_knn_max": config.umap.exact_knn_max}
    return {
        "method": "pynndescent",
        "k": int(width),
        "exact_knn_max": config.umap.exact_knn_max,
        "recall_sample": min(RECALL_SAMPLE, n),
        "recall": None,
        "recall_measure": "mean over sampled papers of the share of their exact k nearest papers "
        "(cosine, self included) that the graph lists (pipeline.reduce.knn_recall)",
    }


def _finish_topic_table(table: pd.DataFrame, topics: np.ndarray, xy: np.ndarray, trends, dt) -> pd.DataFrame:
    """Add map positions, coherence and growth to the topic table."""
    table = table.copy()
    if not len(table):
        return table
    centres = {t: np.median(xy[topics == t], axis=0) for t in table["topic"]}
    table["x"] = [float(centres[t][0]) for t in table["topic"]]
    table["y"] = [float(centres[t][1]) for t in table["topic"]]
    table["coherence"] = _coherence(table["keywords"].tolist(), dt)
    growth = growth_per_year(trends.topic_years) if len(trends.years) >= 2 else {}
    table["growth"] = [growth.get(int(t), np.nan) for t in table["topic"]]
    return table


def _coherence(topic_words: list[list[str]], dt) -> list[float]:
    if dt.counts.shape[1] == 0:
        return [float("nan")] * len(topic_words)
    _, per_topic = npmi_coherence(topic_words, dt.presence(), dt.vocabulary, top_n=10)
    return [float(x) for x in per_topic]
