"""The shared filters' widgets in the sidebar, bound to the URL (``explorer.state.state``).

What the filters mean and the mask they select are ``explorer.state.filters`` (pure, tested without a
running app); this module only draws them.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from explorer.state import state
from explorer.state.data import Corpus
from explorer.state.filters import MAX_TEXT, Filters
from explorer.ui import url_state


def sidebar(corpus: Corpus, filters: Filters) -> Filters:
    """Draw the filter widgets in the sidebar (bound to the URL) and return the filters in force."""
    out = filters
    span = corpus.year_span
    if span is not None and span[0] < span[1]:
        st.slider(
            "Years",
            min_value=span[0],
            max_value=span[1],
            step=1,
            key=f"f_years:{corpus.name}",
            **url_state.bind(
                f"f_years:{corpus.name}",
                filters.years,
                default=span,
                to_url=lambda v: {"years": None if tuple(v) == span else state.format_range(tuple(v))},
            ),
        )
        chosen = tuple(st.session_state[f"f_years:{corpus.name}"])
        out = replace(out, years=None if chosen == span else chosen)
    if len(corpus.venues) > 1:
        st.multiselect(
            "Venues",
            corpus.venues,
            key=f"f_venues:{corpus.name}",
            placeholder="All venues",
            **url_state.bind(
                f"f_venues:{corpus.name}", filters.venues or None, default=[], to_url=lambda v: {"venue": list(v)}
            ),
        )
        out = replace(out, venues=tuple(st.session_state[f"f_venues:{corpus.name}"]))
    if len(corpus.tables.topics) > 1:
        labels = dict(zip(corpus.topic_ids.tolist(), corpus.tables.topics["label"].tolist(), strict=True))
        st.multiselect(
            "Topics",
            list(labels),
            format_func=lambda t: f"{t} · {labels.get(t, '?')}",
            key=f"f_topics:{corpus.name}",
            placeholder="All topics",
            **url_state.bind(
                f"f_topics:{corpus.name}",
                filters.topics or None,
                default=[],
                to_url=lambda v: {"topics": ",".join(str(t) for t in v)},
            ),
        )
        out = replace(out, topics=tuple(st.session_state[f"f_topics:{corpus.name}"]))
    st.text_input(
        "Text in title or abstract",
        key=f"f_text:{corpus.name}",
        max_chars=MAX_TEXT,
        placeholder="e.g. diffusion",
        **url_state.bind(
            f"f_text:{corpus.name}", filters.text or None, default="", to_url=lambda v: {"text": v.strip()}
        ),
    )
    return replace(out, text=st.session_state[f"f_text:{corpus.name}"].strip())
