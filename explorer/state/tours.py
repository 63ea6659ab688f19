"""Presentation tours: ordered saved views, each a page's URL state plus a note.

A tour is saved as a small JSON file beside the artifacts, ``<root>/.tours/<corpus>/<tour>.json``
(editors only), and opened with ``?tour=<tour>&corpus=<corpus>&step=3``. It can also travel
inside the link itself, ``?tourdata=<compressed JSON>&step=3``, so a viewer of a read-only server
can make and share one without writing anything::

    {"version": 1, "name": "reading-group", "corpus": "neurips2026",
     "steps": [{"page": "topics", "params": {"corpus": ["neurips2026"], "topic": ["3"]},
                "note": "Diffusion is the largest topic"}, ...]}

Everything here but ``save``/``delete`` is pure; those two take an ``Access`` and refuse before
touching a file when the session may not write. Loaded tours are validated: known pages only,
bounded sizes, plain strings (notes are rendered escaped).
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from explorer.state.access import Access, require_write
from explorer.state.state import MAX_QUERY_CHARS
from pipeline.core import artifacts

VERSION = 1
FOLDER = ".tours"
PAGES = ("map", "topics", "trends", "compare", "lineage", "paper", "search", "list")
#: URL parameters that belong to the tour or the session, never to a saved view.
NOT_VIEW = ("tour", "tourdata", "step", "token", "page", "list", "notes")
#: ... except on the reading list's own page: a step there shows that list, with its notes.
LIST_VIEW = ("list", "notes")
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,47}$")
PARAM_RE = re.compile(r"^[a-z][a-z_]{0,15}$")
MAX_STEPS = 40
MAX_NOTE = 600
MAX_PARAMS = 20
MAX_VALUE = MAX_QUERY_CHARS  # a step keeps a whole query (the longest value a view has)
MAX_BLOB = 12_000  # characters of ``tourdata``


class TourError(ValueError):
    """A tour cannot be read or written; the message says why."""


@dataclass(frozen=True)
class Step:
    """One view: a page (``PAGES``) and its query parameters, and the presenter's note."""

    page: str
    params: tuple[tuple[str, tuple[str, ...]], ...]
    note: str = ""

    def query(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.params}


@dataclass(frozen=True)
class Tour:
    name: str
    steps: tuple[Step, ...]
    corpus: str | None = None


def slug(title: str) -> str:
    """A file-safe tour name from a title: ``"Reading group, week 1"`` -> ``reading-group-week-1``."""
    out = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:48].strip("-")
    return out


def make_step(page: str, params: Mapping[str, list[str]], note: str = "") -> Step:
    """A step from a page and the URL's parameters (tour, session and reading-list ones dropped,
    but a step of the reading list's page keeps its list and notes: ``notes`` is packed, so it is
    kept whole, up to ``MAX_BLOB`` characters, or not at all)."""
    if page not in PAGES:
        raise TourError(f"the page {page!r} cannot be part of a tour.")

    def kept(k: str) -> bool:
        return (k not in NOT_VIEW or (page == "list" and k in LIST_VIEW)) and bool(PARAM_RE.match(k))

    def limit(k: str, v: object) -> str | None:
        v = str(v)
        if k == "notes":
            return v if len(v) <= MAX_BLOB else None
        return v[:MAX_VALUE]

    clean = tuple(
        (k, tuple(x for x in (limit(k, v) for v in values) if x is not None))
        for k, values in sorted(params.items())
        if kept(k) and values
    )
    clean = tuple((k, v) for k, v in clean if v)[:MAX_PARAMS]
    return Step(page=page, params=clean, note=" ".join(str(note).split())[:MAX_NOTE])


def to_dict(tour: Tour) -> dict:
    return {
        "version": VERSION,
        "name": tour.name,
        "corpus": tour.corpus,
        "steps": [{"page": s.page, "params": s.query(), "note": s.note} for s in tour.steps],
    }


def from_dict(data: object) -> Tour:
    """A validated tour from parsed JSON. Raises ``TourError``."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise TourError("not a tour (no list of steps).")
    name = data.get("name") or "tour"
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise TourError(f"{str(name)[:60]!r} is not a tour name (letters, digits, '-' and '_').")
    corpus = data.get("corpus")
    if corpus is not None and (not isinstance(corpus, str) or not artifacts.NAME_RE.match(corpus)):
        raise TourError("the tour names an invalid corpus.")
    steps = []
    for raw in data["steps"][:MAX_STEPS]:
        if not isinstance(raw, dict) or raw.get("page") not in PAGES:
            raise TourError("a step of the tour names no known page.")
        params = raw.get("params") or {}
        if not isinstance(params, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in params.values()
        ):
            raise TourError("a step of the tour has malformed parameters.")
        note = raw.get("note") or ""
        steps.append(make_step(raw["page"], params, note if isinstance(note, str) else ""))
    if not steps:
        raise TourError("the tour has no steps.")
    return Tour(name=name, steps=tuple(steps), corpus=corpus)


def encode(tour: Tour) -> str:
    """The tour as a URL-safe string (compressed JSON, base64url), for ``tourdata=``."""
    raw = json.dumps(to_dict(tour), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode("ascii").rstrip("=")


def decode(blob: str) -> Tour:
    """The tour in a ``tourdata=`` value. Raises ``TourError`` (also for oversized data)."""
    if not blob or len(blob) > MAX_BLOB or not re.fullmatch(r"[A-Za-z0-9_-]+", blob):
        raise TourError("the tour in this link is damaged or too long.")
    try:
        packed = base64.urlsafe_b64decode(blob + "=" * (-len(blob) % 4))
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, 200_000)
        if inflater.unconsumed_tail:
            raise TourError("the tour in this link is too large.")
        if not inflater.eof:  # cut short (a partly copied link)
            raise TourError("the tour in this link is incomplete: copy the whole link.")
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, zlib.error) as exc:
        raise TourError("the tour in this link is damaged.") from exc
    return from_dict(data)


# ------------------------------------------------------------------------------------------
# Files
# ------------------------------------------------------------------------------------------


def folder(root: Path, corpus: str) -> Path:
    return Path(root) / FOLDER / artifacts.check_name(corpus)


def path(root: Path, corpus: str, name: str) -> Path:
    if not NAME_RE.match(name or ""):
        raise TourError(f"{name!r} is not a tour name (letters, digits, '-' and '_').")
    return folder(root, corpus) / f"{name}.json"


def saved(root: Path, corpus: str) -> list[str]:
    """Names of the saved tours of ``corpus``, sorted."""
    try:
        where = folder(root, corpus)
    except artifacts.ArtifactError:
        return []
    if not where.is_dir():
        return []
    return sorted(p.stem for p in where.glob("*.json") if NAME_RE.match(p.stem))


def load(root: Path, corpus: str, name: str) -> Tour:
    file = path(root, corpus, name)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TourError(f"there is no saved tour {name!r} for {corpus}.") from None
    except (OSError, ValueError) as exc:
        raise TourError(f"the tour {name!r} cannot be read ({exc}).") from None
    return from_dict(data)


def save(access: Access, root: Path, tour: Tour) -> Path:
    """Write ``tour`` as ``<root>/.tours/<corpus>/<name>.json`` (atomically). Editors only."""
    require_write(access, "Saving a tour")
    if not tour.corpus or not tour.steps:
        raise TourError("a tour needs a corpus and at least one step.")
    file = path(root, tour.corpus, tour.name)
    file.parent.mkdir(parents=True, exist_ok=True)
    artifacts.write_json(file, to_dict(tour))
    return file


def delete(access: Access, root: Path, corpus: str, name: str) -> None:
    require_write(access, "Deleting a tour")
    path(root, corpus, name).unlink(missing_ok=True)
