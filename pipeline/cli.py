"""Command line: ``python -m pipeline build|list|info|evaluate|export|compare ...``. A thin shell over pipeline functions."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from pipeline import artifacts, schema
from pipeline.build import build
from pipeline.compare import compare_builds, describe
from pipeline.comparison import CompareError
from pipeline.config import SettingsError
from pipeline.embed import embed_texts
from pipeline.engines.ray_engine import RayEngine, RayParams
from pipeline.errors import PipelineError
from pipeline.export import export_html
from pipeline.ingest import ingest
from pipeline.inputs import DEFAULT_CORPUS, DEFAULT_INPUTS, ROOT, corpus_name, default_inputs
from pipeline.progress import Reporter
from pipeline.quality import evaluate
from pipeline.quality_report import METHODS, report_markdown
from pipeline.settings import config_from_manifest, load_config, with_overrides

DEFAULT_ARTIFACTS = ROOT / "artifacts"


def _formatter(prog):
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline",
        formatter_class=_formatter,
        description="Turn a corpus of paper abstracts into topics (BERTopic) saved as artifacts for the dashboard.",
        epilog="examples:\n"
        "  python -m pipeline build                       # the bundled NeurIPS 2026 corpus\n"
        "  python -m pipeline build papers.csv --name mine\n"
        "  python -m pipeline list\n"
        "  python -m pipeline info mine\n"
        "  python -m pipeline evaluate mine               # topic quality against labels and baselines\n"
        "  python -m pipeline export mine                 # one offline HTML file: exports/mine.html\n"
        "  python -m pipeline compare neurips2026 neurips  # what is new in neurips2026 against neurips\n",
    )
    parser.add_argument(
        "--artifacts", type=Path, default=DEFAULT_ARTIFACTS, help="artifacts folder (default: %(default)s)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    b = sub.add_parser(
        "build",
        help="build (or update) a corpus from input files",
        formatter_class=_formatter,
        description="Read abstracts, embed them, find topics and write the artifacts the dashboard reads.\n"
        "Inputs: plain text (a title line like 'NeurIPS 2026 Papers', then one abstract per paragraph),\n"
        "CSV, TSV, JSON, JSON Lines or Parquet, optionally gzipped. Columns are recognised by common\n"
        "names (abstract/summary/text, title, year/date, venue, authors, url, id, label, keywords) or\n"
        "mapped with the --*-column options. Only new texts are embedded; papers added to a built corpus\n"
        "are placed into its existing topics unless --refit is given.",
        epilog="examples:\n"
        "  python -m pipeline build                                   # bundled NeurIPS 2026 corpus\n"
        "  python -m pipeline build papers.csv more.jsonl --name neurips2025\n"
        "  python -m pipeline build data.tsv --name mine --abstract-column summary_text --year-column pub_year\n"
        "  python -m pipeline build papers.csv --name mine --refit     # refit the topics from scratch\n"
        "  python -m pipeline build papers.parquet --name mine --config settings.toml\n"
        "  python -m pipeline build new.csv --name neurips2024 --reference neurips-1987-2023\n\n"
        "  python -m pipeline build big.parquet --name big --engine ray --ray-address HEAD_IP:6379\n",
    )
    b.add_argument("inputs", nargs="*", type=Path, help="input files (default: the bundled NeurIPS 2026 abstracts)")
    b.add_argument(
        "--name", help=f"corpus name (default: {DEFAULT_CORPUS} for the bundled corpus, else the first file's name)"
    )
    b.add_argument("--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder (default: ./artifacts)")
    b.add_argument("--config", type=Path, help="TOML file with settings (see README: Configuration)")
    b.add_argument(
        "--refit", action="store_true", help="refit all topics even if new papers could be placed into existing ones"
    )
    b.add_argument("--force", action="store_true", help="rebuild even when the artifacts are up to date")
    b.add_argument("--quiet", action="store_true", help="print only the summary")
    b.add_argument(
        "--progress-json", type=Path, metavar="FILE", help="also append machine-readable progress (JSON Lines) to FILE"
    )
    b.add_argument(
        "--reference",
        metavar="NAME",
        help="after the build, compare the corpus with this built corpus (see the compare command)",
    )
    cols = b.add_argument_group("input columns (recognised automatically when not given)")
    for role in ("abstract", "title", "year", "venue", "authors", "url", "id", "label", "keywords"):
        cols.add_argument(f"--{role}-column", metavar="NAME", dest=f"col_{role}")
    cols.add_argument("--venue", help="venue for papers whose input gives none")
    cols.add_argument("--year", type=int, help="year for papers whose input gives none")
    cols.add_argument("--min-words", type=int, help="skip abstracts with fewer words (default 8)")
    m = b.add_argument_group("model")
    m.add_argument("--model", help="local sentence-transformers folder (default: packaged all-MiniLM-L6-v2)")
    m.add_argument("--backend", choices=["onnx-int8", "onnx", "torch"], help="embedding backend (default onnx-int8)")
    m.add_argument("--threads", type=int, help="embedding threads (default: all cores)")
    m.add_argument("--seed", type=int, help="random seed for UMAP (default 42)")
    m.add_argument(
        "--cluster-method",
        choices=["auto", "graph", "ward", "hdbscan", "agglomerative"],
        help="clustering method (default auto)",
    )
    m.add_argument("--min-cluster-size", type=int, help="smallest topic (default adapts to corpus size)")
    m.add_argument("--topics", type=int, dest="n_topics", help="target number of topics (default adapts)")
    m.add_argument(
        "--keep-outliers", action="store_true", help="keep unclustered papers as topic -1 instead of placing them"
    )
    eng = b.add_argument_group("embedding engine (see README: Running on a cluster)")
    eng.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="where missing embeddings are computed: this process (default) or a Ray pool of actors",
    )
    eng.add_argument(
        "--ray-address", metavar="ADDR", help="Ray cluster to join (default: $RAY_ADDRESS, else a local Ray)"
    )
    eng.add_argument("--ray-workers", type=int, metavar="N", help="actors in the pool (default: fit the cluster)")
    eng.add_argument("--ray-cpus-per-worker", type=int, metavar="N", help="CPUs and threads per actor (default 1)")
    eng.add_argument(
        "--ray-staging", metavar="DIR", help="shared folder for the text shards (default: ARTIFACTS/.cache/ray-staging)"
    )
    stab = m.add_mutually_exclusive_group()
    stab.add_argument(
        "--stability",
        action="store_true",
        help="measure per-topic stability whatever the corpus size (default: up to 5,000 papers)",
    )
    stab.add_argument(
        "--no-stability",
        action="store_true",
        help="skip the per-topic stability measurement (extra clusterings with other seeds)",
    )

    lst = sub.add_parser(
        "list",
        help="list built corpora",
        formatter_class=_formatter,
        description="List the corpora in the artifacts folder with their size, topics and build date.",
        epilog="example:\n  python -m pipeline list --artifacts artifacts\n",
    )
    lst.add_argument("--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder")
    lst.add_argument("--json", action="store_true", help="print JSON")

    info = sub.add_parser(
        "info",
        help="show one corpus: inputs, settings, counts, timings",
        formatter_class=_formatter,
        description="Show a built corpus's manifest: inputs with hashes, settings, counts, stage timings.",
        epilog="example:\n  python -m pipeline info neurips2026\n",
    )
    info.add_argument("name", help="corpus name")
    info.add_argument("--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder")
    info.add_argument("--json", action="store_true", help="print the whole manifest as JSON")

    ev = sub.add_parser(
        "evaluate",
        help="measure topic quality against labels and the obvious alternatives",
        formatter_class=_formatter,
        description="Run our pipeline and, on the same embeddings and seeds, vanilla BERTopic (default parameters),\n"
        "vanilla BERTopic + reduce_outliers, k-means (k = number of labels) and LDA on word counts; print and\n"
        "write a table with NMI/ARI against the labels (all papers, and only the papers each method clustered\n"
        "itself, with the outlier share), topic diversity, NPMI coherence on the corpus, keyword fragments,\n"
        "stability across seeds (ARI), topic count and time. Without labels only the label-free measures.\n"
        "CORPUS is a built corpus (its settings and embeddings are used) or an input file; papers without a\n"
        "label are left out when some have one. Writes ARTIFACTS/NAME.evaluation.md and .json (or --out).",
        epilog="examples:\n"
        "  python -m pipeline evaluate neurips2026\n"
        "  python -m pipeline evaluate ijcai2020-2024-primary-area.jsonl.gz --label-column label\n"
        "  python -m pipeline evaluate mine --methods pipeline kmeans --seeds 0 1 2 3 4 --out mine-eval.md\n",
    )
    ev.add_argument("corpus", help="a built corpus name, or an input file (any format build reads)")
    ev.add_argument(
        "--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder (also holds the embedding cache)"
    )
    ev.add_argument(
        "--label-column",
        metavar="NAME",
        help="column with the reference labels (default: recognised, e.g. label, primary_area)",
    )
    ev.add_argument(
        "--seeds", nargs="+", type=int, default=[0, 1, 2], help="one run per seed and method (default: 0 1 2)"
    )
    ev.add_argument(
        "--methods",
        nargs="+",
        metavar="METHOD",
        help="subset of: pipeline bertopic bertopic_reduce kmeans lda (default: all)",
    )
    ev.add_argument(
        "--k", type=int, help="clusters for k-means and LDA (default: number of labels, else our topic target)"
    )
    ev.add_argument("--config", type=Path, help="TOML settings for an input file (a built corpus uses its own)")
    ev.add_argument("--name", help="name in the report and output files (default: the corpus or file name)")
    ev.add_argument(
        "--out",
        type=Path,
        help="markdown file to write; the JSON goes beside it (default: ARTIFACTS/NAME.evaluation.md)",
    )

    exp = sub.add_parser(
        "export",
        help="write a corpus as one self-contained HTML file (works offline)",
        formatter_class=_formatter,
        description="Write one HTML file with the topic map, the topic list, a searchable paper table and every\n"
        "abstract. The map, its code and the data are inlined: send the file to anyone, it opens from disk in any\n"
        "browser with no Python, no server and no network.",
        epilog="examples:\n"
        "  python -m pipeline export neurips2026                    # writes exports/neurips2026.html\n"
        "  python -m pipeline export mine --out review/mine.html --artifacts artifacts\n"
        "  python -m pipeline export neurips2026 --reference neurips-1987-2023   # with What changed\n",
    )
    exp.add_argument("name", help="corpus name")
    exp.add_argument("--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder")
    exp.add_argument("--out", type=Path, help="HTML file to write (default: exports/NAME.html in the current folder)")
    exp.add_argument(
        "--reference",
        metavar="REF",
        help="also put in the file what changed against corpus REF (the dashboard's What changed page: shares\n"
        "with intervals, distinctive terms, the most novel papers with their closest prior work, REF's map\n"
        "with the papers on it); uses the stored comparison, or computes and stores it",
    )

    cmp = sub.add_parser(
        "compare",
        help="compare a corpus with a reference corpus: what is new, what grew, what faded",
        formatter_class=_formatter,
        description="Place the papers of corpus NEW on the map and into the topics of corpus REFERENCE (both built;\n"
        "nothing is refitted) and store the comparison the dashboard's Compare page shows: each reference\n"
        "topic's share then and now with intervals, the terms that tell the corpora apart, each new paper's\n"
        "distance from earlier work with its closest prior papers, and the two corpora's topics matched.\n"
        "Small comparisons are also computed by the dashboard itself; run this for large ones. It is skipped\n"
        "when the stored comparison matches both builds.",
        epilog="examples:\n"
        "  python -m pipeline compare neurips2026 neurips-1987-2023\n"
        "  python -m pipeline compare iclr-2022 iclr-2018-2021 --force\n",
    )
    cmp.add_argument("new", help="the corpus to look at")
    cmp.add_argument("reference", help="the corpus it is compared with")
    cmp.add_argument("--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder")
    cmp.add_argument("--force", action="store_true", help="recompute even when a current comparison is stored")
    return parser


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
        return _interrupt_code(exc)
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


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def _interrupt_code(exc: BaseException) -> int:
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


def cmd_list(args) -> int:
    entries = artifacts.list_corpora(args.artifacts)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": e.name,
                        "ok": e.ok,
                        "error": e.error,
                        "counts": (e.manifest or {}).get("counts"),
                        "created_at": (e.manifest or {}).get("created_at"),
                    }
                    for e in entries
                ],
                indent=2,
            )
        )
        return 0
    if not entries:
        print(f"No corpora in {args.artifacts}. Build one: python -m pipeline build")
        return 0
    print(f"{'name':<24} {'papers':>8} {'topics':>7} {'years':>11}  built")
    for e in entries:
        if not e.ok:
            print(f"{e.name:<24} unreadable: {e.error}")
            continue
        c = e.manifest.get("counts", {})
        years = "-".join(str(y) for y in c["years"]) if c.get("years") else "-"
        print(
            f"{e.name:<24} {c.get('papers', 0):>8,} {c.get('topics', 0):>7} {years:>11}  {e.manifest.get('created_at', '?')}"
        )
    return 0


def cmd_info(args) -> int:
    folder = artifacts.corpus_path(args.artifacts, args.name)
    manifest = artifacts.read_manifest(folder)
    if args.json:
        print(json.dumps(manifest, indent=2))
        return 0
    c = manifest.get("counts", {})
    print(f"{manifest['name']}  (build {manifest['build_id']}, {manifest['mode']}, {manifest['created_at']})")
    print(f"  folder: {folder}")
    print(
        f"  papers: {c.get('papers', 0):,} ({c.get('skipped', 0):,} skipped, {c.get('placed', 0):,} placed incrementally)"
    )
    print(
        f"  topics: {c.get('topics', 0)}, outliers {c.get('outlier_share', 0):.1%} ({c.get('reassigned', 0):,} placed in nearest topic)"
    )
    if c.get("years"):
        print(f"  years: {c['years'][0]}-{c['years'][1]} ({c.get('papers_with_year', 0):,} papers with a year)")
    print(
        f"  embedding: {manifest['embedding']['model']} ({manifest['embedding']['backend']}, dim {manifest['embedding']['dim']})"
    )
    print("  inputs:")
    for i in manifest.get("inputs", []):
        print(
            f"    {i['path']}  {i['format']}, {i['rows_kept']:,}/{i['rows_read']:,} rows kept, sha256 {i['sha256'][:12]}"
        )
    print("  stages: " + ", ".join(f"{s['name']} {s['seconds']:.1f}s" for s in manifest.get("stages", [])))
    print(f"  peak memory: {manifest.get('peak_rss_mb', 0):,.0f} MB")
    print(f"  files: {', '.join(sorted(schema.FILES))}")
    return 0


def cmd_export(args) -> int:
    artifacts.check_name(args.name)
    out = args.out or Path("exports") / f"{args.name}.html"
    if args.reference and artifacts.check_name(args.reference) == args.name:
        raise PipelineError(f"--reference {args.reference}: a corpus cannot be compared with itself.")
    try:
        path = export_html(args.artifacts, args.name, out, reference=args.reference)
    except CompareError as exc:
        raise PipelineError(str(exc)) from None
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


def _evaluation_input(args):
    """Papers, embeddings and settings to evaluate: from a built corpus or from an input file."""
    import pandas as pd

    path = Path(args.corpus)
    if path.is_file():
        config = with_overrides(load_config(args.config), {"ingest": {"columns": {"label": args.label_column}}})
        reporter = Reporter()
        result = ingest([path], config.ingest, progress=reporter.counter("rows", "rows"))
        papers = result.papers.reset_index(drop=True)
        embeddings = embed_texts(
            papers["model_text"].tolist(),
            config.embed,
            artifacts.cache_dir(args.artifacts),
            progress=reporter.counter("embedded", "papers"),
        ).vectors
        return args.name or corpus_name(path), papers, embeddings, config
    artifacts.check_name(args.corpus)
    folder = artifacts.corpus_path(args.artifacts, args.corpus)
    manifest = artifacts.read_manifest(folder)
    config = config_from_manifest(manifest, str(folder / schema.MANIFEST))  # before anything is read
    papers = artifacts.read_table(folder, schema.PAPERS).sort_values("row").reset_index(drop=True)
    embeddings = artifacts.read_array(folder, schema.EMBEDDINGS)
    if args.label_column and args.label_column != "label":
        import json as _json

        papers["label"] = [
            _json.loads(e or "{}").get(args.label_column) if isinstance(e, str) else None for e in papers["extra"]
        ]
        papers["label"] = papers["label"].map(lambda v: None if v is None or pd.isna(v) else str(v))
    return args.name or args.corpus, papers, embeddings, config


def cmd_evaluate(args) -> int:
    import shlex

    methods = args.methods or list(METHODS)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise PipelineError(f"unknown method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)}.")
    name, papers, embeddings, config = _evaluation_input(args)
    labels = papers.get("label")
    dropped = 0
    if labels is not None and labels.notna().any():
        keep = labels.notna().to_numpy() & (labels.astype(str).str.strip() != "").to_numpy()
        dropped = int((~keep).sum())
        papers, embeddings = papers[keep].reset_index(drop=True), embeddings[keep]
        labels = papers["label"].astype(str).to_numpy()
    else:
        labels = None
    print(
        f"Evaluating {name}: {len(papers):,} papers"
        + (f" with labels ({dropped:,} without a label left out)" if labels is not None else ", no labels")
        + f"; methods {', '.join(methods)}; seeds {' '.join(map(str, args.seeds))}",
        flush=True,
    )
    cache = artifacts.cache_dir(args.artifacts)
    result = evaluate(
        papers["model_text"].tolist(),
        embeddings,
        labels,
        config,
        corpus=name,
        seeds=args.seeds,
        methods=methods,
        k=args.k,
        progress=lambda line: print(line, flush=True),
        embed=lambda texts: embed_texts(texts, config.embed, cache).vectors,  # labels, for their retrieval
    )
    if dropped:
        result.notes.insert(0, f"{dropped:,} papers without a label left out")
    command = "python -m pipeline " + " ".join(shlex.quote(str(a)) for a in getattr(args, "argv", []))
    text = report_markdown(result, command)
    out = args.out or Path(args.artifacts) / f"{name}.evaluation.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    data = result.to_dict() | {"command": command}
    out.with_suffix(".json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print()
    print(result.markdown())
    print(f"\nwrote {out} and {out.with_suffix('.json')}")
    return 0


COMMANDS = {
    "build": cmd_build, "list": cmd_list, "info": cmd_info, "evaluate": cmd_evaluate, "export": cmd_export,
    "compare": cmd_compare,
}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run a command; returns its exit code (0 ok, 1 error, 2 usage, 130 SIGINT, 143 SIGTERM).

    SIGTERM (e.g. a worker process being cancelled) is turned into the same clean path as Ctrl-C
    while the command runs: a build leaves exactly one complete build and says which.
    """
    parser = make_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if not args.command:
        parser.print_help()
        return 2
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    try:
        return COMMANDS[args.command](args)
    except (PipelineError, artifacts.ArtifactError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        print("interrupted.", file=sys.stderr)
        return _interrupt_code(exc)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
