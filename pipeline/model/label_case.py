"""Labels written as their papers write them: "distributed SGD", "Gaussian processes and Monte
Carlo", "VLMs", where the labels' terms are lower case ("distributed sgd", "vlms").

The labels are chosen from the vectorizer's terms, which are lower case, so acronyms and names read
wrong on the map and in the lists. Each word of a label is looked up in its topic's papers (without
their titles, whose capitals are a style), where a paper uses it inside a sentence: right after
another word ("with distributed SGD", "by Monte Carlo sampling"), not at a sentence's start. The
word takes the form most of those uses have, where that form is not all lower case and more than
half of them have it; otherwise it stays as it was. Authors capitalise the words of a phrase they
abbreviate ("Markov Decision Processes (MDPs)"), so the uses right before the bracket are not
counted, and word by word, not phrase by phrase: "decision" is written in lower case elsewhere,
"Markov" is not, and the label reads "Markov decision processes". Only the letters' case changes:
every measure of a label reads it in lower case.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.core.ranking import evenly_spread
from pipeline.model.label_evidence import PART_SEPARATOR

#: :data:`PART_SEPARATOR` as a group, so that splitting a label keeps its separators as they are.
_SEPARATOR = re.compile(f"({PART_SEPARATOR.pattern})")

#: A use inside a sentence: right after another word, only spaces between them.
_AFTER_A_WORD = re.compile(r"\w +$")

#: What follows a word of a phrase being abbreviated: capitalised words, then the bracket.
_ABBREVIATED = re.compile(r"(?: [A-Z][\w'-]*)* ?\(")

#: Characters read before a use for the word there.
_LOOK_BACK = 40

#: Where a paper's title ends in its modelling text ("Title. Abstract", or "Title? Abstract").
_TITLE_END = re.compile(r"[.?!] ")


def written_labels(
    table: pd.DataFrame, docs: Sequence[str], topics: np.ndarray, titles: Sequence[str | None] | None, sample: int
) -> pd.DataFrame:
    """The topics ``table`` with its ``label`` and ``part_labels`` written as each topic's papers
    write them (:func:`written_label`), read in up to ``sample`` of its papers, evenly spread, without
    their titles (``docs`` are the modelling texts, a paper's own title first where ``titles`` has one)."""
    table = table.copy()
    topics = np.asarray(topics)
    texts = {}
    for topic in table["topic"]:
        members = np.flatnonzero(topics == topic)
        rows = members[evenly_spread(len(members), sample)]
        texts[topic] = [_abstract(docs[j], titles is not None and bool(titles[j])) for j in rows]
    table["label"] = [written_label(label, texts[t]) for t, label in zip(table["topic"], table["label"], strict=True)]
    if "part_labels" in table:
        table["part_labels"] = [
            [written_label(part, texts[t]) for part in parts]
            for t, parts in zip(table["topic"], table["part_labels"], strict=True)
        ]
    return table


def _abstract(doc: str, titled: bool) -> str:
    """A modelling text without the paper's own title (title case is no evidence of a name)."""
    if not titled:
        return doc
    end = _TITLE_END.search(doc)
    return doc[end.end() :] if end else ""


def written_label(label: str, texts: Sequence[str]) -> str:
    """``label`` with each word of its parts (:func:`written_form`) as its uses inside a sentence in
    ``texts`` mostly write it (the module's rule); the commas and "and"s between parts as they are."""
    pieces = _SEPARATOR.split(label)
    for i in range(0, len(pieces), 2):  # the parts; the separators are the odd pieces
        pieces[i] = written_form(pieces[i], texts)
    return "".join(pieces)


def written_form(part: str, texts: Sequence[str]) -> str:
    """``part`` with each of its words in the form that more than half of the word's uses inside a
    sentence in ``texts`` have, where that form is not all lower case."""
    return " ".join(_written_word(word, texts) for word in part.split(" "))


def _written_word(word: str, texts: Sequence[str]) -> str:
    if not word or not word.islower():
        return word
    pattern = re.compile(rf"(?<![\w'-]){re.escape(word)}(?![\w'-])", re.IGNORECASE)
    forms: Counter = Counter()
    for text in texts:
        for match in pattern.finditer(text):
            if _ABBREVIATED.match(text, match.end()):
                continue
            if _AFTER_A_WORD.search(text, max(0, match.start() - _LOOK_BACK), match.start()):
                forms[match.group(0)] += 1
    if not forms:
        return word
    form, count = min(forms.items(), key=lambda item: (-item[1], item[0]))  # ties: one answer on any machine
    return form if form.lower() == word and not form.islower() and 2 * count > sum(forms.values()) else word
