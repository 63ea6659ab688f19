"""The build runner: ingest -> embed -> reduce -> cluster -> represent -> trends -> write.

The stages are pure functions in their own modules; this runner does the I/O, the caching, the
progress reporting and the measurements, and publishes the result atomically (pipeline/artifacts.py).

Three ways a build can go:

* ``up-to-date``: the inputs and settings match the current build; nothing is done.
* ``incremental``: the current build was fitted with the same settings and its papers are a subset
  of the new inputs; the new papers are embedded and placed into the existing topics (nearest topic
  embedding, map position from their nearest papers). ``refit=True`` forces a full fit instead.
* ``full``: everything is fitted; embeddings and projections come from the caches when their keys
  match.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import artifacts, schema
from pipeline.cluster import CLUSTER_VERSION, cluster
from pipeline.config import BuildConfig
from pipeline.embed import EMBED_VERSION, Encoder, embed_texts, load_encoder, model_key
from pipeline.place import place_on_map, topic_distribution
from pipeline.progress import Reporter, StageClock, StageRecord, format_seconds
from pipeline.reduce import REDUCE_VERSION, Projection, reduce, shared_knn
from pipeline.represent import REPRESENT_VERSION

PACKAGES = (
    "bertopic", "umap-learn", "hdbscan", "sentence-transformers", "transformers", "torch", "onnxruntime",
    "scikit-learn", "numpy", "pandas", "pyarrow", "numba",
)  # fmt: skip

#: Corpora at least this large may compute the extra clusterings of per-topic stability in a
#: background process (``StabilityParams.background_min_cpus``); below it, starting a second
#: Python (imports, JIT compilation) costs more than it saves.
BACKGROUND_MIN_PAPERS = 2_000

#: Papers placed into existing topics at most, as a share of the fitted corpus, before a refit is
#: required: beyond it the topics no longer describe the corpus well.
MAX_INCREMENTAL_SHARE = 0.5


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
    stages: list[StageRecord] = field(default_factory=list)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """The summary printed at the end of a build."""
        if self.mode == "up-to-date":
            return [
                f"{self.name}: artifacts are up to date ({self.papers:,} papers, {self.topics} topics) in {self.folder}"
            ]
        out = [
            f"Built {self.name!r} ({self.mode}) in {format_seconds(self.seconds)} -> {self.folder}",
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
                f"  stability: {self.stability:.2f} (mean over topics of the best overlap with the topics of other UMAP seeds)"
            )
        if self.placed:
            out.append(f"  {self.placed:,} new papers placed into the existing topics (--refit to refit all)")
        out.append("  time per stage: " + ", ".join(f"{s.name} {format_seconds(s.seconds)}" for s in self.stages))
        out.append(f"  peak memory: {max((s.peak_rss_mb for s in self.stages), default=0):,.0f} MB")
        return out


def _package_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


def _config_dict(config: BuildConfig) -> dict:
    return json.loads(json.dumps(asdict(config), default=list))


def fingerprint(inputs: list[dict], config: BuildConfig) -> str:
    """Hash of everything that decides a build's result: input contents, settings, stage versions."""
    payload = {
        "inputs": sorted(i["sha256"] for i in inputs),
        "config": _config_dict(config),
        "versions": [EMBED_VERSION, REDUCE_VERSION, CLUSTER_VERSION, REPRESENT_VERSION, schema.SCHEMA_VERSION],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:20]


def _fit_settings_key(config: BuildConfig) -> str:
    """Settings that make two fits comparable (ingest settings excluded: they only select papers)."""
    cfg = _config_dict(config)
    cfg.pop("ingest", None)
    cfg.pop("stability", None)  # measured beside the fit; it never changes the topics
    return hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]


def _text_hashes(texts) -> np.ndarray:
    return np.array([hashlib.blake2b(t.encode(), digest_size=8).hexdigest() for t in texts])


class _Runner:
    def __init__(self, reporter: Reporter):
        self.reporter = reporter
        self.records: list[StageRecord] = []

    def stage(self, name: str, title: str) -> StageClock:
        self.reporter.line(f"[{len(self.records) + 1}] {title}")
        clock = StageClock(name)
        runner = self

        class _Wrapped:
            def __enter__(self):
                return clock.__enter__()

            def __exit__(self, *exc):
                clock.__exit__(*exc)
                runner.records.append(clock.record)
                return False

        return _Wrapped()


def _reduce_cached(embeddings: np.ndarray, config: BuildConfig, root: Path, on_knn=None) -> tuple[Projection, bool]:
    """The projection from the stage cache or computed; ``on_knn(knn)`` is called once the kNN graph exists."""
    digest = hashlib.sha256(np.ascontiguousarray(embeddings).tobytes())
    digest.update(json.dumps(asdict(config.umap), sort_keys=True).encode())
    digest.update(str(REDUCE_VERSION).encode())
    folder = artifacts.cache_dir(root) / "stages" / f"reduce-{digest.hexdigest()[:20]}"
    if (folder / "done").exists():
        try:
            projection = Projection.load(folder)
            if on_knn:
                on_knn((projection.knn_indices, projection.knn_dists))
            return projection, True
        except (OSError, ValueError):
            shutil.rmtree(folder, ignore_errors=True)
    knn = shared_knn(embeddings, config.umap)
    if on_knn:
        on_knn(knn)
    projection = reduce(embeddings, config.umap, knn=knn)
    tmp = folder.with_name(folder.name + f".tmp{time.time_ns()}")
    projection.save(tmp)
    (tmp / "done").write_text("ok")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    _prune_stage_cache(folder.parent, keep=12)
    return projection, False


def _prune_stage_cache(folder: Path, keep: int) -> None:
    entries = sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[keep:]:
        shutil.rmtree(old, ignore_errors=True)


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

    Args:
        inputs: input files (any supported format).
        name: corpus name (folder name under ``root``).
        root: the artifacts folder.
        config: all settings.
        refit: fit everything even when new papers could be placed into the existing topics.
        force: rebuild even when the artifacts are up to date.
        reporter: progress output (quiet if None).
        encoder: an embedding encoder to use instead of loading ``config.embed``'s (tests).
        engine: computes the missing embeddings instead of this process (``pipeline.engines``,
            e.g. ``RayEngine``); None: the local engine.

    Raises:
        PipelineError: unusable input or settings; ArtifactError: another build holds the lock.
    """
    from pipeline.ingest import ingest

    reporter = reporter or Reporter(quiet=True)
    root = Path(root)
    artifacts.check_name(name)
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    run = _Runner(reporter)
    with artifacts.build_lock(root, name):
        artifacts.discard_stale_builds(root, name)
        previous = _previous_build(root, name)

        with run.stage("ingest", f"Reading {len(inputs)} input file(s)"):
            result = ingest(inputs, config.ingest, progress=reporter.counter("rows", "rows"))
        papers = result.papers.reset_index(drop=True)
        ingest_summary = result.summary()
        input_dicts = [i.to_dict() for i in result.inputs]
        fp = fingerprint(input_dicts, config)
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
        refit_needed = refit and previous is not None and previous[1].get("mode") == "incremental"
        if previous is not None and not force and not refit_needed and previous[1].get("fingerprint") == fp:
            summary.mode = "up-to-date"
            summary.topics = previous[1].get("counts", {}).get("topics", 0)
            summary.folder = root / name
            return summary

        texts = papers["model_text"].tolist()
        on = f" on {engine.name}" if engine is not None else ""
        with run.stage("embed", f"Embedding {len(texts):,} papers ({config.embed.backend}{on})") as clock:
            embedder = _Embedder(config, root, encoder, engine)
            emb = embedder.embed_papers(texts, reporter)
            summary.embedded, summary.embeddings_cached = emb.computed, emb.cached
            clock.note = f"{emb.computed} computed, {emb.cached} cached"
        embeddings = emb.vectors

        incremental = None if refit else _incremental_plan(previous, papers, config)
        folder = artifacts.new_build_dir(root, name)
        try:
            if incremental is not None:
                summary.mode = "incremental"
                tables = _place_incrementally(incremental, papers, embeddings, run, summary)
            else:
                tables = _fit_full(papers, embeddings, config, root, embedder, run, summary, reporter)
            with run.stage("write", "Writing artifacts"):
                _write(folder, tables, papers, embeddings, result, input_dicts, config, fp, summary, emb.model_key, run)
            artifacts.publish(root, name, folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    summary.stages = run.records
    summary.seconds = time.perf_counter() - started
    summary.folder = root / name
    # The manifest was written before the last stage finished; record the final timings too.
    manifest_path = folder / schema.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["stages"] = [s.to_dict() for s in summary.stages]
    manifest["seconds_total"] = round(summary.seconds, 3)
    manifest["peak_rss_mb"] = round(max(s.peak_rss_mb for s in summary.stages), 1)
    artifacts.write_json(manifest_path, manifest)
    return summary


class _Embedder:
    """Embeds papers and, for KeyBERTInspired/MMR, words; both through the per-text cache."""

    def __init__(self, config: BuildConfig, root: Path, encoder: Encoder | None, engine=None):
        self.config = config
        self.cache = artifacts.cache_dir(root)
        self._encoder = encoder
        self.engine = engine  # papers only: the few words of KeyBERTInspired stay local

    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = load_encoder(self.config.embed, self.cache)
        return self._encoder

    def _key_params(self):
        return self.config.embed

    def embed_papers(self, texts: list[str], reporter: Reporter):
        if self.engine is not None:
            progress = reporter.counter("embedded", "papers")
            return self.engine(texts, self.config.embed, self.cache, progress=progress, encoder=self._encoder)
        return embed_texts(
            texts,
            self.config.embed,
            self.cache,
            progress=reporter.counter("embedded", "papers"),
            encoder=_LazyEncoder(self) if self._encoder is None else self._encoder,
        )

    def __call__(self, texts: list[str]) -> np.ndarray:
        return embed_texts(
            texts, self.config.embed, self.cache, encoder=_LazyEncoder(self) if self._encoder is None else self._encoder
        ).vectors


class _LazyEncoder(Encoder):
    """Loads the real encoder only when a text is missing from the cache."""

    def __init__(self, owner: _Embedder):
        self.owner = owner
        self.key = model_key(owner.config.embed)

    def encode(self, texts, progress=None):
        return self.owner.encoder().encode(texts, progress=progress)


def _previous_build(root: Path, name: str) -> tuple[Path, dict] | None:
    try:
        folder = artifacts.corpus_path(root, name)
        return folder, artifacts.read_manifest(folder)
    except artifacts.ArtifactError:
        return None


@dataclass
class _IncrementalPlan:
    folder: Path
    manifest: dict
    old_papers: pd.DataFrame
    new_mask: np.ndarray  # over the new papers table


def _incremental_plan(previous, papers: pd.DataFrame, config: BuildConfig) -> _IncrementalPlan | None:
    """Use the previous fit when it had the same settings and all its papers are still here."""
    if previous is None:
        return None
    folder, manifest = previous
    if manifest.get("fit_settings") != _fit_settings_key(config):
        return None
    try:
        old = artifacts.read_table(folder, schema.PAPERS)
    except artifacts.ArtifactError:
        return None
    old_keys = set(zip(old["doc_id"], _text_hashes(old["model_text"]), strict=True))
    new_keys = list(zip(papers["doc_id"], _text_hashes(papers["model_text"]), strict=True))
    if not old_keys.issubset(new_keys):
        return None
    new_mask = np.array([k not in old_keys for k in new_keys], dtype=bool)
    fitted = manifest.get("counts", {}).get("fitted_papers", len(old))
    if not new_mask.any() or (len(papers) - fitted) > MAX_INCREMENTAL_SHARE * fitted:
        return None
    return _IncrementalPlan(folder, manifest, old, new_mask)


class _StabilityJob:
    """The extra clusterings behind per-topic stability (``config.stability``).

    They come from the stage cache, from a background process started as soon as the kNN graph
    exists (large corpora: the map, clustering and representations go on meanwhile), or are
    computed in the build when asked for (small corpora). A failure costs the measurement, never
    the build.
    """

    def __init__(self, embeddings: np.ndarray, config: BuildConfig, root: Path):
        self.embeddings = embeddings
        self.config = config
        limit = config.stability.max_papers
        self.skipped = bool(limit) and len(embeddings) > limit and config.stability.runs > 0
        runs = 0 if self.skipped else max(0, config.stability.runs)
        self.seeds = [config.umap.seed + i for i in range(1, runs + 1)]
        digest = hashlib.sha256(np.ascontiguousarray(embeddings).tobytes())
        for part in (asdict(config.umap), asdict(config.cluster), self.seeds, [REDUCE_VERSION, CLUSTER_VERSION]):
            digest.update(json.dumps(part, sort_keys=True, default=list).encode())
        self.folder = artifacts.cache_dir(root) / "stages" / f"stability-{digest.hexdigest()[:20]}"
        if self.skipped:
            self.mode = f"off: more than {limit:,} papers (--stability measures it anyway)"
        else:
            self.mode = "off" if not self.seeds else "in the build"
        self.seconds = 0.0
        self.error: str | None = None
        self._knn = None
        self._pool = None
        self._pending = None
        self._runs: list[np.ndarray] | None = None

    def start(self, knn: tuple[np.ndarray, np.ndarray]) -> None:
        if not self.seeds:
            return
        if (self.folder / "done").exists():
            try:
                self._runs = list(np.load(self.folder / "labels.npy", allow_pickle=False))
                self.mode = "cached"
                return
            except (OSError, ValueError):
                shutil.rmtree(self.folder, ignore_errors=True)
        self._knn = knn
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        wanted = self.config.stability.background_min_cpus
        if len(self.embeddings) >= BACKGROUND_MIN_PAPERS and wanted and cpus >= wanted:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            from pipeline.quality import seed_clusterings

            try:
                # spawn, not fork: forking a process that uses OpenMP (numba, BLAS) is unsafe. An
                # executor, not a Pool: a worker that dies fails the future instead of being
                # restarted forever.
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
                self._pending = self._pool.submit(seed_clusterings, self.embeddings, knn, self.config, self.seeds)
                self.mode = "background process"
            except (OSError, RuntimeError) as exc:  # no processes here: compute in the build instead
                self.close()
                self.mode = f"in the build ({type(exc).__name__})"

    def runs(self) -> list[np.ndarray] | None:
        """The extra runs' labels (waiting for the background process if needed); None when off or failed."""
        if self._runs is not None or not self.seeds or self.error:
            return self._runs
        from pipeline.quality import seed_clusterings

        try:
            runs = None
            if self._pending is not None:
                try:
                    runs, self.seconds = self._pending.result()
                except Exception as exc:  # the process died or could not start: do it here
                    self.mode = f"in the build (background process failed: {type(exc).__name__})"
                finally:
                    self.close(finished=True)
            if runs is None:
                runs, self.seconds = seed_clusterings(self.embeddings, self._knn, self.config, self.seeds)
        except Exception as exc:  # the measurement is optional: report it, keep the build
            self.error = f"{type(exc).__name__}: {str(exc)[:200]}"
            return None
        self._runs = runs
        tmp = self.folder.with_name(self.folder.name + f".tmp{time.time_ns()}")
        tmp.mkdir(parents=True, exist_ok=True)
        np.save(tmp / "labels.npy", np.stack(runs).astype(np.int32), allow_pickle=False)
        (tmp / "done").write_text("ok")
        shutil.rmtree(self.folder, ignore_errors=True)
        tmp.rename(self.folder)
        return runs

    def close(self, finished: bool = False) -> None:
        """Stop the background process (let it exit cleanly when its work is done)."""
        if self._pool is None:
            return
        if not finished:  # the build failed or was interrupted: do not wait for the worker
            for process in list(getattr(self._pool, "_processes", {}).values()):
                process.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None

    def info(self, values: list[float]) -> dict:
        """What the manifest says about how stability was computed."""
        finite = [v for v in values if v == v]
        return {
            "measure": "per topic: mean over the extra runs of the best Jaccard overlap |A & B| / |A | B| "
            "between the topic's papers and any topic of that run (pipeline.evaluate.topic_stability)",
            "runs": len(self.seeds),
            "seeds": self.seeds,
            "same_as_build": "the build's kNN graph, UMAP settings and epochs and clustering; only the UMAP seed differs",
            "computed": self.mode if not self.error else f"failed: {self.error}",
            "seconds": round(self.seconds, 2),
            "mean": round(float(np.mean(finite)), 4) if finite else None,
        }


def _fit_full(papers, embeddings, config: BuildConfig, root, embedder, run, summary, reporter) -> dict:
    job = _StabilityJob(embeddings, config, root)
    try:
        return _fit_full_with(job, papers, embeddings, config, root, embedder, run, summary, reporter)
    finally:
        job.close()


def _fit_full_with(job, papers, embeddings, config: BuildConfig, root, embedder, run, summary, reporter) -> dict:
    from pipeline.evaluate import topic_stability as evaluate_topic_stability
    from pipeline.represent import fit_topics
    from pipeline.trends import compute_trends
    from pipeline.vocab import doc_terms

    n = len(papers)
    with run.stage(
        "reduce", f"Projecting with UMAP ({config.umap.cluster_dims}-d for clustering, 2-d for the map)"
    ) as clock:
        projection, cached = _reduce_cached(embeddings, config, root, on_knn=job.start)
        clock.note = "cached" if cached else ""
    with run.stage("cluster", "Clustering") as clock:
        clustering = cluster(projection.cluster, embeddings, config.cluster, knn=projection.knn_indices)
        clock.note = f"{clustering.n_clusters} clusters, {clustering.raw_outlier.mean() if n else 0:.1%} outliers"
    with run.stage("vocabulary", "Counting terms"):
        dt = doc_terms(
            papers["model_text"].tolist(), ngram_range=config.represent.ngram_range, min_df=config.represent.min_df
        )
    with run.stage("represent", "Building topic representations (c-TF-IDF, KeyBERTInspired, MMR, hierarchy)"):
        tm = fit_topics(
            papers["model_text"].tolist(),
            embeddings,
            projection.cluster,
            clustering.labels,
            clustering.raw_outlier,
            papers["doc_id"].tolist(),
            dt,
            config.represent,
            embedder,
        )
    quality = f"stability across {len(job.seeds)} other UMAP seeds" if job.seeds else "no stability"
    with run.stage("trends", f"Computing trends and topic quality ({quality})") as clock:
        started = time.perf_counter()
        others = job.runs()
        per_topic = evaluate_topic_stability(tm.topics, others) if others else {}
        waited = time.perf_counter() - started
        clock.note = f"stability {job.mode if not job.error else 'failed: ' + job.error}" + (
            f", {waited:.1f}s" if job.seeds else ""
        )
        trends = compute_trends(papers["year"], tm.topics, dt)
        topic_table = _finish_topic_table(tm.topic_table, tm.topics, projection.map, trends, dt)
        topic_table["stability"] = [per_topic.get(int(t), np.nan) for t in topic_table["topic"]]
    summary.topics = len(topic_table)
    summary.stability = float(np.mean(list(per_topic.values()))) if per_topic else None
    summary.outlier_share = float(clustering.raw_outlier.mean()) if n else 0.0
    summary.reassigned = int(clustering.raw_outlier.sum()) if config.cluster.reassign_outliers else 0
    topic_pos = {t: i for i, t in enumerate(topic_table["topic"].tolist())}
    probs = np.array(
        [tm.distribution[i, topic_pos[t]] if t in topic_pos else 0.0 for i, t in enumerate(tm.topics)], dtype=np.float32
    )
    return {
        "topics": tm.topics,
        "topic_prob": probs,
        "was_outlier": clustering.raw_outlier,
        "placed": np.zeros(n, dtype=bool),
        "xy": projection.map,
        "topic_table": topic_table,
        "topic_terms": tm.topic_terms,
        "hierarchy": tm.hierarchy,
        "topic_embeddings": tm.topic_embeddings,
        "similarity": tm.similarity,
        "distribution": tm.distribution,
        "trends": trends,
        "bertopic": tm.model,
        "cluster_params": asdict(clustering.params),
        "fitted_papers": n,
        "stability": job.info(list(per_topic.values())) if job.seeds else {"computed": job.mode},
    }


def _finish_topic_table(table: pd.DataFrame, topics: np.ndarray, xy: np.ndarray, trends, dt) -> pd.DataFrame:
    """Add map positions, coherence and growth to the topic table."""
    from pipeline.represent import growth_per_year

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
    try:
        from pipeline.evaluate import npmi_coherence
    except ImportError:  # evaluation module not available
        return [float("nan")] * len(topic_words)
    if dt.counts.shape[1] == 0:
        return [float("nan")] * len(topic_words)
    _, per_topic = npmi_coherence(topic_words, dt.presence(), dt.vocabulary, top_n=10)
    return [float(x) for x in per_topic]


def _place_incrementally(plan: _IncrementalPlan, papers, embeddings, run, summary) -> dict:
    """Place new papers into the previous build's topics; refit nothing."""
    from pipeline.trends import compute_trends
    from pipeline.vocab import doc_terms

    folder = plan.folder
    with run.stage("place", f"Placing {int(plan.new_mask.sum()):,} new papers into the existing topics"):
        old = plan.old_papers.set_index("doc_id")
        topic_table = artifacts.read_table(folder, schema.TOPICS)
        t_emb = artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS)
        old_emb = artifacts.read_array(folder, schema.EMBEDDINGS)
        distribution = topic_distribution(embeddings, t_emb)
        topic_ids = topic_table["topic"].to_numpy()
        n = len(papers)
        topics = np.empty(n, dtype=np.int64)
        xy = np.empty((n, 2), dtype=np.float32)
        was_outlier = np.zeros(n, dtype=bool)
        placed = np.zeros(n, dtype=bool)
        existing = ~plan.new_mask
        old_rows = old.loc[papers.loc[existing, "doc_id"]]
        topics[existing] = old_rows["topic"].to_numpy()
        xy[existing] = old_rows[["x", "y"]].to_numpy(dtype=np.float32)
        was_outlier[existing] = old_rows["was_outlier"].to_numpy(dtype=bool)
        placed[existing] = old_rows["placed"].to_numpy(dtype=bool) if "placed" in old_rows else False
        new_idx = np.flatnonzero(plan.new_mask)
        topics[new_idx] = topic_ids[np.argmax(distribution[new_idx], axis=1)]
        placed[new_idx] = True
        old_xy = plan.old_papers.sort_values("row")[["x", "y"]].to_numpy(dtype=np.float32)
        xy[new_idx] = place_on_map(embeddings[new_idx], old_emb, old_xy)
        pos = {t: i for i, t in enumerate(topic_ids.tolist())}
        probs = distribution[np.arange(n), [pos.get(int(t), 0) for t in topics]]
        counts = pd.Series(topics).value_counts()
        topic_table = topic_table.copy()
        topic_table["size"] = topic_table["topic"].map(counts).fillna(0).astype(int)
        topic_table["share"] = topic_table["size"] / n
    with run.stage("trends", "Recomputing trends"):
        dt = doc_terms(
            papers["model_text"].tolist(),
            ngram_range=tuple(plan.manifest["params"]["represent"]["ngram_range"]),
            min_df=plan.manifest["params"]["represent"]["min_df"],
        )
        trends = compute_trends(papers["year"], topics, dt)
        from pipeline.represent import growth_per_year

        growth = growth_per_year(trends.topic_years) if len(trends.years) >= 2 else {}
        topic_table["growth"] = [growth.get(int(t), np.nan) for t in topic_table["topic"]]
        if "stability" not in topic_table:  # built before stability was measured
            topic_table["stability"] = np.nan
    summary.topics = len(topic_table)
    summary.placed = int(plan.new_mask.sum())
    counts_prev = plan.manifest.get("counts", {})
    summary.outlier_share = float(was_outlier.mean())
    summary.reassigned = int(was_outlier.sum())
    return {
        "topics": topics,
        "topic_prob": probs.astype(np.float32),
        "was_outlier": was_outlier,
        "placed": placed,
        "xy": xy,
        "topic_table": topic_table,
        "topic_terms": artifacts.read_table(folder, schema.TOPIC_TERMS),
        "hierarchy": artifacts.read_table(folder, schema.HIERARCHY),
        "topic_embeddings": t_emb,
        "similarity": artifacts.read_array(folder, schema.TOPIC_SIMILARITY),
        "distribution": distribution,
        "trends": trends,
        "bertopic_from": folder / schema.BERTOPIC_DIR,
        "cluster_params": plan.manifest.get("cluster_params", {}),
        "fitted_papers": counts_prev.get("fitted_papers", len(plan.old_papers)),
        "fitted_at": plan.manifest.get("fitted_at", plan.manifest.get("created_at")),
        "stability": plan.manifest.get("stability", {"computed": "off"}),
    }


def _write(folder: Path, t: dict, papers: pd.DataFrame, embeddings, result, input_dicts, config, fp, summary, key, run):
    from pipeline.represent import save_bertopic

    n = len(papers)
    out = papers.copy()
    out.insert(1, "row", np.arange(n, dtype=np.int32))
    out["topic"] = np.asarray(t["topics"], dtype=np.int32)
    out["topic_prob"] = np.asarray(t["topic_prob"], dtype=np.float32)
    out["was_outlier"] = np.asarray(t["was_outlier"], dtype=bool)
    out["placed"] = np.asarray(t["placed"], dtype=bool)
    out["x"] = t["xy"][:, 0].astype(np.float32)
    out["y"] = t["xy"][:, 1].astype(np.float32)
    out = out[list(schema.PAPER_COLUMNS)]
    out.to_parquet(folder / schema.PAPERS, index=False)
    t["topic_table"][list(schema.TOPIC_COLUMNS)].to_parquet(folder / schema.TOPICS, index=False)
    t["topic_terms"].to_parquet(folder / schema.TOPIC_TERMS, index=False)
    t["hierarchy"].to_parquet(folder / schema.HIERARCHY, index=False)
    tr = t["trends"]
    tr.terms.to_parquet(folder / schema.TERMS, index=False)
    tr.years.to_parquet(folder / schema.YEARS, index=False)
    tr.topic_years.to_parquet(folder / schema.TOPIC_YEARS, index=False)
    tr.keyword_years.to_parquet(folder / schema.KEYWORD_YEARS, index=False)
    result.report.to_parquet(folder / schema.INGEST_REPORT, index=False)
    np.save(folder / schema.EMBEDDINGS, embeddings.astype(np.float32), allow_pickle=False)
    np.save(folder / schema.TOPIC_EMBEDDINGS, np.asarray(t["topic_embeddings"], dtype=np.float32), allow_pickle=False)
    np.save(folder / schema.TOPIC_SIMILARITY, np.asarray(t["similarity"], dtype=np.float32), allow_pickle=False)
    np.save(folder / schema.TOPIC_DISTRIBUTION, np.asarray(t["distribution"], dtype=np.float32), allow_pickle=False)
    if "bertopic" in t:
        save_bertopic(t["bertopic"], folder / schema.BERTOPIC_DIR)
    else:
        shutil.copytree(t["bertopic_from"], folder / schema.BERTOPIC_DIR)
    years = tr.years["year"]
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    manifest = {
        "schema_version": schema.SCHEMA_VERSION,
        "name": summary.name,
        "build_id": folder.name,
        "created_at": now,
        "fitted_at": t.get("fitted_at", now),
        "mode": summary.mode,
        "fingerprint": fp,
        "fit_settings": _fit_settings_key(config),
        "inputs": input_dicts,
        "params": _config_dict(config),
        "cluster_params": t["cluster_params"],
        "stability": t["stability"],
        "embedding": {
            "model": config.embed.model,
            "model_key": key,
            "backend": config.embed.backend,
            "dim": int(embeddings.shape[1]) if embeddings.ndim == 2 else 0,
            "computed": summary.embedded,
            "cached": summary.embeddings_cached,
        },
        "counts": {
            "read": summary.read,
            "papers": n,
            "skipped": summary.skipped,
            "changed": summary.changed,
            "skipped_by_reason": summary.skipped_by_reason,
            "topics": summary.topics,
            "outlier_share": round(summary.outlier_share, 4),
            "reassigned": summary.reassigned,
            "placed": summary.placed,
            "fitted_papers": t["fitted_papers"],
            "years": [int(years.min()), int(years.max())] if len(years) else None,
            "papers_with_year": int(tr.years["n_papers"].sum()) if len(years) else 0,
        },
        "files": {
            f: {"rows": int(v)}
            for f, v in [
                (schema.PAPERS, n),
                (schema.TOPICS, len(t["topic_table"])),
                (schema.TOPIC_TERMS, len(t["topic_terms"])),
                (schema.KEYWORD_YEARS, len(tr.keyword_years)),
            ]
        },
        "packages": _package_versions(),
        "stages": [s.to_dict() for s in run.records],
    }
    artifacts.write_json(folder / schema.MANIFEST, manifest)
