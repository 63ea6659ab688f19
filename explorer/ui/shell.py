"""Glue shared by the router and the pages: the page list, the page ``Context``, links and friendly states.

The router (``app.py``) calls ``pages`` and ``follow_page_param`` here and ``explorer.ui.router.sidebar``,
which resolves the corpus, the filters and the reading list once per rerun and stores a ``Context``
that every page reads with ``context()``. This is the bottom of the UI modules: ``share``,
``present``, ``panels`` and ``compare_panels`` import it, it imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import numpy as np
import streamlit as st

from explorer.services import figures, text
from explorer.state import state
from explorer.state.access import Access
from explorer.state.data import Corpus
from explorer.state.state import View
from explorer.ui import url_state

APP_TITLE = "Abstract Atlas"


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


#: Tighter page top and headings, so that the map fits a 1280x800 screen or a projector; links in
#: the page (a topic's name, its nearest topics with their cosine) wrap in a narrow column instead of
#: being cut where the column ends (Streamlit keeps a link on one line, its end hidden); the topic
#: map grows with a tall window (580 pixels in a window up to 840 tall, then the window's height less
#: 260 for the page's top and the map's caption), as a slide fills it in present mode
#: (``present.SLIDE_JS``, whose inline sizes win).
CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; padding-bottom: 3rem; }
[data-testid="stSidebarHeader"] { height: 1.5rem; min-height: 1.5rem; }
h1 { font-size: 2.1rem !important; padding-top: 0.2rem !important; }
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] span:has(> [data-testid="stMarkdownContainer"]),
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] [data-testid="stMarkdownContainer"],
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] [data-testid="stMarkdownContainer"] p { white-space: normal; }
[data-testid="stMain"] .st-key-map, [data-testid="stMain"] .st-key-map .stBidiComponent,
[data-testid="stMain"] .st-key-map [data-testid="stBidiComponentIsolated"] {
  height: max(580px, calc(100vh - 260px)) !important; flex-basis: max(580px, calc(100vh - 260px)) !important; }
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
    params = {k: v for k, v in url_state.current_params().items() if k != "page"}
    if name in PAGE:
        st.switch_page(PAGE[name].path, query_params=params)
    st.query_params.from_dict(params)  # unknown page name: drop it and stay


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
