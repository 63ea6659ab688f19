"""The dashboard's read side: load built corpora, filter, search, build figures, keep URL state.

Nothing here fits a model. ``data`` (loading, topic edits applied), ``filters``, ``analysis``
(tables), ``search``, ``figures`` (plotly, pure), ``mapview`` (the map component's state, view
and titles), ``state`` (URL), ``text`` (safe rendering), ``readinglist`` (Markdown/CSV/BibTeX),
``tours`` (saved views), ``downloads`` (offline HTML, CSV), ``curate`` (edits to topics) and
``access`` (read-only sharing, editor token) are plain functions tested without a running app, and
import no Streamlit: ``caches`` holds their ``st.cache_resource`` wrappers (thin shells) and
``url_state`` the Streamlit side of the URL state. Every function that writes a file takes
an ``access.Access`` and refuses a viewer. ``shell`` (router glue: sidebar, links, page context),
``panels`` (reusable page blocks), ``share`` (reading-list buttons, downloads, curation status),
``present`` (tour building, present mode) and ``mapcomponent`` (the WebGL map, a Streamlit
component) draw with Streamlit; the pages in ``pages/`` combine them. What the app shares with
the offline export (the map's binary containers, the palette, short paper ids) is
``pipeline.formats``, below both.
"""
