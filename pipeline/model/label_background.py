"""The corpus as background for labels: which papers use each word, the base rate a topic's use of
a term is compared with (``pipeline.model.labels``: a label's lift), and how often the papers that
use a term put it in their title (a label names a subject, not a setting)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.core.ranking import evenly_spread
from pipeline.model.label_candidates import doc_stems

#: Papers of the corpus read for the background rates (evenly spread).
BACKGROUND_SAMPLE = 20_000


class Background:
    """Which papers of the corpus use each word: the base rate a topic's use of a term is compared with.

    Built from an even sample of at most :data:`BACKGROUND_SAMPLE` papers. With ``titles`` (one per
    paper, aligned with ``docs``; None or "" where a paper has no title of its own, such as one
    made from its abstract) it also knows which of those papers use a word in their title.
    """

    def __init__(
        self, docs: Sequence[str], *, titles: Sequence[str | None] | None = None, limit: int = BACKGROUND_SAMPLE
    ):
        if titles is not None and len(titles) != len(docs):
            raise ValueError(f"{len(titles)} titles for {len(docs)} papers")
        rows = evenly_spread(len(docs), limit)
        postings: dict[str, list[int]] = {}
        in_titles: dict[str, list[int]] = {}
        titled: list[int] = []
        for i, row in enumerate(rows):
            for s in doc_stems(docs[int(row)]):
                postings.setdefault(s, []).append(i)
            title = titles[int(row)] if titles is not None else None
            if title:
                titled.append(i)
                for s in doc_stems(title):
                    in_titles.setdefault(s, []).append(i)
        self.n = len(rows)
        self._postings = {s: np.asarray(v, dtype=np.int32) for s, v in postings.items()}
        self._titles = {s: np.asarray(v, dtype=np.int32) for s, v in in_titles.items()}
        self._titled = None  # bool (n,): the sampled papers with a title of their own
        if titles is not None:
            self._titled = np.zeros(self.n, dtype=bool)
            self._titled[titled] = True
        self._cache: dict[frozenset[str], object] = {}
        self._title_cache: dict[frozenset[str], object] = {}
        self._shares: dict[frozenset[str], float] = {}

    @property
    def has_titles(self) -> bool:
        """Whether the papers' titles were given (:meth:`title_share` answers)."""
        return self._titled is not None

    @staticmethod
    def _all(postings: dict, words: frozenset[str], cache: dict):
        if words not in cache:
            lists = sorted((postings.get(s, np.zeros(0, dtype=np.int32)) for s in words), key=len)
            found = lists[0] if lists else np.zeros(0, dtype=np.int32)
            for other in lists[1:]:
                found = np.intersect1d(found, other, assume_unique=True)
            cache[words] = found
        return cache[words]

    def rows(self, words: frozenset[str]):
        """The sampled papers (sorted int32 rows) using every stem in ``words``."""
        return self._all(self._postings, words, self._cache)

    def share(self, words: frozenset[str]) -> float:
        """Share of the sampled papers using every stem in ``words`` (0 when none does)."""
        return len(self.rows(words)) / self.n if self.n else 0.0

    def title_share(self, words: frozenset[str]) -> float | None:
        """Of the sampled papers with a title that use every stem in ``words`` (title or abstract),
        the share whose title uses them all, with one use and one non-use added (Laplace: a term
        few papers use is not judged on two of them); None without titles."""
        if self._titled is None:
            return None
        if words not in self._shares:
            rows = self.rows(words)
            using = rows[self._titled[rows]]
            in_title = np.intersect1d(using, self._all(self._titles, words, self._title_cache), assume_unique=True)
            self._shares[words] = (len(in_title) + 1) / (len(using) + 2)
        return self._shares[words]


def own_titles(papers) -> list[str | None]:
    """The papers' titles for :class:`Background`, None where a title was made from the abstract
    (``title_derived``: its words are the abstract's, not a title's); from a papers table with a
    ``title`` column."""
    titles = papers["title"].tolist()
    derived = papers["title_derived"].tolist() if "title_derived" in papers else [False] * len(titles)
    return [str(t) if isinstance(t, str) and t and not d else None for t, d in zip(titles, derived, strict=True)]
