"""Keyword trends: how often keywords and topics appear each year, and what rises or falls."""

import streamlit as st

from explorer import analysis, figures, panels, shell, text

ctx = shell.context()
corpus = ctx.corpus
st.title("Keyword trends", anchor=False)
if shell.nothing_left(ctx):
    st.stop()

if not corpus.has_years:
    span = corpus.year_span
    st.info(
        (f"Every paper in **{text.plain(corpus.name)}** is from {span[0]}" if span else f"No paper in **{text.plain(corpus.name)}** has a year")
        + ", so there are no trends to show; here is how keywords and topics are distributed instead.\n\n"
        "To see trends, build a corpus spanning several years: give each paper a `year` column in CSV, JSON or Parquet, "
        "or start each text file with a title line such as `NeurIPS 2025 Papers` (one file per year).",
        icon=":material/timeline:",
    )  # fmt: skip
    panels.distributions(ctx)
    st.stop()

labels = panels.topic_labels(corpus)
years = analysis.papers_per_year(corpus, ctx.mask).index.tolist()
periods = analysis.default_periods(years) if len(years) >= 2 else None

st.subheader("Keywords over the years", anchor=False)
rising = panels.keyword_changes(corpus, *periods, analysis.default_support(corpus.n_papers)) if periods else None
suggested = [] if rising is None else rising["term"].head(3).tolist()
panels.keyword_lines(ctx, panels.keyword_picker(corpus, suggested), suggested)

st.subheader("Topics over the years", anchor=False)
shares = analysis.topic_year_shares(corpus, ctx.mask, ctx.base)
shown = list(ctx.view.filters.topics) or corpus.topics.sort_values("size", ascending=False)["topic"].head(8).tolist()
fig = figures.topic_share_lines(shares[shares["topic"].isin(shown)], labels)
panels.chart(fig, name=shell.image_name(ctx, "topic-shares", *ctx.view.filters.topics[:6]))
st.caption("The largest eight topics (or those in the topic filter). Click a legend entry to hide or show a topic.")


@st.fragment
def rising_and_falling() -> None:
    st.subheader("Emerging and declining", anchor=False)
    c1, c2, c3 = st.columns([2, 2, 1])
    with c1:
        before = panels.period_slider("Earlier period", "before", periods[0], years[0], years[-1])
    with c2:
        after = panels.period_slider("Later period", "after", periods[1], years[0], years[-1])
    with c3:
        support = panels.support_input(analysis.default_support(int(ctx.base.sum())))
    st.caption(
        f"Change in the share of papers from {before[0]}–{before[1]} to {after[0]}–{after[1]}, in percentage points, for "
        f"keywords and topics found in at least {support} papers. Keywords count the whole corpus; topics follow the filters."
    )
    words = panels.keyword_changes(corpus, before, after, support)
    counts, totals = analysis.topic_counts(corpus, ctx.mask), analysis.papers_per_year(corpus, ctx.base)
    topics = analysis.period_changes(counts, totals, before, after, key="topic", min_support=support)
    panels.changes("Keywords", words, "term", before, after, support, corpus_name=corpus.name)
    panels.changes(
        "Topics", panels.label_topics(topics, labels), "label", before, after, support, corpus_name=corpus.name
    )


if periods:
    rising_and_falling()
else:
    st.info("The filters keep a single year: widen the year range to compare periods.")
