"""Topic curation from the app: rename, merge, move, undo, written to ``<root>/<name>.curation.json``.

Each write takes the session's :class:`~explorer.state.access.Access` and refuses (``ReadOnlyError``)
before opening any file when it may not write. An edit is made against the corpus as the reader
sees it (earlier edits applied), appended to the file under a lock (two editors cannot lose each
other's edits), and picked up by ``explorer.ui.caches.get_corpus`` on the next rerun (the file's hash
is part of the cache key). The edit format and its matching after a rebuild are
``pipeline.analysis.curation``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.state.access import Access, require_write
from pipeline.analysis.curation import Curation, CurationError, curation_path
from pipeline.core import artifacts

if TYPE_CHECKING:
    from explorer.state.data import Corpus

__all__ = ["CurationError", "describe", "merge", "move", "rename", "undo"]


@contextmanager
def _locked(root: Path, name: str):
    from filelock import FileLock

    locks = Path(root) / artifacts.LOCKS
    locks.mkdir(parents=True, exist_ok=True)
    with FileLock(str(locks / f"{artifacts.check_name(name)}.curation.lock"), timeout=10):
        yield


def _change(access: Access, corpus: Corpus, what: str, change: Callable[[Curation], dict | None]) -> dict | None:
    require_write(access, what)  # before any file is opened
    path = curation_path(corpus.root, corpus.name)
    with _locked(corpus.root, corpus.name):
        cur = Curation.load(path)
        edit = change(cur)
        if edit is not None:
            cur.save(path)
    return edit


def rename(access: Access, corpus: Corpus, topic: int, label: str) -> dict:
    """Give ``topic`` the label ``label`` (spaces collapsed, at most 80 characters)."""
    return _change(
        access, corpus, "Renaming a topic", lambda c: c.rename(corpus.tables.topics, corpus.papers, topic, label)
    )


def merge(access: Access, corpus: Corpus, topics: list[int]) -> dict:
    """Merge ``topics`` into the largest of them."""
    return _change(access, corpus, "Merging topics", lambda c: c.merge(corpus.tables.topics, corpus.papers, topics))


def move(access: Access, corpus: Corpus, doc_id: str, topic: int) -> dict:
    """Move paper ``doc_id`` into ``topic``."""
    if corpus.paper_pos(doc_id) is not None and int(corpus.papers["topic"].iat[corpus.paper_pos(doc_id)]) == topic:
        raise CurationError("the paper is already in that topic.")
    return _change(
        access, corpus, "Moving a paper", lambda c: c.move(corpus.tables.topics, corpus.papers, doc_id, topic)
    )


def undo(access: Access, corpus: Corpus) -> dict | None:
    """Drop the last edit; returns it (None when there was none)."""
    return _change(access, corpus, "Undoing an edit", lambda c: c.undo())


def describe(edit: dict) -> str:
    """One plain-text line for an edit (escape it before rendering: labels are user text)."""
    op = edit.get("op")

    def name(ref: dict) -> str:
        return f"topic {ref.get('id', '?')} “{ref.get('label', '?')}”"

    if op == "rename":
        return f"Renamed {name(edit.get('topic', {}))} to “{edit.get('label', '')}”"
    if op == "merge":
        return "Merged " + " + ".join(name(r) for r in edit.get("topics", []))
    if op == "move":
        return f"Moved paper {edit.get('doc_id', '?')} to {name(edit.get('to', {}))}"
    return f"Unknown edit {op!r}"
