"""The ``list``, ``info``, ``export`` and ``evaluate`` commands' handlers: reading built corpora."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.analysis.compare import CompareError
from pipeline.core import artifacts, schema
from pipeline.core.errors import PipelineError
from pipeline.core.inputs import corpus_name
from pipeline.core.progress import Reporter
from pipeline.core.settings import config_from_manifest, load_config, with_overrides
from pipeline.embed.embed import embed_texts
from pipeline.evaluation.quality import evaluate
from pipeline.evaluation.quality_report import METHODS, report_markdown
from pipeline.export.export import export_html
from pipeline.ingest.ingest import ingest
from pipeline.model.label_background import own_titles


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
                        "counts": e.manifest.to_dict().get("counts") if e.manifest else None,
                        "created_at": e.manifest.created_at if e.manifest else None,
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
        c = e.manifest.counts
        years = "-".join(str(y) for y in c.years) if c.years else "-"
        built = "?" if e.manifest.created_at is None else e.manifest.created_at
        print(f"{e.name:<24} {c.papers:>8,} {c.topics:>7} {years:>11}  {built}")
    return 0


def cmd_info(args) -> int:
    folder = artifacts.corpus_path(args.artifacts, args.name)
    manifest = artifacts.read_manifest(folder)
    if args.json:
        print(json.dumps(manifest.to_dict(), indent=2))
        return 0
    c = manifest.counts
    print(f"{manifest.name}  (build {manifest.build_id}, {manifest.mode}, {manifest.created_at})")
    print(f"  folder: {folder}")
    print(f"  papers: {c.papers:,} ({c.skipped:,} skipped, {c.placed:,} placed incrementally)")
    print(f"  topics: {c.topics}, outliers {c.outlier_share:.1%} ({c.reassigned:,} border papers placed afterwards)")
    if c.years:
        print(f"  years: {c.years[0]}-{c.years[1]} ({c.papers_with_year:,} papers with a year)")
    e = manifest.embedding
    print(f"  embedding: {e.model} ({e.backend}, dim {e.dim})")
    print("  inputs:")
    for i in manifest.inputs:
        print(
            f"    {i['path']}  {i['format']}, {i['rows_kept']:,}/{i['rows_read']:,} rows kept, sha256 {i['sha256'][:12]}"
        )
    print("  stages: " + ", ".join(f"{s.name} {s.seconds:.1f}s" for s in manifest.stages))
    print(f"  peak memory: {manifest.peak_rss_mb or 0:,.0f} MB")
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
        titles=own_titles(papers),
        keywords=papers["keywords"].tolist() if "keywords" in papers and papers["keywords"].notna().any() else None,
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
