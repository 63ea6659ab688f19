"""Input files -> tables: format detection, decoding and one parser per format.

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
import csv
import gzip
import io
import itertools
import json
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.errors import InputError

FORMATS = ("text", "csv", "tsv", "json", "jsonl", "parquet")


def _split(words: str) -> list[str]:
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

_EXTENSIONS = {
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
_PARQUET_MAGIC = b"PAR1"
_SNIFF_BYTES = 1 << 16
YEAR_IN_TEXT = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d|2100)(?!\d)")
_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t]*\n)+")
# Words of a text file's title line that are not the venue ("NeurIPS 2026 Accepted Papers").
_HEADER_FILLER = frozenset(
    _split("papers paper abstracts abstract accepted proceedings of the conference submissions from in at and")
)
# Keys of a JSON object that may hold the list of records, best first.
_CONTAINER_KEYS = tuple(
    _split("papers data records items results rows entries documents docs articles publications abstracts")
)


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


def _describe_binary(data: bytes) -> str | None:
    """A phrase naming what a binary file looks like, or None for text."""
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            return what
    head = data[:_SNIFF_BYTES]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return None
    controls = sum(head.count(bytes([b])) for b in (*range(0, 9), 11, *range(14, 32), 127))
    if head and controls / len(head) > 0.05:
        share = controls / len(head)
        return f"binary data ({share:.0%} control bytes; UTF-16 text needs a byte order mark)"
    return None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _decode(path: Path, data: bytes) -> tuple[str, str, list[tuple[int, str, str, str]]]:
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
        raw = f.read(_SNIFF_BYTES)
    if raw.startswith(_GZIP_MAGIC):
        try:
            with gzip.open(path, "rb") as f:
                return f.read(_SNIFF_BYTES)
        except (OSError, EOFError, zlib.error):
            return b""
    return raw


def _sniff(head: bytes) -> str:
    """Guess a format from the first bytes of (decompressed) content."""
    if head.startswith(_PARQUET_MAGIC):
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
    fmt = _EXTENSIONS.get(ext)
    if not gz:
        with path.open("rb") as f:
            gz = f.read(2) == _GZIP_MAGIC
    if fmt is None:
        fmt = _sniff(_head(path))
    return f"{fmt}.gz" if gz else fmt


# ---------------------------------------------------------------------------------------------
# Parsing each format into a table
# ---------------------------------------------------------------------------------------------


def _parse_text(text: str, encoding: str) -> Table:
    """One abstract per blank-line separated paragraph; an optional first title line gives venue and year."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    numbers = list(range(1, len(paragraphs) + 1))
    defaults: dict[str, Any] = {}
    columns = {"abstract": "paragraph"}
    if paragraphs:
        first = paragraphs[0].strip()
        words = first.split()
        if "\n" not in first and len(words) <= 12 and not first.endswith((".", "!", "?")):
            year = YEAR_IN_TEXT.search(first)
            venue_words = [w for w in words if w.lower() not in _HEADER_FILLER and not YEAR_IN_TEXT.fullmatch(w)]
            if year or len(venue_words) < len(words):
                if venue_words:
                    defaults["venue"] = " ".join(venue_words)
                    columns["venue"] = "title line"
                if year:
                    defaults["year"] = int(year.group())
                    columns["year"] = "title line"
            paragraphs, numbers = paragraphs[1:], numbers[1:]
    abstracts = [" ".join(p.split("\n")).strip() for p in paragraphs]
    frame = pd.DataFrame({"paragraph": pd.Series(abstracts, dtype="str")})
    table = Table(frame, np.asarray(numbers, dtype=np.int64), encoding, len(abstracts), defaults=defaults)
    table.columns = columns
    return table


def _sniff_delimiter(text: str, preferred: str) -> str:
    """The delimiter that splits the first records into the most, equally wide, fields."""
    sample = text[:_SNIFF_BYTES]
    best, best_score = preferred, -1.0
    for delim in dict.fromkeys((preferred, ",", "\t", ";", "|")):
        try:
            records = [r for r in itertools.islice(csv.reader(io.StringIO(sample), delimiter=delim), 30) if r]
        except csv.Error:
            continue
        if len(records) < 1 or len(records[0]) < 2:
            continue
        width = len(records[0])
        body = records[1:-1] or records[1:]  # the last sampled record may be cut off
        score = width * (sum(len(r) == width for r in body) / len(body) if body else 0.5)
        if score > best_score + 1e-9:
            best, best_score = delim, score
    return best


def _unique_names(names: list[str]) -> list[str]:
    """Column names without BOMs, blanks or repeats ("a", "a" -> "a", "a.1")."""
    seen: dict[str, int] = {}
    out = []
    for i, name in enumerate(names):
        name = name.strip().lstrip("\ufeff") or f"column_{i + 1}"
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        else:
            seen[name] = 0
        out.append(name)
    return out


def _parse_delimited(path: Path, text: str, encoding: str, preferred: str) -> Table:
    """CSV or TSV with a header row; rows with too few fields are padded, extra fields kept aside."""
    delim = _sniff_delimiter(text, preferred)
    csv.field_size_limit(2**31 - 1)  # abstracts can be longer than csv's default 131,072 characters
    try:
        records = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delim) if r and any(r)]
    except csv.Error as e:
        raise InputError(f"{path}: is not readable as {'TSV' if delim == chr(9) else 'CSV'}: {e}.") from e
    if not records:
        raise InputError(f"{path}: is empty; expected a header row and rows of abstracts.")
    header = _unique_names(records[0])
    body = records[1:]
    if not body:
        raise InputError(f"{path}: has a header ({', '.join(header)}) but no data rows.")
    width = len(header)
    report = []
    lengths = np.fromiter((len(r) for r in body), dtype=np.int64, count=len(body))
    for i in np.flatnonzero(lengths != width):
        record = body[i]
        n = len(record)
        if n < width:
            body[i] = record + [""] * (width - n)
            detail = f"row has {n} fields, the header has {width}; the missing fields were left empty"
        else:
            body[i] = record[:width]
            overflow = record[width:]
            body[i].append(json.dumps(overflow, ensure_ascii=False))
            detail = (
                f"row has {n} fields, the header has {width}; the {n - width} extra field(s) were kept in "
                "'extra' as _overflow (quote fields that contain the delimiter)"
            )
        report.append((int(i) + 1, "changed", "ragged_row", detail))
    columns = header
    if any(len(r) > width for r in body):
        columns = [*header, "_overflow"]
        body = [r if len(r) > width else [*r, None] for r in body]
    frame = pd.DataFrame(body, columns=columns, dtype="str")
    if "_overflow" in frame:
        frame["_overflow"] = [json.loads(v) if isinstance(v, str) else None for v in frame["_overflow"]]
    return Table(frame, np.arange(1, len(frame) + 1), encoding, len(frame), report=report)


def _records_from_json(path: Path, obj: Any) -> list[Any] | pd.DataFrame:
    """The paper records in a parsed JSON document (a frame when it is column-oriented)."""
    if isinstance(obj, list):
        return obj
    if not isinstance(obj, dict):
        raise InputError(f"{path}: expected a JSON array of paper records, found a single {type(obj).__name__}.")
    lowered = {str(k).lower(): k for k in obj}
    for key in _CONTAINER_KEYS:
        if key in lowered and isinstance(obj[lowered[key]], list):
            return obj[lowered[key]]
    lists = [k for k, v in obj.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v[:50])]
    if len(lists) == 1:
        return obj[lists[0]]
    values = list(obj.values())
    if values and all(isinstance(v, list) for v in values):
        if len({len(v) for v in values}) == 1:
            return pd.DataFrame(obj)
        raise InputError(f"{path}: looks column-oriented, but its columns have different lengths.")
    if values and all(isinstance(v, dict) for v in values):
        inner = {str(k) for v in values[:50] for k in v}
        if find_column(list(inner), "abstract"):
            # {"paper-1": {"abstract": ...}, ...}: records keyed by id.
            records = [{"id": k, **v} if "id" not in v else v for k, v in obj.items()]
            return records
        return pd.DataFrame(obj).reset_index(drop=True)
    if find_column([str(k) for k in obj], "abstract"):
        return [obj]
    keys = ", ".join(map(str, list(obj)[:10]))
    raise InputError(
        f'{path}: expected a JSON array of paper records (or {{"papers": [...]}}), found an object with keys {keys}.'
    )


def _table_from_records(
    records: Sequence[Any], rows: Sequence[int], what: str
) -> tuple[pd.DataFrame, np.ndarray, list]:
    """Records (dicts; a bare string is an abstract) -> frame; anything else is a bad record."""
    good, good_rows, report = [], [], []
    for row, rec in zip(rows, records, strict=True):
        if isinstance(rec, dict):
            good.append(rec)
            good_rows.append(row)
        elif isinstance(rec, str):
            good.append({"abstract": rec})
            good_rows.append(row)
        else:
            kind = "null" if rec is None else type(rec).__name__
            report.append(
                (
                    row,
                    "skipped",
                    "bad_record",
                    f"{what} {row} is a {kind}, expected an object with an abstract",
                )
            )
    frame = pd.DataFrame.from_records(good) if good else pd.DataFrame()
    frame.columns = _unique_names([str(c) for c in frame.columns])
    return frame, np.asarray(good_rows, dtype=np.int64), report


def _parse_json(path: Path, text: str, encoding: str) -> Table:
    """A JSON document of records; JSON Lines saved as .json are read as such."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":  # several JSON documents: JSON Lines with a .json name
            return _parse_jsonl(path, text, encoding)
        raise InputError(
            f"{path}: is not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}; expected an array of "
            "paper records."
        ) from e
    records = _records_from_json(path, obj)
    if isinstance(records, pd.DataFrame):
        frame = records
        frame.columns = _unique_names([str(c) for c in frame.columns])
        return Table(frame, np.arange(1, len(frame) + 1), encoding, len(frame))
    frame, rows, report = _table_from_records(records, range(1, len(records) + 1), "record")
    return Table(frame, rows, encoding, len(records), report=report)


def _parse_jsonl(path: Path, text: str, encoding: str) -> Table:
    """One JSON object per line; a line that does not parse is a bad record, the others stay."""
    records, rows, report = [], [], []
    loads = json.loads
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip()
        if not line:
            continue
        try:
            records.append(loads(line))
            rows.append(number)
        except ValueError as e:
            col = f", column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
            msg = e.msg if isinstance(e, json.JSONDecodeError) else str(e)
            report.append((number, "skipped", "bad_record", f"line {number} is not valid JSON ({msg}{col})"))
    if not records and report:
        try:  # a pretty-printed JSON document with a .jsonl name
            json.loads(text)
        except ValueError:
            pass
        else:
            return _parse_json(path, text, encoding)
    frame, good_rows, bad = _table_from_records(records, rows, "line")
    return Table(frame, good_rows, encoding, len(records) + len(report), report=sorted(report + bad))


def _parse_parquet(path: Path, data: bytes) -> Table:
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except Exception as e:  # pyarrow raises many types for a damaged file
        raise InputError(f"{path}: expected a Parquet file, but it cannot be read: {e}.") from e
    frame.columns = _unique_names([str(c) for c in frame.columns])
    frame = frame.reset_index(drop=True)
    return Table(frame, np.arange(1, len(frame) + 1), "binary", len(frame))


def parse_table(path: Path, fmt: str, data: bytes) -> Table:
    """Parse a file's (decompressed) bytes in format ``fmt`` (as from ``detect_format``).

    Raises:
        InputError: binary or undecodable content, invalid JSON, a CSV without data rows, ...
    """
    base = fmt.removesuffix(".gz")
    if base == "parquet":
        if not data.startswith(_PARQUET_MAGIC):
            raise InputError(f"{path}: expected a Parquet file (it starts with 'PAR1'), found other content.")
        return _parse_parquet(path, data)
    what = _describe_binary(data)
    if what:
        raise InputError(f"{path}: expected text ({base}), found {what}.")
    text, encoding, notes = _decode(path, data)
    if base == "text":
        table = _parse_text(text, encoding)
    elif base in ("csv", "tsv"):
        table = _parse_delimited(path, text, encoding, "\t" if base == "tsv" else ",")
    elif base == "json":
        table = _parse_json(path, text, encoding)
    else:
        table = _parse_jsonl(path, text, encoding)
    table.report = notes + table.report
    return table


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
