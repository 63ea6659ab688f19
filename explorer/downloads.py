"""Files the app hands to the reader: the corpus as one offline HTML file, CSV of a selection.

Built in memory from the loaded (curated) corpus, never written to disk, so they work on a
read-only server. Pure functions of the corpus, plus a tiny in-process cache for the HTML (a
few seconds and ~30 MB for 18k papers): the download buttons call these from Streamlit's
download thread, where ``st.cache_*`` does not apply.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from explorer import readinglist
from pipeline.export import export_data, render_page

if TYPE_CHECKING:
    from explorer.data import Corpus

_HTML: OrderedDict[tuple, str] = OrderedDict()
_HTML_LOCK = threading.Lock()
_HTML_KEEP = 2


def offline_html(corpus: Corpus) -> str:
    """The self-contained HTML export (``pipeline.export``) of the corpus as the app shows it:
    curated labels, merged topics and moved papers included."""
    with _HTML_LOCK:
        if corpus.key in _HTML:
            _HTML.move_to_end(corpus.key)
            return _HTML[corpus.key]
    page = render_page(export_data(corpus.name, corpus.manifest, corpus.papers, corpus.topics))
    with _HTML_LOCK:
        _HTML[corpus.key] = page
        while len(_HTML) > _HTML_KEEP:
            _HTML.popitem(last=False)
    return page


def selection_csv(corpus: Corpus, mask: np.ndarray) -> str:
    """CSV of the papers the filters keep (``readinglist.COLUMNS``), in corpus order."""
    return readinglist.to_csv(readinglist.papers_table(corpus, np.flatnonzero(mask)))
