"""The binary containers the map component reads: pure functions, no Streamlit, no app.

The app (``explorer.services.mapview``, ``explorer.ui.mapcomponent``), the offline export (``pipeline.export.export``)
and the search index (``pipeline.analysis.bm25``) all write them here, so a corpus looks the same in the app
and in the exported file, down to each topic's colour (``pipeline.formats.palette``).

Binary containers (read by ``frontend/src/payload.ts``)::

    b"ATLM"  u32 version  u32 header_bytes  header (UTF-8 JSON)  zero padding to 8  arrays

* points (one per corpus and set of topic edits): float32 ``x``, ``y``; uint16 ``topic`` (index
  into the header's topics, ``NO_TOPIC`` for papers outside any); uint8 ``flags`` (``FLAG_*``).
  11 bytes a paper, plus the topic labels in the header.
* mask: the filters' boolean mask packed 8 papers to a byte (``numpy.packbits`` order).
* rows: uint32 paper rows (search hits, the reading list).

Each container's id is a hash of its content, so the browser keeps one copy of each and the
small JSON state of a map (``explorer.services.mapview.map_state``) names them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.formats import palette

MAGIC = b"ATLM"
VERSION = 1
NO_TOPIC = 0xFFFF
FLAG_REASSIGNED, FLAG_PLACED, FLAG_MOVED = 1, 2, 4
MAX_TOPICS = NO_TOPIC - 1
#: Characters of a title the map shows (hover, labels; the app and the export).
TITLE_CHARS = 300
_DTYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint8): "u8",
}


@dataclass(frozen=True)
class Blob:
    """A binary container: its id (a content hash) and its bytes."""

    id: str
    data: bytes

    def __len__(self) -> int:
        return len(self.data)


def pack(kind: str, arrays: dict[str, np.ndarray], **header) -> Blob:
    """A container of ``arrays`` (1-D, float32/uint32/uint16/uint8) with ``header`` fields."""
    specs, chunks, offset = [], [], 0
    digest = hashlib.blake2b(digest_size=12)
    digest.update(kind.encode())
    digest.update(json.dumps(header, sort_keys=True, ensure_ascii=False).encode())
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        if arr.ndim != 1 or arr.dtype not in _DTYPES:
            raise ValueError(
                f"array {name!r}: expected a 1-D float32/uint32/uint16/uint8 array, got {arr.dtype} {arr.shape}"
            )
        raw = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        specs.append({"name": name, "dtype": _DTYPES[arr.dtype], "offset": offset, "length": int(arr.size)})
        digest.update(name.encode())
        digest.update(raw)
        pad = (-len(raw)) % 8
        chunks.append(raw + b"\0" * pad)
        offset += len(raw) + pad
    blob_id = f"{kind}-{digest.hexdigest()}"
    head = json.dumps(
        {**header, "id": blob_id, "kind": kind, "arrays": specs}, ensure_ascii=False, allow_nan=False
    ).encode()
    prefix = MAGIC + VERSION.to_bytes(4, "little") + len(head).to_bytes(4, "little") + head
    prefix += b"\0" * ((-len(prefix)) % 8)
    return Blob(blob_id, prefix + b"".join(chunks))


def unpack(data: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """The header and arrays of a container (the reverse of ``pack``; for tests and tools)."""
    if data[:4] != MAGIC:
        raise ValueError("not an atlas map container")
    n = int.from_bytes(data[8:12], "little")
    header = json.loads(data[12 : 12 + n].decode())
    start = 12 + n + ((-(12 + n)) % 8)
    types = {v: k for k, v in _DTYPES.items()}
    arrays = {
        s["name"]: np.frombuffer(
            data, dtype=types[s["dtype"]].newbyteorder("<"), count=s["length"], offset=start + s["offset"]
        )
        for s in header["arrays"]
    }
    return header, arrays


def _finite(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


#: Papers used to measure how close papers lie (an even sample of larger corpora).
SPACING_SAMPLE = 200_000


def point_spacing(x: np.ndarray, y: np.ndarray, *, sample: int = SPACING_SAMPLE) -> float:
    """How close the closest papers lie on the map: the 5th percentile of the distance from a paper to
    its nearest other paper (papers at the very same place left out), in map units; 0 when unknown.

    The map bounds its zoom by it: at the closest zoom these papers are a few dozen pixels apart,
    so every paper is told apart and zooming further would only show empty space. Above ``sample``
    papers an even sample is measured and the distance scaled to the whole (in two dimensions the
    distance to the nearest paper goes as one over the square root of the density).
    """
    from scipy.spatial import cKDTree

    xy = np.column_stack([np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)])
    xy = xy[np.isfinite(xy).all(axis=1)]
    n = len(xy)
    if n < 2:
        return 0.0
    factor = 1.0
    if n > sample:
        step = -(-n // sample)
        xy = xy[::step]
        factor = math.sqrt(len(xy) / n)
    dist, _ = cKDTree(xy).query(xy, k=2, workers=-1)  # threads: the same distances, sooner
    nearest = dist[:, 1][dist[:, 1] > 0]
    return float(np.quantile(nearest, 0.05)) * factor if len(nearest) else 0.0


def points_blob(
    name: str,
    papers: pd.DataFrame,
    topics: pd.DataFrame,
    *,
    synthetic: bool = False,
    colours: Mapping[int, str] | None = None,
    spacing: float | None = None,
) -> Blob:
    """The points of a corpus: positions, topic of each paper, flags, and the topics' labels.

    Args:
        name: the corpus name (shown in the PNG's corner).
        papers: one row per paper, in row order, with ``x, y, topic``; ``was_outlier``, ``placed``
            and ``moved`` when present.
        topics: one row per topic with ``topic, label``; ``x, y`` label positions when present
            (else the median position of the topic's papers). Topics without papers are kept
            (the legend lists them greyed); papers whose topic the table lacks get ``NO_TOPIC``.
        synthetic: the corpus is generated benchmark data (the map says so on its PNG).
        colours: topic id -> colour, when already known (``Corpus.colouring``); else computed
            here from the papers' positions (``palette.map_colouring``, the same function).
        spacing: ``point_spacing`` of the papers' positions, when already known (the build's
            ``map.json``); else measured here.
    """
    ids = topics["topic"].astype(int).to_numpy()
    if len(ids) > MAX_TOPICS:
        raise ValueError(f"{len(ids)} topics: the map draws at most {MAX_TOPICS}")
    paper_topic = papers["topic"].astype(int).to_numpy()
    index = pd.Index(ids).get_indexer(paper_topic)
    topic = np.where(index < 0, NO_TOPIC, index).astype(np.uint16)
    flags = np.zeros(len(papers), dtype=np.uint8)
    for column, bit in (("was_outlier", FLAG_REASSIGNED), ("placed", FLAG_PLACED), ("moved", FLAG_MOVED)):
        if column in papers:
            flags |= np.where(papers[column].fillna(False).to_numpy(dtype=bool), bit, 0).astype(np.uint8)
    x = papers["x"].to_numpy(dtype=np.float32)
    y = papers["y"].to_numpy(dtype=np.float32)
    sizes = np.bincount(index[index >= 0], minlength=len(ids))
    if colours is None:
        colours = palette.map_colouring(x, y, paper_topic, ids).colours
    entries = []
    for j, rec in enumerate(topics.itertuples(index=False)):
        tid = int(ids[j])
        tx, ty = _finite(getattr(rec, "x", None)), _finite(getattr(rec, "y", None))
        if tx is None or ty is None:
            own = (index == j) & np.isfinite(x) & np.isfinite(y)
            tx, ty = (float(np.median(x[own])), float(np.median(y[own]))) if own.any() else (None, None)
        label = str(getattr(rec, "label", "") or "").strip() or f"topic {tid}"
        entries.append(
            {
                "id": tid,
                "label": label,
                "size": int(sizes[j]),
                "x": None if tx is None else round(tx, 5),
                "y": None if ty is None else round(ty, 5),
                "colour": palette.OUTLIER if tid < 0 else colours.get(tid, palette.topic_colour(tid)),
            }
        )
    return pack(
        "points",
        {"x": x, "y": y, "topic": topic, "flags": flags},
        n=len(papers),
        name=str(name),
        synthetic=bool(synthetic),
        topics=entries,
        outlier=palette.OUTLIER,
        context=palette.CONTEXT,
        ink=palette.INK,
        spacing=point_spacing(x, y) if spacing is None else float(spacing),
    )


def mask_blob(mask: np.ndarray) -> Blob:
    """The filters' mask, 8 papers to a byte."""
    mask = np.asarray(mask, dtype=bool)
    return pack("mask", {"bits": np.packbits(mask)}, n=int(mask.size))


def rows_blob(rows: np.ndarray) -> Blob:
    """Paper rows, e.g. search hits or the reading list."""
    return pack("rows", {"rows": np.asarray(rows, dtype=np.int64).astype(np.uint32)})
