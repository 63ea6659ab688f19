"""Topics: the table of topics with the evidence behind each, and one topic in depth."""

import streamlit as st

from explorer.services import analysis, figures, text, trend_figures
from explorer.ui import panels, shell, url_state

ctx = shell.context()
corpus = ctx.corpus
st.title("Topics", anchor=False)
table = analysis.topic_table(corpus, ctx.mask)
if table.empty:
    st.info("This corpus has no topics: clustering left every paper out. Rebuild it with a smaller minimum topic size.")
    st.stop()
topic = shell.url_topic(ctx, instead="pick one below")
labels = panels.topic_labels(corpus)
coherence_note = analysis.coherence_note(corpus)

if not (ctx.presenting and topic is not None):  # a tour step about one topic opens at the topic
    st.caption(
        "Click a column header to sort, a row to open the topic. *Label support* (the share of the topic's papers "
        "that use the label's words, as the lower bound of its 80% confidence interval; under "
        f"{panels.WEAK_SUPPORT:.2f} the label is marked (?) as weak), *coherence* (NPMI of the terms behind the "
        "top keywords, −1 to 1), "
        "*reassigned* (papers clustering left out, placed here) and *stability* say how much to trust a topic. "
        + " ".join(filter(None, [coherence_note, panels.stability_note(corpus), panels.parts_note(corpus)]))
    )
    panels.topic_table(ctx, table)
    st.selectbox(
        "Topic", table["topic"].tolist(), index=None, key="topics_topic", placeholder="Choose a topic…",
        format_func=lambda t: f"{t} · {labels[t]}",
        **url_state.bind("topics_topic", topic, default=None, to_url=lambda v: {"topic": v}),
    )  # fmt: skip
    topic = st.session_state["topics_topic"]

if topic is not None:
    pos = corpus.topic_pos(topic)
    st.header(f"Topic {topic} · {text.plain(labels[topic])}", anchor="topic")
    panels.topic_metrics(table.iloc[pos], coherence_note=coherence_note)
    row = corpus.tables.topics.iloc[pos]
    panels.weak_label_note(row)
    panels.broad_topic_parts(ctx, row)
    if row["curated"]:
        st.caption("Renamed or merged by hand (see Curate topics).")
    shell.topic_link(ctx, topic, label="See it on the map", page="map")
    if ctx.can_edit:
        shell.topic_link(ctx, topic, label="Rename or merge this topic", page="curate")
    panels.label_evidence(row)
    left, right = st.columns(2)
    behind = corpus.shown_terms(row["keyword_terms"]) if "keyword_terms" in row else None  # whose weights they are
    fig = figures.keyword_bars(
        list(row["keywords"]),
        list(row["keyword_weights"]),
        topic=topic,
        colours=corpus.colouring.colours,
        behind=behind,
    )
    panels.chart(fig, left, name=figures.image_name(corpus.name, "topic", topic, "keywords"))
    with right:
        panels.relevance_panel(analysis.topic_terms_of(corpus, topic), topic, corpus.name, corpus.topic_colour(topic))

    st.subheader("Representative papers", anchor="papers")
    reps = analysis.representative_rows(corpus, pos)
    near = analysis.neighbour_topics(corpus, reps, panels.NEIGHBOURS) if reps else []
    for r, others in zip(reps, near, strict=True):
        panels.paper_item(
            ctx, r, f"{int((others == topic).sum())} of its {len(others)} most similar papers here", where="rep"
        )
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Nearest topics", anchor=False)
        for other, sim in analysis.nearest_topics(corpus, pos):
            tid = int(corpus.topic_ids[other])
            shell.topic_link(ctx, tid, label=f"{tid} · {text.plain(labels[tid])} — cosine {sim:.2f}")
    if corpus.has_years:
        shares = analysis.topic_year_shares(corpus, ctx.mask, ctx.base)
        fig = trend_figures.topic_share_lines(
            shares[shares["topic"] == topic], labels, selected=topic, height=320, colours=corpus.colouring.colours
        )
        panels.chart(fig, right, name=shell.image_name(ctx, "topic", topic, "share-by-year"))

st.divider()
st.subheader("All topics", anchor="overview")
panels.topic_overview(corpus, topic)
