"""All topics at once, as plotly figures (pure functions, no Streamlit, no I/O): the intertopic
distance map (classical MDS of topic embeddings, labels placed so that none overlap), the topic
similarity heatmap and the hierarchy's dendrogram, with the scipy linkage they are drawn from.

The look they share (``base_layout``, ``esc``, colours) is ``explorer.services.figures``'s.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.services.figures import INK, Colours, base_layout, colour_of, colours_of, esc


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
                size=diameter, color=colours_of(ids, colours), opacity=0.55,
                line=dict(width=np.where(sel, 4, 1), color=np.where(sel, INK, "white")),
            ),
        )
    )  # fmt: skip
    fig = base_layout(fig, height=height, title="Intertopic distance (MDS of topic embeddings; area = papers)")
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
    fig = base_layout(
        fig, height=max(height, min(1400, 18 * k + 200)), title="Topic similarity (cosine of topic embeddings)"
    )
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
                dict(color=colour_of(int(selected), colours), width=3.5)
                if on_path
                else dict(color="#8A8A8A", width=1.6)
            )
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=line, hoverinfo="skip"))
    text = [f"{ids[leaf]} · {esc(topics['label'].iat[leaf], 30)}" for leaf in leaves]
    fig.add_trace(
        go.Scatter(
            x=[start] * k, y=pos[leaves], mode="markers", hovertext=text, hovertemplate="%{hovertext}<extra></extra>",
            marker=dict(size=[15 if leaf == sel else 9 for leaf in leaves], color=[colour_of(ids[leaf], colours) for leaf in leaves],
                        line=dict(width=[2 if leaf == sel else 0 for leaf in leaves], color=INK)),
        )
    )  # fmt: skip
    fig = base_layout(fig, height=max(260, 24 * k + 80), title="Topic hierarchy")
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
