"""A topic's keywords: its best c-TF-IDF terms, one form of each.

c-TF-IDF ranks each form of a term apart, so a topic's ten keywords held "image" and "images",
"LLM" and "LLMs", "neural network" and "neural networks": on 22 one-year conferences one keyword
in ten was a second form of another (EVALUATION.md, "One form of each keyword"). The list keeps
the better-ranked form and takes the next term in its place (``label_words.term_key`` says which
forms are one term).
"""

from __future__ import annotations

import numpy as np

from pipeline.model.label_words import one_form_each

#: Terms of a topic's c-TF-IDF ranking read to fill its keywords, per keyword asked for.
FILL_DEPTH = 4


def one_form_terms(ranked: list[tuple[str, float]], limit: int) -> list[tuple[str, float]]:
    """The first ``limit`` of a topic's ``(term, weight)`` ranking, one form of each term: what
    :func:`one_form_keywords` keeps from the top ``limit * FILL_DEPTH`` terms of the same ranking."""
    return [ranked[j] for j in one_form_each([t for t, _ in ranked[: limit * FILL_DEPTH]], limit)]


def one_form_keywords(rows: list[dict], ctfidf, terms: np.ndarray, limit: int) -> list[dict]:
    """``rows`` (one per topic, in ``ctfidf``'s row order) with ``keywords`` and ``keyword_weights``
    holding one form of each term: where BERTopic's list holds two forms of a term, the second
    goes and the next terms of the topic's c-TF-IDF row (``terms`` names its columns; ties by
    column) fill the list up to ``limit``. A list without two forms is left as it is."""
    out = []
    for i, row in enumerate(rows):
        keywords, weights = list(row["keywords"]), list(row["keyword_weights"])
        if len(one_form_each(keywords, len(keywords))) < len(keywords):
            scores = ctfidf[i].toarray().ravel()
            ranked = np.argsort(-scores, kind="stable")[: limit * FILL_DEPTH]
            extra = [(str(terms[j]), float(scores[j])) for j in ranked if scores[j] > 0 and terms[j] not in keywords]
            keywords, weights = keywords + [t for t, _ in extra], weights + [w for _, w in extra]
            keep = one_form_each(keywords, limit)
            row = {**row, "keywords": [keywords[j] for j in keep], "keyword_weights": [weights[j] for j in keep]}
        out.append(row)
    return out
