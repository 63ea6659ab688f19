"""The keyword index's score matrix: Lucene's BM25 as bm25s computes it, on arrays of (paper,
word, count) rather than paper by paper (``pipeline.analysis.bm25.build_index`` counts them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Counts:
    """Every (paper, word) pair of a corpus with its count, papers ascending, and tokens per paper.

    Mutable so that :func:`score_matrix` can let each array go once it has read it (bm25s holds
    the object while it builds the index); it leaves the counts in the score matrix's order (by
    word, then paper) as ``by_word``, which the index stores so that papers can be added to it
    later without reading the others again (``pipeline.analysis.bm25_update``)."""

    row: np.ndarray | None
    col: np.ndarray | None
    tf: np.ndarray | None
    doc_len: np.ndarray
    by_word: np.ndarray | None = None


def score_matrix(counts: Counts, n_vocab: int, params) -> dict:
    """bm25s's score matrix (Lucene's BM25, its ``build_index_from_ids``) from ``counts``, with the
    same float operations in the same order, so the same float32 scores; the counts in the
    matrix's order are left in ``counts.by_word``."""
    if params.method != "lucene" or params.idf_method != "lucene":
        raise RuntimeError(f"the index is built for BM25 'lucene' only; bm25s uses {params.method!r}")
    from scipy import sparse

    n_docs = len(counts.doc_len)
    avg_doc_len = counts.doc_len.mean()
    values, which = np.unique(np.bincount(counts.col, minlength=n_vocab), return_inverse=True)
    # Each word's idf in Python floats, as bm25s computes it (once per distinct document frequency).
    idf = np.array([math.log(1 + (n_docs - v + 0.5) / (v + 0.5)) if v else 0.0 for v in values.tolist()])
    idf = idf.astype(params.dtype)[which]
    # bm25s, paper by paper: tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf), float32 counts and the
    # float64 scalar of the paper's length; here the scalar per paper, then per entry in place.
    length_part = params.k1 * ((1 - params.b) + params.b * counts.doc_len.astype(np.float64) / avg_doc_len)
    # By word, then paper: scipy's CSR-to-CSC conversion of the counts (in the smallest type that
    # holds them), a counting sort in C that keeps each word's papers in row order (the stable sort
    # by word that bm25s's matrix is), in O(entries) and without an int64 permutation; each array
    # is let go once read. The scores are then computed entry by entry in that order: the same
    # operations on the same values as paper by paper, so the same floats.
    row_ptr = np.zeros(n_docs + 1, dtype=_index_dtype(len(counts.col)))
    np.cumsum(np.bincount(counts.row, minlength=n_docs), out=row_ptr[1:])
    counts.row = None
    tf = counts.tf.astype(count_dtype(int(counts.tf.max(initial=0))), copy=False)
    counts.tf = None
    by_paper = sparse.csr_matrix((tf, counts.col, row_ptr), shape=(n_docs, n_vocab))
    del tf, row_ptr
    counts.col = None
    by_word = by_paper.tocsc()
    del by_paper
    scores = np.empty(len(by_word.data), dtype=params.dtype)
    for start in range(0, len(scores), SCORE_BLOCK):  # float64 temporaries a block at a time
        block = slice(start, start + SCORE_BLOCK)
        tf = by_word.data[block].astype(np.float64)  # counts are exact in float64: the same sums
        tfc = length_part[by_word.indices[block]]
        tfc += tf
        np.divide(tf, tfc, out=tfc)
        np.multiply(idf[_entry_words(by_word.indptr, start, start + len(tf))], tfc, out=tfc)
        scores[block] = tfc  # float32 idf times float64, rounded to float32 as bm25s's assignment rounds
    counts.by_word = by_word.data
    return {
        "data": scores,
        "indices": by_word.indices.astype(params.int_dtype, copy=False),
        "indptr": by_word.indptr.astype(np.int64, copy=False),
        "num_docs": n_docs,
    }


def _entry_words(indptr: np.ndarray, start: int, end: int) -> np.ndarray:
    """The word (column) of each entry ``start`` to ``end`` of a CSC matrix with ``indptr``."""
    first = int(np.searchsorted(indptr, start, side="right")) - 1
    last = int(np.searchsorted(indptr, end - 1, side="right")) - 1
    bounds = np.clip(indptr[first : last + 2], start, end)
    return np.repeat(np.arange(first, last + 1), np.diff(bounds))


def count_dtype(most: int):
    """The smallest unsigned type that holds counts up to ``most``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if most <= np.iinfo(dtype).max:
            return dtype
    return np.uint64


def _index_dtype(entries: int):
    """int32 row pointers where the entries fit (scipy then keeps the int32 word numbers as they
    are, not copied to int64)."""
    return np.int32 if entries < np.iinfo(np.int32).max else np.int64


#: Entries of the score matrix computed at once (its float64 temporaries: 8 MB each).
SCORE_BLOCK = 1 << 20
