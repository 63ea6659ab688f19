"""Blocks of the "What changed" and "Topic lineage" pages: widgets bound to the URL, the comparison's
answers in words, figures and tables. Nothing here computes a comparison (``explorer.services.compare``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from explorer.services import compare as cview
from explorer.services import figures, text
from explorer.services.compare import VIEWS
from explorer.state import state
from explorer.state.data import Corpus
from explorer.ui import caches, mapcomponent, present, shell, url_state
from explorer.ui.panels import chart
from pipeline.analysis import compare as cmp
from pipeline.analysis.comparison import CompareError, Comparison
from pipeline.analysis.distinctive import min_support
from pipeline.core.artifacts import ArtifactError
from pipeline.core.manifest import Counts

# ------------------------------------------------------------------------------------------
# Choosing the reference
# ------------------------------------------------------------------------------------------


def _years(entry) -> tuple[int, int] | None:
    years = entry.manifest.counts.years if entry.manifest else None
    return (int(years[0]), int(years[1])) if years else None


def default_reference(ctx: shell.Context, candidates: list) -> str | None:
    """The reference to open with: the last one picked in this session, else the largest corpus
    ending before this one starts (earlier work), else the largest other corpus."""
    names = [e.name for e in candidates]
    last = st.session_state.get("compare_last_ref")
    if last in names:
        return last
    span = ctx.corpus.year_span
    earlier = [e for e in candidates if span and _years(e) and _years(e)[1] < span[0]]
    pool = earlier or candidates
    if not pool:
        return None
    return max(pool, key=lambda e: ((e.manifest.counts.papers if e.manifest else 0), e.name)).name


def reference_picker(ctx: shell.Context) -> Corpus | None:
    """The reference corpus (URL ``ref``), or None with a note saying how to get one."""
    entries = [e for e in caches.list_corpora(ctx.root) if e.ok and e.name != ctx.corpus.name]
    if not entries:
        st.info(
            f"There is no other corpus to compare **{text.plain(ctx.corpus.name)}** with. Build one, for example "
            "earlier years of the same conference, then reload this page:\n\n"
            "```\npython -m pipeline build neurips-1987-2023.jsonl.gz --name neurips-1987-2023\n```\n\n"
            "(README: *What changed*; `make reference` builds the NeurIPS 1987-2023 reference if you have its file).",
            icon=":material/compare_arrows:",
        )
        return None
    names = [e.name for e in entries]
    by_name = {e.name: e for e in entries}
    url_ref = st.query_params.get("ref")
    if url_ref == ctx.corpus.name:  # the corpus was switched to the reference itself: pick another
        url_ref = None
    if url_ref is not None and url_ref not in by_name:
        st.warning(
            f"There is no corpus **{text.plain(url_ref)}** to compare with; pick one below.", icon=":material/link_off:"
        )
        url_ref = None
    default = default_reference(ctx, entries)
    st.selectbox(
        "Compare with (the reference: earlier work)", names, key="compare_ref",
        format_func=lambda n: _caption(by_name[n]),
        **url_state.bind("compare_ref", url_ref, default=default, to_url=lambda v: {"ref": v}),
    )  # fmt: skip
    picked = st.session_state["compare_ref"]
    st.session_state["compare_last_ref"] = picked
    if st.query_params.get("ref") is None:
        url_state.set_params(ref=picked)  # a copied link names its reference
    try:
        return caches.get_corpus(ctx.root, picked)
    except ArtifactError as exc:
        st.error(
            f"The reference **{text.plain(picked)}** cannot be opened: {text.plain(str(exc))}", icon=":material/error:"
        )
        return None


def _caption(entry) -> str:
    counts = entry.manifest.counts if entry.manifest else Counts()
    years = _years(entry)
    span = "" if years is None else f", {years[0]}" if years[0] == years[1] else f", {years[0]}–{years[1]}"
    return f"{entry.name} · {counts.papers:,} papers{span}"


def comparison(ctx: shell.Context, ref: Corpus) -> Comparison | None:
    try:
        return caches.get_comparison(ctx.corpus, ref)
    except CompareError as exc:
        st.warning(text.plain(str(exc)), icon=":material/compare_arrows:")
        return None


def view_picker() -> str:
    """The section shown (URL ``show``)."""
    url = st.query_params.get("show")
    url = url if url in VIEWS else None
    st.segmented_control(
        "Show", list(VIEWS), key="compare_view", format_func=VIEWS.get, label_visibility="collapsed", required=True,
        **url_state.bind("compare_view", url, default="overview", to_url=lambda v: {"show": None if v in (None, "overview") else v}),
    )  # fmt: skip
    return st.session_state.get("compare_view") or "overview"


# ------------------------------------------------------------------------------------------
# At a glance
# ------------------------------------------------------------------------------------------


def size_note(result: Comparison) -> None:
    """Say plainly how large a change this comparison can see."""
    s = result.summary
    rise, typical, n = s.shares.detectable_rise, s.shares.typical_share, s.new.papers
    if rise != rise:
        msg = f"With {n:,} papers, no change in a typical topic's share can be told apart from chance."
    else:
        msg = (
            f"With {n:,} new papers, a typical topic ({typical:.1%} of the reference) must gain at least "
            f"**{rise * 100:.1f} points** before it counts as grown; smaller changes are indistinguishable from chance."
        )
    if n < 100 or rise != rise or rise > 0.05:
        st.info(msg + " Read the shares below as hints, not trends.", icon=":material/info:")
    else:
        st.caption(msg)


def glance(ctx: shell.Context, ref: Corpus, result: Comparison) -> None:
    """Four answers: what is new, what grew, what faded, which papers lie far from everything before."""
    new_name, ref_name = text.plain(ctx.corpus.name), text.plain(ref.name)
    matches, shares, terms = result.matches, result.shares, result.terms
    left, right = st.columns(2, gap="large")
    with left.container(border=True):
        st.markdown("#### :material/new_releases: What is new")
        own = matches[matches["side"] == "b"]
        born = own[own["status"] == "gone"].sort_values(["size", "topic"], ascending=[False, True])
        for row in born.head(4).itertuples():
            st.markdown(
                f"**{text.plain(row.label)}** · new: {row.size} papers, {row.none_share:.0%} of them far from all of "
                f"{ref_name}  \n" + text.plain(", ".join(list(row.keywords)[:6]))
            )
        if born.empty:
            st.markdown(f"No topic of {new_name} lies mostly far from {ref_name}.")
        loose = cmp.unclear_topics(matches)  # one definition: the command line and the flow chart count the same
        if len(loose):
            st.markdown(
                f"**{len(loose)} of {len(own)} topics have no clear precursor**: no majority of their papers has its "
                f"closest earlier work in one topic of {ref_name}."
            )
        for row in loose.head(max(0, 3 - len(born))).itertuples():
            pairs = list(zip(row.partners, row.partner_shares, strict=True)) or [(row.best_partner, row.best_share)]
            closest = ", ".join(f"{text.plain(ref.topic_label(int(t)))} ({share:.0%})" for t, share in pairs)
            st.markdown(f"**{text.plain(row.label)}** · {row.size} papers; closest: {closest}")
        if len(loose) > max(0, 3 - len(born)):
            st.caption(f"and {len(loose) - max(0, 3 - len(born))} more (Topic matching).")
        more = terms[terms["side"] == "new"]["term"].head(8).tolist()
        st.caption("Terms used more than before: " + (text.plain(", ".join(more)) if more else "none clearly."))
    with right.container(border=True):
        st.markdown("#### :material/trending_up: What grew")
        _share_lines(shares[shares["verdict"] == "grew"], "No reference topic's share grew beyond chance.")
    left, right = st.columns(2, gap="large")
    with left.container(border=True):
        st.markdown("#### :material/trending_down: What faded")
        _share_lines(
            shares[shares["verdict"].isin(["shrank", "gone"])], "No reference topic's share shrank beyond chance."
        )
        less = terms[terms["side"] == "ref"]["term"].head(8).tolist()
        st.caption("Terms used less than before: " + (text.plain(", ".join(less)) if less else "none clearly."))
    with right.container(border=True):
        far = int(result.papers["far"].sum())
        st.markdown("#### :material/explore: Far from everything before")
        st.markdown(
            f"**{far:,} of {len(result.papers):,} papers** lie farther from {ref_name} than 95% of its own papers "
            f"lie from the rest of it (by chance about {0.05 * len(result.papers):.0f} would)."
        )
        for row in result.papers[result.papers["far"]].head(3).itertuples():  # the most novel of them
            pos = ctx.corpus.paper_pos(row.doc_id)
            if pos is not None:
                shell.paper_link(ctx, pos, prefix=f"{row.rank}. ")
        if far > 3:
            st.caption(f"and {far - 3:,} more (Far from earlier work).")


def _share_lines(rows: pd.DataFrame, nothing: str) -> None:
    if rows.empty:
        st.markdown(nothing)
        return
    rows = rows.sort_values("change", key=np.abs, ascending=False)
    for row in rows.head(5).itertuples():
        st.markdown(
            f"**{text.plain(row.label)}**: {row.share_before:.1%} → {row.share_after:.1%} "
            f"({row.change * 100:+.1f} points, between {row.change_lo * 100:+.1f} and {row.change_hi * 100:+.1f})"
        )
    if len(rows) > 5:
        st.caption(f"and {len(rows) - 5} more (Topic shares).")


# ------------------------------------------------------------------------------------------
# Sections
# ------------------------------------------------------------------------------------------


def shares_section(ctx: shell.Context, ref: Corpus, result: Comparison) -> None:
    shares = result.shares
    z = result.summary.shares.z
    grew = shares[shares["verdict"] == "grew"].sort_values(["change", "topic"], ascending=[False, True])
    fell = shares[shares["verdict"].isin(["shrank", "gone"])].sort_values(["change", "topic"])
    rest = shares[shares["verdict"] == "no clear change"].sort_values(
        ["share_before", "topic"], ascending=[False, True]
    )
    shown = pd.concat([grew, fell, rest.head(max(0, 25 - len(grew) - len(fell)))])
    st.caption(
        f"Each reference topic's share of {text.plain(ref.name)} (hollow) and of {text.plain(ctx.corpus.name)}'s papers "
        f"placed into it (filled: blue grew, orange shrank, grey no clear change). The bars are intervals that hold for "
        f"all {len(shares)} topics at once (Wilson, Bonferroni: z = {z:.2f}); a topic is called changed only when the "
        f"interval of its change (Newcombe) leaves out zero. Showing the changed topics and the largest others."
    )
    fig = cview.share_changes_figure(
        shown.reset_index(drop=True), title="Share of papers: reference then, new corpus now",
        before=ref.name, after=ctx.corpus.name,
    )  # fmt: skip
    chart(fig, name=figures.image_name(ctx.corpus.name, "vs", ref.name, "topic-shares"))
    with st.expander("Every reference topic, with its counts"):
        table = shares[["topic", "label", "n_before", "share_before", "n_after", "share_after", "change", "change_lo",
                        "change_hi", "verdict"]]  # fmt: skip
        pct = ["share_before", "share_after", "change", "change_lo", "change_hi"]
        st.dataframe(
            table.assign(**{c: table[c] * 100 for c in pct}), hide_index=True,
            column_config={
                "n_before": st.column_config.NumberColumn(f"Papers in {ref.name}"),
                "share_before": st.column_config.NumberColumn("Share then", format="%.2f%%"),
                "n_after": st.column_config.NumberColumn(f"Papers of {ctx.corpus.name}"),
                "share_after": st.column_config.NumberColumn("Share now", format="%.2f%%"),
                "change": st.column_config.NumberColumn("Change (points)", format="%+.2f"),
                "change_lo": st.column_config.NumberColumn("from", format="%+.2f"),
                "change_hi": st.column_config.NumberColumn("to", format="%+.2f"),
            },
        )  # fmt: skip


def matching_section(ctx: shell.Context, ref: Corpus, result: Comparison) -> None:
    s = result.summary
    p = s.params
    st.caption(
        f"Each paper of either corpus is looked up in the other: its own copy when both hold it, else its {p.k} nearest "
        f'papers there ("nothing close" when it lies farther from that corpus than {1 - p.novel_alpha:.0%} of that '
        f"corpus's own papers lie from the rest of it). A topic **matches** another when a majority of its papers land "
        f"there and a majority of the other's papers land in it; it is **merged into** / **split from** one when only "
        f"one of the two majorities holds; a **split** or **merger** has at least two parts of {p.part:.0%} or more, "
        f"each made mostly of the topic's papers; "
        f"it is **new** / **vanished** when most of its papers have nothing close on the other side. Topics with fewer "
        f"than {p.min_papers} papers are not judged. Matched here by {text.plain(s.matching.method)}."
    )
    chart(
        cview.matching_sankey(
            result.flows, result.matches, left=ref.name, right=ctx.corpus.name, colours=ref.colouring.colours
        ),
        name=figures.image_name(ctx.corpus.name, "vs", ref.name, "topic-matching"),
    )
    left_out = cview.undrawn_reference_topics(result.flows, result.matches)
    if left_out:
        st.caption(
            f"Not in the diagram ({text.plain(ref.name)} topics none of whose links reaches "
            f"{cview.SANKEY_MIN_SHARE:.0%} of the papers of one of {text.plain(ctx.corpus.name)}'s topics; the "
            "tables below list them): " + "; ".join(f"{t} · {text.plain(ref.topic_label(t))}" for t in left_out)
        )
    for side, title, other in (("b", ctx.corpus.name, ref), ("a", ref.name, ctx.corpus)):
        rows = result.matches[result.matches["side"] == side]
        theirs = result.matches[result.matches["side"] != side].set_index("topic")["keywords"]
        partner_words = [  # the top terms of its main partner, beside its own
            ", ".join(list(theirs.get(ps[0] if len(ps) else best, []))[:6])
            for ps, best in zip(rows["partners"], rows["best_partner"], strict=True)
        ]
        st.markdown(f"**Topics of {text.plain(title)}**")
        st.dataframe(
            pd.DataFrame(
                {
                    "topic": rows["topic"], "label": rows["label"], "papers": rows["size"], "status": rows["status_text"],
                    "partners": [", ".join(f"{t} · {other.topic_label(t)} ({s:.0%})" for t, s in
                                           zip(ps, ss, strict=True)) for ps, ss in zip(rows["partners"], rows["partner_shares"], strict=True)],
                    "far": rows["none_share"] * 100, "similarity": rows["best_sim"],
                    "keywords": [", ".join(list(k)[:6]) for k in rows["keywords"]],
                    "partner_keywords": partner_words,
                }
            ),
            hide_index=True,
            column_config={
                "far": st.column_config.NumberColumn("Nothing close", format="%.0f%%", help="papers with nothing close on the other side"),
                "similarity": st.column_config.NumberColumn("Best centroid similarity", format="%.2f"),
                "keywords": st.column_config.TextColumn("Top keywords", width="large"),
                "partner_keywords": st.column_config.TextColumn("Main partner's top keywords", width="large"),
            },
        )  # fmt: skip


def terms_section(ctx: shell.Context, ref: Corpus, result: Comparison) -> None:
    terms = result.terms
    st.caption(
        "Log-odds ratios with an informative Dirichlet prior (Monroe, Colaresi and Quinn 2008) on the number of papers "
        "using each term, over both corpora's vocabularies: a term ranks high only when it is both common enough and "
        f"unevenly used. Shown when |z| > 1.96, when at least {min_support(len(result.papers))} papers of its side "
        "use it, and when the share of papers using it differs too (95% interval); z is per term, not corrected for "
        f"the thousands of terms looked at, so with few papers ({len(result.papers):,} here) read the weaker ones as hints."
    )
    if terms.empty:
        st.info("No term is used clearly more or less often than in the reference.")
        return
    chart(
        cview.terms_figure(terms, new=ctx.corpus.name, ref=ref.name),
        name=figures.image_name(ctx.corpus.name, "vs", ref.name, "terms"),
    )


def novelty_section(ctx: shell.Context, ref: Corpus, result: Comparison, *, limit: int = 25) -> None:
    cal = result.summary.calibration
    st.caption(
        f"Novelty is one minus a paper's mean cosine similarity to its {result.summary.params.novelty_k} closest "
        f"papers in {text.plain(ref.name)} (sentence embeddings). The dashed line is where {text.plain(ref.name)}'s own "
        "papers stop: 95% of them lie closer to the rest of it. Papers past it are far from all earlier work; the "
        "percentage says how many of the reference's own papers are at least as far from the rest (a conformal p-value)."
    )
    chart(
        cview.novelty_figure(result.papers, cal.novelty_p95, new=ctx.corpus.name, ref=ref.name),
        name=figures.image_name(ctx.corpus.name, "vs", ref.name, "novelty"),
    )
    titles = ref.papers["title"]
    for row in result.papers.head(limit).itertuples():
        pos = ctx.corpus.paper_pos(row.doc_id)
        if pos is None:
            continue
        flag = "far from all earlier work · " if row.far else ""
        shell.paper_link(ctx, pos, prefix=f"{row.rank}. ")
        st.caption(
            f"{flag}novelty {row.novelty:.2f}: {row.p_value:.1%} of {text.plain(ref.name)}'s papers lie at least as far "
            f"from the rest of it · placed in *{text.plain(ref.topic_label(int(row.ref_topic)))}*"
        )
        with st.container(key=f"prior_{row.rank}"):
            for doc_id, sim in list(zip(row.neighbour_ids, row.neighbour_sims, strict=True))[:3]:
                ref_pos = ref.paper_pos(doc_id)
                title = text.plain(titles.iat[ref_pos] if ref_pos is not None else doc_id, "(untitled)")
                st.page_link(
                    shell.PAGE["paper"].path, label=f"↳ closest prior work ({sim:.2f}): {title}",
                    query_params={"corpus": ref.name, "paper": doc_id},
                )  # fmt: skip
    if len(result.papers) > limit:
        st.caption(f"The {limit} most novel of {len(result.papers):,} papers.")


def map_section(ctx: shell.Context, ref: Corpus, result: Comparison) -> None:
    points = cview.overlay_points(result, ctx.corpus)
    shown = cview.overlay(points)
    st.caption(
        f"{text.plain(ref.name)}'s topic map with {text.plain(ctx.corpus.name)}'s papers placed on it from their "
        "nearest reference papers (nothing is refitted): pink diamonds lie far from all earlier work, dark dots "
        "close to it; rest the pointer on one for its title."
        + (f" The {len(shown):,} most novel of {len(points):,} papers are shown." if len(shown) < len(points) else "")
    )
    mapcomponent.topic_map(
        ref, key="compare_map", overlay=shown, view_in_url=False, height=mapcomponent.height(ctx.presenting),
        scale=present.scale(), select=False, clickable=False,
        png_name=figures.image_name(ctx.corpus.name, "on", ref.name, "map"),
        caption=f"{ctx.corpus.name} placed on the topic map of {ref.name}",
    )  # fmt: skip


SECTIONS = {
    "shares": shares_section,
    "matching": matching_section,
    "terms": terms_section,
    "novelty": novelty_section,
    "map": map_section,
}


# ------------------------------------------------------------------------------------------
# Lineage
# ------------------------------------------------------------------------------------------


def periods_picker(years: list[int], default: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Period boundaries (URL ``periods=1987-2004,2005-2012,...``): the first year of each period."""
    url = [state.parse_range(p) for p in (st.query_params.get("periods") or "").split(",") if p]
    starts_url = tuple(p[0] for p in url if p) if url and all(url) else None
    choices = sorted(set(years))
    st.multiselect(
        "Periods start in", choices[1:], key="lineage_starts", max_selections=9,
        help="the first year of each period after the first; the periods default to equal numbers of papers",
        **url_state.bind("lineage_starts", [s for s in (starts_url or ()) if s in choices[1:]] or None,
                     default=[p[0] for p in default[1:]], to_url=lambda v: {"periods": _encode(sorted(v), choices)}),
    )  # fmt: skip
    starts = [choices[0], *sorted(st.session_state["lineage_starts"])]
    ends = [s - 1 for s in starts[1:]] + [choices[-1]]
    return [(a, b) for a, b in zip(starts, ends, strict=True) if a <= b]


def _encode(starts: list[int], choices: list[int]) -> str | None:
    if not starts:
        return None
    bounds = [choices[0], *starts]
    ends = [s - 1 for s in starts] + [choices[-1]]
    return ",".join(state.format_range((a, b)) for a, b in zip(bounds, ends, strict=True))


def lineage_changes(ctx: shell.Context, lin, labels: dict[int, str]) -> None:
    """Emerging and declining topics: the last period against the one before, with intervals."""
    if len(lin.periods) < 2:
        return
    before, after = (state.format_range(p) for p in lin.periods[-2:])
    changes = lin.changes.assign(label=[labels.get(int(t), str(t)) for t in lin.changes["topic"]])
    moved = changes[changes["verdict"] != "no clear change"].sort_values("change", ascending=False)
    st.subheader(f"Emerging and declining: {after} against {before}", anchor="emerging")
    if moved.empty:
        st.info(f"No topic's share changed beyond chance from {before} to {after}.", icon=":material/info:")
        return
    grew, fell = moved[moved["change"] > 0], moved[moved["change"] < 0]
    st.caption(
        f"{len(grew)} topics grew and {len(fell)} shrank beyond chance (intervals for all {len(changes)} topics at "
        "once: Wilson for each share, Newcombe for the change, Bonferroni-corrected); hollow is the earlier share."
    )
    fig = cview.share_changes_figure(
        pd.concat([grew.head(10), fell.tail(10)]).reset_index(drop=True),
        title=f"Share of each period's papers, {before} and {after}", before=before, after=after,
    )  # fmt: skip
    chart(fig, name=figures.image_name(ctx.corpus.name, "emerging", before, after))


def default_focus(lin) -> int | None:
    """The topic to follow first: of those that grew beyond chance, the one whose papers in the last
    period come least from its own earlier papers (the most "born of others"); None if none grew."""
    last = len(lin.periods) - 1
    grew = lin.changes[lin.changes["verdict"] == "grew"]["topic"].astype(int).tolist()
    if not grew or last < 1:
        return None
    links = lin.links[lin.links["period"] == last]
    own = {t: float(links[(links["target"] == t) & (links["source"] == t)]["from_share"].sum()) for t in grew}
    return min(grew, key=lambda t: (own[t], t))


def focus_picker(ctx: shell.Context, lin, labels: dict[int, str]) -> int | None:
    """The topic whose roots the flow chart follows (URL ``topic``); by default ``default_focus``."""
    changes = lin.changes.sort_values(["change", "topic"], ascending=[False, True], kind="stable")
    last = set(lin.nodes.loc[lin.nodes["period"] == len(lin.periods) - 1, "topic"].astype(int))
    options = [int(t) for t in changes["topic"] if int(t) in last]
    url = ctx.view.topic if ctx.view.topic in options else None
    st.selectbox(
        "Follow the roots of", options, index=None, key="lineage_topic", placeholder="the ten largest topics",
        format_func=lambda t: f"{t} · {labels.get(t, '')}",
        **url_state.bind("lineage_topic", url, default=default_focus(lin), to_url=lambda v: {"topic": v}),
    )  # fmt: skip
    return st.session_state["lineage_topic"]


def pin_view(periods: list[tuple[int, int]], focus: int | None) -> None:
    """Write the periods and the followed topic into the URL when it holds the page's defaults
    only, so that a copied link or a tour step names (and reopens) what is on the screen."""
    changes = {}
    if st.query_params.get("periods") is None and len(periods) >= 2:
        changes["periods"] = ",".join(state.format_range(p) for p in periods)
    if st.query_params.get("topic") is None and focus is not None:
        changes["topic"] = focus
    if changes:
        url_state.set_params(**changes)


def roots(lin, topic: int, labels: dict[int, str], *, steps: int = 2) -> None:
    """In words: where the topic's papers of the last periods come from."""
    lines = []
    for i in range(len(lin.periods) - 1, max(len(lin.periods) - 1 - steps, 0), -1):
        part = lin.links[(lin.links["period"] == i) & (lin.links["target"] == topic)]
        part = part.sort_values(["from_share", "source"], ascending=[False, True], kind="stable").head(4)
        if part.empty:
            continue
        before, now = (state.format_range(p) for p in (lin.periods[i - 1], lin.periods[i]))
        sources = ", ".join(
            f"{text.plain(labels.get(int(r.source), str(r.source)))} {r.from_share:.0%}" for r in part.itertuples()
        )
        lines.append(
            f"- **{now}** papers of *{text.plain(labels.get(topic, str(topic)))}* lie nearest to {before} papers of: {sources}"
        )
    if lines:
        st.markdown("\n".join(lines))


def largest_nodes(lin, n: int = 10) -> set[tuple[int, int]]:
    """(period, topic) nodes of the ``n`` topics with the largest share summed over the periods."""
    totals = lin.nodes.groupby("topic")["share"].sum().sort_values(ascending=False, kind="stable")
    top = set(totals.index[:n].astype(int))
    return {(int(p), int(t)) for p, t in zip(lin.nodes["period"], lin.nodes["topic"], strict=True) if int(t) in top}
