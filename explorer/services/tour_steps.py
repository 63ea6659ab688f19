"""What a tour step shows, in words: the sections of a page a step can start at (URL ``at``, a
heading's anchor) and the step's name as a reader would say it (``describe``). Plain text, no
Streamlit: the present-mode bar and the tour editor name steps with it.
"""

from __future__ import annotations

from explorer.services.compare import VIEWS
from explorer.state import state
from explorer.state.data import Corpus
from explorer.state.tours import Step

#: URL parameter naming the section a view starts at (the anchor of one of the page's headings).
SECTION = "at"
#: The sections a tour step can start at, per page: anchor -> what the reader sees there.
SECTIONS: dict[str, dict[str, str]] = {
    "topics": {"topic": "the topic", "papers": "its representative papers", "overview": "all topics at once"},
    "trends": {
        "keywords": "keywords over the years",
        "topics": "topics over the years",
        "emerging": "emerging and declining",
    },
    "paper": {"similar": "the most similar papers"},
    "lineage": {"emerging": "emerging and declining", "flow": "the flow of topics"},
}


def describe(step: Step, corpus: Corpus | None = None) -> str:
    """What a step shows, named as a reader would: ``Topic: diffusion models``, ``Paper: <title>``,
    ``Trends: emerging and declining, 2016–2020 to 2021–2023``, ``What changed: neurips2026 vs
    neurips-1987-2023 · topic shares``, ``Topic lineage: roots of diffusion models, 1987–2023 in 4
    periods`` (plain text; escape before rendering).

    Args:
        corpus: the corpus the step's ids refer to (labels and titles); without it, ids are named.
    """
    q = {k: v[-1] for k, v in step.query().items() if v}
    topic = state.parse_int(q.get("topic"))
    label = corpus.topic_label(topic) if corpus is not None and topic is not None else f"topic {topic}"
    section = SECTIONS.get(step.page, {}).get(q.get(SECTION, ""))
    if step.page == "compare":
        new = q.get("corpus") or (corpus.name if corpus is not None else "this corpus")
        view = VIEWS.get(q.get("show", ""), VIEWS["overview"])
        return f"What changed: {new} vs {q.get('ref', 'a reference')} · {view.lower()}"[:160]
    if step.page == "lineage":
        periods = [p for p in q.get("periods", "").split(",") if p]
        dashed = [p.replace("-", "–") for p in periods]
        if len(periods) > 3:
            span = f"{periods[0].split('-')[0]}–{periods[-1].split('-')[-1]} in {len(periods)} periods"
        else:
            span = (" to " if len(periods) == 2 else ", ").join(dashed)
        what = f"roots of {label}" if topic is not None else "the ten largest topics"
        return (f"Topic lineage: {what}" + (f", {span}" if span else "") + (f" · {section}" if section else ""))[:160]
    if step.page in ("topics", "map") and topic is not None:
        name = f"Topic: {label}" + (" on the map" if step.page == "map" else "")
    elif step.page == "map":
        name = "Map: all topics"
    elif step.page == "topics":
        name = "Topics: all topics"
    elif step.page == "paper":
        row = corpus.paper_pos(q.get("paper")) if corpus is not None else None
        title = corpus.papers["title"].iat[row] if row is not None else q.get("paper", "?")
        name = f"Paper: {title}"
    elif step.page == "trends":
        keywords = step.query().get("kw", [])
        periods = " to ".join(p for p in (q.get("before"), q.get("after")) if p)
        shown = [corpus.shown_term(k) if corpus is not None else k for k in keywords if k]  # as the papers write them
        what = section or ("keywords " + ", ".join(shown) if shown else "keyword trends")
        name = f"Trends: {what}" + (f", {periods}" if periods else "")
        section = None
    elif step.page == "search":
        mode = " (semantic)" if q.get("mode") == "semantic" else ""
        name = f"Search: “{q.get('q', '')[:80]}”{mode}" if q.get("q") else "Search"
    elif step.page == "list":
        name = "Reading list"
    else:
        name = step.page
    if step.page == "map" and q.get("q"):  # the rings: the papers found for a query
        name += f", “{q['q'][:80]}” ringed" + (" (semantic)" if q.get("mode") == "semantic" else "")
    filters = [f"{k} {q[k]}" for k in ("years", "venue", "topics", "text") if q.get(k)]
    name += f" ({'; '.join(filters)})" if filters else ""
    return (name + (f" · {section}" if section else ""))[:160]
