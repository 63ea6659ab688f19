"""Short topic labels a person would write ("diffusion sampling", "graph neural networks").

Built without a language model from the topic's representations: c-TF-IDF terms (bigrams
preferred: a phrase says more than a word), confirmed by KeyBERTInspired and MMR. Labels are unique
within a corpus and never made only of generic words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.vocab import ACADEMIC_STOP_WORDS

#: Words that may appear in a label but cannot be a label on their own.
GENERIC_WORDS = ACADEMIC_STOP_WORDS | frozenset(
    """
    learning data neural network networks algorithm algorithms training deep machine system systems
    analysis information function functions time based framework model models approach method
    methods paper results task tasks problem problems application applications design process
    performance accuracy experiments theory theoretical empirical empirically efficient efficiency
    structure structures input output inputs outputs feature features representation representations
    set sets space spaces value values level levels type types case cases method-based general
    """.split()
)


@dataclass(frozen=True)
class TopicTerms:
    """A topic's representations, best first."""

    ctfidf: list[tuple[str, float]]
    keybert: list[str] = field(default_factory=list)
    mmr: list[str] = field(default_factory=list)


def is_generic(term: str) -> bool:
    """True when every word of ``term`` is generic (or it has no words)."""
    words = term.split()
    return not words or all(w in GENERIC_WORDS for w in words)


def _candidates(terms: TopicTerms, depth: int = 20) -> list[str]:
    """Terms ranked by c-TF-IDF, with a bonus for agreement with KeyBERT/MMR and for phrases."""
    if not terms.ctfidf:
        return []
    top = max((w for _, w in terms.ctfidf[:depth]), default=0.0) or 1.0
    keybert, mmr = set(terms.keybert), set(terms.mmr)
    scored: dict[str, float] = {}
    for rank, (term, weight) in enumerate(terms.ctfidf[:depth]):
        if not term or is_generic(term):
            continue
        score = weight / top + 0.3 * (term in keybert) + 0.15 * (term in mmr) - 0.01 * rank
        if " " in term:
            score *= 1.25
        scored[term] = score
    for term in terms.keybert[:10]:  # KeyBERT may surface a term c-TF-IDF ranked lower
        if term not in scored and not is_generic(term):
            scored[term] = 0.35 * (1.25 if " " in term else 1.0)
    return sorted(scored, key=lambda t: (-scored[t], t))


def _overlaps(a: str, b: str) -> bool:
    wa, wb = set(a.split()), set(b.split())
    return bool(wa & wb)


def label_for(terms: TopicTerms, taken: set[str]) -> str:
    """One topic's label, avoiding labels in ``taken``."""
    cands = _candidates(terms)
    if not cands:
        fallback = [t for t, _ in terms.ctfidf[:3] if t]
        base = ", ".join(fallback[:2]) or "miscellaneous"
        label = base
    else:
        first = cands[0]
        if " " not in first:
            phrase = next((c for c in cands[1:6] if " " in c and first in c.split()), None)
            if phrase:
                first = phrase
        label = first
        if " " not in label:
            second = next((c for c in cands[1:] if not _overlaps(c, label)), None)
            if second and len(second.split()) + 1 <= 4:
                label = f"{label}, {second}"
    # Uniqueness: extend with the next distinguishing term, then number as a last resort.
    if label in taken:
        for extra in cands:
            if not _overlaps(extra, label):
                candidate = f"{label}, {extra}"
                if candidate not in taken and len(candidate.split()) <= 6:
                    label = candidate
                    break
    base, n = label, 2
    while label in taken:
        label = f"{base} ({n})"
        n += 1
    return label


def make_labels(topics: dict[int, TopicTerms], order: list[int] | None = None) -> dict[int, str]:
    """Labels for all topics; larger topics (earlier in ``order``) choose first."""
    taken: set[str] = set()
    labels: dict[int, str] = {}
    for topic in order or sorted(topics):
        label = label_for(topics[topic], taken)
        labels[topic] = label
        taken.add(label)
    return labels
