"""Tables the pages show, computed from a corpus with vectorised pandas/numpy (pure functions).

Nothing here loops over papers in Python; loops run over topics, terms chosen by the user or
years at most.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from explorer.state.data import Corpus
from pipeline.model import place
from pipeline.model.label_words import stems
from pipeline.model.logodds import LogOdds, log_odds
from pipeline.model.place import nearest
from pipeline.model.topic_parts import shown_parts

#: Below this many papers NPMI coherence is not shown: measured on fewer abstracts, the score of
#: a topic's words is mostly pairs that never happen to meet (see ``benchmarks/coherence_size.py``
#: and BENCHMARKS.md, "Measures at small sizes").
MIN_PAPERS_FOR_COHERENCE = 2000


def coherence_note(corpus: Corpus) -> str | None:
    """Why the corpus's coherence is not shown (too few papers), or None when it is meaningful."""
    if corpus.n_papers >= MIN_PAPERS_FOR_COHERENCE:
        return None
    return (
        f"Coherence is not shown: NPMI counts how often a topic's words occur together, and {corpus.n_papers:,} "
        f"abstracts are too few to count that (below about {MIN_PAPERS_FOR_COHERENCE:,}, the score is off by about 0.1, "
        "as much as topics differ, and ranks them in another order)."
    )


def topic_table(corpus: Corpus, mask: np.ndarray | None = None) -> pd.DataFrame:
    """One row per topic with the evidence a reader needs to trust it.

    Columns: topic, label, size, share (0-1), shown (papers kept by the filters), growth (share
    points per year, NaN without years), coherence (NaN when the corpus is too small for it to
    mean anything: ``coherence_note``), reassigned, stability (NaN when the build has none),
    label_support (0-1, NaN when not measured or the label was written by hand), parts (a broad
    topic's parts with their papers, ``pipeline.model.topic_parts.shown_parts``; empty for the
    others), keywords (top six, comma-separated).
    """
    t = corpus.tables.topics
    k = len(t)
    coherence = t["coherence"].to_numpy(dtype=float) if "coherence" in t else np.full(k, np.nan)
    if coherence_note(corpus):
        coherence = np.full(k, np.nan)
    support = t["label_support"].to_numpy(dtype=float) if "label_support" in t else np.full(k, np.nan)
    if "curated" in t:
        support = np.where(t["curated"].to_numpy(dtype=bool), np.nan, support)
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
            "label_support": support,  # beside the label it qualifies (the Topics table shows columns in this order)
            "size": t["size"].to_numpy(),
            "share": t["share"].to_numpy(dtype=float),
            "shown": shown,
            "growth": t["growth"].to_numpy(dtype=float) if "growth" in t else np.full(k, np.nan),
            "coherence": coherence,
            "reassigned": t["n_reassigned"].to_numpy() if "n_reassigned" in t else np.zeros(k, dtype=int),
            "stability": t["stability"].to_numpy(dtype=float) if "stability" in t else np.full(k, np.nan),
            "parts": [
                " · ".join(f"{label} ({size})" for label, size, _, _ in shown_parts(row)) for _, row in t.iterrows()
            ],
            "keywords": keywords,
        }
    )


def topic_terms_of(corpus: Corpus, topic: int) -> pd.DataFrame:
    """The topic's rows of topic_terms.parquet (term, ctfidf, count, p_topic, p_corpus)."""
    tt = corpus.tables.topic_terms
    return tt[tt["topic"] == topic].reset_index(drop=True)


def nearest_topics(corpus: Corpus, pos: int, k: int = 5) -> list[tuple[int, float]]:
    """The ``k`` topics (``topics`` rows) most similar to topic row ``pos``, with cosine similarity."""
    sims = np.asarray(corpus.tables.similarity[pos], dtype=float).copy()
    sims[pos] = -np.inf
    order = np.argsort(-sims, kind="stable")[: min(k, len(sims) - 1)]
    return [(int(i), float(sims[i])) for i in order]


def topic_similarity(corpus: Corpus, rows: np.ndarray | None = None) -> np.ndarray:
    """float32 ``(len(rows),)`` (all papers when ``rows`` is None): each paper's cosine similarity
    to its topic's embedding (the normalised mean of the topic's papers' embeddings, merged topics'
    after curation), -1 to 1, NaN outside every topic (``pipeline.model.place.own_topic_similarity``)."""
    if rows is None:  # the memory map is read a block at a time
        return place.own_topic_similarity(corpus.embeddings, corpus.tables.topic_embeddings, corpus.topic_index)
    rows = np.asarray(rows, dtype=np.int64)
    return place.own_topic_similarity(
        np.asarray(corpus.embeddings[rows]), corpus.tables.topic_embeddings, corpus.topic_index[rows]
    )


def topic_similarities(corpus: Corpus, row: int) -> np.ndarray:
    """float ``(topics,)``: paper ``row``'s cosine similarity to every topic's embedding (``topics`` row order)."""
    return np.asarray(corpus.tables.topic_embeddings, dtype=np.float32) @ np.asarray(
        corpus.embeddings[row], dtype=np.float32
    )


def topic_papers(corpus: Corpus, topic: int, mask: np.ndarray) -> np.ndarray:
    """Rows of the topic's papers kept by ``mask``, most typical (most similar to the topic's
    embedding, :func:`topic_similarity`) first."""
    rows = np.flatnonzero((corpus.papers["topic"].to_numpy() == topic) & mask)
    return rows[np.argsort(-topic_similarity(corpus, rows), kind="stable")]


def representative_rows(corpus: Corpus, pos: int) -> list[int]:
    """Paper rows of the topic's representative papers (unknown ids skipped), best first."""
    ids = list(corpus.tables.topics["representative_doc_ids"].iat[pos])
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


#: |z| of the log-odds ratio above which a change is unlikely to be chance (about 95%).
SURE_Z = 1.96


def period_changes(
    counts: pd.DataFrame,
    totals: pd.Series,
    before: tuple[int, int],
    after: tuple[int, int],
    *,
    key: str,
    min_support: int,
) -> pd.DataFrame:
    """What rose and fell between two periods, for every key (term or topic) with enough support.

    Each key gets the log-odds ratio of the later period against the earlier one with an
    informative Dirichlet prior (``pipeline.model.logodds``, Monroe et al. 2008) and its z-score. The
    prior shrinks the ratio of keys seen a few times, and ranking by the ratio among keys whose
    change is sure (``|z| >= SURE_Z``) puts the terms that changed most first: "llms", "prompts",
    "diffusion" rise on NeurIPS 2016-2020 to 2021-2023, where ranking by z alone (or by the change
    in share) would lead with frequent generic words ("language", "issue", "setting").

    Args:
        counts: columns ``key``, year, n (papers of that year with the key; missing rows are zero).
        totals: papers per year (index year).
        before, after: inclusive year ranges.
        min_support: keys seen in fewer papers over both periods are left out (they still count
            in the prior and in the totals).

    Returns:
        Columns ``key``, n_before, share_before, n_after, share_after, change (share points as a
        fraction), ratio (share_after / share_before, inf when new), delta (log-odds ratio, > 0:
        rising), z (its z-score); sorted as ``emerging`` ranks (sure rises by delta, then unsure
        ones, then falls, the steepest last), ties by key.
    """
    cols = [key, "n_before", "share_before", "n_after", "share_after", "change", "ratio", "delta", "z"]
    in_before = counts["year"].between(*before)
    in_after = counts["year"].between(*after)
    total_before = int(totals[(totals.index >= before[0]) & (totals.index <= before[1])].sum())
    total_after = int(totals[(totals.index >= after[0]) & (totals.index <= after[1])].sum())
    if total_before == 0 or total_after == 0:
        return pd.DataFrame(columns=cols)
    n_before = counts[in_before].groupby(key, observed=True)["n"].sum()
    n_after = counts[in_after].groupby(key, observed=True)["n"].sum()
    table = pd.concat([n_before.rename("n_before"), n_after.rename("n_after")], axis=1).fillna(0).astype(int)
    odds = per_paper_log_odds(table["n_after"].to_numpy(), table["n_before"].to_numpy(), total_after, total_before)
    table["delta"], table["z"] = odds.delta, odds.z
    table = table[(table["n_before"] + table["n_after"]) >= min_support]
    table["share_before"] = table["n_before"] / total_before
    table["share_after"] = table["n_after"] / total_after
    table["change"] = table["share_after"] - table["share_before"]
    with np.errstate(divide="ignore", invalid="ignore"):
        table["ratio"] = table["share_after"] / table["share_before"]
    table = table.rename_axis(key).reset_index()
    table = table.assign(_sure=(table["z"].abs() >= SURE_Z) * np.sign(table["z"]))
    table = table.sort_values(["_sure", "delta", key], ascending=[False, False, True], kind="stable")
    return table[cols].reset_index(drop=True)


def per_paper_log_odds(df_a: np.ndarray, df_b: np.ndarray, papers_a: int, papers_b: int):
    """``pipeline.model.logodds.log_odds`` of document frequencies, normalised by papers.

    The log-odds of a multinomial compare each term's share of all term uses; when the abstracts of
    one side are longer (more terms each), every term would seem to fall there. One more category,
    "the rest", brings both sides to the same number of term uses per paper, so a term used by the
    same share of papers on both sides gets a log-odds ratio of zero, as its bar of shares says.

    Args:
        df_a, df_b: papers using each term on either side, ``(n_terms,)``.
        papers_a, papers_b: papers on either side.

    Returns:
        ``LogOdds`` of the terms (the extra category dropped).
    """
    a, b = np.asarray(df_a, dtype=np.float64), np.asarray(df_b, dtype=np.float64)
    per_paper = max(a.sum() / max(papers_a, 1), b.sum() / max(papers_b, 1))
    rest_a, rest_b = per_paper * papers_a - a.sum(), per_paper * papers_b - b.sum()
    odds = log_odds(np.append(a, rest_a), np.append(b, rest_b))
    return LogOdds(odds.delta[:-1], odds.z[:-1], a, b)


def emerging(table: pd.DataFrame, k: int = 12) -> pd.DataFrame:
    """The ``k`` rows of a ``period_changes`` table that rose most: sure rises (z >= ``SURE_Z``) by
    their log-odds ratio, then the unsure ones (z > 0) the same way."""
    up = table[table["z"] > 0]
    order = np.lexsort((up.iloc[:, 0].astype(str).to_numpy(), -up["delta"].to_numpy(), up["z"].to_numpy() < SURE_Z))
    return up.iloc[order].head(k)


def declining(table: pd.DataFrame, k: int = 12) -> pd.DataFrame:
    """The ``k`` rows that fell most: sure falls (z <= -``SURE_Z``) steepest first, then the unsure ones."""
    down = table[table["z"] < 0]
    order = np.lexsort(
        (down.iloc[:, 0].astype(str).to_numpy(), down["delta"].to_numpy(), down["z"].to_numpy() > -SURE_Z)
    )
    return down.iloc[order].head(k)


def distinct(terms: Sequence[str], k: int) -> list[str]:
    """The first ``k`` of ``terms`` that share no word (up to plurals) with an earlier one, so that
    "prompts" does not follow "prompt" among three suggested keywords."""
    out: list[str] = []
    seen: set[str] = set()
    for term in terms:
        words = stems(term)
        if words & seen:
            continue
        out.append(term)
        seen |= words
        if len(out) == k:
            break
    return out


def keyword_counts(corpus: Corpus) -> pd.DataFrame:
    """keyword_years.parquet as (term, year, n) for ``period_changes`` (the whole corpus)."""
    return corpus.keyword_years.rename(columns={"df": "n"})[["term", "year", "n"]]


def topic_counts(corpus: Corpus, mask: np.ndarray) -> pd.DataFrame:
    """(topic, year, n) over the papers kept by ``mask``, for ``period_changes``."""
    papers = corpus.papers[mask & corpus.papers["year"].notna().to_numpy()]
    counts = papers.groupby([papers["topic"].astype(int), papers["year"].astype(int)]).size().rename("n")
    return counts.reset_index()


#: The later period a reader compares by default: the last few years, at most this many...
RECENT_YEARS = 3
#: ... against the years just before, at most this many.
EARLIER_YEARS = 5


def default_periods(years: Sequence[int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """What a reader asks first: what rose in the last years against the years just before.

    The later period is the last third of the years, one to ``RECENT_YEARS`` of them; the earlier
    one the (up to ``EARLIER_YEARS``) years before it. NeurIPS 1987-2023: 2016-2020 against
    2021-2023; five years 2020-2024: 2020-2023 against 2024.
    """
    years = sorted(set(int(y) for y in years))
    if len(years) < 2:
        raise ValueError("two periods need at least two years")
    n_after = min(RECENT_YEARS, max(1, len(years) // 3))
    n_before = min(EARLIER_YEARS, len(years) - n_after)
    before = years[-n_after - n_before : -n_after]
    return (before[0], before[-1]), (years[-n_after], years[-1])


def fit_period(
    asked: tuple[int, int] | None, span: tuple[int, int], fallback: tuple[int, int], *, name: str
) -> tuple[tuple[int, int], str | None]:
    """A period a link asks for, fitted to the years there are, and what the reader must be told.

    Args:
        asked: the period in the link (None: not given, use ``fallback`` silently).
        span: first and last year of the papers.
        fallback: the default period.
        name: "earlier" or "later", for the note.

    Returns:
        ``(period, note)``: a period partly outside ``span`` is cut to it, one wholly outside is
        replaced by ``fallback``; the note says which (None when nothing changed).
    """
    if asked is None:
        return fallback, None
    lo, hi = max(asked[0], span[0]), min(asked[1], span[1])
    if lo > hi:
        return fallback, (
            f"The {name} period {_span(asked)} in the link lies outside the years of these papers "
            f"({_span(span)}): showing {_span(fallback)} instead."
        )
    if (lo, hi) != tuple(asked):
        return (lo, hi), (
            f"The {name} period {_span(asked)} in the link goes beyond the years of these papers "
            f"({_span(span)}): cut to {_span((lo, hi))}."
        )
    return (lo, hi), None


def period_notes(before: tuple[int, int], after: tuple[int, int]) -> list[str]:
    """What is wrong with comparing ``before`` with ``after``: overlap, or the order reversed."""
    if max(before[0], after[0]) <= min(before[1], after[1]):
        both = (max(before[0], after[0]), min(before[1], after[1]))
        return [
            f"The two periods overlap ({_span(both)} is in both): papers of those years count on both sides, "
            "which hides part of any change. Choose periods that do not overlap."
        ]
    if after[1] < before[0]:
        return [
            f"The later period ({_span(after)}) comes before the earlier one ({_span(before)}): "
            "“emerging” here means more common in the older years."
        ]
    return []


def _span(years: tuple[int, int]) -> str:
    return str(years[0]) if years[0] == years[1] else f"{years[0]}–{years[1]}"


def default_support(n_papers: int) -> int:
    """A keyword seen twice is not a trend: ask for ~0.5% of the papers, at least 5."""
    return int(max(5, round(n_papers * 0.005)))


def distinctive_support(n_papers: int) -> int:
    """Papers a term must be used by to be called distinctive of a one-year corpus: two at least
    (one paper's system name says nothing about a corpus), else about 0.5% of the papers."""
    return int(max(2, round(n_papers * 0.005)))


def distinctive_terms(terms: pd.DataFrame, n_papers: int, background, *, min_papers: int) -> pd.DataFrame:
    """The corpus's terms against a background corpus, by log-odds with an informative prior.

    Args:
        terms: the corpus vocabulary (terms.parquet: term, df).
        n_papers: papers in the corpus.
        background: ``pipeline.model.background.Background`` (document frequencies of ML abstracts).
        min_papers: terms used by fewer of the corpus's papers are left out of the result (they
            still count in the totals).

    Returns:
        Columns term, df, share (of the corpus's papers), bg_df, bg_share (of the background's
        abstracts), delta (log-odds ratio, > 0: more used here), z (its z-score); ranked as
        ``emerging`` ranks: terms surely more used here (z >= ``SURE_Z``) by delta, then the
        others. On ICML 2024 against the background: "preference optimization", "dpo", "rlhf",
        "lora", "hallucinations"; by z alone "language", "capabilities", "diverse" would lead.
    """
    cols = ["term", "df", "share", "bg_df", "bg_share", "delta", "z"]
    here = terms[["term", "df"]].astype({"term": str})
    only_bg = ~pd.Index(background.terms).isin(here["term"])
    all_terms = np.concatenate([here["term"].to_numpy(dtype=object), background.terms[only_bg]])
    a = np.concatenate([here["df"].to_numpy(dtype=np.int64), np.zeros(int(only_bg.sum()), dtype=np.int64)])
    b = np.concatenate([background.counts_for(here["term"].tolist()), background.df[only_bg]])
    if len(all_terms) == 0 or n_papers == 0:
        return pd.DataFrame(columns=cols)
    odds = per_paper_log_odds(a, b, n_papers, background.n_docs)
    keep = a >= min_papers
    out = pd.DataFrame(
        {
            "term": all_terms[keep].astype(str),
            "df": a[keep],
            "share": a[keep] / n_papers,
            "bg_df": b[keep],
            "bg_share": b[keep] / max(background.n_docs, 1),
            "delta": odds.delta[keep],
            "z": odds.z[keep],
        }
    )
    order = np.lexsort((out["term"].to_numpy(), -out["delta"].to_numpy(), out["z"].to_numpy() < SURE_Z))
    return out.iloc[order].reset_index(drop=True)


def neighbour_topics(corpus: Corpus, rows: Sequence[int], k: int = 10) -> np.ndarray:
    """The topic of each of the ``k`` papers most similar to each of ``rows`` (itself excluded).

    A paper's own neighbours say how well it fits its topic in a way that means the same at any
    corpus size: "8 of its 10 most similar papers are in this topic" is a fit; a softmax "topic
    probability" of 99% among six topics only says which topic is least far.

    Returns:
        int ``(len(rows), min(k, papers - 1))`` topic ids, most similar first.
    """
    return neighbours(corpus, rows, k)[0]


def neighbours(corpus: Corpus, rows: Sequence[int], k: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """``(topics, similarities)`` of the ``k`` papers most similar to each of ``rows`` (itself
    excluded): int and float32 ``(len(rows), min(k, papers - 1))``, most similar first."""
    rows = np.asarray(rows, dtype=np.int64)
    idx, sims = nearest(np.asarray(corpus.embeddings[rows]), corpus.embeddings, k, exclude=rows)
    return corpus.papers["topic"].to_numpy()[idx], sims


def closest_similarities(corpus: Corpus, sample: int = 1000, seed: int = 0) -> np.ndarray:
    """How similar papers' closest papers are in this corpus: each sampled paper's highest cosine
    similarity to another paper, sorted, float ``(min(sample, papers),)``. The reference for "far
    from every paper here" (the scale of cosine similarity depends on the model and the corpus)."""
    n = corpus.n_papers
    rows = np.arange(n) if n <= sample else np.sort(np.random.default_rng(seed).choice(n, sample, replace=False))
    if n < 2:
        return np.zeros(0)
    return np.sort(neighbours(corpus, rows, 1)[1][:, 0].astype(float))
