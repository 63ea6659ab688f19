"""The exact-phrase check of keyword search: which papers' title or abstract holds the query's words
in order (case and spacing ignored), scanned by Arrow's RE2 on the corpus's own memory-mapped columns,
in pieces on all cores. ``explorer.services.search`` asks it only for the papers it needs.
"""

from __future__ import annotations

import functools
import os
import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from explorer.services.readahead import read_ahead_columns

if TYPE_CHECKING:
    from explorer.state.data import Corpus

#: A query of fewer words is no phrase; the parts of a hyphenated word count ("meta-learning").
MIN_PHRASE_WORDS = 2
_WORD_PARTS = re.compile(r"[\s-]+")
#: Rows per piece of the phrase scan (pieces run on all cores).
PHRASE_PIECE = 32_768
#: Share of a piece's rows asked for above which the phrase scan reads the piece where it lies
#: rather than copying those rows out (BENCHMARKS.md, "The real 1M build again": copying a row costs
#: about 3.5 times scanning it).
PHRASE_SCAN_SHARE = 0.25


def is_phrase(query: str) -> bool:
    """The query has ``MIN_PHRASE_WORDS`` words or more, the parts of a hyphenated word counted: the
    tokeniser ranks "meta-learning" by "meta" and "learning" apart, so the papers holding it as
    written come first, as those holding "meta learning" do for that query."""
    return len([part for part in _WORD_PARTS.split(query) if part]) >= MIN_PHRASE_WORDS


def phrase_mask(corpus: Corpus, query: str) -> np.ndarray:
    """Papers whose title or abstract contains ``query`` verbatim (case and spacing ignored)."""
    return phrase_rows(corpus, np.arange(corpus.n_papers), query)


def phrase_rows(corpus: Corpus, rows: np.ndarray, query: str) -> np.ndarray:
    """bool ``(len(rows),)``: the papers ``rows`` whose title or abstract contains ``query`` verbatim
    (case and spacing ignored); all False for a query that is no phrase (:func:`is_phrase`)."""
    words = query.split()
    rows = np.asarray(rows, dtype=np.int64)
    if not is_phrase(query) or not len(rows):
        return np.zeros(len(rows), dtype=bool)
    every = len(rows) == corpus.n_papers and bool(np.all(rows == np.arange(len(rows))))
    papers = corpus.papers  # a subset's pages are asked for together first (a cold disk reads them at once)
    chosen = None if every else read_ahead_columns((papers["abstract"], papers["title"]), rows)
    return _contains_phrase(papers["abstract"], words, chosen) | _contains_phrase(papers["title"], words, chosen)


@functools.cache
def python_space() -> str:
    """Python's ``\\s`` (every character ``str.isspace``) as an RE2 character class."""
    spaces = [i for i in range(0x110000) if chr(i).isspace()]
    runs: list[list[int]] = []
    for i in spaces:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return "[" + "".join(f"\\x{{{a:x}}}" + (f"-\\x{{{b:x}}}" if b > a else "") for a, b in runs) + "]+"


def _contains_phrase(column: pd.Series, words: list[str], rows: np.ndarray | None = None) -> np.ndarray:
    """bool ``(len(rows),)`` (or one per paper, ``rows`` None): ``column``'s value of each of ``rows``
    contains ``words`` in order, separated by any whitespace, case ignored. Matched by Arrow's RE2
    on the column's own (memory-mapped) buffers, about 13 times faster than pandas'
    ``str.contains(case=False)``, with the same whitespace (Python's ``\\s``); other columns, or a
    pattern RE2 refuses, go through pandas."""
    import pyarrow.compute as pc
    from pyarrow import ArrowInvalid

    arrow = getattr(column.array, "_pa_array", None)
    if arrow is not None:
        pattern = python_space().join(re.escape(w) for w in words)

        def match(piece) -> np.ndarray:
            hit = pc.match_substring_regex(piece, pattern, ignore_case=True)
            return hit.fill_null(False).to_numpy(zero_copy_only=False).astype(bool, copy=False)

        try:
            pieces = _pieces(arrow, rows)
            out = np.zeros(len(column) if rows is None else len(rows), dtype=bool)
            if len(pieces) == 1:
                hits = [match(pieces[0][0])]
            else:  # RE2 scans the pieces on all cores (Arrow frees the GIL)
                with ThreadPoolExecutor(max_workers=max(1, min(len(pieces), os.cpu_count() or 1))) as pool:
                    hits = list(pool.map(match, [piece for piece, _, _ in pieces]))
            for (_, place, pick), hit in zip(pieces, hits, strict=True):
                out[place] = hit if pick is None else hit[pick]
            return out
        except (ArrowInvalid, NotImplementedError):
            pass
    pattern = r"\s+".join(re.escape(w) for w in words)
    chosen = column if rows is None else column.iloc[rows]
    return chosen.str.contains(pattern, case=False, regex=True).fillna(False).to_numpy(dtype=bool)


def _pieces(arrow, rows: np.ndarray | None) -> list[tuple]:
    """``arrow``'s values (of ``rows``, or all) in pieces of at most ``PHRASE_PIECE``, each with where
    its values go in the result (a slice, or positions in ``rows``) and which of its values those
    are (None: all of them, in order).

    Rows are read chunk by chunk: a take on the whole chunked array would first join its chunks,
    reading every abstract of a memory-mapped corpus (about 1 GB at a million papers) to check a
    few hundred. Within a chunk, each stretch of ``PHRASE_PIECE`` rows is scanned where it lies
    (no copy) when at least ``PHRASE_SCAN_SHARE`` of its rows are asked for, and only the rows asked
    for are copied out of it otherwise: copying a row costs a few times what scanning it does, so a
    rare phrase that makes the search check most of a million papers costs one scan, not a copy of
    every abstract."""
    pieces: list[tuple] = []
    if rows is not None:  # read in row order: positions in ``rows`` by row, and where each chunk's begin
        by_row = np.argsort(rows, kind="stable")
        sorted_rows = rows[by_row]
        starts = np.cumsum([0, *(len(chunk) for chunk in arrow.chunks)])
        cuts = np.searchsorted(sorted_rows, starts)
    start = 0
    for c, chunk in enumerate(arrow.chunks):
        if rows is None:
            for i in range(0, len(chunk), PHRASE_PIECE):
                stop = min(i + PHRASE_PIECE, len(chunk))
                pieces.append((chunk.slice(i, stop - i), slice(start + i, start + stop), None))
        else:
            inside = by_row[cuts[c] : cuts[c + 1]]
            local = sorted_rows[cuts[c] : cuts[c + 1]] - start
            bounds = np.searchsorted(local, np.arange(0, len(chunk) + PHRASE_PIECE, PHRASE_PIECE))
            for n, i in enumerate(range(0, len(chunk), PHRASE_PIECE)):
                lo, hi = bounds[n], bounds[n + 1]
                if lo == hi:
                    continue
                stop = min(i + PHRASE_PIECE, len(chunk))
                if hi - lo >= PHRASE_SCAN_SHARE * (stop - i):
                    pieces.append((chunk.slice(i, stop - i), inside[lo:hi], local[lo:hi] - i))
                else:
                    pieces.append((chunk.take(local[lo:hi]), inside[lo:hi], None))
        start += len(chunk)
    return pieces
