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
changes what is read: only when.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import sys
from collections.abc import Sequence

import numpy as np

#: ``MADV_WILLNEED`` on Linux and macOS.
MADV_WILLNEED = 3
#: Rows above which no hint is given: the phrase check's rounds stop at 1/32 of the corpus
#: (31,250 rows at a million papers) and every round up to there gets its hints (with 8,192 as
#: the limit, a later round of 14,336 rows read its pages one at a time: 0.72 s against 0.22 s,
#: BENCHMARKS.md); a check of every remaining match (hundreds of thousands of rows) scans
#: stretches in place, which the kernel's own sequential read-ahead serves.
MAX_ROWS = 65_536


@functools.cache
def _madvise():
    """libc's ``madvise``, or None where there is none to call."""
    if not (sys.platform.startswith("linux") or sys.platform == "darwin"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        call = libc.madvise
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    call.restype = ctypes.c_int
    return call


def page_ranges(starts: np.ndarray, ends: np.ndarray, page: int = mmap.PAGESIZE) -> list[tuple[int, int]]:
    """The pages holding the byte ranges ``[starts[i], ends[i])`` (addresses), as ``(first byte,
    length)`` runs of whole pages, adjacent and overlapping pages joined, in address order."""
    starts, ends = np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)
    keep = ends > starts
    if not keep.any():
        return []
    first = starts[keep] // page
    last = (ends[keep] - 1) // page
    order = np.argsort(first, kind="stable")
    first, last = first[order], np.maximum.accumulate(last[order])
    new_run = np.ones(len(first), dtype=bool)
    new_run[1:] = first[1:] > last[:-1] + 1
    heads = np.flatnonzero(new_run)
    tails = np.append(heads[1:], len(first)) - 1
    return [(int(first[h]) * page, int(last[t] - first[h] + 1) * page) for h, t in zip(heads, tails, strict=True)]


def _advise(ranges: list[tuple[int, int]]) -> None:
    call = _madvise()
    for address, length in ranges:
        call(address, length, MADV_WILLNEED)  # an error (not a mapping) only means no hint


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
    if _madvise() is None:
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
        _advise(page_ranges(at, at + 2 * np.dtype(dtype).itemsize))
    for offsets, dtype, data_address, positions in found:  # the offsets' pages arrive together
        values = np.frombuffer(offsets, dtype=dtype)
        starts, ends = values[positions].astype(np.int64), values[positions + 1].astype(np.int64)
        _advise(page_ranges(data_address + starts, data_address + ends))
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
