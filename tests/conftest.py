"""Shared fixtures: a small corpus built once per test session with the hashing test embedder."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pipeline.config import BuildConfig, EmbedParams

FIXTURES = Path(__file__).parent / "fixtures"
SMALL_CORPUS = FIXTURES / "small_corpus.jsonl"
ROOT = Path(__file__).resolve().parent.parent
OUTPUT = Path(__file__).parent / "output"  # screenshots and logs the tests leave for a human


def fast_config(**cluster) -> BuildConfig:
    """Settings for fixture builds: the deterministic hashing embedder instead of the real model."""
    config = BuildConfig(embed=EmbedParams(backend="hashing"))
    if cluster:
        config = dataclasses.replace(config, cluster=dataclasses.replace(config.cluster, **cluster))
    return config


@pytest.fixture(scope="session")
def small_artifacts(tmp_path_factory) -> Path:
    """An artifacts folder holding corpus "small" (137 IJCAI papers, 2020-2024, 6 areas, 2 hostile)."""
    from pipeline.build import build

    root = tmp_path_factory.mktemp("artifacts")
    build([SMALL_CORPUS], "small", root, fast_config())
    return root


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT
