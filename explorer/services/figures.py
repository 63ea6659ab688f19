"""Plotly figures, as pure functions of arrays and tables (no Streamlit, no I/O): the look every
chart shares (font, hover, mode bar, PNG names, ``esc``, present-mode text scaling) and one topic's
charts (its keywords, relevance bars, a paper's closest topics).

All topics at once (intertopic distance, similarity, hierarchy) are in ``explorer.services.overview_figures``,
shares over the years and changes between periods in ``explorer.services.trend_figures``.
Topics are coloured by ``pipeline.formats.palette`` (one colour per topic id, shared with the map
component and the offline export). The topic map itself is not plotly: it is the WebGL map
component (``explorer.services.mapview``, ``explorer.ui.mapcomponent``). Every text that plotly renders as
HTML (hover, labels, tick labels) is escaped with ``esc``, since plotly interprets tags in them.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from pipeline.formats.palette import CONTEXT, INK, OUTLIER, PALETTE, topic_colour, topic_colours
from pipeline.model.keywords import keyword_list
from pipeline.model.label_evidence import WEAK_MARK

__all__ = ["CONTEXT", "INK", "OUTLIER", "PALETTE", "topic_colour", "topic_colours"]

#: A corpus's topic colours (``Corpus.colouring.colours``): topic id -> ``#RRGGBB``. Charts given
#: none colour by id alone (``palette.topic_colour``).
Colours = Mapping[int, str] | None


def colour_of(topic: int, colours: Colours) -> str:
    topic = int(topic)
    if topic < 0:
        return OUTLIER
    return colours[topic] if colours and topic in colours else topic_colour(topic)


def colours_of(topics, colours: Colours) -> list[str]:
    return [colour_of(t, colours) for t in topics]


FONT = dict(family="Source Sans Pro, Segoe UI, Helvetica, Arial, sans-serif", size=15, color=INK)
HOVER = dict(font=dict(size=14, family=FONT["family"], color=INK), bgcolor="white", bordercolor="#888", align="left")
#: The mode bar of every chart: zoom, pan, reset and "Download plot as a PNG" (see ``config``).
CONFIG = {"displaylogo": False, "scrollZoom": True, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}
IMAGE_SCALE = 2  # PNGs at twice the screen size: sharp on slides and projectors


def image_name(*parts: object) -> str:
    """A file name (without extension) from the view: ``neurips-topic-3-keywords``; safe characters only."""
    raw = "-".join(str(p) for p in parts if p is not None and str(p) != "")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-.")[:100] or "chart"


def config(filename: str) -> dict:
    """Plotly config for a chart whose PNG download is named ``filename``.png."""
    return dict(CONFIG, toImageButtonOptions={"format": "png", "filename": image_name(filename), "scale": IMAGE_SCALE})


def esc(text: object, limit: int | None = None) -> str:
    """Text safe for plotly's HTML-like labels: ``&``, ``<``, ``>`` (and quotes) escaped; cut to
    ``limit`` characters with "…", a weak label's mark (``WEAK_MARK``) kept after the cut."""
    s = "" if text is None or (isinstance(text, float) and text != text) else str(text)
    if limit is not None and len(s) > limit:
        mark = WEAK_MARK if s.endswith(WEAK_MARK) and limit > 2 * len(WEAK_MARK) else ""
        s = s[: limit - 1 - len(mark)].rstrip() + "…" + mark
    return html.escape(s, quote=False)


#: A category label's line in a bar chart that may sit in a narrow column (a half-width panel at
#: 1280 px): about 22 characters of the charts' 15 px font, 2 lines at most (``tick_label``).
TICK_WIDTH, TICK_LINES = 22, 2


def tick_lines(text: object, width: int = TICK_WIDTH, lines: int = TICK_LINES) -> list[str]:
    """``text`` broken at spaces into at most ``lines`` lines of about ``width`` characters, each
    escaped (``esc``); what does not fit is cut with "…" on the last line, a weak label's mark kept.
    Plotly widens a chart's margin for its labels only as far as the plot leaves room: past that
    it cuts them on the left, so a long "17 · treatment, causal…" read "7 · treatment, causal…".
    Two short lines keep the start (a topic's number) where it can be read."""
    s = "" if text is None or (isinstance(text, float) and text != text) else " ".join(str(text).split())
    parts = textwrap.wrap(s, width, break_long_words=False, break_on_hyphens=False) or [""]
    if len(parts) > lines:
        parts = [*parts[: lines - 1], " ".join(parts[lines - 1 :])]
    return [esc(line, width + 1) for line in parts]


def tick_label(text: object, width: int = TICK_WIDTH, lines: int = TICK_LINES) -> str:
    """``tick_lines`` joined for plotly (``<br>``)."""
    return "<br>".join(tick_lines(text, width, lines))


#: Lines for a chart that sits in a page's side column (a paper's closest topics: about 210
#: pixels wide on a 1024-pixel screen): 16 characters of a 13 px font, 3 lines at most.
NARROW_TICKS, NARROW_FONT = (16, 3), 13


def row_height(labels: Sequence[str], one_line: int) -> int:
    """Pixels per bar: ``one_line``, or room for the lines of the 15 px font where a label wraps."""
    lines = max((label.count("<br>") + 1 for label in labels), default=1)
    return one_line if lines == 1 else max(one_line, 22 + 18 * lines)


def base_layout(fig: go.Figure, *, height: int, title: str | None = None, legend: bool = False) -> go.Figure:
    fig.update_layout(
        template="plotly_white",
        height=height,
        font=FONT,
        title=dict(text=esc(title), font=dict(size=17)) if title else None,
        margin=dict(l=10, r=10, t=44 if title else 10, b=10),
        hoverlabel=HOVER,
        showlegend=legend,
        paper_bgcolor="white",
        plot_bgcolor="white",
    )
    return fig


def scale_text(fig: go.Figure, scale: float) -> go.Figure:
    """``fig`` with its text (title, axes, ticks, legend, annotations, hover, bar labels) and its
    height ``scale`` times larger, for a projector (``explorer.ui.present.scale``). A copy when
    ``scale != 1``; the figure itself otherwise (cached figures stay untouched)."""
    if scale == 1:
        return fig
    fig = go.Figure(fig)
    layout = fig.layout
    base = layout.font.size or 12

    def grow(font) -> dict:
        return {"size": (font.size or base) * scale} if font is not None and font.size else {}

    fig.update_layout(font_size=base * scale, hoverlabel_font_size=(layout.hoverlabel.font.size or base) * scale)
    if layout.title.text:
        fig.update_layout(title_font_size=(layout.title.font.size or base * 1.2) * scale)
    if layout.legend.font.size:
        fig.update_layout(legend_font_size=layout.legend.font.size * scale)
    for axis in [*fig.select_xaxes(), *fig.select_yaxes()]:
        axis.update(tickfont=grow(axis.tickfont), title_font=grow(axis.title.font))
    for note in layout.annotations:
        note.update(font=grow(note.font))
    for trace in fig.data:
        if getattr(trace, "textfont", None) is not None and trace.textfont.size:
            trace.update(textfont_size=trace.textfont.size * scale)
        if trace.type == "sankey" and trace.node.pad:  # labels grow: so does the room between nodes
            trace.update(node_pad=trace.node.pad * scale)
    if layout.height:
        fig.update_layout(height=int(layout.height * scale))
    margin = layout.margin
    fig.update_layout(margin={k: int(getattr(margin, k) * scale) for k in "tblr" if getattr(margin, k) is not None})
    return fig


# ------------------------------------------------------------------------------------------
# Topics
# ------------------------------------------------------------------------------------------


def keyword_bars(
    terms: Sequence[str],
    weights: Sequence[float],
    *,
    topic: int,
    title: str = "Top keywords (c-TF-IDF)",
    colours: Colours = None,
    behind: Sequence[str] | None = None,
) -> go.Figure:
    """Horizontal bars of a topic's keywords and their c-TF-IDF weights, best on top; ``behind``:
    the vocabulary's term behind each keyword (``keyword_terms``), whose weight it is, named on
    hover where the keyword is written as a longer phrase ("series forecasting")."""
    notes = [
        f" (of the term “{esc(b, 40)}”)" if b is not None and str(b).lower() != str(t).lower() else ""
        for t, b in zip(terms, behind if behind is not None else [None] * len(terms), strict=True)
    ]
    terms = [esc(t, 40) for t in terms]
    fig = go.Figure(
        go.Bar(
            x=list(weights), y=terms, orientation="h", marker_color=colour_of(topic, colours), customdata=notes,
            hovertemplate="%{y}: c-TF-IDF %{x:.3f}%{customdata}<extra></extra>",
        )
    )  # fmt: skip
    fig = base_layout(fig, height=max(220, 30 * len(terms) + 60), title=title)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title="c-TF-IDF weight")
    return fig


def relevance(p_topic: np.ndarray, p_corpus: np.ndarray, lam: float) -> np.ndarray:
    """LDAvis relevance: ``lam * log p(w|t) + (1 - lam) * log(p(w|t) / p(w))``."""
    p_topic = np.clip(np.asarray(p_topic, dtype=float), 1e-12, None)
    p_corpus = np.clip(np.asarray(p_corpus, dtype=float), 1e-12, None)
    return lam * np.log(p_topic) + (1 - lam) * np.log(p_topic / p_corpus)


def rank_by_relevance(terms: pd.DataFrame, lam: float, top: int = 15) -> pd.DataFrame:
    """A topic's rows of topic_terms.parquet, the ``top`` most relevant at ``lam``, with ``relevance``;
    as its keywords, one form of each term, the more relevant ("GNNs" or "GNN"), and none that a
    longer one shown holds in most of its uses ("series" beside "time series"; ``keywords.keyword_list``)."""
    out = terms.assign(relevance=relevance(terms["p_topic"].to_numpy(), terms["p_corpus"].to_numpy(), lam))
    out = out.sort_values(["relevance", "ctfidf"], ascending=False, kind="stable")
    names = out["term"].astype(str).tolist()
    uses = dict(zip(names, out["count"].astype(float), strict=True))
    kept = keyword_list(list(zip(names, range(len(names)), strict=True)), lambda t: uses.get(t, 0.0), top)
    return out.iloc[[at for _, at in kept]]


def relevance_bars(ranked: pd.DataFrame, *, topic: int, lam: float, colours: Colours = None) -> go.Figure:
    """LDAvis-style bars: p(w|t) in the topic's colour over p(w) in grey, ranked by relevance."""
    terms = [esc(t, 40) for t in ranked["term"]]
    custom = np.column_stack([ranked["ctfidf"], ranked["count"], ranked["p_corpus"] * 100, ranked["relevance"]])
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=ranked["p_corpus"] * 100, y=terms, orientation="h", name="share of all terms in the corpus",
            marker_color="#C8C8C8", hoverinfo="skip",
        )
    )  # fmt: skip
    fig.add_trace(
        go.Bar(
            x=ranked["p_topic"] * 100, y=terms, orientation="h", name="share of this topic's terms",
            marker_color=colour_of(topic, colours), width=0.5, customdata=custom,
            hovertemplate="<b>%{y}</b><br>in topic: %{x:.2f}% (%{customdata[1]:,} uses)<br>in corpus: %{customdata[2]:.2f}%"
            "<br>c-TF-IDF %{customdata[0]:.3f}<br>relevance %{customdata[3]:.2f}<extra></extra>",
        )
    )  # fmt: skip
    fig = base_layout(
        fig, height=max(240, 30 * len(terms) + 90), title=f"Most relevant terms at λ = {lam:.2f}", legend=True
    )
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", y=-0.12, x=0, yanchor="top"), margin=dict(b=70))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(ticksuffix="%")
    return fig


def topic_similarity_bars(
    labels: Sequence[str],
    topics: Sequence[int],
    similarities: Sequence[float],
    *,
    height: int | None = None,
    assigned: int | None = None,
    title: str | None = None,
    colours: Colours = None,
) -> go.Figure:
    """Horizontal bars of a paper's (or a new abstract's) closest topics by cosine similarity to
    their embeddings, a plain number from -1 to 1 (not a share); the ``assigned`` topic (its topic
    from clustering) is outlined, in bold and marked ▶."""
    lines = [
        tick_lines(f"▶ {t} · {lab}" if t == assigned else f"{t} · {lab}", *NARROW_TICKS)
        for t, lab in zip(topics, labels, strict=True)
    ]
    names = [
        "<br>".join(f"<b>{line}</b>" for line in parts) if t == assigned else "<br>".join(parts)
        for t, parts in zip(topics, lines, strict=True)
    ]
    full = [esc(f"{t} · {lab}") for t, lab in zip(topics, labels, strict=True)]
    sims = [float(s) for s in similarities]
    fig = go.Figure(
        go.Bar(
            x=sims, y=names, orientation="h", marker_color=colours_of(topics, colours),
            marker_line=dict(width=[3 if t == assigned else 0 for t in topics], color=INK),
            text=[f"{s:.2f}" for s in sims], textposition="auto", customdata=full,
            hovertemplate="%{customdata}: cosine %{x:.3f}<extra></extra>",
        )
    )  # fmt: skip
    fig = base_layout(
        fig, height=height or max(160, row_height(names, 38) * len(names) + (84 if title else 40)), title=title
    )
    fig.update_yaxes(autorange="reversed", automargin=True, tickfont=dict(size=NARROW_FONT))
    # "cosine" (to the topic): the caption beside the chart says it in full
    fig.update_xaxes(range=[min(0.0, *sims), 1], title_text="cosine")
    return fig
