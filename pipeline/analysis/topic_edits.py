"""The user's topic edits (rename, merge, move) applied to a loaded build's papers and topic tables.

``explorer.state.data.with_edits`` makes the curated ``Corpus`` from :func:`curate`'s result, and the offline
export (``pipeline.export.export.export_html``) applies the same edits with it, so both show the same topics;
the edits themselves are ``pipeline.analysis.curation``'s (its file format and ``apply_edits``). Nothing here changes
its inputs: the loaded build is shared by every session.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.analysis.curation import apply_edits, fold_matrix, folded_embeddings, topic_targets
from pipeline.core.topic_tables import TopicTables


@dataclass(frozen=True)
class Curated:
    """A build's papers and topic tables with the edits applied.

    Attributes:
        papers: the papers (``moved``: moved to another topic by hand; ``topic_prob`` of papers that
            changed topic read from the folded distribution).
        tables: the topic tables (``topics.curated``: renamed or merged by hand).
        topic_years: topic_years.parquet recounted from the edited papers.
        topic_index: int32 ``(papers,)`` row of each paper's topic in ``tables.topics`` (-1: none).
        skipped: the edits that no longer match any topic or paper.
    """

    papers: pd.DataFrame
    tables: TopicTables
    topic_years: pd.DataFrame
    topic_index: np.ndarray
    skipped: list[dict]


def curate(base_papers: pd.DataFrame, base: TopicTables, edits: list[dict]) -> Curated:
    """``edits`` applied (``pipeline.analysis.curation.apply_edits``); the inputs are untouched.

    Renamed labels and moved papers change the tables only. A merge also folds the merged
    topics' columns of ``distribution`` into the kept topic (a new in-memory array), averages
    their embeddings (weighted by size) and recomputes their similarity, pools their term
    statistics, and drops the stored hierarchy (which no longer fits; the app draws one from the
    embeddings). Coherence, growth and stability of merged topics are unknown (NaN, set by
    ``apply_edits``) rather than wrong.
    The topic probability of papers that changed topic is read from the (merged) distribution.
    """
    applied = apply_edits(base_papers, base.topics, list(edits))
    papers, topics = applied.papers, applied.topics.reset_index(drop=True)
    old_ids, new_ids = base.topics["topic"].to_numpy(), topics["topic"].to_numpy()
    old_topic, new_topic = base_papers["topic"].to_numpy(), papers["topic"].to_numpy()
    moved = papers["moved"].to_numpy(dtype=bool)
    # Where each stored topic went: itself, or the topic its papers were merged into.
    target = topic_targets(old_ids, new_ids, old_topic, new_topic, moved)
    absorbed = sorted({v for k, v in target.items() if k != v})
    if absorbed or len(new_ids) != len(old_ids):
        tables = _merged_tables(base, topics, target, absorbed, fold_matrix(target, old_ids, new_ids))
    else:
        tables = TopicTables(
            topics, base.topic_terms, base.hierarchy, base.topic_embeddings, base.similarity, base.distribution
        )
    topic_index = pd.Index(new_ids).get_indexer(new_topic).astype(np.int32)
    changed = ((new_topic != old_topic) | np.isin(new_topic, absorbed)) & (topic_index >= 0)
    if changed.any():
        rows = np.flatnonzero(changed)
        probs = papers["topic_prob"].to_numpy(dtype=float).copy()
        probs[rows] = np.asarray(tables.distribution[rows], dtype=float)[np.arange(len(rows)), topic_index[rows]]
        papers["topic_prob"] = probs
    topic_index.setflags(write=False)
    return Curated(papers, tables, _topic_years(papers), topic_index, list(applied.skipped))


def _merged_tables(
    base: TopicTables, topics: pd.DataFrame, target: dict[int, int], absorbed: list[int], fold: np.ndarray
) -> TopicTables:
    """The topic tables once merged topics are folded into the topics they joined (``topics``:
    the edited topics table, whose merged topics' representative papers are filled in here)."""
    distribution = np.asarray(base.distribution, dtype=np.float32) @ fold
    emb = folded_embeddings(fold, base.topics["size"].to_numpy(), base.topic_embeddings)
    similarity = np.clip(emb @ emb.T, -1, 1).astype(np.float32)
    new_pos = {int(t): j for j, t in enumerate(topics["topic"].to_numpy())}
    reps = base.topics.set_index("topic")["representative_doc_ids"]
    for keep in absorbed:  # a few merged topics: their representative papers, kept topic's first
        parts = [keep, *[k for k, v in target.items() if v == keep and k != keep]]
        joined = [d for p in parts for d in list(reps.get(p, []))]
        topics.at[new_pos[keep], "representative_doc_ids"] = list(dict.fromkeys(joined))
    for arr in (emb, similarity):
        arr.setflags(write=False)
    return TopicTables(
        topics, _pool_terms(base.topic_terms, target), base.hierarchy.iloc[0:0], emb, similarity, distribution
    )


def _pool_terms(terms: pd.DataFrame, target: dict[int, int]) -> pd.DataFrame:
    """topic_terms of merged topics pooled: counts summed, best c-TF-IDF, p(w|t) over the pooled total."""
    if terms.empty:
        return terms
    t = terms.assign(topic=terms["topic"].map(target))
    t = t[t["topic"].notna()].astype({"topic": terms["topic"].dtype})
    # each stored topic's total term count, from any of its rows: count / p_topic
    total = (terms["count"] / terms["p_topic"].where(terms["p_topic"] > 0)).groupby(terms["topic"]).median()
    pooled_total = total.groupby(total.index.map(target)).sum()
    out = t.groupby(["topic", "term"], as_index=False, sort=False).agg(
        ctfidf=("ctfidf", "max"), count=("count", "sum"), p_corpus=("p_corpus", "first")
    )
    out["p_topic"] = out["count"] / out["topic"].map(pooled_total).clip(lower=1)
    return (
        out[terms.columns.tolist()]
        .sort_values(["topic", "ctfidf", "term"], ascending=[True, False, True], kind="stable")
        .reset_index(drop=True)
    )


def _topic_years(papers: pd.DataFrame) -> pd.DataFrame:
    """topic_years.parquet recounted from the (edited) papers: topic, year, n, share."""
    dated = papers[papers["year"].notna()]
    if dated.empty:
        return pd.DataFrame(columns=["topic", "year", "n", "share"])
    counts = dated.groupby([dated["topic"].astype(int), dated["year"].astype(int)]).size().rename("n").reset_index()
    totals = dated["year"].astype(int).value_counts()
    counts["share"] = counts["n"] / counts["year"].map(totals)
    return counts
