"""All files' candidate rows -> papers: duplicates (exact and near) dropped, unique URL-safe doc ids,
titles (given or derived from the abstract) and the text each paper is modelled by.

``pipeline.ingest.ingest`` reads and checks each file's rows; :func:`assemble` turns them into papers.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd

from pipeline.core.config import IngestParams
from pipeline.ingest.clean import clean_text
from pipeline.ingest.titles import derive_title

#: Columns of ``IngestResult.papers``, in order (``schema.PAPER_COLUMNS`` minus what later stages add).
PAPER_COLUMNS = [
    "doc_id",
    "title",
    "title_derived",
    "abstract",
    "model_text",
    "year",
    "venue",
    "authors",
    "url",
    "source_id",
    "label",
    "keywords",
    "source_file",
    "source_row",
    "extra",
]

#: model_text is cut to this many characters; the display abstract is kept whole.
MAX_MODEL_CHARS = 20_000

_NOT_URL_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_NON_ALNUM = re.compile(r"[\W_]+")
_ASCII_NON_ALNUM = bytes(c for c in range(128) if not chr(c).isalnum())


def _near_key(text: str) -> str:
    """The text lower-cased without anything but letters and digits (near-duplicate key)."""
    lower = text.lower()
    if lower.isascii():  # most abstracts: bytes.translate is many times faster than the regex
        return lower.encode().translate(None, _ASCII_NON_ALNUM).decode()
    return _NON_ALNUM.sub("", lower)


def _hash_id(title: str | None, abstract: str) -> str:
    return "p" + hashlib.blake2b(f"{title or ''}\n{abstract}".encode(), digest_size=5).hexdigest()


def _duplicates(frame: pd.DataFrame) -> list[tuple[int, str, int]]:
    """Rows repeating an earlier row's abstract, exactly or up to case and punctuation.

    Returns:
        (row, "duplicate" or "near_duplicate", row of the first paper with that abstract).
    """
    # Groups by codes (pandas' factorize: Arrow's hashing for the text column), and near keys as
    # 16-byte digests: no Python string per abstract (a million of them would be about 2 GB).
    exact_codes, _ = pd.factorize(frame["abstract"])
    near_codes, _ = pd.factorize(
        np.fromiter((_near_digest(a) for a in frame["abstract"]), dtype="S16", count=len(frame))
    )
    first_exact, exact = _first_of(exact_codes)
    first_near, near = _first_of(near_codes)
    near &= ~exact
    drops = [(int(i), "duplicate", int(first_exact[i])) for i in np.flatnonzero(exact)]
    drops += [(int(i), "near_duplicate", int(first_near[i])) for i in np.flatnonzero(near)]
    return drops


def _first_of(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For group codes per row: the first row of each row's group, and whether a row repeats one."""
    _, first_index = np.unique(codes, return_index=True)
    first = first_index[codes]
    return first, first != np.arange(len(codes))


def _near_digest(text: str) -> bytes:
    """A 16-byte digest of the near-duplicate key (:func:`_near_key`)."""
    return hashlib.blake2b(_near_key(text).encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _unique_ids(ids: np.ndarray, keep: np.ndarray) -> dict[int, tuple[str, int]]:
    """New ids for kept rows reusing an earlier kept row's id: "-2", "-3", ... (never an id in use).

    Returns:
        row -> (new id, row that holds the id first).
    """
    taken = set(ids[keep])
    first_with: dict[str, int] = {}
    suffix: dict[str, int] = {}
    renamed = {}
    for i in np.flatnonzero(keep & pd.Series(ids).duplicated(keep=False).to_numpy()):
        base = ids[i]
        if base not in first_with:
            first_with[base] = int(i)
            continue
        n = suffix.get(base, 2)
        while f"{base}-{n}" in taken:
            n += 1
        suffix[base] = n + 1
        taken.add(f"{base}-{n}")
        renamed[int(i)] = (f"{base}-{n}", first_with[base])
    return renamed


def assemble(frame: pd.DataFrame, params: IngestParams) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Candidate rows of all files -> papers: dedupe, unique ids, titles, model text."""
    if frame["_clean"].isna().any():
        frame = frame[frame["_clean"].notna()].reset_index(drop=True)
    files = frame["source_file"].to_numpy()
    file_order = frame["_file"].to_numpy()
    rows = frame["source_row"].to_numpy()
    report: list[tuple] = []

    def add(i: int, action: str, reason: str, detail: str) -> None:
        report.append((files[i], file_order[i], int(rows[i]), action, reason, detail))

    ids, keep = _doc_ids(frame, params, add)
    if not keep.all():  # a copy of every column: only when rows were dropped
        frame = frame[keep].reset_index(drop=True)
    derived = (frame["given_title"].fillna("").str.len() == 0).to_numpy()
    titles = [
        derive_title(a, clean=c) if d else t
        for a, c, t, d in zip(frame["abstract"], frame["_clean"], frame["given_title"], derived, strict=True)
    ]
    model = _model_texts(frame, titles, derived, np.flatnonzero(keep), add)
    papers = pd.DataFrame(
        {
            "doc_id": pd.Series(ids[keep], dtype="str"),
            "title": pd.Series(titles, dtype="str"),
            "title_derived": pd.Series(derived, dtype=bool),
            "abstract": frame["abstract"].astype("str"),
            "model_text": pd.Series(model, dtype="str"),
            "year": frame["year"].astype("Int16"),
            **{c: frame[c].astype("str") for c in ("venue", "authors", "url", "source_id", "label", "keywords")},
            "source_file": frame["source_file"].astype("str"),
            "source_row": frame["source_row"].astype(np.int32),
            "extra": frame["extra"].astype("str"),
        }
    )
    columns = ["source_file", "_file", "source_row", "action", "reason", "detail"]
    return papers[PAPER_COLUMNS], pd.DataFrame(report, columns=columns)


def _doc_ids(frame: pd.DataFrame, params: IngestParams, add) -> tuple[np.ndarray, np.ndarray]:
    """Each row's doc_id (its own id made URL-safe, else a hash; a repeated id gets a suffix) and
    which rows are kept (duplicates dropped when ``params.dedupe``); ``add`` reports each change."""
    files = frame["source_file"].to_numpy()
    rows = frame["source_row"].to_numpy()
    sanitised = frame["source_id"].str.replace(_NOT_URL_SAFE, "-", regex=True)
    ids = sanitised.to_numpy(dtype=object, na_value="")
    no_id = np.flatnonzero(sanitised.str.len().fillna(0).to_numpy() == 0)
    titles_given, abstracts = frame["given_title"], frame["abstract"]
    for i in no_id:  # only papers without an id of their own get a hashed one
        title = titles_given.iat[i]
        ids[i] = _hash_id(title if isinstance(title, str) else "", abstracts.iat[i])

    drops = _duplicates(frame) if params.dedupe else []
    keep = np.ones(len(frame), dtype=bool)
    keep[[i for i, _, _ in drops]] = False
    for i, (new, first) in _unique_ids(ids, keep).items():
        old = ids[i]
        ids[i] = new
        add(
            i,
            "changed",
            "duplicate_id",
            f"id {old!r} is also used by {files[first]} row {rows[first]} with a different abstract; "
            f"this paper's doc_id is {new!r}",
        )
    for i, reason, first in drops:
        what = "the same abstract" if reason == "duplicate" else "the same abstract up to case and punctuation"
        add(
            i,
            "skipped",
            reason,
            f"{what} as doc_id {ids[first]} ({files[first]} row {rows[first]}), which was kept",
        )
    return ids, keep


def _model_texts(frame: pd.DataFrame, titles: list, derived: np.ndarray, positions: np.ndarray, add) -> list[str]:
    """The text each kept paper is modelled by: its given title and its cleaned abstract, cut to
    ``MAX_MODEL_CHARS``; ``positions`` are the kept rows' rows in the candidate frame (for ``add``)."""
    model = []
    for k, (title, clean, is_derived) in enumerate(zip(titles, frame["_clean"], derived, strict=True)):
        head = "" if is_derived else clean_text(title)
        text = f"{head}{' ' if head.endswith(('.', '?', '!')) else '. '}{clean}" if head else clean
        if len(text) > MAX_MODEL_CHARS:
            cut = text[:MAX_MODEL_CHARS]
            text = cut[: cut.rfind(" ")] if " " in cut[-200:] else cut
            add(
                positions[k],
                "changed",
                "long_abstract",
                f"abstract has {len(frame['abstract'].iat[k]):,} characters; its text for modelling was cut to "
                f"{MAX_MODEL_CHARS:,} (the whole abstract is kept for display)",
            )
        model.append(text)
    return model
