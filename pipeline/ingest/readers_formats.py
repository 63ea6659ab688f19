"""The input readers, one per format family: plain text (one abstract per paragraph), delimited
(CSV, TSV), JSON and JSON Lines, Parquet; :func:`parse_table` picks one by the detected format.

Detecting the format, decoding bytes and naming columns are in ``pipeline.ingest.readers``.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.core.errors import InputError
from pipeline.ingest.readers import (
    PARQUET_MAGIC,
    SNIFF_BYTES,
    YEAR_IN_TEXT,
    Table,
    decode,
    describe_binary,
    find_column,
    split_words,
)

_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t]*\n)+")
# Words of a text file's title line that are not the venue ("NeurIPS 2026 Accepted Papers").
_HEADER_FILLER = frozenset(
    split_words("papers paper abstracts abstract accepted proceedings of the conference submissions from in at and")
)
# Keys of a JSON object that may hold the list of records, best first.
_CONTAINER_KEYS = tuple(
    split_words("papers data records items results rows entries documents docs articles publications abstracts")
)


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
    sample = text[:SNIFF_BYTES]
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
        if not data.startswith(PARQUET_MAGIC):
            raise InputError(f"{path}: expected a Parquet file (it starts with 'PAR1'), found other content.")
        return _parse_parquet(path, data)
    what = describe_binary(data)
    if what:
        raise InputError(f"{path}: expected text ({base}), found {what}.")
    text, encoding, notes = decode(path, data)
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
