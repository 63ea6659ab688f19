"""The phrase check asks the kernel for the pages of the rows it is about to read, all at once
(``explorer.services.readahead``): the right pages, every one of them, and nothing changes in
what is read."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from explorer.services import readahead
from pipeline.core import pages

PAGE = 4096


def test_page_ranges_join_adjacent_and_overlapping_pages():
    starts = np.array([5000, 10, 4095, 20_000, 9000, 30_000])
    ends = np.array([5001, 20, 4097, 20_000, 13_000, 30_001])  # 20,000: empty, no page
    assert pages.page_ranges(starts, ends, page=PAGE) == [(0, 4 * PAGE), (7 * PAGE, PAGE)]
    assert pages.page_ranges(np.array([1]), np.array([1]), page=PAGE) == []
    assert pages.page_ranges(np.array([PAGE]), np.array([2 * PAGE]), page=PAGE) == [(PAGE, PAGE)]


def _pages(ranges) -> set[int]:
    return {p for address, length in ranges for p in range(address // PAGE, (address + length) // PAGE)}


def _needed(chunk, rows, width) -> tuple[set[int], set[int]]:
    """The pages of the rows' offsets and of their text, worked out row by row."""
    offsets, data = chunk.buffers()[1], chunk.buffers()[2]
    values = np.frombuffer(offsets, dtype=np.int64 if width == 8 else np.int32)
    offset_pages, text_pages = set(), set()
    for row in rows:
        at = offsets.address + (row + chunk.offset) * width
        offset_pages |= {at // PAGE, (at + 2 * width - 1) // PAGE}
        start, end = data.address + int(values[row + chunk.offset]), data.address + int(values[row + chunk.offset + 1])
        if end > start:
            text_pages |= set(range(start // PAGE, (end - 1) // PAGE + 1))
    return offset_pages, text_pages


@pytest.mark.parametrize("kind", [pa.large_string(), pa.string()])
def test_the_hints_are_the_pages_of_the_rows_offsets_then_of_their_text(kind, monkeypatch):
    rng = np.random.default_rng(0)
    texts = ["x" * int(n) if n % 7 else None for n in rng.integers(0, 9000, 3000)]
    chunk = pa.array(texts, type=kind).slice(17, 2500)  # an offset into the buffers, as a slice has
    rows = np.array([0, 3, 4, 900, 901, 2499, 1500, 7])
    calls: list[list[tuple[int, int]]] = []
    monkeypatch.setattr(pages, "madvise", lambda: object())
    monkeypatch.setattr(pages, "advise", lambda ranges: calls.append(ranges))
    assert readahead.read_ahead([(chunk, rows)])
    offset_pages, text_pages = _needed(chunk, rows, 8 if kind == pa.large_string() else 4)
    assert len(calls) == 2  # the offsets first, then the texts
    assert _pages(calls[0]) == offset_pages and _pages(calls[1]) == text_pages


def test_rows_are_found_in_their_chunks_and_other_columns_are_left_alone(monkeypatch):
    kind = pa.large_string()
    chunked = pa.chunked_array([pa.array(["a" * 5000] * 3, type=kind), pa.array(["b" * 5000] * 4, type=kind)])
    column = pd.Series(pd.arrays.ArrowExtensionArray(chunked))
    seen = []
    monkeypatch.setattr(readahead, "read_ahead", lambda pieces: seen.extend(pieces))
    rows = np.array([5, 1, 3])
    assert readahead.read_ahead_columns([column, pd.Series(["plain"] * 7, dtype=object)], rows).tolist() == [5, 1, 3]
    assert [(chunk.to_pylist()[0][0], r.tolist()) for chunk, r in seen] == [("a", [1]), ("b", [2, 0])]
    seen.clear()
    readahead.read_ahead_columns([column], np.arange(readahead.MAX_ROWS + 1) % 7)  # too many: left to the scan
    assert seen == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise's answer checked on Linux")
def test_the_kernel_takes_every_hint_on_a_memory_mapped_file(tmp_path, monkeypatch):
    """On the file the app maps (an Arrow IPC file, memory-mapped), every range asked for is a
    mapped range the kernel accepts (madvise answers 0), and the rows read are the same."""
    texts = [f"paper {i} " * (i % 50) for i in range(20_000)]
    path = tmp_path / "papers.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, pa.schema([("abstract", pa.large_string())])) as w:
        w.write_table(pa.table({"abstract": pa.array(texts, type=pa.large_string())}), max_chunksize=6_000)
    table = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
    answers = []
    call = pages.madvise()
    monkeypatch.setattr(pages, "advise", lambda ranges: answers.extend(call(a, n, 3) for a, n in ranges) or True)
    column = table.column("abstract").to_pandas(types_mapper=pd.ArrowDtype)
    rows = np.array([19_999, 0, 6_001, 12_345, 5_999])
    assert readahead.read_ahead_columns([column], rows).tolist() == rows.tolist()
    assert answers and all(a == 0 for a in answers)
    assert column.iloc[rows].tolist() == [texts[r] for r in rows]


def test_the_pages_of_rows_of_a_memory_mapped_array_are_asked_for(tmp_path, monkeypatch):
    """``pages.advise_rows``: the pages of exactly the rows asked for (the keyword index's signatures,
    ``np.load`` memory-mapped), which the kernel accepts; an array in memory gets no hint."""
    rows_of = np.arange(5_000 * 128, dtype=np.uint32).astype(np.uint8).reshape(5_000, 128)
    np.save(tmp_path / "pairs.npy", rows_of)
    mapped = np.load(tmp_path / "pairs.npy", mmap_mode="r")
    rows = np.array([4_999, 0, 31, 32, 2_500])
    asked, answers = [], []
    call = pages.madvise()
    monkeypatch.setattr(
        pages, "advise", lambda ranges: asked.extend(ranges) or answers.extend(call(a, n, 3) for a, n in ranges) or True
    )
    assert pages.advise_rows(mapped, rows)
    base = mapped.ctypes.data
    want = {(base + r * 128) // PAGE for r in rows} | {(base + r * 128 + 127) // PAGE for r in rows}
    assert _pages(asked) == want and all(a == 0 for a in answers)
    assert not pages.advise_rows(np.asarray(mapped), rows)  # not a mapping: nothing to ask
