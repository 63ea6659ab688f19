"""Glue shared by the router and the pages: the page list, the sidebar, links and friendly states.

The router (``app.py``) calls ``pages``, ``follow_page_param`` and ``sidebar``; ``sidebar``
resolves the corpus, the filters and the reading list once per rerun and stores a ``Context``
that every page reads with ``context()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import numpy as np
import streamlit as st

from explorer import data, figures, filters, present, readinglist, search, share, state, text
from explorer.access import Access
from explorer.data import Corpus
from explorer.state import View
from pipeline.artifacts import ArtifactError
from pipeline.cli import DEFAULT_INPUTS

APP_TITLE = "Abstract Atlas"
DEFAULT_CORPUS = "neurips2026"


@dataclass(frozen=True)
class PageInfo:
    name: str  # URL path
    path: str  # script, relative to app.py
    title: str
    icon: str


PAGES = (
    PageInfo("map", "pages/map.py", "Topic map", ":material/scatter_plot:"),
    PageInfo("topics", "pages/topics.py", "Topics", ":material/category:"),
    PageInfo("trends", "pages/trends.py", "Keyword trends", ":material/trending_up:"),
    PageInfo("compare", "pages/compare.py", "What changed", ":material/compare_arrows:"),
    PageInfo("lineage", "pages/lineage.py", "Topic lineage", ":material/account_tree:"),
    PageInfo("paper", "pages/paper.py", "Paper", ":material/article:"),
    PageInfo("search", "pages/search.py", "Search", ":material/search:"),
    PageInfo("list", "pages/list.py", "Reading list", ":material/bookmarks:"),
    PageInfo("tour", "pages/tour.py", "Tours", ":material/slideshow:"),
    PageInfo("curate", "pages/curate.py", "Curate topics", ":material/edit_note:"),
    PageInfo("add", "pages/add.py", "Add a corpus", ":material/upload_file:"),
)
PAGE = {p.name: p for p in PAGES}
PAGE_PATH = {p.name: p.path for p in PAGES}
EDITOR_PAGES = ("curate", "add")  # not linked for viewers of a read-only server
FOLDER_PAGES = ("add",)  # about the artifacts folder, not one corpus: no picker, no filters (``workspace()``)


@dataclass(frozen=True)
class Context:
    """What every page needs: the corpus, the view from the URL and the papers the filters keep.

    Attributes:
        mask: bool ``(papers,)`` papers the filters keep.
        base: bool ``(papers,)`` the same without the topic filter: the denominator of topic
            shares (a topic is never 100% of its own filter).
        access: what this session may write.
        page: the page shown (``PAGES`` name).
        reading: int ``(m,)`` rows of the reading list's papers, in list order.
        reading_unknown: short ids in the URL's list that this corpus does not know.
        presenting: the page is shown as a step of a tour (no editing affordances).
    """

    root: Path
    corpus: Corpus
    view: View
    mask: np.ndarray
    base: np.ndarray
    access: Access = Access()
    page: str = "map"
    reading: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    reading_unknown: tuple[str, ...] = ()
    presenting: bool = False

    @property
    def n_shown(self) -> int:
        return int(self.mask.sum())

    @property
    def can_edit(self) -> bool:
        """Offer curation here: the session may write and no tour is being presented."""
        return self.access.can_write and not self.presenting


# ------------------------------------------------------------------------------------------
# Router helpers
# ------------------------------------------------------------------------------------------


#: Tighter page top and headings, so that the map fits a 1280x800 screen or a projector.
CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; padding-bottom: 3rem; }
[data-testid="stSidebarHeader"] { height: 1.5rem; min-height: 1.5rem; }
h1 { font-size: 2.1rem !important; padding-top: 0.2rem !important; }
</style>"""


def style() -> None:
    """Apply ``CSS`` (our own constant, no user text)."""
    st.html(CSS)


def pages() -> list:
    return [st.Page(p.path, title=p.title, icon=p.icon, url_path=p.name, default=p.name == "map") for p in PAGES]


def follow_page_param() -> None:
    """``?page=topics&...`` opens that page (links written by hand or by older versions)."""
    name = st.query_params.get("page")
    if name is None:
        return
    params = {k: v for k, v in state.current_params().items() if k != "page"}
    if name in PAGE:
        st.switch_page(PAGE[name].path, query_params=params)
    st.query_params.from_dict(params)  # unknown page name: drop it and stay


def _default_corpus(entries) -> str | None:
    ok = [e.name for e in entries if e.ok]
    if DEFAULT_CORPUS in ok:
        return DEFAULT_CORPUS
    return ok[0] if ok else None


def sidebar(root: Path, access: Access, page: str = "map", *, build_config: Path | None = None) -> Context | None:
    """Corpus picker, page links, filters and the Share section; stops the run with a friendly
    message when needed. A page of ``FOLDER_PAGES`` gets the page links only, and None."""
    view = state.read()
    st.session_state["_ws"] = Workspace(Path(root), access, build_config)
    if page in FOLDER_PAGES:
        with st.sidebar:
            st.markdown(f"### {APP_TITLE}")
        _page_links(view, access)
        return None
    entries = data.list_corpora(root)
    names = [e.name for e in entries]
    by_name = {e.name: e for e in entries}
    if not entries:
        _no_corpora(root, access)
    with st.sidebar:
        st.markdown(f"### {APP_TITLE}")
        default = _default_corpus(entries) or names[0]
        url_corpus = view.corpus if view.corpus in by_name else None
        clear = dict.fromkeys(
            (
                "topic",
                "paper",
                "q",
                "mode",
                "years",
                "venue",
                "topics",
                "text",
                "kw",
                "lam",
                "before",
                "after",
                "support",
                "list",
                "notes",
                "tour",
                "tourdata",
                "step",
            )
        )
        st.selectbox(
            "Corpus",
            names,
            key="corpus_pick",
            format_func=lambda n: _corpus_caption(by_name[n]),
            **state.bind("corpus_pick", url_corpus, default=default, to_url=lambda v: {**clear, "corpus": v}),
        )
        picked = st.session_state["corpus_pick"]
    if view.corpus is not None and view.corpus not in by_name:
        _bad_corpus(root, view.corpus, entries)
    if view.corpus is None:
        state.set_params(corpus=picked)  # so that a copied link names its corpus
    view = replace(view, corpus=picked)
    try:
        corpus = data.get_corpus(root, picked)
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
        active = filters.sidebar(corpus, cleaned)
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


def is_bundled_sample(corpus: Corpus) -> bool:
    """True when the corpus was built from the abstracts that ship with the app (and nothing else)."""
    inputs = (corpus.manifest or {}).get("inputs") or []
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
    search.warm(ctx.corpus, writable=not ctx.access.read_only)


def _share_section(ctx: Context) -> None:
    st.markdown("#### Share and present")
    share.downloads_block(ctx)
    present.add_view(ctx)
    if ctx.access.read_only:
        st.caption(
            "Editing on (editor token)." if ctx.access.editor else "Read-only: curation and saving tours are off."
        )
    if ctx.corpus.skipped_edits and ctx.access.can_write:
        st.caption(f"{len(ctx.corpus.skipped_edits)} topic edit(s) no longer match this build: see Curate topics.")


def _corpus_caption(entry) -> str:
    if not entry.ok:
        return f"{entry.name} (cannot be read)"
    counts = (entry.manifest or {}).get("counts") or {}
    return f"{entry.name} · {counts.get('papers', 0):,} papers"


def _clear_filters() -> None:
    for key in list(st.session_state.keys()):
        if str(key).startswith("f_"):
            del st.session_state[key]
    state.set_params(years=None, venue=None, topics=None, text=None)
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
    counts = m.get("counts") or {}
    span = corpus.year_span
    years = "no years" if span is None else (str(span[0]) if span[0] == span[1] else f"{span[0]}–{span[1]}")
    st.caption(
        f"{corpus.n_papers:,} papers · {len(corpus.topics)} topics · {years}  \n"
        f"built {text.plain(str(m.get('created_at', '?'))[:16])} · {text.plain(str(counts.get('reassigned', 0)))} outliers reassigned"
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
        data.get_corpus(root, name)
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


# ------------------------------------------------------------------------------------------
# For pages
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workspace:
    """What a page about the artifacts folder needs (``FOLDER_PAGES``): the folder and the session's access."""

    root: Path
    access: Access
    build_config: Path | None = None  # settings for builds started from the browser


def workspace() -> Workspace:
    """The artifacts folder and access the router resolved for this rerun (server-side state)."""
    return _prepared("_ws")


def context() -> Context:
    """The context the router prepared for this rerun."""
    return _prepared("_ctx")


def _prepared(key: str):
    value = st.session_state.get(key)
    if value is None:
        leave_old_pages_mode()
        st.error("Open the app through app.py (streamlit run app.py).")
        st.stop()
    return value


def leave_old_pages_mode() -> None:
    """Rerun through app.py alone when Streamlit started in its old ``pages/`` mode.

    Until ``st.navigation`` has run once in the process, Streamlit treats a ``pages/`` folder
    beside the entrypoint as an old-style multipage app: the first deep link after a server start
    (``/topics?...``) runs that page file without the router, and the first visit to ``/`` runs
    app.py inside a navigation of its own. Turning that mode off and rerunning makes Streamlit run
    app.py directly, whose ``st.navigation`` opens the page the URL names. Called first thing by
    app.py and by :func:`context` (for a page file run on its own).
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def page_url(ctx: Context, page: str, **extra) -> str:
    """A relative URL to ``page`` with the corpus, filters and ``extra`` (for tables of links)."""
    return f"{page}?{urlencode(state.shared(ctx.view, **extra), doseq=True)}"


def absolute_url(page: str, params: dict) -> str:
    """The full address of ``page`` with ``params``, for links to copy (relative when the app's
    own address is unknown). Built from our parameters only: whatever else the browser's address
    held (an editor token) is not carried over."""
    query = urlencode(params, doseq=True)
    path = "" if page == "map" else page
    url = st.context.url or ""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return f"{path or '.'}?{query}"
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    prefix = f"/{base}" if base else ""
    return f"{parts.scheme}://{parts.netloc}{prefix}/{path}?{query}"


def paper_urls(ctx: Context, rows: np.ndarray) -> np.ndarray:
    """Relative URLs of papers' pages (vectorised), for link columns in tables."""
    base = page_url(ctx, "paper")
    sep = "&" if not base.endswith("?") else ""
    return (base + sep + "paper=") + ctx.corpus.quoted_ids[rows]


def paper_link(ctx: Context, row: int, *, prefix: str = "", suffix: str = "") -> None:
    """A link to a paper's page, labelled with its (escaped) title."""
    papers = ctx.corpus.papers
    title = text.plain(papers["title"].iat[row], "(untitled)")
    label = f"{prefix}{title}{suffix}"
    st.page_link(PAGE["paper"].path, label=label, query_params=state.shared(ctx.view, paper=papers["doc_id"].iat[row]))


def paper_item(
    ctx: Context, row: int, note: str = "", *, prefix: str = "", snippet: bool = False, where: str = "item"
) -> None:
    """A paper as a link (its title) over a caption: topic, year, ``note`` and, optionally, the
    start of its abstract, with a button that adds it to the reading list (or removes it). All
    corpus text is escaped. ``where`` tells lists on one page apart (widget keys)."""
    body, button = st.columns([24, 1], gap="small")
    with button:
        share.list_toggle(ctx, row, key=where)
    with body:
        _paper_text(ctx, row, note, prefix=prefix, snippet=snippet)


def _paper_text(ctx: Context, row: int, note: str, *, prefix: str, snippet: bool) -> None:
    papers = ctx.corpus.papers
    paper_link(ctx, row, prefix=prefix)
    year = papers["year"].iat[row]
    bits = [
        text.plain(ctx.corpus.topic_label(int(papers["topic"].iat[row]))),
        str(year) if text.present(year) else "",
        note,
    ]
    line = " · ".join(b for b in bits if b)
    if snippet:
        abstract = str(papers["abstract"].iat[row]) if text.present(papers["abstract"].iat[row]) else ""
        cut = abstract[:220].rsplit(" ", 1)[0] + " …" if len(abstract) > 220 else abstract
        line += "  \n" + text.plain(cut)
    st.caption(line)


def topic_link(ctx: Context, topic: int, *, label: str | None = None, page: str = "topics") -> None:
    name = label or f"Topic {topic} · {text.plain(ctx.corpus.topic_label(topic))}"
    st.page_link(
        PAGE[page].path, label=name, icon=":material/category:", query_params=state.shared(ctx.view, topic=topic)
    )


def open_paper(ctx: Context, row: int) -> None:
    """Switch to a paper's page (after a click on the map or in a table)."""
    st.switch_page(PAGE["paper"].path, query_params=state.shared(ctx.view, paper=ctx.corpus.papers["doc_id"].iat[row]))


def image_name(ctx: Context, *parts: object) -> str:
    """The PNG name of a chart of this view: corpus, the parts, ``filtered`` when filters apply."""
    return figures.image_name(ctx.corpus.name, *parts, "filtered" if ctx.view.filters.active else None)


def url_topic(ctx: Context, instead: str) -> int | None:
    """The topic named in the URL, or None with a friendly note (``instead``: what the page shows)
    when this corpus has no such topic."""
    topic = ctx.view.topic
    if topic is not None and ctx.corpus.topic_pos(topic) is None:
        st.warning(
            f"Topic {topic} does not exist in **{text.plain(ctx.corpus.name)}**; {instead}.", icon=":material/help:"
        )
        return None
    return topic


def nothing_left(ctx: Context) -> bool:
    """Say so when the filters keep no paper; True if the page should stop."""
    if ctx.n_shown:
        return False
    st.info(
        "No paper matches the filters. Widen the year range, remove a venue or topic, or clear the text filter.",
        icon=":material/filter_alt_off:",
    )
    return True
