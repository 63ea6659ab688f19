"""Labels against their evidence on a real build: the bundled NeurIPS 2026 corpus (38 abstracts)
with the packaged model. The topics change with the clustering, so this checks the mechanism on
whatever topics the build makes, not today's labels: every label's stored support is what its
topic's keywords and papers give, none contradicts its keywords outright, and the app marks the
weak ones on every page (one place: the loaded topics).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.services import analysis
from explorer.state import data
from pipeline.build.build import build
from pipeline.core import artifacts, schema
from pipeline.core.config import BuildConfig
from pipeline.core.inputs import default_inputs
from pipeline.model.label_candidates import TopicTerms, topic_text
from pipeline.model.label_evidence import WEAK_MARK, is_weak, label_support

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="module")
def real_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("truth-real")
    build(default_inputs(), "neurips2026", root, BuildConfig())
    return root


def test_labels_agree_with_their_evidence_on_a_real_build(real_root):
    folder = artifacts.corpus_path(real_root, "neurips2026")
    topics = pd.read_parquet(folder / schema.TOPICS)
    papers = pd.read_parquet(folder / schema.PAPERS)
    assert topics["label_support"].between(0, 1).all()
    for row in topics.itertuples():
        docs = papers.loc[papers["topic"] == row.topic, "model_text"].tolist()
        terms = TopicTerms(list(zip(row.keywords, row.keyword_weights, strict=True)), text=topic_text(docs))
        support = label_support(row.label, terms)
        assert support.value == pytest.approx(row.label_support, abs=1e-9), row.label
        # the "supervised fine-tuning" over keywords ai, update, item...: never again shown
        # as if it held (a label no keyword echoes is one whose topic's keywords are all generic,
        # and then it is marked weak)
        assert support.keywords > 0 or is_weak(row.label_support), (row.label, list(row.keywords))
        assert support.used >= 1, row.label
    corpus = data.load_corpus(real_root, "neurips2026")
    weak = [is_weak(s) for s in topics["label_support"]]
    assert corpus.tables.topics["label"].str.endswith(WEAK_MARK).tolist() == weak


def test_coherence_is_not_shown_for_38_abstracts(real_root):
    corpus = data.load_corpus(real_root, "neurips2026")
    assert corpus.tables.topics["coherence"].notna().any()  # measured by the build (and mostly negative) ...
    assert analysis.topic_table(corpus)["coherence"].isna().all()  # ... but not shown as if it meant something
    assert "38 abstracts are too few" in analysis.coherence_note(corpus)


def test_the_paper_page_gives_the_fit_its_neighbours_give(real_root, monkeypatch):
    from tests.test_pages import run, texts, unescape

    corpus = data.load_corpus(real_root, "neurips2026")
    near = analysis.neighbour_topics(corpus, np.arange(corpus.n_papers), 10)
    same = (near == corpus.papers["topic"].to_numpy()[:, None]).sum(axis=1)
    row = int(np.argmin(same))  # the paper that fits its topic least
    assert corpus.papers["topic_prob"].iat[row] > 0.5  # what the page used to call its fit
    at = run(real_root, monkeypatch, "pages/paper.py", corpus="neurips2026", paper=corpus.papers["doc_id"].iat[row])
    captions = unescape(texts(at.caption))
    assert f"{same[row]} of its 10 most similar papers are in this topic" in captions
    assert f"fit {corpus.papers['topic_prob'].iat[row]:.0%}" not in captions
