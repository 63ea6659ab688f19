"""The build runner on the fixture corpus with the hashing embedder: artifacts, caching,
incremental updates, determinism, atomicity and the CLI."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from explorer.state import corpus_files
from pipeline.analysis import bm25, bm25_update
from pipeline.build import writer
from pipeline.build.build import build
from pipeline.cli import cli
from pipeline.core import artifacts, schema
from pipeline.formats.ids import short_ids
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config


def _load(root, name):
    folder = artifacts.corpus_path(root, name)
    return folder, artifacts.read_manifest(folder)


def test_artifacts_match_the_schema(small_artifacts):
    folder, manifest = _load(small_artifacts, "small")
    assert sorted(p.name for p in folder.iterdir()) == sorted(schema.FILES)
    for table, columns in schema.TABLES.items():
        assert list(pd.read_parquet(folder / table).columns) == list(columns), table
    papers = pd.read_parquet(folder / schema.PAPERS)
    topics = pd.read_parquet(folder / schema.TOPICS)
    emb = np.load(folder / schema.EMBEDDINGS, allow_pickle=False)
    dist = np.load(folder / schema.TOPIC_DISTRIBUTION, allow_pickle=False)
    sim = np.load(folder / schema.TOPIC_SIMILARITY, allow_pickle=False)
    assert papers["doc_id"].is_unique
    assert papers["row"].tolist() == list(range(len(papers)))
    assert emb.shape == (len(papers), 384) and emb.dtype == np.float32
    assert dist.shape == (len(papers), len(topics))
    np.testing.assert_allclose(dist.sum(axis=1), 1, rtol=1e-4)
    assert sim.shape == (len(topics), len(topics))
    assert set(papers["topic"]) == set(topics["topic"])  # outliers reassigned by default
    assert topics["size"].sum() == len(papers)
    assert topics["label"].is_unique
    assert (topics["size"] == papers["topic"].value_counts().reindex(topics["topic"]).to_numpy()).all()
    assert papers["x"].notna().all() and papers["y"].notna().all()
    # The manifest says what was built, how, and what it cost.
    for key in ("schema_version", "inputs", "params", "counts", "packages", "stages", "fingerprint", "created_at"):
        assert key in manifest.to_dict()
    assert manifest.counts.papers == len(papers)
    assert manifest.counts.topics == len(topics)
    assert manifest.inputs[0]["sha256"] and manifest.inputs[0]["rows_read"] == 137
    assert {s.name for s in manifest.stages} >= {"ingest", "embed", "reduce", "cluster", "represent", "write"}
    assert all(s.seconds >= 0 and s.peak_rss_mb > 0 for s in manifest.stages)
    assert manifest.packages["bertopic"]
    # Every package whose version changes the topics: the graph clustering's and the kNN graph's too.
    assert {"umap-learn", "hdbscan", "igraph", "pynndescent"} <= set(manifest.packages)
    # Trends exist because the fixture spans 2020-2024.
    years = pd.read_parquet(folder / schema.YEARS)
    assert years["year"].tolist() == [2020, 2021, 2022, 2023, 2024]
    assert years["n_papers"].sum() == len(papers)


def test_terms_are_stored_and_shown_as_the_papers_write_them(small_artifacts):
    from pipeline.analysis.topic_files import read_topic_tables
    from pipeline.model.label_case import corpus_forms, written_label, written_term

    folder, _ = _load(small_artifacts, "small")
    papers = pd.read_parquet(folder / schema.PAPERS)
    terms = pd.read_parquet(folder / schema.TERMS)
    raw = pd.read_parquet(folder / schema.TOPICS)
    # the build reads the abstracts without their titles, and only the case changes
    forms = corpus_forms(
        papers["model_text"].tolist(),
        [None if d else t for t, d in zip(papers["title"], papers["title_derived"], strict=True)],
    )
    assert terms["written"].tolist() == [written_term(t, forms) for t in terms["term"]]
    assert (terms["written"].str.lower() == terms["term"]).all()
    written = dict(zip(terms["term"], terms["written"], strict=True))
    cased = {t for t, w in written.items() if t != w}
    assert {"sat", "mdps", "nash equilibrium"} <= cased  # the IJCAI papers write "SAT", "MDPs", "Nash equilibrium"
    # the stored keywords are the vocabulary's (lower case); every reader of the build shows them written
    tables = read_topic_tables(folder)
    for column in ("keywords", "keybert", "mmr"):
        for stored, shown in zip(raw[column], tables.topics[column], strict=True):
            assert all(str(t) in written for t in stored)
            assert list(shown) == [written[str(t)] for t in stored]
    assert any(set(k) & cased for k in raw["keywords"])  # the fixture shows some
    assert tables.topic_terms["term"].tolist() == [
        written[t] for t in pd.read_parquet(folder / schema.TOPIC_TERMS)["term"]
    ]
    # the labels' words too, with the same forms
    assert all(label == written_label(label.lower(), forms) for label in raw["label"])


def test_keywords_are_the_best_c_tf_idf_terms_one_form_of_each_and_none_a_part_of_another(small_artifacts):
    from pipeline.model.keywords import part_of_another
    from pipeline.model.label_words import term_key

    folder, _ = _load(small_artifacts, "small")
    topics = pd.read_parquet(folder / schema.TOPICS)
    terms = pd.read_parquet(folder / schema.TOPIC_TERMS)
    changed = 0
    for _, row in topics.iterrows():
        words, weights = list(row["keyword_terms"]), list(row["keyword_weights"])
        shown = list(row["keywords"])  # each term as the phrase its uses sit in: it holds the term's words
        assert len(shown) == len(words) and all(
            _holds(term_key(k), term_key(w)) for k, w in zip(shown, words, strict=True)
        )
        assert len({term_key(k) for k in shown}) == len(shown), shown  # two terms one phrase: one keyword
        assert len({term_key(w) for w in words}) == len(words), words  # no "image" beside "images"
        assert weights == sorted(weights, reverse=True) and len(words) == len(weights) <= 10
        ranking = terms[terms["topic"] == row["topic"]].sort_values("ctfidf", ascending=False, kind="stable")
        ranked, count = ranking["term"].tolist(), dict(zip(ranking["term"], ranking["count"], strict=True)).get
        assert not any(part_of_another(w, words, count) for w in words), words  # no "series" beside "time series"
        # they are the topic's c-TF-IDF ranking in order, less what those two rules leave out
        at = [ranked.index(w) for w in words]
        assert at == sorted(at)
        for i, term in enumerate(ranked[: at[-1]]):
            if term not in words:
                second = any(term_key(e) == term_key(term) for e in ranked[:i])
                one_phrase = any(_holds(term_key(k), term_key(term)) for k in shown)  # written as a keyword is
                assert second or part_of_another(term, words, count) or one_phrase, (term, words)
                changed += 1
    assert changed  # the fixture's rankings hold a second form or a part somewhere


def _holds(longer: tuple, part: tuple) -> bool:
    """``part`` is a run of ``longer``'s words, in order."""
    return any(longer[i : i + len(part)] == part for i in range(len(longer) - len(part) + 1))


def test_bertopic_model_is_saved_with_safetensors_and_loads(small_artifacts):
    from pipeline.embed.encoders import HashingEncoder
    from pipeline.model.represent import load_bertopic

    folder, _ = _load(small_artifacts, "small")
    files = {p.name for p in (folder / schema.BERTOPIC_DIR).iterdir()}
    assert "topic_embeddings.safetensors" in files and not any(f.endswith((".pkl", ".pickle", ".bin")) for f in files)
    assert "embedding_model" not in json.loads((folder / schema.BERTOPIC_DIR / "config.json").read_text())
    model = load_bertopic(folder / schema.BERTOPIC_DIR, HashingEncoder().encode)
    topics = pd.read_parquet(folder / schema.TOPICS)
    assert sorted(set(model.get_topics()) - {-1}) == sorted(topics["topic"])
    # The loaded model predicts with the corpus's own embedder: a paper lands in its own topic.
    papers = pd.read_parquet(folder / schema.PAPERS)
    core = papers[~papers["was_outlier"]].head(20)
    predicted, _ = model.transform(core["model_text"].tolist())
    assert np.mean(np.asarray(predicted) == core["topic"].to_numpy()) >= 0.8


def test_second_build_is_up_to_date_and_force_refits_identically(small_artifacts, tmp_path):
    root = tmp_path / "a"
    shutil.copytree(small_artifacts, root, symlinks=True)
    again = build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER)
    assert again.mode == "up-to-date"
    before = pd.read_parquet(artifacts.corpus_path(root, "small") / schema.PAPERS)
    shutil.rmtree(artifacts.cache_dir(root) / "stages")  # UMAP must run again, not come from the cache
    forced = build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER, force=True)
    assert forced.mode == "full" and forced.embedded == 0  # every vector came from the cache
    after = pd.read_parquet(artifacts.corpus_path(root, "small") / schema.PAPERS)
    assert before["topic"].tolist() == after["topic"].tolist()  # deterministic
    np.testing.assert_allclose(before[["x", "y"]].to_numpy(), after[["x", "y"]].to_numpy(), atol=1e-5)


def test_changed_settings_trigger_a_full_build(small_artifacts, tmp_path):
    root = tmp_path / "b"
    shutil.copytree(small_artifacts, root, symlinks=True)
    summary = build([SMALL_CORPUS], "small", root, fast_config(min_cluster_size=4), encoder=TEST_ENCODER)
    assert summary.mode == "full"
    assert _load(root, "small")[1].params["cluster"]["min_cluster_size"] == 4


def _first_and_added(tmp_path):
    """The small corpus as a first file of 110 papers and a file of the papers added later, and its lines."""
    lines = SMALL_CORPUS.read_text(encoding="utf-8").splitlines(keepends=True)
    first, extra = tmp_path / "first.jsonl", tmp_path / "extra.jsonl"
    first.write_text("".join(lines[:110]), encoding="utf-8")
    extra.write_text("".join(lines[110:]), encoding="utf-8")
    return first, extra, lines


def test_added_papers_are_placed_into_existing_topics(tmp_path, monkeypatch):
    first, extra, lines = _first_and_added(tmp_path)
    root = tmp_path / "art"
    build([first], "c", root, fast_config(), encoder=TEST_ENCODER)
    old = pd.read_parquet(artifacts.corpus_path(root, "c") / schema.PAPERS).set_index("doc_id")
    old_topics = pd.read_parquet(artifacts.corpus_path(root, "c") / schema.TOPICS)
    old_terms = pd.read_parquet(artifacts.corpus_path(root, "c") / schema.TERMS)

    updates = []
    real_update = bm25_update.update_index
    monkeypatch.setattr(bm25_update, "update_index", lambda *a: updates.append(a[1]) or real_update(*a))
    summary = build([first, extra], "c", root, fast_config(), encoder=TEST_ENCODER)
    assert summary.mode == "incremental" and summary.placed == len(lines) - 110
    assert summary.embedded == len(lines) - 110  # only the new papers were embedded
    folder, manifest = _load(root, "c")
    new = pd.read_parquet(folder / schema.PAPERS).set_index("doc_id")
    topics = pd.read_parquet(folder / schema.TOPICS)
    assert len(new) == len(lines)
    assert new.loc[old.index, "topic"].tolist() == old["topic"].tolist()  # nobody moved
    assert new.loc[old.index, "x"].tolist() == old["x"].tolist()
    assert new["placed"].sum() == summary.placed and set(new["topic"]) <= set(old_topics["topic"])
    assert topics["size"].sum() == len(new) and topics["label"].tolist() == old_topics["label"].tolist()
    assert manifest.mode == "incremental" and manifest.counts.placed == summary.placed
    assert manifest.counts.fitted_papers == 110
    # The vocabulary is kept, and so are the forms its papers gave its terms ("SAT", "MDPs").
    terms = pd.read_parquet(folder / schema.TERMS)
    written = dict(zip(old_terms["term"], old_terms["written"], strict=True))
    assert dict(zip(terms["term"], terms["written"], strict=True)) == written
    assert any(t != w for t, w in written.items())
    np.testing.assert_allclose(np.load(folder / schema.TOPIC_DISTRIBUTION).sum(axis=1), 1, rtol=1e-4)
    # The app's mapped copy of the papers holds every paper too, as papers.parquet has them.
    mapped = corpus_files.read_papers(folder, "c")
    stored_papers = pd.read_parquet(folder / schema.PAPERS).sort_values("row").reset_index(drop=True)
    assert len(mapped) == len(lines) and mapped["doc_id"].tolist() == stored_papers["doc_id"].tolist()
    assert mapped["abstract"].tolist() == stored_papers["abstract"].tolist()
    assert mapped["topic"].tolist() == stored_papers["topic"].tolist()
    # Every paper's short id, the new ones' too, and the old ones' unchanged (links keep working).
    want = short_ids(stored_papers["doc_id"]).tolist()
    assert mapped["short_id"].tolist() == stored_papers["short_id"].tolist() == want
    assert new.loc[old.index, "short_id"].tolist() == old["short_id"].tolist()
    # The add updated the previous keyword index with the new papers only, and wrote the index of
    # every paper: the same, array for array, as indexing them all now.
    assert {s.name for s in manifest.stages} >= {"place", "write", "keyword_index"}
    assert len(updates) == 1 and (updates[0] >= 0).sum() == 110 and (updates[0] < 0).sum() == summary.placed
    stored = bm25_update.previous_counts(folder / schema.KEYWORD_INDEX, len(new))
    shown = pd.read_parquet(folder / schema.PAPERS).sort_values("row")
    fresh = bm25.build_index(bm25.index_texts(shown["title"], shown["abstract"]))
    assert stored is not None and stored.scores["num_docs"] == len(lines)
    assert bm25.indexes_shown_text(folder / schema.KEYWORD_INDEX)
    for key in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(stored.scores[key], fresh.scores[key])
    assert stored.vocab_dict == fresh.vocab_dict
    for key in ("pairs", "counts", "doc_len"):  # the new papers' adjacent words and counts too
        np.testing.assert_array_equal(getattr(stored, key), getattr(fresh, key))
    new_text = shown["abstract"].iat[len(lines) - 1]
    for query in (" ".join(new_text.split()[3:7]), "planning agents", "graph neural networks"):
        tokens = bm25.tokenize([query])[0]
        np.testing.assert_array_equal(
            stored.get_scores(stored.get_tokens_ids(tokens)), fresh.get_scores(fresh.get_tokens_ids(tokens))
        )

    refit = build([first, extra], "c", root, fast_config(), encoder=TEST_ENCODER, refit=True)
    assert refit.mode == "full" and refit.placed == 0 and refit.embedded == 0


def test_a_failed_build_leaves_the_previous_one_intact(small_artifacts, tmp_path, monkeypatch):
    root = tmp_path / "c"
    shutil.copytree(small_artifacts, root, symlinks=True)
    before = artifacts.corpus_path(root, "small")
    real_write = writer.write_tables

    def write_then_fail(folder, *args, **kwargs):
        real_write(folder, *args, **kwargs)
        (folder / schema.PAPERS).write_bytes(b"half written")
        raise OSError("disk full")

    monkeypatch.setattr(writer, "write_tables", write_then_fail)
    with pytest.raises(OSError, match="disk full"):
        build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER, force=True)
    assert artifacts.corpus_path(root, "small") == before
    artifacts.read_manifest(before)
    assert len(pd.read_parquet(before / schema.PAPERS)) == 137
    assert [p for p in (root / artifacts.BUILDS / "small").iterdir()] == [before]


def test_a_second_concurrent_build_is_refused(tmp_path):
    with artifacts.build_lock(tmp_path, "c"), pytest.raises(artifacts.ArtifactError, match="another build"):
        build([SMALL_CORPUS], "c", tmp_path, fast_config(), encoder=TEST_ENCODER)


def test_cli_reports_bad_input_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / "papers.csv"
    bad.write_text("title,year\nA paper,2020\n", encoding="utf-8")
    code = cli.main(["--artifacts", str(tmp_path / "art"), "build", str(bad), "--name", "x"])
    err = capsys.readouterr().err
    assert code == 1
    assert "papers.csv" in err and "abstract" in err and "Traceback" not in err
    assert not (tmp_path / "art" / "x").exists()


def test_cli_list_and_info(small_artifacts, capsys):
    assert cli.main(["--artifacts", str(small_artifacts), "list"]) == 0
    out = capsys.readouterr().out
    assert "small" in out and "137" in out and "2020-2024" in out
    assert cli.main(["info", "small", "--artifacts", str(small_artifacts)]) == 0
    out = capsys.readouterr().out
    assert "small_corpus.jsonl" in out and "stages:" in out
    assert cli.main(["info", "nope", "--artifacts", str(small_artifacts)]) == 1
    assert "no corpus named 'nope'" in capsys.readouterr().err
    assert cli.main(["list", "--json", "--artifacts", str(small_artifacts)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["counts"]["papers"] == 137


def test_build_summary_names_skipped_rows(tmp_path):
    src = tmp_path / "papers.jsonl"
    lines = SMALL_CORPUS.read_text(encoding="utf-8").splitlines()[:40]
    lines += [lines[0], json.dumps({"title": "Empty", "abstract": ""}), "{broken json"]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = build([src], "s", tmp_path / "art", fast_config(), encoder=TEST_ENCODER)
    assert summary.papers == 40 and summary.skipped == 3
    assert summary.skipped_by_reason == {"duplicate": 1, "empty_abstract": 1, "bad_record": 1}
    text = "\n".join(summary.lines())
    assert "3 skipped" in text and "duplicate: 1" in text and "time per stage" in text
    report = pd.read_parquet(artifacts.corpus_path(tmp_path / "art", "s") / schema.INGEST_REPORT)
    assert set(report["reason"]) >= {"duplicate", "empty_abstract", "bad_record"}


def test_an_add_to_a_build_whose_index_kept_no_counts_indexes_every_paper(tmp_path, monkeypatch):
    """A build made before the index kept its counts (version 3) still takes papers: its index is
    made again from every paper, the same index."""
    first, extra, lines = _first_and_added(tmp_path)
    root = tmp_path / "art"
    build([first], "c", root, fast_config(), encoder=TEST_ENCODER)
    old_index = artifacts.corpus_path(root, "c") / schema.KEYWORD_INDEX
    (old_index / bm25.COUNTS_FILE).unlink()
    updates = []
    monkeypatch.setattr(bm25_update, "update_index", lambda *a: updates.append(a))
    summary = build([first, extra], "c", root, fast_config(), encoder=TEST_ENCODER)
    folder, _ = _load(root, "c")
    assert summary.mode == "incremental" and not updates
    stored = bm25_update.previous_counts(folder / schema.KEYWORD_INDEX, len(lines))
    shown = pd.read_parquet(folder / schema.PAPERS).sort_values("row")
    fresh = bm25.build_index(bm25.index_texts(shown["title"], shown["abstract"]))
    np.testing.assert_array_equal(stored.scores["data"], fresh.scores["data"])
    np.testing.assert_array_equal(stored.counts, fresh.counts)


def test_an_add_to_a_build_made_before_keywords_were_phrases_keeps_its_keywords_as_their_terms(tmp_path):
    """A build whose topics.parquet has no ``keyword_terms`` (before REPRESENT_VERSION 30: its
    keywords were the vocabulary's terms) still takes papers, and the new build says so."""
    first, extra, _ = _first_and_added(tmp_path)
    root = tmp_path / "art"
    build([first], "c", root, fast_config(), encoder=TEST_ENCODER)
    path = artifacts.corpus_path(root, "c") / schema.TOPICS
    old = pd.read_parquet(path)
    old["keywords"] = old["keyword_terms"]  # as such a build wrote them
    old.drop(columns="keyword_terms").to_parquet(path, index=False)
    summary = build([first, extra], "c", root, fast_config(), encoder=TEST_ENCODER)
    assert summary.mode == "incremental"
    topics = pd.read_parquet(artifacts.corpus_path(root, "c") / schema.TOPICS)
    assert [list(k) for k in topics["keyword_terms"]] == [list(k) for k in old["keyword_terms"]]
    assert [list(k) for k in topics["keywords"]] == [list(k) for k in old["keyword_terms"]]
