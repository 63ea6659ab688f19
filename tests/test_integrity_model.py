"""Preparing the packaged model (the int8 ONNX export in ``.cache/models``) while another process
prepares it too, on a fresh artifacts folder.

Every builder must succeed, the export must be whole and left alone afterwards, and no later build
embeds again: two command-line builds, and the app's build queue (``explorer.services.jobs``, the path a
browser upload takes) against a command-line build.
The builders are real processes with the real model (its export takes about 8 s);
``tests/race_driver.py`` makes them enter the preparation at the same moment, so that they
overlap in it every time rather than by chance.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.services import job_progress, job_queue, job_runner, jobs
from explorer.state import uploads
from explorer.state.access import Access
from pipeline.build.build import build
from pipeline.core import artifacts
from pipeline.core.config import BuildConfig
from pipeline.embed.encoders import onnx_model_path
from tests.conftest import ROOT, SMALL_CORPUS

pytestmark = pytest.mark.real_model

PY = sys.executable
DRIVER = Path(__file__).resolve().parent / "race_driver.py"
PAPERS = 7  # a few papers: the preparation is the race; no UMAP JIT


def _papers(tmp_path: Path) -> Path:
    src = tmp_path / "papers.jsonl"
    src.write_text("".join(SMALL_CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)[:PAPERS]))
    return src


def _driver(meet: Path, parties: int) -> list[str]:
    return [str(DRIVER), "--meet", str(meet), "--parties", str(parties)]


def _start(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen([PY, *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _succeeded(proc: subprocess.Popen) -> None:
    _, err = proc.communicate(timeout=900)
    stderr = err.decode(errors="replace")
    assert proc.returncode == 0 and "Traceback" not in stderr, stderr[-3000:]


def _assert_prepared_once(root: Path) -> None:
    """The export is whole (onnxruntime loads it) and nothing half-written is left beside it."""
    import onnxruntime as ort

    int8 = onnx_model_path(BuildConfig().embed, artifacts.cache_dir(root))
    ort.InferenceSession(str(int8), providers=["CPUExecutionProvider"])
    left = sorted(p.name for p in int8.parent.iterdir() if p.name not in {"model.onnx", "model_int8.onnx"})
    assert not [n for n in left if not n.endswith(".lock")], left


def _assert_nothing_embeds_again(root: Path, src: Path) -> None:
    summary = build([src], "again", root, BuildConfig())
    assert summary.papers == PAPERS
    assert summary.embedded == 0 and summary.embeddings_cached == PAPERS


def test_two_command_line_builds_prepare_the_model_at_once(tmp_path):
    src, root = _papers(tmp_path), tmp_path / "art"
    argv = [*_driver(tmp_path / "meet", 2), "--", "--artifacts", str(root), "build", str(src)]
    for proc in [_start([*argv, "--name", name]) for name in ("one", "two")]:
        _succeeded(proc)
    _assert_prepared_once(root)
    _assert_nothing_embeds_again(root, src)


def test_the_app_build_queue_and_a_command_line_build_prepare_the_model_at_once(tmp_path, monkeypatch):
    src, root, meet = _papers(tmp_path), tmp_path / "art", tmp_path / "meet"
    monkeypatch.setattr(job_runner, "BUILD_PROGRAM", (*_driver(meet, 2), "--"))  # the job's command line
    data = src.read_bytes()
    upload = jobs.Upload("papers.jsonl", data, uploads.preview("papers.jsonl", data))
    job = jobs.submit(Access(), root, "web", [upload], new=True)  # starts the queue's worker
    cli = _start([*_driver(meet, 2), "--", "--artifacts", str(root), "build", str(src), "--name", "cli"])
    _succeeded(cli)
    deadline = time.monotonic() + 600
    while (done := job_queue.load(root, job.id)).status not in job_queue.FINISHED:
        assert time.monotonic() < deadline, "the queued build did not finish"
        time.sleep(0.2)
    assert done.status == "done", (done.message, job_progress.log_text(root, done)[-3000:])
    _assert_prepared_once(root)
    _assert_nothing_embeds_again(root, src)
