"""Plotly figures, as pure functions of arrays and tables (no Streamlit, no I/O).

Topics are coloured by ``pipeline.formats.palette`` (one colour per topic id, shared with the map
component and the offline export). The topic map itself is not plotly: it is the WebGL map
component (``explorer.mapview``, ``explorer.mapcomponent``). Every text that plotly renders as
HTML (hover, labels, tick labels) is escaped with ``esc``, since plotly interprets tags in them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from pipeline.formats.palette import CONTEXT, INK, OUTLIER, PALETTE, topic_colour, topic_colours

__all__ = ["CONTEXT", "INK", "OUTLIER", "PALETTE", "topic_colour", "topic_colours"]

#: A corpus's topic colours (``Corpus.colouring.colours``): topic id -> ``#RRGGBB``. Charts given
#: none colour by id alone (``palette.topic_colour``).
Colours = Mapping[int, str] | None


def _colour(topic: int, colours: Colours) -> str:
    topic = int(topic)
    if topic < 0:
        return OUTLIER
    return colours[topic] if colours and topic in colours else topic_colour(topic)


def _colours(topics, colours: Colours) -> list[str]:
    return [_colour(t, colours) for t in topics]


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
    """Text safe for plotly's HTML-like labels: ``&``, ``<``, ``>`` (and quotes) escaped."""
    s = "" if text is None or (isinstance(text, float) and text != text) else str(text)
    if limit is not None and len(s) > limit:
        s = s[: limit - 1].rstrip() + "…"
    return html.escape(s, quote=False)


def _base(fig: go.Figure, *, height: int, title: str | None = None, legend: bool = False) -> go.Figure:
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
    height ``scale`` times larger, for a projector (``explorer.present.scale``). A copy when
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


def place_labels(
    x: np.ndarray,
    y: np.ndarray,
    texts: Sequence[str],
    priority: np.ndarray,
    *,
    extent: tuple[float, float] | None = None,
    width_px: float = 800,
    height_px: float = 560,
    font_px: float = 14,
    limit: int = 40,
) -> np.ndarray:
    """Indices of labels to draw so that none overlap, most important first (greedy).

    Label boxes are estimated in pixels (``0.6 * font_px`` per character plus padding) for a
    plot of ``width_px`` by ``height_px`` showing ``extent`` (data width and height; by default
    that of the labels), then converted to data units. The defaults suit the narrowest screen
    we design for (1280 px wide with the sidebar open); wider screens only get more room.
    Labels with a negative priority are never placed.
    """
    if len(x) == 0:
        return np.zeros(0, dtype=int)
    xr, yr = extent if extent is not None else (float(np.ptp(x)), float(np.ptp(y)))
    sx, sy = (xr or 1.0) * 1.08 / width_px, (yr or 1.0) * 1.08 / height_px
    kept: list[int] = []
    boxes: list[tuple[float, float, float, float]] = []
    for i in np.argsort(-np.asarray(priority), kind="stable"):
        if priority[i] < 0:
            break
        w = (len(texts[i]) * 0.6 * font_px + 16) * sx / 2
        h = (font_px + 12) * sy / 2
        box = (x[i] - w, x[i] + w, y[i] - h, y[i] + h)
        if any(box[0] < b[1] and b[0] < box[1] and box[2] < b[3] and b[2] < box[3] for b in boxes):
            continue
        kept.append(int(i))
        boxes.append(box)
        if len(kept) >= limit:
            break
    return np.array(kept, dtype=int)


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
) -> go.Figure:
    """Horizontal bars of a topic's keywords and their c-TF-IDF weights, best on top."""
    terms = [esc(t, 40) for t in terms]
    fig = go.Figure(
        go.Bar(
            x=list(weights), y=terms, orientation="h", marker_color=_colour(topic, colours),
            hovertemplate="%{y}: c-TF-IDF %{x:.3f}<extra></extra>",
        )
    )  # fmt: skip
    fig = _base(fig, height=max(220, 30 * len(terms) + 60), title=title)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title="c-TF-IDF weight")
    return fig


def relevance(p_topic: np.ndarray, p_corpus: np.ndarray, lam: float) -> np.ndarray:
    """LDAvis relevance: ``lam * log p(w|t) + (1 - lam) * log(p(w|t) / p(w))``."""
    p_topic = np.clip(np.asarray(p_topic, dtype=float), 1e-12, None)
    p_corpus = np.clip(np.asarray(p_corpus, dtype=float), 1e-12, None)
    return lam * np.log(p_topic) + (1 - lam) * np.log(p_topic / p_corpus)


def rank_by_relevance(terms: pd.DataFrame, lam: float, top: int = 15) -> pd.DataFrame:
    """A topic's rows of topic_terms.parquet, the ``top`` most relevant at ``lam``, with ``relevance``."""
    out = terms.assign(relevance=relevance(terms["p_topic"].to_numpy(), terms["p_corpus"].to_numpy(), lam))
    return out.sort_values(["relevance", "ctfidf"], ascending=False, kind="stable").head(top)


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
            marker_color=_colour(topic, colours), width=0.5, customdata=custom,
            hovertemplate="<b>%{y}</b><br>in topic: %{x:.2f}% (%{customdata[1]:,} uses)<br>in corpus: %{customdata[2]:.2f}%"
            "<br>c-TF-IDF %{customdata[0]:.3f}<br>relevance %{customdata[3]:.2f}<extra></extra>",
        )
    )  # fmt: skip
    fig = _base(fig, height=max(240, 30 * len(terms) + 90), title=f"Most relevant terms at λ = {lam:.2f}", legend=True)
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
    names = [
        f"<b>▶ {t} · {esc(lab, 26)}</b>" if t == assigned else f"{t} · {esc(lab, 26)}"
        for t, lab in zip(topics, labels, strict=True)
    ]
    sims = [float(s) for s in similarities]
    fig = go.Figure(
        go.Bar(
            x=sims, y=names, orientation="h", marker_color=_colours(topics, colours),
            marker_line=dict(width=[3 if t == assigned else 0 for t in topics], color=INK),
            text=[f"{s:.2f}" for s in sims], textposition="auto", hovertemplate="%{y}: cosine %{x:.3f}<extra></extra>",
        )
    )  # fmt: skip
    fig = _base(fig, height=height or max(160, 38 * len(names) + (84 if title else 40)), title=title)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(range=[min(0.0, *sims), 1], title_text="cosine similarity to the topic")
    return fig


def classical_mds(distance: np.ndarray, dims: int = 2) -> np.ndarray:
    """Classical (Torgerson) MDS of a symmetric distance matrix ``(k, k)`` -> ``(k, dims)``."""
    k = len(distance)
    if k == 0:
        return np.zeros((0, dims))
    if k == 1:
        return np.zeros((1, dims))
    d2 = np.asarray(distance, dtype=float) ** 2
    j = np.eye(k) - 1.0 / k
    b = -0.5 * j @ d2 @ j
    vals, vecs = np.linalg.eigh((b + b.T) / 2)
    order = np.argsort(vals)[::-1][:dims]
    out = vecs[:, order] * np.sqrt(np.clip(vals[order], 0, None))
    if out.shape[1] < dims:
        out = np.pad(out, ((0, 0), (0, dims - out.shape[1])))
    return out


def intertopic_map(
    topics: pd.DataFrame,
    similarity: np.ndarray,
    *,
    selected: int | None = None,
    height: int = 560,
    colours: Colours = None,
) -> go.Figure:
    """Topics placed by classical MDS of their cosine distances; bubble area is topic size."""
    xy = classical_mds(1 - np.clip(similarity, -1, 1))
    size = topics["size"].to_numpy(dtype=float)
    diameter = 14 + 56 * np.sqrt(size / max(size.max(), 1))
    ids = topics["topic"].to_numpy()
    sel = ids == selected if selected is not None else np.zeros(len(ids), dtype=bool)
    labels = [esc(s, 28) for s in topics["label"]]
    show = place_labels(
        xy[:, 0], xy[:, 1], [html.unescape(s) for s in labels], size, width_px=700, height_px=height - 80, limit=25
    )
    text = ["" for _ in labels]
    for i in show:
        text[i] = labels[i]
    fig = go.Figure(
        go.Scatter(
            x=xy[:, 0], y=xy[:, 1], mode="markers+text", text=text, textposition="middle center",
            textfont=dict(size=12, color=INK), customdata=np.column_stack([ids, size, topics["share"] * 100]),
            hovertext=[f"<b>{i} · {lab}</b>" for i, lab in zip(ids, labels, strict=True)],
            hovertemplate="%{hovertext}<br>%{customdata[1]:,} papers (%{customdata[2]:.1f}%)<extra></extra>",
            marker=dict(
                size=diameter, color=_colours(ids, colours), opacity=0.55,
                line=dict(width=np.where(sel, 4, 1), color=np.where(sel, INK, "white")),
            ),
        )
    )  # fmt: skip
    fig = _base(fig, height=height, title="Intertopic distance (MDS of topic embeddings; area = papers)")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False, scaleanchor="x", scaleratio=1)
    return fig


def leaf_order(similarity: np.ndarray) -> np.ndarray:
    """Topic rows ordered so that similar topics sit together (average linkage on 1 - cosine)."""
    k = len(similarity)
    if k < 3:
        return np.arange(k)
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    dist = np.clip(1 - np.asarray(similarity, dtype=float), 0, None)
    np.fill_diagonal(dist, 0)
    return leaves_list(linkage(squareform((dist + dist.T) / 2, checks=False), method="average"))


def similarity_heatmap(
    topics: pd.DataFrame, similarity: np.ndarray, *, selected: int | None = None, height: int = 620
) -> go.Figure:
    """Cosine similarity between topics, ordered so that blocks of related topics show."""
    order = leaf_order(similarity)
    k = len(order)
    names = [
        f"{t} · {esc(lab, 24)}" if k <= 40 else str(t) for t, lab in zip(topics["topic"], topics["label"], strict=True)
    ]
    names = [names[i] for i in order]
    z = np.asarray(similarity)[np.ix_(order, order)]
    fig = go.Figure(
        go.Heatmap(
            z=z, x=names, y=names, colorscale="Blues", zmin=float(np.min(z)) if k else 0, zmax=1,
            hovertemplate="%{y}<br>%{x}<br>cosine %{z:.2f}<extra></extra>", colorbar=dict(title="cosine", thickness=14),
        )
    )  # fmt: skip
    fig = _base(fig, height=max(height, min(1400, 18 * k + 200)), title="Topic similarity (cosine of topic embeddings)")
    fig.update_yaxes(autorange="reversed", automargin=True, tickfont=dict(size=12))
    fig.update_xaxes(automargin=True, tickangle=-45, tickfont=dict(size=12))
    if selected is not None and selected in topics["topic"].tolist():
        pos = int(np.flatnonzero(topics["topic"].to_numpy()[order] == selected)[0])
        fig.add_shape(type="rect", x0=-0.5, x1=k - 0.5, y0=pos - 0.5, y1=pos + 0.5, line=dict(color="#D55E00", width=3))
    return fig


def linkage_from_hierarchy(hierarchy: pd.DataFrame, topic_ids: np.ndarray) -> np.ndarray | None:
    """scipy linkage matrix ``(k - 1, 4)`` from hierarchy.parquet, or None if it does not fit.

    Leaves are ``topic_ids`` positions; merged clusters are numbered ``k + i`` in merge order.
    """
    k = len(topic_ids)
    if k < 2 or len(hierarchy) != k - 1:
        return None
    h = hierarchy.sort_values("distance", kind="stable").reset_index(drop=True)
    index = {int(t): i for i, t in enumerate(topic_ids)}
    counts = {i: 1 for i in range(k)}
    z = np.zeros((k - 1, 4))
    for i, row in enumerate(h.itertuples(index=False)):  # k - 1 merges (topics, not papers)
        left, right = index.get(int(row.left_id)), index.get(int(row.right_id))
        if left is None or right is None:
            return None
        z[i] = (left, right, float(row.distance), counts[left] + counts[right])
        index[int(row.parent_id)] = k + i
        counts[k + i] = counts[left] + counts[right]
    if np.any(np.diff(z[:, 2]) < 0):
        return None
    return z


def linkage_from_embeddings(topic_embeddings: np.ndarray) -> np.ndarray | None:
    if len(topic_embeddings) < 2:
        return None
    from scipy.cluster.hierarchy import linkage

    return linkage(np.asarray(topic_embeddings, dtype=float), method="average", metric="cosine")


def dendrogram(
    topics: pd.DataFrame, z: np.ndarray, *, selected: int | None = None, colours: Colours = None
) -> go.Figure:
    """A horizontal dendrogram of topics (leaves on the left axis); ``selected``'s branch in colour.

    Args:
        topics: the topics table (row ``i`` is leaf ``i`` of ``z``).
        z: scipy linkage matrix ``(k - 1, 4)``.
    """
    from scipy.cluster.hierarchy import leaves_list

    k = len(topics)
    ids = topics["topic"].to_numpy()
    leaves = leaves_list(z)
    # Merges often all happen at similar distances (e.g. 0.90-0.97): start the axis a little
    # before the first merge rather than at 0, so the structure is visible.
    lo, hi = float(z[:, 2].min()), float(z[:, 2].max())
    start = max(0.0, lo - max(0.5 * (hi - lo), 0.02 * hi))
    sel = int(np.flatnonzero(ids == selected)[0]) if selected is not None and selected in ids else None
    pos = np.zeros(2 * k - 1)
    height = np.full(2 * k - 1, start)
    pos[leaves] = 5 + 10 * np.arange(k)
    members = [{i} for i in range(k)]
    segments: dict[bool, tuple[list, list]] = {False: ([], []), True: ([], [])}
    for i, (a, b, dist, _) in enumerate(z):  # k - 1 merges (topics, not papers)
        a, b, node = int(a), int(b), k + i
        pos[node], height[node] = (pos[a] + pos[b]) / 2, dist
        members.append(members[a] | members[b])
        for child in (a, b):
            xs, ys = segments[sel is not None and sel in members[child]]
            xs += [height[child], dist, dist, None]
            ys += [pos[child], pos[child], pos[node], None]
    fig = go.Figure()
    for on_path, (xs, ys) in segments.items():
        if xs:
            line = (
                dict(color=_colour(int(selected), colours), width=3.5) if on_path else dict(color="#8A8A8A", width=1.6)
            )
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=line, hoverinfo="skip"))
    text = [f"{ids[leaf]} · {esc(topics['label'].iat[leaf], 30)}" for leaf in leaves]
    fig.add_trace(
        go.Scatter(
            x=[start] * k, y=pos[leaves], mode="markers", hovertext=text, hovertemplate="%{hovertext}<extra></extra>",
            marker=dict(size=[15 if leaf == sel else 9 for leaf in leaves], color=[_colour(ids[leaf], colours) for leaf in leaves],
                        line=dict(width=[2 if leaf == sel else 0 for leaf in leaves], color=INK)),
        )
    )  # fmt: skip
    fig = _base(fig, height=max(260, 24 * k + 80), title="Topic hierarchy")
    ticktext = [f"<b>{t}</b>" if leaf == sel else t for t, leaf in zip(text, leaves, strict=True)]
    fig.update_yaxes(
        tickvals=pos[leaves], ticktext=ticktext, showgrid=False, zeroline=False, automargin=True, tickfont=dict(size=13)
    )
    fig.update_xaxes(
        title="merge distance",
        showgrid=True,
        zeroline=False,
        range=[start - 0.02 * (hi - start + 1e-9), hi + 0.04 * (hi - start + 1e-9)],
    )
    return fig


# ------------------------------------------------------------------------------------------
# Trends
# ------------------------------------------------------------------------------------------


def topic_share_lines(
    shares: pd.DataFrame,
    labels: dict[int, str],
    *,
    selected: int | None = None,
    height: int = 420,
    periods: tuple[tuple[int, int], tuple[int, int]] | None = None,
    colours: Colours = None,
) -> go.Figure:
    """Each topic's share of each year's papers.

    Args:
        shares: columns topic, year, n, n_papers, share (0-1).
        labels: topic id -> label.
    """
    fig = go.Figure()
    for topic, part in shares.groupby("topic", sort=True):
        topic = int(topic)
        emph = selected is None or topic == selected
        name = f"{topic} · {esc(labels.get(topic, ''), 30)}"
        fig.add_trace(
            go.Scatter(
                x=part["year"], y=part["share"] * 100, mode="lines+markers", name=name,
                line=dict(color=_colour(topic, colours), width=3.5 if topic == selected else 2), opacity=1 if emph else 0.3,
                customdata=np.column_stack([part["n"], part["n_papers"]]),
                hovertemplate=f"<b>{name}</b><br>%{{x}}: %{{y:.1f}}% (%{{customdata[0]:,}} of %{{customdata[1]:,}} papers)<extra></extra>",
            )
        )  # fmt: skip
    return _year_shares_layout(fig, shares, title="Topic share of each year's papers", height=height, periods=periods)


def keyword_share_lines(
    shares: pd.DataFrame, *, height: int = 420, periods: tuple[tuple[int, int], tuple[int, int]] | None = None
) -> go.Figure:
    """Share of each year's papers using each keyword.

    Args:
        shares: columns term, year, df, n_papers, share (0-1).
    """
    fig = go.Figure()
    for i, (term, part) in enumerate(shares.groupby("term", sort=False)):
        fig.add_trace(
            go.Scatter(
                x=part["year"], y=part["share"] * 100, mode="lines+markers", name=esc(term, 40),
                line=dict(color=PALETTE[i % len(PALETTE)], width=2.5), customdata=np.column_stack([part["df"], part["n_papers"]]),
                hovertemplate=f"<b>{esc(term, 40)}</b><br>%{{x}}: %{{y:.1f}}% (%{{customdata[0]:,}} of %{{customdata[1]:,}} papers)<extra></extra>",
            )
        )  # fmt: skip
    return _year_shares_layout(
        fig, shares, title="Share of each year's papers using the keyword", height=height, periods=periods
    )


def _year_shares_layout(
    fig: go.Figure,
    shares: pd.DataFrame,
    *,
    title: str,
    height: int,
    periods: tuple[tuple[int, int], tuple[int, int]] | None = None,
) -> go.Figure:
    """Axes of a chart of shares of each year's papers (percent, from zero; one tick per year up to
    20), with the two compared ``periods`` (earlier, later) shaded."""
    fig = _base(fig, height=height, title=title, legend=True)
    fig.update_yaxes(title="% of the year's papers", ticksuffix="%", rangemode="tozero")
    fig.update_xaxes(title="year", dtick=1 if shares["year"].nunique() <= 20 else None)
    for (lo, hi), name, colour in zip(periods or (), ("earlier", "later"), ("#9E9E9E", "#0072B2"), strict=False):
        fig.add_vrect(
            x0=lo - 0.45, x1=hi + 0.45, fillcolor=colour, opacity=0.09, line_width=0, layer="below",
            annotation=dict(text=name, font=dict(size=13, color="#555")), annotation_position="top left",
        )  # fmt: skip
    return fig


def distribution_bars(
    names: Sequence[str],
    values: Sequence[float],
    *,
    colours: Sequence[str] | str = PALETTE[0],
    title: str,
    xtitle: str,
    height: int | None = None,
) -> go.Figure:
    """Plain horizontal bars (keyword or topic distribution when a corpus has no years)."""
    names = [esc(n, 40) for n in names]
    fig = go.Figure(
        go.Bar(
            x=list(values), y=names, orientation="h", marker_color=colours, hovertemplate="%{y}: %{x:,}<extra></extra>"
        )
    )
    fig = _base(fig, height=height or max(240, 28 * len(names) + 70), title=title)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title=xtitle)
    return fig


#: |z| above which a change is drawn as sure (``analysis.SURE_Z``).
SURE_Z = 1.96


def change_bars(table: pd.DataFrame, *, label: str, title: str, height: int | None = None) -> go.Figure:
    """Bars of the change in share between two periods (percentage points), in the table's order
    (ranked by log-odds z); changes that could be chance (|z| < 1.96) are drawn pale."""
    names = [esc(n, 36) for n in table[label]]
    change = table["change"].to_numpy(dtype=float) * 100
    z = table["z"].to_numpy(dtype=float) if "z" in table else np.full(len(table), np.inf)
    fig = go.Figure(
        go.Bar(
            x=change, y=names, orientation="h", marker_color=np.where(change >= 0, "#0072B2", "#D55E00"),
            marker_opacity=np.where(np.abs(z) >= SURE_Z, 1.0, 0.35),
            customdata=np.column_stack([table["n_before"], table["share_before"] * 100, table["n_after"], table["share_after"] * 100, z]),
            hovertemplate="<b>%{y}</b><br>before: %{customdata[1]:.1f}% (%{customdata[0]:,} papers)"
            "<br>after: %{customdata[3]:.1f}% (%{customdata[2]:,} papers)<br>change %{x:+.1f} points"
            "<br>log-odds z %{customdata[4]:+.1f}<extra></extra>",
        )
    )  # fmt: skip
    fig = _base(fig, height=height or max(240, 26 * len(names) + 80), title=title)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title="change in share (points)", zeroline=True, zerolinewidth=2, zerolinecolor="#555")
    return fig


def distinctive_bars(table: pd.DataFrame, *, corpus_name: str, height: int | None = None) -> go.Figure:
    """A one-year corpus's distinctive terms: the share of its papers using each (in colour) beside
    the share of the background's abstracts (grey), in the table's order (log-odds z).

    Args:
        table: columns term, df, share, bg_df, bg_share, z (``analysis.distinctive_terms``).
    """
    terms = [esc(t, 36) for t in table["term"]]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=table["share"] * 100, y=terms, orientation="h", name=esc(corpus_name, 40), marker_color=PALETTE[0],
            marker_opacity=np.where(table["z"].to_numpy(dtype=float) >= SURE_Z, 1.0, 0.35),
            customdata=np.column_stack([table["df"], table["z"]]),
            hovertemplate="<b>%{y}</b><br>%{x:.1f}% of these papers (%{customdata[0]:,})<br>log-odds z %{customdata[1]:.1f}<extra></extra>",
        )
    )  # fmt: skip
    fig.add_trace(
        go.Bar(
            x=table["bg_share"] * 100, y=terms, orientation="h", name="background", marker_color="#B8B8B8",
            customdata=table["bg_df"], hovertemplate="<b>%{y}</b><br>%{x:.2f}% of background abstracts (%{customdata:,})<extra></extra>",
        )
    )  # fmt: skip
    fig = _base(
        fig, height=height or max(260, 34 * len(terms) + 110), title="Distinctive terms (vs. ML abstracts)", legend=True
    )
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.08, x=0, yanchor="top"), margin=dict(b=60))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title="share of papers using the term", ticksuffix="%")
    return fig
