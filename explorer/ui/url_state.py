"""The Streamlit side of the URL state: ``st.query_params`` read and written, widgets kept in step
with them, and the editor token taken out of the URL.

What the parameters mean, and how a view is parsed from them and encoded into them, is
``explorer.state.state`` (pure, tested without Streamlit); this module only moves them between that model
and the browser. ``st.session_state`` keeps what a rerun must remember: the widget values bound to
the URL and the URL values they were last set from (``_url_seen``), the last view shown
(``_last_view``), that this session presented the editor token, and that a typed query was cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer.state.access import TOKEN_PARAM, Access, Options, token_matches
from explorer.state.state import MAX_QUERY_CHARS, View, parse

_EDITOR_KEY = "_editor"  # session_state: this session presented the editor token
_CUT = "_search_query_cut"  # session_state: the length of a typed query that was cut

# ------------------------------------------------------------------------------------------
# Query parameters
# ------------------------------------------------------------------------------------------


def current_params() -> dict[str, list[str]]:
    """The URL's query parameters, each as its list of values."""
    return {key: st.query_params.get_all(key) for key in st.query_params}


def read() -> View:
    return parse(current_params())


def sync_url(page: str) -> None:
    """Echo the query parameters back to the browser after a link to the page already shown.

    Streamlit updates the address bar when a link leads to another page, not when it leads to
    the same page with other parameters (e.g. from one paper to a similar one): without this the
    address bar would keep the previous paper and a copied link would reopen the wrong view.
    Only that case is echoed: echoing during a page change would race Streamlit's own update.
    """
    params = current_params()
    last = st.session_state.get("_last_view")
    st.session_state["_last_view"] = (page, params)
    if last is not None and last[0] == page and last[1] != params:
        st.query_params.from_dict(params)


def set_params(**changes: Any) -> None:
    """Change some query parameters (None or empty removes one) in one URL update."""
    params = current_params()
    for key, value in changes.items():
        if value is None or value == "" or value == [] or value == ():
            params.pop(key, None)
        else:
            params[key] = [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]
    st.query_params.from_dict(params)


# ------------------------------------------------------------------------------------------
# Widgets bound to the URL
# ------------------------------------------------------------------------------------------


def _norm(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def bind(key: str, url_value: Any, *, default: Any, to_url: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
    """Keep a widget (``key``) and its URL parameters in step; the URL wins when it changed.

    Call just before creating the widget and pass it ``key=key, **bind(...)`` (no default value:
    the value lives in ``st.session_state[key]``). The widget's value is set from the URL
    whenever the URL's value differs from the one last seen (a pasted link, a page link, the back
    button), ``default`` when the URL has none; a change of the widget writes the URL through
    ``to_url`` (widget value -> query parameters, None removes one).

    The value is set on every run, not only when the URL changed: a widget sends the browser its
    value only in a run that set it, and the browser keeps the last widget it received. When the
    run that set it is cut short by a rerun (a busy server, a component reporting at mount), that
    widget never arrives and the next run's one carries no value, so the browser would show the
    default (a link's ``show=shares`` drawn as "At a glance") and send it back with the next click
    as if the user had picked it, dropping the link's parameter.

    Returns:
        ``on_change`` and ``kwargs`` for the widget.
    """
    url_value = _norm(url_value)
    seen = st.session_state.setdefault("_url_seen", {})
    if key not in st.session_state or seen.get(key, _MISSING) != url_value:
        st.session_state[key] = (
            default if url_value is None else (list(url_value) if isinstance(default, list) else url_value)
        )
        seen[key] = url_value
    else:  # set again, so that this run's widget carries its value to the browser (see the docstring)
        st.session_state[key] = st.session_state[key]
    return {"on_change": _commit, "kwargs": {"key": key, "default": default, "to_url": to_url}}


_MISSING = object()


def _commit(key: str, default: Any, to_url: Callable[[Any], dict[str, Any]]) -> None:
    value = st.session_state[key]
    set_params(**to_url(value))
    st.session_state.setdefault("_url_seen", {})[key] = None if _norm(value) == _norm(default) else _norm(value)


# ------------------------------------------------------------------------------------------
# The search query
# ------------------------------------------------------------------------------------------


def query_to_url(value: str) -> dict[str, str]:
    """The URL parameter for a typed query, cut to ``state.MAX_QUERY_CHARS``: a link carries no
    more, so the query that runs (the box takes the URL's value on the next run) is the one a
    copied link reopens. The cut is noted for ``query_cut_note``."""
    query = value.strip()
    if len(query) > MAX_QUERY_CHARS:
        st.session_state[_CUT] = len(query)
        query = query[:MAX_QUERY_CHARS].rstrip()
    return {"q": query}


def query_cut_note() -> None:
    """Say once that the query typed was cut to the length a link can carry."""
    typed = st.session_state.pop(_CUT, None)
    if typed:
        st.warning(
            f"Your query had {typed:,} characters; searches take at most {MAX_QUERY_CHARS:,} (what a link can carry), "
            "so its beginning is searched, as shown in the box.",
            icon=":material/content_cut:",
        )


# ------------------------------------------------------------------------------------------
# The editor token
# ------------------------------------------------------------------------------------------


def session(opts: Options) -> Access:
    """This session's access (``explorer.state.access``); takes an editor token out of the URL
    (``?token=``) first.

    A matching token makes the session an editor until it ends (a reload starts a new session:
    open the link with the token again).
    """
    refused = False
    if TOKEN_PARAM in st.query_params:
        given = st.query_params.get(TOKEN_PARAM)
        del st.query_params[TOKEN_PARAM]  # out of the address bar and of every link made from the URL
        if opts.read_only and token_matches(given, opts.editor_token):
            st.session_state[_EDITOR_KEY] = True
        else:
            refused = opts.read_only
    if not opts.read_only:
        return Access(read_only=False, editor=True)
    return Access(read_only=True, editor=bool(st.session_state.get(_EDITOR_KEY)), refused=refused)
