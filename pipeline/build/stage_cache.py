"""Cached stage results shared by every build of an artifacts folder: ``.cache/stages/<name>/``.

An entry is a folder named by its kind and key (``reduce-<hash>``, ``stability-<hash>``), with a
``done`` marker. It is written complete under ``.cache/stages/.tmp/`` and renamed into place in
one step, and never changed afterwards, so any number of builds (processes) can share the cache:

* a reader sees a complete entry or none (a rename is atomic);
* two builds computing the same key both succeed: the first rename wins and the second build
  drops its own copy (same key, same content);
* pruning (least recently used first) runs under a file lock, one process at a time, and takes
  an entry away with a rename before deleting it; a build that was reading it meanwhile gets an
  error from its loader and computes the stage again (callers treat a failed load as a miss);
* a killed build leaves at most a folder under ``.tmp/``, deleted by a later prune after an hour.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path


def array_digest(array, digest=None):
    """``digest`` (a new SHA-256 if None) updated with an array's bytes, as ``array.tobytes()``
    would give them but without that copy (1.5 GB for a million embeddings): a C-contiguous array
    or memory map is hashed in place, block by block."""
    import hashlib

    import numpy as np

    digest = digest or hashlib.sha256()
    array = np.ascontiguousarray(array)
    flat = array.reshape(-1)
    step = max(1, (64 << 20) // max(1, array.itemsize))
    for start in range(0, len(flat), step):
        digest.update(memoryview(flat[start : start + step]).cast("B"))
    return digest


#: Entries kept by ``prune`` (most recently used first).
KEEP = 12
#: Unfinished entries older than this are a killed build's and are deleted by ``prune``.
STALE_TMP_SECONDS = 3600


class StageCache:
    """The stage cache under ``<cache_dir>/stages``.

    Args:
        cache_dir: ``<artifacts>/.cache``.
        keep: entries kept by :meth:`prune`.
    """

    def __init__(self, cache_dir: Path, keep: int = KEEP):
        self.root = Path(cache_dir) / "stages"
        self.keep = keep

    def get(self, name: str) -> Path | None:
        """The folder of a complete entry (marked as just used), or None."""
        folder = self.root / name
        if not (folder / "done").is_file():
            return None
        try:
            os.utime(folder)
        except OSError:  # pruned meanwhile
            return None
        return folder

    def put(self, name: str, write: Callable[[Path], None]) -> Path:
        """Write an entry with ``write(folder)`` and publish it atomically; then prune.

        Returns:
            The entry's folder (another build's identical entry if that one was published first).
        """
        final = self.root / name
        tmp = self.root / ".tmp" / f"{name}.{uuid.uuid4().hex[:8]}"
        tmp.mkdir(parents=True)
        try:
            write(tmp)
            (tmp / "done").write_text("ok")
            try:
                os.rename(tmp, final)
            except OSError:  # the folder exists: another build published this key first
                if not (final / "done").is_file():  # not a complete entry: replace it
                    self.discard(name)
                    with contextlib.suppress(OSError):  # lost to a third build: fine as well
                        os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self.prune()
        return final

    def discard(self, name: str) -> None:
        """Remove an entry that could not be loaded (damaged); a no-op if it is already gone."""
        self._remove(self.root / name)

    def _remove(self, folder: Path) -> None:
        trash = self.root / ".tmp" / f"trash-{uuid.uuid4().hex[:8]}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(folder, trash)
        except OSError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def prune(self) -> None:
        """Keep the ``keep`` most recently used entries; delete abandoned temporary folders.

        Skipped when another process is pruning (non-blocking file lock).
        """
        from filelock import FileLock, Timeout

        self.root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.root / ".prune.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout:
            return
        try:
            entries = []
            for p in self.root.iterdir():
                if p.name.startswith(".") or not p.is_dir():
                    continue
                try:
                    entries.append((p.stat().st_mtime, p))
                except FileNotFoundError:
                    continue
            entries.sort(key=lambda e: (e[0], e[1].name), reverse=True)
            for _, old in entries[self.keep :]:
                self._remove(old)
            cutoff = time.time() - STALE_TMP_SECONDS
            for tmp in (self.root / ".tmp").glob("*") if (self.root / ".tmp").is_dir() else ():
                try:
                    if tmp.stat().st_mtime < cutoff:
                        shutil.rmtree(tmp, ignore_errors=True)
                except FileNotFoundError:
                    continue
        finally:
            lock.release()
