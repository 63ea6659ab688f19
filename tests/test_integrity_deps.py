"""Every package the product or the tests import is pinned in requirements.txt, and no test skips
because one is missing (a security test that skips silently protects nothing)."""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata

from tests.conftest import ROOT

LOCAL = {"pipeline", "explorer", "tests", "pages", "app", "benchmarks"}


def _pinned() -> set[str]:
    names = set()
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==\S+", line.strip())  # name[extras]==version
        if match:
            names.add(re.sub(r"[-_.]+", "-", match.group(1)).lower())
    return names


def _imported_modules() -> dict[str, set[str]]:
    """Top-level modules imported anywhere (also inside functions) -> the files importing them."""
    out: dict[str, set[str]] = {}
    files = [ROOT / "app.py", *ROOT.glob("pipeline/**/*.py"), *ROOT.glob("explorer/**/*.py")]
    files += [*ROOT.glob("pages/*.py"), *ROOT.glob("tests/*.py")]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                out.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT)))
    return out


def test_every_imported_package_is_pinned():
    pinned = _pinned()
    dists = metadata.packages_distributions()
    missing = {}
    for module, where in _imported_modules().items():
        if module in LOCAL or module in sys.stdlib_module_names or module == "__future__":
            continue
        names = {re.sub(r"[-_.]+", "-", d).lower() for d in dists.get(module, [])}
        if not names & pinned:
            missing[module] = sorted(where)[:3]
    assert not missing, f"imported but not pinned in requirements.txt: {missing}"


def test_no_test_skips_for_a_missing_package():
    offenders = [
        str(p.relative_to(ROOT))
        for p in ROOT.glob("tests/*.py")
        if p.name != "test_integrity_deps.py" and "importorskip" in p.read_text(encoding="utf-8")
    ]
    assert not offenders, f"pin the package in requirements.txt and import it instead: {offenders}"
