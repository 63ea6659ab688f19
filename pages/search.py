"""Search: keyword (BM25) or semantic search, and "place my abstract" among the topics."""

import numpy as np
import streamlit as st

from explorer.services import figures, search, text
from explorer.state import state
from explorer.ui import caches, mapcomponent, panels, search_panels, shell, url_state
from pipeline.core.errors import PipelineError

ctx = shell.context()
corpus = ctx.corpus
st.title("Search", anchor=False)
find, place = st.tabs(["Search the abstracts", "Place my abstract"])

with find:
    left, right = st.columns([4, 2], vertical_alignment="bottom")
    left.text_input(
        "Search",
        key="search_q",
        placeholder="words or a phrase from an abstract, or a description of what you look for",
        **url_state.bind("search_q", ctx.view.q or None, default="", to_url=url_state.query_to_url),
    )
    right.segmented_control(
        "Mode",
        list(state.MODES),
        key="search_mode",
        required=True,
        format_func={"keyword": "Keyword (BM25)", "semantic": "Semantic"}.get,
        **url_state.bind(
            "search_mode", ctx.view.mode, default="keyword", to_url=lambda v: {"mode": None if v == "keyword" else v}
        ),
    )
    query = st.session_state["search_q"].strip()
    url_state.query_cut_note()
    mode = st.session_state["search_mode"] or "keyword"
    if not query:
        st.caption(
            "**Keyword** ranks papers by the words they share with the query (BM25); papers containing the exact "
            "phrase come first. **Semantic** finds papers whose meaning is close to the query, with the corpus's "
            "own embedding model, even without shared words. The sidebar filters apply."
        )
    elif not shell.nothing_left(ctx):
        k = search_panels.results_wanted("search_k", (query, mode))
        with st.spinner("Searching…"):
            if mode == "keyword":
                hits = caches.keyword_hits(corpus, query, ctx.mask, k=k)
            else:
                try:
                    hits = caches.semantic_hits(corpus, query, ctx.mask, k, writable=not ctx.access.read_only)
                except PipelineError as exc:
                    st.error(text.plain(str(exc)), icon=":material/error:")
                    st.stop()
        if not len(hits):
            st.info(
                "Nothing found. Try other words, the semantic mode, or fewer filters.", icon=":material/search_off:"
            )
        score_name = "BM25" if mode == "keyword" else "cosine"
        if len(hits):
            st.caption(search_panels.hits_caption(hits, query, mode, filtered=ctx.n_shown < corpus.n_papers))
        if mode == "keyword" and (note := search.index_note(corpus)):
            st.caption(note)
        for i, (r, score, exact) in enumerate(zip(hits.rows, hits.scores, hits.exact, strict=True), start=1):
            panels.paper_item(
                ctx,
                int(r),
                f"{score_name} {score:.2f}{' · ★ exact phrase' if exact else ''}",
                prefix=f"{i}\\. ",
                snippet=True,
                where="hit",
            )
        if len(hits) < hits.total:
            search_panels.more_results_button("search_k", (query, mode), k)
        if len(hits):
            st.page_link(shell.PAGE["map"].path, label="Show the matches on the map", icon=":material/scatter_plot:",
                         query_params=state.shared(ctx.view, q=query, mode=None if mode == "keyword" else mode))  # fmt: skip

with place:
    with st.form("place_form", border=False):
        st.text_area("Your abstract", height=180, key="place_text", placeholder="Paste a title and abstract")
        submitted = st.form_submit_button("Place it", icon=":material/my_location:", type="primary")
    abstract = st.session_state.get("place_text", "")
    if submitted and len(abstract.split()) < 5:
        st.warning("Give at least a few sentences: a title alone says little about the topic.")
    elif len(abstract.split()) >= 5:
        with st.spinner("Placing it…"):
            try:
                encoder = caches.encoder_for(corpus, writable=not ctx.access.read_only)
            except PipelineError as exc:
                st.error(text.plain(str(exc)), icon=":material/error:")
                st.stop()
            placed = search.place_vector(corpus, search.encode_query(encoder, abstract))
        if len(corpus.tables.topics):
            top = placed.top_topics[:5]
            ids = [int(corpus.topic_ids[i]) for i in top]
            best = ids[0]
            st.markdown(
                f"**Predicted topic:** {best} · {text.plain(corpus.topic_label(best))} "
                f"(cosine similarity {placed.similarities[top[0]]:.2f})"
            )
            shell.topic_link(ctx, best)
        left, right = st.columns([1, 1], gap="large")
        with left:
            if len(corpus.tables.topics):
                bars = figures.topic_similarity_bars(
                    [corpus.topic_label(t) for t in ids],
                    ids,
                    [float(placed.similarities[i]) for i in top],
                    colours=corpus.colouring.colours,
                )
                panels.chart(bars, name=shell.image_name(ctx, "my-abstract-topics"))
                st.caption(panels.CLOSEST_TOPICS_HELP)
            mapcomponent.position_map(
                corpus, placed.xy, topic=best if len(corpus.tables.topics) else None, name="your abstract", key="place_map",
                png_name=shell.image_name(ctx, "my-abstract-map"), on_click=lambda r: shell.open_paper(ctx, r),
            )  # fmt: skip
        with right:
            st.markdown("**Nearest papers**")
            for r, sim in zip(placed.nearest.rows, placed.nearest.scores, strict=True):
                shell.paper_link(ctx, int(r), suffix=f" — similarity {float(sim):.2f}")
        if not np.isfinite(placed.xy).all():
            st.caption("Its map position could not be computed.")
