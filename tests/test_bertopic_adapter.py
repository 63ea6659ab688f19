"""The BERTopic adapter: the private API it relies on is the pinned release's, and the fit builds no
topic's joined texts while giving what BERTopic's own joining path gives."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pipeline.core.config import RepresentParams
from pipeline.embed.encoders import HashingEncoder
from pipeline.model import bertopic_adapter as adapter
from pipeline.model.represent import fit_topics
from pipeline.model.vocab import doc_terms
from tests.conftest import SMALL_CORPUS


@pytest.mark.parametrize("where", sorted(adapter.RELIES_ON), ids=lambda w: ".".join(w))
def test_private_methods_are_those_the_adapter_was_written_for(where):
    """An upgrade of BERTopic that changes a private method we override or call fails here: read
    the new method, adapt ``pipeline/model/bertopic_adapter.py``, then update ``RELIES_ON``."""
    import bertopic

    signature, digest = adapter.RELIES_ON[where]
    pinned = f"written for BERTopic {adapter.BERTOPIC_VERSION}, installed {bertopic.__version__}"
    assert adapter.plain_signature(*where) == signature, f"{'.'.join(where)} changed signature ({pinned})"
    if digest is not None:
        assert adapter.source_hash(*where) == digest, f"{'.'.join(where)} changed its body ({pinned})"


def test_every_override_is_listed():
    """A method the adapter overrides is in ``RELIES_ON``, so the check above guards it too."""
    for cls in (adapter.RankedBERTopic, adapter.SortedKeyBERTInspired):
        base = cls.__mro__[1]
        overridden = {name for name in vars(cls) if callable(getattr(base, name, None))}
        assert overridden <= {m for c, m in adapter.RELIES_ON if c == base.__name__}, cls.__name__


def _inputs():
    """The fixture corpus as ``fit_topics`` receives it: its six areas as clusters."""
    rows = [json.loads(line) for line in SMALL_CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("label") and len(r["abstract"]) > 200]
    docs = [r["abstract"] for r in rows]
    areas = sorted({r["label"] for r in rows})
    labels = np.array([areas.index(r["label"]) for r in rows])
    encoder = HashingEncoder()
    embeddings = encoder.encode(docs).astype(np.float32)
    outlier = np.zeros(len(docs), dtype=bool)
    outlier[::17] = True
    dt = doc_terms(docs, min_df=2)
    ids = [r["id"] for r in rows]
    return docs, embeddings, embeddings[:, :5].copy(), labels, outlier, ids, dt, RepresentParams(), encoder.encode


def _fit_with_joins(monkeypatch, inputs):
    """``fit_topics`` along BERTopic's own path: each topic's texts joined, in the fit (BERTopic's
    ``_extract_topics``) and in the hierarchy (the real texts passed on)."""
    from bertopic import BERTopic

    monkeypatch.setattr(adapter.RankedBERTopic, "_extract_topics", BERTopic._extract_topics)

    def hierarchy_with_texts(self, docs, *args, **kwargs):
        real = self.vectorizer_model
        self.vectorizer_model = adapter._TopicCountsVectorizer(self, real)
        try:
            return BERTopic.hierarchical_topics(self, docs, *args, **kwargs)
        finally:
            self.vectorizer_model = real

    monkeypatch.setattr(adapter.RankedBERTopic, "hierarchical_topics", hierarchy_with_texts)
    return fit_topics(*inputs)


def test_fit_joins_no_texts_and_gives_what_joining_them_gives(monkeypatch):
    from pandas.core.groupby.generic import DataFrameGroupBy

    inputs = _inputs()
    joins = []
    agg = DataFrameGroupBy.agg

    def spy(self, func=None, *args, **kwargs):
        out = agg(self, func, *args, **kwargs)
        if isinstance(func, dict) and "Document" in func:  # the hierarchy's placeholders join to blanks
            joins.extend(text for text in out["Document"] if text.strip())
        return out

    with monkeypatch.context() as m:
        m.setattr(DataFrameGroupBy, "agg", spy)
        m.setattr(DataFrameGroupBy, "aggregate", spy)
        new = fit_topics(*inputs)
    assert not joins, f"{len(joins)} topics' texts were joined"
    assert len(new.tables.topics) == 6 and len(new.tables.hierarchy) == 5

    with monkeypatch.context() as m:
        old = _fit_with_joins(m, inputs)
    np.testing.assert_array_equal(new.topics, old.topics)
    pd.testing.assert_frame_equal(new.tables.topics, old.tables.topics)
    pd.testing.assert_frame_equal(new.tables.topic_terms, old.tables.topic_terms)
    pd.testing.assert_frame_equal(new.tables.hierarchy, old.tables.hierarchy)
    assert (new.model.c_tf_idf_ != old.model.c_tf_idf_).nnz == 0
    np.testing.assert_array_equal(new.tables.topic_embeddings, old.tables.topic_embeddings)


def test_representative_papers_read_their_counts_and_are_those_bertopic_picks(monkeypatch):
    """The representative papers (and KeyBERTInspired's words, which start from them) are chosen
    from the papers' counts, with no text tokenised again, and are the ones BERTopic's own
    ``_extract_representative_docs`` picks by counting the sampled texts."""
    from bertopic import BERTopic
    from sklearn.feature_extraction.text import CountVectorizer

    inputs = _inputs()
    counted = []
    transform = CountVectorizer.transform

    def spy(self, raw_documents):
        counted.append(len(raw_documents))
        return transform(self, raw_documents)

    with monkeypatch.context() as m:
        m.setattr(CountVectorizer, "transform", spy)
        new = fit_topics(*inputs)
    assert not counted, f"{sum(counted)} texts counted again in {len(counted)} calls"

    with monkeypatch.context() as m:
        m.setattr(adapter.RankedBERTopic, "_extract_representative_docs", BERTopic._extract_representative_docs)
        m.setattr(CountVectorizer, "transform", spy)
        old = fit_topics(*inputs)
    assert counted, "BERTopic's own path counts the sampled texts (the spy sees it)"
    pd.testing.assert_frame_equal(new.tables.topics, old.tables.topics)
    assert new.model.representative_docs_ == old.model.representative_docs_
    assert all(len(docs) == 3 for docs in new.model.representative_docs_.values())


def test_bertopic_is_imported_without_transformers():
    """Fitting imports BERTopic without its optional parts that import sentence-transformers and
    transformers (seconds and hundreds of MB); they still import afterwards if anything asks."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pipeline.model import bertopic_adapter, bertopic_import\n"
        "assert 'sentence_transformers' not in sys.modules and 'transformers' not in sys.modules\n"
        "assert not any(name in sys.modules for name in bertopic_import.SKIPPED), 'a placeholder was left'\n"
        "import bertopic.representation as r\n"
        "assert type(r.TextGeneration).__name__ == 'NotInstalled'\n"
        "assert bertopic_import.prepare() is False  # BERTopic is there now: nothing to do\n"
        "from bertopic.representation import KeyBERTInspired, MaximalMarginalRelevance\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
