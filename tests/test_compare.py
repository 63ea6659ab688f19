"""Comparing corpora (pipeline/analysis/compare.py): intervals, novelty calibration, topic matching, terms,
lineage, stored comparisons and the CLI, on synthetic data with a known answer and on fixture builds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.analysis import compare as cmp
from pipeline.analysis import distinctive as dist
from pipeline.analysis import intervals as iv
from pipeline.analysis import lineage as lin
from pipeline.analysis import novelty as nov
from pipeline.analysis.comparison import CompareError, CompareParams, comparison_dir, stored
from pipeline.analysis.side import Side
from pipeline.analysis.topic_matching import match_topics
from pipeline.cli import cli
from pipeline.core import schema
from pipeline.model.label_case import shown_term

# ------------------------------------------------------------------------------------------
# Intervals
# ------------------------------------------------------------------------------------------


def test_wilson_and_newcombe_match_the_published_examples():
    # Newcombe (1998), Statistics in Medicine 17: 81/263 (Wilson: 0.2553-0.3662) and 56/70 - 48/80 (method 10:
    # 0.0524-0.3339).
    lo, hi = iv.wilson(np.array([81]), 263, 1.959964)
    assert (round(lo[0], 4), round(hi[0], 4)) == (0.2553, 0.3662)
    lo, hi = iv.newcombe(np.array([56]), 70, np.array([48]), 80, 1.959964)
    assert (round(lo[0], 4), round(hi[0], 4)) == (0.0524, 0.3339)


def test_two_papers_in_38_is_not_a_trend_but_a_real_rise_is():
    # A topic holding 5% of 18,000 reference papers, then 2 of 38 new papers: no clear change.
    small = iv.share_changes(np.array([900, 17_100]), 18_000, np.array([2, 36]), 38)
    assert (small["verdict"] == "no clear change").all()
    # 30% of 3,000 new papers in a 5% topic: grew; its complement shrank.
    big = iv.share_changes(np.array([900, 17_100]), 18_000, np.array([900, 2_100]), 3_000)
    assert big["verdict"].tolist() == ["grew", "shrank"]
    assert (big["change_lo"] <= big["change"]).all() and (big["change"] <= big["change_hi"]).all()
    assert (big["lo_after"] <= big["share_after"]).all() and (big["share_after"] <= big["hi_after"]).all()


def test_a_topic_with_no_new_paper_is_gone_only_when_that_cannot_be_chance():
    counts = np.array([3_000, 100, 14_900])  # 16.7%, 0.6%, the rest
    out = iv.share_changes(counts, 18_000, np.array([0, 0, 500]), 500)
    assert out["verdict"].tolist()[:2] == ["gone", "no clear change"]


def test_intervals_widen_with_the_number_of_topics_compared():
    one = iv.share_changes(np.array([50]), 1_000, np.array([8]), 100)
    many = iv.share_changes(np.array([50] * 20), 20_000, np.array([8] * 20), 2_000)
    assert (one["change_hi"] - one["change_lo"]).iat[0] > 0
    assert iv.z_quantile(0.95, 20) > iv.z_quantile(0.95, 1)
    assert np.isclose(iv.z_quantile(0.95, 1), 1.959964, atol=1e-5)
    assert many["verdict"].eq("no clear change").all()


def test_detectable_change_shrinks_as_the_new_corpus_grows():
    small = iv.detectable_change(0.02, 18_000, 38, level=0.95, tests=60)
    large = iv.detectable_change(0.02, 18_000, 3_000, level=0.95, tests=60)
    assert small > 0.05 and 0 < large < 0.02 < small


# ------------------------------------------------------------------------------------------
# Synthetic corpora with a known answer
# ------------------------------------------------------------------------------------------


def _cloud(rng, centre: np.ndarray, n: int, spread: float = 0.35) -> np.ndarray:
    x = centre + spread * rng.standard_normal((n, len(centre))) / np.sqrt(len(centre))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _side(name: str, clouds: list[np.ndarray], topics: list[int], *, ids: list[str] | None = None, years=None) -> Side:
    emb = np.concatenate(clouds)
    topic = np.concatenate([np.full(len(c), t) for c, t in zip(clouds, topics, strict=True)])
    uniq = sorted(set(topics))
    centres = np.stack([emb[topic == t].mean(axis=0) for t in uniq])
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    n = len(emb)
    return Side(
        name=name,
        build_id=f"{name}-build",
        model_key="test",
        doc_ids=np.array(ids or [f"{name}-{i}" for i in range(n)], dtype=object),
        topics=topic.astype(np.int64),
        years=np.full(n, np.nan) if years is None else np.asarray(years, dtype=float),
        embeddings=emb,
        xy=emb[:, :2].copy(),
        topic_table=pd.DataFrame(
            {
                "topic": uniq,
                "label": [f"{name} topic {t}" for t in uniq],
                "size": [int((topic == t).sum()) for t in uniq],
                "keywords": [[f"kw{t}"] for t in uniq],
            }
        ),  # fmt: skip
        topic_embeddings=centres.astype(np.float32),
        terms=pd.DataFrame({"term": pd.Series(dtype=str), "df": pd.Series(dtype=np.int64)}),
        texts=lambda rows: [""] * len(rows),
    )


@pytest.fixture(scope="module")
def centres() -> np.ndarray:
    rng = np.random.default_rng(7)
    c = rng.standard_normal((8, 48))
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def test_conformal_p_values_are_calibrated_and_flag_a_new_cluster(centres):
    rng = np.random.default_rng(1)
    ref = np.concatenate([_cloud(rng, centres[i], 400) for i in range(4)])
    like = np.concatenate([_cloud(rng, centres[i], 250) for i in range(4)])  # same distribution as ref
    unlike = _cloud(rng, centres[5], 200)  # a region the reference never covers
    null = nov.novelty_null(ref, 5, sample=1_000, seed=0)
    _, sims = nov.neighbours(np.concatenate([like, unlike]), ref, 5)
    p = null.p_values(nov.novelty_scores(sims, 5))
    assert abs((p[: len(like)] < 0.05).mean() - 0.05) < 0.03  # calibrated: about 5% of look-alikes flagged
    assert (p[len(like) :] < 0.05).mean() > 0.95  # the new region is flagged
    assert p.min() >= 1 / (1 + len(null.scores)) and p.max() <= 1


def test_neighbours_in_blocks_equal_one_block_and_break_ties_by_row(centres):
    rng = np.random.default_rng(2)
    corpus = _cloud(rng, centres[0], 300)
    corpus[10] = corpus[3]  # an exact tie
    queries = np.concatenate([corpus[3:4], _cloud(rng, centres[0], 40)])
    a = nov.neighbours(queries, corpus, 7, chunk=5)
    b = nov.neighbours(queries, corpus, 7, chunk=1000)
    assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1])
    assert a[0][0, :2].tolist() == [3, 10]
    excluded, _ = nov.neighbours(corpus[:20], corpus, 5, exclude=np.arange(20))
    assert not (excluded == np.arange(20)[:, None]).any()


def test_topic_matching_finds_matched_merged_split_new_and_vanished(centres):
    rng = np.random.default_rng(3)
    # Reference topics: 0, 1, 2 (one region each), 3 (two sub-regions: 3 and 6), 4 (a region the new corpus lacks).
    a = _side(
        "a",
        [_cloud(rng, centres[0], 120), _cloud(rng, centres[1], 100), _cloud(rng, centres[2], 100),
         np.concatenate([_cloud(rng, centres[3], 80), _cloud(rng, centres[6], 80)]), _cloud(rng, centres[4], 90)],
        [0, 1, 2, 3, 4],
    )  # fmt: skip
    # New topics: 10 = region 0, 11 = regions 1 + 2 together, 12 = region 3, 13 = region 6, 14 = region 5 (new).
    b = _side(
        "b",
        [_cloud(rng, centres[0], 90), np.concatenate([_cloud(rng, centres[1], 70), _cloud(rng, centres[2], 70)]),
         _cloud(rng, centres[3], 60), _cloud(rng, centres[6], 60), _cloud(rng, centres[5], 70)],
        [10, 11, 12, 13, 14],
    )  # fmt: skip
    m = match_topics(a, b, CompareParams(null_sample=500))
    status = {(r.side, r.topic): (r.status, list(r.partners)) for r in m.topics.itertuples()}
    assert status[("a", 0)] == ("matched", [10]) and status[("b", 10)] == ("matched", [0])
    assert status[("a", 1)] == ("merged", [11]) and status[("a", 2)] == ("merged", [11])
    assert status[("b", 11)][0] == "split" and sorted(status[("b", 11)][1]) == [1, 2]  # "merger of" on side b
    assert status[("a", 3)][0] == "split" and sorted(status[("a", 3)][1]) == [12, 13]
    assert status[("b", 12)] == ("merged", [3])  # "split from" on side b
    assert status[("b", 14)][0] == "gone" and status[("a", 4)][0] == "gone"  # new / vanished
    texts = m.topics.set_index(["side", "topic"])["status_text"]
    assert texts[("b", 14)] == "new" and texts[("a", 4)] == "vanished" and texts[("b", 11)] == "merger of"
    assert m.method == "nearest neighbours" and m.shared == 0
    flows = m.flows.set_index(["topic_a", "topic_b"])
    assert flows.loc[(0, 10), "from_a"] > 0.9 and flows.loc[(0, 10), "centroid_sim"] > 0.9


def test_topic_matching_uses_shared_papers_when_two_builds_hold_the_same_papers(centres):
    rng = np.random.default_rng(4)
    clouds = [_cloud(rng, centres[i], 60) for i in range(3)]
    ids = [f"p{i}" for i in range(180)]
    a = _side("a", clouds, [0, 1, 2], ids=ids)
    # The same papers, the first two regions cut as one topic, the third kept.
    b = _side("b", [np.concatenate(clouds[:2]), clouds[2]], [5, 6], ids=ids)
    m = match_topics(a, b)
    assert m.method == "shared papers" and m.shared == 180
    status = {(r.side, r.topic): r.status for r in m.topics.itertuples()}
    assert status[("a", 0)] == status[("a", 1)] == "merged" and status[("a", 2)] == "matched"
    flows = m.flows.set_index(["topic_a", "topic_b"])
    assert flows.loc[(0, 5), "from_a"] == 1.0 and flows.loc[(0, 5), "from_b"] == 0.5


def test_tiny_topics_are_not_judged(centres):
    rng = np.random.default_rng(5)
    a = _side("a", [_cloud(rng, centres[0], 50), _cloud(rng, centres[1], 50)], [0, 1])
    b = _side("b", [_cloud(rng, centres[0], 40), _cloud(rng, centres[7], 2)], [0, 1])
    m = match_topics(a, b, CompareParams(null_sample=200))
    assert m.topics.set_index(["side", "topic"]).loc[("b", 1), "status_text"] == "too small to tell"


def test_different_embedding_models_are_refused(centres):
    rng = np.random.default_rng(6)
    a = _side("a", [_cloud(rng, centres[0], 20)], [0])
    b = _side("b", [_cloud(rng, centres[0], 20)], [0])
    b = Side(**{**b.__dict__, "model_key": "other"})
    with pytest.raises(CompareError, match="different models"):
        match_topics(a, b)
    with pytest.raises(CompareError, match="different models"):
        cmp.compare(b, a)


# ------------------------------------------------------------------------------------------
# Distinctive terms
# ------------------------------------------------------------------------------------------


def test_distinctive_terms_count_both_corpora_on_a_shared_vocabulary():
    new_texts = ["diffusion models sample images"] * 6 + ["kernel methods for regression"] * 2
    ref_texts = ["kernel methods for regression"] * 40 + ["graphical models inference"] * 40 + ["diffusion process"]

    def side(name, texts, vocab):
        s = _side(name, [np.eye(8, dtype=np.float32)[:1].repeat(len(texts), 0)], [0])
        counts = dist.count_terms(texts, vocab)
        terms = pd.DataFrame({"term": vocab, "df": counts})
        return Side(**{**s.__dict__, "terms": terms[terms["df"] > 0], "texts": lambda rows: [texts[i] for i in rows]})

    new = side("new", new_texts, ["diffusion", "diffusion models", "images", "kernel", "regression"])
    ref = side("ref", ref_texts, ["kernel", "regression", "graphical", "inference", "diffusion process"])
    df = dist.shared_document_frequencies(new, ref, np.arange(len(ref_texts)), np.zeros(0, dtype=np.int64))
    got = df.set_index("term")
    assert got.loc["diffusion", "df_ref"] == 1  # counted in the reference's texts: not in its vocabulary
    assert got.loc["graphical", "df_new"] == 0 and got.loc["kernel", "df_ref"] == 40
    terms = dist.distinctive_terms(
        df, len(new_texts), len(ref_texts), top=5, prior_mass=20
    )  # tiny corpora: a light prior
    assert terms[terms["side"] == "new"]["term"].iloc[0] in ("diffusion", "diffusion models", "images")
    assert set(terms[terms["side"] == "ref"]["term"]) <= {"graphical", "inference", "kernel", "regression"}
    assert (terms.loc[terms["side"] == "new", "z"] > 1.96).all() and (
        terms.loc[terms["side"] == "ref", "z"] < -1.96
    ).all()


# ------------------------------------------------------------------------------------------
# Lineage
# ------------------------------------------------------------------------------------------


def test_default_periods_give_a_growing_field_shorter_recent_periods():
    years = np.repeat(np.arange(2000, 2020), (np.arange(1, 21) ** 2) * 5)  # a fast-growing field
    periods = lin.default_periods(years, 4)
    assert periods[0][0] == 2000 and periods[-1][1] == 2019 and len(periods) == 4
    assert all(b[0] == a[1] + 1 for a, b in zip(periods, periods[1:], strict=False))
    lengths = [hi - lo + 1 for lo, hi in periods]
    counts = [((years >= lo) & (years <= hi)).sum() for lo, hi in periods]
    assert lengths[0] > lengths[-1] and counts[0] < counts[-1]  # between equal lengths and equal counts
    assert lin.default_periods(np.array([2026.0] * 38)) == [(2026, 2026)]
    assert all(c >= 50 for c in counts)
    sparse = np.repeat([2018, 2019, 2020, 2021], [40, 40, 40, 400])
    few = lin.default_periods(sparse, 4)
    assert all(((sparse >= lo) & (sparse <= hi)).sum() >= 50 for lo, hi in few)


def test_balance_keeps_both_margins():
    votes = np.array([[5.0, 1.0, 0.0], [0.0, 2.0, 2.0]])
    out = lin.balance(votes, np.array([0.5, 0.5]), np.array([0.3, 0.3, 0.4]))
    assert np.allclose(out.sum(axis=1), [0.5, 0.5]) and np.allclose(out.sum(axis=0), [0.3, 0.3, 0.4])
    assert out[0, 2] == 0 and out[1, 0] == 0  # no vote, no flow
    # Margins that only a table with a zero where a vote was can meet: approached, never exceeded.
    edge = lin.balance(votes, np.array([0.6, 0.4]), np.array([0.3, 0.3, 0.4]))
    assert np.allclose(edge.sum(axis=1), [0.6, 0.4], atol=1e-3) and np.allclose(edge.sum(axis=0), [0.3, 0.3, 0.4])


def test_lineage_traces_a_later_topic_to_the_earlier_topic_it_grew_from(centres):
    rng = np.random.default_rng(8)
    # Period 1: topics 0 (region 0) and 1 (region 1). Period 2: topic 2, near region 1 (its successor), and topic 0.
    early = [_cloud(rng, centres[0], 100), _cloud(rng, centres[1], 100)]
    child = centres[1] + 0.25 * centres[2]
    late = [_cloud(rng, centres[0], 60), _cloud(rng, child / np.linalg.norm(child), 140)]
    emb = np.concatenate(early + late)
    topics = np.r_[np.zeros(100), np.ones(100), np.zeros(60), np.full(140, 2)].astype(int)
    years = np.r_[np.full(200, 2010), np.full(200, 2020)].astype(float)
    result = lin.lineage(years, topics, emb, [(2010, 2015), (2016, 2020)])
    links = result.links.set_index(["source", "target"])
    assert links.loc[(1, 2), "from_share"] > 0.9 and links.loc[(0, 0), "from_share"] > 0.9
    assert lin.ancestry(result, 2) == {(1, 2), (0, 1)}
    changes = result.changes.set_index("topic")
    assert changes.loc[2, "verdict"] == "grew" and changes.loc[1, "verdict"] == "gone"
    into = result.links.groupby("target")["flow"].sum()  # every later topic's share comes from somewhere
    assert np.isclose(into[2], 0.7) and np.isclose(into[0], 0.3)


# ------------------------------------------------------------------------------------------
# Real builds of the fixture corpus (hashing embedder)
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def split_root(compare_artifacts, tmp_path_factory) -> Path:
    """A private copy of the compare fixture (these tests write comparisons and rebuild)."""
    root = tmp_path_factory.mktemp("compare-own") / "art"
    shutil.copytree(compare_artifacts, root, symlinks=True)
    return root


def test_compare_places_every_new_paper_and_ranks_them_by_novelty(split_root):
    new, ref = cmp.load_side(split_root, "late"), cmp.load_side(split_root, "early")
    result = cmp.compare(new, ref)
    papers = result.papers
    assert len(papers) == new.n and set(papers["doc_id"]) == set(new.doc_ids)
    assert papers["novelty"].is_monotonic_decreasing and papers["rank"].tolist() == list(range(1, new.n + 1))
    assert set(papers["ref_topic"]) <= set(ref.topic_table["topic"])
    assert all(set(n) <= set(ref.doc_ids) and len(n) == 5 for n in papers["neighbour_ids"])
    x, y = papers["x"].to_numpy(), papers["y"].to_numpy()
    assert x.min() >= ref.xy[:, 0].min() - 1e-4 and y.max() <= ref.xy[:, 1].max() + 1e-4  # inside the reference map
    shares = result.shares
    assert shares["n_after"].sum() == new.n and shares["n_before"].sum() == ref.n
    assert set(result.matches["side"]) == {"a", "b"}
    assert result.summary.reference.papers_shared == 0
    assert list(papers.columns) == list(schema.CMP_PAPER_COLUMNS)
    assert list(shares.columns) == list(schema.CMP_SHARE_COLUMNS)
    assert list(result.flows.columns) == list(schema.CMP_FLOW_COLUMNS)
    assert list(result.matches.columns) == list(schema.CMP_MATCH_COLUMNS)
    assert list(result.terms.columns) == list(schema.CMP_TERM_COLUMNS)
    json.dumps(result.to_dict())  # plain, serialisable data (for the offline export)
    # terms and keywords as each corpus's papers write them ("SAT", "MDPs"), as the app shows them
    assert new.written and ref.written
    for term in result.terms["term"]:
        assert term == (new.written.get(term.lower()) or ref.written.get(term.lower()) or term.lower())
    for side in (new, ref):
        assert all(k == shown_term(k.lower(), side.written) for ks in side.topic_table["keywords"] for k in ks)
    assert any(k != k.lower() for side in (new, ref) for ks in side.topic_table["keywords"] for k in ks)


def test_papers_the_reference_also_holds_are_not_their_own_prior_work(split_root):
    result = cmp.compare(cmp.load_side(split_root, "late"), cmp.load_side(split_root, "all"))
    s = result.summary
    assert s.reference.papers_shared == s.new.papers
    assert s.reference.papers_used == s.reference.papers - s.new.papers
    assert (result.papers["nearest_sim"] < 0.9999).all()
    late_ids = set(result.papers["doc_id"])
    assert not any(set(n) & late_ids for n in result.papers["neighbour_ids"])
    assert result.shares["n_before"].sum() == s.reference.papers_used
    assert s.matching.method.startswith("shared papers")
    with pytest.raises(CompareError, match="no earlier work"):
        cmp.compare(cmp.load_side(split_root, "all"), cmp.load_side(split_root, "late"))


def test_stored_comparisons_are_reused_only_for_the_same_two_builds(split_root):
    first, computed = cmp.compare_builds(split_root, "late", "early", force=True)
    assert computed
    again, computed = cmp.compare_builds(split_root, "late", "early")
    assert not computed and again.key == first.key
    pd.testing.assert_frame_equal(again.shares, first.shares)
    link = comparison_dir(split_root, "late", "early")
    assert link.is_symlink() and {p.name for p in link.iterdir()} == {schema.COMPARISON, *schema.COMPARE_TABLES}
    saved = (link / schema.COMPARISON).read_text(encoding="utf-8")
    assert again.summary == first.summary and saved == json.dumps(first.summary.to_dict(), indent=2)
    stale = Side(**{**cmp.load_side(split_root, "early").__dict__, "build_id": "rebuilt"})
    assert stored(split_root, cmp.load_side(split_root, "late"), stale) is None
    with pytest.raises(CompareError, match="its own reference"):
        cmp.compare_builds(split_root, "late", "late")


def test_cli_compare_and_build_with_reference(split_root, capsys, monkeypatch):
    import functools

    from pipeline.build import build as build_module
    from tests.conftest import TEST_ENCODER

    assert cli.main(["--artifacts", str(split_root), "compare", "late", "early", "--force"]) == 0
    out = capsys.readouterr().out
    assert "Compared 'late'" in out and "far from all earlier work" in out and "topics that grew" in out
    assert cli.main(["--artifacts", str(split_root), "compare", "late", "nope"]) == 1
    assert "no corpus named 'nope'" in capsys.readouterr().err
    monkeypatch.setattr("pipeline.cli.cli_build.build", functools.partial(build_module.build, encoder=TEST_ENCODER))
    late = split_root / "late.jsonl"
    code = cli.main(["--artifacts", str(split_root), "build", str(late), "--name", "late", "--reference", "early",
                     "--quiet"])  # fmt: skip
    assert code == 0
    assert "Up to date: 'late'" in capsys.readouterr().out  # the stored comparison still matches both builds
    assert cli.main(["--artifacts", str(split_root), "build", str(late), "--name", "late", "--reference", "nope"]) == 1
    assert "no corpus named 'nope'" in capsys.readouterr().err  # refused before building
    assert cli.main(["--artifacts", str(split_root), "build", str(late), "--name", "late", "--reference", "late"]) == 1
    assert "compared with itself" in capsys.readouterr().err


def test_vote_topics_takes_the_majority_and_breaks_ties_by_similarity_then_id():
    from pipeline.model.place import vote_topics

    topics = np.array([[3, 3, 5, 5, 7], [5, 5, 3, 3, 7], [2, 2, 2, 9, 9], [4, 4, 4, 4, 4]])
    sims = np.array([[0.9, 0.8, 0.7, 0.6, 0.5], [0.5, 0.5, 0.5, 0.5, 0.9], [0.1] * 5, [0.3] * 5])
    got, share = vote_topics(topics, sims, np.array([2, 3, 4, 5, 7, 9]))
    assert got.tolist() == [3, 3, 2, 4]  # 3 has more similarity than 5; equal sums: the smaller id
    assert np.allclose(share, [0.4, 0.4, 0.6, 1.0])
    empty, _ = vote_topics(np.zeros((2, 0), dtype=int), np.zeros((2, 0)), np.array([1]))
    assert empty.tolist() == [-1, -1]


def test_a_word_every_corpus_uses_alike_is_not_called_distinctive():
    # "data" is in 35% of papers on both sides, but the new corpus's abstracts use more distinct
    # terms, so its share of all term uses is lower: log-odds alone would call it "used less".
    df = pd.DataFrame({"term": ["data", "llm", "filler"], "df_new": [35, 30, 5_000], "df_ref": [3_500, 50, 100_000]})
    terms = dist.distinctive_terms(df, 100, 10_000, top=5)
    assert "data" not in set(terms["term"]) and "llm" in set(terms.loc[terms["side"] == "new", "term"])
    assert dist.min_support(38) == 3 and dist.min_support(18_661) == 93


def test_a_topic_is_not_called_vanished_when_the_other_corpus_is_too_small_to_show_it(centres):
    rng = np.random.default_rng(9)
    a = _side("a", [_cloud(rng, centres[i], 200) for i in range(4)] + [_cloud(rng, centres[4], 30)], [0, 1, 2, 3, 4])
    big = _side("b", [_cloud(rng, centres[i], 100) for i in range(4)], [0, 1, 2, 3])
    small = _side("s", [_cloud(rng, centres[i], 25) for i in range(2)], [0, 1])
    status = match_topics(a, big, CompareParams(null_sample=300)).topics.set_index(["side", "topic"])["status"]
    assert status[("a", 4)] == "gone"  # 400 papers would show a 3.6% topic: it vanished
    status = match_topics(a, small, CompareParams(null_sample=300)).topics.set_index(["side", "topic"])
    assert status.loc[("a", 4), "status"] == "unseen"  # 50 papers would miss it 16% of the time
    assert status.loc[("a", 4), "status_text"] == "not seen (too few papers to tell)"
