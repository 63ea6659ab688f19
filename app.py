"""Abstract Atlas: explore a conference's worth of research abstracts by topic.

A router only: page config, the page list, the corpus picker and the shared filters. The pages
(``pages/``) draw; ``explorer/`` reads the artifacts the pipeline built. Nothing is fitted here.
(A deep link opened first after a server start runs its page file directly, in Streamlit's old
``pages/`` mode; ``explorer.shell.context`` hands such a run back to this router.)

    streamlit run app.py                          # corpora in ./artifacts
    streamlit run app.py -- --artifacts DIR       # corpora elsewhere
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

from explorer import shell, state

shell.leave_old_pages_mode()
st.set_page_config(page_title=shell.APP_TITLE, page_icon="🧭", layout="wide")

shell.style()
root = shell.artifacts_root(sys.argv, Path(__file__).parent)
navigation = st.navigation(shell.pages(), position="hidden")  # drawn by shell.sidebar, with the filters in the links
shell.follow_page_param()
state.sync_url(navigation.url_path)
shell.sidebar(root)
navigation.run()
