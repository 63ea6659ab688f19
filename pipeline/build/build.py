"""The build runner: ingest -> embed -> reduce -> cluster -> represent -> trends -> write -> publish.

The stages are pure functions in their own modules; this runner does the orchestration, the
caching, the progress reporting and the measurements. The full fit's stages (``pipeline.build.build_fit``),
the embedding's identity and embedder (``pipeline.build.build_embedding``), the writer (``pipeline.build.writer``), the
stability job (``pipeline.build.stability_job``), incremental placement (``pipeline.build.incremental``) and
the stage cache (``pipeline.build.stage_cache``) have their own modules.

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
``<name>`` link (``pipeline.core.artifacts.publish``), after which the build writes nothing into it.
Older builds are deleted only after the swap, and never the current one. So whenever a build stops,
by an exception, Ctrl-C (``KeyboardInterrupt``), SIGTERM turned into one (the CLI does) or even
SIGKILL, exactly one complete build is loadable: the previous one if the swap had not happened (the
new folder is deleted), the new one if it had (it is kept). ``pipeline.core.artifacts.current_build``
tells which. Vectors embedded before an interrupt stay in the embedding store and are reused.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.analysis import bm25_update
from pipeline.build import incremental, writer
from pipeline.build.build_embedding import Embedder, Embedding, embedding_identity
from pipeline.build.build_fit import fit_full
from pipeline.core import artifacts, schema
from pipeline.core.config import BuildConfig
from pipeline.core.errors import PipelineError
from pipeline.core.manifest import Manifest
from pipeline.core.progress import Reporter, StageClock, StageRecord, format_seconds
from pipeline.core.settings import config_from_manifest, result_settings
from pipeline.embed.embed_model import EMBED_VERSION
from pipeline.embed.encoders import Encoder
from pipeline.ingest.clean import CLEAN_VERSION
from pipeline.ingest.ingest import ingest
from pipeline.model.cluster import CLUSTER_VERSION
from pipeline.model.reduce import REDUCE_VERSION
from pipeline.model.represent import REPRESENT_VERSION

__all__ = ["BuildSummary", "StageRunner", "build", "fingerprint", "fit_settings_key"]


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
            + (f", {self.reassigned:,} border papers placed afterwards" if self.reassigned else ""),
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
    content (``embedding_key``: ``pipeline.embed.embed_model.model_key``, or an injected encoder's key), the
    settings that change results (``pipeline.core.settings.result_settings``: not threads, batch size
    or where stability runs) and the stages' versions."""
    payload = {
        "inputs": sorted(i["sha256"] for i in inputs),
        "config": result_settings(config),
        "embedding": embedding_key,
        "versions": [
            CLEAN_VERSION,
            EMBED_VERSION,
            REDUCE_VERSION,
            CLUSTER_VERSION,
            REPRESENT_VERSION,
            schema.SCHEMA_VERSION,
        ],
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

    Settings are validated when ``config`` is made (``pipeline.core.config``); the model folder and the
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
        engine: computes the missing paper embeddings instead of this process (``pipeline.embed.ray_engine``,
            e.g. ``RayEngine``); None: the local engine.

    Raises:
        PipelineError: unusable input or settings; ArtifactError: another build holds the lock.
        KeyboardInterrupt: interrupted; see the module docstring for what is left behind.
    """
    reporter = reporter or Reporter(quiet=True)
    root = Path(root)
    artifacts.check_name(name)
    embedding = embedding_identity(config, encoder)
    root.mkdir(parents=True, exist_ok=True)
    run = _Run(name, root, config, StageRunner(reporter), reporter, embedding, time.perf_counter())
    with artifacts.build_lock(root, name):
        artifacts.discard_stale_builds(root, name)
        previous = _previous_build(root, name, needed=not refit)
        try:
            return _build_steps(run, inputs, previous, refit=refit, force=force, encoder=encoder, engine=engine)
        except BaseException:
            if run.folder is not None:
                current = artifacts.current_build(root, name)
                if current is None or current.folder != run.folder.resolve():
                    shutil.rmtree(run.folder, ignore_errors=True)
            raise


@dataclass
class _Run:
    """One build's context: what every step needs, and the new build's folder once it exists
    (deleted again if the build stops before publishing it)."""

    name: str
    root: Path
    config: BuildConfig
    stages: StageRunner
    reporter: Reporter
    embedding: Embedding
    started: float
    folder: Path | None = None


def _build_steps(run: _Run, inputs, previous, *, refit: bool, force: bool, encoder, engine) -> BuildSummary:
    """Ingest, then (unless up to date) embed, fit or place, write, and publish."""
    config, root = run.config, run.root
    with run.stages.stage("ingest", f"Reading {len(inputs)} input file(s)"):
        result = ingest(inputs, config.ingest, progress=run.reporter.counter("rows", "rows"))
    papers = result.papers.reset_index(drop=True)
    input_dicts = [i.to_dict() for i in result.inputs]
    fp = fingerprint(input_dicts, config, run.embedding.key)
    summary = _ingest_summary(run, result, papers)
    refit_needed = refit and previous is not None and previous.manifest.mode == "incremental"
    if previous is not None and not force and not refit_needed and previous.manifest.fingerprint == fp:
        summary.mode = "up-to-date"
        summary.topics = previous.manifest.counts.topics
        summary.build_id = previous.folder.name
        return summary

    texts = papers["model_text"].tolist()
    embedder = Embedder(config, root, encoder, run.embedding.key, engine)
    embeddings = _embed_step(run, embedder, texts, summary, engine)
    fit_key = fit_settings_key(config, run.embedding.key)
    plan = None if refit else incremental.plan(previous, papers, fit_key)
    if plan is not None:
        summary.mode = "incremental"
        with run.stages.stage("place", f"Placing {plan.n_new:,} new papers into the existing topics"):
            topics = incremental.place(plan, papers, embeddings)
        with run.stages.stage("trends", "Recomputing trends"):
            topics = incremental.with_trends(topics, papers, plan)
    else:
        topics = fit_full(papers, texts, embeddings, config, root, embedder, run.stages)
    with run.stages.stage("write", "Writing artifacts"):
        writer.write_tables(run.folder, topics, papers, embeddings, result.report)
    # A build that adds papers updates the previous index where it kept its counts (only the new
    # papers are read; every score is computed again, for the corpus's new idf and mean length).
    held = None
    if plan is not None:
        held = bm25_update.previous_counts(plan.previous.folder / schema.KEYWORD_INDEX, len(plan.old_papers))
    what = f"Adding {plan.n_new:,} papers to" if held is not None else f"Indexing {len(papers):,} papers for"
    with run.stages.stage("keyword_index", f"{what} the keyword index"):
        update = None if held is None else (held, incremental.index_rows(plan, papers))
        writer.write_keyword_index(run.folder, papers, update)
    del held, update  # the previous index's memory-mapped files
    _finish_summary(summary, run, topics)
    manifest = Manifest.from_dict(  # read as the app reads it: written back, it is the same JSON
        writer.manifest(
            build_id=run.folder.name,
            summary=summary,
            result=topics,
            papers=papers,
            embeddings=embeddings,
            inputs=input_dicts,
            config=config,
            fingerprint=fp,
            fit_settings=fit_key,
            embedding=run.embedding.manifest,
        )
    )
    writer.write_manifest(run.folder, manifest.to_dict())
    artifacts.publish(root, run.name, run.folder)
    artifacts.discard_stale_builds(root, run.name)
    return summary


def _ingest_summary(run: _Run, result, papers: pd.DataFrame) -> BuildSummary:
    """The summary as far as the ingest tells it (a full build until found otherwise)."""
    ingest_summary = result.summary()
    skipped = result.report.loc[result.report["action"] == "skipped", "reason"].value_counts()
    return BuildSummary(
        name=run.name,
        folder=run.root / run.name,
        mode="full",
        read=ingest_summary.get("read", 0),
        papers=len(papers),
        skipped=ingest_summary.get("skipped", 0),
        skipped_by_reason={k: v for k, v in skipped.items()},
        changed=ingest_summary.get("changed", 0),
    )


def _embed_step(run: _Run, embedder: Embedder, texts: list[str], summary: BuildSummary, engine):
    """Embed the papers, make the new build's folder and save the vectors into it; returns them
    memory-mapped from there."""
    on = f" on {engine.name}" if engine is not None else ""
    title = f"Embedding {len(texts):,} papers ({run.embedding.manifest['backend']}{on})"
    with run.stages.stage("embed", title) as clock:
        emb = embedder.embed_papers(texts, run.reporter)
        summary.embedded, summary.embeddings_cached = emb.computed, emb.cached
        clock.note = f"{emb.computed} computed, {emb.cached} cached"
    run.folder = artifacts.new_build_dir(run.root, run.name)
    # The vectors go into the build's embeddings.npy now; every later stage reads them
    # from there, memory-mapped (the page cache holds them, not the build's heap).
    return writer.save_embeddings(run.folder, emb.vectors)


def _finish_summary(summary: BuildSummary, run: _Run, topics) -> None:
    summary.topics = len(topics.tables.topics)
    summary.stability = topics.stability_mean
    summary.outlier_share = topics.outlier_share
    summary.reassigned = topics.reassigned
    summary.placed = topics.placed_new
    summary.stages = run.stages.records
    summary.seconds = time.perf_counter() - run.started
    summary.build_id = run.folder.name
