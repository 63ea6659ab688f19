"""Candidate label phrases and the words they are made of: generic and corpus-wide words,
a topic's papers as searchable text (:func:`topic_text`), and the check that a candidate is a
phrase its papers write (:class:`PhraseStats`, :func:`candidate_terms`).

``pipeline.model.labels`` chooses among the candidates; ``pipeline.model.label_evidence`` checks the chosen
label against the papers.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pipeline.core.inputs import ROOT
from pipeline.model.label_words import english_stop_words, other_number, stem, word_stems
from pipeline.model.vocab import ACADEMIC_STOP_WORDS, CLAUSE_BREAK

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
    rule rules notion notions abstract abstracts
    """.split()
)


#: A word followed by another content word more often than this is a modifier ("adversarial",
#: "stochastic", "graph"), not something a label can end with; nouns that head compounds stay
#: above it ("voting" 0.36 on IJCAI, "music" 0.32, "hashing" 0.49; "adversarial" 0.01).
MIN_HEAD_SHARE = 0.3
#: ... and it must end a phrase at least this many times (or in every use, when it has fewer): one
#: use decides nothing. "discriminatory" (NeurIPS 2018, a topic of 14 papers: "fairness and
#: discriminatory") and "differentially private" (NeurIPS 2017, 18 papers) each had three uses, two
#: followed by a noun ("discriminatory behavior", "differentially private bayesian") and one that
#: ended a clause: a share of 0.33, above the limit, from one use.
MIN_HEAD_USES = 2
#: Words a noun phrase is seldom followed by (a determiner or an object pronoun: "reduces the",
#: "employing a")...
_OBJECT_WORDS = frozenset("the a an its their our these this those them it his her each every both any such".split())
#: ... or preceded by (an auxiliary, a modal, "not" or an adverb that qualifies a verb: "is biased").
#: Not "to": it is a preposition before nouns as often as it marks a verb ("invariant to rotations").
_PREDICATE_WORDS = frozenset(
    "is are was were be been being can could may might will would should must not also often thereby".split()
)
#: The limits below were read off each of ICML 2024, ICLR 2022, NeurIPS 2023 and IJCAI 2020-2024
#: (``benchmarks/label_grammar.py``, which lists, per corpus, every word of 50+ uses over a limit and
#: the shares of every single-word label part the topic-variants runs produced):
#: a term followed by a determiner or an object pronoun more often than this is a verb, not a topic.
#: "reduces" 0.53-0.70 and "employing" 0.31-0.61 (both once label parts); every word of 50+ uses
#: above it is a verb or a gerund with an object ("achieves", "integrating"); label nouns reach
#: 0.15 ("tracking", "faces"), "pose" 0.09-0.14 where papers estimate poses (0.30 on ICML's, where
#: they pose problems).
MAX_OBJECT_SHARE = 0.25
#: A single word preceded by an auxiliary, a modal or "not" more often than this is a predicate:
#: "biased" 0.12-0.22, then adjectives and participles ("limited", "trained"); label nouns at most
#: 0.09 ("scale").
MAX_PREDICATE_SHARE = 0.12
#: Words before a verb's infinitive or after a modal ("to learn visual concepts", "can generate
#: speech"): a phrase of several words that follows one of these (or an adverb in "-ly") in more
#: than :data:`MAX_VERB_SHARE` of its uses starts with a verb ("learn visual", "generate speech";
#: both once label parts). Measured over the 457 phrases of several words the topic-variants runs
#: made labels of, with each corpus's papers: those two follow such a word in every use; of the
#: others with two such uses or more, none in more than 0.22 of its uses ("unseen classes";
#: "adversarial examples" 0.19).
_VERB_MARKS = frozenset("to can could may might will would should must not".split())
MAX_VERB_SHARE = 0.5
#: How much the share of the topic's papers using a term counts (score * share ** this).
COVERAGE_WEIGHT = 0.4
#: Most words of one phrase after completion.
MAX_PHRASE_WORDS = 4
#: Generic words that may still complete a phrase ("diffusion models", "hidden markov models").
_HEADS = frozenset({"model", "models"})
WORD_PATTERN = r"[^\W\d_][\w'-]*"
_WORD = re.compile(WORD_PATTERN)


#: A clause ends at anything that is not part of a word (the keywords' rule too); a lone hyphen
#: stays as a token of its own, which no phrase crosses either.
_NOT_WORD = CLAUSE_BREAK


@dataclass(frozen=True)
class TopicTerms:
    """A topic's representations, best first, and optionally its papers' text.

    Attributes:
        ctfidf: ``(term, weight)`` by c-TF-IDF.
        keybert: terms re-ranked by KeyBERTInspired.
        mmr: terms re-ranked by maximal marginal relevance.
        text: the topic's papers prepared by :func:`topic_text` ("" skips the phrase checks).
        size: the topic's number of papers (0: unknown), for the lift a topic of its size can reach.
        titles: the own titles of the papers in ``text``, in its order (None where a paper has no
            title of its own), or None where the titles are not known.
    """

    ctfidf: list[tuple[str, float]]
    keybert: list[str] = field(default_factory=list)
    mmr: list[str] = field(default_factory=list)
    text: str = ""
    size: int = 0
    titles: tuple[str | None, ...] | None = None

    @functools.cached_property
    def title_stems(self) -> list[frozenset[str]] | None:
        """The words of each paper's own title in ``text`` (:attr:`titles`, in the same order; an
        empty set where a paper has none), or None where the titles are not known."""
        return None if self.titles is None else [doc_stems(t) if t else frozenset() for t in self.titles]


#: A bracketed abbreviation ("out-of-distribution (OOD) detection") moves to the end of its paper,
#: so that what it follows and what follows it stay one clause: otherwise the bracket ended the
#: clause, and "out-of-distribution" read as a noun ending a phrase there.
ABBREVIATIONS_APART = True
_ABBREVIATION = re.compile(r"\(\s*([^\W\d_]*[A-Z][^\W\d_]*[A-Z][\w-]{0,8})\s*\)(?=\s)")


def _abbreviations_apart(doc: str) -> str:
    if "(" not in doc:
        return doc
    found: list[str] = []
    doc = _ABBREVIATION.sub(lambda m: found.append(m.group(1)) or " ", doc)  # spaces are collapsed after
    return doc + "".join(f" ({a})" for a in found)


def topic_text(docs: Sequence[str]) -> str:
    """A topic's papers as one lower-case string for phrase search.

    Words are separated by single spaces and the text is padded with them, so that `` term ``
    finds a term as a whole; clauses are separated by ``|`` and papers by ``||``, so that no phrase
    is found across a bracket, a comma or two papers (a bracketed abbreviation is moved out of the
    way first, :data:`ABBREVIATIONS_APART`).
    """
    if ABBREVIATIONS_APART:
        docs = [_abbreviations_apart(d) for d in docs]
    text = "\n".join(d.replace("\n", " ") for d in docs).lower()
    text = _NOT_WORD.sub(" | ", text).replace("\n", " || ")
    # every run of whitespace one space, none at the ends: ``str.split`` knows the whitespace the
    # pattern ``\s`` knows (every code point checked), in under a third of the time of the two passes
    # of the pattern ``[^\S\n]+`` that did this before (tests/test_stages.py compares the two)
    return " " + " ".join(text.split()) + " "


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
SPREAD_WORDS_FILE = ROOT / "assets" / "labels" / "spread_words.txt"


@functools.lru_cache(maxsize=1)
def spread_stems() -> frozenset[str]:
    """The stems of :data:`SPREAD_WORDS_FILE` (a missing file is an error: labels would change)."""
    with open(SPREAD_WORDS_FILE, encoding="utf-8") as fh:
        return frozenset(line.strip() for line in fh if line.strip() and not line.startswith("#"))


def is_spread(term: str) -> bool:
    """True for a single word that every ML subfield uses ("observed", "guarantees"): it may be part
    of a phrase ("convergence guarantees") but says nothing about a topic on its own."""
    return " " not in term.strip() and stem(term.strip()) in spread_stems()


@dataclass
class _Phrase:
    """What the topic's papers say about one candidate."""

    term: str
    count: int  # occurrences inside one clause
    head_share: float  # share of occurrences not followed by another content word
    object_share: float = 0.0  # share followed by a determiner or an object pronoun ("reduces the")
    predicate_share: float = 0.0  # share preceded by an auxiliary, a modal, "not" or an adverb ("is biased")
    adverb: bool = False  # ends in an adjective + "ly" ("exponentially", "grows exponentially")
    verb_share: float = 0.0  # share after "to", a modal or an adverb ("to learn visual"; several words only)
    adjective: bool = False  # one word in "-able" or "-ible" never written in the plural ("interpretable")
    adverb_led: bool = False  # two words, the first an adverb in "-ly" ("strongly convex", "jointly learn")

    @property
    def is_noun_phrase(self) -> bool:
        """The papers use it as a noun phrase can be used: it ends a phrase, in at least
        :data:`MIN_HEAD_USES` of its uses (not a modifier: "adversarial"), takes no object (not a
        verb: "reduces"), is not a single-word predicate ("biased"; a phrase after "is" is usually a
        noun phrase: "a central problem is coalition structure generation"), does not start with a
        verb (several words after "to" or a modal: "to learn visual concepts"), does not end in an
        adverb ("exponentially"), is not an adjective in "-able" ("interpretable") and is not an
        adverb with the one word it qualifies, nor that word alone where adverbs often qualify it
        ("strongly convex", "convex": an adverb qualifies an adjective, a participle or a verb,
        never a noun; "weakly supervised learning" has its noun)."""
        several = " " in self.term
        return (
            self.head_share >= (MIN_HEAD_SHARE if not several else MIN_HEAD_SHARE / 2)
            and round(self.head_share * self.count) >= min(MIN_HEAD_USES, self.count)
            and not _over(self.object_share, self.count, MAX_OBJECT_SHARE)
            and not (not several and _over(self.predicate_share, self.count, MAX_PREDICATE_SHARE))
            and not (several and _over(self.verb_share, self.count, MAX_VERB_SHARE))
            and not self.adverb
            and not self.adjective
            and not self.adverb_led
        )


#: Uses in a verb's or a predicate's place that a term needs before it is taken for one (one use
#: decides nothing; "consolidating", twice followed by "the" or "these" in the 38-paper NeurIPS 2026
#: corpus, is a verb).
MIN_CONTEXT_USES = 2


def _over(share: float, count: int, limit: float) -> bool:
    """More than ``limit`` of ``count`` uses, and at least :data:`MIN_CONTEXT_USES` of them."""
    return share > limit and round(share * count) >= MIN_CONTEXT_USES


#: Whether a single word in "-able" or "-ible" that the papers never write in the plural is taken
#: for an adjective (:func:`is_able_adjective`; False: the variant ``noable``).
ABLE_ADJECTIVES = True
#: A single word the papers write more often as the last part of a hyphenated word than on its own
#: ("shot": "few-shot", "zero-shot") is not the word they use: the candidate is that hyphenated word
#: where most of those uses are one ("few-shot", then completed and checked as any phrase: "few-shot
#: learning"), else none (True; False: the variant ``hyphenparts``). A label's coverage counts a
#: hyphenated word's parts, so "shots" covered the papers that wrote "few-shot" and named topics
#: ("classification and shots", ICLR 2019).
WHOLE_WORDS = True
#: A candidate is completed by the word written before it, and a word by the hyphenated word whose
#: last part it is (:data:`WHOLE_WORDS`), where more than this share of its uses have that word or
#: prefix (the word after it completes it at more than half).
PREFIX_SHARE = 0.6
#: A noun the papers count ("a graph", "an image") takes the indefinite article in at least this share
#: of its uses as a noun; on NeurIPS 1987-2023's topics one they do not ("language", "likelihood",
#: "ranking") does in 0-3%, most counted ones in 7-39%; a few counted ones under 5% ("human",
#: "embedding") keep the count of every use (EVALUATION.md, "A word's number from its uses as a noun").
COUNT_SHARE = 0.05
#: Whether an adverb in "-ly" marks what it qualifies as no noun: a phrase of two words whose first
#: is one ("strongly convex", ``_Phrase.adverb_led``), and a single word preceded by one (or by an
#: auxiliary) in more than :data:`MAX_PREDICATE_SHARE` of its uses ("convex" in "strongly convex");
#: False: the variant ``noadverbpair``. "communication and strongly convex", then "communication
#: and convex", named a topic of ICLR 2020 (2026-12-06, twenty-seventh session).
ADVERB_PAIRS = True


def is_able_adjective(term: str, text: str) -> bool:
    """``term`` is one word in "-able" or "-ible" and ``text`` (a :func:`topic_text`) never has it in
    the plural: an adjective ("interpretable", "scalable", "differentiable"), which the noun check
    misses where the papers put it at the end of a clause ("models that are more interpretable":
    "explanations and interpretable" named a topic of the NeurIPS keyword proxy). Nouns in "-able"
    take a plural ("variables", "observables", "tables")."""
    return " " not in term and len(term) >= 7 and term.endswith(("able", "ible")) and f" {term}s " not in text


def adverb_bases(term: str) -> list[str]:
    """The adjectives the last word of ``term`` would be made from if it is an adverb in "-ly"
    ("grows exponentially" -> "exponential", "easily" -> "easy"); none for other words. The word is
    an adverb when the papers also write one of these: nouns ending in "-ly" ("anomaly", "family",
    "assembly") have none."""
    word = term.strip().rsplit(" ", 1)[-1]
    if not word.endswith("ly") or len(word) < 6:
        return []
    return [word[:-2], *([word[:-3] + "y"] if word.endswith("ily") else [])]


def doc_stems(doc: str) -> frozenset[str]:
    """The words of one paper's text as stems (hyphenated words also by part)."""
    return frozenset().union(*map(word_stems, set(_WORD.findall(doc.lower()))))


def words_after(text: str, term: str) -> Counter:
    """The word right after each occurrence of `` term `` in ``text`` inside a clause: what
    ``re.findall(rf" {re.escape(term)} ([^ |]+)", text)`` finds (occurrences that do not overlap,
    left to right), without compiling a pattern for each term (a topic's candidates ask for
    thousands of terms)."""
    needle = f" {term} "
    found: Counter = Counter()
    start = text.find(needle)
    while start != -1:
        at = start + len(needle)
        end = text.find(" ", at)
        word = text[at : end if end != -1 else len(text)].split("|", 1)[0]
        if word:
            found[word] += 1
            start = text.find(needle, at + len(word))
        else:
            start = text.find(needle, start + 1)
    return found


class PhraseStats:
    """Phrase statistics over a :func:`topic_text` (plain substring search: fast on large topics)."""

    def __init__(self, text: str):
        self.text = text
        words = text.split(" ")
        self.reverse = " ".join(reversed(words))
        self._hyphenated_words = [w for w in words if "-" in w]  # (:meth:`_hyphenated`)
        self.docs = [f" {d.strip()} " for d in text.split(" || ")]
        self.n_docs = len(self.docs)
        self.stop = english_stop_words()
        self._next_words: dict[tuple[str, str], Counter] = {}
        self._adverbs: dict[str, bool] = {}
        self._hyphens: dict[str, str | None] = {}
        self._ends: dict[str, Counter] | None = None

    @property
    def doc_stems(self) -> list[frozenset[str]]:
        """Each paper's words as stems (hyphenated words also by part), for the support check."""
        if not hasattr(self, "_doc_stems"):
            self._doc_stems = [doc_stems(d) for d in self.docs]
        return self._doc_stems

    def doc_share(self, term: str) -> float:
        """Share of the topic's papers that use ``term``."""
        needle = f" {term} "
        return sum(needle in d for d in self.docs) / max(self.n_docs, 1)

    def _after(self, term: str) -> Counter:
        """The words right after each occurrence of ``term`` inside a clause (kept per term: each
        search reads the whole text, and a topic's candidates ask for the same terms again)."""
        key = ("after", term)
        if key not in self._next_words:
            self._next_words[key] = words_after(self.text, term)
        return self._next_words[key]

    def noun_uses(self, term: str) -> int:
        """How often the papers write ``term`` with no content word right after it (as a noun, not
        as the modifier of another: "on the graph", not "graph neural networks")."""
        count = self.text.count(f" {term} ")
        return count - sum(c for w, c in self._after(term).items() if w not in self.stop)

    def countable(self, word: str) -> bool:
        """The papers count ``word``: they write it after "a" or "an" as a noun at least twice and in
        at least :data:`COUNT_SHARE` of its uses as a noun ("a graph", not "natural language")."""
        articles = self.noun_uses(f"a {word}") + self.noun_uses(f"an {word}")
        return articles >= max(2, COUNT_SHARE * self.noun_uses(word))

    def _before(self, term: str) -> Counter:
        """The words right before each occurrence (found as the words after it in the reversed text)."""
        key = ("before", term)
        if key not in self._next_words:
            reverse_term = " ".join(reversed(term.split()))
            self._next_words[key] = words_after(self.reverse, reverse_term)
        return self._next_words[key]

    def _dominant(self, words: Counter, count: int, share: float) -> str | None:
        """The content word (grouping plurals) next to most occurrences, if it is next to more than ``share``."""
        groups: dict[str, Counter] = {}
        for w, c in words.items():
            if w in self.stop or not _WORD.fullmatch(w) or (w in ACADEMIC_STOP_WORDS and w not in _HEADS):
                continue
            groups.setdefault(stem(w), Counter())[w] += c
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
        if WHOLE_WORDS and " " not in term and "-" not in term and (whole := self._hyphenated(term, count)) != term:
            return None if whole is None else self.phrase(whole)  # "few-shot": it is completed as any phrase
        after = self._after(term)
        for _ in range(2):
            if len(term.split()) >= MAX_PHRASE_WORDS:
                break
            nxt = self._dominant(after, count, 0.5)
            prev = None if nxt else self._dominant(self._before(term), count, PREFIX_SHARE)
            if not (nxt or prev):
                break
            term = f"{term} {nxt}" if nxt else f"{prev} {term}"
            count = self.text.count(f" {term} ")
            if count == 0:
                return None
            after = self._after(term)
        content_next = sum(c for w, c in after.items() if w not in self.stop)
        objects = sum(c for w, c in after.items() if w in _OBJECT_WORDS)
        predicates = sum(
            c
            for w, c in self._before(term).items()
            if w in _PREDICATE_WORDS or (ADVERB_PAIRS and " " not in term and self._is_adverb(w))
        )
        adverb = self._is_adverb(term)
        adjective = ABLE_ADJECTIVES and is_able_adjective(term, self.text)
        words = term.split()
        adverb_led = ADVERB_PAIRS and len(words) == 2 and self._is_adverb(words[0])
        verbs = 0
        if " " in term:  # a verb's marks before it: "to", a modal, an adverb ("jointly learn ...")
            verbs = sum(c for w, c in self._before(term).items() if w in _VERB_MARKS or self._is_adverb(w))
        return _Phrase(
            term,
            count,
            head_share=1.0 - content_next / count,
            object_share=objects / count,
            predicate_share=predicates / count,
            adverb=adverb,
            verb_share=verbs / count,
            adjective=adjective,
            adverb_led=adverb_led,
        )

    def _hyphenated(self, word: str, count: int) -> str | None:
        """``word`` itself where it stands on its own at least as often as it ends hyphenated words
        (either number); else the hyphenated word the papers write in most of those uses ("few-shot"
        for "shot", "k-means" for "means"), or None where none is (4-bit, 8-bit, low-bit)."""
        if word not in self._hyphens:
            self._hyphens[word] = self._whole_word(word, count)
        return self._hyphens[word]

    def _whole_word(self, word: str, count: int) -> str | None:
        if self._ends is None:  # the topic's hyphenated words by their last part, counted once
            self._ends = {}
            for token in self._hyphenated_words:
                head, _, last = token.rpartition("-")
                if head and last:
                    self._ends.setdefault(last, Counter())[token] += 1
        forms = (word, other_number(word))
        ends = sum((self._ends.get(f, Counter()) for f in forms), Counter())
        hyphenated = sum(ends.values())
        if hyphenated <= count or hyphenated <= count + self.text.count(f" {forms[1]} "):
            return word  # (the other number is counted only where the word's own uses are fewer)
        prefixes: Counter = Counter()
        for whole, n in ends.items():
            prefixes[whole.rpartition("-")[0]] += n
        prefix, n = max(prefixes.items(), key=lambda kv: (kv[1], kv[0]))
        if n <= PREFIX_SHARE * hyphenated:
            return None
        return max((w for w in ends if w.rpartition("-")[0] == prefix), key=lambda w: (ends[w], w))

    def _is_adverb(self, term: str) -> bool:
        """``term`` ends in an "-ly" word whose adjective the papers also write ("jointly": "joint");
        kept per word: each search reads the whole text, and the phrases ask for the same words."""
        word = term.rsplit(" ", 1)[-1]
        if word not in self._adverbs:
            self._adverbs[word] = any(f" {base} " in self.text for base in adverb_bases(word))
        return self._adverbs[word]


def candidate_terms(
    terms: TopicTerms,
    depth: int = 20,
    *,
    min_papers: int = 2,
    text: PhraseStats | None = None,
    generic_phrases: bool = False,
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
    text = text if text is not None else (PhraseStats(terms.text) if terms.text else None)
    scored: dict[str, float] = {}
    for term, score in raw.items():
        if text is not None:
            found = text.phrase(term)
            if found is None or not found.is_noun_phrase:
                continue
            term = found.term
            share = text.doc_share(term)
            if share * text.n_docs < min(min_papers, text.n_docs):
                continue  # one paper's word (a system's name) does not name a topic
            score *= share**COVERAGE_WEIGHT
        if is_generic(term) and not (generic_phrases and " " in term):
            continue
        score *= 1.0 + 0.25 * min(len(term.split()) - 1, 2)
        scored[term] = max(score, scored.get(term, 0.0))
    return sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
