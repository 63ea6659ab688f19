"""Reusable blocks of the pages (widgets bound to the URL + figures), so each page reads like a
paragraph. Every block takes the page ``Context`` or plain data; none loads or fits anything.

Here: ``chart`` (how every plotly figure is drawn), the topic blocks (table, evidence, relevance,
all topics at once), a paper's topic and the paper items of lists. The trend blocks (periods,
keywords, emerging and declining, a corpus without years) are ``explorer.ui.trend_panels``'s."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import streamlit as st

from explorer.services import analysis, figures, overview_figures, text
from explorer.state import state
from explorer.state.data import Corpus
from explorer.ui import present, share, shell, url_state
from pipeline.model.label_evidence import SUPPORT_DIGITS, WEAK_SUPPORT, is_weak, weak_labels_note
from pipeline.model.topic_parts import BROAD_SHARE, broad_reason, median_spread, shown_parts


def chart(fig, container=None, *, name: str, **kwargs):
    """A plotly figure with the app's look (our own theme, trimmed mode bar) whose mode bar
    downloads it as ``name``.png (``figures.image_name`` of the view, e.g. ``small-topic-3-keywords``).
    In present mode its text, axes and legends grow with the page (``present.scale``)."""
    scale = present.scale()
    fig = figures.scale_text(fig, scale)
    if scale != 1 and "height" not in kwargs:  # a slide: the chart fills the window (present.SLIDE_JS)
        fig.update_layout(height=None, autosize=True)  # as tall as its box
        box = (container or st).container(key=f"slide_{re.sub(r'[^A-Za-z0-9_-]', '_', name)[:80]}")
        config = {**figures.config(name), "responsive": True}
        return box.plotly_chart(fig, theme=None, config=config, height="stretch", **kwargs)
    return (container or st).plotly_chart(fig, theme=None, config=figures.config(name), **kwargs)


# ------------------------------------------------------------------------------------------
# Topics
# ------------------------------------------------------------------------------------------

TOPIC_COLUMNS = {
    "topic": st.column_config.NumberColumn("Id", width="small"),
    "label": st.column_config.TextColumn("Label", width="large"),  # wide enough for a weak label's mark
    "size": st.column_config.NumberColumn("Papers"),
    "shown": st.column_config.NumberColumn("Shown", help="papers kept by the filters"),
    "share": st.column_config.NumberColumn("Share", format="%.1f%%"),
    "growth": st.column_config.NumberColumn(
        "Growth", format="%+.2f", help="change in share per year, percentage points"
    ),
    "coherence": st.column_config.NumberColumn(
        "Coherence", format="%.2f", help="NPMI of the terms behind the top 10 keywords, −1 to 1"
    ),
    "reassigned": st.column_config.NumberColumn(
        "Reassigned", help="papers clustering left out and placed in this topic"
    ),
    "stability": st.column_config.NumberColumn(
        "Stability",
        format="%.2f",
        help="how well clusterings of random 90% samples of the papers, each with its own seed, find the topic again (0-1)",
    ),
    "label_support": st.column_config.NumberColumn(
        "Label support",
        format=f"%.{SUPPORT_DIGITS}f",
        help="share of the topic's papers whose title or abstract use all the words of the label (of either part of "
        f"an 'A and B' label), 0-1, as the lower bound of its 80% confidence interval; below {WEAK_SUPPORT:.2f} as "
        "shown here, the label is marked (?)",
    ),
    "parts": st.column_config.TextColumn(
        "Parts",
        width="large",
        help=f"a broad topic (more than {BROAD_SHARE:.0%} of the papers, less alike than the median topic) lists the "
        "groups its papers form, each named, with their papers; open the topic to read them",
    ),
    "keywords": st.column_config.TextColumn("Top keywords", width="large"),
}


def topic_table(ctx: shell.Context, table: pd.DataFrame) -> None:
    """The sortable topic table; selecting a row opens that topic (writes ``topic`` to the URL)."""

    def pick() -> None:
        rows = st.session_state["topic_table"].selection.rows
        if rows:
            url_state.set_params(topic=int(table["topic"].iat[rows[0]]))

    hidden = [c for c in ("growth", "stability", "coherence", "label_support") if table[c].isna().all()]
    hidden += ["parts"] if not any(table["parts"]) else []
    hidden += ["shown"] if ctx.mask.all() else []
    st.dataframe(
        table.drop(columns=hidden).assign(share=table["share"] * 100),
        hide_index=True,
        key="topic_table",
        on_select=pick,
        selection_mode="single-row",
        height="auto" if len(table) <= 12 else 460,
        column_config=TOPIC_COLUMNS,
    )


def topic_metrics(row: pd.Series, *, coherence_note: str | None = None) -> None:
    """The evidence for one topic: size, share, label support, coherence, reassigned outliers,
    growth (, stability). ``coherence_note`` says why coherence is not shown, when it is not."""

    def num(value: float, fmt: str) -> str:
        return "–" if value != value else format(value, fmt)

    items = [
        ("Papers", f"{row['size']:,}", None),
        ("Share", f"{row['share']:.1%}", "share of the corpus's papers"),
        (
            "Label support",
            num(row["label_support"], f".{SUPPORT_DIGITS}f"),
            "share of the topic's papers whose title or abstract use all the label's words (or all of one part's, "
            "for an 'A and B' label), 0-1, as the lower bound of its 80% confidence interval (below "
            f"{WEAK_SUPPORT:.2f} as shown: weak, marked (?)); – for a label written by hand",
        ),
        (
            "Coherence",
            num(row["coherence"], ".2f"),
            coherence_note or "NPMI of the terms behind the top 10 keywords, on the corpus, -1 to 1",
        ),
        ("Reassigned", f"{row['reassigned']:,}", "papers clustering left out and placed in this topic"),
        (
            "Growth",
            num(row["growth"], "+.2f"),
            "change in share per year, percentage points (least squares); – when the corpus has one year",
        ),
    ]
    if row["stability"] == row["stability"]:
        items.append(
            (
                "Stability",
                num(row["stability"], ".2f"),
                "best overlap with the topics of clusterings of 90% samples, 0-1",
            )
        )
    for column, (label, value, help_text) in zip(st.columns(metric_widths(items)), items, strict=True):
        column.metric(label, value, help=help_text)


def metric_widths(items: list[tuple[str, str, str | None]]) -> list[float]:
    """Relative column widths for metrics ``(label, value, help)``: what the label and its help icon
    take (about 8 and 24 pixels) or the value in its larger type (about 20 pixels a character),
    whichever is wider, plus the 16-pixel gap Streamlit takes from each column's share, so that at
    1280 pixels neither "Label support" nor "1.6%" is cut short."""
    return [16 + max(8 * len(label) + (24 if help_text else 0), 20 * len(value)) for label, value, help_text in items]


def parts_note(corpus: Corpus) -> str:
    """What the Parts column means, where some topic has parts (empty otherwise)."""
    topics = corpus.tables.topics
    broad = sum(1 for _, row in topics.iterrows() if shown_parts(row))
    if not broad:
        return ""
    return (
        f"*Parts*: {broad} broad topic{'s' if broad != 1 else ''} (more than {BROAD_SHARE:.0%} of the papers, whose "
        "papers are less alike than the median topic's) list the groups their papers form, each named; open one to "
        "read them."
    )


def stability_note(corpus: Corpus) -> str:
    """What the Stability column means for this build, or why it is missing."""
    info = corpus.manifest.stability or {}
    if "stability" in corpus.tables.topics and corpus.tables.topics["stability"].notna().any():
        return (
            f"*Stability*: the mean best overlap (Jaccard, over the papers each run kept) of each topic with the "
            f"topics of {info.get('runs', 2)} clusterings that each leave out a random 10% of the papers and use "
            "their own random seed; below about 0.5 the topic is one way among several to cut that region, "
            "or it rests on a few papers."
        )
    reason = str(info.get("computed", "off"))
    return f"*Stability* was not measured for this build ({text.plain(reason)})."


def label_evidence(row: pd.Series) -> None:
    """The representations a topic's label was built from (c-TF-IDF, KeyBERTInspired, MMR)."""
    parts = [("c-TF-IDF", list(row["keywords"])[:6])]
    parts += [
        (name, list(row[col])[:6]) for name, col in (("KeyBERTInspired", "keybert"), ("MMR", "mmr")) if col in row
    ]
    st.caption(
        "Label built from: "
        + " · ".join(f"**{name}**: {text.plain(', '.join(map(str, terms)))}" for name, terms in parts if terms)
    )


@st.fragment
def relevance_panel(terms: pd.DataFrame, topic: int, corpus_name: str, colour: str | None = None) -> None:
    """The λ slider (URL ``lam``) and the LDAvis-style relevance bars; reruns alone."""
    st.slider(
        "Relevance λ: 1 ranks terms by frequency in the topic, 0 by how specific they are to it",
        0.0, 1.0, step=0.05, key="lam",
        **url_state.bind("lam", state.parse_float(st.query_params.get("lam")), default=0.6, to_url=lambda v: {"lam": None if v == 0.6 else f"{v:.2f}"}),
    )  # fmt: skip
    lam = float(st.session_state["lam"])
    if terms.empty:
        st.info("No term statistics were stored for this topic.")
    else:
        chart(
            figures.relevance_bars(
                figures.rank_by_relevance(terms, lam, top=10 if present.scale() != 1 else 15),
                topic=topic,
                lam=lam,
                colours=None if colour is None else {topic: colour},
            ),
            name=figures.image_name(corpus_name, "topic", topic, "relevance", f"lambda{lam:.2f}"),
        )


@st.cache_resource(max_entries=32, show_spinner=False)
def _overview_figures(key, selected: int | None, _corpus: Corpus) -> tuple:
    z = overview_figures.linkage_from_hierarchy(_corpus.tables.hierarchy, _corpus.topic_ids)
    z = overview_figures.linkage_from_embeddings(_corpus.tables.topic_embeddings) if z is None else z
    tree = (
        None
        if z is None
        else overview_figures.dendrogram(_corpus.tables.topics, z, selected=selected, colours=_corpus.colouring.colours)
    )
    return (
        tree,
        overview_figures.intertopic_map(
            _corpus.tables.topics, _corpus.tables.similarity, selected=selected, colours=_corpus.colouring.colours
        ),
        overview_figures.similarity_heatmap(_corpus.tables.topics, _corpus.tables.similarity, selected=selected),
    )


def topic_overview(corpus: Corpus, selected: int | None) -> None:
    """All topics at once: hierarchy, intertopic distance and similarity, the selected one marked.

    The figures depend only on the build and the selected topic, so they are built once and shared.
    """
    tree_fig, distance_fig, heat_fig = _overview_figures(corpus.key, selected, corpus)
    tree, distance, heat = st.tabs(["Hierarchy", "Intertopic distance", "Similarity"])
    if tree_fig is None:
        tree.info("A hierarchy needs at least two topics.")
    else:
        chart(tree_fig, tree, name=figures.image_name(corpus.name, "topic-hierarchy"))
    chart(distance_fig, distance, name=figures.image_name(corpus.name, "intertopic-distance"))
    distance.caption(
        "Topics close together have similar papers (the cosine distance between their embeddings, laid out in two "
        "dimensions by MDS); a bubble's area is its papers. Labels that would overlap are left out: rest the "
        "pointer on a bubble for its topic."
    )
    chart(heat_fig, heat, name=figures.image_name(corpus.name, "topic-similarity"))


# ------------------------------------------------------------------------------------------
# A paper's topic
# ------------------------------------------------------------------------------------------

#: Most similar papers whose topics say how well a paper fits its own.
NEIGHBOURS = 10
#: What a paper's similarity to its topic is, wherever a table shows it (it is not the paper page's fit).
TOPIC_SIMILARITY_HELP = (
    "Cosine similarity between the paper's embedding and its topic's embedding (the normalised mean of the topic's "
    "papers' embeddings), from -1 to 1: higher is more typical of the topic. It is not a probability, and not its "
    f"fit, which the paper's page gives as how many of its {NEIGHBOURS} most similar papers are in the topic."
)
#: What the bars of a paper's (or a new abstract's) closest topics show.
CLOSEST_TOPICS_HELP = (
    "Cosine similarity of its abstract's embedding to each topic's embedding (the normalised mean of the topic's "
    "papers' embeddings), from -1 to 1; higher is closer. It ranks the topics; it is not a probability."
)


def paper_topic(ctx: shell.Context, row: int) -> None:
    """A paper's topic with an honest fit (how many of its nearest papers share it), its topic
    distribution with the topic marked, and why the two disagree when they do."""
    corpus = ctx.corpus
    paper = corpus.papers.iloc[row]
    topic, pos = int(paper["topic"]), corpus.topic_pos(int(paper["topic"]))
    st.subheader("Topic", anchor=False)
    near, sims = (a[0] for a in analysis.neighbours(corpus, [row], NEIGHBOURS))
    if pos is None:
        st.markdown("Not assigned to a topic (an outlier).")
    else:
        shell.topic_link(ctx, topic)
        same, others = int((near == topic).sum()), int(corpus.tables.topics["size"].iat[pos]) - 1
        notes = [f"{same} of its {len(near)} most similar papers are in this topic"]
        notes[0] += f" (which has {others} other paper{'s' if others != 1 else ''})" if others < len(near) else ""
        notes += ["moved here by hand"] if paper["moved"] else []
        notes += (
            ["on a topic's border: clustering left it out at first, then placed it here"]
            if paper["was_outlier"]
            else []
        )
        notes += ["added after the topics were fitted"] if paper["placed"] else []
        st.caption(" · ".join(notes))
        far_note(corpus, float(sims[0]) if len(sims) else float("nan"))
        weak_label_note(corpus.tables.topics.iloc[pos])
        if ctx.can_edit:
            st.page_link(shell.PAGE["curate"].path, label="Move it to another topic", icon=":material/move_item:",
                         query_params=state.shared(ctx.view, paper=paper["doc_id"]))  # fmt: skip
    sims = analysis.topic_similarities(corpus, row)
    if sims.size == 0:
        return
    top = [int(i) for i in np.argsort(-sims, kind="stable")[:5]]
    if pos is not None and pos not in top:
        top.append(pos)  # its own topic is always shown, however far down
    ids = [int(corpus.topic_ids[i]) for i in top]
    chart(
        figures.topic_similarity_bars(
            [corpus.topic_label(t) for t in ids], ids, [sims[i] for i in top], assigned=topic,
            title="Closest topics by its abstract", colours=corpus.colouring.colours,
        ),
        name=shell.image_name(ctx, "paper", corpus.short_ids[row], "topics"),
    )  # fmt: skip
    caption = CLOSEST_TOPICS_HELP + " ▶ marks its topic."
    first = int(corpus.topic_ids[int(np.argmax(sims))])
    if pos is not None and first != topic:
        caption += (
            f" **Why it is in topic {topic} and not {first}:** topics are cut from groups of papers lying close "
            f"together on the map, and clustering put this paper with topic {topic}'s; by its own abstract it is "
            f"nearer topic {first}'s average paper (cosine {sims.max():.2f} against {sims[pos]:.2f}). Of its "
            f"{len(near)} most similar papers, {int((near == topic).sum())} are in topic {topic} and "
            f"{int((near == first).sum())} in topic {first}: it lies between the two."
        )
    st.caption(caption)


#: A paper whose closest paper is less similar than for this share of the corpus's papers is far
#: from every paper: its topic (and its neighbours' topics) say little about it.
FAR_SHARE = 0.1


@st.cache_data(max_entries=8, show_spinner=False)
def _closest(key, _corpus: Corpus) -> np.ndarray:
    return analysis.closest_similarities(_corpus)


def far_note(corpus: Corpus, closest: float) -> None:
    """Say so when a paper is far from every paper of the corpus (its closest match is weaker than
    that of nine papers in ten here), whatever topic it was put in."""
    reference = _closest(corpus.key, corpus)
    if not len(reference) or closest != closest:
        return
    below = float((reference > closest).mean())
    if below >= 1 - FAR_SHARE:
        st.caption(
            f"**It is far from every paper here:** its most similar paper has cosine similarity {closest:.2f}, less "
            f"than the closest match of {below:.0%} of this corpus's papers (median {np.median(reference):.2f}). Any "
            "topic it is put in describes it loosely."
        )
    else:
        st.caption(
            f"Its most similar paper: cosine similarity {closest:.2f} (a typical paper's closest match here: "
            f"{np.median(reference):.2f})."
        )


def weak_label_note(row: pd.Series) -> None:
    """Say why a topic's label is marked weak (``pipeline.model.label_evidence.is_weak``), if it is."""
    if row.get("curated") or not is_weak(float(row.get("label_support", np.nan))):
        return
    keywords = ", ".join(list(row["keywords"])[:6])
    st.caption(
        f"The label ends in (?) because its evidence is weak (support {row['label_support']:.{SUPPORT_DIGITS}f}): fewer than "
        f"half of the topic's {int(row['size']):,} papers use its words, or too few to be sure (top keywords: {text.plain(keywords)}). The topic "
        "may gather papers on several subjects; read its papers before trusting the name."
    )


def broad_topic_line(row: pd.Series) -> None:
    """One line for a broad topic where its papers are listed (the map): its parts, and where to
    read them; nothing for the others."""
    parts = shown_parts(row)
    if parts:
        named = " · ".join(f"{label} ({size:,})" for label, size, _, _ in parts)
        st.caption(
            f"**A broad topic** whose papers form {len(parts)} groups: {text.plain(named)}. Its page reads them."
        )


def broad_topic_parts(ctx: shell.Context, row: pd.Series) -> None:
    """For a broad topic (``pipeline.model.topic_parts``), say why it is broad and show its parts,
    each with its label, its papers and its most central papers (links); nothing for the others."""
    parts = shown_parts(row)
    if not parts:
        return
    median = median_spread(ctx.corpus.tables.topics)
    st.markdown("**A broad topic, read by its parts**")
    st.caption(text.plain(broad_reason(row, median)))
    for label, size, support, ids in parts:
        st.markdown(
            f"**{text.plain(label)}** · {size:,} papers ({size / int(row['size']):.0%} of the topic) · label support "
            f"{support:.{SUPPORT_DIGITS}f}"
        )
        for r in (ctx.corpus.paper_pos(d) for d in ids):
            if r is not None:
                shell.paper_link(ctx, r, prefix="› ")


def weak_labels_caption(corpus: Corpus) -> None:
    """Say what the (?) after some labels means, where those labels are listed (nothing when none is weak)."""
    note = weak_labels_note(corpus.tables.topics["label"])
    if note:
        st.caption(note)


def topic_labels(corpus: Corpus) -> dict[int, str]:
    return dict(zip(corpus.topic_ids.tolist(), corpus.tables.topics["label"].tolist(), strict=True))


def label_topics(table: pd.DataFrame, labels: dict[int, str]) -> pd.DataFrame:
    """``table`` with a ``label`` column "id · label" for its ``topic`` column (one per topic)."""
    ids = table["topic"].to_numpy(dtype=int)
    return table.assign(label=np.array([f"{i} · {labels.get(int(i), '?')}" for i in ids], dtype=object))


def paper_item(
    ctx: shell.Context, row: int, note: str = "", *, prefix: str = "", snippet: bool = False, where: str = "item"
) -> None:
    """A paper as a link (its title) over a caption: topic, year, ``note`` and, optionally, the
    start of its abstract, with a button that adds it to the reading list (or removes it). All
    corpus text is escaped. ``where`` tells lists on one page apart (widget keys)."""
    body, button = st.columns([24, 1], gap="small")
    with button:
        share.list_toggle(ctx, row, key=where)
    with body:
        _paper_text(ctx, row, note, prefix=prefix, snippet=snippet)


def _paper_text(ctx: shell.Context, row: int, note: str, *, prefix: str, snippet: bool) -> None:
    papers = ctx.corpus.papers
    shell.paper_link(ctx, row, prefix=prefix)
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
