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
    the object while it builds the index)."""

    row: np.ndarray | None
    col: np.ndarray | None
    tf: np.ndarray | None
    doc_len: np.ndarray


def score_matrix(counts: Counts, n_vocab: int, params) -> dict:
    """bm25s's score matrix (Lucene's BM25, its ``build_index_from_ids``) from ``counts``, with the
    same float operations in the same order, so the same float32 scores."""
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
    scores = np.empty(len(counts.col), dtype=params.dtype)
    for start in range(0, len(scores), SCORE_BLOCK):  # float64 temporaries a block at a time
        block = slice(start, start + SCORE_BLOCK)
        tf = counts.tf[block].astype(np.float64)  # float32 counts are exact in float64: the same sums
        tfc = length_part[counts.row[block]]
        tfc += tf
        np.divide(tf, tfc, out=tfc)
        np.multiply(idf[counts.col[block]], tfc, out=tfc)  # float32 idf times float64, as bm25s does
        scores[block] = tfc  # rounded to float32 as bm25s's assignment rounds
    # By word, then paper: scipy's CSR-to-CSC conversion, a counting sort in C that keeps each
    # word's papers in row order (the stable sort by word that bm25s's matrix is), in O(entries)
    # and without an int64 permutation; each array is let go once read.
    counts.tf = None
    row_ptr = np.zeros(n_docs + 1, dtype=_index_dtype(len(scores)))
    np.cumsum(np.bincount(counts.row, minlength=n_docs), out=row_ptr[1:])
    counts.row = None
    by_paper = sparse.csr_matrix((scores, counts.col, row_ptr), shape=(n_docs, n_vocab))
    del scores, row_ptr
    counts.col = None
    by_word = by_paper.tocsc()
    del by_paper
    return {
        "data": by_word.data,
        "indices": by_word.indices.astype(params.int_dtype, copy=False),
        "indptr": by_word.indptr.astype(np.int64, copy=False),
        "num_docs": n_docs,
    }


def _index_dtype(entries: int):
    """int32 row pointers where the entries fit (scipy then keeps the int32 word numbers as they
    are, not copied to int64)."""
    return np.int32 if entries < np.iinfo(np.int32).max else np.int64


#: Entries of the score matrix computed at once (its float64 temporaries: 8 MB each).
SCORE_BLOCK = 1 << 20
