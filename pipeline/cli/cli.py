"""Command line: ``python -m pipeline build|list|info|evaluate|export|compare ...``. A thin shell over pipeline functions.

The parsers of each command group are in ``pipeline.cli.cli_parsers``, the handlers in
``pipeline.cli.cli_build`` (build, compare) and ``pipeline.cli.cli_corpus`` (list, info, export, evaluate).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from pipeline.cli.cli_build import cmd_build, cmd_compare, interrupt_code, on_sigterm
from pipeline.cli.cli_corpus import cmd_evaluate, cmd_export, cmd_info, cmd_list
from pipeline.cli.cli_parsers import (
    add_build_parser,
    add_corpus_parsers,
    add_evaluate_parser,
    add_export_compare_parsers,
    formatter,
)
from pipeline.core import artifacts
from pipeline.core.errors import PipelineError
from pipeline.core.inputs import ROOT

DEFAULT_ARTIFACTS = ROOT / "artifacts"


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline",
        formatter_class=formatter,
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
    add_build_parser(sub)
    add_corpus_parsers(sub)
    add_evaluate_parser(sub)
    add_export_compare_parsers(sub)
    return parser


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
    previous = signal.signal(signal.SIGTERM, on_sigterm) if main_thread else None
    try:
        return COMMANDS[args.command](args)
    except (PipelineError, artifacts.ArtifactError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        print("interrupted.", file=sys.stderr)
        return interrupt_code(exc)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
