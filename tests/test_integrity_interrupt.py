"""Interrupted builds: SIGINT and SIGTERM at every stage boundary, inside the publishing swap and
right after it, delivered inside a real CLI process (tests/build_driver.py), and SIGTERM sent from
outside as the app's "add a corpus" worker does. After each one exactly one complete build is
loadable and the CLI says which; what is left behind is what the README's Artifacts section says.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.state.data import load_corpus
from pipeline.build.build import build
from pipeline.core import artifacts, schema
from tests.conftest import ROOT, SMALL_CORPUS, TEST_ENCODER, fast_config

DRIVER = ROOT / "tests" / "build_driver.py"
#: Before the swap: the start of every stage, the end of the last one, and the moment before
#: publishing (everything written, manifest included).
BEFORE = [
    "enter:ingest", "enter:embed", "enter:reduce", "enter:cluster", "enter:vocabulary", "enter:represent",
    "enter:trends", "enter:write", "exit:write", "publish",
]  # fmt: skip
#: The swap itself (signal held until it is done), right after it, and during the old builds' deletion.
AFTER = ["swap", "published", "discard"]
CODES = {"INT": 128 + signal.SIGINT, "TERM": 128 + signal.SIGTERM}


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    """40 papers of the fixture corpus: a full build takes a second or two once imports are warm."""
    path = tmp_path_factory.mktemp("input") / "s40.jsonl"
    path.write_text("".join(SMALL_CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)[:40]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def base(tmp_path_factory, corpus_file) -> Path:
    """An artifacts folder holding corpus "s" (one published build)."""
    root = tmp_path_factory.mktemp("base") / "art"
    build([corpus_file], "s", root, fast_config(), encoder=TEST_ENCODER)
    return root


def _copy(base: Path, dest: Path) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    return dest


def _run_plan(steps: list[dict], tmp_path: Path) -> list[dict]:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(steps))
    proc = subprocess.run(
        [sys.executable, str(DRIVER), "--plan", str(plan)], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(steps), proc.stdout[-3000:] + proc.stderr[-3000:]
    return results


def _assert_one_complete_build(root: Path, name: str = "s", papers: int = 40) -> artifacts.BuildRef:
    current = artifacts.current_build(root, name)
    assert current is not None
    corpus = load_corpus(root, name)  # the app's loader: every file present and consistent
    assert corpus.n_papers == papers
    assert sorted(p.name for p in current.folder.iterdir()) == sorted(schema.FILES)
    manifest = artifacts.read_manifest(current.folder)
    assert {s.name for s in manifest.stages} >= {"ingest", "embed", "write"} and manifest.seconds_total > 0
    assert not list(root.glob(f".{name}.*.link"))
    return current


def test_sigint_and_sigterm_at_every_point_leave_exactly_one_complete_build(base, corpus_file, tmp_path):
    old = artifacts.current_build(base, "s")
    steps, roots = [], []
    for sig in CODES:
        for point in BEFORE + AFTER:
            root = _copy(base, tmp_path / f"{sig}-{point.replace(':', '-')}")
            roots.append((sig, point, root))
            argv = ["--artifacts", str(root), "build", str(corpus_file), "--name", "s", "--force"]
            steps.append({"signal": sig, "at": point, "argv": argv})
    results = _run_plan(steps, tmp_path)
    for (sig, point, root), result in zip(roots, results, strict=True):
        where = f"{sig} at {point}: {result['stderr'][-800:]}"
        assert result["fired"], where
        assert result["code"] == CODES[sig], where
        assert "Traceback" not in result["stderr"], where
        current = _assert_one_complete_build(root)
        builds = {p.name for p in (root / artifacts.BUILDS / "s").iterdir() if not p.name.startswith(".")}
        if point in BEFORE:
            assert current.build_id == old.build_id, where
            assert f"interrupted before publishing: corpus 's' still holds build {old.build_id}" in result["stderr"]
            assert builds == {old.build_id}, where  # the unpublished folder is gone
        else:
            assert current.build_id != old.build_id, where
            assert (
                f"interrupted after the new build was published: corpus 's' now holds build {current.build_id}"
                in result["stderr"]
            ), where
            assert current.build_id in builds and builds <= {current.build_id, old.build_id}, where
    # After an interrupt during the deletion of old builds, and one before publishing, the next
    # build runs normally and leaves only its own build.
    again = [root for sig, point, root in roots if (sig, point) in {("INT", "discard"), ("TERM", "enter:represent")}]
    argv = ["build", str(corpus_file), "--name", "s", "--force"]
    results = _run_plan([{"argv": ["--artifacts", str(root), *argv]} for root in again], tmp_path)
    for root, result in zip(again, results, strict=True):
        assert result["code"] == 0, result["stderr"][-2000:]
        current = _assert_one_complete_build(root)
        assert [p.name for p in (root / artifacts.BUILDS / "s").iterdir()] == [current.build_id]


def test_interrupts_at_every_stage_boundary_of_an_incremental_build(base, corpus_file, tmp_path):
    """Adding papers takes the other path (place, trends, write): same guarantees."""
    old = artifacts.current_build(base, "s")
    more = tmp_path / "more.jsonl"
    more.write_text("".join(SMALL_CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)[40:50]))
    points = ["enter:embed", "enter:place", "enter:trends", "enter:write", "publish", "swap", "published"]
    steps, roots = [], []
    for sig in CODES:
        for point in points:
            root = _copy(base, tmp_path / f"inc-{sig}-{point.replace(':', '-')}")
            roots.append((sig, point, root))
            argv = ["--artifacts", str(root), "build", str(corpus_file), str(more), "--name", "s"]
            steps.append({"signal": sig, "at": point, "argv": argv})
    for (sig, point, root), result in zip(roots, _run_plan(steps, tmp_path), strict=True):
        where = f"{sig} at {point}: {result['stderr'][-800:]}"
        assert result["fired"] and result["code"] == CODES[sig], where
        published = point in AFTER + ["published"]
        current = _assert_one_complete_build(root, papers=50 if published else 40)
        assert (current.build_id != old.build_id) == published, where
        assert ("now holds build" if published else "still holds build") in result["stderr"], where
        if published:
            assert artifacts.read_manifest(current.folder).mode == "incremental"


def test_an_interrupt_inside_the_swap_of_a_hand_copied_folder_publishes_the_new_build(base, corpus_file, tmp_path):
    steps, roots = [], []
    for sig in CODES:
        root = tmp_path / f"plain-{sig}"
        root.mkdir()
        shutil.copytree(artifacts.corpus_path(base, "s"), root / "s")  # a plain folder, copied in by hand
        roots.append(root)
        argv = ["--artifacts", str(root), "build", str(corpus_file), "--name", "s", "--force"]
        steps.append({"signal": sig, "at": "aside", "argv": argv})
    for sig, root, result in zip(CODES, roots, _run_plan(steps, tmp_path), strict=True):
        assert result["fired"] and result["code"] == CODES[sig], result["stderr"][-2000:]
        current = _assert_one_complete_build(root)
        assert (root / "s").is_symlink() and current.build_id != "s"
        assert "interrupted after the new build was published" in result["stderr"]


def test_an_interrupted_first_build_says_there_is_no_build_and_leaves_none(corpus_file, tmp_path):
    root = tmp_path / "art"
    argv = ["--artifacts", str(root), "build", str(corpus_file), "--name", "fresh"]
    (result,) = _run_plan([{"signal": "TERM", "at": "enter:represent", "argv": argv}], tmp_path)
    assert result["code"] == CODES["TERM"]
    assert "interrupted before publishing: corpus 'fresh' has no build yet" in result["stderr"]
    assert artifacts.current_build(root, "fresh") is None
    assert not list((root / artifacts.BUILDS / "fresh").iterdir())
    # what it computed is kept: the vectors of all 40 papers are in the store
    summary = build([corpus_file], "fresh", root, fast_config(), encoder=TEST_ENCODER)
    assert summary.embedded == 0 and summary.embeddings_cached == 40


def test_sigterm_from_another_process_takes_the_clean_path(base, corpus_file, tmp_path):
    """What the app's "add a corpus" worker does to cancel a build: SIGTERM from outside."""
    root = _copy(base, tmp_path / "art")
    old = artifacts.current_build(root, "s")
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), "--", "--artifacts", str(root), "build", str(corpus_file), "--name", "s",
         "--force"],
        cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    seen, deadline = "", time.time() + 120
    while "[3] Projecting" not in seen and proc.poll() is None and time.time() < deadline:
        seen += proc.stderr.readline()
    assert "[3] Projecting" in seen, seen[-2000:]
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert f"interrupted before publishing: corpus 's' still holds build {old.build_id}" in err
    assert "Traceback" not in err
    assert _assert_one_complete_build(root).build_id == old.build_id
