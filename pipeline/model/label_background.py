"""The corpus as background for labels: which papers use each word, the base rate a topic's use of
a term is compared with (``pipeline.model.labels``: a label's lift)."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.model.label_evidence import doc_stems

#: Papers of the corpus read for the background rates (evenly spread).
BACKGROUND_SAMPLE = 20_000


class Background:
    """Which papers of the corpus use each word: the base rate a topic's use of a term is compared with.

    Built from an even sample of at most :data:`BACKGROUND_SAMPLE` papers.
    """

    def __init__(self, docs: Sequence[str], *, limit: int = BACKGROUND_SAMPLE):
        import numpy as np

        rows = np.unique(np.linspace(0, len(docs) - 1, min(len(docs), limit)).astype(np.int64)) if len(docs) else []
        postings: dict[str, list[int]] = {}
        for i, row in enumerate(rows):
            for s in doc_stems(docs[int(row)]):
                postings.setdefault(s, []).append(i)
        self.n = len(rows)
        self._postings = {s: np.asarray(v, dtype=np.int32) for s, v in postings.items()}
        self._cache: dict[frozenset[str], object] = {}

    def rows(self, words: frozenset[str]):
        """The sampled papers (sorted int32 rows) using every stem in ``words``."""
        import numpy as np

        if words not in self._cache:
            lists = sorted((self._postings.get(s, np.zeros(0, dtype=np.int32)) for s in words), key=len)
            found = lists[0] if lists else np.zeros(0, dtype=np.int32)
            for other in lists[1:]:
                found = np.intersect1d(found, other, assume_unique=True)
            self._cache[words] = found
        return self._cache[words]

    def share(self, words: frozenset[str]) -> float:
        """Share of the sampled papers using every stem in ``words`` (0 when none does)."""
        return len(self.rows(words)) / self.n if self.n else 0.0
