"""The Search page's results: what the list holds (the best how many of how many papers, ranked
how) and a button that lists more, as the offline export's search does."""

from __future__ import annotations

from collections.abc import Hashable

import streamlit as st

from explorer.services import text
from explorer.services.phrase_scan import is_phrase
from explorer.services.search import Hits
from explorer.ui import caches, mapcomponent, shell
from pipeline.core.errors import PipelineError
from pipeline.core.ranking import RESULTS_PAGE


def results_wanted(key: str, asked: Hashable) -> int:
    """How many results to list for ``asked`` (the query and the mode): :data:`RESULTS_PAGE`, and
    more after each click of :func:`more_results_button`; another query starts again."""
    kept = st.session_state.get(key)
    if not kept or kept[0] != asked:
        st.session_state[key] = (asked, RESULTS_PAGE)
    return int(st.session_state[key][1])


def more_results_button(key: str, asked: Hashable, shown: int) -> None:
    """ "Show 25 more results": the list grows by :data:`RESULTS_PAGE` for the same ``asked``."""

    def more() -> None:
        st.session_state[key] = (asked, shown + RESULTS_PAGE)

    st.button(f"Show {RESULTS_PAGE} more results", key=f"{key}_more", on_click=more, icon=":material/expand_more:")


def hits_caption(hits: Hits, query: str, mode: str, *, filtered: bool) -> str:
    """What the list holds: how many of how many papers, ranked how, and how many hold the exact
    phrase where that is known (the search stops checking once it has enough)."""
    shown, total, asked = len(hits), hits.total, text.plain(query)
    among = " (among those the filters keep)" if filtered else ""
    if mode != "keyword":
        lead = f"All {total:,} papers{among}" if shown >= total else f"The {shown:,} of {total:,} papers{among}"
        return (
            f"{lead} closest in meaning to “{asked}”, closest first: cosine similarity of each paper's embedding to "
            "the query's, by the corpus's own model."
        )
    lead = f"All {total:,} papers" if shown >= total else f"The {shown:,} best of {total:,} papers"
    out = (
        f"{lead} sharing a word with “{asked}”{among}, ranked by BM25 over titles and abstracts (English stop "
        "words ignored)."
    )
    if not is_phrase(query):
        return out
    if hits.exact_total is None:
        return out + f" Each of the {shown:,} listed contains the exact phrase (★); papers with it come first."
    if not hits.exact_total:
        return out + " None contains the exact phrase."
    return out + f" {hits.exact_total:,} contain the exact phrase (★) and come first."


def map_hits(ctx: shell.Context, query: str, mode: str) -> Hits | None:
    """The papers the map rings for ``query``: the best :data:`~explorer.ui.mapcomponent.MAP_HITS`
    by keyword (as the Search page ranks them) or by meaning, there no more than a tenth of the papers
    shown (every paper has a similarity: on 38 papers, 100 would ring them all). None, with a
    warning that says why, where the corpus's model cannot be loaded for a semantic search."""
    k = mapcomponent.MAP_HITS
    if mode == "keyword":
        return caches.keyword_hits(ctx.corpus, query, ctx.mask, k=k)
    k = min(k, max(1, -(-ctx.n_shown // 10)))
    try:
        return caches.semantic_hits(ctx.corpus, query, ctx.mask, k, writable=not ctx.access.read_only)
    except PipelineError as exc:
        st.warning(f"No semantic search here: {text.plain(str(exc))}", icon=":material/error:")
        return None
