"""The command line's parsers, one function per command group (build; list, info; evaluate; export, compare).

``pipeline.cli.cli.make_parser`` puts them together; the handlers are in ``pipeline.cli.cli_build`` and
``pipeline.cli.cli_corpus``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.core.inputs import DEFAULT_CORPUS


def formatter(prog):
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def add_build_parser(sub) -> None:
    """The ``build`` command: inputs, columns, model, embedding engine, stability."""

    b = sub.add_parser(
        "build",
        help="build (or update) a corpus from input files",
        formatter_class=formatter,
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
    _add_build_options(b)


def _add_build_options(b) -> None:
    """Build's option groups: input columns, model, embedding engine (stability sits in model)."""
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


def add_corpus_parsers(sub) -> None:
    """The ``list`` and ``info`` commands: what is built."""
    lst = sub.add_parser(
        "list",
        help="list built corpora",
        formatter_class=formatter,
        description="List the corpora in the artifacts folder with their size, topics and build date.",
        epilog="example:\n  python -m pipeline list --artifacts artifacts\n",
    )
    lst.add_argument("--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder")
    lst.add_argument("--json", action="store_true", help="print JSON")

    info = sub.add_parser(
        "info",
        help="show one corpus: inputs, settings, counts, timings",
        formatter_class=formatter,
        description="Show a built corpus's manifest: inputs with hashes, settings, counts, stage timings.",
        epilog="example:\n  python -m pipeline info neurips2026\n",
    )
    info.add_argument("name", help="corpus name")
    info.add_argument("--artifacts", type=Path, default=argparse.SUPPRESS, help="artifacts folder")
    info.add_argument("--json", action="store_true", help="print the whole manifest as JSON")


def add_evaluate_parser(sub) -> None:
    """The ``evaluate`` command: topic quality against labels and the obvious alternatives."""
    ev = sub.add_parser(
        "evaluate",
        help="measure topic quality against labels and the obvious alternatives",
        formatter_class=formatter,
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


def add_export_compare_parsers(sub) -> None:
    """The ``export`` and ``compare`` commands: an offline HTML file, and a corpus against a reference."""
    exp = sub.add_parser(
        "export",
        help="write a corpus as one self-contained HTML file (works offline)",
        formatter_class=formatter,
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
        formatter_class=formatter,
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
