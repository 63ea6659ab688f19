"""Streamlit blocks for sharing: reading-list buttons, downloads, curation status and actions.

The reading list lives in the URL (``list=``, see ``explorer.state.readinglist``): the buttons here
rewrite that parameter in their callbacks, so the change shows in the address bar and travels
with every link. Nothing here writes a file except through ``explorer.state.curate`` (editors only).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from explorer.services import downloads, text
from explorer.state import curate, readinglist
from explorer.state.access import ReadOnlyError
from explorer.ui import caches, shell, url_state
from explorer.ui.shell import Context
from pipeline.analysis.comparison import CompareError
from pipeline.core.artifacts import ArtifactError

ADD_ICON, REMOVE_ICON = ":material/bookmark_add:", ":material/bookmark_remove:"


# ------------------------------------------------------------------------------------------
# Reading list
# ------------------------------------------------------------------------------------------


def _current_list() -> tuple[str, ...]:
    return readinglist.parse(st.query_params.get(readinglist.PARAM))[0]


def _current_notes(ids: tuple[str, ...]) -> dict[str, str]:
    return readinglist.parse_notes(st.query_params.get(readinglist.NOTES), ids)[0]


def _set_list(ids: tuple[str, ...], notes: dict[str, str]) -> None:
    """The list and its notes in the URL (a removed paper's note goes with it)."""
    url_state.set_params(
        **{readinglist.PARAM: readinglist.encode(ids), readinglist.NOTES: readinglist.encode_notes(notes, ids)}
    )


def _toggle(sid: str) -> None:
    ids = _current_list()
    _set_list(readinglist.toggle(ids, sid), _current_notes(ids))


def _add(sids: list[str]) -> None:
    ids = _current_list()
    _set_list(readinglist.add(ids, sids), _current_notes(ids))


def _clear() -> None:
    url_state.set_params(**{readinglist.PARAM: None, readinglist.NOTES: None})


def _renote(sid: str, key: str) -> None:
    ids = _current_list()
    note, problem = readinglist.clean_note(st.session_state.get(key, ""))
    _set_list(ids, {**_current_notes(ids), sid: note})
    if problem:
        st.session_state["rl_note_problem"] = problem


def note_editor(ctx: Context, row: int) -> None:
    """A text box for the note of paper ``row`` of the reading list (kept in the URL, ``notes=``)."""
    sid = str(ctx.corpus.short_ids[row])
    key = f"note_{sid}"
    if key not in st.session_state:
        st.session_state[key] = ctx.view.note_of.get(sid, "")
    st.text_input(
        "Note (who presents, a question to discuss)",
        key=key,
        max_chars=readinglist.MAX_NOTE,
        placeholder="e.g. Ana presents · Does it hold beyond ImageNet?",
        help=f"Plain text, at most {readinglist.MAX_NOTE} characters. It travels in the link and the exports.",
        on_change=_renote,
        args=(sid, key),
    )


def list_toggle(ctx: Context, row: int, *, key: str, labelled: bool = False) -> None:
    """A button adding paper ``row`` to the reading list, or removing it when it is there."""
    sid = str(ctx.corpus.short_ids[row])
    inside = sid in ctx.view.reading
    label = ("Remove from reading list" if inside else "Add to reading list") if labelled else ""
    st.button(
        label,
        key=f"rl_{key}_{sid}",
        icon=REMOVE_ICON if inside else ADD_ICON,
        help=None if labelled else ("Remove from the reading list" if inside else "Add to the reading list"),
        type="secondary" if labelled else "tertiary",
        on_click=_toggle,
        args=(sid,),
    )


def add_rows(ctx: Context, rows: np.ndarray, *, key: str, what: str = "selected") -> None:
    """A button adding the papers at ``rows`` to the reading list (says how many are new)."""
    sids = [str(s) for s in ctx.corpus.short_ids[np.asarray(rows, dtype=np.int64)]]
    new = [s for s in sids if s not in ctx.view.reading]
    label = f"Add {len(new):,} {what} paper{'s' if len(new) != 1 else ''} to the reading list"
    st.button(
        label if new else f"All {len(sids):,} {what} papers are in the reading list",
        key=key,
        icon=ADD_ICON,
        disabled=not new,
        on_click=_add,
        args=(new,),
    )


def clear_button() -> None:
    st.button("Clear the list", icon=":material/delete_sweep:", key="rl_clear", on_click=_clear)


def list_exports(ctx: Context, rows: np.ndarray, link: str | None) -> None:
    """Markdown, CSV and BibTeX downloads of the reading list (built now: a list is small)."""
    table = readinglist.papers_table(ctx.corpus, rows, ctx.view.note_of)
    name = ctx.corpus.name
    md, csv, bib = st.columns(3)
    md.download_button(
        "Markdown", readinglist.to_markdown(table, corpus_name=name, link=link), file_name=f"{name}-reading-list.md",
        mime="text/markdown", icon=":material/download:", on_click="ignore", key="rl_md", width="stretch",
    )  # fmt: skip
    csv.download_button(
        "CSV", readinglist.to_csv(table), file_name=f"{name}-reading-list.csv", mime="text/csv",
        icon=":material/download:", on_click="ignore", key="rl_csv", width="stretch",
    )  # fmt: skip
    bib.download_button(
        "BibTeX", readinglist.to_bibtex(table), file_name=f"{name}-reading-list.bib", mime="application/x-bibtex",
        icon=":material/download:", on_click="ignore", key="rl_bib", width="stretch",
    )  # fmt: skip


def map_selection(ctx: Context, rows: np.ndarray, kind: str | None) -> None:
    """The papers a box or lasso selected on the map: their list, and buttons to open one or add
    them to the reading list."""
    if not len(rows):
        return
    papers = ctx.corpus.papers
    st.markdown(
        f"**{len(rows):,} paper{'s' if len(rows) != 1 else ''} selected on the map** ({kind or 'box'}; Esc clears)"
    )
    table = papers.iloc[rows][["title", "year", "venue", "topic"]].assign(link=shell.paper_urls(ctx, rows))
    table["topic"] = [ctx.corpus.topic_label(int(t)) for t in table["topic"]]
    picked = st.dataframe(
        table,
        hide_index=True,
        on_select="rerun",
        selection_mode="multi-row",
        key="map_selected",
        height=min(36 * len(rows) + 40, 320),
        column_config={
            "title": st.column_config.TextColumn("Title", width="large"),
            "year": st.column_config.NumberColumn("Year", format="%d"),
            "venue": "Venue",
            "topic": "Topic",
            "link": st.column_config.LinkColumn("Link", display_text="open"),
        },
    )
    chosen = rows[picked.selection.rows] if picked and picked.selection.rows else rows
    what = "chosen" if picked and picked.selection.rows else "selected"
    sids = [str(s) for s in ctx.corpus.short_ids[chosen]]
    new = [s for s in sids if s not in ctx.view.reading]
    left, right = st.columns([1, 3], vertical_alignment="center")
    if len(chosen) == 1 and left.button("Open the paper", key="rl_map_sel_open", icon=":material/article:"):
        shell.open_paper(ctx, int(chosen[0]))
    label = f"Add {len(new):,} {what} paper{'s' if len(new) != 1 else ''} to the reading list"
    if right.button(
        label if new else f"All {len(sids):,} {what} papers are in the reading list",
        key="rl_map_sel_add",
        icon=ADD_ICON,
        disabled=not new,
    ):
        _add(new)
        st.rerun()  # the whole page: the sidebar's count and the map's marks follow the list


def selection_actions(ctx: Context, rows: np.ndarray, *, key: str, open_paper: Callable[[int], None]) -> None:
    """What to do with papers selected in a table or on the map: open one, add them to the list."""
    if len(rows) == 0:
        return
    left, right = st.columns([1, 3], vertical_alignment="center")
    if len(rows) == 1 and left.button("Open the paper", key=f"{key}_open", icon=":material/article:"):
        open_paper(int(rows[0]))
    with right:
        add_rows(ctx, rows, key=f"{key}_add")


# ------------------------------------------------------------------------------------------
# Downloads
# ------------------------------------------------------------------------------------------


def downloads_block(ctx: Context) -> None:
    """The corpus as one offline HTML file (with what changed, when the URL names a reference:
    ``ref=``), and the filtered papers as CSV (built on click)."""
    corpus, mask = ctx.corpus, ctx.mask
    reference, comparison, why = _comparison(ctx)
    help_text = (
        "One self-contained file (map, topics, searchable paper table, abstracts) that works "
        "opened from disk, with no network and no Python. Topic edits included."
    )
    if comparison is not None:
        help_text += (
            f" With what changed against {reference.name}: the summary, topic shares with intervals, distinctive "
            f"terms, the most novel papers with their closest prior work and {reference.name}'s map with the papers on it."
        )
    elif why:
        help_text += f" Without the comparison with {st.query_params.get('ref')}: {why}"
    st.download_button(
        "Offline HTML: corpus and what changed" if comparison is not None else "Offline HTML of the corpus",
        data=lambda: downloads.offline_html(corpus, reference, comparison),
        file_name=f"{corpus.name}-vs-{reference.name}.html" if comparison is not None else f"{corpus.name}.html",
        mime="text/html",
        icon=":material/download:",
        on_click="ignore",
        key="dl_html",
        width="stretch",
        help=help_text,
    )
    st.download_button(
        f"CSV of the {ctx.n_shown:,} papers shown",
        data=lambda: downloads.selection_csv(corpus, mask),
        file_name=f"{corpus.name}-selection.csv",
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
        key="dl_csv",
        width="stretch",
        help="The papers the filters keep, with their topic, metadata and abstract.",
    )


def _comparison(ctx: Context):
    """(reference, comparison, why not) for the page's ``ref=``: the comparison the What changed
    page shows (cached: computed once for both), or Nones and why it cannot be had."""
    name = st.query_params.get("ref")
    if not name or name == ctx.corpus.name:
        return None, None, None
    try:
        reference = caches.get_corpus(ctx.root, name)
        return reference, caches.get_comparison(ctx.corpus, reference), None
    except (ArtifactError, CompareError) as exc:
        return None, None, str(exc)


# ------------------------------------------------------------------------------------------
# Curation
# ------------------------------------------------------------------------------------------


def run_edit(action: Callable[[], object], done: str) -> None:
    """Run a curation write; on success say ``done`` and rerun (the new file hash reloads the
    corpus), on refusal say why."""
    try:
        action()
    except (curate.CurationError, ReadOnlyError) as exc:
        st.error(text.plain(str(exc)), icon=":material/block:")
        return
    st.toast(done, icon=":material/check:")
    st.rerun()


def curation_status(ctx: Context) -> None:
    """The edits in force, and plainly, those that no longer match this build."""
    corpus = ctx.corpus
    if corpus.curation_error:
        st.error(f"The topic edits are not applied: {text.plain(corpus.curation_error)}", icon=":material/error:")
    skipped = {id(e) for e in corpus.skipped_edits}
    if corpus.skipped_edits:
        st.warning(
            f"**{len(corpus.skipped_edits)} edit{'s' if len(corpus.skipped_edits) > 1 else ''} no longer "
            "match this build** (the topic or paper they name is gone after a rebuild), so they are not applied:\n\n"
            + "\n".join(f"- {text.plain(curate.describe(e))}" for e in corpus.skipped_edits),
            icon=":material/link_off:",
        )
    applied = [e for e in corpus.edits if id(e) not in skipped]
    if applied:
        with st.expander(f"{len(applied)} edit{'s' if len(applied) > 1 else ''} in force, oldest first", expanded=True):
            for edit in applied:
                st.markdown(f"- {text.plain(curate.describe(edit))} · {text.plain(edit.get('at', ''))}")
    elif not corpus.skipped_edits:
        st.caption("No topic edits yet: the topics are as the pipeline built them.")
