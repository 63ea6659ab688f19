"""Topic map: every paper as a dot coloured by its topic; click a dot to open the paper."""

import streamlit as st

from explorer import analysis, figures, share, shell, state, text

ctx = shell.context()
corpus = ctx.corpus
head, pick, link = st.columns([2, 3, 2], vertical_alignment="bottom")
head.title("Topic map", anchor=False)
if shell.nothing_left(ctx):
    st.stop()

topic = shell.url_topic(ctx, instead="showing all topics")
by_size = corpus.topics.sort_values("size", ascending=False, kind="stable")
ALL = "all"
options = [ALL, *by_size["topic"].tolist()]
sizes = dict(zip(by_size["topic"], by_size["size"], strict=True))
pick.selectbox(
    "Highlight a topic",
    options,
    key="map_topic",
    format_func=lambda t: "All topics" if t == ALL else f"{t} · {corpus.topic_label(t)} ({sizes[t]:,} papers)",
    **state.bind("map_topic", topic, default=ALL, to_url=lambda v: {"topic": None if v == ALL else v}),
)
topic = None if st.session_state["map_topic"] == ALL else st.session_state["map_topic"]
if topic is not None:
    with link:
        shell.topic_link(ctx, topic, label="Open this topic's page")

event = st.plotly_chart(
    shell.map_figure(ctx, topic),
    key="map",
    on_select="rerun",
    selection_mode=("points", "box", "lasso"),
    config=figures.config(shell.image_name(ctx, "map", f"topic-{topic}" if topic is not None else None), select=True),
    theme=None,
)
st.caption(
    "Each dot is a paper, placed near papers with similar abstracts and coloured by its topic; faint dots are papers "
    "clustering left out and placed in their nearest topic. **Click a dot to open the paper**; drag to zoom, "
    "double-click to zoom out. The box and lasso tools select papers for your reading list."
)
picked_rows, many = share.map_selection(event, corpus.n_papers)
if many:
    st.markdown(f"**{len(picked_rows):,} papers selected on the map**")
    share.selection_actions(ctx, picked_rows, key="rl_map_sel", open_paper=lambda r: shell.open_paper(ctx, r))
elif len(picked_rows):
    shell.open_paper(ctx, int(picked_rows[0]))

if topic is not None:
    pos = corpus.topic_pos(topic)
    rows = analysis.topic_papers(corpus, topic, ctx.mask)
    st.subheader(f"Topic {topic} · {text.plain(corpus.topic_label(topic))}", anchor=False)
    st.markdown("**Keywords:** " + text.plain(", ".join(list(corpus.topics["keywords"].iat[pos])[:10])))
    papers = corpus.papers
    table = papers.iloc[rows][["title", "year", "venue", "topic_prob"]].assign(link=shell.paper_urls(ctx, rows))
    st.caption(f"{len(rows):,} papers, most typical first. Select rows to open one or add them to your reading list.")
    picked = st.dataframe(
        table,
        hide_index=True,
        on_select="rerun",
        selection_mode="multi-row",
        key="map_papers",
        column_config={
            "title": st.column_config.TextColumn("Title", width="large"),
            "year": st.column_config.NumberColumn("Year", format="%d"),
            "venue": "Venue",
            "topic_prob": st.column_config.ProgressColumn("Fit", format="%.2f", min_value=0, max_value=1),
            "link": st.column_config.LinkColumn("Link", display_text="open"),
        },
    )
    chosen = rows[picked.selection.rows] if picked and picked.selection.rows else rows[:0]
    share.selection_actions(ctx, chosen, key="rl_map_rows", open_paper=lambda r: shell.open_paper(ctx, r))
    if len(rows) <= 50:
        share.add_rows(ctx, rows, key="rl_map_topic_all", what=f"of topic {topic}'s")
