"""Reading lists: papers kept in the URL by short ids, and their Markdown, CSV and BibTeX exports.

A list is the URL parameter ``list=`` holding comma-separated short ids, in the order papers were
added: ``list=k3x9m2qa,7fjq2m4a``. Short ids (``pipeline.formats.ids``) are hashes of the papers'
stable ``doc_id``, so a list link keeps working after a rebuild. Ids are resolved through an index
built once when the corpus is loaded.

Notes (who presents, a question to discuss) travel beside the list in ``notes=``: a short id ->
note object as compressed JSON (zlib, then URL-safe base64, like a tour in ``tourdata=``), at most
``MAX_NOTE`` characters a note. They are the list owner's text and as untrusted as the corpus's:
shown only as plain text, never as HTML, and exported (Markdown, BibTeX ``note``, CSV ``note``)
escaped like every other field.

Everything here is pure (no Streamlit). The exports treat every corpus string as untrusted:
Markdown and BibTeX special characters are escaped and spreadsheet formulas are defused in CSV.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipeline.formats.ids import ID_RE

if TYPE_CHECKING:
    from explorer.state.data import Corpus

PARAM = "list"
MAX_ITEMS = 200
DERIVED = "[derived title]"
NOTES = "notes"
#: Characters of one note (a line or two: who presents, a question).
MAX_NOTE = 280
#: Characters of the ``notes`` parameter (compressed; 200 long notes fit).
MAX_NOTES_PARAM = 40_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u2028\u2029]")


def parse(value: str | None) -> tuple[tuple[str, ...], list[str]]:
    """``"a,b"`` -> (ids, problems). Invalid ids are dropped (and named), duplicates kept once."""
    if not value:
        return (), []
    ids, bad = [], []
    for part in value.split(","):
        part = part.strip().lower()
        if not part:
            continue
        (ids if ID_RE.match(part) else bad).append(part)
    ids = list(dict.fromkeys(ids))
    problems = [f"list: {len(bad)} id(s) that are not paper ids were ignored"] if bad else []
    if len(ids) > MAX_ITEMS:
        problems.append(f"list: only the first {MAX_ITEMS} papers are kept")
        ids = ids[:MAX_ITEMS]
    return tuple(ids), problems


def encode(ids: Sequence[str]) -> str | None:
    """The ``list`` parameter for ``ids`` (None when empty, so the parameter is dropped)."""
    return ",".join(ids) if ids else None


def toggle(ids: Sequence[str], sid: str) -> tuple[str, ...]:
    """``ids`` without ``sid`` if it is there, else with it appended."""
    return tuple(i for i in ids if i != sid) if sid in ids else (*ids, sid)[:MAX_ITEMS]


def clean_note(text: object) -> tuple[str, str | None]:
    """A note as kept: control characters dropped, spaces collapsed, at most ``MAX_NOTE``
    characters; and a message when it had to be cut (else None)."""
    note = " ".join(_CONTROL.sub(" ", "" if text is None else str(text)).split())
    if len(note) > MAX_NOTE:
        return note[:MAX_NOTE], f"a note has {len(note):,} characters; notes keep at most {MAX_NOTE}, so it was cut"
    return note, None


def encode_notes(notes: Mapping[str, str], ids: Sequence[str] | None = None) -> str | None:
    """The ``notes`` parameter for ``notes`` (short id -> note), in list order when ``ids`` is
    given (notes of papers not in it are dropped); None when there is no note."""
    keep = {sid: clean_note(note)[0] for sid, note in notes.items() if ids is None or sid in ids}
    if ids is not None:
        keep = {sid: keep[sid] for sid in ids if sid in keep}
    keep = {sid: note for sid, note in keep.items() if note}
    if not keep:
        return None
    raw = json.dumps(keep, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")


def parse_notes(value: str | None, ids: Sequence[str] = ()) -> tuple[dict[str, str], list[str]]:
    """``notes`` parameter -> (short id -> note for the papers of ``ids``, problems).

    A damaged or oversized parameter gives no notes and says so; a note too long is cut and said.
    """
    if not value:
        return {}, []
    if len(value) > MAX_NOTES_PARAM:
        return {}, [f"notes: the link's notes are longer than {MAX_NOTES_PARAM:,} characters and were not read"]
    try:
        raw = zlib.decompressobj().decompress(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), 2_000_000)
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        return {}, ["notes: the link's notes could not be read (the link may have been cut); no notes are shown"]
    if not isinstance(data, dict):
        return {}, ["notes: the link's notes could not be read; no notes are shown"]
    notes, problems = {}, []
    for sid, note in data.items():
        if not isinstance(sid, str) or not isinstance(note, str) or (ids and sid not in ids):
            continue
        kept, problem = clean_note(note)
        if problem:
            problems.append(f"notes: {problem}")
        if kept:
            notes[sid] = kept
    return notes, problems[:3]


def add(ids: Sequence[str], more: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*ids, *more]))[:MAX_ITEMS]


def resolve(corpus: Corpus, ids: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Paper rows of ``ids`` in list order, and the ids this corpus does not know."""
    if not ids:
        return np.zeros(0, dtype=np.int64), ()
    rows = corpus.short_rows(list(ids))
    unknown = tuple(i for i, r in zip(ids, rows, strict=True) if r < 0)
    return rows[rows >= 0].astype(np.int64), unknown


# ------------------------------------------------------------------------------------------
# Exports
# ------------------------------------------------------------------------------------------

COLUMNS = [
    "short_id", "doc_id", "title", "title_derived", "authors", "year", "venue", "topic", "topic_label",
    "url", "keywords", "abstract", "note",
]  # fmt: skip
_FORMULA = re.compile(r"^[=+\-@\t\r]")
_MD = re.compile(r"([\\`*_{}\[\]()<>#!|~$&])")
_BIB = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "%": r"\%", "$": r"\$", "&": r"\&", "#": r"\#",
        "_": r"\_", "^": r"\^{}", "~": r"\~{}"}  # fmt: skip
_BIB_URL = re.compile(r'^https?://[^\s{}\\"]+$')
_BIB_RE = re.compile("|".join(re.escape(k) for k in _BIB))


def papers_table(corpus: Corpus, rows: np.ndarray, notes: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The papers at ``rows`` (in that order) with their curated topic label and the list's
    ``notes`` (short id -> note; "" where none); ``COLUMNS``."""
    notes = notes or {}
    papers = corpus.papers.iloc[np.asarray(rows, dtype=np.int64)]
    labels = np.append(corpus.tables.topics["label"].to_numpy(dtype=object), "outliers")
    return pd.DataFrame(
        {
            "short_id": corpus.short_ids[rows],
            "doc_id": papers["doc_id"].to_numpy(),
            "title": papers["title"].to_numpy(),
            "title_derived": papers["title_derived"].fillna(False).astype(bool).to_numpy(),
            "authors": papers["authors"].to_numpy(),
            "year": papers["year"].to_numpy(),
            "venue": papers["venue"].to_numpy(),
            "topic": papers["topic"].to_numpy(),
            "topic_label": labels[corpus.topic_index[rows]],
            "url": papers["url"].to_numpy(),
            "keywords": papers["keywords"].to_numpy(),
            "abstract": papers["abstract"].to_numpy(),
            "note": [notes.get(str(s), "") for s in corpus.short_ids[rows]],
        }
    )


def defuse_formulas(column: pd.Series) -> pd.Series:
    """Prefix ``'`` to text a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``...)."""
    text = column.astype("str")
    return text.where(~text.str.match(_FORMULA).fillna(False), "'" + text)


def to_csv(table: pd.DataFrame) -> str:
    """CSV (UTF-8, header row) of a ``papers_table``; text cells that look like formulas are defused."""
    out = table.copy()
    for col in ("title", "authors", "venue", "topic_label", "keywords", "abstract", "note"):
        out[col] = defuse_formulas(out[col])
    buffer = io.StringIO()
    out.to_csv(buffer, index=False)
    return buffer.getvalue()


def _value(v) -> str:
    return "" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v).strip()


def md_inline(text: object) -> str:
    """One line of untrusted text, inert in Markdown (links, HTML, emphasis escaped)."""
    return _MD.sub(r"\\\1", " ".join(_value(text).split()))


def to_markdown(table: pd.DataFrame, *, corpus_name: str, link: str | None = None) -> str:
    """A numbered Markdown reading list; derived titles are marked ``[derived title]``."""
    lines = [f"# Reading list: {md_inline(corpus_name)}", ""]
    if link:
        lines += [f"<{link}>", ""]
    for i, r in enumerate(table.itertuples(index=False), start=1):  # the list's few papers
        title = md_inline(r.title) or "(untitled)"
        mark = " *\\[derived title\\]*" if r.title_derived else ""
        lines.append(f"{i}. **{title}**{mark}")
        meta = [md_inline(_value(r.authors).replace("; ", ", ")), md_inline(r.venue), _value(r.year)]
        venue_year = " ".join(m for m in meta[1:] if m and not (m == meta[2] and meta[2] in meta[1]))
        details = " · ".join(x for x in (meta[0], venue_year, f"topic: {md_inline(r.topic_label)}") if x)
        lines.append(f"   {details}")
        note = md_inline(getattr(r, "note", ""))
        if note:
            lines.append(f"   *Note:* {note}")
        url = _value(r.url)
        if re.match(r"^https?://\S+$", url):
            lines.append(f"   <{url.replace('>', '%3E').replace('<', '%3C')}>")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def bib_escape(text: object) -> str:
    """Text safe inside a BibTeX field: braces and LaTeX specials escaped."""
    return _BIB_RE.sub(lambda m: _BIB[m.group(0)], " ".join(_value(text).split()))


def _bib_key(authors: str, year: str, title: str, fallback: str) -> str:
    last = re.sub(r"[^a-z0-9]", "", (authors.split(";")[0].strip().split(" ")[-1] if authors else "").lower())
    words = [w for w in re.findall(r"[a-z0-9]+", title.lower()) if len(w) > 3]
    key = f"{last}{year}{words[0] if words else ''}"
    return key if last or words else f"paper{fallback}"


def to_bibtex(table: pd.DataFrame) -> str:
    """BibTeX entries (``@inproceedings`` when a venue is known, else ``@misc``); the list's note
    and, for a derived title, ``Title derived from the abstract ...`` go in ``note``."""
    entries, seen = [], set()
    for r in table.itertuples(index=False):  # the list's few papers
        authors, year, title = _value(r.authors), _value(r.year), _value(r.title)
        key = _bib_key(authors, year, title, _value(r.short_id))
        base, n = key, 1
        while key in seen:
            n += 1
            key = f"{base}{chr(ord('a') + n - 2)}" if n <= 27 else f"{base}{n}"
        seen.add(key)
        kind = "inproceedings" if _value(r.venue) else "misc"
        fields = [("title", "{" + bib_escape(title) + "}")]
        if authors:
            fields.append(("author", " and ".join(bib_escape(a) for a in authors.split(";") if a.strip())))
        if _value(r.venue):
            fields.append(("booktitle", bib_escape(r.venue)))
        if year:
            fields.append(("year", year))
        url = _value(r.url)
        if _BIB_URL.match(url):  # url fields are verbatim: only URLs without braces or backslashes
            fields.append(("url", url))
        notes = [bib_escape(getattr(r, "note", ""))]
        if r.title_derived:
            notes.append("Title derived from the abstract (the source gave none)")
        if any(notes):
            fields.append(("note", ". ".join(n for n in notes if n)))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append(f"@{kind}{{{key},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")
