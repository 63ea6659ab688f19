"""Shareable view state in the URL.

Every view is described by query parameters, so a copied link reopens it exactly:

=========  ==========================================  ===============================
parameter  meaning                                     example
=========  ==========================================  ===============================
corpus     corpus name                                 ``corpus=neurips2026``
topic      topic id (map highlight, Topics page)       ``topic=3``
paper      paper ``doc_id`` (Paper page)               ``paper=ijcai2020-paper1``
q, mode    search query and ``keyword``/``semantic``   ``q=graph+neural&mode=keyword``
years      year filter, ``first-last``                 ``years=2020-2022``
venue      venue filter, repeated                      ``venue=IJCAI+2020&venue=IJCAI+2021``
topics     topic filter, comma-separated ids           ``topics=0,4``
text       text filter (substring of title/abstract)   ``text=diffusion``
list       reading list: short paper ids, in order     ``list=k3x9m2qa,7fjq2m4a``
notes      the list's notes, one per paper (packed)    ``notes=eNqr...``
tour       a saved presentation tour, and its step     ``tour=reading-group&step=3``
tourdata   a tour carried inside the link              ``tourdata=eNqr...&step=1``
token      editor token of a read-only server          (removed from the URL at once)
=========  ==========================================  ===============================

Pages add their own (``lam`` relevance λ, ``kw`` trend keywords, ``before``/``after``/``support``
trend periods). The page itself is the URL path (``/topics``, ``/paper``, ...); ``page=<name>`` in
the query is also understood by the router. ``corpus``, the filters and the reading list travel
with every link between pages (``shared``); the rest describes one page.

The parsing and encoding functions are pure (they take and return plain dicts) so they are tested
without Streamlit; ``explorer.ui.url_state`` reads and writes ``st.query_params`` with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from explorer.state import readinglist
from explorer.state.filters import MAX_TEXT, Filters

#: Parameters that travel with every link between pages.
SHARED = ("corpus", "years", "venue", "topics", "text", "list", "notes")
MODES = ("keyword", "semantic")
#: The longest search query: the search box takes no more and a link carries no more, so a copied
#: link always reopens the query that ran (a longer one in a link is cut, and the reader told).
MAX_QUERY_CHARS = 2_000

Params = Mapping[str, list[str]]


@dataclass(frozen=True)
class View:
    """The state a URL describes. ``problems`` lists parameters that could not be read."""

    corpus: str | None = None
    topic: int | None = None
    paper: str | None = None
    q: str = ""
    mode: str = "keyword"
    filters: Filters = field(default_factory=Filters)
    reading: tuple[str, ...] = ()
    notes: tuple[tuple[str, str], ...] = ()  # (short id, note) of the reading list's papers
    problems: tuple[str, ...] = ()

    @property
    def note_of(self) -> dict[str, str]:
        """The reading list's notes: short id -> note."""
        return dict(self.notes)


def _last(params: Params, key: str) -> str | None:
    values = params.get(key) or []
    values = [v for v in values if v != ""]
    return values[-1] if values else None


def parse_int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.strip())
    except ValueError:
        return None


def parse_float(value: str | None, lo: float = 0.0, hi: float = 1.0) -> float | None:
    """A float in [lo, hi] (clipped), or None if ``value`` is missing or not a number."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if number != number:
        return None
    return round(min(max(number, lo), hi), 2)


def parse_range(value: str | None) -> tuple[int, int] | None:
    """``"2020-2022"`` -> (2020, 2022); ``"2021"`` -> (2021, 2021); anything else -> None."""
    if not value:
        return None
    parts = value.replace("..", "-").split("-")
    if len(parts) == 1:
        parts = [parts[0], parts[0]]
    if len(parts) != 2:
        return None
    lo, hi = parse_int(parts[0]), parse_int(parts[1])
    if lo is None or hi is None:
        return None
    return (min(lo, hi), max(lo, hi))


def format_range(value: tuple[int, int]) -> str:
    return str(value[0]) if value[0] == value[1] else f"{value[0]}-{value[1]}"


def parse_int_list(value: str | None) -> tuple[int, ...] | None:
    """``"1,3"`` -> (1, 3); None if any part is not an integer."""
    if not value:
        return ()
    out = [parse_int(v) for v in value.split(",") if v.strip()]
    if any(v is None for v in out):
        return None
    return tuple(dict.fromkeys(out))  # type: ignore[arg-type]


def parse(params: Params) -> View:
    """Read a view from query parameters (each key maps to its list of values)."""
    problems = []

    topic_raw = _last(params, "topic")
    topic = parse_int(topic_raw)
    if topic_raw is not None and topic is None:
        problems.append(f"topic={topic_raw!r} is not a topic number")

    years_raw = _last(params, "years")
    years = parse_range(years_raw)
    if years_raw is not None and years is None:
        problems.append(f"years={years_raw!r} is not a year range like 2020-2022")

    topics_raw = _last(params, "topics")
    topics = parse_int_list(topics_raw)
    if topics is None:
        problems.append(f"topics={topics_raw!r} is not a list of topic numbers like 0,3")
        topics = ()

    mode = _last(params, "mode") or "keyword"
    if mode not in MODES:
        problems.append(f"mode={mode!r} is not one of {', '.join(MODES)}")
        mode = "keyword"

    q = _last(params, "q") or ""
    if len(q) > MAX_QUERY_CHARS:
        problems.append(
            f"the query has {len(q):,} characters; searches take at most {MAX_QUERY_CHARS:,}, so only its first "
            f"{MAX_QUERY_CHARS:,} are searched"
        )
        q = q[:MAX_QUERY_CHARS]
    text = _last(params, "text") or ""
    if len(text) > MAX_TEXT:
        problems.append(f"the text filter has {len(text):,} characters; only its first {MAX_TEXT} are used")
        text = text[:MAX_TEXT]

    venues = tuple(dict.fromkeys(v for v in params.get("venue", []) if v))
    reading, reading_problems = readinglist.parse(_last(params, readinglist.PARAM))
    problems += reading_problems
    notes, notes_problems = readinglist.parse_notes(_last(params, readinglist.NOTES), reading)
    problems += notes_problems
    return View(
        corpus=_last(params, "corpus"),
        topic=topic,
        paper=_last(params, "paper"),
        q=q,
        mode=mode,
        filters=Filters(years=years, venues=venues, topics=topics, text=text),
        reading=reading,
        notes=tuple(notes.items()),
        problems=tuple(problems),
    )


#: Keywords a trend chart plots at most (``kw=``).
MAX_KEYWORDS = 8


def parse_keywords(values: list[str]) -> tuple[list[str], list[str]]:
    """``kw`` values -> (keywords, problems). Each value may hold several keywords separated by
    commas (``kw=a,b,c``, as a hand-written link would) as well as repeated ``kw=a&kw=b``; blanks
    and repeats are dropped, and more than ``MAX_KEYWORDS`` are cut with a message."""
    terms = list(dict.fromkeys(" ".join(t.split()) for v in values for t in str(v).split(",") if t.strip()))
    problems = []
    if len(terms) > MAX_KEYWORDS:
        problems.append(f"the link names {len(terms)} keywords; a chart shows at most {MAX_KEYWORDS}, the first ones")
        terms = terms[:MAX_KEYWORDS]
    return terms, problems


def encode(view: View) -> dict[str, str | list[str]]:
    """Query parameters for a view (defaults left out, so links stay short)."""
    out: dict[str, str | list[str]] = {}
    if view.corpus:
        out["corpus"] = view.corpus
    out.update(encode_filters(view.filters))
    if view.topic is not None:
        out["topic"] = str(view.topic)
    if view.paper:
        out["paper"] = view.paper
    if view.q:
        out["q"] = view.q
    if view.mode != "keyword":
        out["mode"] = view.mode
    if view.reading:
        out[readinglist.PARAM] = readinglist.encode(view.reading)
        notes = readinglist.encode_notes(view.note_of, view.reading)
        if notes:
            out[readinglist.NOTES] = notes
    return out


def encode_filters(filters: Filters) -> dict[str, str | list[str]]:
    out: dict[str, str | list[str]] = {}
    if filters.years is not None:
        out["years"] = format_range(filters.years)
    if filters.venues:
        out["venue"] = list(filters.venues)
    if filters.topics:
        out["topics"] = ",".join(str(t) for t in filters.topics)
    if filters.text:
        out["text"] = filters.text
    return out


def shared(view: View, **extra: Any) -> dict[str, str | list[str]]:
    """Parameters for a link to another page: the corpus and filters, plus ``extra`` (None drops)."""
    out = {k: v for k, v in encode(replace(view, topic=None, paper=None, q="", mode="keyword")).items() if k in SHARED}
    for key, value in extra.items():
        if value is None or value == "" or value == []:
            continue
        out[key] = [str(v) for v in value] if isinstance(value, list | tuple) else str(value)
    return out
