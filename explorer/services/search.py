"""Keyword (BM25) and semantic search, similar papers, and placing a new abstract.

The BM25 index is read from the build (``keyword_index/``, memory-mapped; built in memory for
older builds) and the query encoder loaded; ``explorer.ui.caches`` keeps one of each per process. The
functions taking them are plain and tested directly.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from explorer.services.phrase_scan import is_phrase, phrase_rows, python_space
from pipeline.analysis import bm25
from pipeline.analysis.bm25 import tokenize  # one tokeniser for the app and the offline export
from pipeline.core import artifacts, schema
from pipeline.core.errors import PipelineError
from pipeline.core.ranking import top_k
from pipeline.core.settings import config_from_manifest
from pipeline.embed.embed_model import model_key
from pipeline.embed.encoders import load_encoder, onnx_model_path, registered_encoder
from pipeline.model import place

if TYPE_CHECKING:
    from explorer.state.data import Corpus
    from pipeline.core.config import EmbedParams
    from pipeline.embed.encoders import Encoder


@dataclass(frozen=True)
class Hits:
    """Search results, best first.

    Attributes:
        rows: int ``(m,)`` paper rows.
        scores: float32 ``(m,)`` BM25 score or cosine similarity.
        exact: bool ``(m,)`` the query appears verbatim (as a phrase) in the title or abstract.
        total: the papers ranked, of which these are the best: those sharing a word with the query
            (keyword search) or every paper the filters keep (semantic search).
        exact_total: how many of them hold the query as a phrase, where every one is among ``rows``
            (fewer than were asked for); None where more may (or the query is one word).
    """

    rows: np.ndarray
    scores: np.ndarray
    exact: np.ndarray
    total: int = 0
    exact_total: int | None = None

    def __len__(self) -> int:
        return len(self.rows)


def _empty() -> Hits:
    return Hits(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=bool))


# ------------------------------------------------------------------------------------------
# Keyword search
# ------------------------------------------------------------------------------------------


@dataclass
class KeywordIndex:
    """A corpus's BM25 index (``bm25``, a ``bm25s.BM25``); ``shown_text``: it indexes each paper's
    title and abstract as shown (``bm25.index_texts``), so its postings may narrow the exact-phrase
    check; False for an index of the cleaned ``model_text`` (before ``bm25.INDEX_VERSION`` 2)."""

    bm25: object
    shown_text: bool

    @functools.cached_property
    def words(self):
        """The index's words by id (Arrow), for ``bm25.phrase_candidates``."""
        return bm25.vocabulary(self.bm25)

    def phrase_candidates(self, query: str) -> np.ndarray | None:
        """bool ``(papers,)``: the papers that can hold ``query`` as a phrase (a superset), or None
        when the index cannot say (``bm25.phrase_candidates``)."""
        return bm25.phrase_candidates(self.bm25, self.words, query) if self.shown_text else None


def build_bm25(corpus: Corpus) -> KeywordIndex:
    """A BM25 index of each paper's title and abstract as shown, built in memory: for builds made
    before the index was part of the build (``keyword_index/``)."""
    texts = bm25.ShownTexts(corpus.papers["title"], corpus.papers["abstract"])
    return KeywordIndex(bm25.build_index(texts), shown_text=True)


def load_bm25(corpus: Corpus) -> KeywordIndex | None:
    """The build's own BM25 index (``keyword_index/``, memory-mapped), or None when the build has
    none or one that does not fit (see ``pipeline.analysis.bm25.index_problem``)."""
    folder = corpus.folder / schema.KEYWORD_INDEX
    index = bm25.load_index(folder, corpus.n_papers)
    return None if index is None else KeywordIndex(index, shown_text=bm25.indexes_shown_text(folder))


@functools.lru_cache(maxsize=64)
def _index_problem(folder: Path, n_papers: int) -> str | None:
    """``bm25.index_problem`` of a build folder, read once: a published build's files never change
    (a rebuild is a new folder), so the Search page does not read ``meta.json`` on every rerun."""
    return bm25.index_problem(folder / schema.KEYWORD_INDEX, n_papers)


def index_note(corpus: Corpus) -> str | None:
    """Why keyword search indexes this corpus in memory (slower to start and larger), with the
    command that fixes it; None when it reads the build's index."""
    problem = _index_problem(corpus.folder, corpus.n_papers)
    if problem is None:
        return None
    return (
        f"Keyword search indexed this corpus on this server because {problem}. Rebuilding the corpus "
        f"makes the index part of the build (faster first search, less memory): "
        f"python -m pipeline build FILES --name {corpus.name} --force"
    )


#: Papers checked for the exact phrase in the first round of a keyword search (best scores first);
#: each further round checks this many times more, until ``k`` papers with the phrase are found.
PHRASE_FIRST_ROUND = 256
PHRASE_ROUND_GROWTH = 8
#: A round that would check more than this share of the corpus checks every remaining match instead:
#: copying rows out costs a few times scanning them in place, so once a phrase is rare enough to need
#: that many, one scan of the corpus (where most stretches hold a match) is cheaper than more rounds.
PHRASE_ALL_SHARE = 1 / 32


def keyword_search(
    corpus: Corpus, index: KeywordIndex, query: str, *, mask: np.ndarray | None = None, k: int = 20
) -> Hits:
    """BM25 ranking of the papers sharing a word with the query (English stop words ignored);
    among them, those containing the query as an exact phrase come first, then by score, ties by row.

    Only the papers needed are checked for the phrase: best scores first, in growing rounds, until
    ``k`` of them contain it (then no paper further down can enter the first ``k``) or every match is
    checked. A million abstracts are never all read for a common phrase. When the first round does
    not find ``k``, the index (its postings and signatures of adjacent words) leaves out the papers
    that cannot hold the phrase (``KeywordIndex.phrase_candidates``): a rare phrase reads a few
    hundred or thousand abstracts, not every paper sharing a word with it.

    Args:
        index: from ``open_bm25`` (or ``explorer.ui.caches.bm25_index``).
        mask: bool ``(papers,)`` papers allowed (the filters), or None for all.
    """
    tokens = tokenize([query])[0]
    ids = index.bm25.get_tokens_ids(tokens) if tokens else []
    if not ids:
        return _empty()
    scores = np.asarray(index.bm25.get_scores(ids), dtype=np.float32)
    allowed = scores > 0
    if mask is not None:
        allowed &= mask
    rows = np.flatnonzero(allowed)
    if not len(rows):
        return _empty()
    k = min(k, len(rows))
    if not is_phrase(query):
        best = rows[top_k(scores[rows], k)]
        return Hits(best, scores[best], np.zeros(len(best), dtype=bool), total=len(rows))
    found = _with_phrase(corpus, query, scores, rows, k, lambda: index.phrase_candidates(query))
    rest = np.zeros(0, dtype=np.int64)
    if len(found) < k:  # every paper with the phrase found: the best of the others follow
        allowed[found] = False
        without = np.flatnonzero(allowed)
        rest = without[top_k(scores[without], k - len(found))]
    chosen = np.concatenate([found, rest]).astype(np.int64)
    every = len(found) < k or k == len(rows)  # every paper holding the phrase is among them
    exact = np.arange(k) < len(found)
    return Hits(chosen, scores[chosen], exact, total=len(rows), exact_total=len(found) if every else None)


def _with_phrase(
    corpus: Corpus, query: str, scores: np.ndarray, pool: np.ndarray, k: int, narrow: Callable[[], np.ndarray | None]
) -> np.ndarray:
    """The ``k`` best papers of ``pool`` (score desc, row asc) that hold ``query`` as a phrase, or
    every one that does when fewer. After the first round, ``narrow()`` (bool per paper, or None)
    may leave out papers that cannot hold it; the rounds then go on over the papers left."""
    checked, exact, narrowed = 0, np.zeros(0, dtype=bool), False
    size = max(PHRASE_FIRST_ROUND, k)
    while size < len(pool):
        order = pool[top_k(scores[pool], size)]  # (score desc, row asc): the full sort's first ``size``
        exact = np.concatenate([exact, phrase_rows(corpus, order[checked:], query)])
        checked = size
        if exact.sum() >= k:
            return order[exact][:k].astype(np.int64)
        keep = None if narrowed else narrow()
        narrowed = True
        if keep is not None:  # the rounds start again on the papers left (a few hundred checked again)
            pool, checked, exact = pool[keep[pool]], 0, np.zeros(0, dtype=bool)
        size *= PHRASE_ROUND_GROWTH
        if size > PHRASE_ALL_SHARE * corpus.n_papers:
            break
    # Every paper of the pool checked, in row order (a scan where they lie close).
    holding = pool[phrase_rows(corpus, pool, query)]
    return holding[top_k(scores[holding], min(k, len(holding)))].astype(np.int64)


# ------------------------------------------------------------------------------------------
# Semantic search and placement
# ------------------------------------------------------------------------------------------


def semantic_search(corpus: Corpus, vector: np.ndarray, *, mask: np.ndarray | None = None, k: int = 20) -> Hits:
    """Papers by cosine similarity to ``vector`` (float32 ``(dim,)``, normalised)."""
    sims = np.asarray(corpus.embeddings @ np.asarray(vector, dtype=np.float32), dtype=np.float32)
    if mask is not None:
        sims = np.where(mask, sims, -np.inf)
    total = int(np.isfinite(sims).sum())
    k = min(k, total)
    if k <= 0:
        return _empty()
    top = top_k(sims, k)  # ties by row
    return Hits(top.astype(np.int64), sims[top], np.zeros(len(top), dtype=bool), total=total)


def similar_papers(corpus: Corpus, row: int, k: int = 10) -> Hits:
    """The ``k`` papers most similar to paper ``row`` (cosine on stored embeddings), itself excluded."""
    idx, sims = place.nearest(
        np.asarray(corpus.embeddings[row : row + 1]), corpus.embeddings, k, exclude=np.array([row])
    )
    return Hits(idx[0], sims[0], np.zeros(len(idx[0]), dtype=bool))


@dataclass(frozen=True)
class Placement:
    """Where a new abstract would go.

    Attributes:
        similarities: float32 ``(topics,)`` its cosine similarity to each topic's embedding
            (``topics`` row order), -1 to 1.
        nearest: its most similar papers.
        xy: float32 ``(2,)`` its map position.
    """

    similarities: np.ndarray
    nearest: Hits
    xy: np.ndarray

    @property
    def top_topics(self) -> np.ndarray:
        """``topics`` rows, most similar first."""
        return np.argsort(-self.similarities, kind="stable")


def place_vector(corpus: Corpus, vector: np.ndarray, k: int = 10) -> Placement:
    """Predicted topics, nearest papers and map position for a normalised vector ``(dim,)``."""
    v = np.asarray(vector, dtype=np.float32)[None, :]
    similarities = (v @ np.asarray(corpus.tables.topic_embeddings, dtype=np.float32).T)[0]
    idx, sims = place.nearest(v, corpus.embeddings, k)
    xy = place.place_on_map(v, corpus.embeddings, corpus.xy, k=10)[0]
    return Placement(similarities, Hits(idx[0], sims[0], np.zeros(len(idx[0]), dtype=bool)), xy)


def embed_params(corpus: Corpus):
    """The corpus's own embedding settings (manifest ``params.embed``), validated.

    Raises:
        PipelineError: the manifest's settings are not valid (edited by hand, or naming a backend no
            user may choose).
    """
    return config_from_manifest(corpus.manifest, f"corpus {corpus.name!r} ({corpus.folder / 'manifest.json'})").embed


def encode_query(encoder: Encoder, text: str) -> np.ndarray:
    """One normalised float32 vector ``(dim,)`` for ``text``."""
    return np.asarray(encoder.encode([text.strip() or " "]), dtype=np.float32)[0]


def hits_frame(corpus: Corpus, hits: Hits) -> pd.DataFrame:
    """Results as a table: doc_id, title, topic, label, year, venue, score, exact."""
    papers = corpus.papers
    rows = hits.rows
    topic_index = corpus.topic_index[rows]
    labels = np.append(corpus.tables.topics["label"].to_numpy(dtype=object), "outliers")
    return pd.DataFrame(
        {
            "doc_id": papers["doc_id"].to_numpy()[rows],
            "title": papers["title"].to_numpy()[rows],
            "topic": papers["topic"].to_numpy()[rows],
            "label": labels[topic_index],
            "year": papers["year"].to_numpy()[rows],
            "venue": papers["venue"].to_numpy()[rows],
            "score": hits.scores,
            "exact": hits.exact,
        }
    )


# ------------------------------------------------------------------------------------------
# Shared resources (``explorer.ui.caches`` keeps one of each per process)
# ------------------------------------------------------------------------------------------


def open_bm25(corpus: Corpus) -> KeywordIndex:
    """The corpus's BM25 index: the build's ``keyword_index/`` memory-mapped, or for an older build
    one built in memory (topic edits do not change it); its words listed for the phrase check."""
    index = load_bm25(corpus) or build_bm25(corpus)
    if index.shown_text:
        _ = index.words  # listed now (the warm-up opens the index), not by the first rare phrase
    return index


_WARMING: set[tuple[str, str, str]] = set()
_WARM_LOCK = threading.Lock()


def warm(corpus: Corpus, index: Callable[[Corpus], object], encoder: Callable[[Corpus], Encoder]) -> None:
    """Open the keyword index (or, for a build without ``keyword_index/``, build it) and load the
    query encoder in the background, once per build, so that the first search does not wait for
    them. The papers' short ids (every result's reading-list button) are the build's
    (``papers.short_id``); for an older build without them the first page that needs them makes
    them (about a second at a million papers): made here, while the first page's data was still
    being sent, they held Python's lock long enough to delay the map's first visit by about 0.8 s
    (BENCHMARKS.md).

    Args:
        index, encoder: how to get them (the app passes ``explorer.ui.caches``' shared copies, so
            that the searches find them loaded).
    """
    with _WARM_LOCK:
        if corpus.text_key in _WARMING:
            return
        _WARMING.add(corpus.text_key)

    def work() -> None:
        try:
            index(corpus)
            python_space()  # the phrase pattern's whitespace class (about 0.07 s, once per process)
            encode_query(encoder(corpus), "warm up")
        except Exception:  # a search will report the problem to the reader
            with _WARM_LOCK:
                _WARMING.discard(corpus.text_key)

    threading.Thread(target=work, name=f"warm-{corpus.name}", daemon=True).start()


def load_query_encoder(params: EmbedParams, root: Path) -> Encoder:
    """The encoder of embedding settings ``params``, with its model exports in ``root``'s cache."""
    return load_encoder(params, artifacts.cache_dir(Path(root)))


def read_only_params(params, root: Path):
    """``params`` for a server that must not write: the ONNX backends need their export in the
    artifacts cache (made by the build); when it is missing, the torch backend (same model, no
    file written) encodes queries instead."""
    if params.backend not in ("onnx", "onnx-int8"):
        return params
    path = onnx_model_path(params, artifacts.cache_dir(Path(root)))
    return params if path is not None and path.is_file() else dataclasses.replace(params, backend="torch")


def encoder_for(corpus: Corpus, load: Callable[[EmbedParams, Path], Encoder], *, writable: bool = True) -> Encoder:
    """The query encoder of the model the corpus's vectors came from.

    The manifest's ``embedding.model_key`` says which vectors the corpus holds. An encoder a test
    registered for that key (``pipeline.embed.encoders.register_encoder``; product code never registers one)
    is used as is. Otherwise the corpus's own model settings are loaded, after checking that the
    model folder still has the content the corpus was embedded with (``pipeline.embed.embed_model.model_key``).

    Args:
        load: loads an encoder from (settings, artifacts root): :func:`load_query_encoder`, or the
            app's copy loaded once per process (``explorer.ui.caches.encoder_for``).
        writable: False on a read-only server: never write a model export (see ``read_only_params``).

    Raises:
        PipelineError: the manifest's settings are invalid, the model folder is gone, or its content
            changed since the build (queries would not be comparable with the corpus's vectors).
    """
    recorded = corpus.manifest.embedding.model_key
    injected = registered_encoder(recorded)
    if injected is not None:
        return injected
    params = embed_params(corpus)
    current = model_key(params)
    if recorded and recorded != current:
        raise PipelineError(
            f"corpus {corpus.name!r} was embedded with model {params.model!r} as it was then ({recorded}); "
            f"that model now has other content ({current}), so its query vectors would not match the "
            f"corpus's. Rebuild the corpus: python -m pipeline build FILES --name {corpus.name}"
        )
    if not writable:
        params = read_only_params(params, corpus.root)
    return load(params, corpus.root)
