"""Input files -> tables: format detection, decoding, the table every parser returns, and column roles.

The parsers, one per format family, are in ``pipeline.ingest.readers_formats``.

``ingest`` turns these tables into papers. Every function here raises ``InputError`` for a file that
cannot be used at all, naming the file, what was expected and what was found; a bad record inside a
usable file becomes a report row instead.

Formats, by extension (``.gz`` for gzip of any of them) or by content when the extension says
nothing: plain text (an optional "NeurIPS 2026 Papers" title line giving venue and year, then one
abstract per blank-line separated paragraph), CSV and TSV (delimiter sniffed, quoted fields with
newlines, ragged rows padded or cut), JSON (an array of records, ``{"papers": [...]}``, records keyed
by id, or column-oriented), JSON Lines (bad lines reported by line number) and Parquet. Text is read
as UTF-8 (with or without BOM) or UTF-16/32 with a BOM, falling back to cp1252, then Latin-1.
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.core.errors import InputError

FORMATS = ("text", "csv", "tsv", "json", "jsonl", "parquet")


def split_words(words: str) -> list[str]:
    return words.split()


#: Column names recognised for each role, best first (compared lower-cased, spaces/hyphens as "_").
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "abstract": (
        "abstract",
        "summary",
        "text",
        "description",
        "abstract_text",
        "paper_abstract",
        "abstracts",
    ),
    "title": ("title", "paper_title", "paper", "name", "title_text", "paper_name"),
    "year": (
        "year",
        "date",
        "published",
        "publication_date",
        "publication_year",
        "pub_year",
        "pub_date",
        "published_date",
        "date_published",
        "publish_date",
    ),
    "venue": ("venue", "conference", "booktitle", "journal", "venue_name", "conference_name", "journal_name"),
    "authors": ("authors", "author", "author_names", "authors_list", "creators"),
    "url": ("url", "link", "site", "pdf", "pdf_url", "paper_url", "pdf_link", "href"),
    "id": ("id", "paper_id", "forum", "uid", "doc_id", "paperid", "identifier", "_id"),
    "label": ("label", "primary_area", "category", "area", "subject", "class"),
    "keywords": ("keywords", "tags", "keyword", "key_words", "author_keywords"),
}
ROLES = tuple(ROLE_NAMES)

EXTENSIONS = {
    ".txt": "text",
    ".text": "text",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_MAGIC = {
    b"\x89PNG": "a PNG image",
    b"GIF8": "a GIF image",
    b"\xff\xd8\xff": "a JPEG image",
    b"%PDF": "a PDF document (extract its text first)",
    b"PK\x03\x04": "a ZIP archive (an .xlsx or .docx file is one: export it as CSV)",
    b"\xd0\xcf\x11\xe0": "an old Microsoft Office file (export it as CSV)",
    b"\x7fELF": "an executable",
    b"BZh": "a bzip2 archive",
    b"\xfd7zXZ": "an xz archive",
    b"\x28\xb5\x2f\xfd": "a zstd archive",
    b"SQLite format 3": "an SQLite database",
}
_GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
SNIFF_BYTES = 1 << 16
YEAR_IN_TEXT = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d|2100)(?!\d)")


@dataclass
class Table:
    """One parsed input file: its records as a frame, before any row is checked."""

    frame: pd.DataFrame  # the input's own columns, any dtypes
    rows: np.ndarray  # 1-based source row of each frame row
    encoding: str
    rows_read: int
    report: list[tuple[int, str, str, str]] = field(default_factory=list)  # (row, action, reason, detail)
    defaults: dict[str, Any] = field(default_factory=dict)  # file-wide venue / year (text header)
    columns: dict[str, str] | None = None  # role -> column, when the format fixes it (text files)


# ---------------------------------------------------------------------------------------------
# Reading bytes and text
# ---------------------------------------------------------------------------------------------


def read_bytes(path: Path) -> bytes:
    """The bytes of an input file; InputError when it is missing, a folder or unreadable."""
    if not path.exists():
        raise InputError(f"{path}: file not found. Check the path (it is relative to {Path.cwd()}).")
    if not path.is_file():
        raise InputError(f"{path}: is a directory, expected a file of abstracts (text, CSV, JSON, Parquet).")
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot be read: {e.strerror or e}.") from e


def gunzip(path: Path, raw: bytes) -> bytes:
    """Decompressed gzip bytes; InputError when they are damaged or truncated."""
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(f"{path}: expected gzip-compressed data, found a damaged or truncated file ({e}).") from e


def describe_binary(data: bytes) -> str | None:
    """A phrase naming what a binary file looks like, or None for text."""
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            return what
    head = data[:SNIFF_BYTES]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None
    controls = sum(head.count(bytes([b])) for b in (*range(0, 9), 11, *range(14, 32), 127))
    if head and controls / len(head) > 0.05:
        share = controls / len(head)
        return f"binary data ({share:.0%} control bytes; UTF-16 text needs a byte order mark)"
    return None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode(path: Path, data: bytes) -> tuple[str, str, list[tuple[int, str, str, str]]]:
    """Bytes -> text, the encoding used, and file-level report rows (row 0)."""
    notes: list[tuple[int, str, str, str]] = []
    boms = (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    )
    encoding = next((name for bom, name in boms if data.startswith(bom)), None)
    if encoding is not None:
        text = data.decode(encoding, errors="replace")
        bad = text.count("\ufffd")
        if bad:
            notes.append(
                (
                    0,
                    "changed",
                    "encoding",
                    f"{bad} undecodable byte(s) in {encoding} text replaced by '\ufffd'",
                )
            )
    else:
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError as e:
            where = f"byte 0x{data[e.start]:02X} at line {_line_of(data, e.start)}"
            escaped = data.decode("utf-8", errors="surrogateescape")
            n_bad = sum(1 for c in escaped if "\udc80" <= c <= "\udcff")
            n_good = sum(1 for c in escaped if c > "\x7f") - n_bad
            if n_good > n_bad:
                # Mostly UTF-8 with a few stray legacy bytes: keep the UTF-8, read the strays as cp1252.
                text = re.sub(
                    "[\udc80-\udcff]+",
                    lambda m: bytes(ord(c) - 0xDC00 for c in m.group()).decode("cp1252", errors="replace"),
                    escaped,
                )
                encoding = "utf-8"
                detail = f"{n_bad} byte(s) that are not UTF-8 (first: {where}) were read as cp1252"
            else:
                try:
                    text, encoding = data.decode("cp1252"), "cp1252"
                except UnicodeDecodeError:
                    text, encoding = data.decode("latin-1"), "latin-1"
                detail = f"not UTF-8 (first bad {where}); read as {encoding}. Save the file as UTF-8 to be sure"
            notes.append((0, "changed", "encoding", detail))
    n_nul = text.count("\x00")
    if n_nul:
        text = text.replace("\x00", "")
        notes.append((0, "changed", "nul_bytes", f"removed {n_nul} NUL byte(s)"))
    if not text.strip():
        raise InputError(f"{path}: is empty (no text after decoding it as {encoding}); expected abstracts.")
    return text, encoding, notes


def _head(path: Path) -> bytes:
    """The first bytes of a file, decompressed when it is gzip."""
    with path.open("rb") as f:
        raw = f.read(SNIFF_BYTES)
    if raw.startswith(_GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as f:
                return f.read(SNIFF_BYTES)
        except (OSError, EOFError, zlib.error):
            return b""
    return raw


def _sniff(head: bytes) -> str:
    """Guess a format from the first bytes of (decompressed) content."""
    if head.startswith(PARQUET_MAGIC):
        return "parquet"
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
    if text.startswith("["):
        return "json"
    if text.startswith("{"):
        first, _, rest = text.partition("\n")
        try:
            json.loads(first)
        except ValueError:
            return "json"
        return "jsonl" if rest.lstrip().startswith("{") else "json"
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if not lines:
        return "text"
    first = lines[0]
    for delim, fmt in (("\t", "tsv"), (",", "csv"), (";", "csv"), ("|", "csv")):
        n = first.count(delim)
        # A header row: a few short fields, and later lines with as many delimiters.
        header_like = n and max(len(f) for f in first.split(delim)) <= 60 and len(lines) > 1
        if header_like and sum(line.count(delim) >= n for line in lines[1:]) >= (len(lines) - 1) / 2:
            return fmt
    return "text"


def detect_format(path: Path) -> str:
    """The format of an input file: its extension, or its content when the extension says nothing.

    Returns:
        One of ``FORMATS``, with ".gz" appended for gzip-compressed files (``"jsonl.gz"``).

    Raises:
        InputError: the file does not exist.
    """
    path = Path(path)
    if not path.is_file():
        read_bytes(path)  # raises the right message
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] in {".gz", ".gzip"}
    ext = suffixes[-2] if gz and len(suffixes) > 1 else (suffixes[-1] if suffixes and not gz else "")
    fmt = EXTENSIONS.get(ext)
    if not gz:
        with path.open("rb") as f:
            gz = f.read(2) == _GZIP_MAGIC
    if fmt is None:
        fmt = _sniff(_head(path))
    return f"{fmt}.gz" if gz else fmt


# ---------------------------------------------------------------------------------------------
# Column names
# ---------------------------------------------------------------------------------------------


def norm_name(name: str) -> str:
    """A column name compared with ROLE_NAMES: "Paper Title" -> "paper_title"."""
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def find_column(columns: Iterable[str], role: str, used: frozenset[str] = frozenset()) -> str | None:
    """The first column (not in ``used``) whose name is one of ``ROLE_NAMES[role]``, best name first."""
    by_name = {norm_name(c): c for c in reversed(list(columns)) if c not in used}
    return next((by_name[n] for n in ROLE_NAMES[role] if n in by_name), None)
