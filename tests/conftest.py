"""Shared fixtures: a small corpus built once per test session with the hashing test embedder.

The hashing encoder is injected, never configured (no setting can select it): fixture builds pass
``encoder=TEST_ENCODER`` to ``build``, and this module registers it for the app's query encoder
(``pipeline.embed.encoders.register_encoder``), so that AppTest pages and plain functions search fixture
corpora with the vectors they were built with. Browser tests start the app through
``tests/serve_app.py``, which registers it in the server process.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from pipeline.core.config import BuildConfig
from pipeline.embed.encoders import HashingEncoder, register_encoder

FIXTURES = Path(__file__).parent / "fixtures"
SMALL_CORPUS = FIXTURES / "small_corpus.jsonl"
ROOT = Path(__file__).resolve().parent.parent
OUTPUT = Path(__file__).parent / "output"  # screenshots and logs the tests leave for a human


@pytest.fixture(autouse=True)
def _main_module_kept():
    """Streamlit's AppTest leaves the page script (``app.py``) as ``__main__``; a worker process
    spawned later would run it again at start (and die). Each test leaves ``__main__`` as it found it."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


#: The deterministic test encoder of every fixture build: ``build(..., encoder=TEST_ENCODER)``.
TEST_ENCODER = HashingEncoder()
register_encoder(TEST_ENCODER)


def fast_config(**cluster) -> BuildConfig:
    """Settings for fixture builds (with ``cluster`` overrides); pair them with
    ``encoder=TEST_ENCODER``, which replaces the real model."""
    config = BuildConfig()
    if cluster:
        config = dataclasses.replace(config, cluster=dataclasses.replace(config.cluster, **cluster))
    return config


@pytest.fixture(scope="session")
def small_artifacts(tmp_path_factory) -> Path:
    """An artifacts folder holding corpus "small" (137 IJCAI papers, 2020-2024, 6 areas, 2 hostile)."""
    from pipeline.build.build import build

    root = tmp_path_factory.mktemp("artifacts")
    build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER)
    return root


@pytest.fixture(scope="session")
def real_artifacts(tmp_path_factory) -> Path:
    """An artifacts folder holding the bundled NeurIPS 2026 corpus built with the real packaged
    model (int8 ONNX, exported into its .cache on first use, ~10 s): corpus "neurips2026"."""
    from pipeline.build.build import build
    from pipeline.core.inputs import default_inputs

    root = tmp_path_factory.mktemp("real")
    summary = build(default_inputs(), "neurips2026", root, BuildConfig())
    assert summary.papers == 38 and summary.skipped == 0
    return root


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT


#: Debian's Chromium (never `playwright install`: it downloads a browser) and the flags that keep
#: it off the network.
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module; fails, never skips, when it is missing."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install it with `make browser` (Debian's chromium package).")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def tab(browser, server):
    """A fresh app session in Chromium on the requesting module's ``server``; fails the test on
    console errors or dialogs."""
    from tests.test_browser import Tab

    t = Tab(browser, server)
    yield t
    errors, dialogs = t.errors, t.dialogs
    t.close()
    assert not dialogs, f"dialogs opened: {dialogs}"
    assert not errors, "\n".join(errors)


@pytest.fixture(scope="session")
def compare_artifacts(small_artifacts, tmp_path_factory) -> Path:
    """Corpora to compare: the fixture corpus split by year, "early" (2020-2022) and "late"
    (2023-2024), and "all" (a copy of "small", holding both)."""
    import json

    from pipeline.build.build import build
    from pipeline.core import artifacts

    root = tmp_path_factory.mktemp("compare")
    rows = [json.loads(line) for line in SMALL_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    early = [r for r in rows if str(r.get("year")) in ("2020", "2021", "2022")]
    for name, part in (("early", early), ("late", [r for r in rows if r not in early])):
        path = root / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in part), encoding="utf-8")
        build([path], name, root, fast_config(), encoder=TEST_ENCODER)
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), root / "all")
    return root
