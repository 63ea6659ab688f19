"""Tests that can fail only for real reasons: no browser test waits a fixed time, and no test
asserts on a stopwatch.

A fixed wait passes on an idle machine and fails on a busy one (the page was not there yet); a
stopwatch fails on a busy machine and proves nothing on an idle one. Browser tests wait for a
condition (``Tab.settle``, ``Tab.wait_for``, Playwright's ``expect``); a sleep is allowed only as
the pause between two checks of a ``while`` loop's condition. Speed is measured in benchmarks/
against a baseline timed in the same run.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _browser_test_files() -> list[Path]:
    files = [p for p in sorted(TESTS.glob("test_*.py")) if "pytest.mark.browser" in p.read_text(encoding="utf-8")]
    assert len(files) >= 5  # the rule below must look at something
    return files


def _is_wait(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "wait_for_timeout":
        return "wait_for_timeout"
    if isinstance(f, ast.Attribute) and f.attr == "sleep" and isinstance(f.value, ast.Name) and f.value.id == "time":
        return "time.sleep"
    return None


def fixed_waits(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) of every sleep or ``wait_for_timeout`` that is not inside a ``while`` loop."""
    found = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        if isinstance(node, ast.Call) and (what := _is_wait(node)) and not in_loop:
            found.append((node.lineno, what))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, False)  # a function defined in a loop is not the loop's pause
            else:
                visit(child, in_loop or isinstance(node, ast.While))

    visit(tree, False)
    return found


def test_no_browser_test_waits_a_fixed_time():
    offenders = []
    for path in _browser_test_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        offenders += [f"{path.name}:{line}: {what}" for line, what in fixed_waits(tree)]
    assert not offenders, "wait for a condition instead (Tab.wait_for, Tab.settle, expect):\n" + "\n".join(offenders)


def test_the_rule_finds_a_fixed_wait_and_allows_a_polling_pause():
    code = (
        "def t(tab):\n"
        "    tab.click()\n"
        "    time.sleep(1)\n"
        "    tab.page.wait_for_timeout(500)\n"
        "    while not ready():\n"
        "        time.sleep(0.2)\n"
    )
    assert fixed_waits(ast.parse(code)) == [(3, "time.sleep"), (4, "wait_for_timeout")]


def test_no_test_reads_a_stopwatch():
    offenders = [
        f"{path.name}:{n}"
        for path in sorted(TESTS.glob("*.py"))
        if path.name != Path(__file__).name
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "perf_counter" in line or "process_time" in line
    ]
    assert not offenders, "time it in benchmarks/ against a baseline of the same run: " + ", ".join(offenders)
