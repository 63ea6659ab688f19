"""The dashboard's read side without a running app: loading, filters, relevance, search, URL state,
safe text and figures, on the fixture corpus built with the hashing embedder."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer.services import analysis, figures, mapview, overview_figures, phrase_scan, search, text
from explorer.state import data, state
from explorer.state.filters import Filters, apply, clean, describe
from explorer.ui import caches
from pipeline.analysis import bm25
from pipeline.core import artifacts, schema
from pipeline.core.artifacts import ArtifactError
from pipeline.formats import ids as ids_module
from pipeline.formats import palette
from pipeline.formats.blobs import FLAG_REASSIGNED, NO_TOPIC, mask_blob, pack, points_blob, rows_blob, unpack
from pipeline.formats.ids import short_ids
from pipeline.model.label_evidence import WEAK_MARK

XSS_TITLE = "<script>window.__xss=1</script>Adversarial prompts for vision-language agents"


@pytest.fixture(scope="module")
def corpus(small_artifacts):
    return data.load_corpus(small_artifacts, "small")


@pytest.fixture(scope="module")
def index(corpus):
    return search.build_bm25(corpus)


def copy_build(root: Path, name: str, dest_root: Path, dest_name: str) -> Path:
    """Copy corpus ``name``'s current build into ``dest_root/dest_name`` (a plain folder)."""
    folder = dest_root / dest_name
    shutil.copytree(artifacts.corpus_path(root, name), folder)
    return folder


# ------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------


def test_load_corpus_aligns_tables_and_arrays(corpus):
    n, k = corpus.n_papers, len(corpus.tables.topics)
    assert n == 137 and k >= 1
    assert (corpus.papers["row"].to_numpy() == np.arange(n)).all()
    assert corpus.embeddings.shape[0] == n and isinstance(corpus.embeddings, np.memmap)
    assert corpus.tables.distribution.shape == (n, k)
    assert corpus.tables.similarity.shape == (k, k)
    assert corpus.xy.dtype == np.float32 and corpus.xy.shape == (n, 2)
    assert not corpus.xy.flags.writeable and not corpus.topic_index.flags.writeable
    # each paper's topic row points at its topic
    known = corpus.topic_index >= 0
    assert (corpus.topic_ids[corpus.topic_index[known]] == corpus.papers["topic"].to_numpy()[known]).all()
    assert corpus.has_years and corpus.year_span == (2020, 2024)
    assert corpus.paper_pos("xss-1") is not None and corpus.paper_pos("no-such-paper") is None
    assert corpus.topic_pos(10_000) is None


def test_map_details_are_plain_text_for_the_map(corpus):
    row = corpus.paper_pos("xss-1")
    d = mapview.details(corpus, [row, row, -1, corpus.n_papers, "x"])
    assert list(d) == [str(row)]  # once, and nothing for rows outside the corpus
    title = corpus.papers["title"].iat[row]
    assert d[str(row)]["title"] == title and "<script>" in title  # the map shows it as text, never as HTML
    assert d[str(row)]["venue"] == "IJCAI 2024" and d[str(row)]["year"] == 2024
    assert d[str(row)]["topic"] == int(corpus.papers["topic"].iat[row])


def test_keyword_years_load_once(corpus):
    ky = corpus.keyword_years
    assert set(ky.columns) >= {"term", "year", "df", "share"}
    assert corpus.keyword_years is ky  # read once


def test_terms_are_shown_as_the_papers_write_them_and_looked_up_in_lower_case(corpus, small_artifacts, tmp_path):
    assert corpus.shown_term("mdps") == "MDPs" and corpus.shown_term("nash equilibrium") == "Nash equilibrium"
    assert corpus.shown_term("mdps solvers") == "MDPs solvers"  # a typed phrase, word by word
    assert corpus.shown_term("planning") == "planning" and corpus.shown_term("MDPs") == "MDPs"
    shown = {k for ks in corpus.tables.topics["keywords"] for k in ks}
    assert shown & set(corpus.written.values()) and not shown & set(corpus.written)
    # a build made before terms.parquet had the column: its terms as they are
    old = copy_build(small_artifacts, "small", tmp_path, "old")
    table = pd.read_parquet(old / schema.TERMS)
    table.drop(columns="written").to_parquet(old / schema.TERMS, index=False)
    before = data.load_corpus(tmp_path, "old")
    assert before.written == {} and before.shown_term("mdps") == "mdps"
    assert {k for ks in before.tables.topics["keywords"] for k in ks} == {k.lower() for k in shown}
    # a comparison's side reads the forms and the terms in the same read, alike
    from pipeline.analysis.compare import load_side

    side, old_side = load_side(small_artifacts, "small"), load_side(tmp_path, "old")
    assert side.written == corpus.written and old_side.written == {}
    assert list(side.terms.columns) == list(old_side.terms.columns) == ["term", "df"]
    assert side.terms.equals(old_side.terms)


def test_invalid_or_missing_corpus_names_never_leave_the_root(small_artifacts):
    for bad in ("../../etc", "..", "/etc", "a/b", ""):
        with pytest.raises(ArtifactError, match="not a valid corpus name"):
            data.load_corpus(small_artifacts, bad)
    with pytest.raises(ArtifactError, match="no corpus named"):
        data.load_corpus(small_artifacts, "nope")


def test_broken_and_old_corpora_fail_clearly_while_others_load(small_artifacts, tmp_path):
    copy_build(small_artifacts, "small", tmp_path, "good")
    old = copy_build(small_artifacts, "small", tmp_path, "old")
    manifest = json.loads((old / schema.MANIFEST).read_text())
    (old / schema.MANIFEST).write_text(json.dumps({**manifest, "schema_version": 0}))
    broken = copy_build(small_artifacts, "small", tmp_path, "broken")
    (broken / schema.PAPERS_ARROW).write_bytes(b"not arrow")
    broken_old = copy_build(small_artifacts, "small", tmp_path, "broken_old")  # read from Parquet
    (broken_old / schema.PAPERS_ARROW).unlink()
    (broken_old / schema.PAPERS).write_bytes(b"not parquet")
    short = copy_build(small_artifacts, "small", tmp_path, "short")
    np.save(short / schema.EMBEDDINGS, np.zeros((3, 8), dtype=np.float32))

    with pytest.raises(ArtifactError, match="schema"):
        data.load_corpus(tmp_path, "old")
    with pytest.raises(ArtifactError, match="papers.arrow is damaged"):
        data.load_corpus(tmp_path, "broken")
    with pytest.raises(ArtifactError, match="papers.parquet is damaged"):
        data.load_corpus(tmp_path, "broken_old")
    with pytest.raises(ArtifactError, match="embeddings.npy"):
        data.load_corpus(tmp_path, "short")
    assert data.load_corpus(tmp_path, "good").n_papers == 137
    status = {e.name: e.ok for e in artifacts.list_corpora(tmp_path)}
    assert status["good"] and not status["old"]


def pa_chunks(series: pd.Series):
    """The Arrow chunks behind a text column, as they are (converting them would copy)."""
    return series.array._pa_array.chunks


def test_a_corpus_maps_its_papers_and_reads_as_one_built_before_papers_arrow(corpus, small_artifacts, tmp_path):
    # The texts point into the memory-mapped papers.arrow (nothing read until shown) ...
    path = str((corpus.folder / schema.PAPERS_ARROW).resolve())
    maps = [line.split() for line in Path("/proc/self/maps").read_text().splitlines() if line.endswith(path)]
    spans = [tuple(int(a, 16) for a in m[0].split("-")) for m in maps]
    for column in ("abstract", "model_text", "title"):
        address = pa_chunks(corpus.papers[column])[0].buffers()[2].address
        assert any(lo <= address < hi for lo, hi in spans), column
    # ... and the corpus is the one an older build (papers.parquet only) gives, column for column.
    copy_build(small_artifacts, "small", tmp_path, "old")
    (tmp_path / "old" / schema.PAPERS_ARROW).unlink()
    old = data.load_corpus(tmp_path, "old")
    pd.testing.assert_frame_equal(corpus.papers, old.papers)
    np.testing.assert_array_equal(corpus.xy, old.xy)
    np.testing.assert_array_equal(corpus.topic_index, old.topic_index)
    np.testing.assert_array_equal(corpus.short_ids, old.short_ids)
    np.testing.assert_array_equal(corpus.quoted_ids, old.quoted_ids)


def test_the_build_writes_the_short_ids_and_an_older_build_gets_them_from_its_doc_ids(
    corpus, small_artifacts, tmp_path, monkeypatch
):
    import pyarrow as pa
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    # The build writes each paper's short id (a hash a paper, made once), in both paper files ...
    want = short_ids(corpus.papers["doc_id"])
    assert corpus.papers["short_id"].tolist() == want.tolist()
    assert pq.read_table(corpus.folder / schema.PAPERS, columns=["short_id"])["short_id"].to_pylist() == want.tolist()
    # ... and the app reads them from there, without hashing a doc id.
    copy_build(small_artifacts, "small", tmp_path, "new")
    with monkeypatch.context() as m:
        m.setattr(ids_module, "short_ids", lambda _: pytest.fail("short ids made again"))
        np.testing.assert_array_equal(data.load_corpus(tmp_path, "new").short_ids, want)
    # A build made before the column (in either file) loads, and makes the same ids from its doc ids.
    for older in ("arrow", "parquet"):
        copy_build(small_artifacts, "small", tmp_path, older)
        folder = tmp_path / older
        if older == "parquet":
            (folder / schema.PAPERS_ARROW).unlink()
        else:
            table = (
                ipc.open_file(pa.memory_map(str(folder / schema.PAPERS_ARROW))).read_all().drop_columns(["short_id"])
            )
            (folder / schema.PAPERS_ARROW).unlink()
            with ipc.new_file(folder / schema.PAPERS_ARROW, table.schema) as out:
                out.write_table(table)
        parquet = pq.read_table(folder / schema.PAPERS)
        pq.write_table(parquet.drop_columns(["short_id"]), folder / schema.PAPERS)
        loaded = data.load_corpus(tmp_path, older)
        assert "short_id" not in loaded.papers
        pd.testing.assert_frame_equal(loaded.papers, corpus.papers.drop(columns="short_id"))
        np.testing.assert_array_equal(loaded.short_ids, want)


def test_terms_load_most_used_first_whether_or_not_the_file_is(corpus, small_artifacts, tmp_path):
    # The build writes terms most used first, ties by term; the app keeps that order without re-sorting ...
    want = corpus.terms.sort_values(["df", "term"], ascending=[False, True], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(corpus.terms, want)
    stored = pd.read_parquet(corpus.folder / schema.TERMS)
    assert stored["term"].tolist() == want["term"].tolist()
    tied = np.flatnonzero(want["df"].to_numpy()[1:] == want["df"].to_numpy()[:-1])
    assert len(tied), "the small corpus should have tied terms to swap"
    # ... and a file in another order (an older build, a hand edit) is put in order on load: shuffled,
    # or only two tied terms swapped.
    copy_build(small_artifacts, "small", tmp_path, "shuffled")
    stored.sample(frac=1, random_state=0).to_parquet(tmp_path / "shuffled" / schema.TERMS)
    pd.testing.assert_frame_equal(data.load_corpus(tmp_path, "shuffled").terms, want)
    order = np.arange(len(stored))
    i = int(tied[0])
    order[[i, i + 1]] = order[[i + 1, i]]
    swapped = stored.iloc[order].reset_index(drop=True)
    copy_build(small_artifacts, "small", tmp_path, "swapped")
    swapped.to_parquet(tmp_path / "swapped" / schema.TERMS, index=False)
    pd.testing.assert_frame_equal(data.load_corpus(tmp_path, "swapped").terms, want)


def test_cached_corpus_is_shared_and_follows_rebuilds(small_artifacts, tmp_path):
    builds = tmp_path / artifacts.BUILDS / "c"
    builds.mkdir(parents=True)
    first = builds / "b1"
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), first)
    os.symlink(os.path.relpath(first, tmp_path), tmp_path / "c")
    a = caches.get_corpus(tmp_path, "c")
    assert caches.get_corpus(tmp_path, "c") is a  # one copy for every session
    second = builds / "b2"
    shutil.copytree(first, second)
    (tmp_path / "c").unlink()
    os.symlink(os.path.relpath(second, tmp_path), tmp_path / "c")
    b = caches.get_corpus(tmp_path, "c")
    assert b is not a and b.build_id == "b2"


# ------------------------------------------------------------------------------------------
# Filters and URL state
# ------------------------------------------------------------------------------------------


def test_filters_build_the_expected_mask(corpus):
    papers = corpus.papers
    assert apply(corpus, Filters()).all()
    years = apply(corpus, Filters(years=(2021, 2022)))
    assert years.sum() == papers["year"].between(2021, 2022).sum() == 50
    venue = apply(corpus, Filters(venues=("IJCAI 2020",)))
    assert venue.sum() == (papers["venue"] == "IJCAI 2020").sum() > 0
    topic = int(corpus.topic_ids[0])
    assert apply(corpus, Filters(topics=(topic,))).sum() == (papers["topic"] == topic).sum()
    text_mask = apply(corpus, Filters(text="JOB-SHOP"))
    assert text_mask[corpus.paper_pos("latex-1")]
    both = apply(corpus, Filters(years=(2021, 2022), text="planning"))
    assert (both == (years & apply(corpus, Filters(text="planning")))).all()
    assert "of 137 papers" in describe(corpus, Filters(years=(2021, 2022)), years)


def test_clean_drops_what_the_corpus_lacks(corpus):
    cleaned, problems = clean(Filters(years=(1990, 2021), venues=("IJCAI 2020", "Nowhere"), topics=(0, 999)), corpus)
    assert cleaned.years == (2020, 2021)
    assert cleaned.venues == ("IJCAI 2020",) and cleaned.topics == (0,)
    assert len(problems) == 2
    full, _ = clean(Filters(years=(2000, 2030)), corpus)
    assert full.years is None  # the whole span is no filter
    _, problems = clean(Filters(years=(1900, 1910)), corpus)
    assert problems and "no paper" in problems[0]


def test_url_state_round_trips():
    view = state.View(
        corpus="small", topic=3, paper="ijcai2020-paper1", q="graph neural", mode="semantic",
        filters=Filters(years=(2021, 2023), venues=("IJCAI 2021", "A, B"), topics=(0, 4), text="diffusion"),
    )  # fmt: skip
    encoded = state.encode(view)
    assert encoded["years"] == "2021-2023" and encoded["topics"] == "0,4" and encoded["venue"] == ["IJCAI 2021", "A, B"]
    params = {k: v if isinstance(v, list) else [v] for k, v in encoded.items()}
    assert state.parse(params) == view
    assert state.encode(state.View()) == {}


def test_url_state_tolerates_bad_values():
    view = state.parse({"topic": ["x"], "years": ["soon"], "topics": ["1,a"], "mode": ["magic"], "q": ["a" * 5000]})
    assert view.topic is None and view.filters.years is None and view.filters.topics == ()
    assert view.mode == "keyword" and len(view.q) == state.MAX_QUERY_CHARS
    assert len(view.problems) == 5  # the cut query is said too
    assert state.parse_range("2022") == (2022, 2022) and state.parse_range("2024-2020") == (2020, 2024)
    assert state.parse_float("7") == 1.0 and state.parse_float("nan") is None


def test_shared_params_carry_corpus_and_filters_only():
    view = state.View(corpus="small", topic=2, paper="p", q="x", filters=Filters(years=(2021, 2022), text="t"))
    shared = state.shared(view, paper="q1", topic=None)
    assert shared == {"corpus": "small", "years": "2021-2022", "text": "t", "paper": "q1"}


# ------------------------------------------------------------------------------------------
# Topics, relevance, trends
# ------------------------------------------------------------------------------------------


def test_relevance_follows_ldavis():
    p_topic, p_corpus = np.array([0.1, 0.01]), np.array([0.1, 0.001])
    assert np.allclose(figures.relevance(p_topic, p_corpus, 1.0), np.log(p_topic))
    assert np.allclose(figures.relevance(p_topic, p_corpus, 0.0), np.log(p_topic / p_corpus))
    terms = pd.DataFrame(
        {
            "term": ["common", "specific"],
            "ctfidf": [0.5, 0.4],
            "count": [10, 1],
            "p_topic": p_topic,
            "p_corpus": p_corpus,
        }
    )
    assert figures.rank_by_relevance(terms, 1.0)["term"].tolist() == ["common", "specific"]
    assert figures.rank_by_relevance(terms, 0.0)["term"].tolist() == ["specific", "common"]
    # one form of each term, the more relevant, as the keywords keep one ("GNNs" or "GNN")
    forms = pd.DataFrame(
        {
            "term": ["GNNs", "graph", "GNN", "graphs", "nodes"],
            "ctfidf": [0.5, 0.4, 0.3, 0.2, 0.1],
            "count": [9, 8, 7, 6, 5],
            "p_topic": [0.09, 0.08, 0.07, 0.06, 0.05],
            "p_corpus": [0.01, 0.01, 0.01, 0.01, 0.01],
        }
    )
    assert figures.rank_by_relevance(forms, 1.0, top=3)["term"].tolist() == ["GNNs", "graph", "nodes"]
    # and none that a longer term shown holds in most of its uses
    parts = forms.assign(term=["time series", "series", "time", "forecasting", "nodes"], count=[90, 100, 95, 40, 5])
    assert figures.rank_by_relevance(parts, 1.0, top=3)["term"].tolist() == ["time series", "forecasting", "nodes"]
    assert figures.rank_by_relevance(parts, 1.0, top=1)["term"].tolist() == ["time series"]


def test_topic_table_reports_evidence(corpus):
    table = analysis.topic_table(corpus, apply(corpus, Filters(years=(2020, 2020))))
    assert list(table["topic"]) == list(corpus.topic_ids)
    assert table["size"].sum() == corpus.n_papers - int((corpus.topic_index < 0).sum())
    assert table["shown"].sum() == 25
    assert table["reassigned"].sum() == int(corpus.papers["was_outlier"].sum())
    # Measured by the build for small corpora: other UMAP seeds reproduce each topic to this degree.
    assert table["stability"].between(0, 1).all()


def test_nearest_topics_and_representatives(corpus):
    near = analysis.nearest_topics(corpus, 0, k=3)
    assert all(pos != 0 for pos, _ in near) and len(near) == min(3, len(corpus.tables.topics) - 1)
    assert analysis.representative_rows(corpus, 0)


def test_topic_shares_sum_to_one_each_year(corpus):
    mask = apply(corpus, Filters())
    shares = analysis.topic_year_shares(corpus, mask)
    assert np.allclose(shares.groupby("year")["share"].sum(), 1.0)


def test_keyword_shares_match_the_pipeline_and_text_fallback(corpus):
    mask = apply(corpus, Filters())
    term = corpus.terms["term"].iat[0]
    shares = analysis.keyword_year_shares(corpus, [term, "scheme for job-shop"], mask)
    ky = corpus.keyword_years
    expected = ky[ky["term"] == term].set_index("year")["df"]
    got = shares[shares["term"] == term].set_index("year")["df"]
    assert (got.reindex(expected.index) == expected).all()
    fallback = shares[shares["term"] == "scheme for job-shop"]
    assert set(fallback["source"]) == {"text match"} and fallback["df"].sum() >= 1
    assert (shares["share"] <= 1).all()


def test_period_changes_need_support():
    counts = pd.DataFrame(
        {"term": ["a", "a", "b", "b", "c"], "year": [2020, 2023, 2020, 2023, 2023], "n": [1, 9, 5, 1, 2]}
    )
    totals = pd.Series({2020: 10, 2021: 10, 2022: 10, 2023: 10})
    table = analysis.period_changes(counts, totals, (2020, 2021), (2022, 2023), key="term", min_support=5)
    assert table["term"].tolist() == ["a", "b"]  # c (2 papers) is not a trend
    row = table.iloc[0]
    assert (row["n_before"], row["n_after"]) == (1, 9)
    assert row["share_before"] == pytest.approx(0.05) and row["change"] == pytest.approx(0.4)
    assert analysis.default_periods([2020, 2021, 2022, 2023, 2024]) == ((2020, 2023), (2024, 2024))


# ------------------------------------------------------------------------------------------
# Search
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("doc_id", ["ijcai2020-paper1", "latex-1", "ijcai2023-paper104"])
def test_bm25_ranks_the_paper_of_a_phrase_first(corpus, index, doc_id):
    row = corpus.paper_pos(doc_id)
    words = corpus.papers["abstract"].iat[row].split()
    phrase = " ".join(words[12:20])
    hits = search.keyword_search(corpus, index, phrase)
    assert hits.rows[0] == row and hits.exact[0]


KEYWORD_QUERIES = [
    "planning agents", "graph neural networks", "reinforcement learning", "the of and", "zzzzqqq", "LaTeX $x^2$",
    "multi-agent path finding", "knowledge graph embedding", "fairness", "adversarial prompts for vision-language agents",
]  # fmt: skip


def test_the_builds_keyword_index_is_memory_mapped_and_ranks_as_indexing_the_papers_does(corpus, index):
    stored = search.load_bm25(corpus)
    assert stored is not None and search.index_note(corpus) is None
    assert stored.shown_text and index.shown_text
    assert isinstance(stored.bm25.scores["data"], np.memmap) and isinstance(stored.bm25.scores["indices"], np.memmap)
    assert stored.bm25.vocab_dict == index.bm25.vocab_dict
    mask = apply(corpus, Filters(years=(2021, 2023)))
    for query in KEYWORD_QUERIES:
        for allowed in (None, mask):
            a = search.keyword_search(corpus, stored, query, mask=allowed, k=50)
            b = search.keyword_search(corpus, index, query, mask=allowed, k=50)
            np.testing.assert_array_equal(a.rows, b.rows, err_msg=query)
            np.testing.assert_array_equal(a.scores, b.scores, err_msg=query)
            np.testing.assert_array_equal(a.exact, b.exact, err_msg=query)
    assert len(search.keyword_search(corpus, stored, "planning agents"))


def _pandas_phrase_mask(papers: pd.DataFrame, query: str) -> np.ndarray:
    """The exact-phrase check as pandas did it before it ran on Arrow's RE2 (the reference)."""
    pattern = r"\s+".join(re.escape(w) for w in query.split())
    hit = papers["abstract"].str.contains(pattern, case=False, regex=True) | papers["title"].str.contains(
        pattern, case=False, regex=True
    )
    return hit.fillna(False).to_numpy(dtype=bool)


def test_the_phrase_check_matches_what_pandas_matched(corpus):
    from types import SimpleNamespace

    queries = ["planning agents", "vision-language agents", "$x^2$ and", "of the", "(e.g. the", "MULTI-AGENT path"]
    for query in queries:
        np.testing.assert_array_equal(phrase_scan.phrase_mask(corpus, query), _pandas_phrase_mask(corpus.papers, query))
    # Unicode spacing and case, a null text and regex characters, as Python's re reads them.
    texts = ["Über\u00a0die Straße", "über  DIE\tstraße", "ueber die strasse", None, "a+b (c) [d]", "ÉCOLE normale"]
    papers = pd.DataFrame({"abstract": texts, "title": ["x"] * len(texts)}).astype("str")
    tiny = SimpleNamespace(n_papers=len(texts), papers=papers)
    for query in ["über die", "die straße", "a+b (c)", "(c) [d]", "école NORMALE", "b (c"]:
        expected = _pandas_phrase_mask(papers, query)
        np.testing.assert_array_equal(phrase_scan.phrase_mask(tiny, query), expected, err_msg=query)
    assert phrase_scan.phrase_mask(tiny, "über die").tolist() == [True, True, False, False, False, False]
    # papers.arrow's batches (several chunks, scanned in parallel) give the same answer.
    import pyarrow as pa

    chunked = pa.chunked_array([texts[:2], texts[2:3], texts[3:]], type=pa.large_string())
    papers_chunked = pd.DataFrame({"abstract": pd.arrays.ArrowStringArray(chunked), "title": papers["title"]})
    assert len(papers_chunked["abstract"].array._pa_array.chunks) == 3
    tiny_chunked = SimpleNamespace(n_papers=len(texts), papers=papers_chunked)
    for query in ["über die", "die straße", "a+b (c)", "école NORMALE"]:
        np.testing.assert_array_equal(
            phrase_scan.phrase_mask(tiny_chunked, query), phrase_scan.phrase_mask(tiny, query)
        )


@pytest.mark.parametrize("piece", [7, phrase_scan.PHRASE_PIECE])
def test_the_phrase_check_of_some_papers_reads_them_where_they_lie_or_copies_them_out_alike(corpus, monkeypatch, piece):
    """A few papers of a stretch are copied out and checked, most of a stretch is scanned in place;
    either way, in any order of rows, each paper's answer is the full scan's."""
    monkeypatch.setattr(phrase_scan, "PHRASE_PIECE", piece)
    taken, scanned = [], []
    real_pieces = phrase_scan._pieces

    def spy(arrow, rows):
        out = real_pieces(arrow, rows)
        if rows is not None:
            for _, _, pick in out:
                (taken if pick is None else scanned).append(1)
        return out

    monkeypatch.setattr(phrase_scan, "_pieces", spy)
    rng = np.random.default_rng(5)
    for query in ["planning agents", "learning to", "in this paper", "of the"]:
        full = phrase_scan.phrase_mask(corpus, query)
        for share in (0.02, 0.2, 0.6, 1.0):
            rows = rng.permutation(np.flatnonzero(rng.random(corpus.n_papers) < share))
            np.testing.assert_array_equal(phrase_scan.phrase_rows(corpus, rows, query), full[rows], err_msg=query)
    assert taken and scanned


@pytest.mark.parametrize("first_round", [1, 3, search.PHRASE_FIRST_ROUND])
def test_keyword_search_orders_as_a_full_sort_of_every_match(corpus, index, monkeypatch, first_round):
    """Only the k best are sorted, and the phrase is checked only on the best scores, round after
    round (here from 1 and 3 papers on, so that every query takes several rounds); the order is the
    full sort's of every paper sharing a word with the query: exact first, score, row."""
    monkeypatch.setattr(search, "PHRASE_FIRST_ROUND", first_round)
    monkeypatch.setattr(search, "PHRASE_ROUND_GROWTH", 2 if first_round < 10 else search.PHRASE_ROUND_GROWTH)
    rng = np.random.default_rng(3)
    # the last four: papers with the phrase lie far apart in the score order (this corpus: "learning
    # and" at places 4, 17 and 24 of 35), so a search that stopped checking too early would miss some
    phrases_far_apart = ["learning to", "learning and", "we propose a", "in this paper"]
    for query in [*KEYWORD_QUERIES, "learning", "agents planning", "the learning", "multi-agent", *phrases_far_apart]:
        for k in (1, 5, 25, 500):
            mask = rng.random(corpus.n_papers) < 0.7 if k != 500 else None
            tokens = search.tokenize([query])[0]
            ids = index.bm25.get_tokens_ids(tokens) if tokens else []
            scores = (
                np.asarray(index.bm25.get_scores(ids), dtype=np.float32)
                if ids
                else np.zeros(corpus.n_papers, np.float32)
            )
            exact = phrase_scan.phrase_mask(corpus, query)
            allowed = (scores > 0) & (mask if mask is not None else True)
            rows = np.flatnonzero(allowed)
            expected = rows[np.lexsort((rows, -scores[rows], ~exact[rows]))][:k]
            hits = search.keyword_search(corpus, index, query, mask=mask, k=k)
            np.testing.assert_array_equal(hits.rows, expected, err_msg=f"{query} k={k}")
            np.testing.assert_array_equal(hits.exact, exact[expected], err_msg=f"{query} k={k}")
            # what the page says: the best k of how many, and how many hold the phrase where all are listed
            assert hits.total == len(rows), f"{query} k={k}"
            holding = int(exact[rows].sum())
            listed_all = holding < min(k, len(rows)) or k >= len(rows)
            phrase = phrase_scan.is_phrase(query) and len(rows)
            assert hits.exact_total == (holding if listed_all and phrase else None), f"{query} k={k}"


def test_a_hyphenated_word_is_a_phrase_and_the_papers_writing_it_come_first(corpus, index):
    """The tokeniser splits "multi-agent" into "multi" and "agent", so BM25 alone mixes in papers
    that write "agent" only; as a phrase, the papers that write "multi-agent" come first."""
    assert phrase_scan.is_phrase("multi-agent") and phrase_scan.is_phrase("planning  agents")
    assert not any(map(phrase_scan.is_phrase, ["planning", " -agent- ", ""]))
    text = (corpus.papers["title"].fillna("") + " " + corpus.papers["abstract"].fillna("")).str.lower()
    writing = text.str.contains("multi-agent", regex=False).to_numpy()
    np.testing.assert_array_equal(phrase_scan.phrase_mask(corpus, "Multi-Agent"), writing)
    n = int(writing.sum())
    hits = search.keyword_search(corpus, index, "multi-agent", k=n + 10)
    assert 0 < n < len(hits) and hits.exact_total == n
    assert set(hits.rows[:n].tolist()) == set(np.flatnonzero(writing).tolist()) and hits.exact[:n].all()


def test_keyword_hits_are_kept_per_texts_query_filters_and_k(corpus, index, monkeypatch):
    """The pages' keyword search: a rerun with the same query and filters does not search again,
    other filters or another k do, and the kept hits (shared by every session) cannot be changed."""
    caches._keyword_cached.clear()
    asked = []
    real = search.keyword_search
    monkeypatch.setattr(search, "keyword_search", lambda *a, **kw: asked.append(a[2]) or real(*a, **kw))
    query = "planning agents"
    even = np.arange(corpus.n_papers) % 2 == 0
    first = caches.keyword_hits(corpus, query, None, 25)
    assert caches.keyword_hits(corpus, query, None, 25) is first and asked == [query]
    np.testing.assert_array_equal(first.rows, real(corpus, index, query, k=25).rows)
    filtered = caches.keyword_hits(corpus, query, even, 25)
    np.testing.assert_array_equal(filtered.rows, real(corpus, index, query, mask=even, k=25).rows)
    assert caches.keyword_hits(corpus, query, even.copy(), 25) is filtered and len(asked) == 2
    assert set(caches.keyword_hits(corpus, query, ~even, 25).rows) <= set(np.flatnonzero(~even))
    caches.keyword_hits(corpus, query, None, 5)
    caches.keyword_hits(corpus, "agents planning", None, 25)
    assert len(asked) == 5
    with pytest.raises(ValueError):
        first.rows[0] = 0
    caches._keyword_cached.clear()


def test_the_search_warm_up_opens_the_index_and_loads_the_encoder_once_per_build(corpus, small_artifacts, monkeypatch):
    """What the first search needs is made in the background once the corpus is open, once."""
    import threading

    monkeypatch.setattr(search, "_WARMING", set())
    fresh = data.load_corpus(small_artifacts, "small")
    opened, encoders = [], []
    for _ in range(2):  # the second call finds the build warming or warm
        search.warm(fresh, opened.append, lambda c: encoders.append(c) or caches.encoder_for(c))
        for thread in threading.enumerate():
            if thread.name == f"warm-{fresh.name}":
                thread.join(timeout=120)
    assert opened == [fresh] and encoders == [fresh]


def test_a_build_without_a_keyword_index_is_indexed_in_memory_and_says_how_to_fix_it(small_artifacts, tmp_path, index):
    copy_build(small_artifacts, "small", tmp_path, "old")
    shutil.rmtree(tmp_path / "old" / schema.KEYWORD_INDEX)
    old = data.load_corpus(tmp_path, "old")
    assert search.load_bm25(old) is None
    note = search.index_note(old)
    assert "no keyword index" in note and "python -m pipeline build FILES --name old --force" in note
    fallback = caches.bm25_index(old)  # what the app uses: built in memory, as before the artifact
    assert not isinstance(fallback.bm25.scores["data"], np.memmap) and fallback.shown_text
    for query in KEYWORD_QUERIES[:4]:
        np.testing.assert_array_equal(
            search.keyword_search(old, fallback, query).rows, search.keyword_search(old, index, query).rows
        )


def test_a_keyword_index_that_does_not_fit_the_papers_is_not_used(small_artifacts, tmp_path):
    folder = copy_build(small_artifacts, "small", tmp_path, "odd")
    meta_path = folder / schema.KEYWORD_INDEX / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["n_docs"] += 1
    meta_path.write_text(json.dumps(meta))
    odd = data.load_corpus(tmp_path, "odd")
    assert search.load_bm25(odd) is None and "does not fit" in search.index_note(odd)
    meta["n_docs"] -= 1
    meta["version"] = 0
    meta_path.write_text(json.dumps(meta))
    assert search.load_bm25(odd) is None
    # A build of the first version (its index of the cleaned model_text) still ranks; only the
    # narrowing of the phrase check by the index's postings is off.
    meta["version"] = 1
    meta_path.write_text(json.dumps(meta))
    older = search.load_bm25(odd)
    assert older is not None and not older.shown_text and older.phrase_candidates("planning agents") is None
    assert bm25.index_problem(folder / schema.KEYWORD_INDEX, odd.n_papers) is None


def test_bm25_respects_the_filters_and_odd_queries(corpus, index):
    mask = apply(corpus, Filters(years=(2020, 2020)))
    hits = search.keyword_search(corpus, index, "planning agents", mask=mask)
    assert len(hits) and mask[hits.rows].all()
    assert len(search.keyword_search(corpus, index, "the of and")) == 0  # stop words only
    assert phrase_scan.phrase_mask(corpus, "of the").any()  # a phrase of stop words alone matches no paper:
    assert len(search.keyword_search(corpus, index, "of the")) == 0  # only papers sharing a word are ranked
    assert len(search.keyword_search(corpus, index, "zzzzqqq")) == 0
    assert np.all(np.diff(hits.scores[~hits.exact]) <= 1e-6)


def test_semantic_search_similar_papers_and_placement(corpus):
    encoder = caches.encoder_for(corpus)  # the vectors' own encoder: the injected hashing test encoder here
    row = corpus.paper_pos("latex-1")
    vector = search.encode_query(encoder, corpus.papers["model_text"].iat[row])
    hits = search.semantic_search(corpus, vector, k=5)
    assert hits.rows[0] == row and np.all(np.diff(hits.scores) <= 1e-6)
    similar = search.similar_papers(corpus, row, 10)
    assert row not in similar.rows and len(similar) == 10
    placed = search.place_vector(corpus, vector)
    # Cosine similarity to each topic's embedding, a plain number (not a distribution that sums to 1).
    assert np.allclose(placed.similarities, np.asarray(corpus.tables.topic_embeddings) @ vector, atol=1e-5)
    assert placed.top_topics[0] == int(np.argmax(placed.similarities))
    assert placed.nearest.rows[0] == row
    lo, hi = corpus.xy.min(axis=0), corpus.xy.max(axis=0)
    assert np.all(placed.xy >= lo - 1e-3) and np.all(placed.xy <= hi + 1e-3)
    frame = search.hits_frame(corpus, hits)
    assert list(frame.columns) == ["doc_id", "title", "topic", "label", "year", "venue", "score", "exact"]


def test_query_encoder_is_the_one_the_corpus_was_embedded_with(corpus):
    from pipeline.core.config import EmbedParams
    from tests.conftest import TEST_ENCODER

    assert search.embed_params(corpus) == EmbedParams()  # the settings say the default model ...
    assert corpus.manifest.embedding.model_key == TEST_ENCODER.key  # ... the vectors say otherwise
    assert caches.encoder_for(corpus) is TEST_ENCODER  # so queries use the injected test encoder


# ------------------------------------------------------------------------------------------
# Safe text
# ------------------------------------------------------------------------------------------


HOSTILE = [
    XSS_TITLE,
    'We study <img src=x onerror="window.__xss=1"> adversarial prompts and [a link](javascript:window.__xss=1).',
    "<a href='javascript:alert(1)'>click</a> ![x](javascript:alert(1)) <javascript:alert(1)>",
    ":red[colour] :smile: **bold** # heading\n\n1. list\n> quote `code` $$\\href{javascript:alert(1)}{x}$$",
]


def _render(markdown: str) -> str:
    import markdown_it  # pinned in requirements.txt: a security test must run, never skip

    return markdown_it.MarkdownIt("commonmark", {"html": True}).render(markdown)


@pytest.mark.parametrize("raw", HOSTILE)
def test_hostile_text_renders_inert(raw):
    md = text.to_markdown(raw, keywords=["adversarial", "prompts"])
    rendered = _render(md)
    assert "<script" not in rendered and "<img" not in rendered and 'href="javascript' not in rendered.lower()
    assert not re.search(r"<(h1|ol|blockquote|code|strong|a)\b", rendered)  # no markup from the text itself
    # nothing is lost: the visible text is the original (whitespace aside, highlights unwrapped)
    visible = re.sub(r":orange-background\[(.*?)\]", r"\1", md)
    plain = (
        re.sub(r"<[^>]+>", "", _render(visible))
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&amp;", "&")
    )
    assert " ".join(plain.split()) == " ".join(raw.split())


def test_plain_labels_are_escaped():
    label = text.plain(XSS_TITLE)
    assert "<" not in label.replace("\\<", "")
    assert text.plain(None, "x") == "x" and text.plain(float("nan")) == "" and text.plain(pd.NA) == ""


def test_chart_labels_cut_short_keep_a_weak_labels_mark():
    # charts cut long labels ("16 · evolutionary algorithms and s…"); a weak label's mark stays
    weak = "search and spiking neural networks" + WEAK_MARK
    cut = figures.esc(weak, 26)
    assert len(cut) == 26 and cut.endswith("…" + WEAK_MARK) and cut.startswith("search and spiking"), cut
    assert figures.esc("search and spiking neural networks", 26) == "search and spiking neural…"
    assert figures.esc("a & b" + WEAK_MARK, 26) == "a &amp; b" + WEAK_MARK  # short enough: as it is


def test_bar_labels_break_into_short_lines_that_keep_the_topics_number():
    # plotly cuts a category label too long for its margin on the left ("17 · …" read "7 · …"):
    # the charts break labels into short lines instead, and hover shows them whole
    from explorer.services import trend_figures

    long, weak = (
        "17 · treatment, causal mechanisms and outcomes",
        "19 · knowledge distillation, speech and music" + WEAK_MARK,
    )
    fig = trend_figures.distribution_bars([long, weak, "3 · graphs"], [5, 4, 3], title="Topics", xtitle="papers")
    ticks = [t.split("<br>") for t in fig.data[0].y]
    assert ticks[0] == ["17 · treatment, causal", "mechanisms and outcomes"]
    assert ticks[1][0] == "19 · knowledge" and ticks[1][-1].endswith("…" + WEAK_MARK) and len(ticks[1]) == 2
    assert ticks[2] == ["3 · graphs"]
    assert all(len(line) <= figures.TICK_WIDTH + 1 for lines in ticks for line in lines)
    assert list(fig.data[0].customdata) == [long, weak, "3 · graphs"]  # the hover, whole
    assert fig.layout.height >= 3 * 40  # rows tall enough for two lines
    table = pd.DataFrame({"label": [long], "change": [0.02], "z": [3.0], "n_before": [4], "share_before": [0.01],
                          "n_after": [9], "share_after": [0.03]})  # fmt: skip
    bars = trend_figures.change_bars(table, label="label", title="Emerging")
    assert bars.data[0].y[0].startswith("17 · ") and list(bars.data[0].hovertext) == [long]
    assert figures.tick_label("a <b> & c") == "a &lt;b&gt; &amp; c"  # escaped like any chart text


def test_only_http_links_become_links():
    assert text.safe_url("https://example.org/paper?x=1") == "https://example.org/paper?x=1"
    assert text.safe_url("http://example.org") == "http://example.org"
    for bad in (
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "data:text/html,<script>",
        "vbscript:x",
        "//example.org",
        "https://",
        "https://a b",
        None,
        3,
    ):
        assert text.safe_url(bad) is None
    md = text.to_markdown("see https://example.org/code and javascript:alert(1) too")
    assert "](https://example.org/code)" in md
    assert "](javascript" not in md


def test_math_renders_only_when_valid():
    md = text.to_markdown(
        r"with $\mathcal{O}(n \log n)$ and $x \in \mathbb{R}^d$ and $\href{javascript:alert(1)}{x}$ and $\frac{1}{2$"
    )
    assert r"$\mathcal{O}(n \log n)$" in md and r"$x \in \mathbb{R}^d$" in md
    assert r"$\href" not in md and r"\$\\href" in md
    assert "$\\frac{1}{2$" not in md
    assert text.to_markdown("costs $5 and $10 today").count("\\$") == 2  # money is not math
    assert text.count_math(r"$x$ and $\evil{y}$") == (1, 1)
    assert text.is_safe_math(r"\alpha + \beta_i^2") and not text.is_safe_math(r"\url{x}")


def test_keywords_are_highlighted_inside_escaped_text():
    md = text.to_markdown("Graph neural networks <b>rock</b>", keywords=["graph neural", "rock"])
    assert ":orange-background[Graph neural]" in md
    assert ":orange-background[rock]" in md and "\\<b\\>" in md


# ------------------------------------------------------------------------------------------
# Figures
# ------------------------------------------------------------------------------------------


def test_the_map_gets_11_bytes_a_paper_and_the_labels(corpus):
    blob = mapview.corpus_points(corpus)
    header, arrays = unpack(blob.data)
    n = corpus.n_papers
    assert header["n"] == n and header["kind"] == "points" and blob.id == header["id"]
    assert {a: arrays[a].dtype.str for a in arrays} == {"x": "<f4", "y": "<f4", "topic": "<u2", "flags": "|u1"}
    labels = len(json.dumps(header["topics"]))
    assert len(blob) <= 11 * n + labels + 600  # positions, topic, flags; the rest is the labels
    assert np.array_equal(arrays["x"], corpus.xy[:, 0]) and np.array_equal(arrays["y"], corpus.xy[:, 1])
    topics = [t["id"] for t in header["topics"]]
    assert topics == corpus.topic_ids.tolist()
    known = arrays["topic"] != NO_TOPIC
    assert np.array_equal(np.asarray(topics)[arrays["topic"][known]], corpus.papers["topic"].to_numpy()[known])
    reassigned = (arrays["flags"] & FLAG_REASSIGNED) > 0
    assert np.array_equal(reassigned, corpus.papers["was_outlier"].to_numpy(dtype=bool))
    assert [t["colour"] for t in header["topics"]] == [corpus.topic_colour(t) for t in topics]
    # the blob computes the same colours from the papers alone (the offline export's way)
    alone = unpack(points_blob(corpus.name, corpus.papers, corpus.tables.topics).data)[0]
    assert [t["colour"] for t in alone["topics"]] == [t["colour"] for t in header["topics"]]
    assert [t["size"] for t in header["topics"]] == corpus.tables.topics["size"].tolist()
    # the id is the content: a renamed topic is a new container, the same corpus the same one
    renamed = corpus.tables.topics.assign(label=["Renamed"] + corpus.tables.topics["label"].tolist()[1:])
    assert points_blob(corpus.name, corpus.papers, renamed).id != blob.id
    assert mapview.corpus_points(corpus).id == blob.id


def test_masks_and_rows_travel_packed():
    mask = np.zeros(13, dtype=bool)
    mask[[0, 7, 8, 12]] = True
    header, arrays = unpack(mask_blob(mask).data)
    assert header["n"] == 13 and np.array_equal(np.unpackbits(arrays["bits"])[:13].astype(bool), mask)
    header, arrays = unpack(rows_blob(np.array([5, 1, 70_000])).data)
    assert arrays["rows"].tolist() == [5, 1, 70_000]
    with pytest.raises(ValueError, match="1-D"):
        pack("rows", {"rows": np.zeros((2, 2), dtype=np.uint32)})


def test_a_view_in_the_url_is_parsed_strictly():
    view = mapview.parse_view("1.5,-2.25,4")
    assert (view.x, view.y, view.zoom, view.text) == (1.5, -2.25, 4.0, "1.5,-2.25,4")
    for bad in (None, "", "1,2", "a,b,c", "1,2,0.01", "1,2,1e9", "nan,1,2", "1,2,3,4"):
        assert mapview.parse_view(bad) is None, bad
    state = mapview.map_state(rows_blob(np.array([1])), view=view, highlight=3)
    assert state["view"] == {"x": 1.5, "y": -2.25, "zoom": 4.0} and state["viewKey"] == "1.5,-2.25,4"
    assert json.dumps(state)  # plain JSON for the component


def test_palette_is_shared_and_stable():
    assert figures.topic_colour is palette.topic_colour and figures.PALETTE is palette.PALETTE
    assert palette.topic_colour(0) == palette.PALETTE[0]
    assert palette.topic_colour(len(palette.PALETTE)) == palette.PALETTE[0]
    assert palette.topic_colour(-1) == palette.OUTLIER
    assert palette.STAR not in palette.PALETTE and palette.LIST not in palette.PALETTE
    assert palette.rgb("#0072B2") == (0, 114, 178)


def test_topic_links_count_each_papers_nearest_papers_of_other_topics():
    """Against counting by hand: each paper's 8 nearest papers (all distances), pairs by (low, high) id."""
    rng = np.random.default_rng(5)
    topic = rng.integers(0, 7, 400) * 1000  # large, sparse ids
    xy = rng.normal(size=(400, 2)) + (topic[:, None] / 1000) * 0.8
    d = np.linalg.norm(xy[:, None] - xy[None], axis=2)
    np.fill_diagonal(d, np.inf)
    expected: dict[tuple[int, int], int] = {}
    for i, row in enumerate(np.argsort(d, axis=1)[:, : palette.TOUCH_NEIGHBOURS]):
        for j in row:
            if topic[i] != topic[j]:
                pair = (int(min(topic[i], topic[j])), int(max(topic[i], topic[j])))
                expected[pair] = expected.get(pair, 0) + 1
    links = palette.topic_links(xy[:, 0], xy[:, 1], topic)
    assert links == expected and list(links) == sorted(links)


def test_topics_that_touch_on_the_map_never_share_a_colour(corpus):
    colouring = corpus.colouring
    assert set(colouring.colours) == set(corpus.topic_ids.tolist()) and colouring.touching
    assert all(colour in palette.PALETTE for colour in colouring.colours.values())
    links = palette.topic_links(corpus.xy[:, 0], corpus.xy[:, 1], corpus.papers["topic"].to_numpy())
    touching = [pair for pair, n in links.items() if n >= palette.TOUCH_MIN_LINKS]
    assert touching and sorted(touching) == sorted(colouring.touching)
    for a, b in touching:
        assert colouring.colours[a] != colouring.colours[b], (a, b)
    assert not colouring.clashes and colouring.note() is None
    # a function of the layout: the papers' order does not matter, the same colours every time
    shuffled = np.random.default_rng(0).permutation(corpus.n_papers)
    again = palette.map_colouring(
        corpus.xy[shuffled, 0], corpus.xy[shuffled, 1], corpus.papers["topic"].to_numpy()[shuffled], corpus.topic_ids
    )
    assert again.colours == colouring.colours
    # every chart of a topic takes the map's colour
    t = int(corpus.topic_ids[0])
    bars = figures.keyword_bars(["a"], [1.0], topic=t, colours=colouring.colours)
    assert bars.data[0].marker.color == corpus.topic_colour(t)


def test_a_keyword_written_as_a_longer_phrase_names_the_term_whose_weight_its_bar_shows():
    from explorer.services import figures

    bars = figures.keyword_bars(
        ["Time series forecasting", "GNNs", "<b>x</b> y"], [0.3, 0.2, 0.1], topic=0,
        behind=["series forecasting", "gnns", "<i>x</i>"],
    )  # fmt: skip
    notes = list(bars.data[0].customdata)
    assert notes[0] == " (of the term “series forecasting”)" and notes[1] == ""  # case alone is no other term
    assert "<i>" not in notes[2] and "&lt;i&gt;x" in notes[2]  # the term is escaped, as the keyword is
    assert "%{customdata}" in bars.data[0].hovertemplate
    assert list(figures.keyword_bars(["a"], [1.0], topic=0).data[0].customdata) == [""]  # a build before the terms


def test_the_maps_colours_and_spacing_come_from_the_build_and_equal_what_the_app_would_compute(
    corpus, small_artifacts, tmp_path
):
    from pipeline.analysis.curation import Curation
    from pipeline.formats.blobs import point_spacing

    # The build wrote them (map.json), so that the map's first visitor does not wait for them ...
    assert corpus.stored_map is not None
    x, y, topic = corpus.xy[:, 0], corpus.xy[:, 1], corpus.papers["topic"].to_numpy()
    assert corpus.colouring == palette.map_colouring(x, y, topic, corpus.topic_ids)
    assert corpus.map_spacing == point_spacing(x, y) > 0
    # ... and a build without the file (before it existed) draws the same map
    copy_build(small_artifacts, "small", tmp_path, "old")
    (tmp_path / "old" / schema.MAP).unlink()
    old = data.load_corpus(tmp_path, "old")
    assert old.stored_map is None and old.map_spacing is None
    (new_head, new_arrays), (old_head, old_arrays) = (unpack(mapview.corpus_points(c).data) for c in (corpus, old))
    assert {k: v for k, v in new_head.items() if k not in ("name", "id")} == {
        k: v for k, v in old_head.items() if k not in ("name", "id")
    }
    for name, array in new_arrays.items():
        np.testing.assert_array_equal(array, old_arrays[name])
    # a file that does not name every topic's colour is not used
    (tmp_path / "old" / schema.MAP).write_text('{"colours": {"0": "#000000"}, "touching": [], "clashes": []}')
    assert data.load_corpus(tmp_path, "old").stored_map is None
    (tmp_path / "old" / schema.MAP).write_text("not json")
    assert data.load_corpus(tmp_path, "old").stored_map is None
    # after topic edits the colours are computed again: a merge changes which topics touch
    cur = Curation()
    ids = corpus.topic_ids.tolist()
    cur.merge(corpus.tables.topics, corpus.papers, [ids[0], ids[1]])
    merged = data.with_edits(corpus, cur.edits, "k")
    assert set(merged.colouring.colours) == set(merged.topic_ids.tolist()) != set(corpus.colouring.colours)
    mx, my, mt = merged.xy[:, 0], merged.xy[:, 1], merged.papers["topic"].to_numpy()
    assert merged.colouring == palette.map_colouring(mx, my, mt, merged.topic_ids)
    assert merged.map_spacing == corpus.map_spacing  # no paper moved on the map


def test_colouring_is_greedy_deterministic_and_says_when_the_palette_runs_out():
    # a ring of 21 topics, each touching the next: two colours would do, all sixteen are used before one repeats
    ring = {(i, (i + 1) % 21) if i < (i + 1) % 21 else ((i + 1) % 21, i): 10 for i in range(21)}
    colouring = palette.colour_topics(range(21), ring)
    assert not colouring.clashes and len(set(colouring.colours.values())) == len(palette.PALETTE)
    for a, b in ring:
        assert colouring.colours[a] != colouring.colours[b]
    assert palette.colour_topics(reversed(range(21)), dict(reversed(ring.items()))) == colouring
    # a few links (a stray paper) do not make topics touch
    assert not palette.colour_topics([0, 1], {(0, 1): palette.TOUCH_MIN_LINKS - 1}).touching
    # 18 topics all touching one another: the palette's 16 colours cannot do; the fewest links share one
    clique = {(a, b): 100 + a + b for a in range(18) for b in range(a + 1, 18)}
    clique[(0, 1)] = clique[(2, 3)] = palette.TOUCH_MIN_LINKS
    crowded = palette.colour_topics(range(18), clique)
    assert sorted(crowded.clashes) == [(0, 1), (2, 3)]
    assert "2 pairs of neighbouring topics share a colour" in crowded.note()
    assert crowded.colour(-1) == palette.OUTLIER


def test_labels_never_overlap():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50)
    texts = [f"topic label {i}" for i in range(50)]
    keep = overview_figures.place_labels(x, y, texts, np.arange(50), width_px=800, height_px=500, limit=50)
    assert 0 < len(keep) < 50 and keep[0] == 49  # most important first


def test_topic_figures_build(corpus):
    t = corpus.tables.topics
    assert overview_figures.intertopic_map(t, corpus.tables.similarity, selected=0).data
    assert overview_figures.similarity_heatmap(t, corpus.tables.similarity, selected=0).data
    z = overview_figures.linkage_from_hierarchy(corpus.tables.hierarchy, corpus.topic_ids)
    z = overview_figures.linkage_from_embeddings(corpus.tables.topic_embeddings) if z is None else z
    if z is not None:
        assert overview_figures.dendrogram(t, z, selected=int(t["topic"].iat[0])).data
    mds = overview_figures.classical_mds(1 - np.eye(4))
    assert mds.shape == (4, 2)


def test_dendrogram_from_a_known_hierarchy():
    topics = pd.DataFrame({"topic": [0, 1, 2], "label": ["a", "b", "c"]})
    hierarchy = pd.DataFrame({"parent_id": [3, 4], "left_id": [0, 3], "right_id": [1, 2], "distance": [0.2, 0.5]})
    z = overview_figures.linkage_from_hierarchy(hierarchy, topics["topic"].to_numpy())
    assert z.tolist() == [[0, 1, 0.2, 2], [3, 2, 0.5, 3]]
    fig = overview_figures.dendrogram(topics, z, selected=2)
    assert len(fig.data) == 3  # plain branches, the selected branch, the leaves


def test_distinctive_terms_are_phrases_someone_wrote():
    from pipeline.analysis.distinctive import written_as_phrases

    texts = [
        "We study reasoning capabilities. Language models are evaluated on preference optimization.",
        "Preference optimization aligns knowledge language models with human feedback (RLHF).",
        "Our knowledge language models use preference optimization and human feedback.",
        "Better reasoning capabilities. Language agents follow human feedback.",
    ]
    terms = ["capabilities language", "knowledge language", "preference optimization", "human feedback", "rlhf"]
    kept = written_as_phrases(texts, terms, min_papers=2)
    assert dict(zip(terms, kept.tolist(), strict=True)) == {
        "capabilities language": False,  # across a full stop: nobody wrote it
        "knowledge language": False,  # only ever the start of "knowledge language models"
        "preference optimization": True,
        "human feedback": True,
        "rlhf": True,  # a word always passes
    }
    assert written_as_phrases(texts, ["human feedback"], min_papers=4).tolist() == [False]  # 3 papers use it
