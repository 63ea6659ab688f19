"""Topic representations with BERTopic in its manual mode.

Our cached stages produce the embeddings, the projection and the clusters; BERTopic receives them
(precomputed embeddings, a pass-through reduction, ``BaseCluster`` with ``y=labels``) and builds
c-TF-IDF, KeyBERTInspired and MMR representations, topic embeddings and the hierarchy. BERTopic
renumbers topics by size: its ``topics_`` are the canonical topic ids everywhere downstream.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.config import RepresentParams
from pipeline.labels import Background, LabelSupport, TopicTerms, label_topics, topic_text
from pipeline.place import topic_distribution
from pipeline.vocab import DocTerms, make_vectorizer

#: Bump when representations for the same inputs and params change.
REPRESENT_VERSION = 5  # 5: labels by coverage and lift, retrieving their own topic

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


def _ranked_bertopic():
    """BERTopic whose rankings break ties explicitly, so every machine gets the same topics' words.

    BERTopic cuts each topic's top terms with ``argpartition`` and orders them with numpy's default
    (unstable) sort, and orders topics of equal size with pandas' unstable sort; which of several
    equal weights wins then depends on the processor's SIMD sort. Here the top terms are chosen by
    weight, ties by column (our vocabulary is alphabetical), and a tie that BERTopic later sorts is
    resolved by lowering each later member by one unit in the last place (the weights shown move by
    about 1e-16); topics of equal size keep the order of their ids (``cluster.canonical_labels``).
    """
    from bertopic import BERTopic

    class RankedBERTopic(BERTopic):
        #: The fitted papers' term counts (``DocTerms``), set by ``fit_topics``: c-TF-IDF and the
        #: hierarchy sum them per topic instead of counting the joined texts again.
        doc_terms = None

        def _topic_counts(self, topics: list[int]):
            """Term weights of each topic in ``topics``: the papers' counts, each by
            :func:`paper_term_weights`, summed per topic (sparse)."""
            from scipy import sparse

            doc_topics = np.asarray(self.topics_)
            row_of = {int(t): i for i, t in enumerate(topics)}
            rows = np.array([row_of.get(int(t), -1) for t in doc_topics])
            keep = np.flatnonzero(rows >= 0)
            membership = sparse.csr_matrix(
                (np.ones(len(keep)), (rows[keep], keep)), shape=(len(topics), len(doc_topics))
            )
            out = sparse.csr_matrix(membership @ paper_term_weights(self.doc_terms.counts))
            out.sum_duplicates()
            out.sort_indices()  # as a vectorizer's output: row sums in column order, a symmetric distance matrix
            return out

        def _counts_apply(self, documents_per_topic) -> bool:
            """Whether ``documents_per_topic`` is one row per topic of all fitted papers (the fit's and
            the hierarchy's c-TF-IDF), which the papers' counts answer; other uses (topics over
            time, classes) count their texts as BERTopic does."""
            dt = self.doc_terms
            if dt is None or self.topics_ is None or len(self.topics_) != dt.counts.shape[0]:
                return False
            if set(documents_per_topic.columns) - {"Topic", "Document", "Image", "ID"}:
                return False
            wanted = sorted(set(int(t) for t in self.topics_))
            return list(map(int, documents_per_topic.Topic)) == wanted

        def _c_tf_idf(self, documents_per_topic, fit: bool = True, partial_fit: bool = False):
            """c-TF-IDF from the papers' own term counts (``pipeline.vocab.doc_terms``, the vocabulary
            of every keyword, trend and coherence), each paper's count by its square root
            (:func:`paper_term_weights`) and summed per topic, as ``ctfidf_words`` computes it: no
            second pass over the texts. BERTopic joins each topic's papers and counts the joined text
            again (a minute of counting at 100,000 papers), so that one paper repeating a name nine
            times outweighs three papers using a word once."""
            if partial_fit or not self._counts_apply(documents_per_topic):
                return super()._c_tf_idf(documents_per_topic, fit=fit, partial_fit=partial_fit)
            counts = self._topic_counts(list(map(int, documents_per_topic.Topic)))
            if fit:
                if not hasattr(self.vectorizer_model, "vocabulary_"):  # a fixed vocabulary: nothing to learn
                    self.vectorizer_model.fit(["-"])
                self.ctfidf_model = self.ctfidf_model.fit(counts, multiplier=None)
            return self.ctfidf_model.transform(counts), self.doc_terms.terms

        def hierarchical_topics(self, docs, *args, **kwargs):
            """BERTopic's hierarchy, its per-topic term counts summed from the papers' counts."""
            if self.doc_terms is None:
                return super().hierarchical_topics(docs, *args, **kwargs)
            model = self
            real_vectorizer = self.vectorizer_model

            class _TopicCounts:  # answers the hierarchy's one transform of the joined topic texts
                def get_feature_names_out(self):
                    return real_vectorizer.get_feature_names_out()

                def transform(self, joined):
                    topics = sorted(set(int(t) for t in model.topics_) - {-1})
                    if len(joined) != len(topics):
                        return real_vectorizer.transform(joined)
                    return model._topic_counts(topics)

            self.vectorizer_model = _TopicCounts()
            self._preprocess_text = lambda documents: list(documents)  # the texts are not counted
            try:
                return super().hierarchical_topics(docs, *args, **kwargs)
            finally:
                self.vectorizer_model = real_vectorizer
                del self._preprocess_text  # the class's own again

        @staticmethod
        def _top_n_idx_sparse(matrix, n: int) -> np.ndarray:
            out = []
            for lo, hi in zip(matrix.indptr[:-1], matrix.indptr[1:], strict=True):
                cols, vals = matrix.indices[lo:hi], matrix.data[lo:hi]
                best = cols[np.lexsort((cols, -vals))[:n]].tolist()
                out.append(best + [None] * (n - len(best)))
            return np.array(out, dtype=object)

        @staticmethod
        def _top_n_values_sparse(matrix, indices: np.ndarray) -> np.ndarray:
            out = np.zeros(indices.shape, dtype=np.float64)
            for row, cols in enumerate(indices):
                previous = np.inf
                for j, col in enumerate(cols):
                    if col is None:
                        continue
                    value = float(matrix[row, col])
                    if value > 0 and value >= previous:  # a tie: keep the chosen order strict
                        value = float(np.nextafter(previous, -np.inf))
                    out[row, j] = previous = value
            return out

        def _sort_mappings_by_frequency(self, documents: pd.DataFrame) -> pd.DataFrame:
            self._update_topic_size(documents)
            sizes = pd.DataFrame(sorted(self.topic_sizes_.items()), columns=["Old_Topic", "Size"])
            sizes = sizes.sort_values("Size", ascending=False, kind="stable")
            sizes = sizes[sizes.Old_Topic != -1]
            mapping = {**{-1: -1}, **dict(zip(sizes.Old_Topic, range(len(sizes)), strict=True))}
            self.topic_mapper_.add_mappings(mapping, topic_model=self)
            documents.Topic = documents.Topic.map(mapping).fillna(documents.Topic).astype(int)
            self._update_topic_size(documents)
            return documents

    return RankedBERTopic


def _sorted_keybert():
    """KeyBERTInspired that embeds its candidate words in sorted order.

    BERTopic builds the candidate list with ``list(set(...))``, whose order changes with Python's
    hash seed from one process to the next; the int8 encoder quantises each batch as a whole, so a
    word's vector (and with it a label) depended on which words shared its batch.
    """
    from bertopic.representation import KeyBERTInspired
    from sklearn.metrics.pairwise import cosine_similarity

    class SortedKeyBERTInspired(KeyBERTInspired):
        def _extract_embeddings(self, topic_model, topics, representative_docs, repr_doc_indices, repr_embeddings=None):
            if repr_embeddings is None:
                repr_embeddings = topic_model._extract_embeddings(representative_docs, method="document", verbose=False)
            topic_embeddings = [np.mean(repr_embeddings[i[0] : i[-1] + 1], axis=0) for i in repr_doc_indices]
            vocab = sorted({word for words in topics.values() for word in words})
            word_embeddings = topic_model._extract_embeddings(vocab, method="document", verbose=False)
            return cosine_similarity(topic_embeddings, word_embeddings), vocab

    return SortedKeyBERTInspired


def make_backend(embed: Callable[[list[str]], np.ndarray]):
    """A BERTopic embedding backend over a function (the cached embedder in the pipeline)."""
    from bertopic.backend import BaseEmbedder

    class _Backend(BaseEmbedder):
        def embed(self, documents, verbose=False):
            return embed(list(documents))

    return _Backend()


@dataclass
class TopicModel:
    """Everything the representation stage produces.

    Attributes:
        topics: int ``(n,)`` canonical topic per paper.
        topic_table: one row per topic (see ``schema.TOPIC_COLUMNS``; ``x``/``y``/``coherence``/
            ``growth`` are filled in by later stages).
        topic_terms: long table (see ``schema.TOPIC_TERM_COLUMNS``).
        hierarchy: see ``schema.HIERARCHY_COLUMNS``.
        topic_embeddings: float32 ``(k, dim)``, rows in ``topic_table`` order.
        similarity: float32 ``(k, k)`` cosine similarity of topic embeddings.
        distribution: float32 ``(n, k)`` per-paper topic distribution (rows sum to 1).
        model: the fitted BERTopic (saved with safetensors).
    """

    topics: np.ndarray
    topic_table: pd.DataFrame
    topic_terms: pd.DataFrame
    hierarchy: pd.DataFrame
    topic_embeddings: np.ndarray
    similarity: np.ndarray
    distribution: np.ndarray
    model: object


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
    topic_counts = (membership @ dt.counts).toarray().astype(np.float64)  # (k, n_terms)
    corpus_counts = topic_counts.sum(axis=0)
    total = corpus_counts.sum() or 1.0
    # Map BERTopic's c-TF-IDF columns onto our vocabulary (same vectorizer settings, same terms).
    col_of = np.array([vocab.get(t, -1) for t in ctfidf_terms.tolist()])
    rows = []
    for i, topic in enumerate(topic_ids):
        weights = ctfidf[i].toarray().ravel()
        by_weight = np.argsort(-weights, kind="stable")[:n_terms]
        by_weight = by_weight[weights[by_weight] > 0]
        cols = [c for c in col_of[by_weight] if c >= 0]
        by_count = np.argsort(-topic_counts[i], kind="stable")[:n_terms]
        by_count = by_count[topic_counts[i][by_count] > 0]
        chosen = list(dict.fromkeys(cols + by_count.tolist()))
        weight_of = {col_of[j]: weights[j] for j in by_weight if col_of[j] >= 0}
        topic_total = topic_counts[i].sum() or 1.0
        for c in chosen:
            rows.append(
                (
                    topic,
                    dt.terms[c],
                    float(weight_of.get(c, 0.0)),
                    int(topic_counts[i, c]),
                    topic_counts[i, c] / topic_total,
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
    """
    from bertopic.cluster import BaseCluster
    from bertopic.representation import MaximalMarginalRelevance
    from bertopic.vectorizers import ClassTfidfTransformer

    logging.getLogger("BERTopic").setLevel(logging.WARNING)
    n = len(docs)
    model = _ranked_bertopic()(
        embedding_model=make_backend(embed),
        umap_model=_Precomputed(reduced),
        hdbscan_model=BaseCluster(),
        vectorizer_model=make_vectorizer(ngram_range=params.ngram_range, vocabulary=dt.vocabulary)
        if len(dt.terms)
        else make_vectorizer(ngram_range=params.ngram_range),
        ctfidf_model=ClassTfidfTransformer(reduce_frequent_words=True),
        representation_model={
            "KeyBERT": _sorted_keybert()(top_n_words=params.top_n_words, nr_repr_docs=5, nr_candidate_words=40),
            "MMR": MaximalMarginalRelevance(diversity=params.mmr_diversity, top_n_words=params.top_n_words),
        },
        top_n_words=params.top_n_words,
        calculate_probabilities=False,
        verbose=False,
    )
    model.doc_terms = dt if len(dt.terms) else None
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
    chosen = topic_labels(
        docs,
        topics,
        dt,
        t_emb,
        embed,
        keybert={r["topic"]: r["keybert"] for r in rows},
        mmr={r["topic"]: r["mmr"] for r in rows},
    )
    table = pd.DataFrame(rows)
    if len(table):
        table.insert(1, "label", table["topic"].map(lambda t: chosen[t][0]))
        table["label_support"] = [chosen[t][1].value for t in table["topic"]]
    hierarchy = _hierarchy(model, docs, len(topic_ids))
    model.doc_terms = None  # not saved with the model
    return TopicModel(topics, table, terms_table, hierarchy, t_emb, similarity, distribution, model)


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
) -> dict[int, tuple[str, LabelSupport]]:
    """Each topic's label and its support (``pipeline.labels``), larger topics choosing first.

    The candidates are each topic's top :data:`LABEL_CANDIDATE_TERMS` c-TF-IDF terms (as the build
    weighs them, :func:`ctfidf_words`) and, when given, its KeyBERTInspired and MMR terms; the
    phrase and coverage checks read up to :data:`LABEL_SAMPLE` of its papers (evenly spread); the
    lift compares them with the whole corpus (:class:`pipeline.labels.Background`).

    Args:
        docs: ``(n,)`` modelling texts.
        topics: int ``(n,)`` topic per paper (``-1``: none).
        dt: paper-by-term counts of ``docs``.
        centroids: float ``(k, dim)`` normalised topic embeddings, rows in sorted topic id order
            (with ``embed``: labels should retrieve their own topic), or None.
        embed: the corpus's embedder, or None.
        keybert, mmr: topic id -> BERTopic's terms of those representations.
    """
    topics = np.asarray(topics)
    words = ctfidf_words(topics, dt, LABEL_CANDIDATE_TERMS)
    ids = sorted(t for t in set(topics.tolist()) if t != -1)
    reps: dict[int, TopicTerms] = {}
    sizes: dict[int, int] = {}
    for topic in ids:
        members = np.flatnonzero(topics == topic)
        sizes[topic] = len(members)
        # Phrase statistics for the label need a few hundred papers, not all of a large topic.
        sample = members[np.unique(np.linspace(0, len(members) - 1, min(len(members), LABEL_SAMPLE)).astype(int))]
        reps[topic] = TopicTerms(
            words.get(topic, []),
            (keybert or {}).get(topic, []),
            (mmr or {}).get(topic, []),
            topic_text([docs[j] for j in sample]),
            size=len(members),
        )
    return label_topics(
        reps,
        order=sorted(ids, key=lambda t: (-sizes[t], t)),
        background=Background(docs),
        total=len(docs),
        embed=embed,
        centroids=centroids if embed is not None else None,
    )


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
    from bertopic import BERTopic

    return BERTopic.load(str(folder), embedding_model=make_backend(embed))


def growth_per_year(topic_years: pd.DataFrame) -> dict[int, float]:
    """Least-squares slope of each topic's yearly share, in percentage points per year."""
    out: dict[int, float] = {}
    for topic, grp in topic_years.groupby("topic"):
        if grp["year"].nunique() < 2:
            continue
        x = grp["year"].to_numpy(dtype=float)
        y = grp["share"].to_numpy(dtype=float) * 100
        slope = np.polyfit(x, y, 1)[0]
        out[int(topic)] = float(slope) if math.isfinite(slope) else 0.0
    return out
