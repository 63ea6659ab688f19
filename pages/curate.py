"""Curate topics: rename a topic, merge topics, move a paper, undo. Edits are stored beside the
artifacts, applied whenever the corpus is loaded and matched by content after a rebuild."""

import numpy as np
import streamlit as st

from explorer.services import text
from explorer.state import curate
from explorer.ui import panels, share, shell

ctx = shell.context()
corpus = ctx.corpus
st.title("Curate topics", anchor=False)
share.curation_status(ctx)
if not ctx.access.can_write:
    st.info(
        "This server is read-only: curation is switched off (an editor opens the app with the editor token).",
        icon=":material/lock:",
    )
    st.stop()
if len(corpus.tables.topics) == 0:
    st.info("This corpus has no topics to curate.")
    st.stop()

labels = panels.topic_labels(corpus)
ids = list(labels)
url_topic = ctx.view.topic if ctx.view.topic in labels else None
st.caption(
    f"Edits are saved in `{text.plain(corpus.name)}.curation.json` beside the artifacts and shown everywhere "
    "(map, tables, exports). They survive a rebuild: each names its topics by their papers and keywords."
)
rename, merge, move = st.tabs(["Rename a topic", "Merge topics", "Move a paper"])
with rename, st.form("cur_rename", border=False):
    topic = st.selectbox("Topic", ids, index=ids.index(url_topic) if url_topic is not None else 0,
                         format_func=lambda t: f"{t} · {labels[t]}", key="cur_rename_topic")  # fmt: skip
    label = st.text_input("New label", max_chars=80, key="cur_rename_label", placeholder="a short, clear name")
    if st.form_submit_button("Rename", icon=":material/edit:", type="primary", key="cur_rename_go"):
        share.run_edit(lambda: curate.rename(ctx.access, corpus, topic, label), f"Renamed topic {topic}")
with merge, st.form("cur_merge", border=False):
    chosen = st.multiselect("Topics to merge (into the largest)", ids, default=[url_topic] if url_topic is not None else [],
                            format_func=lambda t: f"{t} · {labels[t]}", key="cur_merge_topics")  # fmt: skip
    if st.form_submit_button("Merge", icon=":material/merge:", type="primary", key="cur_merge_go"):
        share.run_edit(lambda: curate.merge(ctx.access, corpus, chosen), f"Merged {len(chosen)} topics")
with move:
    row = corpus.paper_pos(ctx.view.paper)
    if row is None:
        query = st.text_input("Find the paper by title", key="cur_move_find", placeholder="a few words of the title")
        hits = np.flatnonzero(corpus.papers["title"].str.contains(query.strip(), case=False, regex=False)
                              .fillna(False).to_numpy(bool))[:20] if query.strip() else []  # fmt: skip
        row = st.selectbox("Paper", hits, index=None, key="cur_move_paper", placeholder="choose a paper",
                           format_func=lambda r: str(corpus.papers["title"].iat[r])[:120])  # fmt: skip
    if row is not None:
        current = int(corpus.papers["topic"].iat[row])
        shell.paper_link(ctx, int(row), prefix="Paper: ")
        st.caption(f"now in topic {current} · {text.plain(labels.get(current, 'outliers'))}")
        others = [t for t in ids if t != current]
        target = st.selectbox("Move it to", others, format_func=lambda t: f"{t} · {labels[t]}", key="cur_move_to")
        if st.button("Move", icon=":material/move_item:", type="primary", key="cur_move"):
            doc_id = corpus.papers["doc_id"].iat[row]
            share.run_edit(
                lambda: curate.move(ctx.access, corpus, doc_id, target), f"Moved the paper to topic {target}"
            )
st.divider()
if corpus.edits and st.button("Undo the last edit", icon=":material/undo:", key="cur_undo"):
    share.run_edit(lambda: curate.undo(ctx.access, corpus), "Undid the last edit")
