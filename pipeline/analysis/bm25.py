"""Keyword search's tokeniser and BM25 index, shared by the build, the app and the offline export.

The build writes the index (``build_index``, ``save_index``) into the build folder as
``keyword_index/``: bm25s's own files (the score matrix as three ``.npy`` arrays, the vocabulary
and parameters as JSON) and ``meta.json`` naming this module's ``INDEX_VERSION``, the tokeniser and
the number of papers. The app reads it memory-mapped (``load_index``) and ranks with ``bm25s``
(``explorer.services.search``): a query touches only its terms' columns, never the papers' texts. The offline export has no Python, so it ships
the index's statistics (``export_index``) and scores queries in JavaScript with the same
tokeniser, the same BM25 variant and the same float32 arithmetic, so that a query ranks the same
papers in the same order in both (``tests/test_export.py`` checks it on real queries).

The tokeniser is bm25s's: lower case, tokens are runs of two or more word characters (Python's
``\\w``: letters, digits, underscore), English stop words removed, no stemming.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from pipeline.analysis import bm25_pairs, bm25_tokens
from pipeline.analysis.bm25_scores import Counts, score_matrix
from pipeline.core.background import map_chunks
from pipeline.formats.blobs import pack, unpack

if TYPE_CHECKING:
    import pyarrow as pa

STOPWORDS = "en"
TOKEN_PATTERN = r"(?u)\b\w\w+\b"


def tokenize(texts: list[str]) -> list[list[str]]:
    """bm25s's tokens of each text (the app's keyword search and its index use exactly these)."""
    import bm25s

    return bm25s.tokenize(
        texts, lower=True, token_pattern=TOKEN_PATTERN, stopwords=STOPWORDS, return_ids=False, show_progress=False
    )


#: Version of ``keyword_index/``: bump it when the tokeniser or the index's files change. Version 2
#: indexes each paper's title and abstract as the app shows them (``index_texts``), so that its
#: postings can narrow the exact-phrase check (``phrase_candidates``); version 1 indexed the cleaned
#: ``papers.model_text``. Version 3 adds each paper's signature of adjacent words (``pairs.npy``,
#: ``pipeline.analysis.bm25_pairs``), which narrows the check further. Version 4 adds the counts
#: behind the scores (``counts.npy``, each entry's count in the score matrix's order, and
#: ``doc_len.npy``, each paper's tokens), so that a build adding papers updates the index without
#: reading the papers it holds again (``pipeline.analysis.bm25_update``). The app ranks with any of
#: them (``READABLE_VERSIONS``), narrows the phrase check from version 2 on and by the pairs from
#: version 3 on; an index of any other version is not read (the app builds one in memory).
INDEX_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)
SHOWN_TEXT_VERSION = 2
PAIRS_VERSION = 3
COUNTS_VERSION = 4
INDEX_META = "meta.json"
COUNTS_FILE = "counts.npy"
DOC_LEN_FILE = "doc_len.npy"


#: The letters outside ASCII that the exact-phrase check's case folding (RE2's, or Python's in its
#: fallback) matches with an ASCII letter and that lower-case to something else: indexed as that
#: letter (the Kelvin sign lower-cases to ``k`` by itself). Checked over all of Unicode in
#: tests/test_bm25.py.
ASCII_FOLDS = {"\u017f": "s", "\u0131": "i", "\u0130": "I"}


def index_texts(titles: Sequence, abstracts: Sequence) -> list[str]:
    """What keyword search indexes for each paper: its title and abstract as the app shows them (and
    checks for the exact phrase), a line each; None or NaN counts as empty; the letters of
    ``ASCII_FOLDS`` as the ASCII letters the phrase check matches them with."""
    texts = [
        f"{t if isinstance(t, str) else ''}\n{a if isinstance(a, str) else ''}"
        for t, a in zip(titles, abstracts, strict=True)
    ]
    for letter, ascii_letter in ASCII_FOLDS.items():  # str.replace scans fast and copies only a text that has one
        texts = [text.replace(letter, ascii_letter) for text in texts]
    return texts


class ShownTexts(Sequence):
    """:func:`index_texts` of papers' titles and abstracts (pandas Series or sequences of the same
    length), made a slice at a time as :func:`build_index` sends its chunks out: the build never
    holds every paper's joined text at once (about 1.3 GB of Python strings at a million papers)."""

    def __init__(self, titles, abstracts):
        if len(titles) != len(abstracts):
            raise ValueError(f"{len(titles)} titles for {len(abstracts)} abstracts")
        self.titles, self.abstracts = titles, abstracts

    def __len__(self) -> int:
        return len(self.titles)

    def __getitem__(self, key):
        if isinstance(key, slice):
            return index_texts(_positional(self.titles, key), _positional(self.abstracts, key))
        return self[key : key + 1][0] if key >= 0 else self[len(self) + key]


def _positional(values, key: slice):
    """``values[key]`` by position (a pandas Series by ``iloc``)."""
    return values.iloc[key] if hasattr(values, "iloc") else values[key]


#: Texts from which the index's tokens are found in worker processes, in chunks of
#: :data:`INDEX_CHUNK` (``pipeline.core.background.map_chunks``).
PARALLEL_MIN_TEXTS = 10_000
INDEX_CHUNK = 5_000


def build_index(texts: Sequence[str]):
    """A ``bm25s.BM25`` index of ``texts`` (``index_texts`` of the papers in row order, or
    :class:`ShownTexts` to make them a chunk at a time; None counts as an empty text), with each
    text's signature of adjacent words as its attribute ``pairs`` (``bm25_pairs.signatures``). The
    app's on-demand index and the build's artifact are both made here.

    It is bm25s's own index of ``tokenize(texts)`` with the words numbered in sorted order (bm25s
    numbers them in a set's order, which changes with Python's string hashing from one process to
    the next; sorted, the index's files are the same on every build), made faster: from
    :data:`PARALLEL_MIN_TEXTS` texts on the tokens are found in worker processes, each chunk's
    words counted per paper there, and the scores computed on arrays of (paper, word, count)
    rather than paper by paper (tests/test_bm25.py compares every array with bm25s's).
    """
    parts = list(map_chunks(count_tokens, texts, INDEX_CHUNK, parallel=len(texts) >= PARALLEL_MIN_TEXTS))
    vocab = {word: i for i, word in enumerate(sorted(set().union(*(part[0] for part in parts))))}
    entries = sum(len(part[2]) for part in parts)
    counts = Counts(
        np.empty(entries, dtype=np.int32),
        np.empty(entries, dtype=np.int32),
        np.empty(entries, dtype=np.int32),
        np.concatenate([part[1] for part in parts] or [np.zeros(0, dtype=np.int64)]),
    )
    pairs = np.concatenate([part[5] for part in parts] or [np.zeros((0, bm25_pairs.BYTES), dtype=np.uint8)])
    at = offset = 0
    while parts:  # each chunk copied into place, then let go
        words, doc_len, row, col, tf, _ = parts.pop(0)
        end = at + len(row)
        np.add(row, offset, out=counts.row[at:end])
        counts.col[at:end] = np.asarray([vocab[w] for w in words], dtype=np.int32)[col]
        counts.tf[at:end] = tf
        at, offset = end, offset + len(doc_len)
    return index_from_counts(counts, vocab, pairs)


def index_from_counts(counts: Counts, vocab: dict, pairs: np.ndarray):
    """A ``bm25s.BM25`` index of a corpus's counts (``vocab``: each word's number, the words in
    sorted order), with the papers' signatures as ``pairs`` and the counts behind the scores as
    ``counts`` and ``doc_len`` (what :func:`save_index` writes). The counts' arrays are let go."""
    index = _array_bm25()()
    index.index(_Corpus(ids=counts, vocab=vocab), show_progress=False)
    index.__class__ = index.__class__.__bases__[0]  # built: a plain bm25s.BM25 from here on
    index.pairs, index.counts, index.doc_len = pairs, counts.by_word, counts.doc_len
    counts.by_word = None
    return index


def count_tokens(texts: list[str]) -> tuple:
    """One chunk's tokens, counted (a worker's task): ``(words, doc_len, row, col, tf, pairs)``, the
    chunk's words in first-seen order, int64 tokens per text, one entry per distinct word of each
    text, in text order then word order: int32 text, int32 word (into ``words``), int32 count; and
    each text's signature of adjacent words (``bm25_pairs.signatures``).

    The tokens are :func:`tokenize`'s (tests/test_bm25.py compares them on any text), found by
    ``bm25_tokens.words`` without bm25s's per-token bookkeeping, which took half its time."""
    from bm25s.stopwords import STOPWORDS_EN

    if STOPWORDS != "en":
        raise RuntimeError(f"count_tokens knows bm25s's English stop words only, not {STOPWORDS!r}")
    stop, numbers = frozenset(STOPWORDS_EN) | bm25_tokens.SINGLE, {}
    texts = [t if isinstance(t, str) else "" for t in texts]
    found = (bm25_tokens.words(text.lower(), _TOKEN) for text in texts)
    docs = [[numbers.setdefault(w, len(numbers)) for w in ws if w not in stop] for ws in found]
    doc_len = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
    flat = np.fromiter(chain.from_iterable(docs), dtype=np.int64, count=int(doc_len.sum()))
    width = max(len(numbers), 1)
    keys, tf = np.unique(np.repeat(np.arange(len(docs), dtype=np.int64), doc_len) * width + flat, return_counts=True)
    words = list(numbers)
    return (
        words,
        doc_len,
        (keys // width).astype(np.int32),
        (keys % width).astype(np.int32),
        tf.astype(np.int32),
        bm25_pairs.signatures(words, flat, doc_len),
    )


_TOKEN = re.compile(TOKEN_PATTERN)


class _Corpus(NamedTuple):
    """What ``bm25s.BM25.index`` reads as an already tokenised corpus (``ids`` and ``vocab``)."""

    ids: Counts
    vocab: dict


_ARRAY_BM25 = None


def _array_bm25():
    """``bm25s.BM25`` whose index is built from a corpus's counts (``bm25_scores.Counts``; the
    class is made on first use: bm25s is imported only when an index is built or read)."""
    global _ARRAY_BM25
    if _ARRAY_BM25 is None:
        import bm25s

        class ArrayBM25(bm25s.BM25):
            def build_index_from_ids(
                self, unique_token_ids, corpus_token_ids, show_progress=True, leave_progress=False
            ):
                self.nonoccurrence_array = None  # as bm25s sets it for BM25 'lucene'
                return score_matrix(corpus_token_ids, len(unique_token_ids), self)

        _ARRAY_BM25 = ArrayBM25
    return _ARRAY_BM25


def _meta(n_docs: int) -> dict:
    import bm25s

    return {
        "version": INDEX_VERSION,
        "bm25s": bm25s.__version__,
        "token_pattern": TOKEN_PATTERN,
        "stopwords": STOPWORDS,
        "text": "title and abstract as shown",
        "n_docs": int(n_docs),
    }


def save_index(index, folder: Path, n_docs: int) -> None:
    """Write ``index`` as ``folder`` (a new folder; written under a temporary name, then renamed).

    Args:
        index: from ``build_index``.
        folder: e.g. ``build_folder / schema.KEYWORD_INDEX``.
        n_docs: papers indexed (the reader checks it against the corpus).
    """
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    pairs, counts, doc_len = (getattr(index, name, None) for name in ("pairs", "counts", "doc_len"))
    if pairs is None or pairs.shape != (n_docs, bm25_pairs.BYTES) or counts is None or doc_len is None:
        raise ValueError("an index is saved with its signatures and its counts, as build_index makes it")
    index.save(tmp, allow_pickle=False, show_progress=False)
    np.save(tmp / bm25_pairs.FILE, np.asarray(pairs), allow_pickle=False)
    np.save(tmp / COUNTS_FILE, np.asarray(counts), allow_pickle=False)
    np.save(tmp / DOC_LEN_FILE, np.asarray(doc_len, dtype=np.int64), allow_pickle=False)
    (tmp / INDEX_META).write_text(json.dumps(_meta(n_docs), indent=1), encoding="utf-8")
    tmp.rename(folder)


def index_problem(folder: Path, n_docs: int) -> str | None:
    """Why the index in ``folder`` cannot serve a corpus of ``n_docs`` papers, or None if it can."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / INDEX_META).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "this build has no keyword index (built before the index was part of the build)"
    except (OSError, ValueError) as exc:
        return f"its keyword index is unreadable ({exc})"
    expected = _meta(n_docs)
    if meta.get("version") not in READABLE_VERSIONS:
        return f"its keyword index does not fit (version: {meta.get('version')!r}, expected {INDEX_VERSION!r})"
    for key in ("token_pattern", "stopwords", "n_docs"):
        if meta.get(key) != expected[key]:
            return f"its keyword index does not fit ({key}: {meta.get(key)!r}, expected {expected[key]!r})"
    return None


def indexes_shown_text(folder: Path) -> bool:
    """Whether the index in ``folder`` indexes ``index_texts`` (``SHOWN_TEXT_VERSION`` or later), so
    that its postings may narrow the exact-phrase check."""
    try:
        version = json.loads((Path(folder) / INDEX_META).read_text(encoding="utf-8")).get("version", 0)
        return int(version) >= SHOWN_TEXT_VERSION
    except (OSError, ValueError, TypeError):
        return False


def load_index(folder: Path, n_docs: int):
    """The index saved in ``folder``, its score arrays memory-mapped (read-only), or None when
    there is none or it does not fit (``index_problem``): the caller then builds one.
    """
    import bm25s

    if index_problem(folder, n_docs) is not None:
        return None
    try:
        index = bm25s.BM25.load(folder, mmap=True, allow_pickle=False, show_progress=False)
    except (OSError, ValueError):
        return None
    if index.scores.get("num_docs") != n_docs:
        return None
    index.pairs = _load_pairs(folder, n_docs)
    return index


def _load_pairs(folder: Path, n_docs: int) -> np.ndarray | None:
    """The index's signatures of adjacent words, memory-mapped, or None (an index before
    ``PAIRS_VERSION``, or a file that does not fit)."""
    try:
        if json.loads((folder / INDEX_META).read_text(encoding="utf-8")).get("version", 0) < PAIRS_VERSION:
            return None
        pairs = np.load(folder / bm25_pairs.FILE, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, TypeError):
        return None
    return pairs if pairs.shape == (n_docs, bm25_pairs.BYTES) and pairs.dtype == np.uint8 else None


def parameters() -> dict:
    """The BM25 variant and constants the app's index uses (``bm25s.BM25()``'s defaults)."""
    import bm25s
    from bm25s.stopwords import STOPWORDS_EN

    index = bm25s.BM25()
    if index.method != "lucene" or (index.idf_method or index.method) != "lucene":
        raise RuntimeError(f"the export scores BM25 'lucene' only; bm25s uses {index.method!r}")
    return {"k1": float(index.k1), "b": float(index.b), "method": "lucene", "stopwords": sorted(STOPWORDS_EN)}


def export_index(texts: Sequence[str]):
    """The statistics the export's JavaScript needs to score BM25 exactly as bm25s does.

    Args:
        texts: ``index_texts`` of the papers, in row order, as the app indexes them.

    Returns:
        An ``explorer.services.mapview.Blob`` of kind ``bm25`` with arrays ``doc_len`` (uint32 tokens per
        paper, repeats counted), ``term_ptr`` (uint32, term ``t``'s postings are
        ``[term_ptr[t], term_ptr[t + 1])``), ``post_doc`` (uint32 paper rows, each term's rows
        ascending and stored as differences from the previous one) and ``post_tf`` (uint16
        occurrences); the header holds ``vocab``, ``n``, ``avgdl`` and ``parameters()``.
    """
    tokens = tokenize([t or "" for t in texts])
    vocab: dict[str, int] = {}
    term_ids, doc_ids = [], []
    doc_len = np.zeros(len(tokens), dtype=np.uint32)
    for row, toks in enumerate(tokens):
        doc_len[row] = len(toks)
        ids = [vocab.setdefault(t, len(vocab)) for t in toks]
        term_ids.append(np.asarray(ids, dtype=np.int64))
        doc_ids.append(np.full(len(ids), row, dtype=np.int64))
    terms = np.concatenate(term_ids) if term_ids else np.zeros(0, dtype=np.int64)
    docs = np.concatenate(doc_ids) if doc_ids else np.zeros(0, dtype=np.int64)
    pairs, tf = np.unique(terms * max(len(tokens), 1) + docs, return_counts=True)  # sorted by term, then row
    term = pairs // max(len(tokens), 1)
    row = pairs % max(len(tokens), 1)
    ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=len(vocab)), out=ptr[1:])
    delta = row.copy()
    starts = np.zeros(len(row), dtype=bool)
    starts[ptr[:-1][ptr[:-1] < len(row)]] = True
    delta[1:] = np.where(starts[1:], row[1:], row[1:] - row[:-1])
    words = [None] * len(vocab)
    for word, i in vocab.items():
        words[i] = word
    return pack(
        "bm25",
        {
            "doc_len": doc_len,
            "term_ptr": ptr.astype(np.uint32),
            "post_doc": delta.astype(np.uint32),
            "post_tf": np.minimum(tf, 65535).astype(np.uint16),
        },
        n=len(tokens),
        avgdl=float(doc_len.mean()) if len(doc_len) else 0.0,
        vocab=words,
        **parameters(),
    )


def scores(blob_data: bytes, query: str) -> np.ndarray:
    """float32 ``(papers,)`` BM25 scores of ``query`` from an exported index, computed as the
    export's JavaScript computes them (the reference the tests hold both bm25s and the page to)."""
    header, arrays = unpack(blob_data)
    vocab = {w: i for i, w in enumerate(header["vocab"])}
    n, avgdl, k1, b = header["n"], header["avgdl"], header["k1"], header["b"]
    out = np.zeros(n, dtype=np.float32)
    ptr, post_doc, post_tf, doc_len = arrays["term_ptr"], arrays["post_doc"], arrays["post_tf"], arrays["doc_len"]
    for token in tokenize([query])[0]:
        t = vocab.get(token)
        if t is None:
            continue
        lo, hi = int(ptr[t]), int(ptr[t + 1])
        rows = np.cumsum(post_doc[lo:hi].astype(np.int64))
        df = hi - lo
        idf = np.float32(np.log(1 + (n - df + 0.5) / (df + 0.5)))
        tf = post_tf[lo:hi].astype(np.float64)
        c = k1 * ((1 - b) + b * doc_len[rows].astype(np.float64) / avgdl)
        out[rows] += (np.float64(idf) * (tf / (c + tf))).astype(np.float32)
    return out


#: A word narrows the exact-phrase check only when it is ASCII letters and digits (two or more).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9]{2,}")
_WORD_PARTS = re.compile(r"[\s-]+")  # between a phrase's words: whitespace, or a hyphen ("meta-learning")
#: A first or last word that ends or begins more of the index's words than this does not narrow the
#: check (their postings would cost more to read than they save).
AFFIX_WORDS_MAX = 64


def vocabulary(index) -> pa.Array:
    """The words of ``index`` (a ``bm25s.BM25``) as an Arrow array, each at its id."""
    import pyarrow as pa

    words = [""] * len(index.vocab_dict)
    for word, i in index.vocab_dict.items():
        words[i] = word
    return pa.array(words, type=pa.string())


def phrase_candidates(index, words_by_id: pa.Array, query: str) -> np.ndarray | None:
    """bool ``(papers,)``: every paper whose title or abstract can hold ``query`` as the app's exact
    phrase, found from the index's postings alone (a superset); None when no word of the query
    narrows it. Only for an index of ``index_texts`` (``indexes_shown_text``).

    The phrase check (``explorer.services.phrase_scan.phrase_rows``) matches the words in order, any
    whitespace between them, case ignored, anywhere in the text: the first word may end a longer
    word and the last begin one; a hyphenated word's parts are words too ("meta-learning"). So in
    the text a middle word stands between whitespace or hyphens, and the tokeniser (lower case,
    runs of two or more word characters) makes it a token of its own; the first word ends a run and
    the last begins one. A word narrows the set only where that argument
    holds exactly: it is ASCII letters and digits (which the check's case folding matches only with
    ASCII and the letters ``index_texts`` indexes as ASCII), and no stop word (which the tokeniser
    drops) could be the run that holds it. Other words are skipped, which only keeps more papers.
    With the index's signatures of adjacent words (``pairs``, version 3), a paper must also hold
    each pair of adjacent tokens the phrase makes (``bm25_pairs``), where more than
    ``bm25_pairs.MIN_ROWS`` papers hold its words.

    Args:
        index: a ``bm25s.BM25`` of ``index_texts``.
        words_by_id: ``vocabulary(index)``.
    """
    from bm25s.stopwords import STOPWORDS_EN

    words = [part for part in _WORD_PARTS.split(query) if part]  # a hyphen parts tokens as whitespace does
    if len(words) < 2:
        return None
    n = int(index.scores["num_docs"])
    indptr, indices = index.scores["indptr"], index.scores["indices"]
    affix = _affix_ids(words_by_id)
    lists = []
    for place, word in enumerate(words):
        if not _PLAIN_WORD.fullmatch(word):
            continue
        word = word.lower()
        if 0 < place < len(words) - 1:
            if word in STOPWORDS_EN:
                continue
            ids = np.array([index.vocab_dict[word]] if word in index.vocab_dict else [], dtype=np.int64)
        else:
            first = place == 0
            if any(stop.endswith(word) if first else stop.startswith(word) for stop in STOPWORDS_EN):
                continue
            ids = affix("ends" if first else "starts", word)
            if len(ids) > AFFIX_WORDS_MAX:
                continue
        if not len(ids):  # no paper holds this word where the phrase needs it
            return np.zeros(n, dtype=bool)
        lists.append(ids)
    if not lists:
        return None
    out = None
    for ids in sorted(lists, key=lambda ids: int((indptr[ids + 1] - indptr[ids]).sum())):  # rarest first
        holds = np.zeros(n, dtype=bool)
        for t in ids:
            holds[indices[indptr[t] : indptr[t + 1]]] = True
        out = holds if out is None else out & holds
    signature = getattr(index, "pairs", None)
    if signature is not None and int(out.sum()) > bm25_pairs.MIN_ROWS:  # and those holding the words together
        variants = bm25_pairs.token_variants(index, words_by_id, affix, query)
        if variants is None:
            return np.zeros(n, dtype=bool)
        rows = np.flatnonzero(out)
        out[rows[~bm25_pairs.keep_pairs(signature, rows, variants)]] = False
    return out


def _affix_ids(words_by_id: pa.Array):
    """``ids(kind, run)``: the ids of the index's words that end (``"ends"``) or start (``"starts"``)
    with ``run``, each looked up once per query (a scan of every word)."""
    import pyarrow.compute as pc

    @functools.cache
    def ids(kind: str, run: str) -> np.ndarray:
        hit = (pc.ends_with if kind == "ends" else pc.starts_with)(words_by_id, run)
        return np.flatnonzero(hit.to_numpy(zero_copy_only=False))

    return ids
