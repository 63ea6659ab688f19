"""The blocks of the trends pages: the two periods compared and the minimum support (bound to the
URL), the keyword picker and its lines, emerging and declining bars with the counts behind them,
and, for a corpus without years to compare, its distinctive terms against the shipped background.
Every block takes the page ``Context`` or plain data; the cached tables are computed once per build."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.services import analysis, figures, text, trend_figures
from explorer.state import filters, state
from explorer.state.data import Corpus
from explorer.ui import shell, url_state
from explorer.ui.panels import chart
from pipeline.analysis import distinctive
from pipeline.model import background as bg


def one_year(ctx: shell.Context) -> None:
    """A corpus without years to compare: its distinctive terms against the shipped background of
    ML abstracts (log-odds, not raw counts) and how its papers spread over topics."""
    corpus = ctx.corpus
    left, right = st.columns(2, gap="large")
    bg = background()
    with left:
        if bg is None:
            st.caption("The background of ML abstracts is missing from this installation (assets/background): "
                       "showing the most used keywords instead.")  # fmt: skip
            top = corpus.terms.head(25)
            chart(
                trend_figures.distribution_bars(corpus.shown_terms(top["term"]), top["df"].tolist(), title="Most used keywords",
                                          xtitle="papers using it (whole corpus)"),
                name=figures.image_name(corpus.name, "keywords"),
            )  # fmt: skip
        else:
            support = analysis.distinctive_support(corpus.n_papers)
            table = distinctive_terms(corpus, support)
            table = table.assign(term=corpus.shown_terms(table["term"]))  # as the papers write them
            shown = table[table["z"] > 0].head(20)
            if shown.empty:
                st.info(f"No term is used by at least {support} papers here more than in the background.")
            else:
                chart(
                    trend_figures.distinctive_bars(shown, corpus_name=corpus.name),
                    name=figures.image_name(corpus.name, "distinctive-terms"),
                )
            st.caption(
                f"Terms these papers use more than {text.plain(bg.source)} do, ranked by the log-odds ratio with an "
                f"informative Dirichlet prior (Monroe et al. 2008) among terms used by at least {support} papers, sure "
                "differences (|z| ≥ 1.96) first. A bar pair shows the share of papers using the term here and in the "
                "background. The background is shipped with the app (assets/background, see the README); a corpus "
                "drawn from the same conferences and years is partly its own background, which understates its "
                "differences."
            )
            with st.expander("The counts behind these terms"):
                st.dataframe(
                    table.head(200)
                    .drop(columns="delta")
                    .assign(share=table["share"] * 100, bg_share=table["bg_share"] * 100),
                    hide_index=True,
                    column_config={
                        "term": "Term",
                        "df": st.column_config.NumberColumn("Papers here"),
                        "share": st.column_config.NumberColumn("Share here", format="%.1f%%"),
                        "bg_df": st.column_config.NumberColumn("Background abstracts"),
                        "bg_share": st.column_config.NumberColumn("Share in background", format="%.2f%%"),
                        "z": st.column_config.NumberColumn("Log-odds z", format="%.1f"),
                    },
                )
    table = analysis.topic_table(corpus, ctx.mask).sort_values("shown", ascending=False, kind="stable").head(25)
    names = [f"{t} · {lab}" for t, lab in zip(table["topic"], table["label"], strict=True)]
    chart(
        trend_figures.distribution_bars(
            names,
            table["shown"].tolist(),
            colours=corpus.topic_colours(table["topic"]),
            title="Topics",
            xtitle="papers (filters applied)",
        ),
        right,
        name=figures.image_name(corpus.name, "topics"),
    )


@st.cache_resource(show_spinner=False)
def background():
    """The shipped background of ML abstracts (``pipeline.model.background``), or None when it is missing."""
    try:
        return bg.load()
    except (OSError, ValueError, KeyError):
        return None


#: Ranked distinctive terms checked as written phrases (what the chart and its table can show).
CHECKED_TERMS = 300


@st.cache_data(max_entries=8, show_spinner=False)
def _distinctive(key, _corpus: Corpus, support: int) -> pd.DataFrame:
    table = analysis.distinctive_terms(_corpus.terms, _corpus.n_papers, background(), min_papers=support)
    head = table.head(CHECKED_TERMS)
    # the label pipeline's phrase check: no fragment the papers never wrote ("capabilities language")
    written = distinctive.written_as_phrases(
        _corpus.papers["model_text"].tolist(), head["term"].tolist(), min_papers=support
    )
    return pd.concat([head[written], table.iloc[CHECKED_TERMS:]], ignore_index=True)


def distinctive_terms(corpus: Corpus, support: int) -> pd.DataFrame:
    """``analysis.distinctive_terms`` of the whole corpus against the background (cached per build)."""
    return _distinctive(corpus.key, corpus, support)


@st.cache_data(max_entries=32, show_spinner=False)
def _keyword_changes(key, _corpus: Corpus, before, after, support) -> pd.DataFrame:
    totals = analysis.papers_per_year(_corpus, filters.apply(_corpus, filters.Filters()))
    return analysis.period_changes(
        analysis.keyword_counts(_corpus), totals, before, after, key="term", min_support=support
    )


def keyword_changes(corpus: Corpus, before: tuple[int, int], after: tuple[int, int], support: int) -> pd.DataFrame:
    """``analysis.period_changes`` over the whole corpus's keywords (cached per build and periods)."""
    return _keyword_changes(corpus.key, corpus, before, after, support)


def periods(years: list[int], default_support: int) -> tuple[tuple[int, int], tuple[int, int], int]:
    """The two periods to compare and the minimum support (URL ``before``, ``after``, ``support``).

    A period in the link outside the papers' years is cut or replaced, and overlapping or
    reversed periods are kept; either way the reader is told, never silently.
    """
    span, default = (years[0], years[-1]), analysis.default_periods(years)
    notes = []
    fitted = []
    for name, param, fallback in (("earlier", "before", default[0]), ("later", "after", default[1])):
        asked = state.parse_range(st.query_params.get(param))
        period, note = analysis.fit_period(asked, span, fallback, name=name)
        fitted.append(period if asked is not None else None)
        notes += [note] if note else []
    c1, c2, c3 = st.columns([2, 2, 1])
    with c1:
        before = period_slider("Earlier period", "before", fitted[0], default[0], span)
    with c2:
        after = period_slider("Later period", "after", fitted[1], default[1], span)
    with c3:
        support = support_input(default_support)
    for note in notes + analysis.period_notes(before, after):
        st.warning(text.plain(note), icon=":material/date_range:")
    return before, after, support


def period_slider(
    label: str, param: str, url: tuple[int, int] | None, default: tuple[int, int], span: tuple[int, int]
) -> tuple[int, int]:
    """A year-range slider bound to URL parameter ``param`` (``url``: its value, already fitted to ``span``)."""
    st.slider(
        label, min_value=span[0], max_value=span[1], step=1, key=f"trend_{param}",
        **url_state.bind(f"trend_{param}", url, default=default, to_url=lambda v: {param: None if tuple(v) == default else state.format_range(tuple(v))}),
    )  # fmt: skip
    return tuple(st.session_state[f"trend_{param}"])


def support_input(default: int) -> int:
    """The minimum-support box (URL ``support``)."""
    st.number_input(
        "Minimum papers", min_value=1, step=1, key="trend_support", help="in both periods together: a keyword seen twice is not a trend",
        **url_state.bind("trend_support", state.parse_int(st.query_params.get("support")), default=default, to_url=lambda v: {"support": None if v == default else v}),
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
    """Emerging and declining bars for keywords or topics, ranked by log-odds, with the counts behind them."""
    st.markdown(f"**{name}**")
    if table.empty:
        st.caption(f"No {name.lower()} reach {support} papers in these periods.")
        return
    left, right = st.columns(2, gap="large")
    b, a = state.format_range(before), state.format_range(after)
    for title, part, column in (
        ("Emerging", analysis.emerging(table), left),
        ("Declining", analysis.declining(table), right),
    ):
        if part.empty:
            column.caption(f"{title}: none.")
            continue
        chart(
            trend_figures.change_bars(part, label=label, title=title),
            column,
            name=figures.image_name(corpus_name, name.lower(), title.lower(), b, "to", a),
        )
    with st.expander(f"{name}: the counts behind these numbers"):
        shown = table[[label, "n_before", "share_before", "n_after", "share_after", "change", "z"]]
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
                "z": st.column_config.NumberColumn(
                    "Log-odds z", format="%+.1f", help="> 1.96: rose beyond chance; < -1.96: fell"
                ),
            },
        )


def keyword_picker(corpus: Corpus, suggested: list[str]) -> list[str]:
    """Keywords to plot (URL ``kw``, repeated): the vocabulary by frequency, or any typed phrase.

    Enter picks the best match of what was typed (not every match); without ``kw`` in the URL the
    picker follows the suggestions, which change with the periods.
    """
    # "kw=" (empty) means the reader removed every keyword; no "kw" at all means the suggestions.
    url_terms, problems = None, []
    if "kw" in st.query_params:  # kw=a&kw=b, or kw=a,b as a hand-written link has it
        terms, problems = state.parse_keywords(st.query_params.get_all("kw"))
        url_terms = tuple(terms)
    if url_terms is None and st.session_state.get("_trend_suggested") != suggested:
        st.session_state.pop("trend_kw", None)  # new periods, new suggestions
    st.session_state["_trend_suggested"] = suggested
    options = list(dict.fromkeys([*(url_terms or ()), *suggested, *corpus.terms["term"].head(3000).tolist()]))
    st.multiselect(
        "Keywords (type to search the corpus vocabulary, or enter any word or phrase)",
        options, key="trend_kw", accept_new_options=True, format_func=corpus.shown_term, max_selections=state.MAX_KEYWORDS, select_all=False,
        **url_state.bind("trend_kw", url_terms, default=suggested, to_url=lambda v: {"kw": None if list(v) == suggested else (list(v) or [""])}),
    )  # fmt: skip
    for problem in problems:
        st.caption(text.plain(problem.capitalize() + "."))
    return list(st.session_state["trend_kw"])


def keyword_lines(
    ctx: shell.Context, chosen: list[str], suggested: list[str], periods: tuple[tuple[int, int], tuple[int, int]]
) -> None:
    """Share of each year's papers using each chosen keyword, saying how each was counted."""
    if not chosen:
        st.caption("Choose keywords above to see the share of each year's papers that use them.")
        return
    shares = analysis.keyword_year_shares(ctx.corpus, chosen, ctx.mask)
    shares = shares.assign(term=ctx.corpus.shown_terms(shares["term"]))  # as the papers write them
    chart(
        trend_figures.keyword_share_lines(shares, periods=periods),
        name=figures.image_name(ctx.corpus.name, "keywords", *chosen[:4]),
    )
    before, after = (state.format_range(p) for p in periods)
    notes = (
        [f"Showing the {len(suggested)} keywords that rose most surely from {before} to {after} (see Emerging below); "
         "type others to compare."]
        if chosen == suggested
        else []
    )  # fmt: skip
    unused = [t for t, n in shares.groupby("term", sort=False)["df"].sum().items() if n == 0]
    if unused:  # a flat line at 0% says nothing by itself
        notes.append(f"No paper here uses {', '.join(unused)} (the line stays at 0%).")
    matched = sorted(set(shares.loc[shares["source"] == "text match", "term"]))
    if matched:
        notes.append(
            f"Counted by a whole-word match in titles and abstracts: {', '.join(matched)}. Others use the corpus vocabulary."
        )
    if notes:
        st.caption(text.plain(" ".join(notes)))
