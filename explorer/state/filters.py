"""The shared filters (years, venues, topics, text) and the boolean mask they select.

Pure and vectorised, no Streamlit: ``explorer.ui.filter_widgets`` draws the widgets, bound to the
URL (``explorer.state.state``), and returns the filters in force.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from explorer.state.data import Corpus

MAX_TEXT = 200


@dataclass(frozen=True)
class Filters:
    """Which papers to show. Empty means "no restriction".

    Attributes:
        years: inclusive (first, last) year, or None for all years (papers without a year are
            kept only when no year range is set).
        venues: venues to keep.
        topics: topic ids to keep.
        text: case-insensitive substring of the title or abstract (the cleaned modelling text).
    """

    years: tuple[int, int] | None = None
    venues: tuple[str, ...] = ()
    topics: tuple[int, ...] = ()
    text: str = ""

    @property
    def active(self) -> bool:
        return self.years is not None or bool(self.venues or self.topics or self.text.strip())


def clean(filters: Filters, corpus: Corpus) -> tuple[Filters, list[str]]:
    """Drop the parts of ``filters`` that do not exist in ``corpus``; say which were dropped."""
    problems = []
    years = filters.years
    span = corpus.year_span
    if years is not None:
        if span is None:
            problems.append("this corpus has no years, so the year filter was ignored")
            years = None
        else:
            lo, hi = max(years[0], span[0]), min(years[1], span[1])
            if lo > hi:
                problems.append(
                    f"no paper is from {years[0]}-{years[1]} (the corpus spans {span[0]}-{span[1]}); year filter ignored"
                )
                years = None
            else:
                years = None if (lo, hi) == span else (lo, hi)
    known_venues = set(corpus.venues)
    venues = tuple(v for v in filters.venues if v in known_venues)
    if len(venues) < len(filters.venues):
        unknown = [v for v in filters.venues if v not in known_venues]
        problems.append(f"unknown venue(s) ignored: {', '.join(unknown)}")
    known_topics = set(corpus.topic_ids.tolist())
    topics = tuple(t for t in filters.topics if t in known_topics)
    if len(topics) < len(filters.topics):
        unknown_t = [str(t) for t in filters.topics if t not in known_topics]
        problems.append(f"unknown topic(s) ignored: {', '.join(unknown_t)}")
    return replace(filters, years=years, venues=venues, topics=topics, text=filters.text[:MAX_TEXT]), problems


def apply(corpus: Corpus, filters: Filters) -> np.ndarray:
    """Boolean mask ``(papers,)`` of the papers the filters keep (vectorised, no Python loop)."""
    papers = corpus.papers
    mask = np.ones(len(papers), dtype=bool)
    if filters.years is not None:
        year = papers["year"]
        mask &= ((year >= filters.years[0]) & (year <= filters.years[1])).fillna(False).to_numpy(dtype=bool)
    if filters.venues:
        mask &= papers["venue"].isin(filters.venues).to_numpy(dtype=bool)
    if filters.topics:
        mask &= papers["topic"].isin(filters.topics).to_numpy(dtype=bool)
    text = filters.text.strip()
    if text:
        hit = papers["model_text"].str.contains(text, case=False, regex=False) | papers["title"].str.contains(
            text, case=False, regex=False
        )
        mask &= hit.fillna(False).to_numpy(dtype=bool)
    return mask


def describe(corpus: Corpus, filters: Filters, mask: np.ndarray) -> str:
    """One line saying what the filters keep, e.g. "Showing 40 of 137 papers (2021-2022, 'graph')"."""
    parts = []
    if filters.years is not None:
        parts.append(
            f"{filters.years[0]}-{filters.years[1]}" if filters.years[0] != filters.years[1] else str(filters.years[0])
        )
    if filters.venues:
        parts.append(", ".join(filters.venues) if len(filters.venues) <= 2 else f"{len(filters.venues)} venues")
    if filters.topics:
        parts.append(f"{len(filters.topics)} topic{'s' if len(filters.topics) > 1 else ''}")
    if filters.text.strip():
        parts.append(f"text “{filters.text.strip()}”")
    kept = int(mask.sum())
    line = f"{kept:,} of {corpus.n_papers:,} papers"
    return line + (f" · {'; '.join(parts)}" if parts else "")
