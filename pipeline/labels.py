"""Short topic labels a person would write ("diffusion models", "voting and elections").

Built without a language model from the topic's representations: c-TF-IDF terms (phrases
preferred: a phrase says more than a word), KeyBERTInspired and MMR give the candidates. When the
topic's papers are given (:func:`topic_text`), every candidate is checked against them:

* a phrase must occur as written (inside one clause: "language llms", made by the vectorizer from
  "large language models (LLMs)", is not a phrase anyone wrote);
* a phrase is completed when its papers almost always continue it the same way ("graph neural"
  -> "graph neural networks", "vector machines" -> "support vector machines");
* a term must be able to end a noun phrase: a word usually followed by another content word
  ("adversarial", "stochastic") is a modifier, not a label.

A label names what most of the topic's papers share, not its most frequent corner. Each candidate
is scored by its **coverage** (the share of the topic's papers whose title or abstract use all its
words, plurals folded) and its **lift** against the whole corpus (:class:`Background`: how much
more often the topic's papers use it than the corpus's papers do), so a word every topic uses
("observed", "learning") is no label in any corpus, measured on that corpus. A label is one
candidate, or two joined by "and" when the second adds papers the first misses ("image and
video" for a topic of 3D scenes, video and segmentation); both parts must be distinctive. Labels
are unique within a corpus, and no label's words contain another's ("diffusion models" /
"diffusion models research" cannot both occur). With the corpus's embedder, a label must also
retrieve its own topic: embedded, it is closer to its topic's centroid than to any other.

Every label is then checked against its evidence (:func:`label_support`): the share of the
topic's papers that use its words. Below :data:`WEAK_SUPPORT` (fewer than half of them) the app
marks it weak wherever the label appears.
"""

from __future__ import annotations

import functools
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
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
    learn learned learns approaches solution solutions property properties quality error errors loss
    losses module modules mechanism mechanisms strategy strategies component components scheme schemes
    tool tools manner aspect aspects scenario scenarios setting settings context contexts paradigm
    paradigms pipeline pipelines architecture architectures factor factors objective objectives
    capability capabilities ability abilities behavior behaviors behaviour behaviours domain domains
    rule rules
    """.split()
)

#: Below this support (:func:`label_support`: the share of the topic's papers using the label's
#: words, as a lower confidence bound) a label is weak: fewer than half of its papers would
#: recognise it, or too few papers say so.
WEAK_SUPPORT = 0.5
#: A part of an "A and B" label used by fewer of the topic's papers is their subject, not the topic's.
MIN_PART_PAPERS = 3
#: How many of the topic's c-TF-IDF terms count as its "top terms" (:class:`LabelSupport`).
SUPPORT_TOP_TERMS = 10
#: The mark the app appends to a weak label wherever it shows it.
WEAK_MARK = " (?)"
#: Decimals a support is shown with; the weak flag is decided on the number shown, so that a
#: support of 0.496, shown as 0.50, is not flagged below a cut of 0.5.
SUPPORT_DIGITS = 2
#: A candidate names its topic when the topic's papers use it at least this many times as often as
#: the corpus's papers do (for a topic of a large share p of the corpus, half-way to the most
#: possible, 1/p: a topic of 45% cannot reach 2).
MIN_LIFT = 2.0
#: How many times as much a label's recall (coverage) counts as its precision (:class:`_Scorer`):
#: 3 rather than 2 raised label coverage by 0.01-0.04 on ICML 2024, ICLR 2022 and the IJCAI
#: subarea proxy (two seeds each, every one) with every label still retrieving its topic.
RECALL_WEIGHT = 3.0
#: The second part of an "A and B" label must add at least this share of the topic's papers...
MIN_GAIN = 0.08
#: ... and be used by at least this share of them itself (else it names a side issue).
MIN_PART_SHARE = 0.15
#: ... and costs this much in the ranking of options: one part is easier to read.
PART_COST = 0.04
#: A phrase's advantage over a word in the ranking, per extra word (at most two).
PHRASE_BONUS = 0.02
#: How much the topic's representations' own ranking (c-TF-IDF, KeyBERT, MMR) counts beside it.
RELEVANCE_WEIGHT = 0.05
#: An option that retrieves its own topic (embedded, nearest to its topic's centroid) is preferred
#: to a better-ranked one that does not, down to this much less in the ranking.
RETRIEVAL_SLACK = 0.15
#: At most this many of those options per topic are embedded and tried.
RETRIEVAL_OPTIONS = 12
#: Papers of the corpus read for the background rates (evenly spread).
BACKGROUND_SAMPLE = 20_000

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
        size: the topic's number of papers (0: unknown), for the lift a topic of its size can reach.
    """

    ctfidf: list[tuple[str, float]]
    keybert: list[str] = field(default_factory=list)
    mmr: list[str] = field(default_factory=list)
    text: str = ""
    size: int = 0


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


#: Below this many papers a corpus is too small to tell a topic's words from words every paper
#: uses (the lift of "observed" in 9 of 38 papers is chance): the word stems every ML subfield uses
#: alike, measured once over NeurIPS 1987-2023's topics (``assets/labels/spread_words.txt``, made by
#: ``benchmarks/make_spread_words.py``: "observed", "require", "guarantee", ...), stand in as a broad
#: background and are no label on their own. Larger corpora measure their own (the lift).
SMALL_CORPUS = 1_000
SPREAD_WORDS_FILE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "assets", "labels", "spread_words.txt"
)


@functools.lru_cache(maxsize=1)
def spread_stems() -> frozenset[str]:
    """The stems of :data:`SPREAD_WORDS_FILE` (a missing file is an error: labels would change)."""
    with open(SPREAD_WORDS_FILE, encoding="utf-8") as fh:
        return frozenset(line.strip() for line in fh if line.strip() and not line.startswith("#"))


def is_spread(term: str) -> bool:
    """True for a single word that every ML subfield uses ("observed", "guarantees"): it may be part
    of a phrase ("convergence guarantees") but says nothing about a topic on its own."""
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
        if is_generic(term):
            continue
        score *= 1.0 + 0.25 * min(len(term.split()) - 1, 2)
        scored[term] = max(score, scored.get(term, 0.0))
    return sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass(frozen=True)
class LabelSupport:
    """How well a label agrees with its topic's papers.

    Attributes:
        papers: share of the topic's papers (0-1) whose title or abstract use all the words of the
            label, or for "A and B" all the words of A or all the words of B (plurals folded;
            stop words aside), as a share one can be sure of: the lower bound of its confidence
            interval (Wilson, 80%), so 6 papers of 9 (0.45) count for less than 150 of 250 (0.56);
            for a large topic it is within a few hundredths of the share itself. A part used by
            fewer than :data:`MIN_PART_SHARE` of them counts at most twice its own share. NaN when
            the papers' text is not known.
        keywords: share of the label's distinctive words that are among the topic's top terms
            (shown beside it; not part of the value).
        used: papers using the label's words (either part).
        of: papers read (the topic's papers, or an even sample of a large topic).
    """

    papers: float
    keywords: float
    used: int = 0
    of: int = 0

    @property
    def value(self) -> float:
        """The label's support (0-1): the share of its topic's papers that use its words (lower bound)."""
        return self.papers


_NUMBERED = re.compile(r" \(\d+\)$")


def label_parts(label: str) -> list[frozenset[str]]:
    """The words of each part of a label ("A and B" has two) as stems, stop words aside.

    A paper uses a part when it uses every one of these words ("graph neural networks": graph,
    neural and network), anywhere in its title or abstract.
    """
    stop = _english_stop_words()
    base = _NUMBERED.sub("", label.strip().lower()).removesuffix(WEAK_MARK.strip().lower()).strip()
    parts = []
    for part in re.split(r",\s*|\s+and\s+", base):
        part_stems = _stems(" ".join(w for w in re.findall(_WORD, part) if w not in stop))
        if part_stems:
            parts.append(frozenset(part_stems))
    return parts


def doc_stems(doc: str) -> frozenset[str]:
    """The words of one paper's text as stems (hyphenated words also by part)."""
    return frozenset().union(*map(_word_stems, set(re.findall(_WORD, doc.lower()))))


def label_support(label: str, terms: TopicTerms, *, text: _Text | None = None) -> LabelSupport:
    """How far a label is supported by its topic's papers (see :class:`LabelSupport`).

    Args:
        label: the label ("diffusion models", "voting and elections").
        terms: the topic's representations; ``terms.text`` (:func:`topic_text`) holds its papers.
        text: ``terms.text`` already parsed (saves the work when many labels are checked).
    """
    parts = label_parts(label)
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
            if weakest < MIN_PART_SHARE * n:  # a part few papers use names their subject, not the topic's
                papers = min(papers, 2 * wilson_lower(weakest, n))
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


def contains(a: str, b: str) -> bool:
    """True when the words of one label are all among the other's ("diffusion models" and
    "diffusion models research", "reinforcement learning" and "offline reinforcement learning")."""
    sa, sb = frozenset().union(*label_parts(a)), frozenset().union(*label_parts(b))
    return bool(sa) and bool(sb) and (sa <= sb or sb <= sa)


# --------------------------------------------------------------------------------------------
# The corpus as background
# --------------------------------------------------------------------------------------------


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


@dataclass
class _Part:
    """A candidate part of a label: the topic's papers that use it, and the corpus's."""

    term: str
    score: float  # relevance by the topic's representations (c-TF-IDF, KeyBERT, MMR)
    used: object  # bool array over the topic's papers read
    coverage: float  # share of those papers
    lift: float  # coverage / the corpus's share (inf without a background)
    corpus_rows: object  # the background's rows using it (None without a background)


@dataclass
class _Option:
    label: str
    coverage: float
    rank: float


class _Scorer:
    """Recall and precision of a label as a description of one topic.

    Recall is its coverage (the share of the topic's papers using it); precision the share of the
    corpus's papers using it that are in the topic (from the :class:`Background`; 1 without one).
    Options rank by their F-score with recall weighted :data:`RECALL_WEIGHT` times as much: a
    label should describe most of its topic's papers, and belong to it rather than to every topic.
    """

    def __init__(self, background: Background | None, topic_share: float, total: int = 0):
        self.background = background if background is not None and background.n else None
        self.small = 0 < total < SMALL_CORPUS  # too few papers to measure which words every topic uses
        self.expected = topic_share * self.background.n if self.background is not None else 0.0

    def precision(self, coverage: float, rows) -> float:
        if self.background is None or rows is None:
            return 1.0
        return 1.0 if not len(rows) else min(1.0, coverage * self.expected / len(rows))

    def rank(self, coverage: float, precision: float) -> float:
        b2 = RECALL_WEIGHT**2
        return 0.0 if coverage <= 0 else (1 + b2) * precision * coverage / (b2 * precision + coverage)


def _number(forms: list[tuple[str, float]], text: _Text) -> str:
    """A word in the plural when its papers use the plural at least a third as often as the singular
    ("graphs", "images": a label names a kind of work), else as the best-scored form ("privacy",
    "optimization")."""
    best = max(forms, key=lambda ts: (ts[1], ts[0]))[0]
    plural = next((t for t, _ in forms if t.endswith("s") and not t.endswith("ss")), None)
    singular = next((t for t, _ in forms if t != plural), None)
    if plural is None or singular is None:
        return best
    return plural if 3 * text.text.count(f" {plural} ") >= text.text.count(f" {singular} ") else singular


def _parts(terms: TopicTerms, text: _Text, scorer: _Scorer, min_lift: float, min_papers: int) -> list[_Part]:
    """The topic's candidates with their coverage and lift, best first; only distinctive ones
    (lift at least ``min_lift``) when the background is known."""
    import numpy as np

    cands = _candidates(terms, depth=40, min_papers=min_papers, text=text)
    phrases = [t for t, _ in cands if " " in t]
    # one candidate per set of words, with the best score of its forms: a word in the plural when
    # the papers use it ("graphs", "equations": a label names a kind of work), a phrase as written
    # most often
    forms: dict[frozenset[str], list[tuple[str, float]]] = {}
    for term, score in cands:
        group = forms.setdefault(frozenset(_stems(term)), [])
        group.append((term, score))
        if " " not in term:  # its other number, as the papers write it
            other = term[:-1] if term.endswith("s") and not term.endswith("ss") else term + "s"
            if _stems(other) == _stems(term) and f" {other} " in text.text:
                group.append((other, score))
    cands = [
        (
            _number(group, text)
            if " " not in group[0][0]
            else max(group, key=lambda ts: (text.text.count(f" {ts[0]} "), ts[1], ts[0]))[0],
            max(sc for _, sc in group),
        )
        for group in forms.values()
    ]
    cands.sort(key=lambda ts: (-ts[1], ts[0]))
    out = []
    for term, score in cands:
        if " " not in term and any(_abbreviates(term, p) for p in phrases):
            continue  # "nas": the phrase it abbreviates stands for it
        words = frozenset().union(*label_parts(term))
        if not words or (scorer.small and is_spread(term)):
            continue
        used = np.fromiter((words <= d for d in text.doc_stems), dtype=bool, count=text.n_docs)
        coverage = float(used.mean()) if text.n_docs else 0.0
        lift, rows = math.inf, None
        if scorer.background is not None:
            rows = scorer.background.rows(words)
            base = len(rows) / scorer.background.n
            lift = coverage / base if base > 0 else math.inf
            if lift < min_lift:
                continue
        out.append(_Part(term, score, used, coverage, lift, rows))
    return out


def _label_options(parts: list[_Part], scorer: _Scorer) -> list[_Option]:
    """Possible labels from the candidates, best first.

    Every candidate is an option; the best few also start a two-part option ("A and B") with the
    candidate that adds most to it, when that one shares no word with it, adds at least
    :data:`MIN_GAIN` of the topic's papers and is used by :data:`MIN_PART_SHARE` of them itself.
    Options rank by :meth:`_Scorer.rank` (a second part costs :data:`PART_COST`; a phrase gains a
    little over a word: it says more).
    """
    import numpy as np

    if not parts:
        return []

    def bonus(term: str) -> float:
        return PHRASE_BONUS * min(len(term.split()) - 1, 2)

    top = max(p.score for p in parts) or 1.0

    def relevance(part: _Part) -> float:
        return RELEVANCE_WEIGHT * part.score / top

    options: dict[str, _Option] = {}
    singles = []
    for p in parts:
        rank = scorer.rank(p.coverage, scorer.precision(p.coverage, p.corpus_rows)) + bonus(p.term) + relevance(p)
        singles.append((rank, p))
        options[p.term] = _Option(p.term, p.coverage, rank)
    singles.sort(key=lambda rp: (-rp[0], rp[1].term))
    for _, first in singles[:8]:
        if first.coverage < MIN_PART_SHARE or len(first.term.split()) >= MAX_WORDS - 1:
            continue
        best = None
        for other in parts:
            if other is first or _overlaps(first.term, other.term) or " and " in other.term:
                continue
            if len(first.term.split()) + len(other.term.split()) + 1 > MAX_WORDS:
                continue
            if other.coverage < MIN_PART_SHARE or int(other.used.sum()) < MIN_PART_PAPERS:
                continue
            if float((other.used & ~first.used).mean()) < MIN_GAIN:
                continue
            coverage = float((first.used | other.used).mean())
            rows = None
            if first.corpus_rows is not None and other.corpus_rows is not None:
                rows = np.union1d(first.corpus_rows, other.corpus_rows)
            a, b = (first, other) if first.coverage >= other.coverage else (other, first)
            rank = scorer.rank(coverage, scorer.precision(coverage, rows)) - PART_COST
            rank += max(bonus(a.term), bonus(b.term)) + relevance(first)
            if best is None or rank > best.rank:
                best = _Option(f"{a.term} and {b.term}", coverage, rank)
        if best is not None and (best.label not in options or options[best.label].rank < best.rank):
            options[best.label] = best
    return sorted(options.values(), key=lambda o: (-o.rank, o.label))


def _fallback(terms: TopicTerms, text: _Text | None) -> str:
    """The best terms that passed the checks, else the best distinctive terms the papers write."""
    words = [t for t, _ in _candidates(terms, min_papers=1, text=text)][:1]
    if not words:
        written = [t for t, _ in terms.ctfidf if t and not is_generic(t) and (not terms.text or f" {t} " in terms.text)]
        words = written[:1] + [t for t in written[1:] if not _overlaps(t, written[0])][:1]
    if len(words) == 2 and len(" ".join(words).split()) + 1 <= MAX_WORDS:
        return " and ".join(words)
    if words and len(words[0].split()) <= MAX_WORDS:
        return words[0]
    return "miscellaneous topics"


def topic_options(
    terms: TopicTerms, *, text: _Text | None = None, background: Background | None = None, total: int = 0
) -> list[_Option]:
    """All labels worth trying for one topic, best first (:func:`_label_options`); terms of one
    paper only when nothing two papers share is left (a handful of unrelated papers)."""
    text = text if text is not None else (_Text(terms.text) if terms.text else None)
    if text is None or not text.n_docs:
        return [_Option(t, math.nan, -i) for i, t in enumerate(_old_options(_candidates(terms)))]
    share = (terms.size or text.n_docs) / max(total, 1) if total else 0.0
    scorer = _Scorer(background, share, total)
    # a topic of a large share p of the corpus cannot reach a lift of 1/p: half-way to it suffices
    min_lift = MIN_LIFT if not 0 < share < 1 else min(MIN_LIFT, 1 + (1 / share - 1) / 2)
    for min_papers in (2, 1):
        options = _label_options(_parts(terms, text, scorer, min_lift, min_papers), scorer)
        if options:
            return _echoing(options, terms)
    return []


def _echoing(options: list[_Option], terms: TopicTerms) -> list[_Option]:
    """The options sharing a word with the topic's top keywords, where any does: the page shows
    both, and a label that none of its keywords echo reads as another topic's."""
    top = set().union(*(_stems(t) for t, _ in terms.ctfidf[:SUPPORT_TOP_TERMS] if t)) if terms.ctfidf else set()
    echoed = [o for o in options if any(_same_word(w, t) for p in label_parts(o.label) for w in p for t in top)]
    return echoed or options


def _old_options(cands: list[tuple[str, float]]) -> list[str]:
    """Labels from the representations alone (no papers to read): a phrase; a word, replaced by
    the best phrase built on it or joined to the next term that shares no word with it."""
    out: list[str] = []
    for i, (first, score) in enumerate(cands[:10]):
        if " " in first:
            out.append(first)
            continue
        built = [t for t, s in cands if " " in t and _overlaps(first, t) and s >= 0.4 * score]
        seconds = [t for t, _ in cands[i + 1 : 12] if not _overlaps(first, t) and len(t.split()) <= 2]
        out += built[:1] + [f"{first} and {t}" for t in seconds[:1]] + [first]
    return list(dict.fromkeys(out))


def _near_best(options: list[_Option]) -> list[_Option]:
    """The options ranked within :data:`RETRIEVAL_SLACK` of the best, best first."""
    return [o for o in options if o.rank >= options[0].rank - RETRIEVAL_SLACK] if options else []


def _free(label: str, taken: Sequence[str], taken_keys: set) -> bool:
    return label not in taken and _key(label) not in taken_keys and not any(contains(label, t) for t in taken)


def label_for(
    terms: TopicTerms,
    taken: set[str] | Sequence[str],
    *,
    text: _Text | None = None,
    background: Background | None = None,
    total: int = 0,
    retrieves: Callable[[str], bool] | None = None,
    options: list[_Option] | None = None,
) -> str:
    """One topic's label, avoiding labels in ``taken`` and labels whose words contain theirs or are
    contained in them.

    Args:
        terms: the topic's representations and papers.
        taken: labels of other topics, chosen before.
        text: ``terms.text`` already parsed.
        background: the corpus's rates (:class:`Background`) for the lift; None: no lift check.
        total: papers in the corpus (with ``terms.size``, the topic's share).
        retrieves: whether a label, embedded, is nearest to this topic's centroid; options that do
            are preferred down to :data:`RETRIEVAL_SLACK` less in the ranking.
        options: :func:`topic_options` already computed.

    """
    taken = list(taken)
    taken_keys = {_key(t) for t in taken}
    if options is None:
        options = topic_options(terms, text=text, background=background, total=total)
    options = [o for o in options if _free(o.label, taken, taken_keys)]
    if options and retrieves is not None:
        hit = next((o for o in _near_best(options)[:RETRIEVAL_OPTIONS] if retrieves(o.label)), None)
        if hit is not None:
            return hit.label
    if options:
        return options[0].label
    base = _fallback(terms, text)
    label, n = base, 2
    while not _free(label, taken, taken_keys) and n < 50:
        words = [t for t, _ in terms.ctfidf if t and not is_generic(t) and _free(t, taken, taken_keys)]
        label = words[0] if words else f"{base} {n}"
        if words:
            break
        n += 1
    return label


def make_labels(topics: dict[int, TopicTerms], order: list[int] | None = None, **kwargs) -> dict[int, str]:
    """Labels for all topics; larger topics (earlier in ``order``) choose first."""
    return {topic: label for topic, (label, _) in label_topics(topics, order, **kwargs).items()}


def label_topics(
    topics: dict[int, TopicTerms],
    order: list[int] | None = None,
    *,
    background: Background | None = None,
    total: int = 0,
    embed: Callable[[list[str]], object] | None = None,
    centroids: object | None = None,
) -> dict[int, tuple[str, LabelSupport]]:
    """Labels for all topics with their support (each topic's papers read once); larger topics
    (earlier in ``order``) choose first.

    Args:
        topics: topic id -> its representations and papers.
        order: the order in which topics choose (default: by id).
        background: the corpus's rates for the lift (:class:`Background`).
        total: papers in the corpus.
        embed: the corpus's embedder (list of texts -> normalised ``(m, dim)`` vectors) and
        centroids: float ``(len(topics), dim)`` normalised topic centroids, rows in sorted topic id
            order: with both, a label should retrieve its own topic.
    """
    import numpy as np

    ids = sorted(topics)
    texts = {t: (_Text(topics[t].text) if topics[t].text else None) for t in ids}
    options = {t: topic_options(topics[t], text=texts[t], background=background, total=total) for t in ids}
    retrieves: dict[int, Callable[[str], bool]] = {}
    if embed is not None and centroids is not None and len(ids) > 1:
        # only the options a topic may take for retrieving it: near its best, a few at most (each is
        # embedded; at hundreds of topics all of them would cost minutes)
        flat = sorted({o.label for opts in options.values() for o in _near_best(opts)[:RETRIEVAL_OPTIONS]})
        nearest: dict[str, int] = {}
        if flat:
            vectors = np.asarray(embed(flat), dtype=np.float64)
            sims = vectors @ np.asarray(centroids, dtype=np.float64).T
            nearest = {o: ids[int(j)] for o, j in zip(flat, np.argmax(sims, axis=1), strict=True)}
        for t in ids:
            retrieves[t] = lambda label, t=t: nearest.get(label) == t
    taken: list[str] = []
    out: dict[int, tuple[str, LabelSupport]] = {}
    for topic in order or ids:
        terms = topics[topic]
        text = texts[topic]
        label = label_for(
            terms,
            taken,
            text=text,
            background=background,
            total=total,
            retrieves=retrieves.get(topic),
            options=options[topic],
        )
        out[topic] = (label, label_support(label, terms, text=text))
        taken.append(label)
    return out
