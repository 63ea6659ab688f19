"""Short topic labels a person would write ("diffusion models", "graph neural networks").

Built without a language model from the topic's representations: c-TF-IDF terms (phrases
preferred: a phrase says more than a word), confirmed by KeyBERTInspired and MMR. When the topic's
papers are given (:func:`topic_text`), every candidate is checked against them:

* a phrase must occur as written (inside one clause: "language llms", made by the vectorizer from
  "large language models (LLMs)", is not a phrase anyone wrote);
* a phrase is completed when its papers almost always continue it the same way ("graph neural"
  -> "graph neural networks", "vector machines" -> "support vector machines");
* a term must be able to end a noun phrase: a word usually followed by another content word
  ("adversarial", "stochastic") is a modifier, not a label.

A label has 2-5 words: one phrase, or two terms joined by "and" ("voting and elections"). Labels
are unique within a corpus (also up to plurals), and never made only of generic words.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
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
    set sets space spaces value values level levels type types case cases method-based general ai ml
    learn learned learns prediction predictions inference optimization image images text approaches
    solution solutions property properties quality error errors loss losses module modules mechanism
    mechanisms strategy strategies component components scheme schemes tool tools manner aspect
    aspects scenario scenarios setting settings context contexts paradigm paradigms pipeline
    pipelines architecture architectures factor factors objective objectives capability capabilities
    ability abilities behavior behaviors behaviour behaviours domain domains rule rules generation
    words word sentences sentence user users item items agent agents solving solver solvers
    computation computational estimation distribution distributions human humans attention
    """.split()
)

#: Most words a label may have.
MAX_WORDS = 5
#: A word followed by another content word more often than this is a modifier ("adversarial",
#: "stochastic", "graph"), not something a label can end with; nouns that head compounds stay
#: above it ("voting" 0.36 on IJCAI, "music" 0.32, "hashing" 0.49; "adversarial" 0.01).
MIN_HEAD_SHARE = 0.3
#: How much the share of the topic's papers using a term counts (score * share ** this).
COVERAGE_WEIGHT = 0.4
#: Most words of one phrase after completion.
MAX_PHRASE_WORDS = 4
#: Generic words that may still complete a phrase ("diffusion models", "hidden markov models").
_HEADS = frozenset({"model", "models"})
_WORD = r"[^\W\d_][\w'-]*"

#: Anything that is not part of a word ends a clause (hyphenated words and apostrophes stay whole;
#: a lone hyphen stays as a token of its own, which no phrase crosses either).
_NOT_WORD = re.compile(r"[^\w\s'-]+|_+")
_SPACES = re.compile(r"[^\S\n]+")


@dataclass(frozen=True)
class TopicTerms:
    """A topic's representations, best first, and optionally its papers' text.

    Attributes:
        ctfidf: ``(term, weight)`` by c-TF-IDF.
        keybert: terms re-ranked by KeyBERTInspired.
        mmr: terms re-ranked by maximal marginal relevance.
        text: the topic's papers prepared by :func:`topic_text` ("" skips the phrase checks).
    """

    ctfidf: list[tuple[str, float]]
    keybert: list[str] = field(default_factory=list)
    mmr: list[str] = field(default_factory=list)
    text: str = ""


def topic_text(docs: Sequence[str]) -> str:
    """A topic's papers as one lower-case string for phrase search.

    Words are separated by single spaces and the text is padded with them, so that `` term ``
    finds a term as a whole; clauses are separated by ``|`` and papers by ``||``, so that no phrase
    is found across a bracket, a comma or two papers.
    """
    text = "\n".join(d.replace("\n", " ") for d in docs).lower()
    text = _NOT_WORD.sub(" | ", text)
    text = _SPACES.sub(" ", text).replace("\n", " || ")
    return " " + _SPACES.sub(" ", text).strip(" ") + " "


def is_generic(term: str) -> bool:
    """True when every word of ``term`` is generic (or it has no words)."""
    words = term.split()
    return not words or all(w in GENERIC_WORDS for w in words)


def _english_stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _stem(word: str) -> str:
    """Singular, lower-case: "bandits" -> "bandit", "policies" -> "policy"."""
    word = word.lower()
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    return word


def _stems(term: str) -> set[str]:
    return {_stem(p) for w in term.split() for p in w.split("-") if p}


def _same_word(a: str, b: str) -> bool:
    """Near-duplicates: "bandit"/"bandits", "planning"/"planner", "handwriting"/"handwritten"."""
    if a == b:
        return True
    common = len(os.path.commonprefix([a, b]))
    return common >= 5 or (min(len(a), len(b)) >= 3 and common == min(len(a), len(b)))


def _abbreviates(short: str, term: str) -> bool:
    """ "llms" abbreviates "language models" (also "large language models"), "gnn" "graph neural networks"."""
    words = [_stem(w) for w in term.split()]
    short = _stem(short)
    if len(words) < 2 or not 2 <= len(short) <= 5:
        return False
    initials = "".join(w[0] for w in words)
    return initials.endswith(short) or short.endswith(initials)


def _key(label: str) -> frozenset[str]:
    """Labels that differ only in plurals, order or joining words are the same label."""
    return frozenset(_stems(label.replace(" and ", " ")))


@dataclass
class _Phrase:
    """What the topic's papers say about one candidate."""

    term: str
    count: int  # occurrences inside one clause
    head_share: float  # share of occurrences not followed by another content word


class _Text:
    """Phrase statistics over a :func:`topic_text` (plain substring search: fast on large topics)."""

    def __init__(self, text: str):
        self.text = text
        self.reverse = " ".join(reversed(text.split(" ")))
        self.docs = [f" {d.strip()} " for d in text.split(" || ")]
        self.n_docs = len(self.docs)
        self.stop = _english_stop_words()

    def doc_share(self, term: str) -> float:
        """Share of the topic's papers that use ``term``."""
        needle = f" {term} "
        return sum(needle in d for d in self.docs) / max(self.n_docs, 1)

    def _after(self, term: str) -> Counter:
        """The words right after each occurrence of ``term`` inside a clause."""
        return Counter(re.findall(rf" {re.escape(term)} ([^ |]+)", self.text))

    def _before(self, term: str) -> Counter:
        """The words right before each occurrence (found as the words after it in the reversed text)."""
        reverse_term = " ".join(reversed(term.split()))
        return Counter(re.findall(rf" {re.escape(reverse_term)} ([^ |]+)", self.reverse))

    def _dominant(self, words: Counter, count: int, share: float) -> str | None:
        """The content word (grouping plurals) next to most occurrences, if it is next to more than ``share``."""
        groups: dict[str, Counter] = {}
        for w, c in words.items():
            if w in self.stop or not re.fullmatch(_WORD, w) or (w in ACADEMIC_STOP_WORDS and w not in _HEADS):
                continue
            groups.setdefault(_stem(w), Counter())[w] += c
        if not groups or count < 3:
            return None
        _, forms = max(groups.items(), key=lambda kv: (sum(kv[1].values()), kv[0]))
        total = sum(forms.values())
        if total <= share * count or total < 3:
            return None
        return forms.most_common(1)[0][0]

    def phrase(self, term: str) -> _Phrase | None:
        """The candidate as the papers write it (completed when they agree), or None if they never do."""
        count = self.text.count(f" {term} ")
        if count == 0:
            return None
        after = self._after(term)
        for _ in range(2):
            if len(term.split()) >= MAX_PHRASE_WORDS:
                break
            nxt = self._dominant(after, count, 0.5)
            prev = None if nxt else self._dominant(self._before(term), count, 0.6)
            if not (nxt or prev):
                break
            term = f"{term} {nxt}" if nxt else f"{prev} {term}"
            count = self.text.count(f" {term} ")
            if count == 0:
                return None
            after = self._after(term)
        content_next = sum(c for w, c in after.items() if w not in self.stop)
        return _Phrase(term, count, 1.0 - content_next / count)


def _candidates(terms: TopicTerms, depth: int = 20, *, min_papers: int = 2) -> list[tuple[str, float]]:
    """Candidate label terms, best first, with their scores.

    A term scores by its c-TF-IDF weight relative to the topic's best and by its KeyBERTInspired
    rank (closeness to the topic's embedding: often the phrase a person would pick), with a bonus
    for MMR and for phrases. With the topic's text, candidates are replaced by the phrase the
    papers write, dropped when they never occur as written or only as modifiers or in fewer than
    ``min_papers`` papers, and weighed by the share of the topic's papers using them (a label
    should describe the topic, not a corner of it).
    """
    if not terms.ctfidf and not terms.keybert:
        return []
    top = max((w for _, w in terms.ctfidf[:depth]), default=0.0) or 1.0
    ctfidf = {t: w / top for t, w in terms.ctfidf[:depth] if t}
    keybert = {t: 1.0 - 0.06 * rank for rank, t in enumerate(terms.keybert[:10]) if t}
    mmr = set(terms.mmr[:10])
    raw = {t: 0.6 * ctfidf.get(t, 0.0) + 0.6 * keybert.get(t, 0.0) + 0.1 * (t in mmr) for t in {**ctfidf, **keybert}}
    text = _Text(terms.text) if terms.text else None
    scored: dict[str, float] = {}
    for term, score in raw.items():
        if text is not None:
            found = text.phrase(term)
            if found is None or found.head_share < (MIN_HEAD_SHARE if " " not in found.term else MIN_HEAD_SHARE / 2):
                continue
            term = found.term
            share = text.doc_share(term)
            if share * text.n_docs < min(min_papers, text.n_docs):
                continue  # one paper's word (a system's name) does not name a topic
            score *= share**COVERAGE_WEIGHT
        if is_generic(term):
            continue
        score *= 1.0 + 0.25 * min(len(term.split()) - 1, 2)
        scored[term] = max(score, scored.get(term, 0.0))
    return sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))


def _overlaps(a: str, b: str) -> bool:
    """The two terms share a word (up to plurals and endings) or one abbreviates the other."""
    if (" " not in a and _abbreviates(a, b)) or (" " not in b and _abbreviates(b, a)):
        return True
    return any(_same_word(x, y) for x in _stems(a) for y in _stems(b))


def _options(cands: list[tuple[str, float]]) -> list[str]:
    """Possible labels for one topic, best first.

    A phrase stands alone. A single word is joined by "and" to the next strong term that shares no
    word with it ("voting and elections"), or, when the best phrase built on it scores higher,
    replaced by that phrase ("planning" -> "classical planning"); two joined terms have at most
    three words.
    """
    out: list[str] = []
    for i, (first, score) in enumerate(cands[:10]):
        if " " in first:
            out.append(first)
            continue
        built = [(t, s) for t, s in cands if " " in t and _overlaps(first, t) and s >= 0.4 * score]
        if built and _abbreviates(first, built[0][0]):
            out.append(built[0][0])  # "nas" -> "neural architecture search"
        seconds = [(t, s) for t, s in cands[i + 1 : 12] if not _overlaps(first, t) and len(t.split()) <= 2]
        strong = [(t, s) for t, s in seconds if s >= 0.6 * score]
        if strong and " " in strong[0][0] and strong[0][1] >= 0.85 * score:
            out.append(strong[0][0])  # a phrase nearly as strong says more than a word and a phrase
        if built and (not strong or built[0][1] > strong[0][1]):
            out.append(built[0][0])
        out += [f"{first} and {t}" for t, _ in strong or seconds[:1]]
        if built:
            out.append(built[0][0])
    return list(dict.fromkeys(out))


def label_for(terms: TopicTerms, taken: set[str]) -> str:
    """One topic's label, avoiding labels in ``taken`` (also up to plurals and word order).

    Terms used by at least two of the topic's papers are tried first; tiny topics (a handful of
    papers on different subjects) may need terms of one paper.
    """
    taken_keys = {_key(t) for t in taken}
    for min_papers in (2, 1):
        for option in _options(_candidates(terms, min_papers=min_papers)):
            if option not in taken and _key(option) not in taken_keys:
                return option
    # Nothing better is left: the best terms that passed the checks, else the best distinctive
    # terms the papers write as such; numbered if needed.
    words = [t for t, _ in _candidates(terms, min_papers=1)][:1]
    if not words:
        written = [t for t, _ in terms.ctfidf if t and not is_generic(t) and (not terms.text or f" {t} " in terms.text)]
        words = written[:1] + [t for t in written[1:] if not _overlaps(t, written[0])][:1]
    if len(words) == 2 and len(" ".join(words).split()) + 1 <= MAX_WORDS:
        base = " and ".join(words)
    elif words and len(words[0].split()) < MAX_WORDS:
        base = f"{words[0]} research"
    else:
        base = "miscellaneous topics"
    label, n = base, 2
    while label in taken or _key(label) in taken_keys:
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
