"""The WebGL topic map in Streamlit: a Components v2 component fed binary arrays.

Two registered components, both our own constant JavaScript:

* ``atlas_map_data`` instances (hidden, mounted outside the map's fragment) carry bytes: the map's
  bundle (``frontend/dist/atlas-map.js``) once, and the binary containers of ``pipeline.formats.blobs``
  (the corpus's points, the filter mask, marked rows). Streamlit's message cache sends an unchanged
  one once per browser session, and a fragment rerun never sends them.
* the ``atlas_map`` instance, inside an ``st.fragment``, is a small loader that imports the bundle
  and gets a few hundred bytes of JSON state naming the containers it draws. What the reader does
  comes back as trigger values: ``ask`` (titles for the papers under the cursor or in view: the
  fragment reruns and answers in its next state), ``click`` (open the paper), ``topic`` (a topic
  chosen in the legend or on a label), ``view`` (pan and zoom, written to the URL's ``view``) and the
  state ``selection`` (box or lasso, base64 uint32 rows).

``topic_map`` draws a corpus's map; ``position_map`` the small map of one paper or a new abstract.
Both take ``marks`` (rows drawn with a ring or a diamond: search hits, the reading list) and
``overlay`` (extra points with their own position, label and colour, drawn above every dot: "this
paper", or another corpus's papers placed on this map), and ``scale`` for larger text (present
mode).
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from explorer.services import mapview, text
from explorer.services.mapview import Marks, Overlay
from explorer.ui import url_state
from pipeline.core.inputs import ROOT
from pipeline.formats import palette
from pipeline.formats.blobs import Blob, mask_blob, rows_blob

if TYPE_CHECKING:
    from explorer.state.data import Corpus

BUNDLE = ROOT / "frontend" / "dist" / "atlas-map.js"
VIEW_PARAM = "view"
MAX_ASK = 100  # titles answered per request
MAP_HITS = 100  # search hits marked on the map (the Search page lists 25)
#: Hides the instances that only carry data (our own constant CSS).
HIDE_CSS = '<style>[class*="st-key-atlasdata_"] { display: none !important; }</style>'


#: The data-only component: hands what it receives to the map's registry in the page: a binary
#: container (``pipeline.formats.blobs``, magic ``ATLM``) or, once, the map's bundle itself. Our own
#: constant JavaScript, a few hundred bytes.
DATA_JS = """export default function ({ data }) {
  if (!(data instanceof Uint8Array)) return;
  const reg = (globalThis.__atlasBlobs ||= { blobs: new Map(), waiting: new Map(), raw: [] });
  const container = data.length >= 4 && data[0] === 65 && data[1] === 84 && data[2] === 76 && data[3] === 77;
  if (!container) {
    if (!reg.code) { reg.code = data.slice(); (reg.codeWaiting || []).forEach((go) => go()); reg.codeWaiting = []; }
    return;
  }
  (reg.raw ||= []).push(data);
  if (reg.onraw) reg.onraw();
}"""

#: The map component's own code: it imports the bundle (sent once by a data-only instance outside
#: the fragment) and hands over. So the map's fragment reruns carry a few hundred bytes of state,
#: not the 50 kB bundle each time.
MAP_JS = """export default async function (args) {
  const reg = (globalThis.__atlasBlobs ||= { blobs: new Map(), waiting: new Map(), raw: [] });
  reg.module ||= new Promise((resolve, reject) => {
    const go = () => import(URL.createObjectURL(new Blob([reg.code], { type: "text/javascript" }))).then(resolve, reject);
    if (reg.code) go(); else (reg.codeWaiting ||= []).push(go);
  });
  return (await reg.module).default(args);
}"""


@functools.cache
def _bundle() -> bytes:
    return BUNDLE.read_bytes()


@functools.cache
def _component():
    """The registered map component (once per process)."""
    return st.components.v2.component("atlas_map", js=MAP_JS)


@functools.cache
def _data_component():
    return st.components.v2.component("atlas_map_data", js=DATA_JS)


@st.cache_resource(max_entries=8, show_spinner=False)
def _points_cached(key: tuple[str, str, str], _corpus: Corpus) -> Blob:
    return mapview.corpus_points(_corpus)


def points(corpus: Corpus) -> Blob:
    """The corpus's points container, built once per build and set of topic edits."""
    return _points_cached(corpus.key, corpus)


@st.cache_resource(max_entries=64, show_spinner=False)
def _mask_cached(digest: str, _mask: np.ndarray) -> Blob:
    return mask_blob(_mask)


@st.cache_resource(max_entries=64, show_spinner=False)
def _rows_cached(digest: str, _rows: np.ndarray) -> Blob:
    return rows_blob(_rows)


def _digest(arr: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(arr).tobytes(), digest_size=12).hexdigest() + f":{arr.dtype}:{arr.size}"


def _mask_blob(mask: np.ndarray | None) -> Blob | None:
    if mask is None or bool(np.all(mask)):
        return None
    packed = np.packbits(np.asarray(mask, dtype=bool))
    return _mask_cached(_digest(packed) + f":{len(mask)}", np.asarray(mask, dtype=bool))


def _rows_blob(rows: np.ndarray) -> Blob:
    rows = np.asarray(rows, dtype=np.int64)
    return _rows_cached(_digest(rows), rows)


@dataclass(frozen=True)
class MapResult:
    """What the reader did on the map in this run.

    Attributes:
        clicked: the paper row clicked, or None.
        selection: int ``(m,)`` rows selected with the box or the lasso (kept until cleared).
        selection_kind: ``"box"`` or ``"lasso"``, None without a selection.
    """

    clicked: int | None = None
    selection: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    selection_kind: str | None = None


def _selection(value, n: int) -> tuple[np.ndarray, str | None]:
    if not isinstance(value, dict) or not value.get("n"):
        return np.zeros(0, dtype=np.int64), None
    try:
        raw = base64.b64decode(value.get("rows") or "", validate=True)
    except ValueError:
        return np.zeros(0, dtype=np.int64), None
    rows = np.frombuffer(raw[: len(raw) // 4 * 4], dtype="<u4").astype(np.int64)
    rows = np.unique(rows[rows < n])
    return rows, value.get("kind") if value.get("kind") in ("box", "lasso") else "box"


def _answer(corpus: Corpus, key: str) -> None:
    """``ask`` callback: look up the titles the map asked for; the next state carries them."""
    value = (st.session_state.get(key) or {}).get("ask")
    if not isinstance(value, dict):
        return
    rows = [r for r in (value.get("rows") or [])[:MAX_ASK] if isinstance(r, int)]
    st.session_state[f"_{key}_answer"] = {"seq": int(value.get("seq") or 0), "details": mapview.details(corpus, rows)}


def _view_changed(key: str, url: bool) -> None:
    """``view`` callback: the reader panned or zoomed; keep the view in the URL."""
    value = (st.session_state.get(key) or {}).get("view")
    if not url or value is None:
        return
    parsed = mapview.parse_view(value)
    url_state.set_params(**{VIEW_PARAM: parsed.text if parsed else None})


def mount_data(blobs: list[Blob], key: str) -> None:
    """Mount the hidden instances that carry ``blobs`` to the browser (outside any fragment)."""
    comp = _data_component()
    st.html(HIDE_CSS)
    with st.container(key=f"atlasdata_{key}"):
        comp(data=_bundle(), key=f"atlasdata_{key}_code", height=1)
        for i, blob in enumerate(blobs):
            comp(data=blob.data, key=f"atlasdata_{key}_{i}", height=1)


def topic_map(
    corpus: Corpus,
    *,
    key: str = "map",
    mask: np.ndarray | None = None,
    highlight: int | None = None,
    marks: list[Marks] = (),
    overlay: list[Overlay] = (),
    view_in_url: bool = True,
    height: int = 560,
    scale: float = 1.0,
    legend: bool = True,
    select: bool = True,
    clickable: bool = True,
    topic_labels: str = "all",
    png_name: str = "map",
    caption: str = "Topic map",
    on_click: Callable[[int], None] | None = None,
    on_topic: Callable[[int | None], None] | None = None,
    below: Callable[[MapResult], None] | None = None,
) -> None:
    """Draw the map of ``corpus``.

    Args:
        key: widget key (unique on the page).
        mask: bool ``(papers,)`` papers kept by the filters; the others are faint grey context.
        highlight: a topic id to bring forward.
        marks: papers to mark (search hits, the reading list).
        overlay: extra points drawn on top ("this paper", another corpus's papers).
        view_in_url: keep the view (centre and zoom) in the URL's ``view`` parameter, and open
            at the view the URL names.
        scale: text and mark size (present mode on a projector).
        on_click: called with the paper row a reader clicks (e.g. open the paper).
        on_topic: called with the topic chosen in the legend or on a label (None: all topics).
        below: drawn under the map inside its fragment, with what the reader did (e.g. the
            papers of a box selection).
    """
    mask_blob = _mask_blob(mask)
    mark_blobs = [(_rows_blob(m.rows), m) for m in marks if len(m.rows)]
    pts = points(corpus)
    mount_data([pts, *([mask_blob] if mask_blob else []), *(b for b, _ in mark_blobs)], key)
    _map_fragment(
        corpus, key, pts, mask_blob, mark_blobs, list(overlay), highlight, view_in_url, height, scale, legend,
        select, clickable, topic_labels, png_name, caption, on_click, on_topic, below,
    )  # fmt: skip


@st.fragment
def _map_fragment(
    corpus, key, pts, mask_blob, mark_blobs, overlay, highlight, view_in_url, height, scale, legend,
    select, clickable, topic_labels, png_name, caption, on_click, on_topic, below,
) -> None:  # fmt: skip
    view = mapview.parse_view(st.query_params.get(VIEW_PARAM)) if view_in_url else None
    data = mapview.map_state(
        pts, highlight=highlight, mask=mask_blob, marks=mark_blobs, overlay=overlay, view=view, scale=scale,
        legend=legend, select=select, clickable=clickable, topic_labels=topic_labels, png_name=png_name, caption=caption,
        answer=st.session_state.get(f"_{key}_answer"),
    )  # fmt: skip
    result = _component()(
        data=data,
        key=key,
        height=height,
        on_ask_change=lambda: _answer(corpus, key),
        on_view_change=lambda: _view_changed(key, view_in_url),
        on_click_change=lambda: None,
        on_topic_change=lambda: None,
        on_selection_change=lambda: None,
    )
    rows, kind = _selection(result.get("selection"), corpus.n_papers)
    clicked = result.get("click")
    clicked = int(clicked) if isinstance(clicked, int) and 0 <= clicked < corpus.n_papers else None
    topic = result.get("topic")
    if topic is not None and on_topic is not None:
        on_topic(int(topic) if str(topic).lstrip("-").isdigit() else None)
    if clicked is not None and on_click is not None:
        on_click(clicked)
    if below is not None:
        below(MapResult(clicked=clicked, selection=rows, selection_kind=kind))


def height(presenting: bool) -> int:
    return 640 if presenting else 580


def choose_topic(topic: int | None) -> None:
    """A topic chosen on the map (legend or label): put it in the URL and redraw the whole page."""
    url_state.set_params(topic=topic)
    st.rerun()


def rings_name(hits, query: str, mode: str) -> str:
    """The search hits' name in the map's legend and hover: which papers the rings are."""
    if mode != "keyword":
        return f"{len(hits):,} closest in meaning to “{query}”"
    of = f" of {hits.total:,}" if len(hits) < hits.total else ""
    return f"best {len(hits):,}{of} matches for “{query}”"


def legend_caption(n_marked_list: int, hits, query: str, mode: str = "keyword") -> str:
    """What the map shows and how to use it (true for this view)."""
    parts = [
        "Each dot is a paper, placed near papers with similar abstracts and coloured by its topic; faint dots are "
        "papers on a topic's border, which clustering left out at first and placed afterwards. **Click a dot to open the paper**; scroll "
        "to zoom, drag to pan; hover a topic in the list to find it. The box and lasso tools select papers for "
        "your reading list."
    ]
    if query and mode != "keyword" and hits is not None and len(hits):
        parts.append(
            f"Rings: the {len(hits):,} papers closest in meaning to “{text.plain(query)}” (semantic search, as on the "
            "Search page: cosine similarity of each paper's embedding to the query's, by the corpus's own model; "
            f"at most {MAP_HITS} and a tenth of the papers shown)."
        )
    elif query and mode == "keyword":
        found = len(hits) if hits is not None else 0
        of = f"{found:,} papers" if not found or found >= hits.total else f"{found:,} best of the {hits.total:,} papers"
        parts.append(
            f"Rings: the {of} sharing a word with “{text.plain(query)}” (keyword search, as on the Search page: BM25 over "
            "titles and abstracts, papers with the exact phrase first)."
            if found
            else f"No paper matches “{text.plain(query)}”."
        )
    if n_marked_list:
        parts.append(f"Magenta diamonds: the {n_marked_list} papers of your reading list.")
    return " ".join(parts)


def position_map(
    corpus: Corpus,
    point: np.ndarray,
    *,
    topic: int | None,
    name: str,
    key: str,
    mask: np.ndarray | None = None,
    scale: float = 1.0,
    png_name: str = "map",
    on_click: Callable[[int], None] | None = None,
    height: int = 340,
) -> None:
    """A small map: every paper, ``topic`` brought forward and ``point`` as a star drawn on top."""
    x, y = (float(v) for v in np.asarray(point, dtype=float)[:2])
    topic_map(
        corpus, key=key, mask=mask, highlight=topic, overlay=[Overlay(x, y, name, palette.STAR)], view_in_url=False,
        height=height, scale=scale, legend=False, select=False, clickable=on_click is not None, topic_labels="highlight",
        png_name=png_name,
        caption=f"Where {name} lies on the topic map", on_click=on_click,
    )  # fmt: skip
