"""Short paper ids: the ids reading lists, tours and exported pages put in links.

A short id is the first 8 characters (40 bits) of the base32 BLAKE2b hash of the paper's
``doc_id``, lower case; the rare papers whose 8 characters collide in a corpus get 13. Since doc
ids are stable, so are short ids: a link keeps working after a rebuild. The app
(``explorer.data``, ``explorer.readinglist``) and the offline export (``pipeline.export``) compute
them here, so a reading-list link resolves in both.
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


def short_ids(doc_ids: Iterable[str]) -> np.ndarray:
    """Short ids of ``doc_ids`` (object ``(n,)``), unique: colliding 8-character ids get 13.

    Runs once per corpus load (a hash per paper), never on a rerun.
    """
    ids = [str(d) for d in doc_ids]
    out = pd.Series([short_id(d) for d in ids], dtype=object)
    dup = out.duplicated(keep=False).to_numpy()
    for i in np.flatnonzero(dup):  # about one pair in a hundred thousand papers
        out.iat[i] = short_id(ids[i], LONG)
    return out.to_numpy(dtype=object)
