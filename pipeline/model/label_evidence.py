"""How far a label is supported by its topic's papers (:func:`label_support`), and how the app
marks a weak one (:func:`is_weak`, :func:`shown_labels`).

A label's support is the share of its topic's papers that use its words, as a lower confidence
bound; below :data:`WEAK_SUPPORT` the app marks the label weak wherever it appears.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from pipeline.model.label_candidates import WORD_PATTERN, PhraseStats, TopicTerms, is_generic
from pipeline.model.label_words import english_stop_words, same_word, stems_of

#: Below this support (:func:`label_support`: the share of the topic's papers using the label's
#: words, as a lower confidence bound) a label is weak: fewer than half of its papers would
#: recognise it, or too few papers say so.
WEAK_SUPPORT = 0.5


#: How many of the topic's c-TF-IDF terms count as its "top terms" (:class:`LabelSupport`).
SUPPORT_TOP_TERMS = 10
#: The mark the app appends to a weak label wherever it shows it.
WEAK_MARK = " (?)"
#: Decimals a support is shown with; the weak flag is decided on the number shown, so that a
#: support of 0.496, shown as 0.50, is not flagged below a cut of 0.5.
SUPPORT_DIGITS = 2


#: The second part of an "A and B" label must be used by at least this share of the topic's papers
#: (else it names a side issue; ``pipeline.model.labels``), and in a label's support such a part counts
#: at most twice its own share.
MIN_PART_SHARE = 0.15


@dataclass(frozen=True)
class LabelSupport:
    """How well a label agrees with its topic's papers.

    Attributes:
        papers: share of the topic's papers (0-1) whose title or abstract use all the words of the
            label, or for "A and B" all the words of A or all the words of B (and so for "A, B and
            C"; plurals folded; stop words aside), as a share one can be sure of: the lower bound of its confidence
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
    """The words of each part of a label ("A and B" has two, "A, B and C" three) as stems, stop words aside.

    A paper uses a part when it uses every one of these words ("graph neural networks": graph,
    neural and network), anywhere in its title or abstract.
    """
    return list(_label_parts(label))


#: What separates the parts of a label: "A and B", "A, B and C".
PART_SEPARATOR = re.compile(r",\s*|\s+and\s+")


@functools.lru_cache(maxsize=65_536)
def _label_parts(label: str) -> tuple[frozenset[str], ...]:
    """:func:`label_parts`, kept per label: choosing a corpus's labels asks for the same few
    hundred labels' parts tens of thousands of times."""
    stop = english_stop_words()
    base = _NUMBERED.sub("", label.strip().lower()).removesuffix(WEAK_MARK.strip().lower()).strip()
    parts = []
    for part in PART_SEPARATOR.split(base):
        part_stems = stems_of(" ".join(w for w in re.findall(WORD_PATTERN, part) if w not in stop))
        if part_stems:
            parts.append(frozenset(part_stems))
    return parts


def label_support(label: str, terms: TopicTerms, *, text: PhraseStats | None = None) -> LabelSupport:
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
        text = PhraseStats(terms.text)
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
    top = set().union(*(stems_of(t) for t, _ in terms.ctfidf[:SUPPORT_TOP_TERMS] if t)) if terms.ctfidf else set()
    words = set().union(*parts)
    found = sum(any(same_word(w, t) for t in top) for w in words)
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


def weak_labels_note(labels) -> str:
    """What the mark means, said under the map (the app's map page and the offline export's map; the
    Topics page says it in its caption), with how many of ``labels`` (as shown) carry it; "" when
    none do."""
    weak = sum(1 for lab in labels if isinstance(lab, str) and lab.endswith(WEAK_MARK))
    if not weak:
        return ""
    return (
        f"{WEAK_MARK.strip()} marks {weak} weak label{'s' if weak != 1 else ''}: fewer than half of the topic's "
        "papers use the label's words (all of them, or all of one part's), or too few papers to be sure (its "
        f"label support, the lower bound of an 80% confidence interval of that share, is under "
        f"{WEAK_SUPPORT:.{SUPPORT_DIGITS}f}). Read such a topic's papers before trusting its name."
    )


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


def contains(a: str, b: str) -> bool:
    """True when the words of one label are all among the other's ("diffusion models" and
    "diffusion models research", "reinforcement learning" and "offline reinforcement learning")."""
    sa, sb = _label_words(a), _label_words(b)
    return bool(sa) and bool(sb) and (sa <= sb or sb <= sa)


@functools.lru_cache(maxsize=65_536)
def _label_words(label: str) -> frozenset[str]:
    """The words of all of a label's parts, kept per label: choosing a corpus's labels checks every
    option of every topic against every label taken."""
    return frozenset().union(*_label_parts(label))


def generic_label_earned(label: str, coverage: float, n: int) -> bool:
    """Whether a label may stand with a part made only of generic words ("neural networks"): only
    where it names most of its topic (``coverage`` of ``n`` papers read is not weak). Labels
    without such a part always may."""
    if not any(is_generic(part) for part in PART_SEPARATOR.split(label.strip()) if part):
        return True
    return not is_weak(wilson_lower(round(coverage * n), n))
