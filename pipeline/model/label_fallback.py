"""Labels where the papers cannot be read or no candidate passed the checks (``pipeline.model.labels``)."""

from __future__ import annotations

from pipeline.model.label_candidates import PhraseStats, TopicTerms, candidate_terms, is_generic
from pipeline.model.label_words import terms_overlap


def fallback_label(terms: TopicTerms, text: PhraseStats | None, max_words: int) -> str:
    """The best terms that passed the checks, else the best distinctive terms the papers write."""
    words = [t for t, _ in candidate_terms(terms, min_papers=1, text=text)][:1]
    if not words:
        written = [t for t, _ in terms.ctfidf if t and not is_generic(t) and (not terms.text or f" {t} " in terms.text)]
        words = written[:1] + [t for t in written[1:] if not terms_overlap(t, written[0])][:1]
    if len(words) == 2 and len(" ".join(words).split()) + 1 <= max_words:
        return " and ".join(words)
    if words and len(words[0].split()) <= max_words:
        return words[0]
    return "miscellaneous topics"


def unread_options(cands: list[tuple[str, float]]) -> list[str]:
    """Labels from the representations alone (no papers to read): a phrase; a word, replaced by
    the best phrase built on it or joined to the next term that shares no word with it."""
    out: list[str] = []
    for i, (first, score) in enumerate(cands[:10]):
        if " " in first:
            out.append(first)
            continue
        built = [t for t, s in cands if " " in t and terms_overlap(first, t) and s >= 0.4 * score]
        seconds = [t for t, _ in cands[i + 1 : 12] if not terms_overlap(first, t) and len(t.split()) <= 2]
        out += built[:1] + [f"{first} and {t}" for t in seconds[:1]] + [first]
    return list(dict.fromkeys(out))
