"""The dashboard's read side: load built corpora, filter, search, build figures, keep URL state.

Nothing here fits a model. ``data`` (loading), ``filters``, ``analysis`` (tables), ``search``,
``figures`` (plotly, pure), ``state`` (URL) and ``text`` (safe rendering) are plain functions
tested without a running app; their few ``st.cache_resource`` wrappers are thin shells.
``shell`` (router glue: sidebar, links, page context) and ``panels`` (reusable page blocks) draw
with Streamlit; the pages in ``pages/`` combine them.
"""
