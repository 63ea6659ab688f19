"""Yearly trends: papers per year, topic shares and keyword document frequencies.

Every share is normalised by the papers present that year (corpora sample years unevenly). Counts
are taken from each year's own papers only, so a term first used in 2020 has zero frequency in
every earlier year: nothing of later years' vocabulary leaks backwards.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from pipeline.model.label_case import written_term
from pipeline.model.vocab import DocTerms


@dataclass(frozen=True)
class Trends:
    """Tables described in ``schema.TERM_COLUMNS``, ``YEAR_COLUMNS``, ``TOPIC_YEAR_COLUMNS`` and
    ``KEYWORD_YEAR_COLUMNS``; the yearly ones are empty when no paper has a year."""

    terms: pd.DataFrame
    years: pd.DataFrame
    topic_years: pd.DataFrame
    keyword_years: pd.DataFrame


def term_table(dt: DocTerms, written: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Each vocabulary term with the number and share of papers using it, most used first, and the
    term as the papers write it (``written``: ``pipeline.model.label_case.corpus_forms``)."""
    n = dt.counts.shape[0]
    df = np.asarray(dt.presence().sum(axis=0)).ravel().astype(np.int32)
    terms = dt.terms.astype(str)
    out = pd.DataFrame({"term": terms, "df": df, "share": df / max(n, 1), "written": written_terms(terms, written)})
    return out.sort_values(["df", "term"], ascending=[False, True], kind="stable").reset_index(drop=True)


def written_terms(terms, written: Mapping[str, str] | None) -> list[str]:
    """Each of ``terms`` as the papers write it (``written``: lower-case word -> its form), or as it is."""
    return [written_term(t, written) for t in terms] if written else [str(t) for t in terms]


def compute_trends(
    years: pd.Series, topics: np.ndarray, dt: DocTerms, written: Mapping[str, str] | None = None
) -> Trends:
    """Compute the trend tables.

    Args:
        years: nullable int ``(n,)`` year per paper.
        topics: int ``(n,)`` topic per paper.
        dt: paper-by-term counts, rows aligned with ``years``.
        written: the corpus's written forms of words (``pipeline.model.label_case.corpus_forms``),
            for ``terms``'s ``written``; None: every term as it is.
    """
    terms = term_table(dt, written)
    year_values = pd.array(years, dtype="Int64")
    has_year = ~pd.isna(year_values)
    empty_years = pd.DataFrame({"year": pd.Series(dtype="int32"), "n_papers": pd.Series(dtype="int32")})
    empty_ty = pd.DataFrame(
        {
            "topic": pd.Series(dtype="int32"),
            "year": pd.Series(dtype="int32"),
            "n": pd.Series(dtype="int32"),
            "share": pd.Series(dtype="float64"),
        }
    )
    empty_ky = pd.DataFrame(
        {
            "term": pd.Series(dtype=str),
            "year": pd.Series(dtype="int32"),
            "df": pd.Series(dtype="int32"),
            "share": pd.Series(dtype="float64"),
        }
    )
    if not has_year.any():
        return Trends(terms, empty_years, empty_ty, empty_ky)

    y, uniq_years, year_idx, n_per_year, years_df, topic_years = _year_tables(year_values, has_year, topics)
    counts = _keyword_year_counts(dt, has_year, y, uniq_years, year_idx)
    keyword_years = pd.DataFrame(
        {
            "term": pd.Categorical.from_codes(counts.col, categories=dt.terms.astype(str)),
            "year": uniq_years[counts.row].astype(np.int32),
            "df": counts.data.astype(np.int32),
        }
    )
    keyword_years["share"] = keyword_years["df"] / n_per_year[counts.row]
    keyword_years = keyword_years.sort_values(["term", "year"], kind="stable").reset_index(drop=True)
    return Trends(terms, years_df, topic_years, keyword_years)


def _year_tables(year_values, has_year, topics: np.ndarray):
    """Papers per year and each topic's count and share of each year's papers."""
    y = np.asarray(year_values[has_year], dtype=np.int64)
    t = np.asarray(topics)[np.asarray(has_year)]
    uniq_years, year_idx = np.unique(y, return_inverse=True)
    n_per_year = np.bincount(year_idx).astype(np.int32)
    years_df = pd.DataFrame({"year": uniq_years.astype(np.int32), "n_papers": n_per_year})

    topic_ids = np.unique(topics)
    topic_idx = np.searchsorted(topic_ids, t)
    grid = np.zeros((len(topic_ids), len(uniq_years)), dtype=np.int32)
    np.add.at(grid, (topic_idx, year_idx), 1)
    topic_years = pd.DataFrame(
        {
            "topic": np.repeat(topic_ids, len(uniq_years)).astype(np.int32),
            "year": np.tile(uniq_years, len(topic_ids)).astype(np.int32),
            "n": grid.ravel(),
        }
    )
    topic_years["share"] = topic_years["n"] / np.tile(n_per_year, len(topic_ids))
    return y, uniq_years, year_idx, n_per_year, years_df, topic_years


def _previous_written(previous: pd.DataFrame, terms: np.ndarray) -> list[str]:
    """The previous build's ``written`` of each of ``terms`` (the vocabulary is kept; so are the
    forms its papers gave it); a build made before the column: each term as it is."""
    if "written" not in previous:
        return [str(t) for t in terms]
    written = previous.set_index(previous["term"].astype(str))["written"].astype(str).reindex(terms)
    return [w if isinstance(w, str) else str(t) for t, w in zip(terms, written, strict=True)]


def _keyword_year_counts(dt: DocTerms, has_year, y, uniq_years, year_idx) -> sparse.coo_matrix:
    """Keyword document frequency per year: (years x papers) @ (papers x terms) presence."""
    presence = dt.presence()[np.flatnonzero(np.asarray(has_year))]
    year_matrix = sparse.csr_matrix(
        (np.ones(len(y), dtype=np.int32), (year_idx, np.arange(len(y)))), shape=(len(uniq_years), len(y))
    )
    return (year_matrix @ presence).tocoo()


def add_papers(previous: Trends, years: pd.Series, topics: np.ndarray, new: np.ndarray, new_terms: DocTerms) -> Trends:
    """The trend tables with papers added, from the previous build's counts and the new papers' alone.

    An incremental build keeps the fitted vocabulary (``previous.terms``): the new papers are
    counted on it (``new_terms``, rows of ``new`` papers, columns ``previous.terms`` in sorted order)
    and their counts added to the stored ones, so adding papers costs their own counting, not a
    recount of the corpus. Papers per year and topic shares are recounted from ``years`` and
    ``topics`` (arrays, cheap).

    Args:
        previous: the previous build's terms and keyword_years (its years and topic_years are unused).
        years: nullable int ``(n,)`` year of every paper; topics: int ``(n,)`` topic of every paper.
        new: bool ``(n,)`` the papers added (all others are the previous build's).
        new_terms: the added papers' counts, ``(new.sum(), len(previous.terms))``.
    """
    n = len(topics)
    terms_sorted = np.sort(previous.terms["term"].astype(str).to_numpy())
    df = previous.terms.set_index(previous.terms["term"].astype(str))["df"].reindex(terms_sorted).fillna(0)
    df = df.to_numpy(dtype=np.int64) + np.asarray(new_terms.presence().sum(axis=0)).ravel()
    terms = pd.DataFrame({"term": terms_sorted, "df": df.astype(np.int32), "share": df / max(n, 1)})
    terms["written"] = _previous_written(previous.terms, terms_sorted)
    terms = terms.sort_values(["df", "term"], ascending=[False, True], kind="stable").reset_index(drop=True)

    year_values = pd.array(years, dtype="Int64")
    has_year = ~pd.isna(year_values)
    if not has_year.any():
        empty = compute_trends(years, topics, DocTerms(sparse.csr_matrix((n, 0), dtype=np.int32), np.array([])))
        return Trends(terms, empty.years, empty.topic_years, empty.keyword_years)
    y, uniq_years, year_idx, n_per_year, years_df, topic_years = _year_tables(year_values, has_year, topics)
    new_has_year = np.asarray(has_year)[new]
    new_y = np.asarray(year_values[new][new_has_year], dtype=np.int64)
    new_idx = np.searchsorted(uniq_years, new_y)
    added = _keyword_year_counts(new_terms, new_has_year, new_y, uniq_years, new_idx)
    old = previous.keyword_years[["term", "year", "df"]].assign(term=lambda t: t["term"].astype(str))
    both = pd.concat(
        [old, pd.DataFrame({"term": terms_sorted[added.col], "year": uniq_years[added.row], "df": added.data})],
        ignore_index=True,
    )
    keyword_years = both.groupby(["term", "year"], as_index=False, sort=True)["df"].sum()
    keyword_years = keyword_years[keyword_years["df"] > 0]
    per_year = pd.Series(n_per_year, index=uniq_years)
    keyword_years = pd.DataFrame(
        {
            "term": pd.Categorical(keyword_years["term"], categories=terms_sorted),
            "year": keyword_years["year"].astype(np.int32).to_numpy(),
            "df": keyword_years["df"].astype(np.int32).to_numpy(),
            "share": keyword_years["df"].to_numpy() / per_year.reindex(keyword_years["year"]).to_numpy(),
        }
    )
    return Trends(terms, years_df, topic_years, keyword_years.reset_index(drop=True))


def growth_per_year(topic_years: pd.DataFrame) -> dict[int, float]:
    """Least-squares slope of each topic's yearly share, in percentage points per year."""
    out: dict[int, float] = {}
    for topic, grp in topic_years.groupby("topic"):
        if grp["year"].nunique() < 2:
            continue
        x = grp["year"].to_numpy(dtype=float)
        y = grp["share"].to_numpy(dtype=float) * 100
        slope = np.polyfit(x, y, 1)[0]
        out[int(topic)] = float(slope) if math.isfinite(slope) else 0.0
    return out
