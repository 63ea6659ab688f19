"""The map component's state for the app: which containers a map shows, marks, overlays, the view.

The binary containers themselves (points, mask, rows) are ``pipeline.formats.blobs``, shared with
the offline export; here is what only the app needs: the points of a loaded corpus, the JSON state
of one map instance (``map_state``, read by ``frontend/src/index.ts``), the view kept in the URL
and the titles shown on hover. Pure functions, no Streamlit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipeline.formats import blobs, palette

if TYPE_CHECKING:
    from explorer.state.data import Corpus

#: Zoom relative to the whole map (1 = everything fits): the range the map allows.
ZOOM_RANGE = (0.5, 4000.0)
VIEW_RE = re.compile(r"^\s*(-?[0-9.eE+-]+)\s*,\s*(-?[0-9.eE+-]+)\s*,\s*([0-9.eE+-]+)\s*$")


def corpus_points(corpus: Corpus) -> blobs.Blob:
    """``blobs.points_blob`` of a loaded (curated) corpus."""
    synthetic = bool(corpus.manifest and corpus.manifest.synthetic)
    return blobs.points_blob(
        corpus.name, corpus.papers, corpus.tables.topics, synthetic=synthetic, colours=corpus.colouring.colours,
        spacing=corpus.map_spacing,
    )  # fmt: skip


# ------------------------------------------------------------------------------------------
# The JSON state of one map
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Marks:
    """Papers marked on the map (drawn over their dots)."""

    rows: np.ndarray
    label: str
    colour: str = palette.HIT
    shape: str = "ring"  # or "diamond"


@dataclass(frozen=True)
class Overlay:
    """An extra point with its own position, label and colour ("this paper", "your abstract", a
    paper of another corpus placed on this map)."""

    x: float
    y: float
    label: str
    colour: str = palette.STAR
    shape: str = "star"  # or "circle", "diamond"
    size: float = 13.0
    named: bool = True  # label drawn beside the point; False: on hover only (many points)


@dataclass(frozen=True)
class View:
    """Centre (map units) and zoom relative to the whole map; ``text`` is the URL form."""

    x: float
    y: float
    zoom: float
    text: str


def parse_view(value: str | None) -> View | None:
    """``"1.25,-3.5,4"`` -> View; None for a missing or malformed value (the whole map)."""
    if not value:
        return None
    match = VIEW_RE.match(str(value)[:80])
    if not match:
        return None
    try:
        x, y, zoom = (float(v) for v in match.groups())
    except ValueError:
        return None
    if not all(math.isfinite(v) for v in (x, y, zoom)) or not ZOOM_RANGE[0] <= zoom <= ZOOM_RANGE[1]:
        return None
    return View(x, y, zoom, str(value).strip())


def map_state(
    points: blobs.Blob,
    *,
    highlight: int | None = None,
    mask: blobs.Blob | None = None,
    marks: list[tuple[blobs.Blob, Marks]] = (),
    overlay: list[Overlay] = (),
    view: View | None = None,
    scale: float = 1.0,
    legend: bool = True,
    tools: bool = True,
    select: bool = True,
    clickable: bool = True,
    titles: bool = True,
    topic_labels: str = "all",
    png_name: str = "map",
    caption: str = "Topic map",
    answer: dict | None = None,
) -> dict:
    """The JSON a map instance receives (``StateJson`` in ``frontend/src/index.ts``)."""
    return {
        "points": points.id,
        "mask": mask.id if mask is not None else None,
        "marks": [{"rows": blob.id, "shape": m.shape, "colour": m.colour, "label": m.label} for blob, m in marks],
        "overlay": [
            {
                "x": float(o.x),
                "y": float(o.y),
                "label": o.label,
                "colour": o.colour,
                "shape": o.shape,
                "size": o.size,
                "named": o.named,
            }
            for o in overlay
            if math.isfinite(o.x) and math.isfinite(o.y)
        ],
        "highlight": None if highlight is None else int(highlight),
        "view": None if view is None else {"x": view.x, "y": view.y, "zoom": view.zoom},
        "viewKey": "" if view is None else view.text,
        "scale": float(scale),
        "legend": legend,
        "tools": tools,
        "select": select,
        "clickable": clickable,
        "titles": titles,
        "topicLabels": topic_labels,
        "pngName": png_name,
        "caption": caption,
        "answer": answer,
    }


def details(corpus: Corpus, rows) -> dict[str, dict]:
    """What the map shows of papers ``rows`` (hover, labels): title, topic, venue, year, a note.

    Plain text (the map never parses it as HTML); titles cut to ``blobs.TITLE_CHARS``.
    """
    papers = corpus.papers
    out: dict[str, dict] = {}
    for row in rows:
        try:
            r = int(row)
        except (TypeError, ValueError):
            continue
        if not 0 <= r < len(papers) or str(r) in out:
            continue
        title = papers["title"].iat[r]
        title = "(untitled)" if pd.isna(title) or not str(title).strip() else str(title)
        venue, year = papers["venue"].iat[r], papers["year"].iat[r]
        notes = []
        if bool(papers["moved"].iat[r]) if "moved" in papers else False:
            notes.append("moved to this topic by hand")
        if bool(papers["placed"].iat[r]):
            notes.append("added after the topics were fitted")
        out[str(r)] = {
            "title": title if len(title) <= blobs.TITLE_CHARS else title[: blobs.TITLE_CHARS - 1].rstrip() + "…",
            "topic": int(papers["topic"].iat[r]),
            "venue": None if pd.isna(venue) else str(venue),
            "year": None if pd.isna(year) else int(year),
            "note": "; ".join(notes) or None,
        }
    return out
