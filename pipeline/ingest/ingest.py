"""Input files -> papers: recognise columns, check every row, dedupe, give ids and titles.

Reading and parsing each format is ``pipeline.ingest.readers``'s job; this stage turns its tables into one
table of papers. Problems are handled at three levels:

* a row that cannot be a paper is skipped, and a field that had to be dropped or fixed is changed;
  both get a row in ``IngestResult.report`` (columns ``schema.INGEST_REPORT_COLUMNS``);
* a file that cannot be used at all raises ``InputError`` naming the file, what was expected and
  what was found (with several files, one unusable file stops the whole ingest);
* nothing else raises: good rows always survive bad neighbours.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.core.config import IngestParams
from pipeline.core.errors import InputError
from pipeline.core.schema import INGEST_REPORT_COLUMNS
from pipeline.ingest.clean import normalize_display
from pipeline.ingest.clean_workers import clean_chunks
from pipeline.ingest.ingest_papers import assemble
from pipeline.ingest.readers import (
    FORMATS,
    ROLES,
    YEAR_IN_TEXT,
    Table,
    detect_format,
    find_column,
    gunzip,
    read_bytes,
)
from pipeline.ingest.readers_formats import parse_table

__all__ = ["FORMATS", "IngestResult", "InputInfo", "detect_format", "ingest"]

ProgressFn = Callable[[int, int], None]

REPORT_COLUMNS = list(INGEST_REPORT_COLUMNS)

_CHUNK = 2000  # rows cleaned between progress calls
_MISSING_WORDS = frozenset({"", "nan", "none", "null", "n/a", "na", "-", "--", "unknown", "?"})


@dataclass(frozen=True)
class InputInfo:
    """One input file, as recorded in the manifest.

    Attributes:
        path: the path as given.
        sha256: hash of the file's bytes (compressed bytes for ``.gz``).
        bytes: size of the file.
        format: "text", "csv", "tsv", "json", "jsonl" or "parquet", with ".gz" when gzipped.
        encoding: the text encoding used ("utf-8", "utf-8-sig", "utf-16", "cp1252", ...; "binary"
            for Parquet).
        rows_read: records found (paragraphs for text files, lines for JSON Lines).
        rows_kept: papers kept from this file.
        columns: role (abstract, title, year, ...) -> the source column used for it.
    """

    path: str
    sha256: str
    bytes: int
    format: str
    encoding: str
    rows_read: int
    rows_kept: int
    columns: dict[str, str]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class IngestResult:
    """What ``ingest`` returns.

    Attributes:
        papers: one row per kept paper; columns ``ingest_papers.PAPER_COLUMNS`` in that order, ``doc_id`` unique.
        report: one row per skipped or changed input row; columns ``source_file, source_row, action,
            reason, detail`` (``source_row`` 0 is about the whole file).
        inputs: one ``InputInfo`` per input file, in the order given.
    """

    papers: pd.DataFrame
    report: pd.DataFrame
    inputs: list[InputInfo]

    def summary(self) -> dict[str, int]:
        """Counts: files, read, kept, skipped, changed, then one count per reason."""
        action = self.report["action"]
        counts = {
            "files": len(self.inputs),
            "read": sum(info.rows_read for info in self.inputs),
            "kept": len(self.papers),
            "skipped": int((action == "skipped").sum()),
            "changed": int((action == "changed").sum()),
        }
        for reason, n in self.report["reason"].value_counts(sort=True).items():
            counts[str(reason)] = int(n)
        return counts


# ---------------------------------------------------------------------------------------------
# Columns and values
# ---------------------------------------------------------------------------------------------


def resolve_columns(path: Path, frame: pd.DataFrame, params: IngestParams) -> dict[str, str]:
    """Role -> source column: explicit names from ``params.columns`` first, then common names."""
    columns = [str(c) for c in frame.columns]
    found: dict[str, str] = {}
    for role in ROLES:
        wanted = getattr(params.columns, role)
        if wanted is None:
            continue
        match = wanted if wanted in columns else next((c for c in columns if c.lower() == wanted.lower()), None)
        if match is None:
            raise InputError(
                f"{path}: has no column {wanted!r} (given for the {role}); its columns are: {_names(columns)}."
            )
        found[role] = match
    for role in ROLES:
        if role not in found:
            col = find_column(columns, role, frozenset(found.values()))
            if col is not None:
                found[role] = col
    if "abstract" not in found:
        hint = ""
        lengths = {c: mean_words(frame[c].head(200)) for c in columns[:50]}
        longest = max(lengths, key=lengths.__getitem__, default=None)
        if longest is not None and lengths[longest] >= 15:
            hint = f" The column {longest!r} holds long texts (about {lengths[longest]:.0f} words): is it the abstract?"
        raise InputError(
            f"{path}: found no abstract column; expected one named abstract, summary, text or description. "
            f"Its columns are: {_names(columns)}. Map one with --abstract-column NAME.{hint}"
        )
    return found


def _names(columns: list[str], limit: int = 30) -> str:
    """Column names for a message: each cut to 40 characters, at most ``limit`` of them."""
    shown = [c if len(c) <= 40 else c[:39] + "…" for c in columns[:limit]]
    more = f", … ({len(columns) - limit} more)" if len(columns) > limit else ""
    return ", ".join(shown) + more if shown else "(none)"


def mean_words(values: pd.Series) -> float:
    texts = [len(t.split()) for t in _texts(values) if isinstance(t, str)]
    return sum(texts) / len(texts) if texts else 0.0


def _value_text(value: Any, sep: str) -> str | None:
    """One input value as display text (lists joined with ``sep``), or None when missing."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, str):
        value = value.replace("\x00", "").strip()
        return value if value.lower() not in _MISSING_WORDS else None
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return None
        return str(int(value)) if float(value).is_integer() else str(value)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, list | tuple):
        parts = [_value_text(v.get("name", v) if isinstance(v, dict) else v, sep) for v in value]
        joined = sep.join(p for p in parts if p)
        return joined or None
    if isinstance(value, dict):
        return json.dumps(_jsonable(value), ensure_ascii=False)
    if isinstance(value, np.generic):
        return _value_text(value.item(), sep)
    if isinstance(value, datetime | date | pd.Timestamp):
        return value.isoformat()
    return str(value).strip() or None


def _texts(values: pd.Series, sep: str = "; ") -> pd.Series:
    """A column as stripped text with missing values as NaN (dtype str)."""
    if isinstance(values.dtype, pd.StringDtype):
        out = values.str.replace("\x00", "", regex=False).str.strip()
        return out.where(~out.str.lower().isin(_MISSING_WORDS))
    return pd.Series([_value_text(v, sep) for v in values], index=values.index, dtype="str")


def _parse_years(values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Years as Int16 and a mask of non-empty values that are not a year (1800-2100)."""
    if pd.api.types.is_datetime64_any_dtype(values):
        years = values.dt.year.astype("Float64")
        bad = pd.Series(False, index=values.index)
    else:
        text = _texts(values)
        years = text.str.extract(YEAR_IN_TEXT, expand=False).astype("Float64")
        bad = text.notna() & years.isna()
    out_of_range = years.notna() & ((years < 1800) | (years > 2100))
    years = years.mask(out_of_range)
    return years.astype("Int16"), bad | out_of_range


def _jsonable(value: Any) -> Any:
    """A value JSON can hold: NaN -> None, arrays -> lists, dates -> ISO strings."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, np.ndarray | list | tuple):
        return [_jsonable(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, datetime | date | pd.Timestamp):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _extra(frame: pd.DataFrame, names: list[str]) -> list[str]:
    """The other columns of each row as a JSON object string."""
    if not names:
        return ["{}"] * len(frame)
    columns = []
    for name in names:
        col = frame[name]
        if isinstance(col.dtype, pd.StringDtype):
            # CSV has no null: an empty field is as missing as JSON's null.
            columns.append([v if isinstance(v, str) and v else None for v in col])
        else:
            columns.append([_jsonable(v) for v in col])
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    return [dumps(dict(zip(names, row, strict=True))) for row in zip(*columns, strict=True)]


# ---------------------------------------------------------------------------------------------
# One file -> candidate papers
# ---------------------------------------------------------------------------------------------


def _standardise(
    path: Path, label: str, table: Table, params: IngestParams
) -> tuple[pd.DataFrame, dict[str, str], list[tuple[int, str, str, str]]]:
    """A parsed table -> one row per input row with the papers' fields, before row checks."""
    frame = table.frame
    report = list(table.report)
    columns = table.columns or resolve_columns(path, frame, params)
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    out["source_row"] = table.rows.astype(np.int64)
    out["abstract"] = _texts_for_display(frame[columns["abstract"]]).array
    if "title" in columns and columns["title"] in frame:
        titles = _texts(frame[columns["title"]])
        out["given_title"] = pd.array(
            [" ".join(normalize_display(t).split()) if isinstance(t, str) else None for t in titles],
            dtype="str",
        )
    else:
        out["given_title"] = pd.array([None] * len(frame), dtype="str")
    if "year" in columns and columns["year"] in frame:
        years, bad = _parse_years(frame[columns["year"]])
        raw = frame[columns["year"]]
        for i in np.flatnonzero(bad.to_numpy()):
            report.append(
                (
                    int(table.rows[i]),
                    "changed",
                    "bad_year",
                    f"year {str(raw.iloc[i])[:40]!r} is not a year; kept without one",
                )
            )
        out["year"] = years.array
    else:
        out["year"] = pd.array([pd.NA] * len(frame), dtype="Int16")
    file_year = table.defaults.get("year", params.year)
    if file_year is not None:
        out["year"] = out["year"].fillna(file_year)
    for role, target in (
        ("venue", "venue"),
        ("authors", "authors"),
        ("url", "url"),
        ("id", "source_id"),
        ("label", "label"),
        ("keywords", "keywords"),
    ):
        if role in columns and columns[role] in frame:
            out[target] = _texts(frame[columns[role]]).array
        else:
            out[target] = pd.array([None] * len(frame), dtype="str")
    venue = table.defaults.get("venue", params.venue)
    if venue is not None:
        out["venue"] = out["venue"].fillna(venue)
    used = set(columns.values())
    out["extra"] = _extra(frame, [c for c in frame.columns if c not in used])
    out["source_file"] = label
    return out, columns, report


def _texts_for_display(values: pd.Series) -> pd.Series:
    """Abstract values as display text ("" when missing); a list of paragraphs is joined by blank lines."""
    texts = _texts(values, sep="\n\n")
    return pd.Series([normalize_display(t) if isinstance(t, str) else "" for t in texts], dtype="str")


# ---------------------------------------------------------------------------------------------
# All files -> papers
# ---------------------------------------------------------------------------------------------


#: Scripts written without spaces between words (Chinese, Japanese kana): each character counts as
#: a word, or a whole abstract in them would be "one word" and skipped as too short.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _word_count(text: str) -> int:
    tokens = text.split()
    unspaced = len(_UNSPACED.findall(text))
    if not unspaced:
        return len(tokens)
    return unspaced + sum(1 for t in tokens if not _UNSPACED.search(t))


def _check_rows(
    frame: pd.DataFrame, cleaned: pd.Series, params: IngestParams
) -> tuple[pd.Series, list[tuple[int, str, str, str]]]:
    """Skip empty or short abstracts; returns the cleaned abstracts of usable rows (NaN elsewhere)."""
    n_words = pd.Series([_word_count(c) for c in cleaned], index=cleaned.index)
    abstracts = frame["abstract"]
    empty = (abstracts.str.len() == 0) | (n_words == 0)
    short = ~empty & (n_words < params.min_words)
    report = []
    for i in np.flatnonzero(empty.to_numpy()):
        had_text = len(abstracts.iat[i]) > 0
        detail = "abstract has no words once markup is removed" if had_text else "abstract is empty"
        report.append((int(frame["source_row"].iat[i]), "skipped", "empty_abstract", detail))
    for i in np.flatnonzero(short.to_numpy()):
        detail = (
            f"abstract has {n_words.iat[i]} word(s), fewer than {params.min_words} "
            f"(lower the minimum with --min-words): {abstracts.iat[i][:60]!r}"
        )
        report.append((int(frame["source_row"].iat[i]), "skipped", "short_abstract", detail))
    return cleaned.where(~(empty | short)), report


def _no_usable_rows(path: Path, n: int, report: list[tuple[int, str, str, str]], columns: dict) -> InputError:
    reasons = pd.Series([r[2] for r in report if r[1] == "skipped"]).value_counts()
    why = ", ".join(f"{k} {v}" for k, v in reasons.items()) or "no rows"
    skipped = sorted((r for r in report if r[1] == "skipped"), key=lambda r: r[0])
    first = f" First problem, row {skipped[0][0]}: {skipped[0][3]}." if skipped else ""
    hint = ""
    if "abstract" in columns:
        hint = (
            f" The abstract column used is {columns['abstract']!r}: map another one with --abstract-column NAME,"
            " or lower --min-words."
        )
    return InputError(f"{path}: none of its {n} rows can be used ({why}).{first}{hint}")


@dataclass
class _File:
    """One input file read and standardised (see ``_standardise``), before its rows are checked."""

    path: Path
    label: str
    frame: pd.DataFrame | None
    columns: dict[str, str]
    report: list[tuple[int, str, str, str]]
    info: dict[str, Any]


def _precheck(path: Path) -> int:
    """The size of an input file; InputError at once when it is missing, a folder or empty."""
    if not path.is_file():
        read_bytes(path)  # raises the message for a missing file or a folder
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"{path}: is empty (0 bytes); expected abstracts.")
    return size


def _read(path: Path, label: str, params: IngestParams) -> _File:
    raw = read_bytes(path)
    if not raw:
        raise InputError(f"{path}: is empty (0 bytes); expected abstracts.")
    fmt = detect_format(path)
    data = gunzip(path, raw) if fmt.endswith(".gz") else raw
    if not data.strip():
        raise InputError(f"{path}: is empty (no content after decompressing); expected abstracts.")
    table = parse_table(path, fmt, data)
    if table.frame.empty:
        raise _no_usable_rows(path, table.rows_read, table.report, {})
    frame, columns, report = _standardise(path, label, table, params)
    info = dict(
        path=str(path),
        sha256=hashlib.sha256(raw).hexdigest(),
        bytes=len(raw),
        format=fmt,
        encoding=table.encoding,
        rows_read=table.rows_read,
        columns=dict(columns),
    )
    return _File(path, label, frame, columns, report, info)


def ingest(
    paths: Sequence[str | Path],
    params: IngestParams = IngestParams(),
    *,
    progress: ProgressFn | None = None,
) -> IngestResult:
    """Read input files into one table of papers, with a report of every row skipped or changed.

    Args:
        paths: input files (text, CSV, TSV, JSON, JSON Lines, Parquet; each may be gzipped).
        params: column names, minimum words, dedupe, default venue and year.
        progress: called as ``progress(rows_done, rows_total)`` while abstracts are cleaned (the
            slow part), and once more with ``(total, total)`` when the papers are assembled.

    Returns:
        ``IngestResult`` with ``papers`` (columns ``ingest_papers.PAPER_COLUMNS``), ``report`` and one
        ``InputInfo`` per file.

    Raises:
        InputError: a file is missing, empty, binary, has no abstract column or no usable row. The
            message names the file and says what to do.
    """
    if isinstance(paths, str | Path):
        paths = [paths]
    if not paths:
        raise InputError("no input files given; expected one or more files of abstracts.")
    paths = [Path(p) for p in paths]
    names = [p.name for p in paths]
    labels = [str(p) if names.count(p.name) > 1 else p.name for p in paths]

    # Files that are missing, folders or empty fail before any file is read; then each file is
    # read, parsed, cleaned and checked in turn, and only its candidate rows are kept, so memory
    # holds one file's raw bytes and parsed table at a time (a million papers in ten files: about
    # half the peak of parsing them all first).
    sizes = [_precheck(path) for path in paths]
    done = 0
    frames, reports, infos = [], [], []
    for k, (path, label) in enumerate(zip(paths, labels, strict=True)):
        file = _read(path, label, params)
        rows_so_far = done + len(file.frame)
        # Rows of the files not read yet, estimated from the bytes per row of those read so far.
        per_byte = rows_so_far / max(1, sum(sizes[: k + 1]))
        total = rows_so_far + round(per_byte * sum(sizes[k + 1 :]))
        cleaned = []
        with closing(clean_chunks(file.frame["abstract"].array, _CHUNK)) as parts:
            for part in parts:
                cleaned += part
                done += len(part)
                if progress:
                    progress(done, total)
        cleaned = pd.Series(cleaned, index=file.frame.index, dtype="str")
        usable, row_report = _check_rows(file.frame, cleaned, params)
        del cleaned
        file.report += row_report
        if usable.notna().sum() == 0:
            raise _no_usable_rows(file.path, file.info["rows_read"], file.report, file.columns)
        keep = usable.notna().to_numpy()
        frames.append(file.frame[keep].assign(_clean=usable[keep], _file=k).reset_index(drop=True))
        reports.append(
            pd.DataFrame(file.report, columns=["source_row", "action", "reason", "detail"]).assign(
                source_file=file.label, _file=k
            )
        )
        infos.append(file.info)
        del file, usable  # the candidate rows hold this file's papers from here on
    total = done

    papers, extra_report = assemble(pd.concat(frames, ignore_index=True), params)
    report = pd.concat([*reports, extra_report], ignore_index=True)
    report = report.sort_values(["_file", "source_row"], kind="stable").reset_index(drop=True)
    report = report[REPORT_COLUMNS].astype({c: "str" for c in REPORT_COLUMNS if c != "source_row"})
    report["source_row"] = report["source_row"].astype(np.int32)
    kept = papers["source_file"].value_counts()
    inputs = [InputInfo(**info, rows_kept=int(kept.get(label, 0))) for info, label in zip(infos, labels, strict=True)]
    if progress:
        progress(total, total)
    return IngestResult(papers=papers, report=report, inputs=inputs)
