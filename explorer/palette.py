"""One palette for every view: the app's charts, its map component and the offline export.

A topic's colour is a function of its id alone (``topic_colour``), so a topic keeps its colour on
every page, in every chart, in the exported file and after a rebuild that keeps its id. Plain
Python with no imports beyond the standard library: ``pipeline.export`` uses it without Streamlit
or plotly.

The colours are Okabe-Ito's colour-blind-safe set (without black and yellow, which are weak on
white) followed by Paul Tol's muted scheme. Sixteen colours repeat beyond sixteen topics, so the
map also names topics (labels, a legend that highlights a topic on hover) instead of relying on
colour alone.
"""

from __future__ import annotations

from collections.abc import Iterable

PALETTE: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#332288", "#117733",
    "#882255", "#44AA99", "#999933", "#AA4499", "#DDCC77", "#CC6677", "#88CCEE", "#661100",
)  # fmt: skip
#: Papers outside any topic (topic -1).
OUTLIER = "#9E9E9E"
#: Papers the filters leave out, drawn as faint context on maps.
CONTEXT = "#D0D0D0"
#: Text and outlines.
INK = "#1F2328"
#: The star marking "this paper" or "your abstract": a yellow no topic uses, outlined in ``INK``.
STAR = "#FFD21F"
#: Rings around search hits on the map.
HIT = INK
#: Marks of the reading list's papers on the map (a magenta no topic uses).
LIST = "#E4007C"
#: A comparison with a reference (What changed, in the app and in the offline export): a topic's
#: share that grew, shrank or did not clearly change, and a paper far from all earlier work.
GREW, SHRANK, SAME, FAR = "#0072B2", "#D55E00", "#8C8C8C", "#CC79A7"


def topic_colour(topic: int) -> str:
    """The colour of topic ``topic`` everywhere (outliers, topic -1, are grey)."""
    topic = int(topic)
    return OUTLIER if topic < 0 else PALETTE[topic % len(PALETTE)]


def topic_colours(topics: Iterable[int]) -> list[str]:
    return [topic_colour(int(t)) for t in topics]


def rgb(colour: str) -> tuple[int, int, int]:
    """``"#0072B2"`` -> ``(0, 114, 178)``."""
    value = colour.lstrip("#")
    if len(value) != 6:
        raise ValueError(f"not a #RRGGBB colour: {colour!r}")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)
