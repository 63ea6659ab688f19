"""Reusable blocks of the pages (widgets bound to the URL + figures), so each page reads like a
paragraph. Every block takes the page ``Context`` or plain data; none loads or fits anything."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from explorer import analysis, figures, filters, shell, state, text
from explorer.data import Corpus


def chart(fig, container=None, *, name: str, **kwargs):
    """A plotly figure with the app's look (our own theme, trimmed mode bar) whose mode bar
    downloads it as ``name``.png (``figures.image_name`` of the view, e.g. ``small-topic-3-keywords``)."""
    return (container or st).plotly_chart(fig, theme=None, config=figures.config(name), **kwargs)


# ------------------------------------------------------------------------------------------
# Topics
# ------------------------------------------------------------------------------------------

TOPIC_COLUMNS = {
    "topic": st.column_config.NumberColumn("Id", width="small"),
    "label": st.column_config.TextColumn("Label", width="medium"),
    "size": st.column_config.NumberColumn("Papers"),
    "shown": st.column_config.NumberColumn("Shown", help="papers kept by the filters"),
    "share": st.column_config.NumberColumn("Share", format="%.1f%%"),
    "growth": st.column_config.NumberColumn(
        "Growth", format="%+.2f", help="change in share per year, percentage points"
    ),
    "coherence": st.column_config.NumberColumn("Coherence", format="%.2f", help="NPMI of the top 10 keywords, −1 to 1"),
    "reassigned": st.column_config.NumberColumn(
        "Reassigned", help="papers clustering left out and placed in this topic"
    ),
    "stability": st.column_config.NumberColumn(
        "Stability",
        format="%.2f",
        help="how well clusterings of random 90% samples of the papers, each with its own seed, find the topic again (0-1)",
    ),
    "keywords": st.column_config.TextColumn("Top keywords", width="large"),
}


def topic_table(ctx: shell.Context, table: pd.DataFrame) -> None:
    """The sortable topic table; selecting a row opens that topic (writes ``topic`` to the URL)."""

    def pick() -> None:
        rows = st.session_state["topic_table"].selection.rows
        if rows:
            state.set_params(topic=int(table["topic"].iat[rows[0]]))

    hidden = [c for c in ("growth", "stability") if table[c].isna().all()] + (["shown"] if ctx.mask.all() else [])
    st.dataframe(
        table.drop(columns=hidden).assign(share=table["share"] * 100),
        hide_index=True,
        key="topic_table",
        on_select=pick,
        selection_mode="single-row",
        height="auto" if len(table) <= 12 else 460,
        column_config=TOPIC_COLUMNS,
    )


def topic_metrics(row: pd.Series) -> None:
    """The evidence for one topic: size, share, coherence, reassigned outliers, growth (, stability)."""

    def num(value: float, fmt: str) -> str:
        return "–" if value != value else format(value, fmt)

    items = [
        ("Papers", f"{row['size']:,}", None),
        ("Share", f"{row['share']:.1%}", "share of the corpus's papers"),
        ("Coherence", num(row["coherence"], ".2f"), "NPMI of the top 10 keywords on the corpus, -1 to 1"),
        ("Reassigned", f"{row['reassigned']:,}", "papers clustering left out and placed in this topic"),
        ("Growth", num(row["growth"], "+.2f"), "change in share per year, percentage points (least squares)"),
    ]
    if row["stability"] == row["stability"]:
        items.append(
            (
                "Stability",
                num(row["stability"], ".2f"),
                "best overlap with the topics of clusterings of 90% samples, 0-1",
            )
        )
    for column, (label, value, help_text) in zip(st.columns(len(items)), items, strict=True):
        column.metric(label, value, help=help_text)


def stability_note(corpus: Corpus) -> str:
    """What the Stability column means for this build, or why it is missing."""
    info = corpus.manifest.get("stability") or {}
    if "stability" in corpus.topics and corpus.topics["stability"].notna().any():
        return (
            f"*Stability*: the mean best overlap (Jaccard, over the papers each run kept) of each topic with the "
            f"topics of {info.get('runs', 2)} clusterings that each leave out a random 10% of the papers and use "
            "their own random seed; below about 0.5 the topic is one way among several to cut that region, "
            "or it rests on a few papers."
        )
    reason = str(info.get("computed", "off"))
    return f"*Stability* was not measured for this build ({text.plain(reason)})."


def label_evidence(row: pd.Series) -> None:
    """The representations a topic's label was built from (c-TF-IDF, KeyBERTInspired, MMR)."""
    parts = [("c-TF-IDF", list(row["keywords"])[:6])]
    parts += [
        (name, list(row[col])[:6]) for name, col in (("KeyBERTInspired", "keybert"), ("MMR", "mmr")) if col in row
    ]
    st.caption(
        "Label built from: "
        + " · ".join(f"**{name}**: {text.plain(', '.join(map(str, terms)))}" for name, terms in parts if terms)
    )


@st.fragment
def relevance_panel(terms: pd.DataFrame, topic: int, corpus_name: str) -> None:
    """The λ slider (URL ``lam``) and the LDAvis-style relevance bars; reruns alone."""
    st.slider(
        "Relevance λ: 1 ranks terms by frequency in the topic, 0 by how specific they are to it",
        0.0, 1.0, step=0.05, key="lam",
        **state.bind("lam", state.parse_float(st.query_params.get("lam")), default=0.6, to_url=lambda v: {"lam": None if v == 0.6 else f"{v:.2f}"}),
    )  # fmt: skip
    lam = float(st.session_state["lam"])
    if terms.empty:
        st.info("No term statistics were stored for this topic.")
    else:
        chart(
            figures.relevance_bars(figures.rank_by_relevance(terms, lam), topic=topic, lam=lam),
            name=figures.image_name(corpus_name, "topic", topic, "relevance", f"lambda{lam:.2f}"),
        )


@st.cache_resource(max_entries=32, show_spinner=False)
def _overview_figures(key, selected: int | None, _corpus: Corpus) -> tuple:
    z = figures.linkage_from_hierarchy(_corpus.hierarchy, _corpus.topic_ids)
    z = figures.linkage_from_embeddings(_corpus.topic_embeddings) if z is None else z
    tree = None if z is None else figures.dendrogram(_corpus.topics, z, selected=selected)
    return (
        tree,
        figures.intertopic_map(_corpus.topics, _corpus.topic_similarity, selected=selected),
        figures.similarity_heatmap(_corpus.topics, _corpus.topic_similarity, selected=selected),
    )


def topic_overview(corpus: Corpus, selected: int | None) -> None:
    """All topics at once: hierarchy, intertopic distance and similarity, the selected one marked.

    The figures depend only on the build and the selected topic, so they are built once and shared.
    """
    tree_fig, distance_fig, heat_fig = _overview_figures(corpus.key, selected, corpus)
    tree, distance, heat = st.tabs(["Hierarchy", "Intertopic distance", "Similarity"])
    if tree_fig is None:
        tree.info("A hierarchy needs at least two topics.")
    else:
        chart(tree_fig, tree, name=figures.image_name(corpus.name, "topic-hierarchy"))
    chart(distance_fig, distance, name=figures.image_name(corpus.name, "intertopic-distance"))
    chart(heat_fig, heat, name=figures.image_name(corpus.name, "topic-similarity"))


# ------------------------------------------------------------------------------------------
# Trends
# ------------------------------------------------------------------------------------------


def distributions(ctx: shell.Context) -> None:
    """Keyword and topic distributions, for corpora without years to compare."""
    corpus = ctx.corpus
    left, right = st.columns(2, gap="large")
    top = corpus.terms.head(25)
    chart(
        figures.distribution_bars(
            top["term"].tolist(),
            top["df"].tolist(),
            title="Most used keywords",
            xtitle="papers using it (whole corpus)",
        ),
        left,
        name=figures.image_name(corpus.name, "keywords"),
    )
    table = analysis.topic_table(corpus, ctx.mask).sort_values("shown", ascending=False, kind="stable").head(25)
    names = [f"{t} · {lab}" for t, lab in zip(table["topic"], table["label"], strict=True)]
    chart(
        figures.distribution_bars(
            names,
            table["shown"].tolist(),
            colours=figures.topic_colours(table["topic"]),
            title="Topics",
            xtitle="papers (filters applied)",
        ),
        right,
        name=figures.image_name(corpus.name, "topics"),
    )


@st.cache_data(max_entries=32, show_spinner=False)
def _keyword_changes(key, _corpus: Corpus, before, after, support) -> pd.DataFrame:
    totals = analysis.papers_per_year(_corpus, filters.apply(_corpus, filters.Filters()))
    return analysis.period_changes(
        analysis.keyword_counts(_corpus), totals, before, after, key="term", min_support=support
    )


def keyword_changes(corpus: Corpus, before: tuple[int, int], after: tuple[int, int], support: int) -> pd.DataFrame:
    """``analysis.period_changes`` over the whole corpus's keywords (cached per build and periods)."""
    return _keyword_changes(corpus.key, corpus, before, after, support)


def period_slider(label: str, param: str, default: tuple[int, int], lo: int, hi: int) -> tuple[int, int]:
    """A year-range slider bound to URL parameter ``param``."""
    url = state.parse_range(st.query_params.get(param))
    url = (max(url[0], lo), min(url[1], hi)) if url and max(url[0], lo) <= min(url[1], hi) else None
    st.slider(
        label, min_value=lo, max_value=hi, step=1, key=f"trend_{param}",
        **state.bind(f"trend_{param}", url, default=default, to_url=lambda v: {param: None if tuple(v) == default else state.format_range(tuple(v))}),
    )  # fmt: skip
    return tuple(st.session_state[f"trend_{param}"])


def support_input(default: int) -> int:
    """The minimum-support box (URL ``support``)."""
    st.number_input(
        "Minimum papers", min_value=1, step=1, key="trend_support", help="in both periods together: a keyword seen twice is not a trend",
        **state.bind("trend_support", state.parse_int(st.query_params.get("support")), default=default, to_url=lambda v: {"support": None if v == default else v}),
    )  # fmt: skip
    return int(st.session_state["trend_support"])


def changes(
    name: str,
    table: pd.DataFrame,
    label: str,
    before: tuple[int, int],
    after: tuple[int, int],
    support: int,
    *,
    corpus_name: str = "",
) -> None:
    """Emerging and declining bars for keywords or topics, with the counts behind them."""
    st.markdown(f"**{name}**")
    if table.empty:
        st.caption(f"No {name.lower()} reach {support} papers in these periods.")
        return
    up, down = table[table["change"] > 0].head(12), table[table["change"] < 0].iloc[::-1].head(12)
    left, right = st.columns(2, gap="large")
    b, a = state.format_range(before), state.format_range(after)
    for title, part, column in (("Emerging", up, left), ("Declining", down, right)):
        chart(
            figures.change_bars(part, label=label, title=title),
            column,
            name=figures.image_name(corpus_name, name.lower(), title.lower(), b, "to", a),
        )
    with st.expander(f"{name}: the counts behind these numbers"):
        shown = table[[label, "n_before", "share_before", "n_after", "share_after", "change"]]
        st.dataframe(
            shown.assign(
                share_before=shown["share_before"] * 100,
                share_after=shown["share_after"] * 100,
                change=shown["change"] * 100,
            ),
            hide_index=True,
            column_config={
                label: name[:-1],
                "n_before": st.column_config.NumberColumn(f"Papers {b}"),
                "share_before": st.column_config.NumberColumn(f"Share {b}", format="%.2f%%"),
                "n_after": st.column_config.NumberColumn(f"Papers {a}"),
                "share_after": st.column_config.NumberColumn(f"Share {a}", format="%.2f%%"),
                "change": st.column_config.NumberColumn("Change (points)", format="%+.2f"),
            },
        )


def keyword_picker(corpus: Corpus, suggested: list[str]) -> list[str]:
    """Keywords to plot (URL ``kw``, repeated): the vocabulary by frequency, or any typed phrase."""
    # "kw=" (empty) means the reader removed every keyword; no "kw" at all means the suggestions.
    url_terms = tuple(v for v in st.query_params.get_all("kw") if v) if "kw" in st.query_params else None
    options = list(dict.fromkeys([*(url_terms or ()), *suggested, *corpus.terms["term"].head(3000).tolist()]))
    st.multiselect(
        "Keywords (type to search the corpus vocabulary, or enter any word or phrase)",
        options, key="trend_kw", accept_new_options=True, max_selections=8,
        **state.bind("trend_kw", url_terms, default=suggested, to_url=lambda v: {"kw": None if list(v) == suggested else (list(v) or [""])}),
    )  # fmt: skip
    return list(st.session_state["trend_kw"])


def keyword_lines(ctx: shell.Context, chosen: list[str], suggested: list[str]) -> None:
    """Share of each year's papers using each chosen keyword, saying how each was counted."""
    if not chosen:
        st.caption("Choose keywords above to see the share of each year's papers that use them.")
        return
    shares = analysis.keyword_year_shares(ctx.corpus, chosen, ctx.mask)
    chart(figures.keyword_share_lines(shares), name=figures.image_name(ctx.corpus.name, "keywords", *chosen[:4]))
    notes = (
        ["Showing the three fastest-rising keywords (see below); type others to compare."]
        if chosen == suggested
        else []
    )
    matched = sorted(set(shares.loc[shares["source"] == "text match", "term"]))
    if matched:
        notes.append(
            f"Counted by a whole-word match in titles and abstracts: {', '.join(matched)}. Others use the corpus vocabulary."
        )
    if notes:
        st.caption(text.plain(" ".join(notes)))


def topic_labels(corpus: Corpus) -> dict[int, str]:
    return dict(zip(corpus.topic_ids.tolist(), corpus.topics["label"].tolist(), strict=True))


def label_topics(table: pd.DataFrame, labels: dict[int, str]) -> pd.DataFrame:
    """``table`` with a ``label`` column "id · label" for its ``topic`` column (one per topic)."""
    ids = table["topic"].to_numpy(dtype=int)
    return table.assign(label=np.array([f"{i} · {labels.get(int(i), '?')}" for i in ids], dtype=object))
