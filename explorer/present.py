"""Presentation tours in the app: collecting views, the tour editor and the full-screen present mode.

A tour's steps are app URLs (``explorer.tours``). Present mode is any page opened with ``tour=``
or ``tourdata=`` and ``step=``: the router draws a bar above the page (step, note in large type,
previous/next/exit buttons), hides the sidebar and the header and enlarges the type, and sends
the reader to the step's own page and parameters. Next and previous are buttons, and keys
(ArrowRight/ArrowLeft, PageDown/PageUp for presentation clickers, Escape to leave) that a small
constant script turns into clicks on those buttons: it builds no URL and reads no corpus text.

The tour being assembled lives in ``st.session_state`` (short-lived UI state); it is shared as a
link with the tour inside (anyone) or saved as a file (editors).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from explorer import state, text, tours
from explorer.access import ReadOnlyError
from explorer.tours import Step, Tour, TourError

if TYPE_CHECKING:
    from explorer.shell import Context

DRAFT = "tour_draft"
DRAFT_NAME = "tour_draft_name"
TOUR_PARAMS = ("tour", "tourdata", "step")

#: Present mode: no sidebar, header or toolbar; the page uses the whole width; large type.
PRESENT_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stHeader"], [data-testid="stToolbar"], [data-testid="stDecoration"] { display: none !important; }
[data-testid="stMainBlockContainer"] { max-width: 100% !important; padding: 0.8rem 3rem 3rem 3rem !important; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.45rem !important; line-height: 1.45; }
[data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.15rem !important; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.15rem !important; }
[data-testid="stMain"] h1 { font-size: 3rem !important; }
[data-testid="stMain"] h2 { font-size: 2.4rem !important; }
[data-testid="stMain"] h3 { font-size: 1.9rem !important; }
.st-key-tour_bar { border-bottom: 3px solid #0072B2; padding-bottom: 0.6rem; margin-bottom: 0.4rem; }
.st-key-tour_note [data-testid="stMarkdownContainer"] p { font-size: 2.2rem !important; line-height: 1.25;
  font-weight: 600; }
.st-key-tour_note [data-testid="stCaptionContainer"] p { font-size: 1.2rem !important; }
.st-key-tour_bar button p { font-size: 1.25rem !important; }
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
    if (where && where.closest && where.closest("input, textarea, select, [contenteditable], [role=slider]")) return;
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
    tour, ref, problem = from_url(ctx)
    if problem:
        st.warning(f"This tour cannot be shown: {text.plain(problem)}", icon=":material/slideshow:")
        return
    if tour is None:
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
    with st.container(key="tour_bar"):
        prev, note, nxt, leave = st.columns([1.2, 8, 1.2, 0.9], vertical_alignment="center")
        go_prev = prev.button(
            "Previous", key="tour_prev", icon=":material/arrow_back:", disabled=i == 1, width="stretch"
        )
        with note.container(key="tour_note"):
            st.caption(f"{text.plain(tour.name)} · step {i} of {n} · ← → to move, Esc to leave")
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


def _add_step(page: str) -> None:
    note = st.session_state.get("tour_add_note", "")
    try:
        draft().append(tours.make_step(page, state.current_params(), note))
    except TourError as exc:
        st.toast(text.plain(str(exc)))
        return
    st.session_state["tour_add_note"] = ""
    st.toast(f"Added as step {len(draft())} of the tour", icon=":material/slideshow:")


def add_view(ctx: Context) -> None:
    """Sidebar popover: add the current view, with a note, to the tour being assembled."""
    if ctx.page not in tours.PAGES:
        return
    n = len(draft())
    label = f"Add to the tour ({n} step{'s' if n > 1 else ''})" if n else "Add this view to the tour"
    with st.popover(label, icon=":material/add_to_queue:", width="stretch"):
        st.text_area("Note shown with this view", key="tour_add_note", max_chars=tours.MAX_NOTE, height=90)
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


def describe(step: Step) -> str:
    """``Topics · topic 3`` (plain text; escape before rendering)."""
    q = step.query()
    bits = [f"{k} {', '.join(v)}" for k, v in q.items() if k not in ("corpus",)]
    return f"{step.page} · " + ("; ".join(bits)[:120] if bits else "as it opens")


def editor(ctx: Context) -> None:
    """The steps of the tour being assembled: notes, order, removal."""
    steps = draft()
    for i, step in enumerate(steps):
        num, body, up, down, drop = st.columns([0.4, 8, 0.5, 0.5, 0.5], vertical_alignment="center")
        num.markdown(f"**{i + 1}.**")
        st.session_state.setdefault(f"tour_note_{i}", step.note)
        body.text_input(text.plain(describe(step)), key=f"tour_note_{i}", on_change=_renote, args=(i,))
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
