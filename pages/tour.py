"""Tours: views (a topic, a paper, a trend chart) with notes, presented full-screen step by step."""

import streamlit as st

from explorer.services import text
from explorer.state import tours
from explorer.ui import present, shell, tour_draft

ctx = shell.context()
corpus = ctx.corpus
st.title("Tours", anchor=False)
st.subheader("The tour you are assembling", anchor=False)
tour = tour_draft.draft_tour(ctx)
if tour is None:
    st.info(
        "Open a view (a topic, a paper, a trend chart, a search) and use **Add this view to the tour** in the sidebar, "
        "with a note. Then present the tour full-screen from here (← → or a presentation clicker move between "
        "steps), share it as a link, or save it.",
        icon=":material/slideshow:",
    )
else:
    tour_draft.editor(ctx)
    st.text_input(
        "Tour name", key=tour_draft.DRAFT_NAME, placeholder="tour (or a name: reading-group, week-3)", max_chars=48
    )
    tour = tour_draft.draft_tour(ctx)
    inside = {"tourdata": tours.encode(tour)}
    first = tour.steps[0]
    st.page_link(
        shell.PAGE_PATH[first.page], label=f"Present “{text.plain(tour.name)}” ({len(tour.steps)} step{'s' if len(tour.steps) != 1 else ''})",
        icon=":material/play_arrow:", query_params=present.step_params(inside, first, 1),
    )  # fmt: skip
    st.caption("A link with the whole tour inside: anyone can open it, nothing is saved on the server.")
    st.code(shell.absolute_url(first.page, present.step_params(inside, first, 1)), language=None, wrap_lines=True)
    left, right = st.columns(2)
    if ctx.access.can_write:
        if left.button(f"Save as “{tour.name}”", icon=":material/save:", key="tour_save"):
            tour_draft.save_tour(ctx, tour)
    else:
        left.caption("Saving tours is switched off on this read-only server: share the link instead.")
    right.button("Start a new tour", icon=":material/restart_alt:", key="tour_new", on_click=tour_draft.clear_draft)

st.subheader("Saved tours", anchor=False)
names = tours.saved(ctx.root, corpus.name)
if not names:
    st.caption(f"No saved tour for {text.plain(corpus.name)} yet.")
for name in names:
    try:
        saved = tours.load(ctx.root, corpus.name, name)
    except tours.TourError as exc:
        st.warning(text.plain(str(exc)))
        continue
    ref = {"tour": name}
    play, edit, drop = st.columns([6, 1, 1], vertical_alignment="center")
    step = saved.steps[0]
    play.page_link(
        shell.PAGE_PATH[step.page], label=f"{text.plain(name)} ({len(saved.steps)} step{'s' if len(saved.steps) != 1 else ''})",
        icon=":material/play_arrow:", query_params=present.step_params(ref, step, 1),
    )  # fmt: skip
    edit.button("Edit", key=f"tour_edit_{name}", on_click=tour_draft.load_into_draft, args=(saved,))
    if ctx.access.can_write:
        drop.button("Delete", key=f"tour_delete_{name}", on_click=tour_draft.delete_tour, args=(ctx, name))
