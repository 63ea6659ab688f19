"""Papers added to a keyword index without reading again the papers it holds.

A build that adds papers to a corpus (``pipeline.build.incremental``) keeps every paper it had. Its
keyword index is the previous build's with the new papers' counts joined in: the previous index's
counts (``counts.npy``, ``doc_len.npy``, since ``bm25.COUNTS_VERSION``) are taken as they are, only
the new papers (and any whose title or abstract changed) are tokenised, and the scores are computed
again from all the counts, because every score depends on the corpus's statistics (each word's
idf, the mean length). The result is the index :func:`pipeline.analysis.bm25.build_index` makes of
the whole corpus, array for array (``tests/test_build.py`` compares them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline.analysis import bm25, bm25_pairs
from pipeline.analysis.bm25_scores import Counts, count_dtype
from pipeline.core.background import map_chunks


def previous_counts(folder: Path, n_docs: int):
    """The index in ``folder`` with its counts memory-mapped as ``counts`` and ``doc_len``, or None
    where it cannot be added to: none, one that does not fit ``n_docs`` papers, one made with other
    BM25 parameters, or one before ``bm25.COUNTS_VERSION``."""
    import json

    import bm25s

    index = bm25.load_index(folder, n_docs)
    if index is None or getattr(index, "pairs", None) is None:
        return None
    try:  # the same version of the index and of bm25s (whose arithmetic the scores repeat)
        meta = json.loads((folder / bm25.INDEX_META).read_text(encoding="utf-8"))
        if meta.get("version") != bm25.INDEX_VERSION or meta.get("bm25s") != bm25s.__version__:
            return None
        counts = np.load(folder / bm25.COUNTS_FILE, mmap_mode="r", allow_pickle=False)
        doc_len = np.load(folder / bm25.DOC_LEN_FILE, allow_pickle=False)
    except (OSError, ValueError, TypeError):
        return None
    if counts.shape != index.scores["data"].shape or doc_len.shape != (n_docs,):
        return None
    expected = bm25.parameters()
    if (float(index.k1), float(index.b), index.method) != (expected["k1"], expected["b"], expected["method"]):
        return None
    index.counts, index.doc_len = counts, doc_len
    return index


def update_index(previous, old_rows: np.ndarray, titles, abstracts):
    """The index of a corpus whose papers the index ``previous`` (:func:`previous_counts`) partly holds.

    Args:
        previous: the previous build's index, with its counts.
        old_rows: int ``(n,)``, for each paper of the corpus in row order its row in ``previous``,
            or -1 where ``previous`` does not hold it as it is now (a new paper, or one whose title
            or abstract changed).
        titles, abstracts: the corpus's, in row order (pandas Series or sequences); only those of
            the papers marked -1 are read.

    Returns:
        what ``bm25.build_index(bm25.ShownTexts(titles, abstracts))`` returns.
    """
    from scipy import sparse

    old_rows = np.asarray(old_rows, dtype=np.int64)
    fresh = np.flatnonzero(old_rows < 0)
    texts = bm25.ShownTexts(_rows(titles, fresh), _rows(abstracts, fresh))
    parts = list(map_chunks(bm25.count_tokens, texts, bm25.INDEX_CHUNK, parallel=len(fresh) >= bm25.PARALLEL_MIN_TEXTS))
    old_words = sorted((w for w in previous.vocab_dict if w), key=previous.vocab_dict.__getitem__)
    words = sorted(set(old_words).union(*(part[0] for part in parts)))
    number = {w: i for i, w in enumerate(words)}
    n_old = previous.scores["num_docs"]
    # The old counts by paper (scipy's CSC-to-CSR conversion, a counting sort), words renumbered.
    held = sparse.csc_matrix(
        (previous.counts, previous.scores["indices"], previous.scores["indptr"]), shape=(n_old, len(old_words))
    ).tocsr()
    renumber = np.asarray([number[w] for w in old_words], dtype=np.int32)
    held = sparse.csr_matrix((held.data, renumber[held.indices], held.indptr), shape=(n_old, len(words)))
    added = _added(parts, number, len(fresh))
    # Every paper's counts in the corpus's order: a row of the old ones or of the new ones.
    take = old_rows.copy()
    take[fresh] = n_old + np.arange(len(fresh))
    both = sparse.vstack([held, added], format="csr")
    del held, added
    rows = both[take]
    del both
    used = np.bincount(rows.indices, minlength=len(words)) > 0  # words only dropped papers held go
    if not used.all():
        rows.indices = (np.cumsum(used) - 1).astype(np.int32)[rows.indices]
        words = [w for w, keep in zip(words, used.tolist(), strict=True) if keep]
    new_len = np.concatenate([p[1] for p in parts] or [np.zeros(0, dtype=np.int64)])
    doc_len = np.where(old_rows >= 0, np.asarray(previous.doc_len, dtype=np.int64)[np.maximum(old_rows, 0)], 0)
    doc_len[fresh] = new_len
    pairs = np.empty((len(old_rows), bm25_pairs.BYTES), dtype=np.uint8)
    held_rows = np.flatnonzero(old_rows >= 0)
    pairs[held_rows] = np.asarray(previous.pairs)[old_rows[held_rows]]
    pairs[fresh] = np.concatenate([p[5] for p in parts] or [np.zeros((0, bm25_pairs.BYTES), dtype=np.uint8)])
    counts = Counts(  # the counts stay in their smallest type (score_matrix reads any)
        np.repeat(np.arange(len(old_rows), dtype=np.int32), np.diff(rows.indptr)),
        rows.indices.astype(np.int32, copy=False),
        rows.data,
        doc_len,
    )
    del rows
    return bm25.index_from_counts(counts, {w: i for i, w in enumerate(words)}, pairs)


def _added(parts: list, number: dict, n: int):
    """The new papers' counts by paper (a CSR matrix over the joint vocabulary)."""
    from scipy import sparse

    rows, cols, tfs, offset = [], [], [], 0
    for words, doc_len, row, col, tf, _ in parts:
        rows.append(row.astype(np.int64) + offset)
        cols.append(np.asarray([number[w] for w in words], dtype=np.int32)[col])
        tfs.append(tf)
        offset += len(doc_len)
    row = np.concatenate(rows or [np.zeros(0, dtype=np.int64)])
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=n), out=indptr[1:])
    data = np.concatenate(tfs or [np.zeros(0, dtype=np.int32)])
    data = data.astype(count_dtype(int(data.max(initial=0))))  # as small as the stored counts
    return sparse.csr_matrix(
        (data, np.concatenate(cols or [np.zeros(0, dtype=np.int32)]), indptr), shape=(n, len(number))
    )


def _rows(values, rows: np.ndarray):
    """``values`` at ``rows`` by position (a pandas Series by ``iloc``, reindexed)."""
    if hasattr(values, "iloc"):
        return values.iloc[rows].reset_index(drop=True)
    return [values[i] for i in rows.tolist()]
