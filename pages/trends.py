"""Keyword trends: how often keywords and topics appear each year, and what rose or fell between two periods."""

import streamlit as st

from explorer.services import analysis, text, trend_figures
from explorer.state import state
from explorer.ui import panels, shell, trend_panels

ctx = shell.context()
corpus = ctx.corpus
st.title("Keyword trends", anchor=False)
if shell.nothing_left(ctx):
    st.stop()

if not corpus.has_years:
    span = corpus.year_span
    st.info(
        (f"Every paper in **{text.plain(corpus.name)}** is from {span[0]}" if span else f"No paper in **{text.plain(corpus.name)}** has a year")
        + ", so there are no trends to show; here is what sets these papers apart from ML abstracts in general, "
        "and how they spread over topics.\n\n"
        "To see trends, build a corpus spanning several years: give each paper a `year` column in CSV, JSON or Parquet, "
        "or start each text file with a title line such as `NeurIPS 2025 Papers` (one file per year).",
        icon=":material/timeline:",
    )  # fmt: skip
    trend_panels.one_year(ctx)
    st.stop()

labels = panels.topic_labels(corpus)
years = analysis.papers_per_year(corpus, ctx.mask).index.tolist()
if len(years) < 2:
    st.info("The filters keep a single year: widen the year range to compare periods.", icon=":material/date_range:")
    st.stop()

st.markdown("**Compare two periods** — they choose the keywords charted first and what is emerging or declining.")
before, after, support = trend_panels.periods(years, analysis.default_support(int(ctx.base.sum())))
words = trend_panels.keyword_changes(corpus, before, after, support)
suggested = analysis.distinct(analysis.emerging(words, 30)["term"].tolist(), 3)

st.subheader("Keywords over the years", anchor="keywords")
trend_panels.keyword_lines(ctx, trend_panels.keyword_picker(corpus, suggested), suggested, (before, after))

st.subheader("Topics over the years", anchor="topics")
shares = analysis.topic_year_shares(corpus, ctx.mask, ctx.base)
shown = (
    list(ctx.view.filters.topics) or corpus.tables.topics.sort_values("size", ascending=False)["topic"].head(8).tolist()
)
fig = trend_figures.topic_share_lines(
    shares[shares["topic"].isin(shown)], labels, periods=(before, after), colours=corpus.colouring.colours
)
panels.chart(fig, name=shell.image_name(ctx, "topic-shares", *ctx.view.filters.topics[:6]))
st.caption("The largest eight topics (or those in the topic filter). Click a legend entry to hide or show a topic.")

st.subheader("Emerging and declining", anchor="emerging")
b, a = state.format_range(before), state.format_range(after)
st.caption(
    f"What rose and fell from {b} to {a} among keywords and topics found in at least {support} papers, ranked by the "
    "log-odds ratio with an informative prior (Monroe et al. 2008): a change must be large for the term and backed by "
    "many papers, so common words do not lead. Bars show the change in the share of papers, in percentage points; pale "
    "bars could be chance (|z| < 1.96). Keywords count the whole corpus; topics follow the filters."
)
shown_words = words.assign(term=corpus.shown_terms(words["term"]))  # as the papers write them ("LLMs")
trend_panels.changes("Keywords", shown_words, "term", before, after, support, corpus_name=corpus.name)
counts, totals = analysis.topic_counts(corpus, ctx.mask), analysis.papers_per_year(corpus, ctx.base)
topics = analysis.period_changes(counts, totals, before, after, key="topic", min_support=support)
trend_panels.changes(
    "Topics", panels.label_topics(topics, labels), "label", before, after, support, corpus_name=corpus.name
)
