"""Every use of BERTopic's private API, in one module.

BERTopic (pinned in ``requirements.txt``) builds our topics' representations in its manual mode
(``pipeline.model.represent``). Where its public API does not do what we need, the classes here override
or call its private methods; :data:`RELIES_ON` lists each of them with the signature (and, for the
ones whose body we reproduce or whose steps we depend on, a hash of the source) we were written
for, and ``tests/test_bertopic_adapter.py`` fails when an upgrade changes any of them. Why each
override exists:

* ``_top_n_idx_sparse``, ``_top_n_values_sparse``, ``_sort_mappings_by_frequency``: ties are
  broken explicitly, so every processor gets the same keywords and topic order (BERTopic's
  unstable sorts pick among equal weights by the processor's SIMD sort).
* ``_c_tf_idf``, ``_extract_topics``, ``hierarchical_topics``: c-TF-IDF sums the papers' own term
  counts (each weighed by ``pipeline.model.represent.paper_term_weights``) instead of counting each topic's
  papers joined into one text; and the joined texts are never built (each holds the corpus's
  text again; measured in BENCHMARKS.md, "Represent memory").
* ``_extract_representative_docs``: the sampled papers' term counts are read from the papers'
  counts instead of counted again from their texts (the same vectorizer on the same text gives the
  same row; twice 500 papers per topic were tokenised again, seconds at 18,700 papers).
* ``KeyBERTInspired._extract_embeddings``: candidate words are embedded in sorted order (BERTopic
  uses ``list(set(...))``, whose order changes with the hash seed, and the int8 encoder quantises
  each batch as a whole).

Importing this module imports BERTopic (seconds): import it where a model is fitted or loaded.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.model import bertopic_import

bertopic_import.prepare()  # BERTopic without the parts that import transformers (seconds)

from bertopic import BERTopic  # noqa: E402
from bertopic._bertopic import TopicMapper  # noqa: E402
from bertopic.backend import BaseEmbedder  # noqa: E402
from bertopic.representation import KeyBERTInspired  # noqa: E402
from scipy import sparse  # noqa: E402
from sklearn.metrics.pairwise import cosine_similarity  # noqa: E402

from pipeline.model.vocab import DocTerms  # noqa: E402

#: The BERTopic release the overrides were written and checked for.
BERTOPIC_VERSION = "0.17.4"

#: (class, method) -> (parameters without annotations, sha256 prefix of the source or None).
#: The hash is kept for methods we override by reproducing their body, and for those whose steps
#: we depend on (``hierarchical_topics`` reads the texts only through one vectorizer transform).
RELIES_ON: dict[tuple[str, str], tuple[str, str | None]] = {
    ("BERTopic", "_c_tf_idf"): ("(self, documents_per_topic, fit=True, partial_fit=False)", "0bba05f6f6f0"),
    ("BERTopic", "_extract_topics"): (
        "(self, documents, embeddings=None, mappings=None, verbose=False, fine_tune_representation=True)",
        "b034b7883415",
    ),
    ("BERTopic", "_extract_words_per_topic"): (
        "(self, words, documents, c_tf_idf=None, fine_tune_representation=True, calculate_aspects=True, "
        "embeddings=None)",
        None,
    ),
    ("BERTopic", "_create_topic_vectors"): ("(self, documents=None, embeddings=None, mappings=None)", None),
    ("BERTopic", "_top_n_idx_sparse"): ("(matrix, n)", "df076fde2827"),
    ("BERTopic", "_top_n_values_sparse"): ("(matrix, indices)", "059d2c6d4f61"),
    ("BERTopic", "_sort_mappings_by_frequency"): ("(self, documents)", "ab34826afb9f"),
    ("BERTopic", "_update_topic_size"): ("(self, documents)", None),
    ("BERTopic", "_extract_embeddings"): ("(self, documents, images=None, method='document', verbose=None)", None),
    ("BERTopic", "hierarchical_topics"): (
        "(self, docs, use_ctfidf=True, linkage_function=None, distance_function=None)",
        "1f9dab63c593",
    ),
    ("BERTopic", "_extract_representative_docs"): (
        "(self, c_tf_idf, documents, topics, nr_samples=500, nr_repr_docs=5, diversity=None)",
        "822116d07215",
    ),
    ("TopicMapper", "add_mappings"): ("(self, mappings, topic_model)", None),
    ("KeyBERTInspired", "_extract_embeddings"): (
        "(self, topic_model, topics, representative_docs, repr_doc_indices, repr_embeddings=None)",
        "150afb269e60",
    ),
    ("KeyBERTInspired", "extract_topics"): ("(self, topic_model, documents, c_tf_idf, topics, embeddings=None)", None),
}

_CLASSES = {"BERTopic": BERTopic, "TopicMapper": TopicMapper, "KeyBERTInspired": KeyBERTInspired}


def plain_signature(cls_name: str, method: str) -> str:
    """``method``'s parameters as the pinned BERTopic defines them, without annotations."""
    sig = inspect.signature(getattr(_CLASSES[cls_name], method))
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def source_hash(cls_name: str, method: str) -> str:
    """The first 12 hex digits of the sha256 of ``method``'s source in the installed BERTopic."""
    source = inspect.getsource(getattr(_CLASSES[cls_name], method))
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


class RankedBERTopic(BERTopic):
    """BERTopic whose c-TF-IDF comes from the papers' own term counts and whose rankings break ties.

    Set :attr:`doc_terms` and :attr:`term_weights` before ``fit_transform`` (and clear them before
    saving): c-TF-IDF, the topic words and the hierarchy then sum ``term_weights(doc_terms.counts)``
    per topic, and no topic's papers are joined into one text. Without them it counts texts as
    BERTopic does. Ties: the top terms are chosen by weight, ties by column (our vocabulary is
    alphabetical); a tie that BERTopic later sorts is resolved by lowering each later member by one
    unit in the last place (the weights shown move by about 1e-16); topics of equal size keep the
    order of their ids (``cluster.canonical_labels``).
    """

    #: The fitted papers' term counts, ``(n, n_terms)``.
    doc_terms: DocTerms | None = None
    #: Each paper's counts -> the weights summed per topic (same shape, CSR).
    term_weights: Callable[[sparse.csr_matrix], sparse.csr_matrix] | None = None

    def topic_counts(self, topics: list[int]) -> sparse.csr_matrix:
        """Term weights of each topic in ``topics``, ``(len(topics), n_terms)``: the papers'
        weighted counts summed per topic, in a vectorizer's layout (sorted indices)."""
        doc_topics = np.asarray(self.topics_)
        row_of = {int(t): i for i, t in enumerate(topics)}
        rows = np.array([row_of.get(int(t), -1) for t in doc_topics])
        keep = np.flatnonzero(rows >= 0)
        membership = sparse.csr_matrix((np.ones(len(keep)), (rows[keep], keep)), shape=(len(topics), len(doc_topics)))
        out = sparse.csr_matrix(membership @ self.term_weights(self.doc_terms.counts))
        out.sum_duplicates()
        out.sort_indices()  # as a vectorizer's output: row sums in column order, a symmetric distance matrix
        return out

    def _counts_cover(self, topic_ids) -> bool:
        """Whether one row per topic in ``topic_ids`` over every fitted paper is what is asked (the
        fit's and the hierarchy's c-TF-IDF), which the papers' counts answer."""
        dt = self.doc_terms
        if dt is None or self.topics_ is None or len(self.topics_) != dt.counts.shape[0]:
            return False
        return list(map(int, topic_ids)) == sorted(set(int(t) for t in self.topics_))

    # -- c-TF-IDF without joined texts ----------------------------------------------------------

    def _extract_topics(self, documents, embeddings=None, mappings=None, verbose=False, fine_tune_representation=True):
        """BERTopic's ``_extract_topics`` without ``documents_per_topic``'s joined texts: only the
        topic ids go to :meth:`_c_tf_idf`, which sums the papers' counts. The rest is BERTopic's
        body as pinned (its progress log aside)."""
        topic_ids = sorted(documents.Topic.unique())
        if not self._counts_cover(topic_ids):
            return super()._extract_topics(documents, embeddings, mappings, verbose, fine_tune_representation)
        self.c_tf_idf_, words = self._c_tf_idf(pd.DataFrame({"Topic": topic_ids}))
        self.topic_representations_ = self._extract_words_per_topic(
            words,
            documents,
            fine_tune_representation=fine_tune_representation,
            calculate_aspects=fine_tune_representation,
            embeddings=embeddings,
        )
        self._create_topic_vectors(documents=documents, embeddings=embeddings, mappings=mappings)

    def _c_tf_idf(self, documents_per_topic, fit: bool = True, partial_fit: bool = False):
        """c-TF-IDF from the papers' term counts, weighed and summed per topic: no second pass over
        the texts (BERTopic counts each topic's joined text, a minute at 100,000 papers, and lets
        one paper repeating a name nine times outweigh three papers using a word once). Other uses
        (topics over time, per class, online fits) count their texts as BERTopic does."""
        extra = set(documents_per_topic.columns) - {"Topic", "Document", "Image", "ID"}
        if partial_fit or extra or not self._counts_cover(documents_per_topic.Topic):
            return super()._c_tf_idf(documents_per_topic, fit=fit, partial_fit=partial_fit)
        counts = self.topic_counts(list(map(int, documents_per_topic.Topic)))
        if fit:
            if not hasattr(self.vectorizer_model, "vocabulary_"):  # a fixed vocabulary: nothing to learn
                self.vectorizer_model.fit(["-"])
            self.ctfidf_model = self.ctfidf_model.fit(counts, multiplier=None)
        return self.ctfidf_model.transform(counts), self.doc_terms.terms

    def hierarchical_topics(self, docs, *args, **kwargs):
        """BERTopic's hierarchy, its per-topic term counts summed from the papers' counts.

        BERTopic joins each topic's texts and counts them with ``vectorizer_model.transform``; for
        that one call the vectorizer is replaced by :class:`_TopicCountsVectorizer`, and the texts
        are replaced by empty strings, since with no "Main" representation nothing else reads them
        (each merge's words come from c-TF-IDF alone).
        """
        if self.doc_terms is None:
            return super().hierarchical_topics(docs, *args, **kwargs)
        main = not isinstance(self.representation_model, dict) or self.representation_model.get("Main")
        real_vectorizer = self.vectorizer_model
        self.vectorizer_model = _TopicCountsVectorizer(self, real_vectorizer)
        try:
            return super().hierarchical_topics(docs if main else [""] * len(docs), *args, **kwargs)
        finally:
            self.vectorizer_model = real_vectorizer

    # -- rankings with explicit ties ------------------------------------------------------------

    @staticmethod
    def _top_n_idx_sparse(matrix, n: int) -> np.ndarray:
        """Each row's ``n`` top columns by weight, ties by column; ``None`` pads short rows."""
        out = []
        for lo, hi in zip(matrix.indptr[:-1], matrix.indptr[1:], strict=True):
            cols, vals = matrix.indices[lo:hi], matrix.data[lo:hi]
            best = cols[np.lexsort((cols, -vals))[:n]].tolist()
            out.append(best + [None] * (n - len(best)))
        return np.array(out, dtype=object)

    @staticmethod
    def _top_n_values_sparse(matrix, indices: np.ndarray) -> np.ndarray:
        """The weights of :meth:`_top_n_idx_sparse`'s columns, strictly decreasing along a row."""
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
        """Topics renumbered by size with a stable sort (equal sizes keep their ids' order)."""
        self._update_topic_size(documents)
        sizes = pd.DataFrame(sorted(self.topic_sizes_.items()), columns=["Old_Topic", "Size"])
        sizes = sizes.sort_values("Size", ascending=False, kind="stable")
        sizes = sizes[sizes.Old_Topic != -1]
        mapping = {**{-1: -1}, **dict(zip(sizes.Old_Topic, range(len(sizes)), strict=True))}
        self.topic_mapper_.add_mappings(mapping, topic_model=self)
        documents.Topic = documents.Topic.map(mapping).fillna(documents.Topic).astype(int)
        self._update_topic_size(documents)
        return documents

    def _extract_representative_docs(self, c_tf_idf, documents, topics, nr_samples=500, nr_repr_docs=5, diversity=None):
        """BERTopic's choice of representative papers, the sampled papers' counts read from
        :attr:`doc_terms` (the vectorizer's one ``transform`` per topic is answered by
        :class:`_KnownTextsVectorizer`) when ``documents`` are the fitted papers in order."""
        args = (c_tf_idf, documents, topics, nr_samples, nr_repr_docs, diversity)
        dt = self.doc_terms
        if dt is None or "ID" not in documents or len(documents) != dt.counts.shape[0]:
            return super()._extract_representative_docs(*args)
        real_vectorizer = self.vectorizer_model
        self.vectorizer_model = _KnownTextsVectorizer(documents, dt, real_vectorizer)
        try:
            return super()._extract_representative_docs(*args)
        finally:
            self.vectorizer_model = real_vectorizer


class _KnownTextsVectorizer:
    """Stands in for the vectorizer during :meth:`RankedBERTopic._extract_representative_docs`:
    texts of the fitted papers get their rows of the papers' counts (what the vectorizer, whose
    vocabulary is the counts' own, would give them); a batch with any other text is counted by the
    real vectorizer."""

    def __init__(self, documents: pd.DataFrame, dt: DocTerms, real_vectorizer):
        self.row_of = dict(zip(documents["Document"].tolist(), documents["ID"].tolist(), strict=True))
        self.dt = dt
        self.real_vectorizer = real_vectorizer

    def transform(self, texts):
        rows = [self.row_of.get(text, -1) for text in texts]
        if any(r < 0 for r in rows):
            return self.real_vectorizer.transform(texts)
        counts = self.dt.counts[np.asarray(rows, dtype=np.int64)]
        return counts.astype(getattr(self.real_vectorizer, "dtype", counts.dtype), copy=False)

    def __getattr__(self, name):
        return getattr(self.real_vectorizer, name)


class _TopicCountsVectorizer:
    """Stands in for the vectorizer during :meth:`RankedBERTopic.hierarchical_topics`: its one
    ``transform`` of the (placeholder) joined topic texts answers with the topics' summed counts."""

    def __init__(self, model: RankedBERTopic, real_vectorizer):
        self.model = model
        self.real_vectorizer = real_vectorizer

    def get_feature_names_out(self):
        return self.real_vectorizer.get_feature_names_out()

    def transform(self, joined):
        topics = sorted(set(int(t) for t in self.model.topics_) - {-1})
        if len(joined) != len(topics):
            raise RuntimeError(f"hierarchy: {len(joined)} topic texts for {len(topics)} topics (BERTopic changed?)")
        return self.model.topic_counts(topics)


class SortedKeyBERTInspired(KeyBERTInspired):
    """KeyBERTInspired that embeds its candidate words in sorted order, so a word's vector (and a
    label) does not depend on the hash seed through the words sharing its int8-quantised batch."""

    def _extract_embeddings(self, topic_model, topics, representative_docs, repr_doc_indices, repr_embeddings=None):
        if repr_embeddings is None:
            repr_embeddings = topic_model._extract_embeddings(representative_docs, method="document", verbose=False)
        topic_embeddings = [np.mean(repr_embeddings[i[0] : i[-1] + 1], axis=0) for i in repr_doc_indices]
        vocab = sorted({word for words in topics.values() for word in words})
        word_embeddings = topic_model._extract_embeddings(vocab, method="document", verbose=False)
        return cosine_similarity(topic_embeddings, word_embeddings), vocab


class FunctionEmbedder(BaseEmbedder):
    """A BERTopic embedding backend over a function (the cached embedder in the pipeline)."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray]):
        super().__init__()
        self._embed = embed

    def embed(self, documents, verbose=False):
        return self._embed(list(documents))
