"""Files the app hands to the reader: the corpus as one offline HTML file (with what changed
against a reference, when the page names one), CSV of a selection.

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

from explorer.services import analysis
from explorer.state import readinglist
from pipeline.export.export import data_ids, export_data, render_page, with_comparison
from pipeline.export.export_compare import compare_part

if TYPE_CHECKING:
    from explorer.state.data import Corpus
    from pipeline.analysis.comparison import Comparison

_HTML: OrderedDict[tuple, str] = OrderedDict()
_HTML_LOCK = threading.Lock()
_HTML_KEEP = 2


def offline_html(corpus: Corpus, reference: Corpus | None = None, comparison: Comparison | None = None) -> str:
    """The self-contained HTML export (``pipeline.export.export``) of the corpus as the app shows it:
    curated labels, merged topics and moved papers included; with ``comparison`` (of the corpus
    against ``reference``, ``explorer.services.compare.get_comparison``) also what changed
    (``pipeline.export.export_compare``)."""
    key = (corpus.key, None if comparison is None else (reference.key, comparison.key))
    with _HTML_LOCK:
        if key in _HTML:
            _HTML.move_to_end(key)
            return _HTML[key]
    papers = corpus.papers.assign(topic_similarity=analysis.topic_similarity(corpus))  # as the map page shows it
    data = export_data(corpus.name, corpus.manifest, papers, corpus.tables.topics)
    if comparison is not None:
        part = compare_part(
            comparison, data_ids(data), reference.papers, reference.tables.topics,
            synthetic=bool(reference.manifest and reference.manifest.synthetic),
        )  # fmt: skip
        data = with_comparison(data, part)
    page = render_page(data)
    with _HTML_LOCK:
        _HTML[key] = page
        while len(_HTML) > _HTML_KEEP:
            _HTML.popitem(last=False)
    return page


def selection_csv(corpus: Corpus, mask: np.ndarray) -> str:
    """CSV of the papers the filters keep (``readinglist.COLUMNS``), in corpus order."""
    return readinglist.to_csv(readinglist.papers_table(corpus, np.flatnonzero(mask)))
