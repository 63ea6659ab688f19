"""Semantic search with the real ONNX query encoder on the bundled NeurIPS 2026 corpus: a
paraphrase that shares no distinctive word with its abstract finds its paper, through the app's
path (the query encoder the build exported) and a read-only server's path (the same export,
only read; or the torch model when there is none, writing nothing)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from explorer.services import search
from explorer.state import data
from explorer.ui import caches
from pipeline.core import artifacts
from pipeline.embed.encoders import OnnxEncoder, TorchEncoder
from tests.test_pages import link_params, main_links, run
from tests.test_share import files_under

pytestmark = pytest.mark.real_model

#: A word of the abstract that identifies the paper -> a paraphrase of what the paper does.
PARAPHRASES = {
    "nnTrace": "catching quiet mistakes in multi-GPU model training runs that never raise an exception",
    "DrWatson": "using machine learning to work out which servers in a data centre are broken so repairs take less time",
}


def _row(corpus: data.Corpus, needle: str) -> int:
    rows = np.flatnonzero(corpus.papers["abstract"].str.contains(needle, regex=False).to_numpy())
    assert len(rows) == 1, needle
    return int(rows[0])


def _rank(corpus: data.Corpus, encoder, query: str, row: int) -> int | None:
    hits = search.semantic_search(corpus, search.encode_query(encoder, query), k=5)
    return list(hits.rows).index(row) if row in hits.rows else None


def _every_paraphrase_ranks_its_paper_first(corpus: data.Corpus, encoder) -> None:
    for needle, query in PARAPHRASES.items():
        assert _rank(corpus, encoder, query, _row(corpus, needle)) == 0, needle


@pytest.fixture(scope="module")
def corpus(real_artifacts) -> data.Corpus:
    return data.load_corpus(real_artifacts, "neurips2026")


@pytest.mark.parametrize("needle", sorted(PARAPHRASES))
def test_the_paraphrases_share_no_keywords_with_their_papers(corpus, needle):
    """What makes these queries a test of meaning: keyword search does not find the paper."""
    hits = search.keyword_search(corpus, search.build_bm25(corpus), PARAPHRASES[needle], k=5)
    assert _row(corpus, needle) not in hits.rows


@pytest.mark.parametrize("needle", sorted(PARAPHRASES))
def test_app_path_a_paraphrase_finds_its_paper(corpus, needle):
    encoder = caches.encoder_for(corpus)
    assert isinstance(encoder, OnnxEncoder)  # the corpus's own int8 model, not a test encoder
    assert _rank(corpus, encoder, PARAPHRASES[needle], _row(corpus, needle)) == 0


def test_app_path_through_the_search_page(real_artifacts, corpus, monkeypatch):
    needle = "DrWatson"
    at = run(
        real_artifacts, monkeypatch, "pages/search.py", corpus="neurips2026", q=PARAPHRASES[needle], mode="semantic"
    )
    assert not at.exception
    first = [link for link in main_links(at) if link_params(link).get("paper")][0]
    assert link_params(first)["paper"] == [corpus.papers["doc_id"].iat[_row(corpus, needle)]]


@pytest.fixture
def served_root(real_artifacts, tmp_path):
    root = tmp_path / "served"
    shutil.copytree(real_artifacts, root, symlinks=True)
    return root


def test_server_path_reads_the_builds_export_and_writes_nothing(served_root, monkeypatch):
    corpus = data.load_corpus(served_root, "neurips2026")
    before = files_under(served_root)
    encoder = caches.encoder_for(corpus, writable=False)
    assert isinstance(encoder, OnnxEncoder)
    _every_paraphrase_ranks_its_paper_first(corpus, encoder)
    at = run(
        served_root, monkeypatch, "pages/search.py", args=("--read-only",), corpus="neurips2026",
        q=PARAPHRASES["nnTrace"], mode="semantic",
    )  # fmt: skip
    assert not at.exception
    first = [link for link in main_links(at) if link_params(link).get("paper")][0]
    assert link_params(first)["paper"] == [corpus.papers["doc_id"].iat[_row(corpus, "nnTrace")]]
    assert files_under(served_root) == before


def test_server_path_without_an_export_uses_the_torch_model_and_writes_nothing(served_root):
    shutil.rmtree(artifacts.cache_dir(served_root) / "models")
    corpus = data.load_corpus(served_root, "neurips2026")
    before = files_under(served_root)
    encoder = caches.encoder_for(corpus, writable=False)
    assert isinstance(encoder, TorchEncoder)
    _every_paraphrase_ranks_its_paper_first(corpus, encoder)
    assert files_under(served_root) == before
