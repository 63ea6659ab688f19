"""Topic representations with BERTopic in its manual mode.

Our cached stages produce the embeddings, the projection and the clusters; BERTopic receives them
(precomputed embeddings, a pass-through reduction, ``BaseCluster`` with ``y=labels``) and builds
c-TF-IDF, KeyBERTInspired and MMR representations, topic embeddings and the hierarchy. BERTopic
renumbers topics by size: its ``topics_`` are the canonical topic ids everywhere downstream.
Where BERTopic's public API is not enough, ``pipeline.model.bertopic_adapter`` (and only it) overrides
or calls its private methods.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core.config import RepresentParams
from pipeline.core.ranking import evenly_spread
from pipeline.core.topic_tables import TopicTables
from pipeline.model import bertopic_import, label_case
from pipeline.model.keywords import topic_keywords
from pipeline.model.label_background import Background
from pipeline.model.label_candidates import PhraseStats, TopicTerms, topic_text
from pipeline.model.label_choice import label_topics
from pipeline.model.label_evidence import LabelSupport
from pipeline.model.place import topic_distribution
from pipeline.model.topic_parts import add_part_columns, topic_parts
from pipeline.model.vocab import DocTerms, make_vectorizer

#: Bump when representations for the same inputs and params change.
#: 30: keywords written as their terms' phrases (``keyword_terms``: the terms); 29: no keyword a
#: part of another; 28: one form of each (``keywords``); 27: forms read after
#: a paper's title; 26: a word's form needs two papers; 25: every term, 24: labels, written as the papers write them
#: inside a sentence ("distributed SGD", "Gaussian processes", "VLMs"; ``pipeline.model.label_case``);
#: 23: a phrase of generic words ("deep learning") may name a topic in a weak label too, where half
#: of its papers use it and every other option is weak (``labels.GENERIC_WHEN_WEAK``);
#: 22: a word the papers write more often as the last part of a hyphenated word than on its own is
#: that hyphenated word where most of those uses are one ("few-shot", then "few-shot learning"), else
#: no candidate ("bits": 4-bit, 8-bit) (``label_candidates.WHOLE_WORDS``);
#: 21: a bracketed abbreviation does not end the phrase it follows: "out-of-distribution (OOD)
#: detection" reads "out-of-distribution" as the modifier it is (``label_candidates.ABBREVIATIONS_APART``);
#: 20: "abstract" names the text itself, as "paper" does (``label_candidates.GENERIC_WORDS``);
#: 19: a noun the papers count takes the number of its uses as a noun: "graphs", not "graph" where
#: the papers mostly write "graph neural networks" (``labels.NOUN_NUMBER``);
#: 18: an adverb in "-ly" marks what it qualifies as no noun: "strongly convex", and "convex" where
#: adverbs often qualify it (``label_candidates.ADVERB_PAIRS``);
#: 17: of two options the abstracts support alike, the titles' ranks higher (``labels.TITLE_WEIGHT``);
#: 16: a term the corpus's papers seldom write in their titles is no label (``labels.MIN_TITLE_SHARE``);
#: 15: each topic's spread, and the named parts of a broad topic (``pipeline.model.topic_parts``);
#: 14: a label of three parts is tried where the best-ranked label of one or two would be marked
#: weak (``labels.THREE_PARTS_BY_BEST``);
#: 13: a label part must end a phrase in at least two of its uses ("discriminatory", "differentially
#: private": once in three, ``label_candidates.MIN_HEAD_USES``), "notion" is no label on its own, a
#: word in "-able" never written in the plural is an adjective ("interpretable");
#: 12: no term spans a stop word or punctuation ("language llms" from "large language models
#: (LLMs)", ``pipeline.model.vocab.TermVectorizer``); 11: phrases of generic words in corpora
#: under 1,000 papers too;
#: 10: a topic may take back the label a larger topic's blocks (``pipeline.model.label_choice``);
#: 9: no label part that starts with a verb ("learn visual", from "to learn visual concepts");
#: 8: phrases of generic words ("neural networks") where no other label names half the papers;
#: 7: "A, B and C" where no label of two parts names half the papers; 6: label parts are nouns,
#: "A and B" two subjects; 5: labels by coverage and lift.
REPRESENT_VERSION = 30

#: Papers per topic (evenly spread over the topic) whose text the label's phrase checks read.
LABEL_SAMPLE = 250


def paper_term_weights(counts):
    """Each paper's count of each term as it enters c-TF-IDF: its square root.

    BERTopic counts a term over the topic's papers joined into one text, so a name that one paper
    repeats nine times ("nntrace", "haphazard") outweighs a word three of the topic's papers use
    once; in a topic of a few papers that makes one paper's names its keywords. The square root of
    each paper's count lets a term weigh with the number of papers using it, repeats still adding
    a little (measured in benchmarks/results/label-agreement.md). ``counts``: papers x terms, CSR.
    """
    from scipy import sparse

    counts = sparse.csr_matrix(counts)
    # the square roots share the counts' index arrays: at a million papers a copy of them is ~0.3 GB
    return sparse.csr_matrix(
        (np.sqrt(counts.data, dtype=np.float64), counts.indices, counts.indptr), shape=counts.shape
    )


class _Precomputed:
    """A "dimensionality reduction" that hands BERTopic our cached projection."""

    def __init__(self, reduced: np.ndarray):
        self.reduced = reduced

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return self.reduced if len(X) == len(self.reduced) else np.zeros((len(X), self.reduced.shape[1]))


@dataclass
class TopicModel:
    """Everything the representation stage produces.

    Attributes:
        topics: int ``(n,)`` canonical topic per paper.
        tables: the per-topic tables (``pipeline.core.topic_tables.TopicTables``): ``topics`` one row per
            topic (see ``schema.TOPIC_COLUMNS``; ``x``/``y``/``coherence``/``growth`` are filled in
            by later stages), ``topic_terms`` (``schema.TOPIC_TERM_COLUMNS``), ``hierarchy``
            (``schema.HIERARCHY_COLUMNS``), ``topic_embeddings`` float32 ``(k, dim)``,
            ``similarity`` float32 ``(k, k)`` cosine similarity of topic embeddings,
            ``distribution`` float32 ``(n, k)`` per-paper topic distribution (rows sum to 1).
        model: the fitted BERTopic (saved with safetensors).
        written: the corpus's words its papers mostly write otherwise, with that form
            (``label_case.corpus_forms``): for the labels and every term (``terms.parquet``).
    """

    topics: np.ndarray
    tables: TopicTables
    model: object
    written: dict[str, str]


def _hierarchy(model, docs: list[str], n_topics: int) -> pd.DataFrame:
    columns = ["parent_id", "parent_name", "topics", "left_id", "left_name", "right_id", "right_name", "distance"]
    if n_topics < 2:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    with contextlib.redirect_stderr(io.StringIO()):  # its tqdm bar is noise in our progress output
        h = model.hierarchical_topics(docs)
    out = pd.DataFrame(
        {
            "parent_id": h["Parent_ID"].astype(int),
            "parent_name": h["Parent_Name"].astype(str),
            "topics": h["Topics"].map(lambda t: [int(x) for x in t]),
            "left_id": h["Child_Left_ID"].astype(int),
            "left_name": h["Child_Left_Name"].astype(str),
            "right_id": h["Child_Right_ID"].astype(int),
            "right_name": h["Child_Right_Name"].astype(str),
            "distance": h["Distance"].astype(float),
        }
    )
    return out.sort_values(["distance", "parent_id"], kind="stable").reset_index(drop=True)


def _topic_terms(
    topic_ids: list[int], doc_topics: np.ndarray, dt: DocTerms, ctfidf, ctfidf_terms: np.ndarray, n_terms: int
) -> pd.DataFrame:
    """Top terms per topic by c-TF-IDF and by frequency, with the counts the relevance slider needs."""
    from scipy import sparse

    vocab = dt.vocabulary
    k = len(topic_ids)
    membership = sparse.csr_matrix(
        (np.ones(len(doc_topics)), ([topic_ids.index(t) for t in doc_topics], np.arange(len(doc_topics)))),
        shape=(k, len(doc_topics)),
    )
    # Sparse (k, n_terms): dense it took k x n_terms x 8 bytes twice (at 100,000 papers 136 topics x
    # 433k terms: 0.9 GB), the representation stage's peak. Sums of counts are exact in float64.
    topic_counts = sparse.csr_matrix(membership @ dt.counts, dtype=np.float64)
    topic_counts.sum_duplicates()
    corpus_counts = np.asarray(topic_counts.sum(axis=0)).ravel()
    total = corpus_counts.sum() or 1.0
    # Map BERTopic's c-TF-IDF columns onto our vocabulary (same vectorizer settings, same terms).
    col_of = np.array([vocab.get(t, -1) for t in ctfidf_terms.tolist()])
    rows = []
    for i, topic in enumerate(topic_ids):
        weights = ctfidf[i].toarray().ravel()
        by_weight = np.argsort(-weights, kind="stable")[:n_terms]
        by_weight = by_weight[weights[by_weight] > 0]
        cols = [c for c in col_of[by_weight] if c >= 0]
        lo, hi = topic_counts.indptr[i], topic_counts.indptr[i + 1]
        row_cols, row_counts = topic_counts.indices[lo:hi], topic_counts.data[lo:hi]
        order = np.lexsort((row_cols, -row_counts))[:n_terms]  # by count, ties by column: as a stable sort
        by_count = row_cols[order][row_counts[order] > 0]
        chosen = list(dict.fromkeys(cols + by_count.tolist()))
        weight_of = {col_of[j]: weights[j] for j in by_weight if col_of[j] >= 0}
        count_of = dict(zip(row_cols.tolist(), row_counts.tolist(), strict=True))
        topic_total = row_counts.sum() or 1.0
        for c in chosen:
            count = count_of.get(c, 0.0)
            rows.append(
                (
                    topic,
                    dt.terms[c],
                    float(weight_of.get(c, 0.0)),
                    int(count),
                    count / topic_total,
                    corpus_counts[c] / total,
                )
            )
    return pd.DataFrame(rows, columns=["topic", "term", "ctfidf", "count", "p_topic", "p_corpus"]).astype(
        {"topic": "int32", "count": "int32"}
    )


def ctfidf_words(labels: np.ndarray, dt: DocTerms, top_n: int = 10) -> dict[int, list[tuple[str, float]]]:
    """Each topic's top terms by c-TF-IDF, computed as BERTopic computes them in ``fit_topics``.

    The build sums each topic's papers' rows of ``dt`` (each count by :func:`paper_term_weights`)
    and applies ``ClassTfidfTransformer(reduce_frequent_words=True)``; so does this. The evaluation
    uses it to describe topics of many runs without fitting BERTopic each time.

    Args:
        labels: int ``(n,)`` topic per paper; ``-1`` (outliers) takes part in the weighting as
            BERTopic's outlier topic does, but gets no entry.
        dt: paper-by-term counts, ``(n, n_terms)``.
        top_n: terms per topic.

    Returns:
        topic id -> ``[(term, weight), ...]``, best first, only terms with a positive weight.
    """
    bertopic_import.prepare()
    from bertopic.vectorizers import ClassTfidfTransformer
    from scipy import sparse

    labels = np.asarray(labels)
    ids = sorted(set(labels.tolist()))
    if not ids or dt.counts.shape[1] == 0:
        return {int(t): [] for t in ids if t != -1}
    row_of = {t: i for i, t in enumerate(ids)}
    membership = sparse.csr_matrix(
        (np.ones(len(labels)), ([row_of[t] for t in labels.tolist()], np.arange(len(labels)))),
        shape=(len(ids), len(labels)),
    )
    counts = sparse.csr_matrix(membership @ paper_term_weights(dt.counts))
    counts.sort_indices()
    weights = sparse.csr_matrix(ClassTfidfTransformer(reduce_frequent_words=True).fit_transform(counts))
    weights.sort_indices()
    out: dict[int, list[tuple[str, float]]] = {}
    for topic, i in row_of.items():
        if topic == -1:
            continue
        row = weights.getrow(i)
        order = np.lexsort((row.indices, -row.data))[:top_n]  # by weight, ties by term order
        out[int(topic)] = [(str(dt.terms[row.indices[j]]), float(row.data[j])) for j in order if row.data[j] > 0]
    return out


def fit_topics(
    docs: list[str],
    embeddings: np.ndarray,
    reduced: np.ndarray,
    labels: np.ndarray,
    raw_outlier: np.ndarray,
    doc_ids: list[str],
    dt: DocTerms,
    params: RepresentParams,
    embed: Callable[[list[str]], np.ndarray],
    titles: Sequence[str | None] | None = None,
) -> TopicModel:
    """Fit BERTopic's representations on precomputed embeddings, projection and clusters.

    Args:
        docs: cleaned modelling texts, ``(n,)``.
        embeddings: float32 ``(n, dim)``.
        reduced: float32 ``(n, d)`` clustering projection.
        labels: int ``(n,)`` cluster labels (``-1`` outliers, if any were kept).
        raw_outlier: bool ``(n,)`` papers that clustering left out (reassigned or not).
        doc_ids: ``(n,)`` paper ids, for representative papers.
        dt: paper-by-term counts on the same vocabulary.
        params: representation settings.
        embed: embeds words and texts (cached) for KeyBERTInspired and MMR.
        titles: ``(n,)`` the papers' own titles (None where a title was made from the abstract),
            for the labels (:data:`pipeline.model.labels.MIN_TITLE_SHARE`); None: not used.
    """
    logging.getLogger("BERTopic").setLevel(logging.WARNING)
    model = _make_model(reduced, dt, params, embed)
    topics, _ = model.fit_transform(docs, embeddings=embeddings, y=np.asarray(labels))
    topics = np.asarray(topics, dtype=np.int64)
    topic_ids = sorted(t for t in set(topics.tolist()) if t != -1)
    offset = 1 if -1 in set(topics.tolist()) else 0  # BERTopic puts the outlier topic first

    # Topic embeddings: mean of member embeddings (BERTopic's own), normalised; outlier row dropped.
    t_emb = np.asarray(model.topic_embeddings_, dtype=np.float32)[offset:]
    t_emb /= np.clip(np.linalg.norm(t_emb, axis=1, keepdims=True), 1e-12, None)
    similarity = (t_emb @ t_emb.T).astype(np.float32)
    distribution = topic_distribution(embeddings, t_emb)

    ctfidf_terms = np.asarray(model.vectorizer_model.get_feature_names_out(), dtype=object)
    ctfidf = model.c_tf_idf_[offset:]
    inlier = topics != -1
    terms_table = _topic_terms(
        topic_ids, topics[inlier], _subset(dt, inlier), ctfidf, ctfidf_terms, params.n_terms_stored
    )
    rows = _topic_rows(model, topic_ids, topics, embeddings, t_emb, raw_outlier, doc_ids, params)
    stats = {t: PhraseStats(x) for t, x in topic_texts(docs, topics, topic_ids).items()}  # keywords' and labels'
    rows = topic_keywords(rows, ctfidf, ctfidf_terms, terms_table, params.top_n_words, stats)  # "images" or "image"
    chosen = topic_labels(
        docs,
        topics,
        dt,
        t_emb,
        embed,
        keybert={r["topic"]: r["keybert"] for r in rows},
        mmr={r["topic"]: r["mmr"] for r in rows},
        titles=titles,
        stats=stats,
    )
    table = pd.DataFrame(rows)
    written = label_case.corpus_forms(docs, titles)
    if len(table):
        table.insert(1, "label", table["topic"].map(lambda t: chosen[t][0]))
        table["label_support"] = [chosen[t][1].value for t in table["topic"]]
        spread, parts = topic_parts(
            topics, embeddings, doc_ids, lambda p: _part_labels(docs, p, dt, embeddings, embed, titles)
        )
        table = label_case.written_labels(add_part_columns(table, spread, parts), written)
    hierarchy = _hierarchy(model, docs, len(topic_ids))
    model.doc_terms = model.term_weights = None  # not saved with the model
    return TopicModel(
        topics, TopicTables(table, terms_table, hierarchy, t_emb, similarity, distribution), model, written
    )


def _make_model(reduced: np.ndarray, dt: DocTerms, params: RepresentParams, embed: Callable[[list[str]], np.ndarray]):
    """An unfitted BERTopic in manual mode over our projection and clusters, its c-TF-IDF summing the
    papers' counts in ``dt`` (each by :func:`paper_term_weights`)."""
    bertopic_import.prepare()
    from bertopic.cluster import BaseCluster
    from bertopic.representation import MaximalMarginalRelevance
    from bertopic.vectorizers import ClassTfidfTransformer

    # The adapter subclasses BERTopic, so importing it imports BERTopic (seconds): only when fitting.
    from pipeline.model.bertopic_adapter import FunctionEmbedder, RankedBERTopic, SortedKeyBERTInspired

    model = RankedBERTopic(
        embedding_model=FunctionEmbedder(embed),
        umap_model=_Precomputed(reduced),
        hdbscan_model=BaseCluster(),
        vectorizer_model=make_vectorizer(ngram_range=params.ngram_range, vocabulary=dt.vocabulary)
        if len(dt.terms)
        else make_vectorizer(ngram_range=params.ngram_range),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        representation_model={
            "KeyBERT": SortedKeyBERTInspired(top_n_words=params.top_n_words, nr_repr_docs=5, nr_candidate_words=40),
            "MMR": MaximalMarginalRelevance(diversity=params.mmr_diversity, top_n_words=params.top_n_words),
        },
        top_n_words=params.top_n_words,
        calculate_probabilities=False,
        verbose=False,
    )
    if len(dt.terms):
        model.doc_terms, model.term_weights = dt, paper_term_weights
    return model


def _topic_rows(
    model,
    topic_ids: list[int],
    topics: np.ndarray,
    embeddings: np.ndarray,
    t_emb: np.ndarray,
    raw_outlier: np.ndarray,
    doc_ids: list[str],
    params: RepresentParams,
) -> list[dict]:
    """One dict per topic of the fitted ``model``: its words, size and most central papers."""
    n = len(topics)
    aspects = model.topic_aspects_
    rows = []
    ids = np.asarray(doc_ids)
    for i, topic in enumerate(topic_ids):
        main = [(w, float(s)) for w, s in model.get_topic(topic) if w]
        keybert = [w for w, s in aspects.get("KeyBERT", {}).get(topic, []) if w and s > 0]
        mmr = [w for w, s in aspects.get("MMR", {}).get(topic, []) if w]
        members = np.flatnonzero(topics == topic)
        core = members[~raw_outlier[members]] if (~raw_outlier[members]).any() else members
        centrality = embeddings[core] @ t_emb[i]
        best = core[np.argsort(-centrality, kind="stable")[: params.n_representative]]
        rows.append(
            {
                "topic": topic,
                "name": model.topic_labels_.get(topic, str(topic)),
                "size": len(members),
                "share": len(members) / n,
                "keywords": [w for w, _ in main],
                "keyword_weights": [s for _, s in main],
                "keybert": keybert,
                "mmr": mmr,
                "representative_doc_ids": ids[best].tolist(),
                "n_reassigned": int(raw_outlier[members].sum()),
            }
        )
    return rows


#: c-TF-IDF terms per topic that the label may be built from.
LABEL_CANDIDATE_TERMS = 40


def topic_labels(
    docs: list[str],
    topics: np.ndarray,
    dt: DocTerms,
    centroids: np.ndarray | None,
    embed: Callable[[list[str]], np.ndarray] | None,
    *,
    keybert: dict[int, list[str]] | None = None,
    mmr: dict[int, list[str]] | None = None,
    titles: Sequence[str | None] | None = None,
    stats: Mapping[int, PhraseStats] | None = None,
) -> dict[int, tuple[str, LabelSupport]]:
    """Each topic's label and its support (``pipeline.model.labels``), larger topics choosing first.

    The candidates are each topic's top :data:`LABEL_CANDIDATE_TERMS` c-TF-IDF terms (as the build
    weighs them, :func:`ctfidf_words`) and, when given, its KeyBERTInspired and MMR terms; the
    phrase and coverage checks read up to :data:`LABEL_SAMPLE` of its papers (evenly spread); the
    lift compares them with the whole corpus (:class:`pipeline.model.label_background.Background`).

    Args:
        docs: ``(n,)`` modelling texts.
        topics: int ``(n,)`` topic per paper (``-1``: none).
        dt: paper-by-term counts of ``docs``.
        centroids: float ``(k, dim)`` normalised topic embeddings, rows in sorted topic id order
            (with ``embed``: labels should retrieve their own topic), or None.
        embed: the corpus's embedder, or None.
        keybert, mmr: topic id -> BERTopic's terms of those representations.
        titles: ``(n,)`` the papers' own titles (None where there is none), or None: with them a
            term the papers seldom write in their titles is no label (``labels.MIN_TITLE_SHARE``).
        stats: topic id -> the ``PhraseStats`` of its :func:`topic_texts` text, when made already.
    """
    topics = np.asarray(topics)
    words = ctfidf_words(topics, dt, LABEL_CANDIDATE_TERMS)
    ids = sorted(t for t in set(topics.tolist()) if t != -1)
    reps: dict[int, TopicTerms] = {}
    sizes = {int(t): int(c) for t, c in zip(*np.unique(topics[topics != -1], return_counts=True), strict=True)}
    texts = {t: x.text for t, x in stats.items()} if stats is not None else topic_texts(docs, topics, ids)
    for topic, sample in topic_samples(topics, ids).items():
        reps[topic] = TopicTerms(
            words.get(topic, []),
            (keybert or {}).get(topic, []),
            (mmr or {}).get(topic, []),
            texts[topic],
            size=sizes[topic],
            titles=tuple(titles[j] for j in sample) if titles is not None else None,
        )
    return label_topics(
        reps,
        order=sorted(ids, key=lambda t: (-sizes[t], t)),
        background=Background(docs, titles=titles),
        total=len(docs),
        embed=embed,
        centroids=centroids if embed is not None else None,
        stats=stats,
    )


def topic_samples(topics: np.ndarray, ids: Sequence[int]) -> dict[int, np.ndarray]:
    """Up to :data:`LABEL_SAMPLE` of each topic's papers, evenly spread: what its phrase checks read."""
    members = {t: np.flatnonzero(topics == t) for t in ids}
    return {t: m[evenly_spread(len(m), LABEL_SAMPLE)] for t, m in members.items()}


def topic_texts(docs: Sequence[str], topics: np.ndarray, ids: Sequence[int]) -> dict[int, str]:
    """Each topic's :func:`topic_samples` papers as one ``label_candidates.topic_text``."""
    return {t: topic_text([docs[j] for j in sample]) for t, sample in topic_samples(np.asarray(topics), ids).items()}


def _part_labels(docs: list[str], parts: np.ndarray, dt: DocTerms, embeddings: np.ndarray, embed, titles=None) -> dict:
    """Labels of the parts of broad topics (``parts``: part per paper, ``-1`` elsewhere), chosen as
    topics' labels are, their c-TF-IDF weighed against their sibling parts and the rest of the corpus."""
    ids = sorted(set(parts.tolist()) - {-1})
    centroids = np.stack([np.asarray(embeddings[parts == i], dtype=np.float64).mean(axis=0) for i in ids])
    centroids /= np.clip(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12, None)
    return topic_labels(docs, parts, dt, centroids, embed, titles=titles)


def _subset(dt: DocTerms, mask: np.ndarray) -> DocTerms:
    return DocTerms(dt.counts[mask], dt.terms)


def save_bertopic(model, folder: Path) -> None:
    """Save BERTopic with safetensors (never pickle), c-TF-IDF included.

    No embedding model name is stored: BERTopic would try to fetch a named model from the hub when
    loading. Load it with ``BERTopic.load(folder, embedding_model=...)``, passing the corpus's own
    encoder (``manifest["params"]["embed"]``), as ``load_bertopic`` does.
    """
    logger = logging.getLogger("BERTopic")
    level = logger.level
    logger.setLevel(logging.ERROR)  # its "saving without an embedding model" advice is intended
    try:
        model.save(str(folder), serialization="safetensors", save_ctfidf=True, save_embedding_model=False)
    finally:
        logger.setLevel(level)


def load_bertopic(folder: Path, embed: Callable[[list[str]], np.ndarray]):
    """Load a saved BERTopic (safetensors) with the corpus's own embedder as its backend."""
    bertopic_import.prepare()
    from bertopic import BERTopic

    from pipeline.model.bertopic_adapter import FunctionEmbedder  # imports BERTopic: seconds, only when loading

    return BERTopic.load(str(folder), embedding_model=FunctionEmbedder(embed))
