"""Charts of the years, as plotly figures (pure functions, no Streamlit, no I/O): topic and keyword
shares of each year's papers with the compared periods shaded, emerging and declining bars between
two periods, and, for a corpus without years, plain distributions and its distinctive terms against
the background.

The look they share (``base_layout``, ``esc``, colours) is ``explorer.services.figures``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.services.figures import PALETTE, Colours, base_layout, colour_of, esc, row_height, tick_label


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
                line=dict(color=colour_of(topic, colours), width=3.5 if topic == selected else 2), opacity=1 if emph else 0.3,
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
    fig = base_layout(fig, height=height, title=title, legend=True)
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
    full = [esc(n) for n in names]
    names = [tick_label(n) for n in names]
    fig = go.Figure(
        go.Bar(
            x=list(values), y=names, orientation="h", marker_color=colours, customdata=full,
            hovertemplate="%{customdata}: %{x:,}<extra></extra>",
        )
    )  # fmt: skip
    fig = base_layout(fig, height=height or max(240, row_height(names, 28) * len(names) + 70), title=title)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title=xtitle)
    return fig


#: |z| above which a change is drawn as sure (``analysis.SURE_Z``).
SURE_Z = 1.96


def change_bars(table: pd.DataFrame, *, label: str, title: str, height: int | None = None) -> go.Figure:
    """Bars of the change in share between two periods (percentage points), in the table's order
    (ranked by log-odds z); changes that could be chance (|z| < 1.96) are drawn pale."""
    names = [tick_label(n) for n in table[label]]
    change = table["change"].to_numpy(dtype=float) * 100
    z = table["z"].to_numpy(dtype=float) if "z" in table else np.full(len(table), np.inf)
    fig = go.Figure(
        go.Bar(
            x=change, y=names, orientation="h", marker_color=np.where(change >= 0, "#0072B2", "#D55E00"),
            marker_opacity=np.where(np.abs(z) >= SURE_Z, 1.0, 0.35),
            customdata=np.column_stack([table["n_before"], table["share_before"] * 100, table["n_after"], table["share_after"] * 100, z]),
            hovertext=[esc(n) for n in table[label]],  # whole, where the axis breaks and cuts it
            hovertemplate="<b>%{hovertext}</b><br>before: %{customdata[1]:.1f}% (%{customdata[0]:,} papers)"
            "<br>after: %{customdata[3]:.1f}% (%{customdata[2]:,} papers)<br>change %{x:+.1f} points"
            "<br>log-odds z %{customdata[4]:+.1f}<extra></extra>",
        )
    )  # fmt: skip
    fig = base_layout(fig, height=height or max(240, row_height(names, 26) * len(names) + 80), title=title)
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title="change<br>(points)", zeroline=True, zerolinewidth=2, zerolinecolor="#555")
    return fig


def distinctive_bars(table: pd.DataFrame, *, corpus_name: str, height: int | None = None) -> go.Figure:
    """A one-year corpus's distinctive terms: the share of its papers using each (in colour) beside
    the share of the background's abstracts (grey), in the table's order (log-odds z).

    Args:
        table: columns term, df, share, bg_df, bg_share, z (``analysis.distinctive_terms``).
    """
    terms = [tick_label(t) for t in table["term"]]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=table["share"] * 100, y=terms, orientation="h", name=esc(corpus_name, 40), marker_color=PALETTE[0],
            marker_opacity=np.where(table["z"].to_numpy(dtype=float) >= SURE_Z, 1.0, 0.35),
            customdata=np.column_stack([table["df"], table["z"]]), hovertext=[esc(t) for t in table["term"]],
            hovertemplate="<b>%{hovertext}</b><br>%{x:.1f}% of these papers (%{customdata[0]:,})<br>log-odds z %{customdata[1]:.1f}<extra></extra>",
        )
    )  # fmt: skip
    fig.add_trace(
        go.Bar(
            x=table["bg_share"] * 100, y=terms, orientation="h", name="background", marker_color="#B8B8B8",
            customdata=table["bg_df"], hovertext=[esc(t) for t in table["term"]],
            hovertemplate="<b>%{hovertext}</b><br>%{x:.2f}% of background abstracts (%{customdata:,})<extra></extra>",
        )
    )  # fmt: skip
    fig = base_layout(
        fig,
        height=height or max(260, row_height(terms, 34) * len(terms) + 110),
        title="Distinctive terms (vs. ML abstracts)",
        legend=True,
    )
    fig.update_layout(barmode="group", legend=dict(orientation="h", y=-0.08, x=0, yanchor="top"), margin=dict(b=60))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title="share of papers", ticksuffix="%")  # using the term: the caption says so
    return fig
