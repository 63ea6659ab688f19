"""Present mode: a tour shown full screen, one step (an app URL, ``explorer.state.tours``) at a time.

Present mode is any page opened with ``tour=`` or ``tourdata=`` and ``step=``: the router draws a bar
above the page (step, note in large type, previous/next/exit buttons), hides the sidebar and the
header and enlarges the type, and sends the reader to the step's own page and parameters. Next and
previous are buttons, and keys (ArrowRight/ArrowLeft, PageDown/PageUp for presentation clickers,
Escape to leave) that a small constant script turns into clicks on those buttons: it builds no URL
and reads no corpus text. Collecting views into a tour and editing it is ``explorer.ui.tour_draft``'s.

On a projector everything grows with the note: the page's type by CSS, chart text, axes and legends
through :func:`scale` (the one place every chart, the map included, reads its text scale). A step
can start at a section of its page (``at=emerging``: a heading's anchor, ``explorer.services.tour_steps``);
the page scrolls there.
"""

from __future__ import annotations

import streamlit as st

from explorer.services import text
from explorer.services.tour_steps import SECTION, SECTIONS, describe
from explorer.state import state, tours
from explorer.state.tours import Step, Tour, TourError
from explorer.ui import url_state
from explorer.ui.shell import Context
from explorer.ui.tour_draft import draft_store, step_corpus

TOUR_PARAMS = ("tour", "tourdata", "step")
#: Chart text, axes and legends in present mode, relative to the normal size (the note is ~2.3x
#: the page's type; charts at 1.5x stay legible at 1400x900 without crowding their labels).
PRESENT_SCALE = 1.5

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
    here = url_state.current_params()
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
