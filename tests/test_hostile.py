"""Hostile inputs through the whole build (not only ingest): each gives a clear message without a
traceback, or a build that keeps every good row; and artifacts survive a killed build.

Ingest-level cases (encodings, ragged rows, quoted newlines, NUL bytes, ...) are in
tests/test_ingest.py; this file checks that what ingest lets through also survives UMAP,
clustering, BERTopic and the writers, and that the CLI reports what it cannot use.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.build.build import build
from pipeline.cli import cli
from pipeline.core import artifacts, schema
from tests.conftest import ROOT, SMALL_CORPUS, TEST_ENCODER, fast_config

ABSTRACT = (
    "We study {topic} with a new analysis of convergence, sample complexity and robustness, and we "
    "evaluate the resulting algorithms on standard benchmarks where they improve accuracy."
)


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _loadable(root: Path, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    folder = artifacts.corpus_path(root, name)
    artifacts.read_manifest(folder)
    papers = pd.read_parquet(folder / schema.PAPERS)
    topics = pd.read_parquet(folder / schema.TOPICS)
    assert np.load(folder / schema.EMBEDDINGS, allow_pickle=False).shape[0] == len(papers)
    assert set(papers["topic"]) <= set(topics["topic"]) | {-1}
    return papers, topics


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tiny_corpora_build(tmp_path, n):
    topics = ["graph neural networks", "protein folding", "bandit algorithms"]
    src = _jsonl(
        tmp_path / "p.jsonl", [{"title": f"P{i}", "abstract": ABSTRACT.format(topic=topics[i])} for i in range(n)]
    )
    summary = build([src], "tiny", tmp_path / "art", fast_config(), encoder=TEST_ENCODER)
    papers, table = _loadable(tmp_path / "art", "tiny")
    assert summary.papers == n == len(papers) and len(table) >= 1
    assert papers["x"].notna().all()


def test_all_identical_papers_build_one(tmp_path):
    src = _jsonl(tmp_path / "p.jsonl", [{"title": "Same", "abstract": ABSTRACT.format(topic="kernels")}] * 50)
    summary = build([src], "same", tmp_path / "art", fast_config(), encoder=TEST_ENCODER)
    assert summary.papers == 1 and summary.skipped == 49
    _loadable(tmp_path / "art", "same")


def test_non_english_emoji_html_and_huge_abstracts_build(tmp_path):
    base = [json.loads(line) for line in SMALL_CORPUS.read_text(encoding="utf-8").splitlines()[:60]]
    extra = [
        {"id": "de", "title": "Graphneuronale Netze", "abstract": "Wir untersuchen graphneuronale Netze für Moleküle "
         "und zeigen, dass die Vorhersage von Bindungsaffinitäten deutlich verbessert wird. " * 3, "year": 2022},
        {"id": "zh", "title": "图神经网络", "abstract": "我们研究用于分子性质预测的图神经网络，并提出一种新的消息传递方法。" * 5, "year": 2022},
        {"id": "emoji", "title": "Robots 🤖 that plan 🗺️", "abstract": "Planning for robots 🤖 with 🗺️ maps and "
         "multi-agent coordination under uncertainty, evaluated in simulation and on real hardware. 🎉" * 2, "year": 2023},
        {"id": "html", "title": "<b>Bold</b> claims", "abstract": "<p>We <script>alert(1)</script> study <i>agents</i> "
         "&amp; planning &lt;fast&gt; with multi-agent reinforcement learning and game theory.</p>", "year": 2021},
        {"id": "huge", "title": "A very long abstract", "abstract": ("Scheduling constraint solvers " * 16_000)[:100_000], "year": 2020},
    ]  # fmt: skip
    src = _jsonl(tmp_path / "p.jsonl", base + extra)
    summary = build([src], "mixed", tmp_path / "art", fast_config(), encoder=TEST_ENCODER)
    papers, topics = _loadable(tmp_path / "art", "mixed")
    assert summary.papers == len(base) + len(extra)
    row = papers.set_index("doc_id")
    assert row.loc["html", "abstract"].startswith("<p>We <script>")  # display text kept verbatim
    assert "<" not in row.loc["html", "model_text"] and "script" not in row.loc["html", "model_text"]
    assert len(row.loc["huge", "abstract"]) == 100_000 and len(row.loc["huge", "model_text"]) <= 20_000
    keywords = {k for ks in topics["keywords"] for k in ks}
    assert not keywords & {"script", "amp", "lt", "gt", "alert", "https", "http"}


def test_a_file_with_only_bad_rows_fails_clearly_and_names_it(tmp_path, capsys):
    src = _jsonl(tmp_path / "bad.jsonl", [{"title": "x", "abstract": ""}, {"title": "y", "abstract": "too short"}])
    assert cli.main(["--artifacts", str(tmp_path / "art"), "build", str(src), "--name", "b"]) == 1
    err = capsys.readouterr().err
    assert "bad.jsonl" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "content",
    [b"", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20, b"title,year\nA,2020\n"],
    ids=["empty", "binary", "no-abstract-column"],
)
def test_unusable_files_give_one_clear_line(tmp_path, content):
    src = tmp_path / "input.csv"
    src.write_bytes(content)
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "--artifacts", str(tmp_path / "art"), "build", str(src), "--name", "u"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "input.csv" in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and proc.stderr.rstrip().endswith(errors[0])


def test_a_50_mb_file_builds_keeping_every_good_row(tmp_path):
    rng = random.Random(0)
    words = [w.strip(",{}:").replace('"', "") for w in SMALL_CORPUS.read_text(encoding="utf-8").split()]
    path = tmp_path / "big.csv"
    with path.open("w", encoding="utf-8") as handle:
        handle.write("id,title,abstract,year\n")
        i = 0
        while handle.tell() < 50 * 2**20:
            text = " ".join(rng.choice(words) for _ in range(1000))
            handle.write(f'{i},"Paper {i}","{text}",{2015 + i % 9}\n')
            i += 1
    summary = build([path], "big", tmp_path / "art", fast_config(), encoder=TEST_ENCODER)
    assert summary.read == i and summary.papers + summary.skipped == i
    assert summary.papers >= i - 5 and summary.changed == 0  # random texts: essentially no duplicates
    papers, _ = _loadable(tmp_path / "art", "big")
    assert len(papers) == summary.papers


# --- killed builds ---------------------------------------------------------------------------

STAGES = ["[2] Embedding", "[3] Projecting", "[6] Building topic", "[8] Writing"]


@pytest.mark.parametrize("stage", STAGES)
def test_sigkill_at_any_stage_leaves_the_previous_build_loadable(small_artifacts, tmp_path, stage):
    import shutil

    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    before = artifacts.corpus_path(root, "small")
    # A build with other settings (so it really runs), killed when it reaches ``stage``; the
    # driver is the CLI with the hashing test encoder injected (no setting can select it).
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "build_driver.py"), "--", "--artifacts", str(root), "build",
         str(SMALL_CORPUS), "--name", "small", "--seed", "11"],
        cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    deadline = time.time() + 120
    seen = ""
    while stage not in seen and proc.poll() is None and time.time() < deadline:
        seen += proc.stderr.readline()
    assert stage in seen, f"never reached {stage!r}: {seen[-2000:]}"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    current = artifacts.corpus_path(root, "small")
    # Killed while writing, the build may still have finished and been published; a half-written
    # build is never what the corpus points at.
    assert current == before or (stage == "[8] Writing" and (current / schema.BERTOPIC_DIR).is_dir())
    papers, _ = _loadable(root, "small")
    assert len(papers) == 137
    # The next build cleans up the abandoned folder and succeeds.
    build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER, force=True)
    assert len(list((root / artifacts.BUILDS / "small").iterdir())) == 1
    _loadable(root, "small")


def test_product_code_never_loads_pickles():
    offenders = []
    for path in [
        ROOT / "app.py",
        *ROOT.glob("pipeline/**/*.py"),
        *ROOT.glob("explorer/**/*.py"),
        *ROOT.glob("pages/*.py"),
    ]:
        text = path.read_text(encoding="utf-8")
        for needle in ("pickle.load", "allow_pickle=True", "joblib.load", 'serialization="pickle"', "torch.load("):
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert not offenders, offenders
