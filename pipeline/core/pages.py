"""Ask the kernel to read pages of a memory-mapped file ahead, all at once (``madvise(MADV_WILLNEED)``:
it starts the reads and returns), so that on a cold disk reads scattered over a file are in flight
together instead of one page fault after another. It never changes what is read, only when; where
the call is missing (not Linux or macOS) nothing is asked. The app's phrase check hints the rows of
``papers.arrow`` it is about to read (``explorer.services.readahead``) and the keyword index's
signatures of the candidates (``pipeline.analysis.bm25_pairs``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import sys

import numpy as np

#: ``MADV_WILLNEED`` on Linux and macOS.
MADV_WILLNEED = 3


@functools.cache
def madvise():
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


def advise(ranges: list[tuple[int, int]]) -> bool:
    """Hint each ``(address, length)`` range (``page_ranges``); False where there is no call to make.
    An error (an address that is not a mapping) only means no hint."""
    call = madvise()
    if call is None:
        return False
    for address, length in ranges:
        call(address, length, MADV_WILLNEED)
    return True


def advise_rows(array: np.ndarray, rows: np.ndarray) -> bool:
    """Hint the pages of ``rows`` (sorted or not) of a C-contiguous array whose first axis is rows,
    typically ``np.load(..., mmap_mode="r")``; False when nothing was asked."""
    if not isinstance(array, np.memmap) or not array.flags.c_contiguous or not len(rows) or madvise() is None:
        return False
    width = array.strides[0]
    at = np.asarray(rows, dtype=np.int64) * width + array.ctypes.data
    return advise(page_ranges(at, at + width))
