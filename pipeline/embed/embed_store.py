"""The embedding store: vectors cached on disk per text (:func:`text_hash`), one folder per model
key, in append-only shard files that any number of processes may add to at once
(:class:`EmbeddingStore`).
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np


def text_hash(text: str) -> bytes:
    """16-byte key of one text in the embedding store."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


#: A shard file: the ``.npy`` of its keys followed by the ``.npy`` of its vectors, in one file.
SHARD_SUFFIX = ".shard"
#: The single-file layout of earlier versions (still read, merged away by a compaction).
LEGACY_KEYS, LEGACY_VECTORS, LEGACY_INFO = "keys.npy", "vectors.npy", "info.json"
#: Shards with at most this many vectors always count as small when merging (see ``compact``).
SMALL_SHARD = 4096
#: Automatic compaction merges a run of at least this many shards.
MERGE_AT = 4
#: Unfinished shard files older than this (a killed writer's) are deleted by a compaction.
STALE_TMP_SECONDS = 3600


@dataclass(frozen=True)
class _Shard:
    """One open shard: sorted keys and their vectors, memory-mapped."""

    name: str  # sorts in write order; the legacy pair sorts first
    paths: tuple[Path, ...]
    keys: np.ndarray  # (n,) S16, sorted, unique
    vectors: np.ndarray  # (n, dim) float32

    @property
    def count(self) -> int:
        return len(self.keys)

    @property
    def stamp(self) -> tuple[int, int]:
        """(time, generation) from the name: where a merge of this shard sorts."""
        ts, gen = self.name.split("-")[:2]
        return int(ts), int(gen)


def _shard_name(ts: int, gen: int) -> str:
    return f"{ts:020d}-{gen:03d}-{os.getpid()}-{uuid.uuid4().hex[:8]}{SHARD_SUFFIX}"


_LEGACY_NAME = f"{0:020d}-000-legacy"


def _read_npy_at(path: Path, offset: int) -> tuple[np.ndarray, int]:
    """The ``.npy`` array stored at ``offset`` of ``path``, memory-mapped, and where it ends."""
    with path.open("rb") as handle:
        handle.seek(offset)
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        start = handle.tell()
    if fortran or dtype.hasobject:
        raise ValueError(f"{path.name}: unexpected array layout")
    size = int(np.prod(shape)) * dtype.itemsize
    if path.stat().st_size < start + size:
        raise ValueError(f"{path.name}: truncated")
    array = np.memmap(path, dtype=dtype, mode="r", offset=start, shape=shape) if size else np.zeros(shape, dtype)
    return array, start + size


@dataclass
class EmbeddingStore:
    """Vectors cached per text (its :func:`text_hash`), one folder per :func:`model_key`.

    Layout of ``<root>/<model_key>/``: append-only shard files ``<time>-<generation>-<pid>-<id>.shard``,
    each the ``.npy`` of its sorted ``(n,)`` ``S16`` keys followed by the ``.npy`` of its ``(n, dim)``
    float32 vectors, written to a temporary name and renamed into place (so a shard is either
    complete or absent); ``.compact.lock``. Stores written by earlier versions (``keys.npy`` +
    ``vectors.npy``) are read transparently as the oldest shard and merged into a shard by the first
    compaction that reaches them.

    Public API and guarantees:

    * :meth:`lookup` reads every shard (memory-mapped, only the rows it returns are read). When a
      text has several vectors (two writers embedded it at once), the one in the oldest shard wins,
      so a store gives the same vector for a text on every later read; that is why the batch size
      does not change a build's result.
    * :meth:`add` writes one new shard holding only the new vectors (cost proportional to them, not
      to the store), then compacts if the newest shards are many and small. Any number of processes
      and threads may add at once without a lock and without losing vectors.
    * :meth:`compact` merges the newest small shards (or all, ``full=True``) under a file lock;
      the merged shard is in place before its inputs are deleted, so a concurrent reader always finds
      every vector. Each vector is rewritten about log2(size / 4096) times over the store's life.
    * :meth:`remove` rewrites the shards holding those texts (under the same lock).

    A damaged shard is skipped (it is only a cache); an interrupted writer leaves at most a
    ``*.shard.tmp`` file, deleted by a later compaction.
    """

    root: Path
    key: str

    @property
    def folder(self) -> Path:
        return Path(self.root) / self.key

    # -- reading ---------------------------------------------------------------------------

    def _shards(self) -> list[_Shard]:
        """Every readable shard, oldest first (a snapshot: retried if a compaction deletes a file
        between listing and opening)."""
        for _ in range(20):
            try:
                return self._open_all()
            except FileNotFoundError:
                continue
        return self._open_all(skip_missing=True)

    def _open_all(self, *, skip_missing: bool = False) -> list[_Shard]:
        folder = self.folder
        if not folder.is_dir():
            return []
        out = []
        legacy_keys, legacy_vectors = folder / LEGACY_KEYS, folder / LEGACY_VECTORS
        if legacy_keys.exists() or legacy_vectors.exists():
            try:
                keys = np.load(legacy_keys, allow_pickle=False)
                vectors = np.load(legacy_vectors, allow_pickle=False, mmap_mode="r")
                if len(keys) == len(vectors) and vectors.ndim == 2 and keys.dtype == np.dtype("S16"):
                    out.append(_Shard(_LEGACY_NAME, (legacy_keys, legacy_vectors), keys, vectors))
            except FileNotFoundError:
                if not skip_missing:
                    raise
            except (ValueError, OSError, EOFError):
                pass  # a damaged legacy store is only a cache
        for path in sorted(folder.glob("*" + SHARD_SUFFIX)):
            try:
                keys, end = _read_npy_at(path, 0)
                vectors, _ = _read_npy_at(path, end)
            except FileNotFoundError:
                if skip_missing:
                    continue
                raise
            except (ValueError, OSError, EOFError):
                continue
            if keys.dtype != np.dtype("S16") or vectors.ndim != 2 or len(vectors) != len(keys):
                continue
            out.append(_Shard(path.name, (path,), keys, vectors))
        if out:
            dim = out[-1].vectors.shape[1]
            out = [s for s in out if s.vectors.shape[1] == dim]
        return out

    def lookup(self, hashes: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray | None]:
        """Find cached vectors.

        Args:
            hashes: ``text_hash`` of each text.

        Returns:
            ``(found, vectors)``: a bool mask of shape ``(n,)`` and float32 ``(n, dim)`` with zeros
            where not found (``None`` when the store is empty).
        """
        query = np.asarray(hashes, dtype="S16")
        found = np.zeros(len(query), dtype=bool)
        out: np.ndarray | None = None
        for shard in self._shards():
            if out is None:
                out = np.zeros((len(query), shard.vectors.shape[1]), dtype=np.float32)
            todo = np.flatnonzero(~found)
            if not len(todo):
                break
            if not shard.count:
                continue
            pos = np.clip(np.searchsorted(shard.keys, query[todo]), 0, shard.count - 1)
            hit = shard.keys[pos] == query[todo]
            rows = todo[hit]
            if len(rows):
                order = np.argsort(pos[hit], kind="stable")  # read the map in file order
                out[rows[order]] = shard.vectors[pos[hit][order]]
                found[rows] = True
        return found, out

    def stats(self) -> dict:
        """``{"shards", "vectors" (duplicates included), "legacy"}``."""
        shards = self._shards()
        return {
            "shards": len(shards),
            "vectors": int(sum(s.count for s in shards)),
            "legacy": any(s.name == _LEGACY_NAME for s in shards),
        }

    # -- writing ---------------------------------------------------------------------------

    def _write_shard(self, keys: np.ndarray, vectors: np.ndarray, name: str) -> Path:
        """Write a shard atomically (temporary file, fsync, rename); keys sorted and unique."""
        self.folder.mkdir(parents=True, exist_ok=True)
        final = self.folder / name
        tmp = final.with_name(final.name + f".{uuid.uuid4().hex[:6]}.tmp")
        try:
            with tmp.open("wb") as handle:
                np.lib.format.write_array(handle, np.ascontiguousarray(keys, dtype="S16"), allow_pickle=False)
                np.lib.format.write_array(handle, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return final

    def add(self, hashes: Sequence[bytes], vectors: np.ndarray, *, compact: bool = True) -> None:
        """Store vectors for these texts: one new shard with only them (the first of equal keys
        in this call is kept), then an automatic :meth:`compact` unless ``compact=False``.

        Safe to call from any number of processes and threads at once.

        Args:
            hashes: ``(n,)`` ``text_hash`` of each text.
            vectors: float32 ``(n, dim)``, L2-normalised.
        """
        if len(hashes) == 0:
            return
        keys = np.asarray(hashes, dtype="S16")
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(keys):
            raise ValueError(f"expected vectors of shape ({len(keys)}, dim), got {vectors.shape}")
        uniq, first = np.unique(keys, return_index=True)
        self._write_shard(uniq, vectors[first], _shard_name(time.time_ns(), 0))
        if compact:
            self.compact(wait=False)

    @contextmanager
    def _locked(self, wait: bool):
        from filelock import FileLock, Timeout

        self.folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.folder / ".compact.lock"))
        try:
            lock.acquire(timeout=-1 if wait else 0)
        except Timeout:
            yield False
            return
        try:
            yield True
        finally:
            lock.release()

    def compact(self, *, full: bool = False, wait: bool = True) -> int:
        """Merge shards into one: all of them (``full``), or the newest run of small ones.

        The automatic run is the newest shards, taken newest first while each is no larger than
        the ones taken so far together (or than ``SMALL_SHARD``), merged when there are at least
        ``MERGE_AT`` of them. Sizes then grow geometrically, so there are O(log size) shards and
        each vector is rewritten O(log size) times.

        Args:
            full: merge every shard (and a legacy store) into one.
            wait: wait for another process's compaction; False skips when one is running.

        Returns:
            How many shards were merged (0: nothing to do, or another process is compacting).
        """
        with self._locked(wait) as held:
            if not held:
                return 0
            self._delete_stale_tmp()
            shards = self._shards()
            run = shards if full else _tail_run(shards)
            if len(run) < (2 if full else MERGE_AT):
                return 0
            keys = np.concatenate([s.keys for s in run])
            uniq, first = np.unique(keys, return_index=True)  # first occurrence: the oldest shard's
            vectors = np.concatenate([np.asarray(s.vectors) for s in run])[first]
            ts, _ = run[0].stamp
            gen = max(s.stamp[1] for s in run) + 1
            self._write_shard(uniq, vectors, _shard_name(ts, gen))
            for shard in run:  # only after the merged shard is in place
                for path in shard.paths:
                    path.unlink(missing_ok=True)
                if shard.name == _LEGACY_NAME:
                    (self.folder / LEGACY_INFO).unlink(missing_ok=True)
            return len(run)

    def remove(self, hashes: Sequence[bytes]) -> int:
        """Forget the vectors of these texts (benchmarks use it to time embedding them again).

        Returns:
            How many distinct texts were removed.
        """
        drop_keys = np.asarray(hashes, dtype="S16")
        removed: set[bytes] = set()
        with self._locked(wait=True):
            for shard in self._shards():
                drop = np.isin(shard.keys, drop_keys)
                if not drop.any():
                    continue
                removed.update(bytes(k) for k in shard.keys[drop])
                kept_keys, kept_vectors = np.asarray(shard.keys)[~drop], np.asarray(shard.vectors)[~drop]
                if shard.name == _LEGACY_NAME:
                    if len(kept_keys):
                        self._write_shard(kept_keys, kept_vectors, _shard_name(0, 1))
                    for path in (*shard.paths, self.folder / LEGACY_INFO):
                        path.unlink(missing_ok=True)
                elif len(kept_keys):
                    self._write_shard(kept_keys, kept_vectors, shard.name)  # replaces it atomically
                else:
                    shard.paths[0].unlink(missing_ok=True)
        return len(removed)

    def _delete_stale_tmp(self) -> None:
        cutoff = time.time() - STALE_TMP_SECONDS
        for tmp in self.folder.glob("*.tmp"):
            try:
                if tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
            except FileNotFoundError:
                pass


def _tail_run(shards: list[_Shard]) -> list[_Shard]:
    """The newest shards to merge (see ``EmbeddingStore.compact``), oldest first."""
    run: list[_Shard] = []
    total = 0
    for shard in reversed(shards):
        if run and shard.count > max(total, SMALL_SHARD):
            break
        run.append(shard)
        total += shard.count
    return run[::-1]
