"""Files brought from the browser: safe names, a preview of their columns, the corpus's inputs folder.

Layout under the artifacts root (hidden folders, so that ``list_corpora`` never mistakes them for
a corpus)::

    .inputs/<name>/               the corpus's input files as uploaded (names sanitised)
    .inputs/<name>/.corpus.json   its record: the files of the current build, in order, and the
                                  column mapping every build of it uses

Every rebuild reads all of a corpus's files, so that papers added later are placed into the
existing topics (the build's incremental path needs the old papers among the inputs). A preview
parses a file with the pipeline's own readers (``pipeline.ingest.readers``) and recognises its columns
with the build's own rule (``pipeline.ingest.ingest``), so it shows what the build will read and words a
problem as the command line does. Nothing here imports streamlit or writes a file on its own:
``explorer.services.jobs.submit`` writes, after checking the session may.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import unicodedata
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.core import artifacts
from pipeline.core.config import ColumnMap, IngestParams
from pipeline.core.errors import InputError
from pipeline.core.inputs import corpus_name
from pipeline.ingest.ingest import (
    mean_words,
    resolve_columns,  # the build's own rule, so the preview cannot disagree
)
from pipeline.ingest.readers import (
    EXTENSIONS,  # the formats the build recognises by extension
    detect_format,
    gunzip,
)
from pipeline.ingest.readers_formats import parse_table

INPUTS = ".inputs"
RECORD = ".corpus.json"
#: Longest stored file name (characters, extension included); longer names are cut.
MAX_NAME = 80
#: Rows of a file kept for the preview (the first ``PREVIEW_ROWS`` are shown; the rest feed the
#: build's "is this long column the abstract?" hint).
SAMPLE_ROWS = 200
PREVIEW_ROWS = 5
#: Roles in the order the page offers them; ``pipeline.ingest.readers.ROLES`` holds the same names.
ROLE_TITLES = {
    "abstract": "Abstract",
    "title": "Title",
    "year": "Year",
    "venue": "Venue",
    "authors": "Authors",
    "url": "Link",
    "id": "Paper id",
    "label": "Label",
    "keywords": "Keywords",
}


class UploadError(Exception):
    """A file or corpus cannot be taken as given; the message says why and what to do."""


# ------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------


def _known_suffixes() -> frozenset[str]:
    return frozenset(e.lstrip(".") for e in EXTENSIONS)


def safe_filename(name: str) -> str:
    """A file name that is safe to store: ASCII letters, digits, ``.``, ``_`` and ``-`` only.

    Folders in the name are dropped (``../../x.csv`` -> ``x.csv``), it never starts with a dot or a
    dash, it is at most ``MAX_NAME`` characters, and only an input extension the build knows is
    kept as one (``a.csv.gz``; ``run.py`` becomes ``run-py``, read by its content).
    """
    base = re.split(r"[\\/]", str(name))[-1]
    base = unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode()
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", base)
    parts = [p for p in base.split(".")]
    suffix: list[str] = []
    if len(parts) > 1 and parts[-1].lower() in ("gz", "gzip"):
        suffix.insert(0, parts.pop())
    if len(parts) > 1 and parts[-1].lower() in _known_suffixes():
        suffix.insert(0, parts.pop())
    ext = "".join(f".{s}" for s in suffix)
    stem = re.sub(r"[-.]{2,}", "-", "-".join(parts)).strip("-._")
    stem = stem[: MAX_NAME - len(ext)].rstrip("-._") or "upload"
    return stem + ext


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``stem-2.ext``, ``stem-3.ext``, ... when it is taken (case-insensitively)."""
    lower = {t.lower() for t in taken}
    if name.lower() not in lower:
        return name
    stem, dot, ext = name.partition(".")
    for n in range(2, 10_000):
        candidate = f"{stem[: MAX_NAME - len(ext) - 8]}-{n}{dot}{ext}"
        if candidate.lower() not in lower:
            return candidate
    raise UploadError(f"too many files named like {name!r}.")


def default_corpus_name(filename: str) -> str:
    """The corpus name the command line would give a corpus built from ``filename``."""
    return corpus_name(Path(safe_filename(filename)))


# ------------------------------------------------------------------------------------------
# Preview
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Preview:
    """One uploaded file as the build will read it.

    Attributes:
        name: the name it is stored (and reported) under: ``safe_filename`` of the upload's.
        original: the name it was uploaded with.
        format: ``csv``, ``jsonl.gz``, ... as ``pipeline.ingest.readers.detect_format`` says.
        size: bytes uploaded; ``data_size``: bytes after decompressing.
        rows: records found.
        columns: the file's own column names, in order.
        sample: its first ``SAMPLE_ROWS`` records, columns as in the file (display: ``head``).
        fixed: role -> column when the format decides (plain text: each paragraph is an abstract).
        defaults: values for every paper of the file (a text file's title line: venue, year).
        notes: problems the reader fixed in the whole file or in rows (the build's wording).
        error: why the build cannot use the file at all (the build's wording), else None.
    """

    name: str
    original: str
    format: str = ""
    size: int = 0
    data_size: int = 0
    sha256: str = ""
    rows: int = 0
    columns: tuple[str, ...] = ()
    sample: pd.DataFrame = field(default_factory=pd.DataFrame)
    fixed: dict[str, str] | None = None
    defaults: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def head(self) -> pd.DataFrame:
        return self.sample.head(PREVIEW_ROWS)


def preview(original: str, data: bytes) -> Preview:
    """Read an uploaded file with the build's readers (the whole file: the row count is real).

    The bytes go to a private temporary folder only while the format is detected (the readers
    sniff a file on disk); nothing is kept.
    """
    name = safe_filename(original)
    shown = Path(re.split(r"[\\/]", str(original))[-1] or name)  # messages name the file as the user knows it
    base = Preview(name, original, size=len(data), sha256=hashlib.sha256(data).hexdigest())
    if not data:
        return _replace(base, error=f"{shown}: is empty (0 bytes); expected abstracts.")
    try:
        with tempfile.TemporaryDirectory(prefix="atlas-preview-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(data if data[:2] == b"\x1f\x8b" else data[: 1 << 16])  # the readers sniff the head
            fmt = detect_format(path)
        raw = gunzip(shown, data) if fmt.endswith(".gz") else data
        if not raw.strip():
            raise InputError(f"{shown}: is empty (no content after decompressing); expected abstracts.")
        table = parse_table(shown, fmt, raw)
    except InputError as exc:
        return _replace(base, error=str(exc))
    frame = table.frame
    notes = tuple(f"row {r}: {detail}" if r else detail for r, _action, _reason, detail in table.report)
    base = _replace(
        base,
        format=fmt,
        data_size=len(raw),
        rows=table.rows_read,
        columns=tuple(str(c) for c in frame.columns),
        sample=frame.head(SAMPLE_ROWS).reset_index(drop=True),
        fixed=dict(table.columns) if table.columns else None,
        defaults=dict(table.defaults),
        notes=notes,
    )
    if frame.empty:
        return _replace(base, error=f"{shown}: has no records; expected abstracts.")
    return base


def _replace(p: Preview, **changes) -> Preview:
    from dataclasses import replace

    return replace(p, **changes)


def resolve(p: Preview, explicit: dict[str, str]) -> tuple[dict[str, str], str | None]:
    """Role -> column as the build will read ``p`` with the ``explicit`` mapping (the rest
    recognised by name), or ``({}, message)`` when it cannot (the build's message)."""
    if p.fixed is not None:
        return dict(p.fixed), None
    try:
        params = IngestParams(columns=ColumnMap(**{r: c for r, c in explicit.items() if c}))
        found = resolve_columns(Path(p.name), p.sample, params)
    except InputError as exc:
        return {}, str(exc).replace("--abstract-column NAME", "the Abstract list below")
    return {role: found[role] for role in ROLE_TITLES if role in found}, None


def guess_abstract(p: Preview) -> str | None:
    """The column the build would suggest as the abstract when none has an abstract's name: the
    one with the longest texts, if they average at least 15 words (the build's own hint)."""
    if p.fixed is not None or p.sample.empty:
        return None
    lengths = {c: mean_words(p.sample[c]) for c in p.columns[:50]}
    longest = max(lengths, key=lengths.__getitem__, default=None)
    return longest if longest is not None and lengths[longest] >= 15 else None


def all_columns(previews: list[Preview]) -> list[str]:
    """The columns of the tabular files, first seen first (the choices of the mapping)."""
    return list(dict.fromkeys(c for p in previews if p.ok and p.fixed is None for c in p.columns))


# ------------------------------------------------------------------------------------------
# The corpus's inputs folder
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputFile:
    """One stored input file of a corpus."""

    name: str
    original: str
    bytes: int
    sha256: str

    def to_dict(self) -> dict:
        return {"name": self.name, "original": self.original, "bytes": self.bytes, "sha256": self.sha256}


@dataclass(frozen=True)
class Record:
    """A corpus's inputs as the last successful build read them.

    Attributes:
        files: its input files, in build order.
        columns: explicit role -> column mapping given to every build (the rest is recognised).
        ingest: other reading settings every build repeats (``min_words``, ``venue``, ``year``).
    """

    name: str
    files: tuple[InputFile, ...] = ()
    columns: dict[str, str] = field(default_factory=dict)
    ingest: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "files": [f.to_dict() for f in self.files],
            "columns": dict(self.columns),
            "ingest": dict(self.ingest),
        }

    @classmethod
    def from_dict(cls, data: dict) -> Record:
        return cls(
            name=str(data["name"]),
            files=tuple(InputFile(**f) for f in data.get("files", [])),
            columns={str(k): str(v) for k, v in (data.get("columns") or {}).items() if v},
            ingest=dict(data.get("ingest") or {}),
        )


def inputs_dir(root: Path, name: str, *, create: bool = False) -> Path:
    """The inputs folder of corpus ``name``, guaranteed to lie inside ``root`` (no symbolic link
    on the way); made when ``create``.

    Raises:
        ArtifactError: invalid corpus name. UploadError: a link or a file where the folder should be.
    """
    artifacts.check_name(name)
    root = Path(root).resolve()
    base = root / INPUTS
    folder = base / name
    for path in (base, folder):
        if path.is_symlink():
            raise UploadError(f"{path} is a symbolic link: refusing to store uploads through it.")
        if path.exists() and not path.is_dir():
            raise UploadError(f"{path} is not a folder: refusing to store uploads there.")
    if create:
        base.mkdir(parents=True, exist_ok=True)
        folder.mkdir(exist_ok=True)
    if folder.exists() and folder.resolve().parent != base.resolve():
        raise UploadError(f"{folder} leads outside the artifacts folder: refusing to use it.")
    return folder


def write_new_file(folder: Path, name: str, data: bytes) -> Path:
    """Write ``data`` to ``folder/name``, which must not exist (never through a link), atomically."""
    if safe_filename(name) != name:
        raise UploadError(f"{name!r} is not a safe file name.")
    target = folder / name
    tmp = folder / f".upload-{uuid.uuid4().hex}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if os.path.lexists(target):
            raise UploadError(f"{target.name} already exists.")
        os.link(tmp, target)  # fails, instead of replacing, if the name appeared meanwhile
    finally:
        tmp.unlink(missing_ok=True)
    return target


def read_record(root: Path, name: str) -> Record | None:
    """The record of a corpus built from the browser, or None."""
    path = inputs_dir(root, name) / RECORD
    if not path.is_file() or path.is_symlink():
        return None
    try:
        return Record.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_record(root: Path, record: Record) -> None:
    artifacts.write_json(inputs_dir(root, record.name, create=True) / RECORD, record.to_dict())


def manifest_inputs(root: Path, name: str, project: Path) -> tuple[list[tuple[Path, dict]], str | None]:
    """The input files a command-line build of ``name`` read, if they are still on this server
    unchanged (same SHA-256): ``([(path, manifest entry)], None)``, or ``([], why not)``.

    Relative paths are looked up from the project folder (``make build`` gives the bundled
    corpus's files that way)."""
    try:
        manifest = artifacts.read_manifest(artifacts.corpus_path(root, name))
    except artifacts.ArtifactError as exc:
        return [], str(exc)
    found = []
    for entry in manifest.inputs:
        path = Path(str(entry.get("path", "")))
        path = path if path.is_absolute() else project / path
        try:
            same = path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == entry.get("sha256")
        except OSError:
            same = False
        if not same:
            return [], (
                f"its input file {entry.get('path')} is not on this server any more (or has changed), and every "
                "rebuild reads all of a corpus's files. Add the papers as a new corpus, or rebuild it with "
                "`python -m pipeline build`."
            )
        found.append((path, entry))
    if not found:
        return [], "its manifest lists no input files."
    return found, None


def corpus_files(root: Path, name: str, project: Path) -> list[Path]:
    """The input files of corpus ``name`` as its next build reads them: its inputs folder's, or
    those of its command-line build when they are still here (else none)."""
    record = read_record(root, name)
    if record is not None:
        folder = inputs_dir(root, name)
        return [folder / f.name for f in record.files]
    return [path for path, _ in manifest_inputs(root, name, project)[0]]


def manifest_settings(root: Path, name: str) -> tuple[dict[str, str], dict]:
    """The explicit columns and reading settings a command-line build of ``name`` used."""
    manifest = artifacts.read_manifest(artifacts.corpus_path(root, name))
    ingest = (manifest.params or {}).get("ingest", {})
    columns = {str(k): str(v) for k, v in (ingest.get("columns") or {}).items() if v}
    kept = {k: ingest[k] for k in ("min_words", "venue", "year") if ingest.get(k) is not None}
    return columns, kept
