"""What changed: this corpus against a reference corpus (earlier work): what is new, what grew, what
faded, and which papers lie far from everything before."""

import streamlit as st

from explorer.services import text
from explorer.ui import compare_panels as cp
from explorer.ui import shell

ctx = shell.context()
st.title("What changed", anchor=False)
ref = cp.reference_picker(ctx)
if ref is None:
    st.stop()
result = cp.comparison(ctx, ref)
if result is None:
    st.stop()

s = result.summary
shared = s.reference.papers_shared
st.caption(
    f"{text.plain(ctx.corpus.name)}'s {s.new.papers:,} papers placed on {text.plain(ref.name)}'s map and into its "
    f"{s.reference.topics} topics (nothing refitted), against its {s.reference.papers_used:,} papers"
    + (f" ({shared:,} papers both corpora hold are left out of the reference)" if shared else "")
    + ". Filters do not apply here."
)
view = cp.view_picker()
if view == "overview":
    cp.size_note(result)
    cp.glance(ctx, ref, result)
else:
    cp.SECTIONS[view](ctx, ref, result)
