"""A topic's keywords: its best c-TF-IDF terms, one form of each, none only a part of another.

c-TF-IDF ranks each form of a term apart, so a topic's ten keywords held "image" and "images",
"LLM" and "LLMs", "neural network" and "neural networks": on 22 one-year conferences one keyword
in ten was a second form of another (EVALUATION.md, "One form of each keyword"). It also ranks a
word beside the two-word term its papers write it in ("series" beside "time series",
"reinforcement" beside "reinforcement learning"). The list keeps the better-ranked form of a
term, leaves out a word that its list's longer keyword holds in most of the word's uses in the
topic (the share by which the labels complete a phrase: ``label_candidates.PREFIX_SHARE`` for the
word before, more than half for the word after), and takes the next terms of the ranking in their
places (``label_words.term_key`` says which forms are one term). Each keyword is then written as
the phrase most of its term's uses in the topic sit in, as the labels complete theirs
(``label_candidates.PhraseStats.phrase``): the vocabulary holds terms of one and two words, so
c-TF-IDF ranks "series forecasting", "graph neural" and "partial differential", which the papers
write as "time series forecasting", "graph neural networks" and "partial differential equations";
two terms written as one phrase are one keyword.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from pipeline.model.label_candidates import PREFIX_SHARE, PhraseStats
from pipeline.model.label_words import one_form_each, term_key

#: Terms of a topic's c-TF-IDF ranking read to fill its keywords, per keyword asked for.
FILL_DEPTH = 4
#: A term that starts a longer keyword in more than this share of its uses is a part of it (the
#: labels complete a phrase by the word after it at more than half, ``label_candidates.phrase``).
NEXT_SHARE = 0.5
#: A keyword is written as a longer phrase only where at least this many of the topic's papers
#: write that phrase: one paper repeating its own method's name is no phrase of the topic's.
MIN_PHRASE_PAPERS = 2


def keyword_list(
    ranked: Sequence[tuple[str, float]],
    count: Callable[[str], float],
    limit: int,
    written: Callable[[str], str] | None = None,
) -> list[tuple[str, float]]:
    """The first ``limit`` of a topic's ``(term, weight)`` ranking (its top ``limit *
    FILL_DEPTH``), one form of each term and no term that a longer one of the list holds in most
    of its uses; ``count`` gives a term's uses in the topic's papers. With ``written`` (a term ->
    the phrase the papers write it in), no two terms of the list whose phrases are forms of one."""
    ranked = list(ranked[: limit * FILL_DEPTH])
    pool = [ranked[j] for j in one_form_each([t for t, _ in ranked], len(ranked))]
    left_out: set[str] = set()
    while True:  # a term that comes in may hold one kept before: until nothing more is left out
        kept = [(t, w) for t, w in pool if t not in left_out][:limit]
        terms = [t for t, _ in kept]
        inside = {t for t in terms if part_of_another(t, terms, count)}
        if not inside and written is not None:  # parts first: "reinforcement" goes, "reinforcement learning" stays
            inside = same_phrase(terms, written)
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


def same_phrase(terms: Sequence[str], written: Callable[[str], str]) -> set[str]:
    """The terms of ``terms`` whose phrase (``written``) is a form of an earlier term's phrase:
    "neural networks" after "graph neural" where both are "graph neural networks"."""
    seen: set[tuple[str, ...]] = set()
    later: set[str] = set()
    for term in terms:
        key = term_key(written(term))
        if key in seen:
            later.add(term)
        seen.add(key)
    return later


def phrase_of(text: PhraseStats | str | None) -> Callable[[str], str]:
    """A term -> the phrase a topic's papers write it in (``text``: their
    ``label_candidates.topic_text``, or its ``PhraseStats``), completed as the labels complete a
    candidate (``PhraseStats.phrase``: by the word after it in more than half of its uses, else the
    word before it in more than ``PREFIX_SHARE``, to at most four words, written in at least
    :data:`MIN_PHRASE_PAPERS` of the papers); the term itself where they agree on none, never
    write it or there is no text."""
    stats = text if isinstance(text, PhraseStats) else (PhraseStats(text) if text else None)
    found: dict[str, str] = {}

    def written(term: str) -> str:
        if stats is None:
            return term
        if term not in found:
            phrase = stats.phrase(term)
            longer = phrase is not None and phrase.term != term
            papers = round(stats.doc_share(phrase.term) * stats.n_docs) if longer else 0
            found[term] = phrase.term if longer and papers >= MIN_PHRASE_PAPERS else term
        return found[term]

    return written


def term_uses(labels: np.ndarray, dt, topic: int) -> Callable[[str], float]:
    """A term's uses in topic ``topic``'s papers (the sum of their counts in ``dt``, a
    ``vocab.DocTerms``): what ``topic_terms.parquet``'s ``count`` holds for the build's topics."""
    sums = np.asarray(dt.counts[np.flatnonzero(np.asarray(labels) == topic)].sum(axis=0)).ravel()

    def count(term: str) -> float:
        column = dt.vocabulary.get(term, -1)
        return float(sums[column]) if column >= 0 else 0.0

    return count


def topic_keywords(
    rows: list[dict],
    ctfidf,
    terms: np.ndarray,
    term_table,
    limit: int,
    texts: Mapping[int, PhraseStats | str] | None = None,
) -> list[dict]:
    """``rows`` (one per topic, with its ``topic`` id, in ``ctfidf``'s row order) with
    ``keyword_terms`` and ``keyword_weights`` made by :func:`keyword_list` from each topic's
    c-TF-IDF row (``terms`` names its columns; ties by column) and its terms' uses in its papers
    (``term_table``: the ``topic_terms.parquet`` rows, ``count``), and ``keywords``: those terms
    as the phrases its papers write them in (:func:`phrase_of` on ``texts[topic]``, a
    ``label_candidates.topic_text`` of its papers or its ``PhraseStats``; none given: the terms).
    A list that needs no change keeps BERTopic's terms."""
    uses = {int(t): dict(zip(g["term"], g["count"], strict=True)) for t, g in term_table.groupby("topic")}
    out = []
    for i, row in enumerate(rows):
        given = list(zip(row["keywords"], row["keyword_weights"], strict=True))
        counts = uses.get(int(row["topic"]), {})
        written = phrase_of((texts or {}).get(int(row["topic"])))

        def count(term: str, counts=counts) -> float:
            return float(counts.get(term, 0.0))

        kept = given
        if keyword_list(given, count, len(given), written) != given:
            scores = ctfidf[i].toarray().ravel()
            order = np.argsort(-scores, kind="stable")[: limit * FILL_DEPTH]
            kept = keyword_list(
                [(str(terms[j]), float(scores[j])) for j in order if scores[j] > 0], count, limit, written
            )
        out.append(
            {
                **row,
                "keywords": [written(t) for t, _ in kept],
                "keyword_terms": [t for t, _ in kept],
                "keyword_weights": [w for _, w in kept],
            }
        )
    return out
