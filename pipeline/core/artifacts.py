"""Reading and writing built corpora on disk, safely.

Layout under an artifacts root (``artifacts/`` by default)::

    <name>                  -> .builds/<name>/<build_id>   (relative symlink: the current build)
    .builds/<name>/<build_id>/manifest.json, papers.parquet, ...   (see pipeline/core/schema.py)
    .cache/embeddings/<model_key>/   vectors cached per text (pipeline/embed/embed_store.py)
    .cache/models/                   ONNX exports of the embedding model
    .cache/stages/<key>/             cached projections
    .locks/<name>.lock               one build of a corpus at a time
    <name>.curation.json             the user's edits to a corpus (rename, merge, move)

A build is written into a fresh ``.builds/<name>/<build_id>`` folder, manifest last, and published
by replacing the ``<name>`` symlink in one atomic rename (:func:`publish`); only then are older
builds deleted (:func:`discard_stale_builds`, which never deletes what ``<name>`` points at). So
after an interrupt at any point (SIGINT, SIGTERM, even SIGKILL) exactly one complete build is
loadable: the previous one if the swap had not happened, the new one if it had
(:func:`current_build` says which). SIGINT and SIGTERM that arrive during the swap are held until
it is done. A plain folder copied in by hand as ``<name>`` is a supported layout too: publishing
moves it into ``.builds/<name>/imported-*`` and links the new build in its place.

Nothing here unpickles: tables are Parquet, arrays ``.npy`` loaded with ``allow_pickle=False``.

This module imports only the standard library, numpy and pandas so the app can use it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pipeline.core import schema
from pipeline.core.manifest import Manifest

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
BUILDS = ".builds"
CACHE = ".cache"
LOCKS = ".locks"


class ArtifactError(Exception):
    """A corpus cannot be read; the message says which and what to do."""


def check_name(name: str) -> str:
    """Validate a corpus name (letters, digits, ``.``, ``_``, ``-``; no paths)."""
    if not isinstance(name, str) or not NAME_RE.match(name) or name in (".", "..") or ".." in name:
        raise ArtifactError(
            f"{name!r} is not a valid corpus name: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    return name


def corpus_path(root: Path, name: str) -> Path:
    """The folder of corpus ``name``'s current build, guaranteed to lie inside ``root``.

    Raises:
        ArtifactError: invalid name, no such corpus, or a link that leaves the artifacts folder.
    """
    check_name(name)
    root_resolved = Path(root).resolve()
    link = root_resolved / name
    if not link.exists():
        raise ArtifactError(
            f"no corpus named {name!r} in {root}. Build it with: python -m pipeline build FILES --name {name}"
        )
    resolved = link.resolve()
    if root_resolved not in resolved.parents:
        raise ArtifactError(f"corpus {name!r} points outside the artifacts folder {root}; refusing to read it.")
    return resolved


def read_manifest(folder: Path) -> Manifest:
    """Read and check a build's manifest (``pipeline.core.manifest.Manifest``; ``to_dict()`` gives its JSON).

    Raises:
        ArtifactError: missing, unreadable, or from an incompatible schema version.
    """
    path = folder / schema.MANIFEST
    name = folder.parent.name if folder.parent.parent.name == BUILDS else folder.name
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactError(f"corpus {name!r} has no {schema.MANIFEST}: the build is incomplete. Rebuild it.") from None
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"corpus {name!r}: {schema.MANIFEST} is damaged ({exc}). Rebuild it.") from None
    if not isinstance(manifest, dict):
        raise ArtifactError(f"corpus {name!r}: {schema.MANIFEST} is damaged (not an object). Rebuild it.")
    version = manifest.get("schema_version")
    if version != schema.SCHEMA_VERSION:
        raise ArtifactError(
            f"corpus {name!r} was built with artifact schema {version}, this version reads schema "
            f"{schema.SCHEMA_VERSION}. Rebuild it: python -m pipeline build --name {name} "
            "(with its input files; `python -m pipeline info NAME` lists them)."
        )
    return Manifest.from_dict(manifest)


def read_table(folder: Path, file: str, columns: list[str] | None = None):
    """A Parquet table of a build, with a clear error if it is missing or damaged."""
    import pandas as pd

    try:
        return pd.read_parquet(folder / file, columns=columns)
    except FileNotFoundError:
        raise ArtifactError(f"{folder.parent.name}: {file} is missing. Rebuild the corpus.") from None
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise ArtifactError(
            f"{folder.parent.name}: {file} is damaged ({type(exc).__name__}). Rebuild the corpus."
        ) from None


def read_array(folder: Path, file: str, *, mmap: bool = False):
    """A ``.npy`` array of a build; never unpickles."""
    import numpy as np

    try:
        return np.load(folder / file, allow_pickle=False, mmap_mode="r" if mmap else None)
    except FileNotFoundError:
        raise ArtifactError(f"{folder.parent.name}: {file} is missing. Rebuild the corpus.") from None
    except (ValueError, OSError, EOFError) as exc:
        raise ArtifactError(f"{folder.parent.name}: {file} is damaged ({exc}). Rebuild the corpus.") from None


@dataclass(frozen=True)
class CorpusEntry:
    """One corpus in an artifacts folder, readable or not."""

    name: str
    path: Path | None
    manifest: Manifest | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def list_corpora(root: Path) -> list[CorpusEntry]:
    """Every corpus under ``root`` (its current builds), sorted by name; broken ones carry an error."""
    root = Path(root)
    if not root.is_dir():
        return []
    out = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or not NAME_RE.match(entry.name) or not (entry.is_dir() or entry.is_symlink()):
            continue
        try:
            folder = corpus_path(root, entry.name)
            out.append(CorpusEntry(entry.name, folder, read_manifest(folder), None))
        except ArtifactError as exc:
            out.append(CorpusEntry(entry.name, None, None, str(exc)))
    return out


def cache_dir(root: Path) -> Path:
    return Path(root) / CACHE


@contextmanager
def build_lock(root: Path, name: str, *, timeout: float = 0) -> Iterator[None]:
    """Hold the corpus's build lock; a second build of the same corpus fails clearly.

    Raises:
        ArtifactError: another build of ``name`` holds the lock.
    """
    from filelock import FileLock, Timeout

    locks = Path(root) / LOCKS
    locks.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(locks / f"{check_name(name)}.lock"))
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise ArtifactError(
            f"another build of corpus {name!r} is running (lock {locks / (name + '.lock')}). Wait for it to finish."
        ) from None
    try:
        yield
    finally:
        lock.release()


def new_build_dir(root: Path, name: str) -> Path:
    """A fresh, empty folder for a build of ``name`` (published later by :func:`publish`)."""
    build_id = time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
    folder = Path(root) / BUILDS / check_name(name) / build_id
    folder.mkdir(parents=True)
    return folder


@contextmanager
def deferred_signals(signums: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> Iterator[None]:
    """Hold SIGINT and SIGTERM during a step that must not be cut in two; deliver them after it.

    The first signal that arrived is then handled as it would have been (its previous handler is
    called: Ctrl-C raises ``KeyboardInterrupt``; the default SIGTERM action ends the process).
    Only the main thread receives signals in Python, so elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _frame: held.append(signum)) for s in signums}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        if held:
            handler = previous[held[0]]
            if callable(handler):
                handler(held[0], None)
            elif handler in (None, signal.SIG_DFL):
                os.kill(os.getpid(), held[0])


def publish(root: Path, name: str, folder: Path) -> None:
    """Make ``folder`` (complete, manifest written) the current build of ``name`` in one atomic step.

    Only swaps the ``<name>`` link; nothing is deleted here (call :func:`discard_stale_builds`
    after it). SIGINT and SIGTERM are held during the swap (:func:`deferred_signals`), so an
    interrupt lands either before it (the old build stays current) or after it (the new one is).
    """
    root = Path(root)
    link = root / name
    with deferred_signals():
        if link.exists() and not link.is_symlink():
            # A plain folder (copied in by hand): move it aside into .builds so the swap stays atomic.
            aside = root / BUILDS / name / f"imported-{uuid.uuid4().hex[:8]}"
            aside.parent.mkdir(parents=True, exist_ok=True)
            os.replace(link, aside)
        tmp_link = root / f".{name}.{uuid.uuid4().hex[:8]}.link"
        os.symlink(os.path.relpath(folder, root), tmp_link)
        os.replace(tmp_link, link)


@dataclass(frozen=True)
class BuildRef:
    """The build a corpus name points at.

    Attributes:
        name: the corpus.
        build_id: its build folder's name (a plain folder copied in by hand: the corpus name).
        created_at: when it was built (its manifest's ``created_at``).
        folder: the build folder.
    """

    name: str
    build_id: str
    created_at: str | None
    folder: Path


def current_build(root: Path, name: str) -> BuildRef | None:
    """The complete build ``<root>/<name>`` points at now, or None when there is none (never built,
    or unreadable)."""
    try:
        folder = corpus_path(root, name)
        manifest = read_manifest(folder)
    except ArtifactError:
        return None
    return BuildRef(name, folder.name, manifest.created_at, folder)


def discard_stale_builds(root: Path, name: str) -> None:
    """Delete every build folder of ``name`` except the current one (left by interrupted builds, or
    replaced by a newer build), and stray temporary links. Call it holding the build lock.

    The current build is looked up again before each deletion, so this never deletes what
    ``<name>`` points at. If ``<name>`` is missing while a hand-copied folder that publishing had
    moved aside still exists (a build killed inside the swap), that folder is linked back first.
    """
    root = Path(root)
    builds = root / BUILDS / name
    for tmp in root.glob(f".{name}.*.link"):
        tmp.unlink(missing_ok=True)
    if not builds.is_dir():
        return
    link = root / name
    if not link.exists() and not link.is_symlink():
        imported = sorted(
            (p for p in builds.glob("imported-*") if (p / schema.MANIFEST).is_file()), key=lambda p: p.stat().st_mtime
        )
        if imported:
            publish(root, name, imported[-1])

    def current() -> Path | None:
        return link.resolve() if link.exists() else None

    for old in builds.iterdir():
        if not old.is_dir() or old.resolve() == current():
            continue
        trash = builds / f".trash-{uuid.uuid4().hex[:8]}"
        try:
            os.replace(old, trash)
        except OSError:
            continue
        if link.is_symlink() and not link.exists():  # it was current after all: put it back
            os.replace(trash, old)
            continue
        shutil.rmtree(trash, ignore_errors=True)


def write_json(path: Path, data: dict) -> None:
    """Write JSON atomically (temp file, fsync, rename)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=False, default=str)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
