"""The modelling vocabulary: tokenisation, stop words and the paper-by-term count matrix.

One ``CountVectorizer`` configuration serves c-TF-IDF (BERTopic), keyword trends, the relevance
slider and coherence, so a keyword means the same thing everywhere.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from pipeline.core.background import map_chunks

#: Words that carry no topic in an abstract ("we propose a novel method ..."). Added to
#: scikit-learn's English list; a keyword made of these is never shown.
ACADEMIC_STOP_WORDS = frozenset(
    """
    paper papers propose proposed proposes proposing approach approaches method methods methodology
    result results show shows showed shown demonstrate demonstrates demonstrated novel new present
    presents presented introduce introduces introduced based using use used uses work works study
    studies problem problems task tasks existing state art performance performances achieve achieves
    achieved significant significantly experiment experiments experimental evaluation evaluate
    evaluated demonstrating effective effectiveness efficient efficiently framework frameworks
    model models modeling modelling technique techniques outperform outperforms outperforming
    improve improves improved improvement improvements provide provides provided propose paper
    various different large small high low order way ways key main recent recently specifically
    particular particularly including include includes furthermore moreover additionally however
    thus therefore extensive extensively comprehensive simple simply important importantly able
    allow allows allowing given consider considered considers called existing prior previous
    previously conventional typically commonly widely general generally problem respectively
    finally firstly second secondly third address addresses addressing aim aims focus focuses
    leverage leverages leveraging enable enables enabling benchmark benchmarks dataset datasets
    available code publicly release released github https http www com org html pdf arxiv
    et al ie eg vs via per non based-on stateoftheart state-of-the-art sota superior
    better best good strong stronger robust across within without wide range number numbers set sets
    real world real-world challenging challenge challenges crucial critical fundamental often
    well known terms term first novel effectively successfully also can may might could would
    one two three four five many much several often due lead leads led obtain obtained obtaining
    compared comparison compare compares comparing existing art-of-the significantly pp
    """.split()
)

#: Version of the terms a text gives (the tokens, stop words and how two-word terms are made). The
#: shipped background (``pipeline.model.background``) records the version it was counted with, and
#: a test holds it to this one. 2: terms within phrases (``WITHIN_PHRASES``, REPRESENT_VERSION 12).
VOCAB_VERSION = 2

#: Tokens: start with a letter, at least two characters, hyphenated compounds kept together
#: ("self-supervised", "gpt-4"); numbers alone never become terms.
TOKEN_PATTERN = r"(?u)\b[^\W\d_][^\W_]*(?:-[^\W_]+)*\b"


#: Anything that is not part of a word ends a clause (hyphenated words and apostrophes stay whole):
#: no keyword (:func:`make_vectorizer`) or label phrase (``pipeline.model.label_candidates``)
#: spans one ("images. Language ..." gives no "images language").
CLAUSE_BREAK = re.compile(r"[^\w\s'-]+|_+")
#: Where a term ends: a clause break, or a hyphen standing alone between words (the labels' words
#: keep it as a token of its own; the vectorizer's tokens drop it). Stop words end a term too.
PHRASE_BREAK = re.compile(CLAUSE_BREAK.pattern + r"|\s-+\s")

#: Put where a phrase breaks and counted as a stop word (``TermVectorizer``); a paper that writes
#: it has it read as a stop word too.
_BREAK = "zzphrasebreakzz"


def stop_words() -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS | ACADEMIC_STOP_WORDS)


def keeps_token(token: str) -> bool:
    return len(token) >= 2 and not token.replace("-", "").isdigit()


#: Terms are words written next to each other (``TermVectorizer``); False: scikit-learn's
#: n-grams of the words left once stop words are dropped (before ``REPRESENT_VERSION`` 12; kept
#: for ``benchmarks/topic_variants.py``'s ``acrossphrases``).
WITHIN_PHRASES = True


@functools.cache
def term_vectorizer_class() -> type:
    """``TermVectorizer`` (also ``pipeline.model.vocab.TermVectorizer``), made on first use so that
    what imports this module (the app does) does not import scikit-learn."""
    from sklearn.feature_extraction.text import CountVectorizer

    class TermVectorizer(CountVectorizer):
        """scikit-learn's CountVectorizer whose phrases are ones the papers write.

        scikit-learn drops stop words and then joins the words left into n-grams, so "large
        language models (LLMs)" gives "language llms" ("large" and "models" are stop words
        here) and "chain of thought" "chain thought": phrases no paper uses (29% of ICML
        2024's two-word terms). Here an n-gram is made only of words next to each other in
        one phrase: stop words and punctuation (:data:`PHRASE_BREAK`) end it. Single words
        are scikit-learn's. Its parameters are CountVectorizer's own (BERTopic saves them as
        JSON); one made again from them (``BERTopic.load``) counts the saved vocabulary in
        scikit-learn's way.
        """

        def build_analyzer(self):
            stops = frozenset(self.get_stop_words() or ()) | {_BREAK}
            token = re.compile(self.token_pattern)
            low, high = self.ngram_range
            lowercase = self.lowercase

            def analyze(doc: str) -> list[str]:
                doc = PHRASE_BREAK.sub(f" {_BREAK} ", doc.lower() if lowercase else doc)
                words = [None if w in stops else w for w in token.findall(doc)]  # None ends a phrase
                out = [w for w in words if w is not None] if low <= 1 else []
                for size in range(max(low, 2), high + 1):
                    grams = zip(*(words[i:] for i in range(size)), strict=False)  # shorter tails end it
                    out += [" ".join(g) for g in grams if None not in g]
                return out

            return analyze

    TermVectorizer.__module__, TermVectorizer.__qualname__ = __name__, "TermVectorizer"  # pickled by name
    return TermVectorizer


def __getattr__(name: str):
    if name == "TermVectorizer":
        return term_vectorizer_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_vectorizer(
    *, ngram_range=(1, 2), min_df: int = 1, max_df: float = 1.0, vocabulary=None, within_phrases: bool | None = None
):
    """The project's vectorizer (``TermVectorizer``: lowercase, English + academic stop words,
    1-2-grams of words written next to each other; ``within_phrases`` False or
    :data:`WITHIN_PHRASES` off: scikit-learn's n-grams)."""
    from sklearn.feature_extraction.text import CountVectorizer

    within = WITHIN_PHRASES if within_phrases is None else within_phrases
    return (term_vectorizer_class() if within else CountVectorizer)(
        lowercase=True,
        stop_words=stop_words(),
        token_pattern=TOKEN_PATTERN,
        ngram_range=tuple(ngram_range),
        min_df=min_df,
        max_df=max_df,
        vocabulary=vocabulary,
        dtype=np.int32,
    )


def default_min_df(n_docs: int) -> int:
    """Terms must appear in this many papers to enter the vocabulary."""
    if n_docs < 200:
        return 1
    if n_docs < 2_000:
        return 2
    if n_docs < 20_000:
        return 3
    return 5


@dataclass(frozen=True)
class DocTerms:
    """Paper-by-term counts.

    Attributes:
        counts: int32 CSR ``(n_docs, n_terms)``.
        terms: str ``(n_terms,)``, sorted.
    """

    counts: sparse.csr_matrix
    terms: np.ndarray

    @property
    def vocabulary(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.terms.tolist())}

    def presence(self) -> sparse.csr_matrix:
        """Binary version (a paper uses the term or not), int32 CSR."""
        out = self.counts.copy()
        out.data[:] = 1
        return out


#: Above this many papers the vocabulary's candidate terms come from an evenly spaced sample of
#: this many papers (:func:`doc_terms`); the counts are always exact.
VOCAB_SAMPLE = 200_000
#: Papers counted at once against a fixed vocabulary.
COUNT_CHUNK = 50_000


def doc_terms(texts: list[str], *, ngram_range=(1, 2), min_df: int | None = None) -> DocTerms:
    """Count terms in each text (cleaned modelling text).

    Terms that fail ``keeps_token`` (too short, digits only) are dropped; so are terms used
    by more than 60% of papers (they separate nothing) when the corpus has 20 papers or more.

    Up to ``VOCAB_SAMPLE`` papers the vocabulary is every term used by ``min_df`` papers. Beyond,
    collecting every distinct one- and two-word term of every paper first (scikit-learn's way)
    would hold tens of millions of strings, most used once; the candidates are instead the terms
    used by at least two papers of an evenly spaced sample of ``VOCAB_SAMPLE`` papers (at a million
    papers, a term used by about 1 in 50,000 papers or fewer may be missed), then every paper is
    counted against them in chunks and ``min_df`` and the 60% limit apply to the exact counts.
    """
    n = len(texts)
    min_df = min(min_df or default_min_df(n), max(n, 1))
    max_df = 0.6 if n >= 20 else 1.0
    empty = DocTerms(sparse.csr_matrix((n, 0), dtype=np.int32), np.array([], dtype=object))
    if n > VOCAB_SAMPLE:
        return _doc_terms_sampled(texts, ngram_range=ngram_range, min_df=min_df, max_df=max_df) or empty
    if n < PARALLEL_MIN_DOCS:
        vec = make_vectorizer(ngram_range=ngram_range, min_df=min_df, max_df=max_df)
        try:
            counts = vec.fit_transform(texts)
        except ValueError:  # empty vocabulary (e.g. every word is a stop word)
            return empty
        terms = vec.get_feature_names_out()
        keep = np.array([all(keeps_token(t) for t in term.split()) for term in terms], dtype=bool)
        return DocTerms(counts[:, keep].tocsr(), terms[keep])
    count = functools.partial(count_terms, ngram_range=tuple(ngram_range), within_phrases=WITHIN_PHRASES)
    parts = list(map_chunks(count, texts, TERMS_CHUNK, parallel=True))
    return _merge_counts(parts, n, min_df=min_df, max_df=max_df) or empty


#: Papers from which the terms are counted in chunks of :data:`TERMS_CHUNK`, in worker processes
#: where there are two CPUs or more (``map_chunks``), then merged as scikit-learn would have
#: counted them at once. Measured here (same texts, same process, both ways alternating): 9,000
#: papers 2.1 s in one chunk against 1.9 s by scikit-learn, 18,661 even (about 5 s), 30,000 7.8 s
#: against 8.9 s, 100,000 20.4 s against 31.8 s.
PARALLEL_MIN_DOCS = 20_000
TERMS_CHUNK = 10_000


def count_terms(texts: list[str], ngram_range=(1, 2), within_phrases: bool = True) -> tuple:
    """One chunk's terms counted as scikit-learn's ``CountVectorizer`` counts them before it sorts
    its vocabulary (a worker's task): ``(terms, col, count, indptr)``, the chunk's terms in
    first-seen order, then for each text its terms in the order the text first uses them, int32
    term (into ``terms``) and count, and int64 row pointers."""
    analyze = make_vectorizer(ngram_range=ngram_range, within_phrases=within_phrases).build_analyzer()
    numbers: dict[str, int] = {}
    cols: list[int] = []
    values: list[int] = []
    indptr = [0]
    for text in texts:
        counter: dict[int, int] = {}
        for term in analyze(text):
            number = numbers.setdefault(term, len(numbers))
            counter[number] = counter.get(number, 0) + 1
        cols.extend(counter)
        values.extend(counter.values())
        indptr.append(len(cols))
    return list(numbers), np.asarray(cols, dtype=np.int32), np.asarray(values, dtype=np.int32), np.asarray(indptr)


def _merge_counts(parts: list[tuple], n: int, *, min_df: int, max_df: float) -> DocTerms | None:
    """The chunks' counts as ``CountVectorizer(min_df, max_df).fit_transform`` of all the texts
    gives them, then terms failing ``keeps_token`` dropped: terms sorted, each row's entries in
    the order of the terms' first use in the corpus (scikit-learn sorts a row by the numbers it
    gave the terms as it met them, then renumbers the terms sorted); None where scikit-learn
    finds no term (an empty vocabulary, or none left by ``min_df`` and ``max_df``)."""
    import pandas as pd

    # First use in the corpus: the chunks in order, each chunk's terms in first-seen order.
    first_use, terms = pd.factorize(
        np.concatenate([np.asarray(p[0], dtype=object) for p in parts] or [np.array([], dtype=object)])
    )
    if not len(terms) or max_df * n < min_df:
        return None
    starts = np.cumsum([0] + [len(p[0]) for p in parts])
    firsts = [first_use[start + p[1]] for p, start in zip(parts, starts, strict=False)]  # each entry's term
    df = np.bincount(np.concatenate(firsts), minlength=len(terms))
    kept = np.flatnonzero((df >= min_df) & (df <= max_df * n))
    kept = kept[[all(keeps_token(w) for w in term.split()) for term in terms[kept]]] if len(kept) else kept
    if not len(kept):
        return None
    names = sorted(terms[kept].tolist())
    final = np.full(len(terms), -1, dtype=np.int64)
    final[pd.Index(terms).get_indexer(names)] = np.arange(len(names))
    data, indices, row_lengths = [], [], []
    for (_, _, value, indptr), first in zip(parts, firsts, strict=True):
        row = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        order = np.lexsort((first, row))
        col_out = final[first[order]]
        keep = col_out >= 0
        data.append(value[order][keep])
        indices.append(col_out[keep].astype(np.int32))
        row_lengths.append(np.bincount(row[order][keep], minlength=len(indptr) - 1))
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(row_lengths))])
    counts = sparse.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr), shape=(n, len(names)))
    return DocTerms(counts, np.array(names, dtype=object))


def _doc_terms_sampled(texts: list[str], *, ngram_range, min_df: int, max_df: float) -> DocTerms | None:
    """``doc_terms`` for large corpora: candidates from a sample, exact counts in chunks."""
    n = len(texts)
    step = n / VOCAB_SAMPLE
    sample = [texts[int(i * step)] for i in range(VOCAB_SAMPLE)]
    try:
        candidates = make_vectorizer(ngram_range=ngram_range, min_df=2).fit(sample).get_feature_names_out()
    except ValueError:
        return None
    del sample
    candidates = np.array([t for t in candidates if all(keeps_token(w) for w in t.split())], dtype=object)
    vec = make_vectorizer(ngram_range=ngram_range, vocabulary={t: i for i, t in enumerate(candidates)})
    counts = sparse.vstack(
        [vec.transform(texts[start : start + COUNT_CHUNK]) for start in range(0, n, COUNT_CHUNK)], format="csr"
    )
    df = np.bincount(counts.indices, minlength=len(candidates))
    keep = np.flatnonzero((df >= min_df) & (df <= max_df * n))
    if not len(keep):
        return None
    return DocTerms(counts[:, keep].tocsr().astype(np.int32), candidates[keep])
