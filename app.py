"""Abstract Atlas: explore a conference's worth of research abstracts by topic.

A router only: page config, the page list, the corpus picker and the shared filters. The pages
(``pages/``) draw; ``explorer/`` reads the artifacts the pipeline built. Nothing is fitted here.
(A deep link opened first after a server start runs its page file directly, in Streamlit's old
``pages/`` mode; ``explorer.ui.shell.context`` hands such a run back to this router.)

    streamlit run app.py                          # corpora in ./artifacts
    streamlit run app.py -- --artifacts DIR       # corpora elsewhere
    streamlit run app.py -- --read-only           # shared: nobody writes (ATLAS_EDITOR_TOKEN: editors may)
    streamlit run app.py -- --build-config F.toml # settings for corpora added from the browser
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

from explorer.state import access
from explorer.ui import present, router, shell, url_state

shell.leave_old_pages_mode()
st.set_page_config(page_title=shell.APP_TITLE, page_icon="🧭", layout="wide")

shell.style()
options = access.options(sys.argv, Path(__file__).parent)
who = url_state.session(options)  # takes an editor token out of the URL before anything reads it
navigation = st.navigation(shell.pages(), position="hidden")  # drawn by router.sidebar, with the filters in the links
shell.follow_page_param()
url_state.sync_url(navigation.url_path)
ctx = router.sidebar(options.root, who, page=navigation.url_path or "map", build_config=options.build_config)
if who.refused:
    st.warning("That editor token is not valid: this session is read-only.", icon=":material/lock:")
if ctx is not None:  # None on a page about the artifacts folder (shell.FOLDER_PAGES)
    present.bar(ctx, shell.PAGE_PATH)  # present mode when the URL names a tour
try:
    navigation.run()
finally:  # after the page has drawn (or switched): build the search index while the reader looks
    if ctx is not None:
        router.warm(ctx)
