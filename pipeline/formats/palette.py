"""One palette for every view: the app's charts, its map component and the offline export.

A corpus's topic colours come from ``map_colouring``: topics whose papers are neighbours on the
map (``topic_links``: k nearest papers in the 2-D layout) never share a colour, by a deterministic
greedy colouring of that graph. It is a function of the map positions and topic ids alone, so the
app (``Corpus.colouring``), its charts and the offline export (``pipeline.formats.blobs.points_blob``)
compute the same colours, and a topic keeps its colour on every page and in the exported file.
``topic_colour`` (a function of the id alone) remains for charts of topics without a map.
``pipeline.export.export`` uses this module without Streamlit or plotly (numpy and scipy, imported
where they are used, for the neighbours).

The colours are Okabe-Ito's colour-blind-safe set (without black and yellow, which are weak on
white) followed by Paul Tol's muted scheme. Sixteen colours repeat beyond sixteen topics (never on
touching topics while the palette suffices), so the map also names topics (labels, a legend that
highlights a topic on hover) instead of relying on colour alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

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
#: Papers placed on a reference's map beyond which their marks shrink (``placed_sizes``), so that
#: the reference's own dots and topic labels stay readable under a whole conference's papers.
MANY_PLACED = 200


def placed_sizes(n: int) -> tuple[float, float]:
    """Mark sizes (far papers' diamonds, the others' dots) for ``n`` papers placed on a reference's
    map, in the app and in the offline export alike."""
    return (11.0, 8.0) if n <= MANY_PLACED else (7.0, 4.0)


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


# ------------------------------------------------------------------------------------------
# Topic colours of one corpus: topics that touch on the map never share a colour
# ------------------------------------------------------------------------------------------

#: Neighbours per paper when finding which topics touch on the map.
TOUCH_NEIGHBOURS = 8
#: Two topics touch when at least this many of their papers' map neighbours (of the
#: ``TOUCH_NEIGHBOURS`` nearest) lie in the other topic: a paper or two thrown into another
#: cluster by the layout do not make two topics neighbours, a shared border does.
TOUCH_MIN_LINKS = 3
#: Papers used to find neighbours (an even sample of larger corpora: borders stay borders).
TOUCH_MAX_POINTS = 200_000
#: Palette colours closer than this (CIE76 distance in Lab) are told apart less easily; touching
#: topics avoid them when a clearly different colour is free.
SIMILAR = 30.0


@dataclass(frozen=True)
class Colouring:
    """The colours of one corpus's topics (``colour_topics``).

    Attributes:
        colours: topic id -> ``#RRGGBB`` (outliers, topic -1, are not in it: ``OUTLIER``).
        touching: ``(a, b)`` with ``a < b`` -> map-neighbour links between the two topics, for the
            pairs that touch (at least ``TOUCH_MIN_LINKS``).
        clashes: touching pairs that share a colour anyway, because more topics touch one another
            than the palette has colours (empty otherwise); the colouring keeps their links few.
    """

    colours: dict[int, str]
    touching: dict[tuple[int, int], int]
    clashes: tuple[tuple[int, int], ...] = ()

    def colour(self, topic: int) -> str:
        topic = int(topic)
        return OUTLIER if topic < 0 else self.colours.get(topic, topic_colour(topic))

    def note(self) -> str | None:
        """One sentence for the map when touching topics had to share a colour, else None."""
        if not self.clashes:
            return None
        n = len(self.clashes)
        return (
            f"{n} pair{'s' if n != 1 else ''} of neighbouring topics share a colour: more topics touch one another "
            f"than the colour-blind-safe palette has colours ({len(PALETTE)}). Their labels tell them apart."
        )

    def to_dict(self) -> dict:
        """As JSON (``map.json``, written by the build): colours by topic id, touching pairs with
        their links, clashes."""
        return {
            "colours": {str(t): c for t, c in sorted(self.colours.items())},
            "touching": [[a, b, n] for (a, b), n in sorted(self.touching.items())],
            "clashes": [list(pair) for pair in self.clashes],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Colouring:
        """The inverse of ``to_dict``."""
        return cls(
            {int(t): str(c) for t, c in data["colours"].items()},
            {(int(a), int(b)): int(n) for a, b, n in data["touching"]},
            tuple((int(a), int(b)) for a, b in data["clashes"]),
        )


def topic_links(
    x, y, topic, *, k: int = TOUCH_NEIGHBOURS, max_points: int = TOUCH_MAX_POINTS
) -> dict[tuple[int, int], int]:
    """How often papers of two topics are map neighbours.

    Args:
        x, y: float ``(papers,)`` map positions.
        topic: int ``(papers,)`` topic ids (negative: outliers, left out).
        k: neighbours per paper.
        max_points: above this many papers, an even sample of them is used.

    Returns:
        ``(a, b)`` with ``a < b`` -> the number of (paper, one of its ``k`` nearest papers) pairs
        whose topics are ``a`` and ``b``.
    """
    import numpy as np
    from scipy.spatial import cKDTree

    xy = np.column_stack([np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)])
    topic = np.asarray(topic, dtype=np.int64)
    keep = np.isfinite(xy).all(axis=1) & (topic >= 0)
    xy, topic = xy[keep], topic[keep]
    order = np.lexsort((topic, xy[:, 1], xy[:, 0]))  # the same links whatever the papers' order
    xy, topic = xy[order], topic[order]
    if len(topic) > max_points:  # an even, deterministic sample
        step = -(-len(topic) // max_points)
        xy, topic = xy[::step], topic[::step]
    if len(topic) < 2:
        return {}
    k = min(k, len(topic) - 1)
    _, nbr = cKDTree(xy).query(xy, k=k + 1, workers=-1)  # threads: the same neighbours, sooner
    a = np.repeat(topic, k)
    b = topic[nbr[:, 1:].ravel()]
    cross = a != b
    lo, hi = np.minimum(a[cross], b[cross]), np.maximum(a[cross], b[cross])
    # one integer per pair, in (lo, hi) order: a 1-d unique is several times faster than rows'
    base = int(topic.max()) + 1
    keys, counts = np.unique(lo * base + hi, return_counts=True)
    return {(int(q // base), int(q % base)): int(c) for q, c in zip(keys, counts, strict=True)}


def colour_topics(
    topics: Iterable[int], links: Mapping[tuple[int, int], int], *, min_links: int = TOUCH_MIN_LINKS
) -> Colouring:
    """Colours for ``topics`` such that topics that touch on the map never share one.

    Greedy graph colouring (DSatur: the topic with the most differently coloured neighbours next,
    then the most linked, then the lowest id) over the touching pairs, deterministic. Each topic takes
    the colour that costs least: first no touching neighbour of the same colour (if the palette runs
    out, the fewest links to one), then few links to any neighbour of the same or a similar colour,
    then the colour used least so far (so all colours are used before one repeats), then palette order.
    When touching topics had to share, topics then move to the colour where they clash least.

    Args:
        topics: topic ids (negative ones are skipped: they are ``OUTLIER``).
        links: ``topic_links`` (pairs with fewer than ``min_links`` links do not count as touching,
            but still steer the choice between free colours).
    """
    ids = sorted({int(t) for t in topics if int(t) >= 0})
    weight: dict[int, dict[int, int]] = {t: {} for t in ids}
    for (a, b), w in links.items():
        if a in weight and b in weight and a != b:
            weight[a][b] = weight[a].get(b, 0) + int(w)
            weight[b][a] = weight[b].get(a, 0) + int(w)
    touch = {t: {u for u, w in nb.items() if w >= min_links} for t, nb in weight.items()}
    linked = {t: sum(weight[t][u] for u in touch[t]) for t in ids}
    similar = [[i != j and _distance(c, d) < SIMILAR for j, d in enumerate(PALETTE)] for i, c in enumerate(PALETTE)]
    chosen: dict[int, int] = {}
    uses = [0] * len(PALETTE)
    while len(chosen) < len(ids):
        free = [t for t in ids if t not in chosen]
        t = min(free, key=lambda v: (-len({chosen[u] for u in touch[v] if u in chosen}), -len(touch[v]), -linked[v], v))

        def cost(c: int, t: int = t) -> tuple:
            clash = sum(weight[t][u] for u in touch[t] if chosen.get(u) == c)
            near = sum(w for u, w in weight[t].items() if u in chosen and (chosen[u] == c or similar[c][chosen[u]]))
            return clash, near, uses[c], c

        c = min(range(len(PALETTE)), key=cost)
        chosen[t] = c
        uses[c] += 1

    # When the palette ran out, move topics, or swap two topics' colours, while that lowers the
    # links between touching topics of one colour (all neighbours are coloured now).
    def clash(t: int, c: int, without: int | None = None) -> int:
        return sum(weight[t][u] for u in touch[t] if u != without and chosen[u] == c)

    for _ in range(len(ids)):
        moved = False
        for t in ids:
            if clash(t, chosen[t]) == 0:
                continue
            best = min(range(len(PALETTE)), key=lambda c, t=t: (clash(t, c), c))
            if clash(t, best) < clash(t, chosen[t]):
                chosen[t], moved = best, True
                continue
            for u in ids:  # a swap: t takes u's colour and u takes t's
                ct, cu = chosen[t], chosen[u]
                if u == t or ct == cu:
                    continue
                before = clash(t, ct) + clash(u, cu)
                after = clash(t, cu, without=u) + clash(u, ct, without=t)
                if after < before:
                    chosen[t], chosen[u], moved = cu, ct, True
                    break
        if not moved:
            break
    touching = {(a, b): weight[a][b] for a in ids for b in sorted(touch[a]) if a < b}
    clashes = tuple(pair for pair in touching if chosen[pair[0]] == chosen[pair[1]])
    return Colouring({t: PALETTE[c] for t, c in sorted(chosen.items())}, touching, clashes)


def map_colouring(x, y, paper_topic, topics: Iterable[int]) -> Colouring:
    """``colour_topics`` of ``topics`` from their papers' map positions (``topic_links``): the
    colouring of a corpus, the same in the app, its charts and the offline export.

    Args:
        x, y: float ``(papers,)`` map positions.
        paper_topic: int ``(papers,)`` each paper's topic id.
        topics: the topic ids to colour. Those without papers take ``topic_colour`` (so that the
            others get the same colours whether or not a table lists empty topics).
    """
    import numpy as np

    paper_topic = np.asarray(paper_topic, dtype=np.int64)
    topics = [int(t) for t in topics]
    present = set(np.unique(paper_topic).tolist())
    colouring = colour_topics([t for t in topics if t in present], topic_links(x, y, paper_topic))
    empty = {t: topic_colour(t) for t in topics if t >= 0 and t not in present}
    return Colouring({**colouring.colours, **empty}, colouring.touching, colouring.clashes)


def _lab(colour: str) -> tuple[float, float, float]:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    def f(v: float) -> float:
        return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116

    r, g, b = (linear(v / 255) for v in rgb(colour))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _distance(a: str, b: str) -> float:
    """CIE76 colour difference of two ``#RRGGBB`` colours."""
    return math.dist(_lab(a), _lab(b))
