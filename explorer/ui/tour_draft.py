"""Building a tour in the app: collecting views (the sidebar's "Add to the tour"), the editor of
its steps (notes, order, removal), saving and deleting tours.

The tour being assembled lives in ``st.session_state`` and, so that a reload does not lose it, in
the browser's local storage (a small constant component, ``draft_store``); it is shared as a link
with the tour inside (anyone) or saved as a file (editors). Showing a tour is ``explorer.ui.present``'s.
"""

from __future__ import annotations

import streamlit as st

from explorer.services import text
from explorer.services.tour_steps import SECTION, SECTIONS, describe
from explorer.state import tours
from explorer.state.access import ReadOnlyError
from explorer.state.data import Corpus
from explorer.state.tours import Step, Tour, TourError
from explorer.ui import caches, url_state
from explorer.ui.shell import Context
from pipeline.core.artifacts import ArtifactError

DRAFT = "tour_draft"
DRAFT_NAME = "tour_draft_name"


def draft() -> list[Step]:
    return st.session_state.setdefault(DRAFT, [])


#: Browser side of ``draft_store``. It writes the session's draft to local storage once the session
#: has one (``write``), and removes it when the session empties it. Before that it only reads, and
#: reports a stored draft (from a reload or another tab) for the app to restore. It reports
#: nothing else: a report reruns the whole page. When it also reported an empty store, every fresh
#: tab ran its page twice (on a large corpus, sending the map's points again), and a report made
#: when the first step was added could land after the reader had moved to another page. A
#: constant: the draft travels as data (compressed JSON, ``tours.encode``) and is never put into the
#: page.
STORE_JS = """
export default function (component) {
  const { data, setStateValue } = component;
  const key = "abstract-atlas:tour-draft";
  try {
    if (data && data.write) {
      if (data.draft) window.localStorage.setItem(key, data.draft);
      else window.localStorage.removeItem(key);
    } else {
      const stored = window.localStorage.getItem(key);
      if (stored) setStateValue("stored", stored);
    }
  } catch (error) {
    // local storage refused (a private window, a policy): the draft lives in the session only
  }
}
"""


@st.cache_resource(show_spinner=False)
def _store_component():
    return st.components.v2.component("atlas_tour_draft_store", js=STORE_JS)


def draft_store() -> None:
    """Keep the tour being assembled in the browser's local storage, so that a reload (or a new
    tab) finds it again; restore it from there when this session has none."""
    steps = draft()
    if steps:  # this session's draft is the one kept from now on (also when the reader empties it)
        st.session_state["_tour_draft_restored"] = True
    restored = st.session_state.get("_tour_draft_restored", False)
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
    params = {k: v for k, v in url_state.current_params().items() if k != SECTION}
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
        return caches.get_corpus(ctx.root, name)
    except ArtifactError:
        return None


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
