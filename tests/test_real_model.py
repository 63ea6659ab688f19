"""End to end with the real packaged model on the bundled NeurIPS 2026 corpus (38 abstracts).

Slower than the fixture tests (the ONNX export is made once per test session, ~10 s), so kept to
what only the real model shows: enough meaningful topics, few outliers, clean keywords, the same
result twice, and ONNX vectors that match sentence-transformers'.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest

from pipeline import artifacts, schema
from pipeline.build import build
from pipeline.cli import default_inputs
from pipeline.config import BuildConfig, EmbedParams

pytestmark = pytest.mark.real_model

FRAGMENT = re.compile(
    r"^(mathrm|mathcal|mathbb|mathbf|emph|textbf|textit|frac|cdot|https?|www|com|org|html|cid|amp|nbsp|url|arxiv|github)$"
)


@pytest.fixture(scope="module")
def seeds_root(real_artifacts):
    return real_artifacts  # built once per session (tests/conftest.py), shared with the search tests


def _tables(root):
    folder = artifacts.corpus_path(root, "neurips2026")
    return folder, pd.read_parquet(folder / schema.PAPERS), pd.read_parquet(folder / schema.TOPICS)


def test_default_corpus_has_enough_topics_and_few_outliers(seeds_root):
    folder, papers, topics = _tables(seeds_root)
    manifest = artifacts.read_manifest(folder)
    assert len(topics) >= 5
    assert manifest["counts"]["outlier_share"] <= 0.10
    assert (papers["topic"] >= 0).all()
    assert topics["size"].min() >= 2 and topics["size"].max() <= 0.5 * len(papers)  # no catch-all topic
    assert papers["title_derived"].all() and (papers["venue"] == "NeurIPS").all() and (papers["year"] == 2026).all()
    assert manifest["embedding"]["backend"] == "onnx-int8"


def test_keywords_have_no_latex_url_number_or_stop_word_fragments(seeds_root):
    from pipeline.vocab import stop_words

    _, _, topics = _tables(seeds_root)
    stops = set(stop_words())
    for keywords in topics["keywords"]:
        assert len(keywords) == 10
        for term in keywords:
            for word in term.split():
                assert not FRAGMENT.match(word), term
                assert not word.replace("-", "").isdigit(), term
                assert word not in stops, term
    assert topics["label"].is_unique


def test_two_builds_give_the_same_topics(seeds_root, tmp_path):
    root = tmp_path / "again"
    shutil.copytree(seeds_root, root, symlinks=True)
    shutil.rmtree(artifacts.cache_dir(root) / "stages")  # refit UMAP too, not only the later stages
    _, before, _ = _tables(seeds_root)
    summary = build(default_inputs(), "neurips2026", root, BuildConfig(), force=True)
    assert summary.embedded == 0  # every vector came from the cache
    _, after, topics = _tables(root)
    assert before["topic"].tolist() == after["topic"].tolist()
    np.testing.assert_allclose(before[["x", "y"]].to_numpy(), after[["x", "y"]].to_numpy(), atol=1e-4)


def test_onnx_int8_vectors_match_sentence_transformers(seeds_root):
    from pipeline.embed import load_encoder

    _, papers, _ = _tables(seeds_root)
    texts = papers["model_text"].tolist()
    cache = artifacts.cache_dir(seeds_root)
    reference = load_encoder(EmbedParams(backend="torch"), cache).encode(texts)
    stored = np.load(artifacts.corpus_path(seeds_root, "neurips2026") / schema.EMBEDDINGS)
    cosine = np.sum(reference * stored, axis=1)
    assert cosine.min() > 0.97 and cosine.mean() > 0.99
    fp32 = load_encoder(EmbedParams(backend="onnx"), cache).encode(texts[:8])
    assert np.sum(fp32 * reference[:8], axis=1).min() > 0.9999
