"""The ``build`` and ``compare`` commands' handlers: settings from the flags, the embedding engine,
and what an interrupted build says (SIGTERM takes Ctrl-C's path)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from pipeline.analysis.compare import CompareError, compare_builds, describe
from pipeline.build.build import build
from pipeline.core import artifacts
from pipeline.core.config import SettingsError
from pipeline.core.errors import PipelineError
from pipeline.core.inputs import DEFAULT_CORPUS, DEFAULT_INPUTS, corpus_name, default_inputs
from pipeline.core.progress import Reporter
from pipeline.core.settings import load_config, with_overrides
from pipeline.embed.ray_engine import RayEngine, RayParams

#: The command-line flag of each setting that has one (named in error messages).
FLAGS = {
    "ingest.venue": "--venue",
    "ingest.year": "--year",
    "ingest.min_words": "--min-words",
    "embed.model": "--model",
    "embed.backend": "--backend",
    "embed.threads": "--threads",
    "umap.seed": "--seed",
    "cluster.method": "--cluster-method",
    "cluster.min_cluster_size": "--min-cluster-size",
    "cluster.n_topics": "--topics",
}


def _build_config(args):
    """Settings from --config and the flags, validated before anything is read.

    Raises:
        PipelineError: a setting is unknown or not allowed (the message names it and its flag).
    """
    config = load_config(args.config)
    try:
        return with_overrides(
            config,
            {
                "ingest": {
                    "columns": {
                        r: getattr(args, f"col_{r}")
                        for r in ("abstract", "title", "year", "venue", "authors", "url", "id", "label", "keywords")
                    },
                    "venue": args.venue,
                    "year": args.year,
                    "min_words": args.min_words,
                },
                "embed": {"model": args.model, "backend": args.backend, "threads": args.threads},
                "umap": {"seed": args.seed},
                "cluster": {
                    "method": args.cluster_method,
                    "min_cluster_size": args.min_cluster_size,
                    "n_topics": args.n_topics,
                    "reassign_outliers": False if args.keep_outliers else None,
                },
                "stability": {"runs": 0 if args.no_stability else None, "max_papers": 0 if args.stability else None},
            },
        )
    except SettingsError as exc:
        flag = FLAGS.get(exc.key)
        raise exc.located(f"command line ({flag})" if flag else "command line") from None


def cmd_build(args) -> int:
    """Build a corpus. Exit codes: 0 built or up to date, 1 unusable input or settings, 130 / 143
    interrupted by SIGINT (Ctrl-C) / SIGTERM, with a message saying which build the corpus holds."""
    inputs = list(args.inputs) or default_inputs()
    if not inputs:
        raise PipelineError(f"no input files given and the bundled corpus is missing from {DEFAULT_INPUTS}.")
    name = artifacts.check_name(args.name or (DEFAULT_CORPUS if not args.inputs else corpus_name(inputs[0])))
    config = _build_config(args)
    if args.reference:  # a wrong reference fails now, not after the build
        if artifacts.check_name(args.reference) == name:
            raise PipelineError(f"--reference {args.reference}: a corpus cannot be compared with itself.")
        artifacts.corpus_path(args.artifacts, args.reference)
    reporter = Reporter(quiet=args.quiet, events=args.progress_json)
    before = artifacts.current_build(args.artifacts, name)
    try:
        summary = build(
            inputs, name, args.artifacts, config, refit=args.refit, force=args.force, reporter=reporter,
            engine=_engine(args),
        )  # fmt: skip
    except KeyboardInterrupt as exc:
        reporter.line("")
        print(interrupted_message(name, before, artifacts.current_build(args.artifacts, name)), file=sys.stderr)
        return interrupt_code(exc)
    for line in summary.lines():
        print(line)
    if args.reference:
        return _compare(args.artifacts, name, args.reference, force=False)
    return 0


def cmd_compare(args) -> int:
    return _compare(args.artifacts, args.new, args.reference, force=args.force)


def _compare(root: Path, new: str, reference: str, *, force: bool) -> int:
    try:
        result, computed = compare_builds(root, new, reference, force=force)
    except CompareError as exc:
        raise PipelineError(str(exc)) from None
    for line in describe(result, computed=computed):
        print(line)
    return 0


def interrupted_message(name: str, before, after) -> str:
    """What an interrupted build left: which build (``artifacts.BuildRef``) corpus ``name`` holds.

    ``before`` is the corpus's build when the command started, ``after`` the one it holds now.
    """
    if after is not None and (before is None or after.build_id != before.build_id or after.folder != before.folder):
        return (
            f"interrupted after the new build was published: corpus {name!r} now holds build {after.build_id} "
            f"(complete, from {after.created_at})."
        )
    kept = "embeddings computed so far are kept and reused by the next build"
    if after is None:
        return f"interrupted before publishing: corpus {name!r} has no build yet; {kept}."
    return (
        f"interrupted before publishing: corpus {name!r} still holds build {after.build_id} from {after.created_at}; "
        f"{kept}."
    )


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where it arrives so that it takes the same clean path as Ctrl-C."""


def on_sigterm(signum, frame) -> None:
    raise Terminated()


def interrupt_code(exc: BaseException) -> int:
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


def _engine(args):
    """The embedding engine the flags ask for; None for the local one (Ray is imported only for ray)."""
    ray_flags = [
        f"--ray-{f}"
        for f in ("address", "workers", "cpus-per-worker", "staging")
        if getattr(args, f"ray_{f.replace('-', '_')}") is not None
    ]
    if args.engine != "ray":
        if ray_flags:
            raise PipelineError(f"{', '.join(ray_flags)} only apply with --engine ray.")
        return None
    return RayEngine(
        RayParams(
            address=args.ray_address,
            workers=0 if args.ray_workers is None else args.ray_workers,
            cpus_per_worker=1 if args.ray_cpus_per_worker is None else args.ray_cpus_per_worker,
            staging=args.ray_staging,
        )
    )
