"""The word forms labels are compared by: stems (plurals folded), near-duplicate words ("spike" /
"spiking"), abbreviations ("gnn" / "graph neural networks") and the key under which two labels
are the same label. Read by the label candidates, their choice and their evidence alike, and by
the keywords (one form of each term: :func:`term_key`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence


def english_stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def stem(word: str) -> str:
    """Singular, lower-case: "bandits" -> "bandit", "policies" -> "policy"."""
    word = word.lower()
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    return word


def other_number(word: str) -> str:
    """The word's other number as a label would write it: "graphs" -> "graph", "graph" -> "graphs"
    ("loss" -> "losss": callers keep it only where the papers write it)."""
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word + "s"


def stems_of(term: str) -> set[str]:
    return {stem(p) for w in term.split() for p in w.split("-") if p}


@functools.lru_cache(maxsize=200_000)
def word_stems(word: str) -> frozenset[str]:
    return frozenset(stems_of(word))


def stems(term: str) -> set[str]:
    """The words of ``term`` in singular, lower case, hyphenated words also by part."""
    return stems_of(term)


#: Endings by which a word and its relatives differ ("spike"/"spiking", "image"/"imaging",
#: "layer"/"layered"); one is taken off at most, and at least 3 letters must remain.
_ENDINGS = ("ing", "ed", "er", "e")


def _root(word: str) -> str:
    for ending in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


def same_word(a: str, b: str) -> bool:
    """Near-duplicates: "bandit"/"bandits", "planning"/"planner", "handwriting"/"handwritten",
    "spike"/"spiking" (so "spiking neural networks and spike" is one subject named twice)."""
    if a == b:
        return True
    common = len(os.path.commonprefix([a, b]))
    if common >= 5 or (min(len(a), len(b)) >= 3 and common == min(len(a), len(b))):
        return True
    ra, rb = _root(a), _root(b)
    return ra in (rb, b) or a == rb


def is_abbreviation(short: str, term: str) -> bool:
    """ "llms" abbreviates "language models" (also "large language models"), "gnn" "graph neural networks"."""
    words = [stem(w) for w in term.split()]
    short = stem(short)
    if len(words) < 2 or not 2 <= len(short) <= 5:
        return False
    initials = "".join(w[0] for w in words)
    return initials.endswith(short) or short.endswith(initials)


def label_key(label: str) -> frozenset[str]:
    """Labels that differ only in plurals, order or joining words are the same label."""
    return frozenset(stems_of(label.replace(" and ", " ")))


def terms_overlap(a: str, b: str) -> bool:
    """The two terms share a word (up to plurals and endings) or one abbreviates the other."""
    if (" " not in a and is_abbreviation(a, b)) or (" " not in b and is_abbreviation(b, a)):
        return True
    return any(same_word(x, y) for x in stems_of(a) for y in stems_of(b))


def term_key(term: str) -> tuple[str, ...]:
    """A term's words in order, each in the singular, hyphenated words by part: the forms of one
    term ("image" / "images", "LLM" / "LLMs", "neural network" / "neural networks", "time-series" /
    "time series") share a key."""
    return tuple(stem(p) for w in term.split() for p in w.split("-") if p)


def one_form_each(terms: Sequence[str], limit: int) -> list[int]:
    """Positions of the first ``limit`` of ``terms`` whose :func:`term_key` no earlier one has: a
    ranked list without a second form of a term it holds already."""
    seen: set[tuple[str, ...]] = set()
    kept: list[int] = []
    for i, term in enumerate(terms):
        key = term_key(term)
        if key in seen:
            continue
        seen.add(key)
        kept.append(i)
        if len(kept) == limit:
            break
    return kept
