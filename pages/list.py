"""Reading list: the papers collected on any page, kept in the link (``list=``) with a note per
paper (``notes=``), exported as Markdown, CSV and BibTeX."""

import streamlit as st

from explorer.services import text
from explorer.state import readinglist, state
from explorer.ui import panels, share, shell

ctx = shell.context()
corpus = ctx.corpus
st.title("Reading list", anchor=False)
rows = ctx.reading
if ctx.reading_unknown:
    n = len(ctx.reading_unknown)
    st.warning(
        f"{n} paper{'s' if n > 1 else ''} in this link {'are' if n > 1 else 'is'} not in **{text.plain(corpus.name)}** "
        "(a list made on another corpus, or papers dropped by a rebuild).",
        icon=":material/link_off:",
    )
if not len(rows):
    st.info(
        "Your reading list is empty. Add papers with the bookmark button beside a paper, a search result or a "
        "topic's papers, or select papers on the map with the box or lasso tool. The list lives in the address, "
        "so a copied link shares it.",
        icon=":material/bookmarks:",
    )
    st.stop()

notes = ctx.view.note_of
if ctx.presenting:  # a slide: the papers and their notes, large, nothing to edit
    for i, r in enumerate(rows.tolist(), start=1):
        panels.paper_item(ctx, int(r), prefix=f"{i}\\. ", where="list")
        note = notes.get(str(corpus.short_ids[r]))
        if note:
            with st.container(key=f"list_note_{i}"):
                st.markdown(f":material/sticky_note_2: {text.plain(note)}")
    st.stop()

link = shell.absolute_url("list", state.shared(ctx.view))
st.caption(
    f"{len(rows)} paper{'s' if len(rows) > 1 else ''}, in the order they were added. The list and its notes live in "
    "the link: copy the address, or this one, to share them (the filters do not apply here)."
)
st.code(link, language=None, wrap_lines=True)
fragment = f"list={readinglist.encode(ctx.view.reading)}"
if readinglist.encode_notes(notes, ctx.view.reading):
    fragment += f"&notes={readinglist.encode_notes(notes, ctx.view.reading)}"
st.caption(
    f"In the offline HTML file of this corpus (sidebar: *Offline HTML of the corpus*), add this after the file's "
    f"address to open the same list there: `#{fragment}`"
)
share.list_exports(ctx, rows, link)
if problem := st.session_state.pop("rl_note_problem", None):
    st.warning(text.plain(problem), icon=":material/sticky_note_2:")
st.divider()
for i, r in enumerate(rows.tolist(), start=1):  # the list's papers (at most 200)
    panels.paper_item(ctx, int(r), prefix=f"{i}\\. ", where="list")
    share.note_editor(ctx, int(r))
share.clear_button()
