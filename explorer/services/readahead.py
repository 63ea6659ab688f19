"""Ask the kernel to read some rows of memory-mapped text columns ahead, all at once.

A keyword search checks its best few hundred papers for the exact phrase by copying their titles
and abstracts out of ``papers.arrow``, which the app memory-maps. Right after a server start on a
cold disk each of those rows is a page the kernel has not read yet, and copying them one after
another waits for each read in turn (the first search after a cold start took 1.27-1.39 s on the
real million-paper build, 0.5-1.1 s on the grown one; BENCHMARKS.md, "The first keyword search
after a cold start"). :func:`read_ahead` tells the kernel first which pages will be read
(``madvise(MADV_WILLNEED)``: it starts reading them together and returns at once), in two steps,
because where a row's text lies is itself written in the column's offsets. Warm, it costs a few
hundred system calls; where the call is missing (not Linux or macOS), it does nothing. It never
changes what is read: only when (``pipeline.core.pages`` makes the calls).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.core import pages

#: Rows above which no hint is given: the phrase check's rounds stop at 1/32 of the corpus
#: (31,250 rows at a million papers) and every round up to there gets its hints (with 8,192 as
#: the limit, a later round of 14,336 rows read its pages one at a time: 0.72 s against 0.22 s,
#: BENCHMARKS.md); a check of every remaining match (hundreds of thousands of rows) scans
#: stretches in place, which the kernel's own sequential read-ahead serves.
MAX_ROWS = 65_536


def _offsets(chunk) -> tuple | None:
    """``(offsets buffer, its dtype, data buffer's address, chunk.offset)`` of a string or
    large_string array, or None for any other layout."""
    import pyarrow as pa

    if pa.types.is_large_string(chunk.type):
        dtype = np.int64
    elif pa.types.is_string(chunk.type):
        dtype = np.int32
    else:
        return None
    buffers = chunk.buffers()
    if len(buffers) != 3 or buffers[1] is None or buffers[2] is None:
        return None
    return buffers[1], dtype, buffers[2].address, chunk.offset


def read_ahead(pieces: Sequence[tuple[object, np.ndarray]]) -> bool:
    """Hint that the rows of each ``(chunk, rows)`` (positions in an Arrow string or large_string
    array) are about to be read: first the pages of their offsets, then, once those are read, the
    pages of their text. Returns whether any hint was given."""
    if pages.madvise() is None:
        return False
    found = []
    for chunk, rows in pieces:
        layout = _offsets(chunk)
        rows = np.asarray(rows, dtype=np.int64)
        if layout is None or not len(rows) or len(rows) > MAX_ROWS:
            continue
        offsets, dtype, data_address, offset = layout
        at = (rows + offset) * np.dtype(dtype).itemsize + offsets.address
        found.append((offsets, dtype, data_address, rows + offset))
        pages.advise(pages.page_ranges(at, at + 2 * np.dtype(dtype).itemsize))
    for offsets, dtype, data_address, positions in found:  # the offsets' pages arrive together
        values = np.frombuffer(offsets, dtype=dtype)
        starts, ends = values[positions].astype(np.int64), values[positions + 1].astype(np.int64)
        pages.advise(pages.page_ranges(data_address + starts, data_address + ends))
    return bool(found)


def read_ahead_columns(columns: Sequence, rows: np.ndarray) -> np.ndarray:
    """:func:`read_ahead` of ``rows`` (positions) in each of ``columns`` (pandas Series backed by
    Arrow; others are left alone), all columns' offsets first, then all their texts; returns
    ``rows``, so that the caller can read them next."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows) or len(rows) > MAX_ROWS:
        return rows
    pieces = []
    for column in columns:
        arrow = getattr(column.array, "_pa_array", None)
        if arrow is None:
            continue
        starts = np.cumsum([0, *(len(chunk) for chunk in arrow.chunks)])
        which = np.searchsorted(starts, rows, side="right") - 1
        for c in np.unique(which):
            pieces.append((arrow.chunks[c], rows[which == c] - starts[c]))
    read_ahead(pieces)
    return rows
