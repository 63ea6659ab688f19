"""Terms written as the corpus's papers write them: "distributed SGD", "Gaussian processes",
"LLMs", where the vectorizer's terms are lower case ("distributed sgd", "llms").

Labels and keywords are made of the vectorizer's terms, so acronyms and names read wrong on the
map, in the lists and on the charts. Each word is looked up in the corpus's papers (without their
titles, whose capitals are a style), where a paper uses it inside a sentence: right after another
word ("with distributed SGD", "by Monte Carlo sampling"), not at a sentence's start. The word takes
the form most of those uses have, where that form is not all lower case and more than half of them
have it; otherwise it stays as it is. Authors capitalise the words of a phrase they abbreviate
("Markov Decision Processes (MDPs)"), so the uses right before the bracket are not counted, and
word by word, not phrase by phrase: "decision" is written in lower case elsewhere, "Markov" is
not, and the label reads "Markov decision processes". The forms are the corpus's, not a topic's,
so that a word reads the same in a label, a keyword list and a trend chart. Only the letters'
case changes: every measure of a label reads it in lower case, and the app and the build look
terms up in lower case.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from pipeline.core.ranking import evenly_spread
from pipeline.model.label_evidence import PART_SEPARATOR

#: :data:`PART_SEPARATOR` as a group, so that splitting a label keeps its separators as they are.
_SEPARATOR = re.compile(f"({PART_SEPARATOR.pattern})")

#: A use inside a sentence: a word right after another word, only spaces between them.
_AFTER_A_WORD = re.compile(r"(?<=\w) +([\w'-]+)")

#: The uses of the words of a phrase being abbreviated, read backwards: the bracket, the phrase's
#: capitalised words, each after one space, and the word before them, after a word. Reading the
#: texts backwards lets the search jump from bracket to bracket (a tenth of the time of the same
#: pattern read forwards, which tries it after every word).
_ABBREVIATED_BACKWARDS = re.compile(r"\( ?((?:[\w'-]*[A-Z] )*[\w'-]+) +(?=\w)")

#: Where a paper's title ends in its modelling text ("Title. Abstract", or "Title? Abstract").
_TITLE_END = re.compile(r"[.?!] ")

#: Papers of the corpus read for the forms (evenly spread): every paper of a one-year conference.
#: On NeurIPS 1987-2023 (18,661 papers) 10,000 of them give every label word and all but one of
#: the keywords', KeyBERT and MMR terms' words the form all of them give ("G-CNNs" stays "g-cnns";
#: 668 of the 2,086 words of its vocabulary that all the papers write otherwise, rarer ones, stay
#: lower case), in 0.7 s against 1.9 s for all; 5,000 left two ("RBMs", "SATNet") lower case.
FORMS_SAMPLE = 10_000

#: Papers that must write a word in its form for the corpus to: one paper's style ("Ethical",
#: "k-Means", from a method's or a data set's name) does not say how a corpus writes a word, as
#: one paper's word names no topic (``label_candidates.candidate_terms``'s ``min_papers``).
MIN_PAPERS = 2


def corpus_forms(docs: Sequence[str], titles: Sequence[str | None] | None, limit: int = FORMS_SAMPLE) -> dict[str, str]:
    """:func:`written_forms` of up to ``limit`` of the corpus's papers, evenly spread, without their
    titles (``docs`` are the modelling texts, a paper's own title first where ``titles`` has one)."""
    rows = evenly_spread(len(docs), limit)
    return written_forms(_abstract(docs[j], titles[j] if titles is not None else None) for j in rows)


def written_forms(texts: Iterable[str]) -> dict[str, str]:
    """Each lower-case word that the ``texts`` mostly write otherwise inside a sentence, with that
    form ("sgd": "SGD", "gaussian": "Gaussian"): the form more than half of the word's uses right
    after another word have, uses before an abbreviation's bracket aside, where at least
    :data:`MIN_PAPERS` of the texts use it so; words whose uses are mostly lower case or split
    between forms are left out."""
    uses: Counter = Counter()
    papers: Counter = Counter()
    for text in texts:
        found = Counter(_AFTER_A_WORD.findall(text))
        if "(" in text:
            for phrase in _ABBREVIATED_BACKWARDS.findall(text[::-1]):
                words = phrase[::-1].split(" ")
                found[words[0]] -= 1
                for before, word in zip(words, words[1:], strict=False):
                    if before[-1].isalnum() or before[-1] == "_":  # a use right after a word, so one counted
                        found[word] -= 1
            found = +found  # the uses left
        uses.update(found)
        papers.update(found.keys())
    forms: dict[str, dict[str, int]] = {}
    for form in uses:
        if not form.islower():
            forms.setdefault(form.lower(), {})
    for form, count in uses.items():
        if form.lower() in forms:
            forms[form.lower()][form] = count
    written = {}
    for word, counts in forms.items():
        form, count = min(counts.items(), key=lambda item: (-item[1], item[0]))  # ties: one answer on any machine
        if word.islower() and not form.islower() and 2 * count > sum(counts.values()) and papers[form] >= MIN_PAPERS:
            written[word] = form
    return written


def _abstract(doc: str, title: str | None) -> str:
    """A modelling text without the paper's own ``title`` (title case is no evidence of a name):
    the text after it where the text starts with it (a title may hold a sentence's end: "Are GANs
    Created Equal? A Large-Scale Study"), else after the text's first sentence end."""
    if not title:
        return doc
    if doc.startswith(title):
        return doc[len(title) :]
    end = _TITLE_END.search(doc)
    return doc[end.end() :] if end else ""


def written_labels(table: pd.DataFrame, forms: Mapping[str, str]) -> pd.DataFrame:
    """The topics ``table`` with its ``label`` and ``part_labels`` written with ``forms``
    (:func:`written_label`)."""
    table = table.copy()
    table["label"] = [written_label(label, forms) for label in table["label"]]
    if "part_labels" in table:
        table["part_labels"] = [[written_label(part, forms) for part in parts] for parts in table["part_labels"]]
    return table


def written_label(label: str, forms: Mapping[str, str]) -> str:
    """``label`` with each word of its parts written as ``forms`` has it (:func:`written_term`);
    the commas and "and"s between parts as they are."""
    pieces = _SEPARATOR.split(label)
    for i in range(0, len(pieces), 2):  # the parts; the separators are the odd pieces
        pieces[i] = written_term(pieces[i], forms)
    return "".join(pieces)


def shown_term(term: str, written: Mapping[str, str]) -> str:
    """A term as the app and the export show it: the build's ``written`` form of a vocabulary term
    (``terms.parquet``; ``written`` holds the terms whose form differs, and the single words among
    them), else word by word (a phrase a reader typed: "distributed sgd" -> "distributed SGD")."""
    return written.get(term) or written_term(term, written)


def written_term(term: str, forms: Mapping[str, str]) -> str:
    """``term`` with each of its lower-case words as ``forms`` writes it ("distributed sgd" ->
    "distributed SGD"); words ``forms`` does not hold, or not in lower case, as they are."""
    return " ".join(forms.get(word, word) if word.islower() else word for word in term.split(" "))
