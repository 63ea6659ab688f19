"""Tables the pages show, computed from a corpus with vectorised pandas/numpy (pure functions).

Nothing here loops over papers in Python; loops run over topics, terms chosen by the user or
years at most.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from explorer.data import Corpus


def topic_table(corpus: Corpus, mask: np.ndarray | None = None) -> pd.DataFrame:
    """One row per topic with the evidence a reader needs to trust it.

    Columns: topic, label, size, share (0-1), shown (papers kept by the filters), growth (share
    points per year, NaN without years), coherence, reassigned, stability (NaN when the build has
    none), keywords (top six, comma-separated).
    """
    t = corpus.topics
    k = len(t)
    if mask is None:
        shown = t["size"].to_numpy()
    else:
        idx = corpus.topic_index[mask]
        shown = np.bincount(idx[idx >= 0], minlength=k)[:k]
    keywords = [", ".join(list(kw)[:6]) for kw in t["keywords"]]  # one per topic
    return pd.DataFrame(
        {
            "topic": t["topic"].to_numpy(),
            "label": t["label"].to_numpy(dtype=object),
            "size": t["size"].to_numpy(),
            "share": t["share"].to_numpy(dtype=float),
            "shown": shown,
            "growth": t["growth"].to_numpy(dtype=float) if "growth" in t else np.full(k, np.nan),
            "coherence": t["coherence"].to_numpy(dtype=float) if "coherence" in t else np.full(k, np.nan),
            "reassigned": t["n_reassigned"].to_numpy() if "n_reassigned" in t else np.zeros(k, dtype=int),
            "stability": t["stability"].to_numpy(dtype=float) if "stability" in t else np.full(k, np.nan),
            "keywords": keywords,
        }
    )


def topic_terms_of(corpus: Corpus, topic: int) -> pd.DataFrame:
    """The topic's rows of topic_terms.parquet (term, ctfidf, count, p_topic, p_corpus)."""
    tt = corpus.topic_terms
    return tt[tt["topic"] == topic].reset_index(drop=True)


def nearest_topics(corpus: Corpus, pos: int, k: int = 5) -> list[tuple[int, float]]:
    """The ``k`` topics (``topics`` rows) most similar to topic row ``pos``, with cosine similarity."""
    sims = np.asarray(corpus.topic_similarity[pos], dtype=float).copy()
    sims[pos] = -np.inf
    order = np.argsort(-sims, kind="stable")[: min(k, len(sims) - 1)]
    return [(int(i), float(sims[i])) for i in order]


def topic_papers(corpus: Corpus, topic: int, mask: np.ndarray) -> np.ndarray:
    """Rows of the topic's papers kept by ``mask``, most typical (highest probability) first."""
    papers = corpus.papers
    rows = np.flatnonzero((papers["topic"].to_numpy() == topic) & mask)
    prob = papers["topic_prob"].to_numpy()[rows]
    return rows[np.argsort(-prob, kind="stable")]


def representative_rows(corpus: Corpus, pos: int) -> list[int]:
    """Paper rows of the topic's representative papers (unknown ids skipped), best first."""
    ids = list(corpus.topics["representative_doc_ids"].iat[pos])
    rows = [corpus.paper_pos(d) for d in ids]
    return [r for r in rows if r is not None]


def papers_per_year(corpus: Corpus, mask: np.ndarray) -> pd.Series:
    """Papers kept by ``mask`` in each year (index year)."""
    years = corpus.papers["year"][mask].dropna().astype(int)
    return years.value_counts().sort_index().rename("n_papers")


def topic_year_shares(corpus: Corpus, mask: np.ndarray, base: np.ndarray | None = None) -> pd.DataFrame:
    """Each topic's share of each year's papers.

    Args:
        mask: papers counted (the filters).
        base: papers forming each year's total (the filters without the topic filter); ``mask``
            when None.

    Returns:
        Columns topic, year, n, n_papers, share; every (topic, year) pair, zeros included.
    """
    base = mask if base is None else base
    totals = papers_per_year(corpus, base)
    if totals.empty:
        return pd.DataFrame(columns=["topic", "year", "n", "n_papers", "share"])
    papers = corpus.papers[mask & corpus.papers["year"].notna().to_numpy()]
    counts = papers.groupby([papers["topic"].astype(int), papers["year"].astype(int)]).size()
    topics = sorted(set(papers["topic"].astype(int).tolist()))
    grid = pd.MultiIndex.from_product([topics, totals.index.tolist()], names=["topic", "year"])
    out = counts.reindex(grid, fill_value=0).rename("n").reset_index()
    out["n_papers"] = totals.reindex(out["year"]).to_numpy()
    out["share"] = out["n"] / out["n_papers"].clip(lower=1)
    return out


def term_pattern(term: str) -> str:
    """A regex matching ``term`` as whole words, any spacing, for a case-insensitive search."""
    words = [re.escape(w) for w in term.split()]
    return r"(?:^|[^\w-])" + r"\s+".join(words) + r"(?:$|[^\w-])"


def keyword_year_shares(corpus: Corpus, terms: Sequence[str], mask: np.ndarray) -> pd.DataFrame:
    """Share of each year's papers using each term.

    Vocabulary terms over the whole corpus come from keyword_years.parquet (the pipeline's own
    tokenisation); other terms, or any term when filters restrict the papers, are matched as
    whole words in the papers' modelling text (case-insensitive, vectorised).

    Returns:
        Columns term, year, df, n_papers, share, source ("vocabulary" or "text match").
    """
    totals = papers_per_year(corpus, mask)
    if totals.empty or not terms:
        return pd.DataFrame(columns=["term", "year", "df", "n_papers", "share", "source"])
    years = totals.index.to_numpy()
    vocab = set(corpus.terms["term"].tolist()) if mask.all() else set()
    frames = []
    ky = corpus.keyword_years if vocab else None
    papers = corpus.papers[mask & corpus.papers["year"].notna().to_numpy()]
    for term in dict.fromkeys(t.strip().lower() for t in terms if t.strip()):  # the user's few terms
        if term in vocab:
            rows = ky[ky["term"] == term]
            df = rows.set_index("year")["df"].reindex(years, fill_value=0)
            source = "vocabulary"
        else:
            hit = papers["model_text"].str.contains(term_pattern(term), case=False, regex=True).fillna(False)
            df = papers["year"][hit.to_numpy(dtype=bool)].astype(int).value_counts().reindex(years, fill_value=0)
            source = "text match"
        frames.append(
            pd.DataFrame(
                {"term": term, "year": years, "df": df.to_numpy(), "n_papers": totals.to_numpy(), "source": source}
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out["share"] = out["df"] / out["n_papers"].clip(lower=1)
    return out


def period_changes(
    counts: pd.DataFrame,
    totals: pd.Series,
    before: tuple[int, int],
    after: tuple[int, int],
    *,
    key: str,
    min_support: int,
) -> pd.DataFrame:
    """Change in share between two periods, for every key (term or topic) with enough support.

    Args:
        counts: columns ``key``, year, n (papers of that year with the key; missing rows are zero).
        totals: papers per year (index year).
        before, after: inclusive year ranges.
        min_support: keys seen in fewer papers over both periods are left out.

    Returns:
        Columns ``key``, n_before, share_before, n_after, share_after, change (share points as a
        fraction), ratio (share_after / share_before, inf when new); sorted by change, largest
        first.
    """
    cols = [key, "n_before", "share_before", "n_after", "share_after", "change", "ratio"]
    in_before = counts["year"].between(*before)
    in_after = counts["year"].between(*after)
    total_before = int(totals[(totals.index >= before[0]) & (totals.index <= before[1])].sum())
    total_after = int(totals[(totals.index >= after[0]) & (totals.index <= after[1])].sum())
    if total_before == 0 or total_after == 0:
        return pd.DataFrame(columns=cols)
    n_before = counts[in_before].groupby(key, observed=True)["n"].sum()
    n_after = counts[in_after].groupby(key, observed=True)["n"].sum()
    table = pd.concat([n_before.rename("n_before"), n_after.rename("n_after")], axis=1).fillna(0).astype(int)
    table = table[(table["n_before"] + table["n_after"]) >= min_support]
    table["share_before"] = table["n_before"] / total_before
    table["share_after"] = table["n_after"] / total_after
    table["change"] = table["share_after"] - table["share_before"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["ratio"] = table["share_after"] / table["share_before"]
    table = table.reset_index().rename(columns={"index": key})
    return table.sort_values(["change", key], ascending=[False, True], kind="stable")[cols].reset_index(drop=True)


def keyword_counts(corpus: Corpus) -> pd.DataFrame:
    """keyword_years.parquet as (term, year, n) for ``period_changes`` (the whole corpus)."""
    return corpus.keyword_years.rename(columns={"df": "n"})[["term", "year", "n"]]


def topic_counts(corpus: Corpus, mask: np.ndarray) -> pd.DataFrame:
    """(topic, year, n) over the papers kept by ``mask``, for ``period_changes``."""
    papers = corpus.papers[mask & corpus.papers["year"].notna().to_numpy()]
    counts = papers.groupby([papers["topic"].astype(int), papers["year"].astype(int)]).size().rename("n")
    return counts.reset_index()


def default_periods(years: Sequence[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """Split the years into an earlier and a later half (the later half gets the middle year)."""
    years = sorted(years)
    half = len(years) // 2
    return (years[0], years[max(half - 1, 0)]), (years[half], years[-1])


def default_support(n_papers: int) -> int:
    """A keyword seen twice is not a trend: ask for ~0.5% of the papers, at least 5."""
    return int(max(5, round(n_papers * 0.005)))
