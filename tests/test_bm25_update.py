"""A keyword index updated with added papers is the index of the whole corpus, array for array."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis import bm25, bm25_update
from tests.conftest import SMALL_CORPUS


def _papers() -> pd.DataFrame:
    return pd.read_json(SMALL_CORPUS, lines=True)[["id", "title", "abstract"]]


def _assert_same_index(got, want) -> None:
    for key in ("data", "indices", "indptr"):
        assert got.scores[key].dtype == want.scores[key].dtype, key
        np.testing.assert_array_equal(got.scores[key], want.scores[key], err_msg=key)
    assert got.scores["num_docs"] == want.scores["num_docs"]
    assert got.vocab_dict == want.vocab_dict
    for key in ("pairs", "counts", "doc_len"):
        np.testing.assert_array_equal(np.asarray(getattr(got, key)), np.asarray(getattr(want, key)), err_msg=key)


def _saved(tmp_path, papers: pd.DataFrame):
    folder = tmp_path / "keyword_index"
    index = bm25.build_index(bm25.ShownTexts(papers["title"], papers["abstract"]))
    bm25.save_index(index, folder, len(papers))
    return folder


def test_papers_added_moved_and_changed_give_the_index_of_the_whole_corpus(tmp_path):
    papers = _papers()
    old = papers.iloc[:80].reset_index(drop=True).copy()
    # One old paper alone writes a word (300 times: counts of two bytes), and its abstract is
    # changed so that the word goes (the new corpus's counts fit one byte).
    old.loc[7, "abstract"] = old.loc[7, "abstract"] + " zyxwordonlyhere" * 300
    folder = _saved(tmp_path, old)
    previous = bm25_update.previous_counts(folder, len(old))
    assert previous is not None and previous.counts.dtype == np.uint16

    rng = np.random.default_rng(0)
    new = pd.concat([old, papers.iloc[80:]], ignore_index=True)
    new.loc[7, "abstract"] = papers.loc[7, "abstract"] + " a fresh word qwvnewword"
    new.loc[12, "title"] = None  # a title gone: indexed as empty
    order = rng.permutation(len(new))  # the new input holds the old papers in another order
    new = new.iloc[order].reset_index(drop=True)
    old_rows = np.where(order < len(old), order, -1)
    old_rows[np.isin(order, [7, 12])] = -1  # changed: indexed again

    got = bm25_update.update_index(previous, old_rows, new["title"], new["abstract"])
    want = bm25.build_index(bm25.ShownTexts(new["title"], new["abstract"]))
    _assert_same_index(got, want)
    assert got.counts.dtype == np.uint8 and "zyxwordonlyhere" not in got.vocab_dict and "qwvnewword" in got.vocab_dict
    query = bm25.tokenize(["fresh word matching"])[0]
    np.testing.assert_array_equal(
        got.get_scores(got.get_tokens_ids(query)), want.get_scores(want.get_tokens_ids(query))
    )

    # Saved and updated again with no new paper: still the index of the corpus.
    bm25.save_index(got, tmp_path / "second", len(new))
    again = bm25_update.previous_counts(tmp_path / "second", len(new))
    _assert_same_index(bm25_update.update_index(again, np.arange(len(new)), new["title"], new["abstract"]), want)


def test_an_index_without_counts_or_for_other_papers_is_not_updated(tmp_path):
    papers = _papers().iloc[:30]
    folder = _saved(tmp_path, papers)
    assert bm25_update.previous_counts(folder, len(papers) + 1) is None  # another corpus
    meta = json.loads((folder / bm25.INDEX_META).read_text(encoding="utf-8"))
    (folder / bm25.INDEX_META).write_text(json.dumps(meta | {"version": 3}), encoding="utf-8")
    assert bm25.load_index(folder, len(papers)) is not None  # still read by the app
    assert bm25_update.previous_counts(folder, len(papers)) is None  # but has no counts to add to
    (folder / bm25.INDEX_META).write_text(json.dumps(meta), encoding="utf-8")
    (folder / bm25.COUNTS_FILE).unlink()
    assert bm25_update.previous_counts(folder, len(papers)) is None


def test_an_index_is_saved_only_with_its_counts(tmp_path):
    papers = _papers().iloc[:10]
    index = bm25.build_index(bm25.ShownTexts(papers["title"], papers["abstract"]))
    assert index.counts.dtype == np.uint8 and index.counts.shape == index.scores["data"].shape
    assert index.doc_len.tolist() == [
        len(t) for t in bm25.tokenize(bm25.index_texts(papers["title"], papers["abstract"]))
    ]
    index.counts = None
    with pytest.raises(ValueError, match="counts"):
        bm25.save_index(index, tmp_path / "k", len(papers))


@pytest.mark.parametrize("dtype", ["str", object])
def test_each_added_build_paper_keeps_its_old_index_row_unless_its_shown_text_changed(dtype):
    """``incremental.index_rows``: the old row of every paper whose title and abstract read the
    same to the index (a missing value reads as empty), -1 for new and changed ones."""
    from pipeline.build import incremental

    old = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d", "e"],
            "row": [0, 1, 2, 3, 4],
            "title": ["A", None, "C", "D", "E"],
            "abstract": ["x", "y", "z", "w", None],
        }
    ).astype({"doc_id": dtype, "title": dtype, "abstract": dtype})
    papers = pd.DataFrame(
        {  # in another order, one new, one title and one abstract changed, missing values kept
            "doc_id": ["e", "new", "c", "a", "b", "d"],
            "title": ["E", "N", "C!", "A", None, "D"],
            "abstract": [None, "n", "z", "x", "y", "w2"],
        }
    ).astype(dtype)
    plan = incremental.IncrementalPlan(None, old, papers["doc_id"].eq("new").to_numpy())
    assert incremental.index_rows(plan, papers).tolist() == [4, -1, -1, 0, 1, -1]
