"""What the router (``app.py``) runs on every rerun: the sidebar, the first screen, the warm-up.

``sidebar`` resolves the corpus, the filters and the reading list once per rerun, draws the corpus
picker, the page links, the filters and the Share section, and stores the ``shell.Context`` that
every page reads with ``shell.context()``. It sits above every other UI module (it draws the
Share section of ``share`` and ``present``), and only ``app.py`` imports it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import streamlit as st

from explorer.services import text
from explorer.state import filters, readinglist, state
from explorer.state.access import Access
from explorer.state.data import Corpus
from explorer.state.state import View
from explorer.ui import caches, filter_widgets, present, share, tour_draft, url_state
from explorer.ui.shell import (
    APP_TITLE,
    EDITOR_PAGES,
    FOLDER_PAGES,
    PAGE,
    PAGE_PATH,
    PAGES,
    Context,
    Workspace,
)
from pipeline.core.artifacts import ArtifactError
from pipeline.core.inputs import DEFAULT_CORPUS, DEFAULT_INPUTS
from pipeline.core.manifest import Counts


def _default_corpus(entries) -> str | None:
    ok = [e.name for e in entries if e.ok]
    if DEFAULT_CORPUS in ok:
        return DEFAULT_CORPUS
    return ok[0] if ok else None


def sidebar(root: Path, access: Access, page: str = "map", *, build_config: Path | None = None) -> Context | None:
    """Corpus picker, page links, filters and the Share section; stops the run with a friendly
    message when needed. A page of ``FOLDER_PAGES`` gets the page links only, and None."""
    view = url_state.read()
    st.session_state["_ws"] = Workspace(Path(root), access, build_config)
    if page in FOLDER_PAGES:
        with st.sidebar:
            st.markdown(f"### {APP_TITLE}")
        _page_links(view, access)
        return None
    entries = caches.list_corpora(root)
    by_name = {e.name: e for e in entries}
    if not entries:
        _no_corpora(root, access)
    picked = _corpus_picker(view, entries)
    if view.corpus is not None and view.corpus not in by_name:
        _bad_corpus(root, view.corpus, entries)
    if view.corpus is None:
        url_state.set_params(corpus=picked)  # so that a copied link names its corpus
    view = replace(view, corpus=picked)
    try:
        corpus = caches.get_corpus(root, picked)
    except ArtifactError as exc:
        _page_links(view, access)
        st.error(f"Corpus **{text.plain(picked)}** cannot be opened: {text.plain(str(exc))}", icon=":material/error:")
        st.stop()
    cleaned, problems = filters.clean(view.filters, corpus)
    view = replace(view, filters=cleaned)
    rows, unknown = readinglist.resolve(corpus, view.reading)
    with st.sidebar:
        _page_links(view, access, n_list=len(rows))
        st.markdown("#### Filters")
        active = filter_widgets.sidebar(corpus, cleaned)
    view = replace(view, filters=active)
    mask = filters.apply(corpus, active)
    base = filters.apply(corpus, replace(active, topics=())) if active.topics else mask
    with st.sidebar:
        st.caption(text.plain(filters.describe(corpus, active, mask)))  # holds the URL's text filter
        if active.active and st.button("Clear filters", icon=":material/filter_alt_off:", width="stretch"):
            _clear_filters()
        _build_caption(corpus)
    ctx = Context(
        root=Path(root), corpus=corpus, view=view, mask=mask, base=base, access=access, page=page,
        reading=rows, reading_unknown=unknown, presenting=any(st.query_params.get(k) for k in present.TOUR_PARAMS[:2]),
    )  # fmt: skip
    with st.sidebar:
        _share_section(ctx)
    for problem in [*view.problems, *problems]:
        st.warning(f"Ignored part of the link: {text.plain(problem)}", icon=":material/link_off:")
    if len(entries) == 1 and not ctx.presenting and is_bundled_sample(corpus):
        first_screen(ctx)
    st.session_state["_ctx"] = ctx
    return ctx


#: The view's parameters that picking another corpus clears (they name its topics, papers, years).
_CLEARED_BY_PICK = (
    "topic", "paper", "q", "mode", "years", "venue", "topics", "text", "kw", "lam", "before", "after", "support",
    "list", "notes", "tour", "tourdata", "step",
)  # fmt: skip


def _corpus_picker(view: View, entries) -> str:
    """The app's title and the corpus picker (bound to the URL's corpus); returns the picked name."""
    names = [e.name for e in entries]
    by_name = {e.name: e for e in entries}
    with st.sidebar:
        st.markdown(f"### {APP_TITLE}")
        default = _default_corpus(entries) or names[0]
        url_corpus = view.corpus if view.corpus in by_name else None
        clear = dict.fromkeys(_CLEARED_BY_PICK)
        st.selectbox(
            "Corpus",
            names,
            key="corpus_pick",
            format_func=lambda n: _corpus_caption(by_name[n]),
            **url_state.bind("corpus_pick", url_corpus, default=default, to_url=lambda v: {**clear, "corpus": v}),
        )
        return st.session_state["corpus_pick"]


def is_bundled_sample(corpus: Corpus) -> bool:
    """True when the corpus was built from the abstracts that ship with the app (and nothing else)."""
    inputs = corpus.manifest.inputs if corpus.manifest else []
    bundled = DEFAULT_INPUTS.resolve()
    try:
        return bool(inputs) and all(Path(str(i.get("path", ""))).resolve().parent == bundled for i in inputs)
    except (OSError, AttributeError):
        return False


def first_screen(ctx: Context) -> None:
    """A newcomer's first view is the bundled sample: one line saying so, and the way to their own
    conference (shown until a second corpus exists)."""
    n, command = ctx.corpus.n_papers, "python -m pipeline build papers.csv --name myconf"
    sample = f":material/info: **A {n}-abstract sample** bundled with the app: too few papers for strong topics (labels marked (?) are weak)."
    with st.container(key="first_screen", horizontal=True, vertical_alignment="center", wrap=False):
        if ctx.access.can_write:
            st.markdown(sample, width="stretch")
            st.page_link(
                PAGE_PATH["add"], label="Add your own conference", icon=PAGE["add"].icon, width="content",
                help=f"Upload its abstracts (CSV, JSON, Parquet, text) and build, or run `{command}`.",
            )  # fmt: skip
        else:
            st.markdown(f"{sample} Your own conference: `{command}` on your machine.", width="stretch")


def warm(ctx: Context) -> None:
    """Prepare the search index and query encoder in the background. Called by the router after
    the page has drawn, so that the first page after a server start does not wait for them."""
    caches.warm_search(ctx.corpus, writable=not ctx.access.read_only)


def _share_section(ctx: Context) -> None:
    st.markdown("#### Share and present")
    share.downloads_block(ctx)
    tour_draft.add_view(ctx)
    if ctx.access.read_only:
        st.caption(
            "Editing on (editor token)." if ctx.access.editor else "Read-only: curation and saving tours are off."
        )
    if ctx.corpus.skipped_edits and ctx.access.can_write:
        st.caption(f"{len(ctx.corpus.skipped_edits)} topic edit(s) no longer match this build: see Curate topics.")


def _corpus_caption(entry) -> str:
    if not entry.ok:
        return f"{entry.name} (cannot be read)"
    counts = entry.manifest.counts if entry.manifest else Counts()
    return f"{entry.name} · {counts.papers:,} papers"


def _clear_filters() -> None:
    for key in list(st.session_state.keys()):
        if str(key).startswith("f_"):
            del st.session_state[key]
    url_state.set_params(years=None, venue=None, topics=None, text=None)
    st.rerun()


def _page_links(view: View, access: Access, n_list: int = 0) -> None:
    with st.sidebar:
        for page in PAGES:
            if page.name in EDITOR_PAGES and not access.can_write:
                continue
            if page.name == "list":
                st.divider()
            label = f"{page.title} ({n_list})" if page.name == "list" and n_list else page.title
            extra = {}
            if page.name in ("topics", "map", "curate"):
                extra["topic"] = view.topic
            if page.name == "paper":
                extra["paper"] = view.paper
            if page.name == "search":
                extra.update(q=view.q or None, mode=None if view.mode == "keyword" else view.mode)
            st.page_link(page.path, label=label, icon=page.icon, query_params=state.shared(view, **extra))


def _build_caption(corpus: Corpus) -> None:
    m = corpus.manifest
    counts = m.counts
    span = corpus.year_span
    years = "no years" if span is None else (str(span[0]) if span[0] == span[1] else f"{span[0]}–{span[1]}")
    st.caption(
        f"{corpus.n_papers:,} papers · {len(corpus.tables.topics)} topics · {years}  \n"
        f"built {text.plain(str('?' if m.created_at is None else m.created_at)[:16])} · {text.plain(str(counts.reassigned))} outliers reassigned"
    )


def _no_corpora(root: Path, access: Access) -> None:
    st.title(APP_TITLE)
    st.info(
        f"There is no corpus in **{text.plain(str(root))}** yet.\n\n"
        "Build the bundled NeurIPS 2026 abstracts with `make run` (it builds, then starts this app), or build "
        "your own from CSV, JSON(L), Parquet or text files:\n\n"
        "```\npython -m pipeline build papers.csv --name mine\n```\n\n"
        "then reload this page. To use another artifacts folder: `streamlit run app.py -- --artifacts DIR`.",
        icon=":material/info:",
    )
    if access.can_write:
        st.page_link(PAGE["add"].path, label="Or add a corpus from your browser", icon=PAGE["add"].icon)
    st.stop()


def _bad_corpus(root: Path, name: str, entries) -> None:
    try:
        caches.get_corpus(root, name)
        message = f"no corpus named {name!r}"
    except ArtifactError as exc:
        message = str(exc)
    st.error(f"This link names a corpus that cannot be opened: {text.plain(message)}", icon=":material/error:")
    ok = [e.name for e in entries if e.ok]
    if ok:
        st.markdown("Open one of these instead:")
        for other in ok:
            st.page_link(
                PAGE["map"].path, label=text.plain(other), icon=":material/folder_open:", query_params={"corpus": other}
            )
    st.stop()
