"""Add a corpus: drop files, check their columns, name the corpus, build it in the background and
open its map. Editors only: on a read-only server the page is not linked and refuses here, and
every write it asks for (``explorer.services.jobs``) refuses a viewer again."""

import streamlit as st

from explorer.ui import build_form, buildview, shell

ws = shell.workspace()
st.title("Add a corpus", anchor=False)
if not ws.access.can_write:
    st.info(
        "This server is read-only: adding corpora is switched off (an editor opens the app with the editor token).",
        icon=":material/lock:",
    )
    st.stop()

st.markdown(
    "Bring your own abstracts: the app reads them, finds their topics and adds the corpus to the corpus picker. "
    "The build runs on the server; you can leave this page and come back."
)
busy = buildview.builds(ws)
with st.expander("Add another corpus", icon=":material/add:") if busy else st.container():
    files = build_form.choose_files()
    explicit, readable = build_form.check_columns(files, *build_form.target_corpus(ws))
    target = build_form.choose_target(ws, files)
    build_form.start(ws, files, explicit, readable, target)
