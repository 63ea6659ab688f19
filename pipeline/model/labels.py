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
video" for a topic of 3D scenes, video and segmentation); both parts must be distinctive. Where
the best label of one or two parts would be marked weak, three parts may name it, if together
they are not weak ("neural architecture search, pruning and quantization"). Labels
are unique within a corpus, and no label's words contain another's ("diffusion models" /
"diffusion models research" cannot both occur): ``pipeline.model.label_choice`` chooses each topic's
label among its options (:func:`topic_options`) for the whole corpus. With the corpus's embedder, a
label must also retrieve its own topic: embedded, it is closer to its topic's centroid than to any other.

A paper's title names its subject; its abstract also names its setting: the data set it reports
on, the tool it uses, a piece of its method. A term the corpus's papers write in their abstracts
but seldom in their titles ("imagenet", "server", "observational data": :func:`names_setting`)
names no topic, unless the label chosen without such terms would be marked weak. Of two labels the
abstracts support alike, the one more of the topic's papers name in their titles ranks higher
(:data:`TITLE_WEIGHT`).

Words every paper of a field writes ("neural networks", "learning", "data") are no label on their
own, except a phrase of them where no other label is used by half of the topic's papers: a topic
of deep-learning methods shares little else, and the phrase must pass the lift test too.

Every label is then checked against its evidence (:func:`label_support`): the share of the
topic's papers that use its words. Below :data:`WEAK_SUPPORT` (fewer than half of them) the app
marks it weak wherever the label appears.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.model.label_background import Background
from pipeline.model.label_candidates import (
    SMALL_CORPUS,
    PhraseStats,
    TopicTerms,
    candidate_terms,
    is_generic,
    is_spread,
)
from pipeline.model.label_evidence import (
    MIN_PART_SHARE,
    SUPPORT_TOP_TERMS,
    WEAK_SUPPORT,
    generic_label_earned,
    is_weak,
    label_parts,
    wilson_lower,
)
from pipeline.model.label_fallback import unread_options
from pipeline.model.label_options import Option, TopicOptions
from pipeline.model.label_words import is_abbreviation, other_number, same_word, stems_of, terms_overlap

#: A part of an "A and B" label used by fewer of the topic's papers is their subject, not the topic's.
MIN_PART_PAPERS = 3
#: A candidate names its topic when the topic's papers use it at least this many times as often as
#: the corpus's papers do (for a topic of a large share p of the corpus, half-way to the most
#: possible, 1/p: a topic of 45% cannot reach 2).
MIN_LIFT = 2.0
#: How many times as much a label's recall (coverage) counts as its precision (:class:`_Scorer`):
#: 3 rather than 2 raised label coverage by 0.01-0.04 on ICML 2024, ICLR 2022 and the IJCAI
#: subarea proxy (two seeds each, every one) with every label still retrieving its topic.
RECALL_WEIGHT = 3.0
#: The second part of an "A and B" label must add at least this share of the topic's papers, and
#: be used by at least ``MIN_PART_SHARE`` of them itself (``pipeline.model.label_evidence``)...
MIN_GAIN = 0.08
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
#: A term the corpus's papers use in their abstracts but seldom in their titles names their setting
#: (a data set, a tool, a part of the method), not their subject: "imagenet" in the abstracts of
#: 119 papers of NeurIPS 2022 and the titles of 2, "server" in 31 and 0. Below this share of the
#: papers using it that put it in their title (:meth:`Background.title_share`, where titles are
#: known), a term is no label and no part of one, unless the label chosen without such terms would
#: be marked weak (EVALUATION.md, "Labels from what the papers' titles name").
MIN_TITLE_SHARE = 0.10
#: An option that most of its topic's papers use ranks higher by this much times the share of the
#: topic's papers whose own title uses it (where titles are known): a paper's title names its
#: subject, so of two labels the abstracts support alike, the one the titles name is what the
#: papers would recognise ("regret and bandits", not "regret and games"; "distillation and
#: continual learning", not "distillation and forgetting"). A weak option gains nothing: titles do
#: not make a label that fewer than half of the papers use better (EVALUATION.md, "Labels the
#: papers' titles name").
TITLE_WEIGHT = 0.1
#: Whether a word of a label that the papers count (``PhraseStats.countable``) takes its number from
#: the singular's uses as a noun (no content word after it) rather than from all its uses (False:
#: the variant ``numberall``): "graphs", not "graph", for a topic whose papers write "graph neural
#: networks" and "on graphs" (EVALUATION.md, "A word's number from its uses as a noun").
NOUN_NUMBER = True
#: Most words a label may have ("and" included).
MAX_WORDS = 5
#: A label of three parts is tried only when the best-ranked label of one or two parts would be
#: weak: the lower bound of its coverage (Wilson, 80%, as :func:`label_support` computes it, before
#: rounding and without its rule for a part few papers use) under this...
THREE_PARTS_BELOW = WEAK_SUPPORT
#: ... (until ``REPRESENT_VERSION`` 14, only when no option of one or two parts had a coverage of
#: this, however it ranked: EVALUATION.md, "Three parts where the best label is weak")...
THREE_PARTS_BY_BEST = True
#: ... and then built on this many of the best two-part labels, with at most this many words
#: ("and" included).
THREE_PART_PAIRS = 4
THREE_PART_WORDS = 6


@dataclass
class _Part:
    """A candidate part of a label: the topic's papers that use it, and the corpus's."""

    term: str
    score: float  # relevance by the topic's representations (c-TF-IDF, KeyBERT, MMR)
    used: object  # bool array over the topic's papers read
    coverage: float  # share of those papers
    lift: float  # coverage / the corpus's share (inf without a background)
    corpus_rows: object  # the background's rows using it (None without a background)
    setting: bool = False  # the corpus's papers seldom put it in their titles (:func:`names_setting`)
    in_title: object = None  # bool array over the topic's papers read: their title uses it (None: unknown)


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


def _number(forms: list[tuple[str, float]], text: PhraseStats) -> str:
    """A word in the plural when its papers use the plural at least a third as often as the singular
    ("graphs", "images": a label names a kind of work), else as the best-scored form ("privacy",
    "optimization"). Of a noun the papers count ("a graph"), the singular's uses as a noun are
    weighed, not its uses as the modifier of another ("graph neural networks"); a noun they do
    not count ("language", "motion", "likelihood": never "a language" on its own) keeps every use
    in the count, as before."""
    best = max(forms, key=lambda ts: (ts[1], ts[0]))[0]
    plural = next((t for t, _ in forms if t.endswith("s") and not t.endswith("ss")), None)
    singular = next((t for t, _ in forms if t != plural), None)
    if plural is None or singular is None:
        return best
    plurals = 3 * text.text.count(f" {plural} ")
    if plurals >= text.text.count(f" {singular} "):  # then also against its fewer uses as a noun
        return plural
    if not NOUN_NUMBER:
        return singular
    return plural if plurals >= text.noun_uses(singular) and text.countable(singular) else singular


def _parts(
    terms: TopicTerms,
    text: PhraseStats,
    scorer: _Scorer,
    min_lift: float,
    min_papers: int,
    generic_phrases: bool = False,
) -> list[_Part]:
    """The topic's candidates with their coverage and lift, best first; only distinctive ones
    (lift at least ``min_lift``) when the background is known, each marked where it names a
    setting (:func:`names_setting`)."""
    import numpy as np

    cands = candidate_terms(terms, depth=40, min_papers=min_papers, text=text, generic_phrases=generic_phrases)
    title_stems = terms.title_stems if terms.titles is not None and len(terms.titles) == text.n_docs else None
    phrases = [t for t, _ in cands if " " in t]
    # one candidate per set of words, with the best score of its forms: a word in the plural when
    # the papers use it ("graphs", "equations": a label names a kind of work), a phrase as written
    # most often
    forms: dict[frozenset[str], list[tuple[str, float]]] = {}
    for term, score in cands:
        group = forms.setdefault(frozenset(stems_of(term)), [])
        group.append((term, score))
        if " " not in term:  # its other number, as the papers write it
            other = other_number(term)
            if stems_of(other) == stems_of(term) and f" {other} " in text.text:
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
        if " " not in term and any(is_abbreviation(term, p) for p in phrases):
            continue  # "nas": the phrase it abbreviates stands for it
        words = frozenset().union(*label_parts(term))
        if not words or (scorer.small and is_spread(term)):
            continue
        if is_generic(term) and not (generic_phrases and " " in term):
            continue  # "time", the number its papers write of "times": as generic as candidate_terms finds it
        used = np.fromiter((words <= d for d in text.doc_stems), dtype=bool, count=text.n_docs)
        coverage = float(used.mean()) if text.n_docs else 0.0
        lift, rows = math.inf, None
        if scorer.background is not None:
            rows = scorer.background.rows(words)
            base = len(rows) / scorer.background.n
            lift = coverage / base if base > 0 else math.inf
            if lift < min_lift:
                continue
        # "imagenet", "server": what the papers use or where, not what they are about
        setting = names_setting(scorer.background, words)
        in_title = None if title_stems is None else np.fromiter((words <= d for d in title_stems), dtype=bool)
        out.append(_Part(term, score, used, coverage, lift, rows, setting, in_title))
    return out


def names_setting(background: Background | None, words: frozenset[str]) -> bool:
    """Whether the corpus's papers write ``words`` so seldom in their titles (:data:`MIN_TITLE_SHARE`)
    that they name a setting, not a subject; False where titles are not known."""
    share = background.title_share(words) if background is not None else None
    return share is not None and share < MIN_TITLE_SHARE


def _bonus(term: str) -> float:
    """A phrase's advantage in the ranking: it says more than a word."""
    return PHRASE_BONUS * min(len(term.split()) - 1, 2)


def _below(coverage: float, n: int, cut: float = WEAK_SUPPORT) -> bool:
    """Whether a coverage of the ``n`` papers read has a lower bound (Wilson, as :func:`label_support`
    computes it, before rounding and its rule for a part few papers use) under ``cut``: weak."""
    return wilson_lower(round(coverage * n), n) < cut


def _title_bonus(parts: Sequence[_Part], coverage: float) -> float:
    """An option's gain from the titles (:data:`TITLE_WEIGHT`): none where titles are unknown or the
    option, used by ``coverage`` of the topic's papers read, would be weak."""
    import numpy as np

    n = len(parts[0].used)
    if any(p.in_title is None for p in parts) or not n or _below(coverage, n):
        return 0.0
    return TITLE_WEIGHT * float(np.logical_or.reduce([p.in_title for p in parts]).mean())


def _joins(other: _Part, taken: Sequence[_Part], used, max_words: int) -> bool:
    """Whether ``other`` may join the parts ``taken`` (whose papers are ``used``) as one more part of
    a label of at most ``max_words`` words with "and": it shares no word with them, is used by
    :data:`MIN_PART_SHARE` of the papers itself and adds :data:`MIN_GAIN` of them."""
    if " and " in other.term or any(other is t or terms_overlap(t.term, other.term) for t in taken):
        return False
    if sum(len(t.term.split()) for t in taken) + len(other.term.split()) + 1 > max_words:
        return False
    if other.coverage < MIN_PART_SHARE or int(other.used.sum()) < MIN_PART_PAPERS:
        return False
    return float((other.used & ~used).mean()) >= MIN_GAIN


def _union_rows(parts: Sequence[_Part]):
    """The background's rows using any of ``parts`` (None without a background)."""
    import numpy as np

    if any(p.corpus_rows is None for p in parts):
        return None
    return functools.reduce(np.union1d, [p.corpus_rows for p in parts])


def _label_options(parts: list[_Part], scorer: _Scorer) -> list[Option]:
    """Possible labels from the candidates, best first.

    Every candidate is an option; the best few also start a two-part option ("A and B") with the
    candidate that adds most to it, when that one shares no word with it, adds at least
    :data:`MIN_GAIN` of the topic's papers and is used by :data:`MIN_PART_SHARE` of them itself.
    Options rank by :meth:`_Scorer.rank` (a second part costs :data:`PART_COST`; a phrase gains a
    little over a word: it says more). Where the best of them would be weak, options of three parts
    join (:data:`THREE_PARTS_BY_BEST`, :func:`_three_part_options`).
    """
    if not parts:
        return []

    top = max(p.score for p in parts) or 1.0

    def relevance(part: _Part) -> float:
        return RELEVANCE_WEIGHT * part.score / top

    options: dict[str, Option] = {}
    singles = []
    for p in parts:
        titled = _title_bonus([p], p.coverage)
        rank = scorer.rank(p.coverage, scorer.precision(p.coverage, p.corpus_rows)) + _bonus(p.term) + relevance(p)
        singles.append((rank + titled, p))
        options[p.term] = Option(p.term, p.coverage, rank + titled, titled=titled)
    singles.sort(key=lambda rp: (-rp[0], rp[1].term))
    pairs: list[tuple[float, _Part, _Part, _Part]] = []  # the best second part of each first part
    for _, first in singles[:8]:
        if first.coverage < MIN_PART_SHARE or len(first.term.split()) >= MAX_WORDS - 1:
            continue
        best = None
        for other in parts:
            if not _joins(other, [first], first.used, MAX_WORDS):
                continue
            coverage = float((first.used | other.used).mean())
            a, b = (first, other) if first.coverage >= other.coverage else (other, first)
            rank = scorer.rank(coverage, scorer.precision(coverage, _union_rows([first, other]))) - PART_COST
            titled = _title_bonus([a, b], coverage)
            rank += max(_bonus(a.term), _bonus(b.term)) + relevance(first) + titled
            if best is None or rank > best.rank:
                best = Option(f"{a.term} and {b.term}", coverage, rank, titled=titled)
                pair = (rank, a, b, first)
        if best is not None and (best.label not in options or options[best.label].rank < best.rank):
            options[best.label] = best
            pairs.append(pair)
    if THREE_PARTS_BY_BEST:  # where the lower bound of the best-ranked option's coverage is under 0.5
        # ranked as without titles: a label the titles favour still leaves a weak topic its three parts
        leader = min(options.values(), key=lambda o: (-(o.rank - o.titled), o.label))
        n = len(parts[0].used)
        tried = n > 0 and _below(leader.coverage, n, THREE_PARTS_BELOW)
    else:
        tried = max(o.coverage for o in options.values()) < THREE_PARTS_BELOW
    if tried:
        for option in _three_part_options(sorted(pairs, key=lambda p: (-p[0], p[1].term, p[2].term)), parts, scorer):
            if option.label not in options or options[option.label].rank < option.rank:
                options[option.label] = option
    return sorted(options.values(), key=lambda o: (-o.rank, o.label))


def _three_part_options(
    pairs: list[tuple[float, _Part, _Part, _Part]], parts: list[_Part], scorer: _Scorer
) -> list[Option]:
    """Labels "A, B and C" for a topic whose best label of one or two parts does not describe most of
    its papers (a heterogeneous topic named by its parts, "3D, video and segmentation"): the best few pairs,
    each with the third part that ranks best, under the same rules as a second part (its own share,
    the papers it adds, no shared word) in at most :data:`THREE_PART_WORDS` words, and one more
    :data:`PART_COST` in the ranking; only where the three together are not weak (their support,
    as :func:`label_support` measures it, reaches :data:`WEAK_SUPPORT`): a weak label of three
    parts is longer than one of two and says no more. Parts are listed by how many of the topic's
    papers use them."""
    out = []
    top = max(p.score for p in parts) or 1.0
    for _, a, b, first in pairs[:THREE_PART_PAIRS]:
        both = a.used | b.used
        best = None
        for other in parts:
            if not _joins(other, [a, b], both, THREE_PART_WORDS):
                continue
            used = both | other.used
            if is_weak(wilson_lower(int(used.sum()), len(used))):
                continue  # three parts that still name fewer than half of the papers say no more than two
            coverage = float(used.mean())
            rank = scorer.rank(coverage, scorer.precision(coverage, _union_rows([a, b, other]))) - 2 * PART_COST
            rank += max(_bonus(t.term) for t in (a, b, other)) + RELEVANCE_WEIGHT * first.score / top
            titled = _title_bonus([a, b, other], coverage)
            if best is None or rank + titled > best.rank:
                named = sorted((a, b, other), key=lambda q: (-q.coverage, q.term))
                best = Option(
                    f"{named[0].term}, {named[1].term} and {named[2].term}", coverage, rank + titled, titled=titled
                )
        if best is not None:
            out.append(best)
    return out


def topic_options(
    terms: TopicTerms, *, text: PhraseStats | None = None, background: Background | None = None, total: int = 0
) -> TopicOptions:
    """All labels worth trying for one topic, best first (:func:`_label_options`); terms of one
    paper only when nothing two papers share is left (a handful of unrelated papers). Where the
    corpus's titles are known, those with a term that names a setting are apart
    (:meth:`TopicOptions.plain`)."""
    text = text if text is not None else (PhraseStats(terms.text) if terms.text else None)
    if text is None or not text.n_docs:
        return TopicOptions([Option(t, math.nan, -i) for i, t in enumerate(unread_options(candidate_terms(terms)))])
    share = (terms.size or text.n_docs) / max(total, 1) if total else 0.0
    scorer = _Scorer(background, share, total)
    # a topic of a large share p of the corpus cannot reach a lift of 1/p: half-way to it suffices
    min_lift = MIN_LIFT if not 0 < share < 1 else min(MIN_LIFT, 1 + (1 / share - 1) / 2)
    for min_papers in (2, 1):
        parts = _parts(terms, text, scorer, min_lift, min_papers)
        subjects = [p for p in parts if not p.setting]
        options = _weighed(_ranked(subjects, terms, text, scorer, min_lift, min_papers), text.n_docs)
        if len(subjects) == len(parts):
            plain = None  # no candidate names a setting: the options are the same
        else:
            # the options as made of every candidate, a setting's terms too, on demand: the choice
            # takes one of them only where the label it would choose without them is weak
            def plain(parts=parts, min_papers=min_papers):
                return _weighed(_ranked(parts, terms, text, scorer, min_lift, min_papers), text.n_docs)

        result = TopicOptions(options, plain)
        if options or result.plain():
            return result
    return TopicOptions([])


def _weighed(options: list[Option], n: int) -> list[Option]:
    """``options`` with :attr:`Option.weak` set from their coverage of the ``n`` papers read."""
    for o in options:
        o.weak = _below(o.coverage, n)
    return options


def _ranked(parts, terms, text, scorer, min_lift, min_papers) -> list[Option]:
    """The options of one topic from its candidates ``parts`` (:func:`_parts`), best first."""
    options = _echoing(_label_options(parts, scorer), terms)
    if GENERIC_PHRASES and max((o.coverage for o in options), default=0.0) < WEAK_SUPPORT:
        options = _with_generic_phrases(options, parts, terms, text, scorer, min_lift, min_papers)
    return options


def _with_generic_phrases(options, parts, terms, text, scorer, min_lift, min_papers) -> list[Option]:
    """``options`` and those that phrases of generic words give (:data:`GENERIC_PHRASES`), where
    the corpus is known (their lift is measured on it), in a label not weak or half of the papers use."""
    if scorer.background is None or (scorer.small and not GENERIC_IN_SMALL_CORPORA):
        return options
    wider = _parts(terms, text, scorer, min_lift, min_papers, generic_phrases=True)
    if not any(p.setting for p in parts):  # the subjects' options: no setting among the wider ones either
        wider = [p for p in wider if not p.setting]
    if len(wider) == len(parts):
        return options
    known = {o.label for o in options}
    new = [o for o in _label_options(wider, scorer) if o.label not in known]
    more = [o for o in new if generic_label_earned(o.label, o.coverage, text.n_docs)]
    if GENERIC_WHEN_WEAK and all(_below(o.coverage, text.n_docs) for o in [*options, *more]):
        earned = {o.label for o in more}  # weak, but used by half of the papers:
        more += [o for o in new if o.label not in earned and o.coverage >= WEAK_SUPPORT]
    return _echoing(sorted([*options, *more], key=lambda o: (-o.rank, o.label)), terms)


#: Where no option is used by half of the topic's papers, phrases made only of generic words
#: ("neural networks", "deep learning") are candidates too, under the same lift test as any other
#: measured on the corpus. A topic of deep-learning methods and theory shares little but those
#: words: on the held-out NeurIPS 2021 it was named "sparse training" (11% of its 155 papers use
#: it, marked weak) and is now "neural networks" (81%, lift 2.9). Measured on ten corpora
#: (EVALUATION.md, "Phrases of generic words").
GENERIC_PHRASES = True  # in a label not weak (``label_evidence.generic_label_earned``) or used by half
#: ... in corpora under :data:`SMALL_CORPUS` papers too (since ``REPRESENT_VERSION`` 11; before,
#: only from it). On NeurIPS 2017 (678 papers) a topic of 66 papers on training deep networks was
#: "residual networks" (9% of its papers) and is "neural networks and deep learning" (86%); on the
#: eight corpora under 1,000 papers, seeds 0-5, label coverage rose or held in every cell
#: (EVALUATION.md, "Phrases of generic words in small corpora").
GENERIC_IN_SMALL_CORPORA = True
#: ... and in a weak label too where at least half of the topic's papers read use it (the share
#: itself, not the lower bound the weak mark reads) and every other option is weak; False (the
#: variant ``genericstrict``): only in a label that is not weak. On the held-out
#: NeurIPS 2018 with the build's seed, the largest topic (190 papers: deep learning, GANs,
#: adversarial examples) was "generative adversarial networks", which 12% of its papers use, and is
#: "deep learning and classification" (51%, still marked weak); 2 labels of 3,339 change on 27
#: corpora, seeds 0-5 and 42, no coverage lower (EVALUATION.md, "A weak label names what half of
#: its papers share").
GENERIC_WHEN_WEAK = True


def _echoing(options: list[Option], terms: TopicTerms) -> list[Option]:
    """The options sharing a word with the topic's top keywords, where any does: the page shows
    both, and a label that none of its keywords echo reads as another topic's."""
    top = set().union(*(stems_of(t) for t, _ in terms.ctfidf[:SUPPORT_TOP_TERMS] if t)) if terms.ctfidf else set()
    echoed = [o for o in options if any(same_word(w, t) for p in label_parts(o.label) for w in p for t in top)]
    return echoed or options


def near_best(options: list[Option]) -> list[Option]:
    """The options ranked within :data:`RETRIEVAL_SLACK` of the best, best first."""
    return [o for o in options if o.rank >= options[0].rank - RETRIEVAL_SLACK] if options else []
