"""The comparison views' read side: comparisons and lineages, and their plotly figures.

``get_comparison`` returns the comparison of two corpora: the one the CLI stored
(``python -m pipeline compare NEW REF``, ``pipeline.analysis.comparison.store``) when it matches both builds,
else computed here; the app goes through ``explorer.ui.caches.get_comparison``, which computes it once
and keeps it in memory, keyed by both builds (and their topic edits). Nothing is fitted: placing
papers is nearest-neighbour arithmetic on stored embeddings. Comparisons too large to compute while
a reader waits (``MAX_PAIRS``) must come from the CLI; the error says so.

The figure builders are pure functions of the comparison's tables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.services.figures import CONTEXT, INK, base_layout, esc, topic_colour
from explorer.services.mapview import Overlay
from explorer.state.data import Corpus
from pipeline.analysis import compare as cmp
from pipeline.analysis import comparison as stored_comparisons
from pipeline.analysis.comparison import CompareError, CompareParams, Comparison
from pipeline.analysis.lineage import Lineage, lineage
from pipeline.analysis.side import Side
from pipeline.formats.palette import FAR, GREW, SAME, SHRANK, placed_sizes

#: The What changed page's views (``show=``), with their names (its radio, tours' step names).
VIEWS = {
    "overview": "At a glance",
    "shares": "Topic shares",
    "matching": "Topic matching",
    "terms": "Terms",
    "novelty": "Far from earlier work",
    "map": "On the reference map",
}

#: New papers x reference papers compared in the app at most (about 10 s on 2 cores); beyond it the
#: comparison is precomputed with ``python -m pipeline compare``.
MAX_PAIRS = 120_000_000
#: Colours of a new topic's match status (right-hand nodes of the matching chart).
STATUS_COLOURS = {"matched": "#009E73", "merged": "#56B4E9", "split": "#E69F00", "gone": FAR, "unseen": CONTEXT, "unclear": SAME,
                  "small": CONTEXT}  # fmt: skip


def side_of(corpus: Corpus) -> Side:
    """A loaded corpus as the comparison's :class:`~pipeline.analysis.side.Side` (no copy of the embeddings)."""
    papers = corpus.papers
    texts = papers["model_text"]
    ngrams = (corpus.manifest.params or {}).get("represent", {}).get("ngram_range", (1, 2))
    return Side(
        name=corpus.name,
        build_id=corpus.build_id,
        model_key=str(corpus.manifest.embedding.model_key or ""),
        doc_ids=papers["doc_id"].astype(str).to_numpy(dtype=object),
        topics=papers["topic"].to_numpy(dtype=np.int64),
        years=papers["year"].astype("Float64").to_numpy(dtype=float, na_value=np.nan),
        embeddings=corpus.embeddings,
        xy=corpus.xy,
        topic_table=cmp.topic_frame(corpus.tables.topics),
        topic_embeddings=np.asarray(corpus.tables.topic_embeddings, dtype=np.float32),
        terms=corpus.terms[["term", "df"]],
        texts=lambda rows: texts.iloc[np.asarray(rows, dtype=np.int64)].fillna("").astype(str).tolist(),
        ngram_range=tuple(ngrams),
        written=corpus.written,
    )


def check_pair(new: Corpus, ref: Corpus) -> str | None:
    """Why these two corpora cannot be compared in the app, or None."""
    if new.name == ref.name:
        return "a corpus cannot be its own reference: pick another corpus."
    key_new = new.manifest.embedding.model_key
    key_ref = ref.manifest.embedding.model_key
    if key_new and key_ref and key_new != key_ref:
        return (
            f"{new.name} and {ref.name} were embedded with different models, so their papers cannot be placed "
            "on each other's map. Rebuild one with the other's embedding settings."
        )
    return None


def compute(new: Corpus, ref: Corpus) -> Comparison:
    """The comparison of ``new`` with reference ``ref``, computed here (nothing is fitted)."""
    return cmp.compare(side_of(new), side_of(ref), CompareParams())


def read_stored(new: Corpus, ref: Corpus) -> Comparison | None:
    """The comparison of the pair the CLI stored for both builds, or None."""
    return stored_comparisons.stored(new.root, side_of(new), side_of(ref))


def stored_version(new: Corpus, ref: Corpus) -> str:
    """Which stored comparison of the pair is current (its folder), "" when none: part of the cache
    key, so that one stored by the CLI while the app runs is picked up on the next rerun."""
    link = stored_comparisons.comparison_dir(new.root, new.name, ref.name)
    return link.resolve().name if link.exists() else ""


def get_comparison(
    new: Corpus,
    ref: Corpus,
    *,
    stored: Callable[[Corpus, Corpus], Comparison | None],
    computed: Callable[[Corpus, Corpus], Comparison],
) -> Comparison:
    """The comparison of ``new`` with reference ``ref``: stored by the CLI, or computed.

    Args:
        stored, computed: :func:`read_stored` and :func:`compute`, or what keeps their results
            (the app passes ``explorer.ui.caches``' shared copies).

    Raises:
        CompareError: the pair cannot be compared, or is too large to compare in the app.
    """
    problem = check_pair(new, ref)
    if problem:
        raise CompareError(problem)
    if not new.edits_key and not ref.edits_key:  # stored comparisons know the builds' own topics only
        found = stored(new, ref)
        if found is not None and found.summary.params == CompareParams():
            return found
    if new.n_papers * ref.n_papers > MAX_PAIRS:
        raise CompareError(
            f"comparing {new.n_papers:,} papers with {ref.n_papers:,} takes too long to do while you wait. "
            f"Compute it once with `python -m pipeline compare {new.name} {ref.name}` and reload this page."
        )
    return computed(new, ref)


def get_lineage(corpus: Corpus, periods: list[tuple[int, int]]) -> Lineage:
    """The corpus's topic lineage over ``periods`` (computed; ``explorer.ui.caches`` keeps it)."""
    side = side_of(corpus)
    return lineage(side.years, side.topics, corpus.embeddings, list(periods))


# ------------------------------------------------------------------------------------------
# Links
# ------------------------------------------------------------------------------------------


def paper_url(corpus: str, doc_id: str) -> str:
    """Relative URL of a paper's page in ``corpus``."""
    return "paper?" + urlencode({"corpus": corpus, "paper": doc_id})


# ------------------------------------------------------------------------------------------
# Figures (pure)
# ------------------------------------------------------------------------------------------


def verdict_colour(verdict: str) -> str:
    return GREW if verdict == "grew" else SHRANK if verdict in ("shrank", "gone") else SAME


def share_changes_figure(
    shares: pd.DataFrame, *, title: str, before: str, after: str, height_per_row: int = 22
) -> go.Figure:
    """Each topic's share before (hollow) and after (filled) with intervals, one row per topic.

    Args:
        shares: ``pipeline.analysis.compare.share_changes`` columns plus topic and label, in display order.
        before, after: names of the two sides (hover and legend).
    """
    names = [f"{int(t)} · {esc(lab, 34)}" for t, lab in zip(shares["topic"], shares["label"], strict=True)]
    colours = [verdict_colour(v) for v in shares["verdict"]]
    fig = go.Figure()
    for _, row in shares.iterrows():  # one thin line per topic, from one share to the other
        fig.add_shape(
            type="line", x0=row["share_before"] * 100, x1=row["share_after"] * 100, y0=names[_], y1=names[_],
            line=dict(color=verdict_colour(row["verdict"]), width=2), layer="below",
        )  # fmt: skip
    custom = np.column_stack(
        [
            shares["n_before"], shares["share_before"] * 100, shares["lo_before"] * 100, shares["hi_before"] * 100,
            shares["n_after"], shares["share_after"] * 100, shares["lo_after"] * 100, shares["hi_after"] * 100,
            shares["change_lo"] * 100, shares["change_hi"] * 100, shares["verdict"],
        ]
    )  # fmt: skip
    hover = (
        "<b>%{y}</b><br>" + esc(before) + ": %{customdata[1]:.1f}% (%{customdata[0]} papers, %{customdata[2]:.1f}–%{customdata[3]:.1f})"
        "<br>" + esc(after) + ": %{customdata[5]:.1f}% (%{customdata[4]} papers, %{customdata[6]:.1f}–%{customdata[7]:.1f})"
        "<br>change %{customdata[8]:+.1f} to %{customdata[9]:+.1f} points: %{customdata[10]}<extra></extra>"
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=shares["share_before"] * 100, y=names, mode="markers", name=esc(before), customdata=custom,
            hovertemplate=hover, marker=dict(symbol="circle-open", size=10, color=INK, line=dict(width=2)),
            error_x=dict(type="data", symmetric=False, array=(shares["hi_before"] - shares["share_before"]) * 100,
                         arrayminus=(shares["share_before"] - shares["lo_before"]) * 100, color="#9a9a9a", thickness=1),
        )
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=shares["share_after"] * 100, y=names, mode="markers", name=esc(after), customdata=custom,
            hovertemplate=hover, marker=dict(size=11, color=colours, line=dict(width=1, color="white")),
            error_x=dict(type="data", symmetric=False, array=(shares["hi_after"] - shares["share_after"]) * 100,
                         arrayminus=(shares["share_after"] - shares["lo_after"]) * 100, color="#6a6a6a", thickness=1.5),
        )
    )  # fmt: skip
    fig = base_layout(fig, height=max(260, height_per_row * len(shares) + 110), title=title, legend=True)
    fig.update_yaxes(autorange="reversed", automargin=True, type="category")
    fig.update_xaxes(title="share of papers (%), with intervals", rangemode="tozero", ticksuffix="%")
    fig.update_layout(legend=dict(orientation="h", y=1.0, yanchor="bottom", x=1, xanchor="right"))
    return fig


def terms_figure(terms: pd.DataFrame, *, new: str, ref: str, top: int = 15) -> go.Figure:
    """Diverging bars of the log-odds z-scores: terms used more in ``new`` right, less left."""
    more = terms[terms["side"] == "new"].head(top)
    less = terms[terms["side"] == "ref"].head(top)
    table = pd.concat([more, less.iloc[::-1]], ignore_index=True)
    names = [esc(t, 36) for t in table["term"]]
    fig = go.Figure(
        go.Bar(
            x=table["z"], y=names, orientation="h",
            marker_color=np.where(table["z"] >= 0, GREW, SHRANK),
            customdata=np.column_stack([table["df_new"], table["share_new"] * 100, table["df_ref"], table["share_ref"] * 100]),
            hovertemplate="<b>%{y}</b><br>" + esc(new) + ": %{customdata[0]:,} papers (%{customdata[1]:.1f}%)<br>"
            + esc(ref) + ": %{customdata[2]:,} papers (%{customdata[3]:.1f}%)<br>z = %{x:.1f}<extra></extra>",
        )
    )  # fmt: skip
    fig = base_layout(fig, height=max(260, 24 * len(table) + 100), title=f"Terms that tell {new} from {ref}")
    fig.update_yaxes(autorange="reversed", automargin=True, type="category")
    fig.update_xaxes(
        title=f"← used less in {esc(new)}   ·   z of the log-odds ratio   ·   used more →",
        zeroline=True, zerolinewidth=2, zerolinecolor="#555",
    )  # fmt: skip
    return fig


def novelty_figure(papers: pd.DataFrame, null_p95: float, *, new: str, ref: str) -> go.Figure:
    """Histogram of the new papers' novelty, with the line past which a paper is far from the reference."""
    fig = go.Figure(
        go.Histogram(
            x=papers["novelty"], nbinsx=min(60, max(10, len(papers) // 5)), marker_color=GREW, opacity=0.85,
            hovertemplate="novelty %{x}<br>%{y} papers<extra></extra>", name=esc(new),
        )
    )  # fmt: skip
    fig.add_vline(
        x=null_p95, line=dict(color=FAR, width=3, dash="dash"),
        annotation=dict(text=f"farther than 95% of {esc(ref)}'s own papers", font=dict(color=INK, size=13)),
    )  # fmt: skip
    fig = base_layout(fig, height=260, title=f"How far each paper of {new} lies from {ref}")
    fig.update_xaxes(title="novelty: 1 − mean similarity to the 5 closest reference papers")
    fig.update_yaxes(title="papers")
    return fig


def overlay_points(comparison: Comparison, new: Corpus, *, limit: int | None = None) -> pd.DataFrame:
    """The new papers as extra points on the reference map: what a map overlay needs.

    Returns:
        Columns x, y (reference map coordinates), label (plain title, unescaped: the map escapes
        it), colour (hex), doc_id and url (the new paper's page), far (bool), novelty; most novel
        first, at most ``limit`` rows.
    """
    papers = comparison.papers if limit is None else comparison.papers.head(limit)
    titles = new.papers.set_index("doc_id")["title"].reindex(papers["doc_id"]).fillna("(untitled)")
    return pd.DataFrame(
        {
            "x": papers["x"].to_numpy(dtype=float),
            "y": papers["y"].to_numpy(dtype=float),
            "label": titles.astype(str).to_numpy(),
            "colour": np.where(papers["far"].to_numpy(dtype=bool), FAR, INK),
            "doc_id": papers["doc_id"].to_numpy(),
            "url": [paper_url(new.name, d) for d in papers["doc_id"]],
            "far": papers["far"].to_numpy(dtype=bool),
            "novelty": papers["novelty"].to_numpy(dtype=float),
        }
    )


def overlay(points: pd.DataFrame, *, limit: int = 5_000) -> list:
    """``overlay_points`` as the map component's overlay: far papers as diamonds, the others as
    dots, titles on hover (at most ``limit``, most novel first: one JSON record each); smaller
    marks for many papers (``palette.placed_sizes``, as the offline export draws them)."""
    shown = points.head(limit)
    far_size, near_size = placed_sizes(len(shown))
    return [
        Overlay(float(r.x), float(r.y), str(r.label), str(r.colour), "diamond" if r.far else "circle",
                far_size if r.far else near_size, named=False)
        for r in shown.itertuples()
    ]  # fmt: skip


#: Links of the matching's diagram thinner than this share of their new topic are left out.
SANKEY_MIN_SHARE = 0.1


def drawn_flows(flows: pd.DataFrame, min_share: float = SANKEY_MIN_SHARE) -> pd.DataFrame:
    """The flows ``matching_sankey`` draws: at least ``min_share`` of their new topic's papers."""
    return flows[(flows["papers_b"] > 0) & (flows["from_b"] >= min_share)]


def undrawn_reference_topics(
    flows: pd.DataFrame, matches: pd.DataFrame, min_share: float = SANKEY_MIN_SHARE
) -> list[int]:
    """Reference topics with no link in ``matching_sankey`` (each of their flows under
    ``min_share`` of its new topic), which the page names beside the diagram."""
    drawn = set(drawn_flows(flows, min_share)["topic_a"].astype(int))
    return [int(t) for t in matches.loc[matches["side"] == "a", "topic"] if int(t) not in drawn]


def matching_sankey(
    flows: pd.DataFrame,
    matches: pd.DataFrame,
    *,
    left: str,
    right: str,
    min_share: float = SANKEY_MIN_SHARE,
    height: int = 620,
    colours: Mapping[int, str] | None = None,
) -> go.Figure:
    """Topics of the reference (left) flowing into the new corpus's topics (right).

    Link widths are the new corpus's papers (``papers_b``): how many of each new topic's papers
    have their nearest reference papers (or their own copy) in each reference topic. Links below
    ``min_share`` of the new topic are left out; "nothing close" collects the papers far from the
    whole reference. ``colours``: the reference's topic colours (``Corpus.colouring.colours``).
    """
    f = drawn_flows(flows, min_share)
    a = matches[matches["side"] == "a"].set_index("topic")
    b = matches[matches["side"] == "b"].set_index("topic")
    sources = sorted(set(f["topic_a"].astype(int)))
    targets = sorted(set(f["topic_b"].astype(int)))

    def name_a(t: int) -> str:
        return "nothing close" if t < 0 else f"{t} · {esc(a['label'].get(t, ''), 30)}"

    def name_b(t: int) -> str:
        status = b["status_text"].get(t, "")
        return f"{t} · {esc(b['label'].get(t, ''), 30)} ({esc(status)})"

    labels = [name_a(t) for t in sources] + [name_b(t) for t in targets]
    status = [str(b["status"].get(t, "unclear")) for t in targets]
    colours = [CONTEXT if t < 0 else (colours or {}).get(t, topic_colour(t)) for t in sources] + [
        STATUS_COLOURS.get(x, SAME) for x in status
    ]
    pos_a = {t: i for i, t in enumerate(sources)}
    pos_b = {t: len(sources) + i for i, t in enumerate(targets)}
    fig = go.Figure(
        go.Sankey(
            arrangement="snap",
            node=dict(label=labels, color=colours, pad=LABEL_PAD, thickness=14, line=dict(width=0.5, color="#777"),
                      hovertemplate="%{label}<br>%{value:.0f} papers<extra></extra>"),
            link=dict(
                source=[pos_a[int(t)] for t in f["topic_a"]], target=[pos_b[int(t)] for t in f["topic_b"]],
                value=f["papers_b"].to_numpy(dtype=float), color=[_rgba(STATUS_COLOURS.get(str(b["status"].get(int(t), "unclear")), SAME), 0.35) for t in f["topic_b"]],
                customdata=np.column_stack([f["from_b"] * 100, f["from_a"] * 100]),
                hovertemplate="%{source.label} → %{target.label}<br>%{customdata[0]:.0f}% of the new topic's papers"
                "<br>%{customdata[1]:.0f}% of the reference topic's papers<extra></extra>",
            ),
        )
    )  # fmt: skip
    # Nodes are as tall as their papers, and at least a label's line apart (``LABEL_PAD``): small
    # reference topics' labels never stack on one another.
    fig = base_layout(
        fig, height=max(height, (LABEL_PAD + 6) * max(len(sources), len(targets)) + 120),
        title=f"{left} topics (left) → {right} topics (right), coloured by status",
    )  # fmt: skip
    return fig


def lineage_sankey(
    lin: Lineage,
    labels: dict[int, str],
    *,
    keep: set[tuple[int, int]] | None = None,
    height: int = 620,
    colours: Mapping[int, str] | None = None,
) -> go.Figure:
    """Topics across periods: each column a period, each link the share of a later topic's papers
    whose nearest earlier papers lie in an earlier topic (balanced so nodes are their share).

    Args:
        keep: (period, topic) nodes to draw (default all); links between them only.
        colours: the corpus's topic colours (``Corpus.colouring.colours``).
    """
    periods = [f"{lo}–{hi}" if lo != hi else str(lo) for lo, hi in lin.periods]
    nodes = lin.nodes
    if keep is not None:
        nodes = nodes[[(int(p), int(t)) in keep for p, t in zip(nodes["period"], nodes["topic"], strict=True)]]
    nodes = nodes.sort_values(["period", "share"], ascending=[True, False], kind="stable").reset_index(drop=True)
    index = {(int(p), int(t)): i for i, (p, t) in enumerate(zip(nodes["period"], nodes["topic"], strict=True))}
    width = max(len(periods) - 1, 1)
    links = lin.links
    pairs = [
        (index.get((p - 1, int(s))), index.get((p, int(t))))
        for p, s, t in zip(links["period"], links["source"], links["target"], strict=True)
    ]
    kept = [a is not None and b is not None for a, b in pairs]
    links = links[kept].assign(s=[a for (a, _), k in zip(pairs, kept, strict=True) if k],
                               t=[b for (_, b), k in zip(pairs, kept, strict=True) if k])  # fmt: skip
    links = links[links["flow"] > 0.0005]
    colour = [(colours or {}).get(int(t), topic_colour(int(t))) for t in nodes["topic"]]
    fig = go.Figure(
        go.Sankey(
            arrangement="snap",
            node=dict(
                label=[esc(labels.get(int(t), str(t)), 30) for t in nodes["topic"]], color=colour,
                x=[0.01 + 0.98 * int(p) / width for p in nodes["period"]], pad=LABEL_PAD, thickness=14,
                line=dict(width=0.5, color="#777"),
                customdata=np.column_stack([[periods[int(p)] for p in nodes["period"]], nodes["share"] * 100, nodes["n"]]),
                hovertemplate="<b>%{label}</b>, %{customdata[0]}<br>%{customdata[1]:.1f}% of the period's papers "
                "(%{customdata[2]})<extra></extra>",
            ),
            link=dict(
                source=links["s"], target=links["t"], value=links["flow"], color=[_rgba(colour[i], 0.4) for i in links["s"]],
                customdata=np.column_stack([links["from_share"] * 100, links["votes"]]),
                hovertemplate="%{source.label} → %{target.label}<br>%{customdata[0]:.0f}% of the later topic's papers "
                "have their nearest earlier papers here (%{customdata[1]:.0f} papers' votes)<extra></extra>",
            ),
        )
    )  # fmt: skip
    fig = base_layout(fig, height=max(height, (LABEL_PAD + 6) * int(nodes.groupby("period").size().max() or 1) + 110))
    # The chart's toolbar (plotly's mode bar) takes the top MODEBAR_PX of the figure when the pointer
    # is over it: the flow starts below it, and the periods' names sit under their columns.
    for i, name in enumerate(periods):
        fig.add_annotation(
            x=0.01 + 0.98 * i / width, y=0.0, yshift=-6, yanchor="top", xanchor=["left", "center", "right"][
                0 if i == 0 else 2 if i == len(periods) - 1 else 1], xref="paper", yref="paper",
            text=f"<b>{esc(name)}</b>", showarrow=False, font=dict(size=14, color=INK),
        )  # fmt: skip
    fig.update_layout(margin=dict(l=10, r=10, t=MODEBAR_PX + 6, b=36))
    return fig


#: Vertical room between sankey nodes: one label line (15 px type) and a little air.
LABEL_PAD = 22
#: Height of plotly's toolbar (mode bar) at the top of a figure.
MODEBAR_PX = 34


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"
