"""Short paper ids: the ids reading lists, tours and exported pages put in links.

A short id is the first 8 characters (40 bits) of the base32 BLAKE2b hash of the paper's
``doc_id``, lower case; the rare papers whose 8 characters collide in a corpus get 13. Since doc
ids are stable, so are short ids: a link keeps working after a rebuild. The build makes them here
once (``pipeline.build.writer``, the ``short_id`` column of the paper files); the app
(``explorer.state.data``, ``explorer.state.readinglist``) and the offline export
(``pipeline.export.export``) read that column, or make them here for a build without it, so a
reading-list link resolves in both.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

SHORT = 8
LONG = 13
ID_RE = re.compile(r"^[a-z2-7]{8,13}$")


def short_id(doc_id: str, length: int = SHORT) -> str:
    digest = hashlib.blake2b(str(doc_id).encode("utf-8"), digest_size=8).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:length]


_B32 = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz234567", dtype=np.uint8)


def _digest_bits(ids: list[str]) -> np.ndarray:
    """uint64 ``(n,)``: the first 64 bits of each id's BLAKE2b digest (``short_id``'s hash)."""
    joined = b"".join(hashlib.blake2b(d.encode("utf-8"), digest_size=8).digest() for d in ids)
    return np.frombuffer(joined, dtype=">u8").astype(np.uint64)


def _short_ids_fast(value: np.ndarray) -> np.ndarray:
    """``short_id`` of each digest of ``_digest_bits`` (object ``(n,)``), with the base32 of its
    first 40 bits done by numpy (a million ids in about a second; ``b32encode`` one by one took ten)."""
    if not len(value):
        return np.zeros(0, dtype=object)
    shifts = np.arange(59, 59 - 5 * SHORT, -5, dtype=np.uint64)  # 5 bits a character, first bits first
    codes = _B32[((value[:, None] >> shifts) & np.uint64(31)).astype(np.intp)]
    return codes.view(f"S{SHORT}").ravel().astype("U").astype(object)


def short_ids(doc_ids: Iterable[str]) -> np.ndarray:
    """Short ids of ``doc_ids`` (object ``(n,)``), unique: colliding 8-character ids get 13.

    A hash per paper (about 0.9 s a million): made once per build, by the writer.
    """
    listed = doc_ids.tolist() if isinstance(doc_ids, (pd.Series, pd.Index, np.ndarray)) else list(doc_ids)
    ids = [d if type(d) is str else str(d) for d in listed]
    value = _digest_bits(ids)
    out = _short_ids_fast(value)
    # Two ids collide when their first 40 bits (the 8 characters) do: about one pair in a hundred
    # thousand papers.
    prefix = value >> np.uint64(64 - 5 * SHORT)
    _, where, counts = np.unique(prefix, return_inverse=True, return_counts=True)
    for i in np.flatnonzero(counts[where] > 1):
        out[i] = short_id(ids[i], LONG)
    return out


def paper_short_ids(papers: pd.DataFrame) -> np.ndarray:
    """The short ids of ``papers`` (object ``(n,)``): their ``short_id`` column, which builds
    write, or :func:`short_ids` of their ``doc_id`` for a build made before it."""
    if "short_id" in papers:
        return papers["short_id"].to_numpy(dtype=object)
    return short_ids(papers["doc_id"])
