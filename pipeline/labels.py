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

Every label is then checked against its evidence (:func:`label_support`): the share of the
topic's papers that use its words, and the share of its distinctive words among the topic's top
c-TF-IDF terms. A candidate label that its evidence does not support (a KeyBERT phrase close to the
topic's embedding but written by few of its papers) gives way to one that is supported; a topic
where no candidate is supported (a handful of unrelated papers) keeps its best label, and its
support below :data:`WEAK_SUPPORT` tells the app to show it as weak.
"""

from __future__ import annotations

import functools
import math
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

#: Below this support (:func:`label_support`, 0-1) a label is weak: one cannot be sure that a fifth
#: of the topic's papers use its words, or few of its words are among the topic's top terms.
WEAK_SUPPORT = 0.2
#: A part of an "A and B" label used by fewer of the topic's papers is their subject, not the topic's.
MIN_PART_PAPERS = 3
#: How many of the topic's c-TF-IDF terms count as its "top terms" for the support check.
SUPPORT_TOP_TERMS = 10
#: The mark the app appends to a weak label wherever it shows it.
WEAK_MARK = " (?)"
#: Decimals a support is shown with; the weak flag is decided on the number shown, so that a
#: support of 0.196, shown as 0.20, is not flagged below a cut of 0.2.
SUPPORT_DIGITS = 2

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


#: Word stems every ML subfield uses (``assets/labels/spread_words.txt``, measured on NeurIPS
#: 1987-2023 by ``benchmarks/make_spread_words.py``: "observed", "require", "guarantee", ...).
SPREAD_WORDS_FILE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets", "labels", "spread_words.txt"
)


@functools.lru_cache(maxsize=1)
def spread_stems() -> frozenset[str]:
    """The stems of :data:`SPREAD_WORDS_FILE` (a missing file is an error: labels would change)."""
    with open(SPREAD_WORDS_FILE, encoding="utf-8") as fh:
        return frozenset(line.strip() for line in fh if line.strip() and not line.startswith("#"))


def is_spread(term: str) -> bool:
    """True for a single word that every subfield uses ("observed", "guarantees"): it may be part of
    a phrase ("convergence guarantees") but says nothing about a topic on its own, even when all
    of the topic's papers use it."""
    return " " not in term.strip() and _stem(term.strip()) in spread_stems()


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


@functools.lru_cache(maxsize=200_000)
def _word_stems(word: str) -> frozenset[str]:
    return frozenset(_stems(word))


def stems(term: str) -> set[str]:
    """The words of ``term`` in singular, lower case, hyphenated words also by part."""
    return _stems(term)


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

    @property
    def doc_stems(self) -> list[frozenset[str]]:
        """Each paper's words as stems (hyphenated words also by part), for the support check."""
        if not hasattr(self, "_doc_stems"):
            self._doc_stems = [frozenset().union(*map(_word_stems, set(re.findall(_WORD, d)))) for d in self.docs]
        return self._doc_stems

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


def _candidates(
    terms: TopicTerms, depth: int = 20, *, min_papers: int = 2, text: _Text | None = None
) -> list[tuple[str, float]]:
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
    text = text if text is not None else (_Text(terms.text) if terms.text else None)
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
        if is_generic(term) or is_spread(term):
            continue
        score *= 1.0 + 0.25 * min(len(term.split()) - 1, 2)
        scored[term] = max(score, scored.get(term, 0.0))
    return sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass(frozen=True)
class LabelSupport:
    """How well a label agrees with its topic's evidence.

    Attributes:
        papers: how many of the topic's papers use the label's words, as a share one can be sure
            of: the lower bound of its confidence interval (Wilson, 80%), so 2 papers of 6 count
            for less than 70 of 210. For "A and B", either part counts, and each part must be
            used by at least half that share (a label half about a side issue is half wrong) and
            by :data:`MIN_PART_PAPERS` papers (else its own share counts, not twice it).
            NaN when the papers' text is not known.
        keywords: share of the label's distinctive words that are among the topic's top terms.
        used: papers using the label's words (either part).
        of: papers read (the topic's papers, or an even sample of a large topic).
    """

    papers: float
    keywords: float
    used: int = 0
    of: int = 0

    @property
    def value(self) -> float:
        """The weaker of the two (0-1): a label needs both its papers and its keywords behind it."""
        known = [v for v in (self.papers, self.keywords) if v == v]
        return min(known) if known else float("nan")


_NUMBERED = re.compile(r" \(\d+\)$")


def _label_parts(label: str) -> list[frozenset[str]]:
    """The stems of each part of a label ("A and B" has two) that say what it is about.

    Generic words ("neural", "learning", "models") and joining words count only when a part has
    nothing else: "neural network estimator" is about estimators, "neural networks" about networks.
    """
    stop = _english_stop_words()
    base = _NUMBERED.sub("", label.strip().lower())
    base = base.removesuffix(" research")
    parts = []
    for part in base.split(" and "):
        words = [w for w in part.split() if w not in stop]
        content = [w for w in words if w not in GENERIC_WORDS] or words
        part_stems = _stems(" ".join(content))
        if part_stems:
            parts.append(frozenset(part_stems))
    return parts


def label_support(label: str, terms: TopicTerms, *, text: _Text | None = None) -> LabelSupport:
    """How far a label is supported by its topic's top terms and its papers (see :class:`LabelSupport`).

    Args:
        label: the label ("diffusion models", "voting and elections", "x and y (2)").
        terms: the topic's representations; ``terms.text`` (:func:`topic_text`) holds its papers.
        text: ``terms.text`` already parsed (saves the work when many labels are checked).
    """
    parts = _label_parts(label)
    if not parts:
        return LabelSupport(0.0, 0.0)
    if text is None and terms.text:
        text = _Text(terms.text)
    used = n = 0
    papers = float("nan")
    if text is not None and text.n_docs:
        n = text.n_docs
        used = sum(any(p <= doc for p in parts) for doc in text.doc_stems)
        papers = wilson_lower(used, n)
        if len(parts) > 1:
            weakest = min(sum(p <= doc for doc in text.doc_stems) for p in parts)
            # each part must cover half as much; a part one or two papers use is their subject
            papers = min(papers, (2 if weakest >= MIN_PART_PAPERS else 1) * wilson_lower(weakest, n))
    top = set().union(*(_stems(t) for t, _ in terms.ctfidf[:SUPPORT_TOP_TERMS] if t)) if terms.ctfidf else set()
    words = set().union(*parts)
    found = sum(any(_same_word(w, t) for t in top) for w in words)
    return LabelSupport(float(papers), found / len(words), used, n)


def wilson_lower(k: int, n: int, z: float = 1.2816) -> float:
    """Lower bound of the Wilson score interval of ``k`` successes in ``n`` (z = 1.28: 80% two-sided)."""
    if n <= 0:
        return float("nan")
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n))


def shown_support(support: float) -> float:
    """A support (0-1, NaN when unmeasured) as it is shown: rounded to :data:`SUPPORT_DIGITS` decimals."""
    return round(float(support), SUPPORT_DIGITS) if support == support else float("nan")


def is_weak(support: float) -> bool:
    """True when a stored support (0-1, NaN when unmeasured) marks the label as weak: its shown
    (rounded) value is below :data:`WEAK_SUPPORT`, so the flag and the number shown agree."""
    shown = shown_support(support)
    return shown == shown and shown < WEAK_SUPPORT


def shown_label(label: str, support: float) -> str:
    """The label as the app shows it: weak labels end in :data:`WEAK_MARK`."""
    return f"{label}{WEAK_MARK}" if is_weak(support) and not label.endswith(WEAK_MARK) else label


def shown_labels(topics) -> list:
    """A topics table's labels as the app shows them (:func:`shown_label` of ``label`` and
    ``label_support``). A table without ``label_support`` (built before it was measured), rows
    whose ``curated`` is true (a label written by hand) and missing or empty labels are kept as they are."""
    labels = list(topics["label"])
    if "label_support" not in topics:
        return labels
    curated = list(topics["curated"]) if "curated" in topics else [False] * len(labels)
    return [
        lab
        if hand or not isinstance(lab, str) or not lab.strip()
        else shown_label(lab, math.nan if s is None else float(s))
        for lab, s, hand in zip(labels, topics["label_support"], curated, strict=True)
    ]


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


def label_for(terms: TopicTerms, taken: set[str], *, text: _Text | None = None) -> str:
    """One topic's label, avoiding labels in ``taken`` (also up to plurals and word order).

    Terms used by at least two of the topic's papers are tried first; tiny topics (a handful of
    papers on different subjects) may need terms of one paper. The first option its evidence
    supports (:func:`label_support` at least :data:`WEAK_SUPPORT`) wins; when none is, the best
    supported one (it will be shown as weak).
    """
    taken_keys = {_key(t) for t in taken}
    text = text if text is not None else (_Text(terms.text) if terms.text else None)
    best, best_support, seen = None, -1.0, set()
    for min_papers in (2, 1):
        for option in _options(_candidates(terms, min_papers=min_papers, text=text)):
            if option in seen or option in taken or _key(option) in taken_keys:
                continue
            seen.add(option)
            support = label_support(option, terms, text=text).value
            support = -1.0 if support != support else support
            if not is_weak(support):
                return option
            if support > best_support:
                best, best_support = option, support
    if best is not None:
        return best
    # Nothing better is left: the best terms that passed the checks, else the best distinctive
    # terms the papers write as such; numbered if needed.
    words = [t for t, _ in _candidates(terms, min_papers=1, text=text)][:1]
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
    return {topic: label for topic, (label, _) in label_topics(topics, order).items()}


def label_topics(topics: dict[int, TopicTerms], order: list[int] | None = None) -> dict[int, tuple[str, LabelSupport]]:
    """Labels for all topics with their support (each topic's papers read once); larger topics
    (earlier in ``order``) choose first."""
    taken: set[str] = set()
    out: dict[int, tuple[str, LabelSupport]] = {}
    for topic in order or sorted(topics):
        terms = topics[topic]
        text = _Text(terms.text) if terms.text else None
        label = label_for(terms, taken, text=text)
        out[topic] = (label, label_support(label, terms, text=text))
        taken.add(label)
    return out
