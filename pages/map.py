"""Topic map: every paper as a dot coloured by its topic; click a dot to open the paper."""

import streamlit as st

from explorer.services import analysis, text
from explorer.services.mapview import Marks
from explorer.state import state
from explorer.ui import mapcomponent, panels, present, search_panels, share, shell, url_state
from pipeline.formats.palette import HIT, LIST

ctx = shell.context()
corpus = ctx.corpus
head, pick, find, how = st.columns([1.7, 2.3, 2, 1.7], vertical_alignment="bottom")
head.title("Topic map", anchor=False)
if shell.nothing_left(ctx):
    st.stop()

topic = shell.url_topic(ctx, instead="showing all topics")
by_size = corpus.tables.topics.sort_values("size", ascending=False, kind="stable")
ALL = "all"
sizes = dict(zip(by_size["topic"], by_size["size"], strict=True))
pick.selectbox(
    "Highlight a topic",
    [ALL, *by_size["topic"].tolist()],
    key="map_topic",
    format_func=lambda t: "All topics" if t == ALL else f"{t} · {corpus.topic_label(t)} ({sizes[t]:,} papers)",
    **url_state.bind("map_topic", topic, default=ALL, to_url=lambda v: {"topic": None if v == ALL else v}),
)
topic = None if st.session_state["map_topic"] == ALL else st.session_state["map_topic"]
find.text_input(
    "Find papers on the map",
    key="map_q",
    placeholder="words from titles or abstracts",
    max_chars=state.MAX_QUERY_CHARS,
    **url_state.bind("map_q", ctx.view.q or None, default="", to_url=lambda v: {"q": v.strip()}),
)
how.toggle(  # no help icon: it would cut the label at 1024 pixels; the caption under the map says what rings are
    "Semantic",
    key="map_semantic",
    **url_state.bind(
        "map_semantic",
        ctx.view.mode == "semantic" or None,
        default=False,
        to_url=lambda v: {"mode": "semantic" if v else None},
    ),
)
query = st.session_state["map_q"].strip()
mode = "semantic" if st.session_state["map_semantic"] else "keyword"
hits = search_panels.map_hits(ctx, query, mode) if query else None
marks = [Marks(ctx.reading, f"reading list ({len(ctx.reading)})", LIST, "diamond")] if len(ctx.reading) else []
if hits is not None and len(hits):
    marks.append(Marks(hits.rows, mapcomponent.rings_name(hits, query, mode), HIT, "ring"))

mapcomponent.topic_map(
    corpus,
    key="map",
    mask=ctx.mask,
    highlight=topic,
    marks=marks,
    height=mapcomponent.height(ctx.presenting),
    scale=present.scale(),
    png_name=shell.image_name(ctx, "map", f"topic-{topic}" if topic is not None else None),
    caption=f"Topic map of {corpus.name}: {ctx.n_shown:,} papers",
    on_click=lambda row: shell.open_paper(ctx, row),
    on_topic=mapcomponent.choose_topic,
    below=lambda result: share.map_selection(ctx, result.selection, result.selection_kind),
)
st.caption(mapcomponent.legend_caption(len(ctx.reading), hits, query, mode))
panels.weak_labels_caption(corpus)
if corpus.colouring.note():
    st.caption(corpus.colouring.note())

if topic is not None:
    pos = corpus.topic_pos(topic)
    rows = analysis.topic_papers(corpus, topic, ctx.mask)
    st.subheader(f"Topic {topic} · {text.plain(corpus.topic_label(topic))}", anchor=False)
    shell.topic_link(ctx, topic, label="Open this topic's page")
    st.markdown("**Keywords:** " + text.plain(", ".join(list(corpus.tables.topics["keywords"].iat[pos])[:10])))
    panels.broad_topic_line(corpus.tables.topics.iloc[pos])
    papers = corpus.papers
    table = papers.iloc[rows][["title", "year", "venue"]].assign(
        similarity=analysis.topic_similarity(corpus, rows), link=shell.paper_urls(ctx, rows)
    )
    st.caption(
        f"{len(rows):,} papers, most typical first (by cosine similarity to the topic's embedding, -1 to 1). Select "
        "rows to open one or add them to your reading list; a paper's page says how many of its 10 most similar "
        "papers share its topic."
    )
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
            "similarity": st.column_config.NumberColumn(
                "Similarity to topic", format="%.2f", help=panels.TOPIC_SIMILARITY_HELP
            ),
            "link": st.column_config.LinkColumn("Link", display_text="open"),
        },
    )
    chosen = rows[picked.selection.rows] if picked and picked.selection.rows else rows[:0]
    share.selection_actions(ctx, chosen, key="rl_map_rows", open_paper=lambda r: shell.open_paper(ctx, r))
    if len(rows) <= 50:
        share.add_rows(ctx, rows, key="rl_map_topic_all", what=f"of topic {topic}'s")
