"""The stages after embedding at scale: the approximate kNN switch and its recall, memory-mapped
reads, sparse and blocked paths that replace dense ones, and size-dependent defaults.

Fast: small arrays, each checked against the simple (dense, whole-array) computation it replaces.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pytest
from scipy import sparse

from pipeline.core.config import BuildConfig, ClusterParams, UmapParams


def _unit(rng, n: int, dim: int = 16) -> np.ndarray:
    x = rng.normal(size=(n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _blobs(rng, n: int, centres: int = 8, dim: int = 16) -> np.ndarray:
    c = _unit(rng, centres, dim)
    x = c[rng.integers(0, centres, n)] + 0.35 * rng.normal(size=(n, dim)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


# --- the kNN graph: exact up to the threshold, approximate beyond, recall measured ----------------


def test_knn_graph_is_exact_up_to_the_threshold_and_approximate_beyond(monkeypatch):
    import sys
    import types

    from pipeline.model import reduce

    x = _blobs(np.random.default_rng(0), 600)
    exact_idx, exact_dist = reduce.exact_knn(x, 16)
    made = []

    class FakeNNDescent:  # records how pynndescent is asked; the real one runs in the build test below
        def __init__(self, data, **kwargs):
            made.append((len(data), kwargs))
            self.neighbor_graph = (exact_idx.astype(np.int64), exact_dist.astype(np.float64))

    monkeypatch.setitem(sys.modules, "pynndescent", types.SimpleNamespace(NNDescent=FakeNNDescent))
    at = reduce.knn_graph(x, UmapParams(n_neighbors=15, exact_knn_max=600))
    assert made == [] and np.array_equal(at[0], exact_idx)
    assert reduce.is_exact(600, UmapParams(exact_knn_max=600)) and not reduce.is_exact(
        601, UmapParams(exact_knn_max=600)
    )
    above = reduce.knn_graph(x, UmapParams(n_neighbors=15, exact_knn_max=599, seed=7))
    assert [(n, kw["n_neighbors"], kw["metric"], kw["random_state"]) for n, kw in made] == [(600, 16, "cosine", 7)]
    assert above[0].dtype == np.int32 and above[1].dtype == np.float32


def test_knn_recall_is_one_for_the_exact_graph_and_counts_what_is_missing():
    from pipeline.model.reduce import exact_knn, knn_recall

    x = _unit(np.random.default_rng(1), 400)
    idx, _ = exact_knn(x, 10)
    assert knn_recall(x, idx, sample=100) == 1.0
    damaged = idx.copy()
    damaged[:, 5:] = -1  # half of every list (after self) is missing
    assert knn_recall(x, damaged, sample=400) == pytest.approx(0.5)


def test_an_approximate_build_records_the_graph_and_its_recall(tmp_path):
    from pipeline.build.build import build
    from pipeline.embed.encoders import HashingEncoder

    config = dataclasses.replace(BuildConfig(), umap=dataclasses.replace(UmapParams(), exact_knn_max=50, n_epochs=20))
    summary = build([_fixture()], "approx", tmp_path, config, encoder=HashingEncoder())
    from pipeline.core import artifacts

    manifest = artifacts.read_manifest(summary.folder.resolve() if summary.folder.is_symlink() else summary.folder)
    knn = manifest.knn
    assert knn["method"] == "pynndescent" and knn["exact_knn_max"] == 50
    assert knn["recall_sample"] == min(500, manifest.counts.papers) and 0.8 <= knn["recall"] <= 1.0
    assert "knn_recall" in [s.name for s in manifest.stages]
    exact = build([_fixture()], "exact", tmp_path, encoder=HashingEncoder())
    manifest = artifacts.read_manifest(exact.folder)
    assert manifest.knn["method"] == "exact" and "recall" not in manifest.knn


def _fixture():
    from pathlib import Path

    return Path(__file__).parent / "fixtures" / "small_corpus.jsonl"


# --- memory-mapped reads --------------------------------------------------------------------------


def test_embeddings_and_projections_are_read_memory_mapped(tmp_path):
    from pipeline.build.writer import save_embeddings
    from pipeline.model.reduce import Projection

    x = _unit(np.random.default_rng(2), 50)
    mapped = save_embeddings(tmp_path, x)
    assert isinstance(mapped, np.memmap) and not mapped.flags.writeable and np.array_equal(mapped, x)
    p = Projection(x[:, :5].copy(), x[:, :2].copy(), np.zeros((50, 3), np.int32), np.zeros((50, 3), np.float32))
    p.save(tmp_path / "proj")
    loaded = Projection.load(tmp_path / "proj")
    for name in ("cluster", "map", "knn_indices", "knn_dists"):
        value = getattr(loaded, name)
        assert isinstance(value, np.memmap) and not value.flags.writeable
        assert np.array_equal(value, getattr(p, name))


def test_a_full_build_reads_its_embeddings_from_the_build_folder(tmp_path, monkeypatch):
    from pipeline.build import build as build_module
    from pipeline.build import build_fit
    from pipeline.embed.encoders import HashingEncoder

    seen = []
    real = build_fit.reduce_cached
    monkeypatch.setattr(build_fit, "reduce_cached", lambda emb, *a, **k: seen.append(type(emb)) or real(emb, *a, **k))
    summary = build_module.build([_fixture()], "mapped", tmp_path, encoder=HashingEncoder())
    assert seen == [np.memmap]
    saved = np.load(summary.folder / "embeddings.npy")
    assert saved.shape == (summary.papers, HashingEncoder().dim)


def test_stage_cache_keys_hash_arrays_in_place_as_their_bytes():
    from pipeline.build.stage_cache import array_digest

    x = np.random.default_rng(3).normal(size=(300, 7)).astype(np.float32)
    assert array_digest(x).hexdigest() == hashlib.sha256(x.tobytes()).hexdigest()
    assert array_digest(x[:, 2:5]).hexdigest() == hashlib.sha256(np.ascontiguousarray(x[:, 2:5]).tobytes()).hexdigest()
    assert array_digest(x).hexdigest() != array_digest(x[::-1]).hexdigest()


# --- sparse and blocked paths give what the dense ones gave ----------------------------------------


def test_smoothing_never_makes_a_dense_papers_by_topics_array_and_votes_as_before(monkeypatch):
    from pipeline.model.cluster_refine import smooth

    rng = np.random.default_rng(4)
    n, k = 2000, 12
    knn = np.column_stack([np.arange(n), rng.integers(0, n, (n, k))]).astype(np.int32)
    knn[::7, 3] = -1
    labels = rng.integers(-1, 60, n)

    def dense(labels, knn, k):  # the computation smoothing replaced
        near = knn[:, : k + 1]
        votes_for = np.where(near >= 0, labels[near], -1)
        valid = (votes_for >= 0).ravel()
        rows = np.repeat(np.arange(n), votes_for.shape[1])[valid]
        votes = sparse.csr_matrix(
            (np.ones(int(valid.sum())), (rows, votes_for.ravel()[valid])), shape=(n, int(labels.max()) + 1)
        )
        out = votes.toarray().argmax(axis=1)
        out[labels == -1] = -1
        return out

    expected = dense(labels, knn, 10)
    monkeypatch.setattr(sparse.csr_matrix, "toarray", lambda *a, **k: pytest.fail("dense votes"))
    assert np.array_equal(smooth(labels, knn, 10), expected)


def test_shared_neighbour_weights_count_common_neighbours_as_every_pair_compared():
    from pipeline.model.cluster_graph import snn_edges

    rng = np.random.default_rng(5)
    n, k = 500, 11
    knn = np.column_stack([np.arange(n), np.stack([rng.choice(n, k, replace=False) for _ in range(n)])])
    knn = np.where(knn == np.arange(n)[:, None], (knn + 1) % n, knn)
    knn[:, 0] = np.arange(n)
    knn[3, 4:] = -1
    a, b, w = snn_edges(knn.astype(np.int32), chunk=97)
    pairs = {(min(i, j), max(i, j)) for i in range(n) for j in knn[i, 1:] if j >= 0 and j != i}
    assert list(zip(a.tolist(), b.tolist(), strict=True)) == sorted(pairs)
    every_pair = [
        ((knn[x][:, None] == knn[y][None, :]) & (knn[x][:, None] >= 0)).sum() for x, y in zip(a, b, strict=True)
    ]
    assert np.array_equal(w, np.asarray(every_pair, dtype=float))


def test_leiden_runs_in_worker_processes_are_the_runs_made_here(monkeypatch):
    from pipeline.model import cluster_graph
    from pipeline.model.cluster_graph import LeidenGraph, leiden_runs, snn_edges
    from pipeline.model.reduce import exact_knn

    rng = np.random.default_rng(8)
    x = _unit(rng, 600, 16)
    knn, _ = exact_knn(x, 16)
    edges = snn_edges(knn)
    graph = LeidenGraph(len(x), edges)
    seeds = [11, 12, 13, 14, 15]
    keeps = [None, rng.random(600) < 0.8, None, rng.random(600) < 0.8, rng.random(600) < 0.5]
    here = leiden_runs(graph, edges, 3.0, seeds, keeps)  # 600 papers: made here
    monkeypatch.setattr(cluster_graph, "PARALLEL_MIN_PAPERS", 100)
    monkeypatch.setattr(cluster_graph, "usable_cpus", lambda: 2)
    started = []
    real_pool = cluster_graph.worker_pool
    monkeypatch.setattr(cluster_graph, "worker_pool", lambda *a, **k: started.append(a[0]) or real_pool(*a, **k))
    there = leiden_runs(graph, edges, 3.0, seeds, keeps)
    assert started == [2]  # two worker processes made them
    for a, b in zip(here, there, strict=True):
        np.testing.assert_array_equal(a, b)
    assert len({tuple(r.tolist()) for r in here}) > 1  # the seeds and the papers left out matter

    def no_processes(*args, **kwargs):
        raise OSError("no processes here")

    monkeypatch.setattr(cluster_graph, "worker_pool", no_processes)
    for a, b in zip(here, leiden_runs(graph, edges, 3.0, seeds, keeps), strict=True):
        np.testing.assert_array_equal(a, b)


def test_leiden_runs_are_made_here_when_the_workers_die_at_start(monkeypatch, tmp_path):
    """A spawned worker first re-imports the parent's main script; in a process whose main module is
    a script that fails (as Streamlit's test runner leaves ``app.py``), every worker dies at start.
    The runs are then made here, and nothing waits for the dead workers (their start-up arguments
    are small: the graph goes with the task)."""
    import sys
    import types

    from pipeline.model import cluster_graph
    from pipeline.model.cluster_graph import LeidenGraph, leiden_runs, snn_edges
    from pipeline.model.reduce import exact_knn

    rng = np.random.default_rng(9)
    x = _unit(rng, 3000, 16)  # about 45,000 edges: far more than a pipe holds
    edges = snn_edges(exact_knn(x, 16)[0])
    graph = LeidenGraph(len(x), edges)
    seeds, keeps = [1, 2, 3], [None, rng.random(3000) < 0.8, None]
    here = leiden_runs(graph, edges, 3.0, seeds, keeps)
    script = tmp_path / "failing_main.py"
    script.write_text("raise RuntimeError('not a script to run twice')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    monkeypatch.setattr(cluster_graph, "PARALLEL_MIN_PAPERS", 100)
    monkeypatch.setattr(cluster_graph, "usable_cpus", lambda: 2)
    for a, b in zip(here, leiden_runs(graph, edges, 3.0, seeds, keeps), strict=True):
        np.testing.assert_array_equal(a, b)


def test_centroids_and_merges_are_those_of_the_per_cluster_masks():
    from pipeline.model.cluster_refine import centroids, merge_to

    rng = np.random.default_rng(6)
    x = _unit(rng, 3000, 12)
    labels = rng.integers(-1, 90, 3000)
    ids, vectors = centroids(labels, x)
    expected = np.stack([x[labels == c].mean(axis=0) for c in ids])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.array_equal(ids, np.arange(90)) and np.array_equal(vectors, expected.astype(np.float32))
    merged = merge_to(labels, x, 10)
    assert len(set(merged[labels >= 0].tolist())) == 10 and (merged[labels == -1] == -1).all()
    # papers of one micro topic stay together
    assert all(len(set(merged[labels == c].tolist())) == 1 for c in ids)


def test_topic_distribution_in_blocks_equals_the_whole_array(monkeypatch):
    from pipeline.model import place

    rng = np.random.default_rng(7)
    x, t = _unit(rng, 1000), _unit(rng, 23)
    whole = place.topic_distribution(x, t)
    monkeypatch.setattr(place, "DISTRIBUTION_BLOCK", 64)
    blocked = place.topic_distribution(x, t)
    sims = x @ t.T
    e = np.exp((sims - sims.max(axis=1, keepdims=True)) / place.DISTRIBUTION_TEMPERATURE)
    assert np.allclose(blocked, e / e.sum(axis=1, keepdims=True), atol=1e-6)
    assert np.allclose(blocked, whole, atol=1e-7) and blocked.dtype == np.float32
    assert place.topic_distribution(x, t[:0]).shape == (1000, 0)


def test_the_vocabulary_of_a_sample_counts_exactly_and_matches_the_whole_when_the_sample_is_whole(monkeypatch):
    from pipeline.ingest.ingest import ingest
    from pipeline.model import vocab

    texts = ingest([_fixture().parent / "ijcai_labelled.jsonl.gz"]).papers["model_text"].tolist()
    whole = vocab.doc_terms(texts, min_df=3)
    monkeypatch.setattr(vocab, "VOCAB_SAMPLE", len(texts))
    monkeypatch.setattr(vocab, "COUNT_CHUNK", 300)
    sampled = vocab._doc_terms_sampled(texts, ngram_range=(1, 2), min_df=3, max_df=0.6)
    assert np.array_equal(sampled.terms, whole.terms) and (sampled.counts != whole.counts).nnz == 0
    # a real sample (a third of the papers) through doc_terms: fewer candidates, exact counts for each
    monkeypatch.setattr(vocab, "VOCAB_SAMPLE", len(texts) // 3)
    part = vocab.doc_terms(texts, min_df=3)
    assert 0.5 * len(whole.terms) < len(part.terms) < len(whole.terms)
    assert set(part.terms) <= set(whole.terms)
    cols = [whole.vocabulary[t] for t in part.terms]
    assert (part.counts != whole.counts[:, cols]).nnz == 0


# --- size-dependent defaults ---------------------------------------------------------------------


def test_leiden_runs_adapt_to_the_corpus_size_unless_set():
    from pipeline.model.cluster_params import default_runs, resolve_params

    assert [default_runs(n) for n in (500, 18_661, 20_000, 100_000, 1_000_000)] == [40, 21, 20, 9, 3]
    assert resolve_params(ClusterParams(), 100_000).runs == 9
    assert resolve_params(ClusterParams(runs=12), 1_000_000).runs == 12


def test_a_large_graph_reaches_igraph_through_the_edge_list_reader_unchanged(monkeypatch):
    import igraph as ig

    from pipeline.model import cluster_graph

    rng = np.random.default_rng(8)
    a, b = np.sort(rng.integers(0, 990, 5000)), rng.integers(0, 990, 5000)
    monkeypatch.setattr(cluster_graph, "EDGE_LIST_MIN", 1000)
    graph = cluster_graph._igraph(1000, a, b)  # the last ten papers have no edge: still vertices
    direct = ig.Graph(n=1000, edges=np.column_stack([a, b]))
    assert graph.vcount() == 1000 and graph.get_edgelist() == direct.get_edgelist()


def test_ctfidf_and_the_hierarchy_sum_the_papers_counts_instead_of_counting_joined_texts(tmp_path, monkeypatch):
    import pandas as pd

    from pipeline.build.build import build
    from pipeline.embed.encoders import HashingEncoder
    from pipeline.model.keywords import FILL_DEPTH, keyword_list, phrase_of, term_uses
    from pipeline.model.represent import ctfidf_words, topic_texts
    from pipeline.model.vocab import doc_terms

    lengths = []
    from sklearn.feature_extraction.text import CountVectorizer

    real = CountVectorizer.transform
    monkeypatch.setattr(CountVectorizer, "transform", lambda self, docs: lengths.append(len(docs)) or real(self, docs))
    summary = build([_fixture()], "counts", tmp_path, encoder=HashingEncoder())
    papers = pd.read_parquet(summary.folder / "papers.parquet").sort_values("row")
    topics = pd.read_parquet(summary.folder / "topics.parquet")
    # only representative-document samples were counted as text, never one joined text per topic
    assert len(topics) not in lengths
    dt = doc_terms(papers["model_text"].tolist())
    labels = papers["topic"].to_numpy()
    expected = ctfidf_words(labels, dt, top_n=10 * FILL_DEPTH)
    texts = topic_texts(papers["model_text"].tolist(), labels, sorted(expected))
    for topic, terms in zip(topics["topic"], topics["keyword_terms"], strict=True):  # as the build keeps them
        kept = keyword_list(expected[int(topic)], term_uses(labels, dt, topic), 10, phrase_of(texts[int(topic)]))
        assert list(terms) == [w for w, _ in kept]
    assert len(pd.read_parquet(summary.folder / "hierarchy.parquet")) == len(topics) - 1


def test_adding_papers_adds_their_counts_to_the_stored_ones_without_recounting(tmp_path, monkeypatch):
    import pandas as pd

    from pipeline.build import build_fit
    from pipeline.build.build import build
    from pipeline.core import artifacts, schema
    from pipeline.embed.encoders import HashingEncoder
    from pipeline.model import vocab as vocab_module
    from pipeline.model.vocab import make_vectorizer

    lines = _fixture().read_text(encoding="utf-8").splitlines(keepends=True)
    first, extra = tmp_path / "first.jsonl", tmp_path / "extra.jsonl"
    first.write_text("".join(lines[:110]), encoding="utf-8")
    extra.write_text("".join(lines[110:]), encoding="utf-8")
    root = tmp_path / "art"
    build([first], "c", root, encoder=HashingEncoder())
    old_terms = pd.read_parquet(artifacts.corpus_path(root, "c") / schema.TERMS)
    counted = []
    real = vocab_module.doc_terms
    counting = lambda texts, **k: counted.append(len(texts)) or real(texts, **k)  # noqa: E731
    for module in (vocab_module, build_fit):  # where it is defined and where the build calls it
        monkeypatch.setattr(module, "doc_terms", counting)
    summary = build([first, extra], "c", root, encoder=HashingEncoder())
    assert summary.mode == "incremental" and counted == []  # the corpus was not counted again
    folder = artifacts.corpus_path(root, "c")
    papers = pd.read_parquet(folder / schema.PAPERS).sort_values("row")
    terms = pd.read_parquet(folder / schema.TERMS)
    keyword_years = pd.read_parquet(folder / schema.KEYWORD_YEARS)
    vocabulary = sorted(old_terms["term"].astype(str))
    assert sorted(terms["term"].astype(str)) == vocabulary  # the fitted vocabulary is kept
    presence = make_vectorizer(vocabulary={t: i for i, t in enumerate(vocabulary)}).transform(
        papers["model_text"].tolist()
    )
    presence.data[:] = 1
    expected = dict(zip(vocabulary, np.asarray(presence.sum(axis=0)).ravel().tolist(), strict=True))
    assert dict(zip(terms["term"].astype(str), terms["df"].tolist(), strict=True)) == expected
    assert (terms["share"] == terms["df"] / len(papers)).all()
    years = papers["year"].to_numpy()
    some = [t for t in vocabulary if expected[t] >= 3][:25]
    for term in some:
        col = vocabulary.index(term)
        used = np.asarray(presence[:, col].todense()).ravel() > 0
        want = pd.Series(years[used]).value_counts().sort_index()
        got = keyword_years[keyword_years["term"].astype(str) == term].set_index("year")["df"].sort_index()
        assert got.to_dict() == {int(k): int(v) for k, v in want.items()}, term
