"""The README, the CLI and the artifact layout must agree."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import cli
from pipeline.core import schema

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_artifact_reference_matches_the_schema():
    block = README.split("<!-- artifact-files:start -->\n", 1)[1].split("\n<!-- artifact-files:end -->", 1)[0]
    assert block == schema.readme_section(), (
        "README's artifact section is out of date: regenerate it from pipeline.core.schema.readme_section()"
    )


def test_readme_quick_start_is_the_two_make_commands():
    quick = README.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^make (\w+)", quick, flags=re.M)
    assert commands == ["run", "test"]
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^run:", makefile, flags=re.M) and re.search(r"^test:", makefile, flags=re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def _subcommands() -> list[str]:
    parser = cli.make_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return list(sub.choices)


def test_every_cli_command_is_documented_with_an_example():
    sub = next(a for a in cli.make_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, parser in sub.choices.items():
        assert f"python -m pipeline {name}" in README, f"README does not document `{name}`"
        assert "example" in (parser.epilog or ""), f"`{name} --help` has no example"
        assert f"python -m pipeline {name}" in parser.format_help()


def test_readme_documents_no_command_that_does_not_exist():
    documented = set(re.findall(r"python -m pipeline (\w+)", README))
    assert documented <= set(_subcommands()), documented - set(_subcommands())


@pytest.mark.parametrize("command", ["", "build", "list", "info"])
def test_help_runs_from_the_shell(command):
    args = [sys.executable, "-m", "pipeline", *([command] if command else []), "--help"]
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "example" in out.stdout


@pytest.mark.parametrize("doc", ["README.md", "EVALUATION.md", "BENCHMARKS.md"])
def test_every_local_link_and_image_in_the_docs_exists(doc):
    text = (ROOT / doc).read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"{doc} links to files that do not exist: {missing}"


def test_evaluation_status_table_is_what_the_recorded_runs_say():
    """EVALUATION.md's table of where issue 20 stands is rendered from the recorded rows, so it
    cannot drift from them; a stale table means running ``benchmarks/issue20_status.py`` again."""
    from benchmarks.issue20_status import render, status

    text = (ROOT / "EVALUATION.md").read_text(encoding="utf-8")
    block = text.split("<!-- issue20-status:start -->\n", 1)[1].split("\n<!-- issue20-status:end -->", 1)[0]
    table = status()
    assert block == render(table)
    assert len(table) >= 26 and all(row["seeds"] >= 3 for row in table)


@pytest.mark.parametrize("doc", ["README.md", "EVALUATION.md", "BENCHMARKS.md"])
def test_no_section_of_the_docs_is_empty(doc):
    """A heading straight after a heading of the same or a higher level leaves a section with
    nothing in it (a benchmark's block appended under a heading that had been moved, say)."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # headings inside code are not headings
    headings = [(m.start(), m.end(), len(m.group(1))) for m in re.finditer(r"^(#+) .*$", text, flags=re.M)]
    empty = [
        text[start:end]
        for (start, end, level), (nxt, _, nxt_level) in zip(headings, headings[1:], strict=False)
        if not text[end:nxt].strip() and nxt_level <= level
    ]
    assert not empty, f"{doc} has sections with nothing in them: {empty}"
