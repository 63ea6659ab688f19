"""Quality measures for topic models.

Pure functions: no printing, no file I/O. The ``python -m pipeline evaluate`` runner reads the
corpus and the artifacts, calls these and writes the report.

Measures:

* :func:`clustering_scores`: agreement with reference labels (NMI, ARI), with and without outliers.
* :func:`topic_diversity`: share of distinct words among the topics' top words.
* :func:`npmi_coherence`: NPMI of each topic's top words over document co-occurrence in the corpus.
* :func:`stability`: mean pairwise ARI between the assignments of several runs (e.g. seeds).
* :func:`topic_stability`: per topic, how well other runs reproduce it (best Jaccard overlap).
* :func:`keyword_problem`: why a keyword is a fragment (LaTeX, URL, number, stop word), if it is.

The baselines they are compared with are in ``pipeline.evaluation.baselines``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from pipeline.model.label_candidates import doc_stems
from pipeline.model.label_evidence import contains, label_parts
from pipeline.model.vocab import make_vectorizer

#: Added to joint probabilities so that pairs that never co-occur get a finite NPMI (close to -1).
NPMI_EPSILON = 1e-12


# --------------------------------------------------------------------------------------------
# Measures
# --------------------------------------------------------------------------------------------


def clustering_scores(
    labels_true: Sequence[Any] | np.ndarray,
    labels_pred: Sequence[int] | np.ndarray,
    *,
    outlier: int = -1,
) -> dict[str, float]:
    """Agreement of a clustering with reference labels.

    Args:
        labels_true: ``(n,)`` reference labels (any hashable values, e.g. area names).
        labels_pred: ``(n,)`` predicted cluster ids; ``outlier`` marks unassigned documents.
        outlier: the id that marks outliers.

    Returns:
        ``nmi_all``, ``ari_all``: over all documents, the outliers counted as one more cluster;
        ``nmi_inliers``, ``ari_inliers``: over the documents not marked as outliers (NaN when
        there are none); ``outlier_share``: share of outliers; ``n_clusters``: distinct
        non-outlier clusters.

    Raises:
        ValueError: the two label arrays differ in length or are empty.
    """
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    true = np.asarray(labels_true)
    pred = np.asarray(labels_pred)
    if true.shape != pred.shape or true.ndim != 1:
        raise ValueError(f"labels_true {true.shape} and labels_pred {pred.shape} must be equal 1-d shapes")
    if len(true) == 0:
        raise ValueError("no labels to compare")
    inlier = pred != outlier
    scores = {
        "nmi_all": float(normalized_mutual_info_score(true, pred)),
        "ari_all": float(adjusted_rand_score(true, pred)),
        "nmi_inliers": math.nan,
        "ari_inliers": math.nan,
        "outlier_share": float(1.0 - inlier.mean()),
        "n_clusters": float(len(np.unique(pred[inlier]))),
    }
    if inlier.any():
        scores["nmi_inliers"] = float(normalized_mutual_info_score(true[inlier], pred[inlier]))
        scores["ari_inliers"] = float(adjusted_rand_score(true[inlier], pred[inlier]))
    return scores


def topic_diversity(topic_words: Sequence[Sequence[str]], top_n: int = 10) -> float:
    """Share of distinct words among all topics' top ``top_n`` words.

    ``len(set(all top words)) / (n_topics * top_n)``: 1.0 when no word is shared, ``1 / n_topics``
    when every topic has the same words. NaN without topics.
    """
    if not topic_words:
        return math.nan
    top = [w for words in topic_words for w in list(words)[:top_n]]
    return len(set(top)) / (len(topic_words) * top_n)


def npmi_coherence(
    topic_words: Sequence[Sequence[str]],
    doc_term: sp.spmatrix | sp.sparray | np.ndarray,
    vocab: Mapping[str, int],
    top_n: int = 10,
) -> tuple[float, list[float]]:
    """NPMI coherence of each topic's top words, from document co-occurrence in the corpus.

    For each pair of a topic's top words present in ``vocab`` (unknown words and words used by no
    document are skipped), with probabilities over documents and ``eps`` = :data:`NPMI_EPSILON`:
    ``npmi = log((p(a,b) + eps) / (p(a) p(b))) / -log(p(a,b) + eps)``, in [-1, 1]; words that
    always co-occur score 1 (also when both are in every document), words that never do about -1.
    A topic's score is the mean over its pairs.

    Args:
        topic_words: per topic its words, best first. Terms may be bigrams ("neural network")
            when the vocabulary has them.
        doc_term: ``(n_docs, n_terms)`` term counts or presence; any non-zero counts as present.
        vocab: term -> column of ``doc_term``.
        top_n: words per topic to use.

    Returns:
        ``(mean, per_topic)``: per-topic scores in the order given (NaN for a topic with fewer
        than two usable words) and their mean over the topics that have one (NaN if none).
    """
    matrix = sp.csc_array(doc_term)
    n_docs = matrix.shape[0]
    if n_docs == 0:
        raise ValueError("doc_term has no documents")
    per_topic: list[float] = []
    for words in topic_words:
        columns: list[int] = []
        for word in list(words)[:top_n]:
            col = vocab.get(word)
            if col is not None and col not in columns:
                columns.append(col)
        if len(columns) < 2:
            per_topic.append(math.nan)
            continue
        present = (matrix[:, columns] != 0).astype(np.float64)
        co = (present.T @ present).toarray()  # (k, k) documents containing both
        df = np.diag(co).copy()
        keep = df > 0
        co, df = co[np.ix_(keep, keep)], df[keep]
        if len(df) < 2:
            per_topic.append(math.nan)
            continue
        p = df / n_docs
        values = []
        for i, j in itertools.combinations(range(len(df)), 2):
            joint = co[i, j] / n_docs + NPMI_EPSILON
            denominator = -math.log(joint)
            if denominator <= 1e-9:  # both words in every document: perfect co-occurrence
                values.append(1.0)
                continue
            values.append(math.log(joint / (p[i] * p[j])) / denominator)
        per_topic.append(float(np.mean(values)))
    valid = [v for v in per_topic if not math.isnan(v)]
    return (float(np.mean(valid)) if valid else math.nan), per_topic


def binary_doc_term(
    docs: Sequence[str],
    *,
    ngram_range: tuple[int, int] = (1, 2),
    stop_words: str | None = "english",
    min_df: int = 1,
) -> tuple[sp.csr_array, dict[str, int]]:
    """Document-term presence matrix for :func:`npmi_coherence` (reference corpus = the docs).

    Returns:
        ``(doc_term, vocab)``: ``(n_docs, n_terms)`` 0/1 int8 CSR array and term -> column.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(ngram_range=ngram_range, stop_words=stop_words, min_df=min_df, binary=True)
    matrix = vectorizer.fit_transform(docs)
    vocab = {str(term): int(col) for term, col in vectorizer.vocabulary_.items()}
    return sp.csr_array(matrix, dtype=np.int8), vocab


#: Label of a document a run did not cluster (left out of its sample): never compared.
ABSENT = -2


def stability(assignments: Sequence[np.ndarray]) -> float:
    """Mean adjusted Rand index over all pairs of assignments of the same documents.

    Args:
        assignments: two or more ``(n,)`` label arrays (e.g. one per random seed). Outliers are
            compared as one more cluster; a pair of runs is compared over the documents both
            clustered (not :data:`ABSENT` in either).

    Raises:
        ValueError: fewer than two assignments, or of different lengths.
    """
    from sklearn.metrics import adjusted_rand_score

    if len(assignments) < 2:
        raise ValueError("stability needs at least two assignments")
    lengths = {len(a) for a in assignments}
    if len(lengths) != 1:
        raise ValueError(f"assignments have different lengths: {sorted(lengths)}")
    scores = []
    for a, b in itertools.combinations(assignments, 2):
        a, b = np.asarray(a), np.asarray(b)
        both = (a != ABSENT) & (b != ABSENT)
        scores.append(adjusted_rand_score(a[both], b[both]))
    return float(np.mean(scores))


def topic_stability(labels: np.ndarray, others: Sequence[np.ndarray]) -> dict[int, float]:
    """How well each topic is reproduced by other clusterings of the same documents.

    For topic ``t`` of ``labels`` and each other run, the best Jaccard overlap
    ``|t & u| / |t | u|`` with any topic ``u`` of that run (``-1`` never matches), over the
    documents that run clustered (not :data:`ABSENT`); the topic's score is the mean over the runs:
    1.0 when every run has exactly this topic, near 0 when its papers are scattered over many
    topics.

    Args:
        labels: ``(n,)`` topic per document (``-1`` for none: gets no score).
        others: ``(n,)`` label arrays of other runs (e.g. other seeds, or runs on samples of the
            documents with ``ABSENT`` for those left out).

    Returns:
        topic id -> score in [0, 1]; NaN for every topic when ``others`` is empty.
    """
    from scipy import sparse

    labels = np.asarray(labels)
    topics = sorted(set(labels.tolist()) - {-1})
    if not others:
        return {int(t): math.nan for t in topics}
    row = {t: i for i, t in enumerate(topics)}
    scores = np.zeros(len(topics))
    for other in others:
        other = np.asarray(other)
        if other.shape != labels.shape:
            raise ValueError(f"runs differ in length: {other.shape} vs {labels.shape}")
        inlier = (labels != -1) & (other != ABSENT)
        a_rows = np.array([row[t] for t in labels[inlier].tolist()], dtype=np.int64)
        size_a = np.bincount(a_rows, minlength=len(topics)).astype(np.float64)
        ok = inlier & (other >= 0)
        ids, b_cols = np.unique(other[other >= 0], return_inverse=True)
        size_b = np.bincount(b_cols, minlength=len(ids)).astype(np.float64)
        col = {int(u): j for j, u in enumerate(ids.tolist())}
        joint = sparse.coo_matrix(
            (
                np.ones(int(ok.sum())),
                ([row[t] for t in labels[ok].tolist()], [col[int(u)] for u in other[ok].tolist()]),
            ),
            shape=(len(topics), len(ids)),
        ).toarray()
        union = size_a[:, None] + size_b[None, :] - joint
        jaccard = np.divide(joint, union, out=np.zeros_like(joint), where=union > 0)
        scores += jaccard.max(axis=1, initial=0.0)
    return {int(t): float(scores[i] / len(others)) for i, t in enumerate(topics)}


#: LaTeX command names that never occur in prose (the fragments a badly cleaned abstract leaves).
LATEX_WORDS = frozenset(
    [
        "mathbf",
        "mathcal",
        "mathrm",
        "mathbb",
        "mathit",
        "mathsf",
        "mathscr",
        "boldsymbol",
        "operatorname",
        "frac",
        "dfrac",
        "tfrac",
        "emph",
        "textbf",
        "textit",
        "texttt",
        "textrm",
        "textsc",
        "cite",
        "citep",
        "citet",
        "eqref",
        "ldots",
        "cdots",
        "vdots",
        "ddots",
        "mathop",
        "leq",
        "geq",
        "neq",
        "infty",
        "propto",
        "cdot",
        "varepsilon",
        "vspace",
        "hspace",
        "usepackage",
    ]
)
URL_WORDS = frozenset(["http", "https", "www", "com", "org", "html", "htm", "pdf", "arxiv", "doi"])


def keyword_problem(term: str) -> str | None:
    """Why ``term`` is a fragment rather than a keyword, or None when it is fine.

    Returns:
        "latex" (a LaTeX command or math symbol), "url" (a piece of a web address), "number" (a
        word that is only digits), "stop word" (a word of scikit-learn's English stop word list),
        "too short" (a one-letter word), or None.
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    if re.search(r"[\\$^_{}=<>|~]", term):
        return "latex"
    if re.search(r"https?:|www\.|\.(com|org|html?)\b|/", term):
        return "url"
    for word in term.lower().split():
        if word in LATEX_WORDS:
            return "latex"
        if word in URL_WORDS:
            return "url"
        if re.fullmatch(r"[\d.,%+-]+", word):
            return "number"
        if word in ENGLISH_STOP_WORDS:
            return "stop word"
        if len(word.strip("-.")) < 2:
            return "too short"
    return None


def reference_doc_term(docs: Sequence[str], terms: Sequence[str]) -> tuple[sp.csr_array, dict[str, int]]:
    """Presence of ``terms`` in ``docs``, for NPMI that treats every method's keywords alike.

    A term is present in a document when either of two tokenisations finds it there: the
    pipeline's (``pipeline.model.vocab``: stop words removed, hyphenated compounds kept, a phrase
    only as written word after word, so "graph neural" is not found in "graph of neural ...") or a
    plain one (scikit-learn's default tokens, no stop words removed: the words of vanilla BERTopic
    and LDA). Only the given terms get a column, so this stays small on large corpora.

    Returns:
        ``(doc_term, vocab)``: ``(n_docs, n_terms)`` 0/1 int8 CSR and term -> column.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    vocab = {t: i for i, t in enumerate(dict.fromkeys(t for t in terms if t and t.strip()))}
    n = len(docs)
    if not vocab:
        return sp.csr_array((n, 0), dtype=np.int8), vocab
    longest = max(len(t.split()) for t in vocab)
    present = sp.csr_array((n, len(vocab)), dtype=np.int8)
    for vectorizer in (
        make_vectorizer(ngram_range=(1, longest), vocabulary=list(vocab)),
        CountVectorizer(ngram_range=(1, longest), vocabulary=list(vocab), binary=True),
    ):
        counts = sp.csr_array(vectorizer.transform(list(docs)))
        counts.data[:] = 1
        present = present.maximum(counts.astype(np.int8))
    return sp.csr_array(present, dtype=np.int8), vocab


# --------------------------------------------------------------------------------------------
# Labels and topic sizes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelScores:
    """How far a corpus's topic labels can be trusted (issue 20's measures).

    Attributes:
        coverage: per topic, the share of its papers whose text uses the label's words (for
            "A and B", all words of A or all words of B, and so for "A, B and C"; plurals folded;
            ``labels.label_parts``).
        weighted_coverage: the mean of ``coverage`` weighted by topic size.
        low_large: topics of at least ``large_share`` of the papers with coverage below 0.5.
        contained: pairs of labels where one's words are all among the other's.
        retrieval: share of labels whose embedding is nearest their own topic's centroid (NaN
            without embeddings).
    """

    coverage: dict[int, float]
    weighted_coverage: float
    low_large: list[int]
    contained: list[tuple[str, str]]
    retrieval: float


def label_scores(
    labels: Mapping[int, str],
    topics: np.ndarray,
    texts: Sequence[str],
    *,
    label_vectors: np.ndarray | None = None,
    centroids: np.ndarray | None = None,
    large_share: float = 0.05,
) -> LabelScores:
    """Label coverage, containment and retrieval of a labelled clustering.

    Args:
        labels: topic id -> label.
        topics: int ``(n,)`` topic per paper (``-1``: none).
        texts: ``(n,)`` each paper's title and abstract.
        label_vectors: float ``(len(labels), dim)`` the labels embedded, rows in sorted topic id order.
        centroids: float ``(len(labels), dim)`` the topics' normalised mean embeddings, same order.
        large_share: topics at least this large must reach 0.5 coverage.
    """
    topics = np.asarray(topics)
    ids = sorted(labels)
    coverage: dict[int, float] = {}
    sizes = {t: int((topics == t).sum()) for t in ids}
    for t in ids:
        parts = label_parts(labels[t])
        rows = np.flatnonzero(topics == t)
        used = sum(any(p <= doc_stems(texts[i]) for p in parts) for i in rows) if parts else 0
        coverage[t] = used / len(rows) if len(rows) else math.nan
    total = sum(sizes[t] for t in ids if coverage[t] == coverage[t]) or 1
    weighted = sum(coverage[t] * sizes[t] for t in ids if coverage[t] == coverage[t]) / total
    n = max(len(topics), 1)
    low_large = [t for t in ids if sizes[t] / n >= large_share and coverage[t] < 0.5]
    contained = [(labels[a], labels[b]) for a, b in itertools.combinations(ids, 2) if contains(labels[a], labels[b])]
    retrieval = math.nan
    if label_vectors is not None and centroids is not None and len(ids) > 1:
        nearest = np.argmax(np.asarray(label_vectors) @ np.asarray(centroids).T, axis=1)
        retrieval = float(np.mean(nearest == np.arange(len(ids))))
    return LabelScores(coverage, float(weighted), low_large, contained, retrieval)


def keyword_agreement(labels: Mapping[int, str], topics: np.ndarray, keywords: Sequence[str | None]) -> float:
    """Where papers carry their authors' keywords: the share of the topics' papers with keywords
    whose keywords use all the words of one part of their topic's label (plurals folded), over all
    topics: how far a label names what the authors call their papers. NaN where no paper of a
    topic has keywords.

    Args:
        labels: topic id -> label.
        topics: int ``(n,)`` topic per paper (``-1``: none).
        keywords: ``(n,)`` each paper's keywords as one string (``papers.keywords``), or None.
    """
    topics = np.asarray(topics)
    stems = [doc_stems(k) if isinstance(k, str) and k.strip() else None for k in keywords]
    hits = total = 0
    for topic, name in labels.items():
        parts = label_parts(name)
        rows = [i for i in np.flatnonzero(topics == topic) if stems[i] is not None]
        hits += sum(any(p <= stems[i] for p in parts) for i in rows)
        total += len(rows)
    return hits / total if total else math.nan
