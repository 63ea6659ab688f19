"""The app's shared in-memory copies: one per process, for every browser session.

Each is an ``st.cache_resource`` around a plain function of the read side, which holds the logic and
is tested without Streamlit: the corpus list (``pipeline.core.artifacts.list_corpora``, re-read every few
seconds), the corpus and the curated corpus (``explorer.state.data.load_corpus``, ``data.with_curation``),
comparisons and lineages (``explorer.services.compare``), the BM25 index, keyword and semantic search hits and the
query encoder
(``explorer.services.search``). The keys hold what identifies the data (``data.build_key``, ``Corpus.key``,
``Corpus.text_key``, the curation file's hash), so a rebuild or an edit is picked up on the next
rerun; arguments starting with ``_`` are not hashed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import streamlit as st

from explorer.services import compare as cview
from explorer.services import search
from explorer.state import data
from explorer.state.data import Corpus
from pipeline.analysis.comparison import Comparison
from pipeline.analysis.lineage import Lineage
from pipeline.core import artifacts
from pipeline.core.artifacts import CorpusEntry
from pipeline.core.config import EmbedParams
from pipeline.embed.encoders import Encoder

# ------------------------------------------------------------------------------------------
# Corpora
# ------------------------------------------------------------------------------------------


@st.cache_resource(ttl=5, show_spinner=False)
def _list_cached(root: str) -> list[CorpusEntry]:
    return artifacts.list_corpora(Path(root))


def list_corpora(root: Path) -> list[CorpusEntry]:
    """Every corpus under ``root``, broken ones with their error (re-read every few seconds)."""
    return _list_cached(str(Path(root).resolve()))


def reread_corpus_list() -> None:
    """Forget the corpus list, so that the next rerun lists a corpus just built (not 5 s later)."""
    _list_cached.clear()


@st.cache_resource(max_entries=6, show_spinner="Loading corpus…")
def _load_cached(root: str, name: str, build: str, _folder: Path) -> Corpus:
    return data.load_corpus(Path(root), name, _folder)


@st.cache_resource(max_entries=6, show_spinner="Applying the topic edits…")
def _curated_cached(root: str, name: str, build: str, edits_key: str, _base: Corpus, _raw: bytes) -> Corpus:
    return data.with_curation(_base, Path(root), name, edits_key, _raw)


def get_corpus(root: Path, name: str) -> Corpus:
    """Corpus ``name``'s current build with its topic edits, one copy shared by every session.

    The cache keys hold the build id and a hash of the curation file (read on every rerun: it is
    tiny), so a rebuild or an edit is picked up on the next rerun; at most six of each stay in
    memory.

    Raises:
        ArtifactError: the name is invalid, or the corpus is missing or broken.
    """
    folder = artifacts.corpus_path(root, name)
    root_key, build = str(Path(root).resolve()), data.build_key(folder)
    base = _load_cached(root_key, name, build, folder)
    raw = data.read_curation(Path(root), name)
    if not raw:
        return base
    return _curated_cached(root_key, name, build, data.edits_key(raw), base, raw)


# ------------------------------------------------------------------------------------------
# Comparisons and lineages
# ------------------------------------------------------------------------------------------


@st.cache_resource(max_entries=8, show_spinner="Placing the papers on the reference…")
def _computed(new_key, ref_key, _new: Corpus, _ref: Corpus) -> Comparison:
    return cview.compute(_new, _ref)


@st.cache_resource(max_entries=8, show_spinner=False)
def _stored(new_key, ref_key, version: str, _new: Corpus, _ref: Corpus) -> Comparison | None:
    return cview.read_stored(_new, _ref)


def get_comparison(new: Corpus, ref: Corpus) -> Comparison:
    """The comparison of ``new`` with reference ``ref`` (``explorer.services.compare.get_comparison``): the
    stored one, or one computed once and shared, keyed by both corpora's ``key``.

    Raises:
        CompareError: the pair cannot be compared, or is too large to compare in the app.
    """
    return cview.get_comparison(
        new,
        ref,
        stored=lambda n, r: _stored(n.key, r.key, cview.stored_version(n, r), n, r),
        computed=lambda n, r: _computed(n.key, r.key, n, r),
    )


@st.cache_resource(max_entries=8, show_spinner="Following the topics across periods…")
def _lineage(key, periods: tuple[tuple[int, int], ...], _corpus: Corpus) -> Lineage:
    return cview.get_lineage(_corpus, list(periods))


def get_lineage(corpus: Corpus, periods: list[tuple[int, int]]) -> Lineage:
    """The corpus's topic lineage over ``periods`` (computed once per build and periods)."""
    return _lineage(corpus.key, tuple(tuple(p) for p in periods), corpus)


# ------------------------------------------------------------------------------------------
# Search
# ------------------------------------------------------------------------------------------


@st.cache_resource(max_entries=6, show_spinner=False)  # no spinner: also called by warm_search()
def _bm25_cached(key: tuple[str, str, str], _corpus: Corpus):
    return search.open_bm25(_corpus)


def bm25_index(corpus: Corpus):
    """The corpus's BM25 index (``explorer.services.search.open_bm25``), shared by every session: once per
    build (topic edits do not change it)."""
    return _bm25_cached(corpus.text_key, corpus)


@st.cache_resource(max_entries=64, show_spinner=False)
def _keyword_cached(key: tuple[str, str, str], query: str, filters: str, k: int, _corpus: Corpus, _mask):
    hits = search.keyword_search(_corpus, bm25_index(_corpus), query, mask=_mask, k=k)
    for array in (hits.rows, hits.scores, hits.exact):
        array.setflags(write=False)  # shared by every session
    return hits


def keyword_hits(corpus: Corpus, query: str, mask: np.ndarray | None, k: int) -> search.Hits:
    """``explorer.services.search.keyword_search`` with the corpus's index, kept per texts, query,
    filters and ``k``: a page that reruns (a click on a result, a paper added to the reading list)
    or another session asking the same gets the same hits without checking the phrase again (a
    rare phrase reads most of the abstracts at a million papers)."""
    return _keyword_cached(corpus.text_key, query, _filters_key(mask), k, corpus, mask)


@st.cache_resource(max_entries=64, show_spinner=False)
def _semantic_cached(
    key: tuple[str, str, str], query: str, filters: str, k: int, writable: bool, _corpus: Corpus, _mask
):
    vector = search.encode_query(encoder_for(_corpus, writable=writable), query)
    hits = search.semantic_search(_corpus, vector, mask=_mask, k=k)
    for array in (hits.rows, hits.scores, hits.exact):
        array.setflags(write=False)  # shared by every session
    return hits


def semantic_hits(corpus: Corpus, query: str, mask: np.ndarray | None, k: int, *, writable: bool = True) -> search.Hits:
    """``explorer.services.search.semantic_search`` for ``query`` encoded by the corpus's own model, kept
    per texts, query, filters and ``k`` as :func:`keyword_hits` is (the Search page and the map's
    rings ask the same; at a million papers the product with every vector takes a tenth of a second).

    Raises:
        PipelineError: the model cannot be loaded (``explorer.services.search.encoder_for``); not kept.
    """
    return _semantic_cached(corpus.text_key, query, _filters_key(mask), k, writable, corpus, mask)


def _filters_key(mask: np.ndarray | None) -> str:
    return "all" if mask is None else hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=16).hexdigest()


@st.cache_resource(max_entries=4, show_spinner=False)
def _encoder_cached(params_key: str, root: str, _params) -> Encoder:
    return search.load_query_encoder(_params, Path(root))


def _load_encoder(params: EmbedParams, root: Path) -> Encoder:
    return _encoder_cached(repr(params), str(root), params)


def encoder_for(corpus: Corpus, *, writable: bool = True) -> Encoder:
    """The query encoder of the model the corpus's vectors came from (``explorer.services.search.encoder_for``),
    loaded once per process.

    Args:
        writable: False on a read-only server: never write a model export.

    Raises:
        PipelineError: see ``explorer.services.search.encoder_for``.
    """
    return search.encoder_for(corpus, _load_encoder, writable=writable)


def warm_search(corpus: Corpus, *, writable: bool = True) -> None:
    """Open the keyword index and load the query encoder in the background, once per build
    (``explorer.services.search.warm``), so that the first search finds them here."""
    search.warm(corpus, bm25_index, lambda c: encoder_for(c, writable=writable))
