"""A topic's keywords: its best c-TF-IDF terms, one form of each, none only a part of another.

c-TF-IDF ranks each form of a term apart, so a topic's ten keywords held "image" and "images",
"LLM" and "LLMs", "neural network" and "neural networks": on 22 one-year conferences one keyword
in ten was a second form of another (EVALUATION.md, "One form of each keyword"). It also ranks a
word beside the two-word term its papers write it in ("series" beside "time series",
"reinforcement" beside "reinforcement learning"). The list keeps the better-ranked form of a
term, leaves out a word that its list's longer keyword holds in most of the word's uses in the
topic (the share by which the labels complete a phrase: ``label_candidates.PREFIX_SHARE`` for the
word before, more than half for the word after), and takes the next terms of the ranking in their
places (``label_words.term_key`` says which forms are one term).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pipeline.model.label_candidates import PREFIX_SHARE
from pipeline.model.label_words import one_form_each

#: Terms of a topic's c-TF-IDF ranking read to fill its keywords, per keyword asked for.
FILL_DEPTH = 4
#: A term that starts a longer keyword in more than this share of its uses is a part of it (the
#: labels complete a phrase by the word after it at more than half, ``label_candidates.phrase``).
NEXT_SHARE = 0.5


def keyword_list(
    ranked: Sequence[tuple[str, float]], count: Callable[[str], float], limit: int
) -> list[tuple[str, float]]:
    """The first ``limit`` of a topic's ``(term, weight)`` ranking (its top ``limit *
    FILL_DEPTH``), one form of each term and no term that a longer one of the list holds in most
    of its uses; ``count`` gives a term's uses in the topic's papers."""
    ranked = list(ranked[: limit * FILL_DEPTH])
    pool = [ranked[j] for j in one_form_each([t for t, _ in ranked], len(ranked))]
    left_out: set[str] = set()
    while True:  # a term that comes in may hold one kept before: until nothing more is left out
        kept = [(t, w) for t, w in pool if t not in left_out][:limit]
        terms = [t for t, _ in kept]
        inside = {t for t in terms if part_of_another(t, terms, count)}
        if not inside:
            return kept
        left_out |= inside


def part_of_another(term: str, terms: Sequence[str], count: Callable[[str], float]) -> bool:
    """Whether a longer term of ``terms`` starts or ends with ``term``'s words and holds most of its
    uses (more than :data:`NEXT_SHARE` of them where it starts with them, more than
    ``PREFIX_SHARE`` where it ends with them): "series" in "time series"."""
    words = term.split()
    uses = count(term)
    if uses <= 0:
        return False
    for other in terms:
        longer = other.split()
        if len(longer) <= len(words):
            continue
        if longer[: len(words)] == words and count(other) > NEXT_SHARE * uses:
            return True
        if longer[-len(words) :] == words and count(other) > PREFIX_SHARE * uses:
            return True
    return False


def term_uses(labels: np.ndarray, dt, topic: int) -> Callable[[str], float]:
    """A term's uses in topic ``topic``'s papers (the sum of their counts in ``dt``, a
    ``vocab.DocTerms``): what ``topic_terms.parquet``'s ``count`` holds for the build's topics."""
    sums = np.asarray(dt.counts[np.flatnonzero(np.asarray(labels) == topic)].sum(axis=0)).ravel()

    def count(term: str) -> float:
        column = dt.vocabulary.get(term, -1)
        return float(sums[column]) if column >= 0 else 0.0

    return count


def topic_keywords(rows: list[dict], ctfidf, terms: np.ndarray, term_table, limit: int) -> list[dict]:
    """``rows`` (one per topic, with its ``topic`` id, in ``ctfidf``'s row order) with ``keywords``
    and ``keyword_weights`` made by :func:`keyword_list` from each topic's c-TF-IDF row (``terms``
    names its columns; ties by column) and its terms' uses in its papers (``term_table``: the
    ``topic_terms.parquet`` rows, ``count``); a list that needs no change is left as BERTopic
    gave it."""
    uses = {int(t): dict(zip(g["term"], g["count"], strict=True)) for t, g in term_table.groupby("topic")}
    out = []
    for i, row in enumerate(rows):
        given = list(zip(row["keywords"], row["keyword_weights"], strict=True))
        counts = uses.get(int(row["topic"]), {})

        def count(term: str, counts=counts) -> float:
            return float(counts.get(term, 0.0))

        if keyword_list(given, count, len(given)) != given:
            scores = ctfidf[i].toarray().ravel()
            order = np.argsort(-scores, kind="stable")[: limit * FILL_DEPTH]
            kept = keyword_list([(str(terms[j]), float(scores[j])) for j in order if scores[j] > 0], count, limit)
            row = {**row, "keywords": [t for t, _ in kept], "keyword_weights": [w for _, w in kept]}
        out.append(row)
    return out
