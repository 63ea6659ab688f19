"""Topic lineage: where each period's topics come from, by the nearest papers of the period before."""

import streamlit as st

from explorer.services import compare as cview
from explorer.services import figures, text
from explorer.state import state
from explorer.ui import caches, panels, shell
from explorer.ui import compare_panels as cp
from pipeline.analysis.lineage import ancestry, default_periods

ctx = shell.context()
corpus = ctx.corpus
st.title("Topic lineage", anchor=False)
years = sorted(corpus.years["year"].astype(int).tolist())
if len(years) < 2:
    st.info(
        f"**{text.plain(corpus.name)}** has papers from {'one year' if years else 'no year'} only: lineage follows "
        "topics across years. Open a corpus spanning several years, or compare this one with another on *What changed*.",
        icon=":material/account_tree:",
    )
    st.stop()

papers_years = corpus.papers["year"].astype("Float64").to_numpy(dtype=float, na_value=float("nan"))
periods = cp.periods_picker(years, default_periods(papers_years))
lin = caches.get_lineage(corpus, periods)
labels = panels.topic_labels(corpus)
cp.lineage_changes(ctx, lin, labels)
st.subheader("Where the topics come from", anchor="flow")
focus = cp.focus_picker(ctx, lin, labels)
cp.pin_view(periods, focus)
keep = ancestry(lin, focus) if focus is not None else cp.largest_nodes(lin)
if focus is not None:
    cp.roots(lin, focus, labels)
st.caption(
    "Each column is a period, each block a topic's share of that period's papers. A band from an earlier topic to a "
    "later one is the share of the later topic's papers whose 10 nearest papers of the period before lie in the "
    "earlier topic (balanced so that every block's bands add up to its share). Filters do not apply here. "
    + ("Showing the chosen topic and, period by period, every earlier topic that gives at least 10% of a shown "
       "topic's papers." if focus is not None else "Showing the ten largest topics.")
)  # fmt: skip
panels.chart(
    cview.lineage_sankey(lin, labels, keep=keep, colours=corpus.colouring.colours),
    name=figures.image_name(corpus.name, "lineage", focus, *[state.format_range(p) for p in periods]),
)
