"""Paper: one abstract, its topics, its place on the map and the papers most like it."""

import numpy as np
import streamlit as st

from explorer.services import search, text
from explorer.ui import mapcomponent, panels, present, share, shell

ctx = shell.context()
corpus = ctx.corpus
doc_id = ctx.view.paper
row = corpus.paper_pos(doc_id)


def find_by_title() -> None:
    query = st.text_input("Find a paper by title", key="paper_find", placeholder="a few words of the title")
    if query.strip():
        hits = np.flatnonzero(
            corpus.papers["title"].str.contains(query.strip(), case=False, regex=False).fillna(False).to_numpy(bool)
        )
        for r in hits[:20]:
            shell.paper_link(ctx, int(r))
        if len(hits) == 0:
            st.caption("No title contains that; try the Search page for words in abstracts.")


if row is None:
    st.title("Paper", anchor=False)
    if doc_id is None:
        st.info(
            "Open a paper from the map, a topic or a search result, or find it by title here.",
            icon=":material/article:",
        )
    else:
        st.warning(
            f"There is no paper **{text.plain(doc_id)}** in **{text.plain(corpus.name)}** (it may have been dropped in a rebuild).",
            icon=":material/search_off:",
        )
    find_by_title()
    st.stop()

paper = corpus.papers.iloc[row]
topic = int(paper["topic"])
st.markdown("## " + (text.to_markdown(paper["title"]) or "(untitled)"))
if paper["title_derived"]:
    st.caption("Title derived from the abstract (the input file gave none).")
share.list_toggle(ctx, row, key="paper", labelled=True)
year = str(paper["year"]) if text.present(paper["year"]) else ""
venue = str(paper["venue"]) if text.present(paper["venue"]) else ""
meta = [text.plain(v) for v in (venue, "" if year in venue else year, paper["label"]) if text.present(v)]
st.markdown(" · ".join(meta) if meta else "")
if text.present(paper["authors"]):
    st.markdown("**Authors:** " + text.plain(str(paper["authors"]).replace("; ", ", ")))
if text.present(paper["keywords"]):
    st.markdown("**Author keywords:** " + text.plain(str(paper["keywords"]).replace("; ", ", ")))
url = text.safe_url(paper["url"])
if url:
    st.link_button("Open the paper", url, icon=":material/open_in_new:")
elif text.present(paper["url"]):
    st.caption("Link not shown (not an http or https address): " + text.plain(paper["url"]))

left, right = st.columns([3, 2], gap="large")
pos = corpus.topic_pos(topic)
keywords = list(corpus.tables.topics["keywords"].iat[pos])[:10] if pos is not None else []
with left:
    mark = st.toggle("Highlight the topic's keywords", value=True, key="paper_mark") and bool(keywords)
    st.markdown(text.to_markdown(paper["abstract"], keywords=keywords if mark else ()))
    ok, bad = text.count_math(paper["abstract"])
    if bad:
        st.caption(f"{bad} formula{'s' if bad > 1 else ''} shown as text (not plain math).")
with right:
    panels.paper_topic(ctx, row)
    mapcomponent.position_map(
        corpus, corpus.xy[row], topic=topic, name="this paper", key="paper_map", scale=present.scale(),
        png_name=shell.image_name(ctx, "paper", corpus.short_ids[row], "map"), on_click=lambda r: shell.open_paper(ctx, r),
    )  # fmt: skip

st.subheader("Most similar papers", anchor=False)
similar = search.similar_papers(corpus, row, 10)
for r, sim in zip(similar.rows, similar.scores, strict=True):
    panels.paper_item(ctx, int(r), f"similarity {sim:.2f}", where="similar")
