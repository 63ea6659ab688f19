"""Presentation tours in the app: collecting views, the tour editor and the full-screen present mode.

A tour's steps are app URLs (``explorer.tours``). Present mode is any page opened with ``tour=``
or ``tourdata=`` and ``step=``: the router draws a bar above the page (step, note in large type,
previous/next/exit buttons), hides the sidebar and the header and enlarges the type, and sends
the reader to the step's own page and parameters. Next and previous are buttons, and keys
(ArrowRight/ArrowLeft, PageDown/PageUp for presentation clickers, Escape to leave) that a small
constant script turns into clicks on those buttons: it builds no URL and reads no corpus text.

The tour being assembled lives in ``st.session_state`` and, so that a reload does not lose it, in
the browser's local storage (a small constant component, ``draft_store``); it is shared as a link
with the tour inside (anyone) or saved as a file (editors).

On a projector everything grows with the note: the page's type by CSS, chart text, axes and legends
through :func:`scale` (the one place every chart, the map included, reads its text scale). A step
can start at a section of its page (``at=emerging``: a heading's anchor); the page scrolls there.
"""

from __future__ import annotations

import streamlit as st

from explorer import data, state, text, tours
from explorer.access import ReadOnlyError
from explorer.compare import VIEWS
from explorer.data import Corpus
from explorer.shell import Context
from explorer.tours import Step, Tour, TourError
from pipeline.artifacts import ArtifactError

DRAFT = "tour_draft"
DRAFT_NAME = "tour_draft_name"
TOUR_PARAMS = ("tour", "tourdata", "step")
#: Chart text, axes and legends in present mode, relative to the normal size (the note is ~2.3x
#: the page's type; charts at 1.5x stay legible at 1400x900 without crowding their labels).
PRESENT_SCALE = 1.5
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

#: Where a slide of a page opens when its step names no section: the page's subject.
SLIDE_SECTION = {"lineage": "flow"}

#: Present mode: no sidebar, header or toolbar; the page uses the whole width; large type.
PRESENT_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stHeader"], [data-testid="stToolbar"], [data-testid="stDecoration"] { display: none !important; }
[data-testid="stMainBlockContainer"] { max-width: 100% !important; padding: 0.5rem 2rem 2rem 2rem !important; }
/* A slide: the bar names the step, so the page's own title, controls, explanations and links are not
   shown; what the step is about comes first and fills the screen (SLIDE_JS sizes it). */
[data-testid="stMain"] h1, [data-testid="stMain"] [data-testid="stSelectbox"],
[data-testid="stMain"] [data-testid="stTextInput"], [data-testid="stMain"] [data-testid="stMultiSelect"],
[data-testid="stMain"] [data-testid="stSlider"], [data-testid="stMain"] [data-testid="stNumberInput"],
[data-testid="stMain"] [data-testid="stCaptionContainer"], [data-testid="stMain"] [data-testid="stPageLink"],
[data-testid="stMain"] [data-testid="stTextArea"], [data-testid="stMain"] [data-testid="stRadio"],
[data-testid="stMain"] [data-testid="stSegmentedControl"], [data-testid="stMain"] [data-testid="stExpander"],
[data-testid="stMain"] [data-testid="stButton"], [data-testid="stMain"] [data-testid="stDownloadButton"],
[data-testid="stMain"] [data-testid="stButtonGroup"], [data-testid="stMain"] [data-testid="stCheckbox"]
  { display: none !important; }
.st-key-tour_bar [data-testid="stCaptionContainer"], .st-key-tour_bar [data-testid="stButton"] { display: block !important; }
[data-testid="stMain"] [data-testid="stElementContainer"]:has(h1),
[data-testid="stMain"] [data-testid="stElementContainer"]:has(> :is([data-testid="stSelectbox"], [data-testid="stTextInput"],
  [data-testid="stMultiSelect"], [data-testid="stSlider"], [data-testid="stNumberInput"], [data-testid="stTextArea"],
  [data-testid="stRadio"], [data-testid="stSegmentedControl"], [data-testid="stButtonGroup"], [data-testid="stCheckbox"],
  [data-testid="stDownloadButton"])),
[data-testid="stMain"] [data-testid="stElementContainer"]:has(> [data-testid="stCaptionContainer"]),
[data-testid="stMain"] [data-testid="stElementContainer"]:has(> [data-testid="stPageLink"]) { display: none !important; }
.st-key-tour_bar [data-testid="stElementContainer"] { display: block !important; }
[data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { overflow: visible !important; text-overflow: clip !important;
  white-space: nowrap !important; }
[data-testid="stMain"] [data-testid="stMetricLabel"] p { font-size: 1.1rem !important; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 1.7rem !important; }
[data-testid="stMain"] h2 { font-size: 2rem !important; padding: 0.2rem 0 0 0 !important; }
/* the rows that held only the page title and controls, and the style and script elements, take no room */
[data-testid="stMain"] [data-testid="stHorizontalBlock"]:has(h1),
[data-testid="stMain"] [data-testid="stElementContainer"]:has(> [data-testid="stHtml"]),
[data-testid="stMain"] [data-testid="stElementContainer"]:has(> iframe[height="0"]) { display: none !important; }
[class*="st-key-slide_"] { overflow: hidden; }
/* the map's data elements (1 px high each) take no room on a slide */
[data-testid="stMain"] [class*="st-key-atlasdata_"] { position: absolute !important; width: 1px; height: 0 !important;
  overflow: hidden; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.45rem !important; line-height: 1.45; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.15rem !important; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.15rem !important; }
[data-testid="stMain"] h1 { font-size: 3rem !important; }
[data-testid="stMain"] h2 { font-size: 2.4rem !important; }
[data-testid="stMain"] h3 { font-size: 1.9rem !important; }
.st-key-tour_bar { border-bottom: 3px solid #0072B2; padding-bottom: 0.4rem; margin-bottom: 0.3rem; background: white; }
/* the buttons take their own width, the note the rest: nothing overlaps at 1280 px */
.st-key-tour_bar [data-testid="stHorizontalBlock"] { flex-wrap: nowrap !important; gap: 0.8rem !important; }
.st-key-tour_bar [data-testid="stColumn"] { flex: 0 0 auto !important; width: auto !important; min-width: 0 !important; }
.st-key-tour_bar [data-testid="stColumn"]:nth-child(2) { flex: 1 1 0 !important; }
/* the bar (its wrapper: sticky only works inside its parent) stays on screen when a step scrolls to a section */
[data-testid="stLayoutWrapper"]:has(> .st-key-tour_bar) { position: sticky; top: 0; z-index: 1000; background: white; }
[data-testid="stMain"] [id] { scroll-margin-top: 10rem; }
.st-key-tour_note [data-testid="stMarkdownContainer"] p { font-size: 1.9rem !important; line-height: 1.2;
  font-weight: 600; margin: 0; }
.st-key-tour_note [data-testid="stCaptionContainer"] p { font-size: 1.05rem !important; margin: 0; }
.st-key-tour_note [data-testid="stCaptionContainer"], .st-key-tour_note [data-testid="stMarkdownContainer"] { margin: 0 !important; }
.st-key-tour_note { gap: 0.1rem !important; }
.st-key-tour_bar button p { font-size: 1.25rem !important; white-space: nowrap; }
.st-key-tour_bar button { min-width: max-content; padding-left: 0.6rem; padding-right: 0.6rem; }
[class*="st-key-rl_"] { display: none !important; }
</style>"""

#: Keys -> clicks on the tour buttons. A constant: no corpus text, no URL built here.
KEYS_JS = """<script>
(() => {
  const keys = {ArrowRight: "tour_next", PageDown: "tour_next", ArrowLeft: "tour_prev", PageUp: "tour_prev",
                Escape: "tour_exit"};
  if (window.__atlasTourKeys) document.removeEventListener("keydown", window.__atlasTourKeys, true);
  window.__atlasTourKeys = (event) => {
    const where = event.target;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    // Keys typed into a text box or moving a slider stay there; a table (even after a click in it,
    // which focuses the grid's own input) does not keep them: on a projector they turn the slides.
    const typing = where && where.closest &&
      where.closest("input, textarea, select, [contenteditable], [role=slider]") &&
      !where.closest('[data-testid="stDataFrame"], [data-testid="stTable"]');
    if (typing) return;
    const key = keys[event.key];
    const button = key && document.querySelector(".st-key-" + key + " button");
    if (!button || button.disabled) return;
    event.preventDefault();
    event.stopPropagation();
    button.click();
  };
  document.addEventListener("keydown", window.__atlasTourKeys, true);
})();
</script>"""


#: Present mode: the step's subject (the map, the charts of the first screen: ``SLIDE_KEYS``) is
#: sized to fill the window below what precedes it, at any window size, and again when the window
#: changes. A constant: it only measures and sizes elements.
SLIDE_JS = """<script>
(() => {
  if (window.__atlasSlides) clearInterval(window.__atlasSlides);
  // rows and blocks whose every element the slide hides take no room either (checked again each time:
  // an element's own display does not depend on its hidden ancestors)
  const collapse = () => {
    for (const w of document.querySelectorAll('[data-testid="stMain"] [data-testid="stLayoutWrapper"]')) {
      if (w.closest('.st-key-tour_bar')) continue;
      const parts = w.querySelectorAll('[data-testid="stElementContainer"]');
      const empty = parts.length > 0 && Array.from(parts).every((e) => getComputedStyle(e).display === 'none');
      if (empty !== (w.dataset.atlasEmpty === '1')) {
        w.dataset.atlasEmpty = empty ? '1' : '';
        if (empty) w.style.setProperty('display', 'none', 'important'); else w.style.removeProperty('display');
      }
    }
  };
  const fit = () => {
    collapse();
    let changed = false;
    const slides = document.querySelectorAll('[data-testid="stMain"] .st-key-map, [data-testid="stMain"] .st-key-compare_map, ' +
      '[data-testid="stMain"] [class*="st-key-slide_"]');
    for (const el of slides) {
      const top = el.getBoundingClientRect().top;
      if (!el.offsetParent || top < 0 || top > window.innerHeight - 120) continue;  // what the first screen shows
      const h = Math.max(260, Math.floor(window.innerHeight - top - 12));
      const inner = [el, ...el.querySelectorAll('.stBidiComponent, [data-testid="stBidiComponentIsolated"], ' +
        '[data-testid="stElementContainer"], [data-testid="stFullScreenFrame"], [data-testid="stPlotlyChart"], .js-plotly-plot')];
      for (const e of inner) {
        if (e.style.height === h + 'px') continue;
        for (const p of ['height', 'min-height', 'max-height', 'flex-basis']) e.style.setProperty(p, h + 'px', 'important');
        changed = true;
      }
    }
    // charts drawn before their box was sized (or before the page scrolled to them) take the new size
    if (changed) window.dispatchEvent(new Event('resize'));
  };
  window.__atlasSlides = setInterval(() => {
    if (!document.querySelector('.st-key-tour_bar')) { clearInterval(window.__atlasSlides); return; }
    fit();
  }, 150);
})();
</script>"""


#: Scrolls to a section (a heading anchor) once the page has drawn it. ``{at}`` is only ever one
#: of the ``SECTIONS`` keys (our own constants), never text from the URL.
SCROLL_JS = """<script>
(() => {
  const at = "{at}";
  let tries = 0;
  const go = () => {
    const target = document.getElementById(at);
    if (!target) { if (++tries < 60) setTimeout(go, 150); return; }
    target.scrollIntoView({block: "start"});
    // Charts above the section may still be drawing and push it down: keep it in place for a few
    // seconds, unless the reader scrolls or presses a key meanwhile.
    let held = 0, moved = false;
    const stop = () => { moved = true; };
    for (const kind of ["wheel", "touchstart", "keydown", "mousedown"]) {
      window.addEventListener(kind, stop, {once: true, passive: true, capture: true});
    }
    const hold = () => {
      if (moved || ++held > 25 || !target.isConnected) return;
      if (Math.abs(target.getBoundingClientRect().top) > 4) target.scrollIntoView({block: "start"});
      setTimeout(hold, 200);
    };
    setTimeout(hold, 200);
  };
  setTimeout(go, 300);
})();
</script>"""


def scale() -> float:
    """How much larger chart text is drawn in this view: ``PRESENT_SCALE`` while a tour is
    presented, else 1. The one place charts read it (``panels.chart``; the map component too)."""
    ctx = st.session_state.get("_ctx")
    presenting = ctx.presenting if ctx is not None else any(st.query_params.get(k) for k in TOUR_PARAMS[:2])
    return PRESENT_SCALE if presenting else 1.0


def from_url(ctx: Context) -> tuple[Tour | None, dict[str, str], str | None]:
    """The tour the URL names: (tour, the parameters that name it, problem)."""
    params = st.query_params
    try:
        if params.get("tourdata"):
            blob = params.get("tourdata")
            return tours.decode(blob), {"tourdata": blob}, None
        if params.get("tour"):
            name = params.get("tour")
            return tours.load(ctx.root, ctx.corpus.name, name), {"tour": name}, None
    except TourError as exc:
        return None, {}, str(exc)
    return None, {}, None


def step_params(tour_ref: dict[str, str], step: Step, i: int) -> dict[str, list[str] | str]:
    return {**step.query(), **tour_ref, "step": str(i)}


def bar(ctx: Context, page_path: dict[str, str]) -> None:
    """Present mode, when the URL names a tour: go to the step's view, draw the bar, hide the rest.

    Args:
        page_path: page name -> script path (``shell.PAGE``), for ``st.switch_page``.
    """
    section = st.query_params.get(SECTION)
    if section is None and ctx.presenting:  # a slide opens at its subject
        section = SLIDE_SECTION.get(ctx.page)
    if section in SECTIONS.get(ctx.page, {}):  # a known anchor of this page, nothing else
        st.html(SCROLL_JS.replace("{at}", section), unsafe_allow_javascript=True)
    tour, ref, problem = from_url(ctx)
    if problem:
        st.warning(f"This tour cannot be shown: {text.plain(problem)}", icon=":material/slideshow:")
        return
    if tour is None:
        with st.sidebar:  # not while presenting: its first report would rerun a page mid-tour
            draft_store()
        return
    n = len(tour.steps)
    i = min(max(state.parse_int(st.query_params.get("step")) or 1, 1), n)
    step = tour.steps[i - 1]
    here = state.current_params()
    arrived = ctx.page == step.page and all(here.get(k) == v for k, v in step.query().items())
    seen = (tuple(ref.items()), i)
    if not arrived and st.session_state.get("_tour_sent") != seen:  # once per step: never a loop
        st.session_state["_tour_sent"] = seen
        st.switch_page(page_path[step.page], query_params=step_params(ref, step, i))
    st.html(PRESENT_CSS)
    st.html(KEYS_JS, unsafe_allow_javascript=True)
    st.html(SLIDE_JS, unsafe_allow_javascript=True)
    with st.container(key="tour_bar"):
        prev, note, nxt, leave = st.columns([1.2, 8, 1.2, 0.9], vertical_alignment="center")
        go_prev = prev.button(
            "Previous", key="tour_prev", icon=":material/arrow_back:", disabled=i == 1, width="stretch"
        )
        with note.container(key="tour_note"):
            st.caption(
                f"{text.plain(tour.name)} · step {i} of {n}: {text.plain(describe(step, step_corpus(ctx, step)))} · "
                "← → to move, Esc to leave"
            )
            st.markdown(text.plain(step.note) or text.plain(f"Step {i}"))
        go_next = nxt.button("Next", key="tour_next", icon=":material/arrow_forward:", disabled=i == n, width="stretch")
        leave_now = leave.button("Exit", key="tour_exit", icon=":material/close:", width="stretch")
    if go_prev or go_next:
        j = i - 1 if go_prev else i + 1
        st.switch_page(page_path[tour.steps[j - 1].page], query_params=step_params(ref, tour.steps[j - 1], j))
    if leave_now:
        st.switch_page(page_path[step.page], query_params=step.query())


# ------------------------------------------------------------------------------------------
# Building a tour
# ------------------------------------------------------------------------------------------


def draft() -> list[Step]:
    return st.session_state.setdefault(DRAFT, [])


#: Browser side of ``draft_store``: on the first render it reports what local storage holds; once
#: the app has read that, every render writes the current draft there. A constant: the draft
#: travels as data (compressed JSON, ``tours.encode``) and is never put into the page.
STORE_JS = """
export default function (component) {
  const { data, setStateValue } = component;
  const key = "abstract-atlas:tour-draft";
  try {
    if (data && data.write) {
      if (data.draft) window.localStorage.setItem(key, data.draft);
      else window.localStorage.removeItem(key);
    } else {
      setStateValue("stored", window.localStorage.getItem(key) || "");
    }
  } catch (error) {
    setStateValue("stored", "");
  }
}
"""


@st.cache_resource(show_spinner=False)
def _store_component():
    return st.components.v2.component("atlas_tour_draft_store", js=STORE_JS)


def draft_store() -> None:
    """Keep the tour being assembled in the browser's local storage, so that a reload (or a new
    tab) finds it again; restore it from there when this session has none."""
    restored = st.session_state.get("_tour_draft_restored", False)
    steps = draft()
    blob = (
        tours.encode(Tour(name=tours.slug(st.session_state.get(DRAFT_NAME) or "") or "tour", steps=tuple(steps)))
        if steps
        else ""
    )
    result = _store_component()(
        key="tour_draft_store", data={"write": restored, "draft": blob}, default={"stored": None},
        on_stored_change=lambda: None, height=0,
    )  # fmt: skip
    stored = getattr(result, "stored", None)
    if restored or stored is None:
        return
    st.session_state["_tour_draft_restored"] = True
    if stored and not steps:
        try:
            load_into_draft(tours.decode(stored))
        except TourError:
            return
        if st.session_state.get(DRAFT_NAME) == "tour":  # the stand-in name of an unnamed draft
            st.session_state[DRAFT_NAME] = ""
        st.rerun()  # redraw the sidebar's step count with the restored tour


def _add_step(page: str) -> None:
    note = st.session_state.get("tour_add_note", "")
    params = {k: v for k, v in state.current_params().items() if k != SECTION}
    section = st.session_state.get("tour_add_at")
    if section in SECTIONS.get(page, {}):
        params[SECTION] = [section]
    try:
        draft().append(tours.make_step(page, params, note))
    except TourError as exc:
        st.toast(text.plain(str(exc)))
        return
    st.session_state["tour_add_note"] = ""
    st.toast(f"Added as step {len(draft())} of the tour", icon=":material/slideshow:")


def add_view(ctx: Context) -> None:
    """Sidebar popover: add the current view, with a note (and the section it starts at), to the
    tour being assembled."""
    if ctx.page not in tours.PAGES:
        return
    n = len(draft())
    label = f"Add to the tour ({n} step{'s' if n > 1 else ''})" if n else "Add this view to the tour"
    with st.popover(label, icon=":material/add_to_queue:", width="stretch"):
        st.text_area("Note shown with this view", key="tour_add_note", max_chars=tours.MAX_NOTE, height=90)
        sections = SECTIONS.get(ctx.page, {})
        if sections:
            st.selectbox(
                "Start the view at", [None, *sections], key="tour_add_at",
                format_func=lambda a: "the top of the page" if a is None else sections[a],
            )  # fmt: skip
        st.button("Add to the tour", key="tour_add", icon=":material/add:", on_click=_add_step, args=(ctx.page,))


def _forget_notes() -> None:
    """Drop the note boxes' state so that they show the steps' notes again (after a reorder)."""
    for key in [k for k in st.session_state if str(k).startswith("tour_note_")]:
        del st.session_state[key]


def _move(i: int, by: int) -> None:
    steps = draft()
    j = i + by
    if 0 <= j < len(steps):
        steps[i], steps[j] = steps[j], steps[i]
    _forget_notes()


def _remove(i: int) -> None:
    del draft()[i]
    _forget_notes()


def _renote(i: int) -> None:
    steps = draft()
    steps[i] = Step(steps[i].page, steps[i].params, " ".join(st.session_state[f"tour_note_{i}"].split()))


def draft_tour(ctx: Context) -> Tour | None:
    name = tours.slug(st.session_state.get(DRAFT_NAME) or "") or "tour"
    return Tour(name=name, steps=tuple(draft()), corpus=ctx.corpus.name) if draft() else None


def step_corpus(ctx: Context, step: Step) -> Corpus | None:
    """The corpus a step's ids refer to (its ``corpus=``; the open one when it names none), or None
    when it cannot be opened (the step is then named by ids)."""
    name = (step.query().get("corpus") or [None])[-1]
    if not name or name == ctx.corpus.name:
        return ctx.corpus
    try:
        return data.get_corpus(ctx.root, name)
    except ArtifactError:
        return None


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
        what = section or ("keywords " + ", ".join(k for k in keywords if k) if any(keywords) else "keyword trends")
        name = f"Trends: {what}" + (f", {periods}" if periods else "")
        section = None
    elif step.page == "search":
        mode = " (semantic)" if q.get("mode") == "semantic" else ""
        name = f"Search: “{q.get('q', '')[:80]}”{mode}" if q.get("q") else "Search"
    elif step.page == "list":
        name = "Reading list"
    else:
        name = step.page
    filters = [f"{k} {q[k]}" for k in ("years", "venue", "topics", "text") if q.get(k)]
    name += f" ({'; '.join(filters)})" if filters else ""
    return (name + (f" · {section}" if section else ""))[:160]


def editor(ctx: Context) -> None:
    """The steps of the tour being assembled: notes, order, removal."""
    steps = draft()
    for i, step in enumerate(steps):
        num, body, up, down, drop = st.columns([0.4, 8, 0.5, 0.5, 0.5], vertical_alignment="center")
        num.markdown(f"**{i + 1}.**")
        st.session_state.setdefault(f"tour_note_{i}", step.note)
        body.text_input(
            text.plain(describe(step, step_corpus(ctx, step))), key=f"tour_note_{i}", on_change=_renote, args=(i,)
        )
        up.button("", icon=":material/arrow_upward:", key=f"tour_up_{i}", on_click=_move, args=(i, -1), disabled=i == 0)
        down.button("", icon=":material/arrow_downward:", key=f"tour_down_{i}", on_click=_move, args=(i, 1),
                    disabled=i == len(steps) - 1)  # fmt: skip
        drop.button("", icon=":material/delete:", key=f"tour_drop_{i}", on_click=_remove, args=(i,))


def save_tour(ctx: Context, tour: Tour) -> None:
    try:
        tours.save(ctx.access, ctx.root, tour)
    except (TourError, ReadOnlyError) as exc:
        st.error(text.plain(str(exc)), icon=":material/block:")
        return
    st.toast(f"Saved the tour “{tour.name}”", icon=":material/save:")


def delete_tour(ctx: Context, name: str) -> None:
    try:
        tours.delete(ctx.access, ctx.root, ctx.corpus.name, name)
    except (TourError, ReadOnlyError) as exc:
        st.toast(text.plain(str(exc)), icon=":material/block:")


def clear_draft() -> None:
    st.session_state[DRAFT] = []
    st.session_state[DRAFT_NAME] = ""
    _forget_notes()


def load_into_draft(tour: Tour) -> None:
    st.session_state[DRAFT] = list(tour.steps)
    st.session_state[DRAFT_NAME] = tour.name
    _forget_notes()
