"""The keyword index is the same on every build: bm25s's word numbering no longer follows a set's
order (which changes with Python's per-process string hashing)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.analysis import bm25, bm25_pairs

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [
    "Diffusion models for protein structure generation.",
    "Graph neural networks learn molecular properties; graphs of molecules.",
    "",
    "Reinforcement learning with sparse rewards and diffusion policies.",
]

SAVE = """
import sys
from pipeline.analysis import bm25, bm25_pairs
texts = {texts!r}
bm25.save_index(bm25.build_index(texts), __import__("pathlib").Path(sys.argv[1]), len(texts))
"""


def _save_in_process(folder: Path, hash_seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    subprocess.run(
        [sys.executable, "-c", SAVE.format(texts=TEXTS), str(folder)], cwd=ROOT, env=env, check=True, timeout=120
    )


def test_the_index_files_do_not_depend_on_string_hashing(tmp_path):
    _save_in_process(tmp_path / "a", "1")
    _save_in_process(tmp_path / "b", "2")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    for rel in files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


def test_sorted_numbering_scores_as_bm25s_own_index_does():
    import bm25s

    ours = bm25.build_index(TEXTS)
    theirs = bm25s.BM25()
    theirs.index(bm25.tokenize(TEXTS), show_progress=False)
    assert sorted(ours.vocab_dict) == sorted(theirs.vocab_dict)
    assert list(ours.vocab_dict) == sorted(w for w in ours.vocab_dict if w) + [""] or list(ours.vocab_dict) == sorted(
        ours.vocab_dict
    )
    for query in ("diffusion", "graph molecules", "rewards diffusion policies"):
        tokens = bm25.tokenize([query])[0]
        a = ours.get_scores(ours.get_tokens_ids(tokens))
        b = theirs.get_scores(theirs.get_tokens_ids(tokens))
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert json.dumps(sorted(ours.vocab_dict.items(), key=lambda kv: kv[1]))  # numbered 0..n-1
    assert sorted(ours.vocab_dict.values()) == list(range(len(ours.vocab_dict)))


def bm25s_index(texts):
    """bm25s's own index of ``bm25.tokenize(texts)``, words numbered in sorted order: what
    ``bm25.build_index`` made paper by paper before it counted tokens in chunks."""
    import bm25s

    docs = bm25.tokenize([t if isinstance(t, str) else "" for t in texts])
    vocab = {word: i for i, word in enumerate(sorted({word for doc in docs for word in doc}))}
    index = bm25s.BM25()
    index.index(([[vocab[word] for word in doc] for doc in docs], vocab), show_progress=False)
    index.pairs = reference_pairs(docs)
    # The counts behind the scores, in the matrix's order (by word, then paper), counted plainly.
    entries = sorted((vocab[w], d, c) for d, doc in enumerate(docs) for w, c in Counter(doc).items())
    counts = [c for _, _, c in entries]
    index.counts = np.array(counts, dtype=np.min_scalar_type(max(counts, default=0)))
    index.doc_len = np.array([len(doc) for doc in docs], dtype=np.int64)
    return index


def reference_pairs(docs: list[list[str]]) -> np.ndarray:
    """Each token list's signature of adjacent words, one pair at a time (``bm25_pairs``' reference)."""
    out = np.zeros((len(docs), bm25_pairs.BITS), dtype=bool)
    for i, tokens in enumerate(docs):
        for a, b in zip(tokens[:-1], tokens[1:], strict=True):
            out[i, bm25_pairs.pair_bits(bm25_pairs.word_hashes([a]), bm25_pairs.word_hashes([b]))[0]] = True
    return np.packbits(out, axis=1, bitorder="little")


def assert_same_index(ours, theirs, tmp_path):
    import bm25s

    assert type(ours) is bm25s.BM25
    assert list(ours.vocab_dict.items()) == list(theirs.vocab_dict.items())
    assert ours.scores["num_docs"] == theirs.scores["num_docs"]
    for name in ("data", "indices", "indptr"):
        a, b = ours.scores[name], theirs.scores[name]
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert ours.pairs.dtype == np.uint8 and np.array_equal(ours.pairs, theirs.pairs)
    assert ours.counts.dtype == theirs.counts.dtype and np.array_equal(ours.counts, theirs.counts)
    assert np.array_equal(ours.doc_len, theirs.doc_len)
    bm25.save_index(ours, tmp_path / "ours", ours.scores["num_docs"])
    bm25.save_index(theirs, tmp_path / "theirs", theirs.scores["num_docs"])
    files = sorted(p.name for p in (tmp_path / "ours").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "theirs").iterdir())
    for name in files:
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "theirs" / name).read_bytes(), name


def labelled_texts() -> list[str]:
    with gzip.open(ROOT / "tests" / "fixtures" / "ijcai_labelled.jsonl.gz", "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return bm25.index_texts([r.get("title") for r in rows], [r.get("abstract") for r in rows])


WORDS = [
    "The",
    "and",
    "of",
    "graph",
    "Graphs",
    "İnput",
    "claſſ",
    "\u212aernel",
    "x",
    "3D",
    "über",
    "naïve",
    "_a",
    "a_b",
]
# any text; ASCII text (found by a byte table, ``bm25_tokens``: every byte below 128); the words above
TEXT = st.one_of(
    st.text(),
    st.text(st.characters(max_codepoint=127)),
    st.lists(st.sampled_from(WORDS + [" ", "-", ".", "\n", "$"])).map("".join),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXT, max_size=6))
def test_counted_tokens_are_bm25s_tokens(texts):
    words, doc_len, row, col, tf, pairs = bm25.count_tokens(texts)
    expected = bm25.tokenize(texts) if texts else []
    assert doc_len.tolist() == [len(tokens) for tokens in expected]
    assert pairs.shape == (len(texts), bm25_pairs.BYTES)
    for i, tokens in enumerate(expected):
        mine = row == i
        assert dict(zip((words[c] for c in col[mine]), tf[mine].tolist(), strict=True)) == Counter(tokens)
        # the signature's bits are those of the text's adjacent tokens, hashed one pair at a time
        np.testing.assert_array_equal(pairs[i], reference_pairs([tokens])[0])
    assert words == list(dict.fromkeys(token for tokens in expected for token in tokens))


@pytest.mark.parametrize("chunk", [bm25.INDEX_CHUNK, 7])
def test_the_index_is_bm25s_own_array_for_array(chunk, monkeypatch, tmp_path):
    """Counted in chunks and scored on arrays, the index's every array and file is bm25s's."""
    monkeypatch.setattr(bm25, "INDEX_CHUNK", chunk)
    texts = TEXTS + bm25.index_texts(ODD_TITLES, ODD_ABSTRACTS) + [None, "the and of", "x"] + labelled_texts()
    assert_same_index(bm25.build_index(texts), bm25s_index(texts), tmp_path)


def test_the_index_counted_in_workers_is_the_same(monkeypatch, tmp_path):
    from pipeline.core import background

    started = []

    def pool(workers=1):
        started.append(workers)
        return original(workers)

    original = background.worker_pool
    monkeypatch.setattr(background, "usable_cpus", lambda: 2)
    monkeypatch.setattr(background, "worker_pool", pool)
    monkeypatch.setattr(bm25, "PARALLEL_MIN_TEXTS", 1)
    monkeypatch.setattr(bm25, "INDEX_CHUNK", 300)
    texts = labelled_texts()
    assert_same_index(bm25.build_index(texts), bm25s_index(texts), tmp_path)
    assert started == [2]


def test_the_shown_texts_made_a_chunk_at_a_time_give_the_same_index(monkeypatch, tmp_path):
    """The build's stage makes each chunk's texts as it sends the chunk (``bm25.ShownTexts``):
    the same texts, by position even where the frame's index is not 0..n-1, and the same index,
    in this process and in workers."""
    import pandas as pd

    from pipeline.core import background

    titles, abstracts = ODD_TITLES * 40, ODD_ABSTRACTS * 40
    index = range(5000, 5000 - len(titles), -1)  # labels that are not positions
    frame = pd.DataFrame({"title": titles, "abstract": abstracts}, index=index).astype("string[pyarrow]")
    shown = bm25.ShownTexts(frame["title"], frame["abstract"])
    whole = bm25.index_texts(titles, abstracts)
    assert len(shown) == len(whole) and shown[5:17] == whole[5:17] and shown[-1] == whole[-1] and shown[3] == whole[3]
    assert list(shown[0 : len(shown)]) == whole
    monkeypatch.setattr(background, "usable_cpus", lambda: 2)
    monkeypatch.setattr(bm25, "INDEX_CHUNK", 37)
    for parallel_from in (10**9, 1):  # in this process, then in workers
        monkeypatch.setattr(bm25, "PARALLEL_MIN_TEXTS", parallel_from)
        assert_same_index(bm25.build_index(shown), bm25s_index(whole), tmp_path / str(parallel_from))
    with pytest.raises(ValueError, match="titles for"):
        bm25.ShownTexts(titles, abstracts[:-1])


# ------------------------------------------------------------------------------------------
# The index narrows the exact-phrase check (bm25.phrase_candidates)
# ------------------------------------------------------------------------------------------

ODD_TITLES = ["Subgraph neural networks", "A \u212aernel method", "Claſſification of İnput", "3D scenes", None, "x"]
ODD_ABSTRACTS = [
    "We study subgraph neural networks for molecules; graph neural nets too.",
    "KERNEL methods for reinforcement\tlearning exploration; pre-training and $\\mathcal{O}(n)$ bounds.",
    "ınput classification with diffusion models for image generation, in this paper.",
    "Reinforcement learning explorations in 3d scenes: state-of-the-art neural radiance fields.",
    "Diffusion\u00a0Models FOR image-generation and image generation.",
    "",
]
PHRASES = [
    "graph neural", "subgraph neural networks", "neural network", "kernel methods", "a kernel",
    "classification of input", "input classification", "diffusion models for image generation",
    "models for image", "reinforcement learning exploration", "learning explor", "3d scenes", "3D SCENES",
    "state-of-the-art neural", "of the", "in this paper", "for image", "pre-training and", "O}(n)$ bounds",
    "networks for", "zzz qqq", "image generation", "ion models", "state-of-the-art", "pre-training", "of-the-art",
]  # fmt: skip


def _tiny_corpus(titles, abstracts):
    from types import SimpleNamespace

    import pandas as pd

    papers = pd.DataFrame({"title": titles, "abstract": abstracts}).astype("string[pyarrow]")
    return SimpleNamespace(n_papers=len(titles), papers=papers)


def test_the_index_keeps_every_paper_that_holds_a_phrase(monkeypatch):
    """Glued words, a Kelvin sign, a long s, dotted and dotless i, tabs and no-break spaces, a
    hyphen, LaTeX: every paper the exact-phrase check finds is among the index's candidates, and the
    candidates are fewer than the papers for most phrases (or the narrowing would be pointless)."""
    from explorer.services import phrase_scan, search

    monkeypatch.setattr(bm25_pairs, "MIN_ROWS", 0)  # the signatures read for any number of papers
    corpus = _tiny_corpus(ODD_TITLES, ODD_ABSTRACTS)
    index = search.build_bm25(corpus)
    narrowed = 0
    for query in PHRASES:
        holds = phrase_scan.phrase_mask(corpus, query)
        candidates = index.phrase_candidates(query)
        if candidates is None:
            continue
        assert not (holds & ~candidates).any(), (query, np.flatnonzero(holds & ~candidates))
        narrowed += int(candidates.sum() < len(candidates))
    assert narrowed >= len(PHRASES) // 2
    assert not index.phrase_candidates("zzz qqq").any()  # a word no paper has: none can hold it
    assert index.phrase_candidates("of the") is None  # nothing to narrow by: stop words only
    assert index.phrase_candidates("neural") is None  # one word is not a phrase
    assert index.phrase_candidates("pre-training") is not None  # a hyphenated one is, and narrows


def test_papers_holding_a_phrase_s_words_apart_are_left_out(monkeypatch):
    """The signatures of adjacent words leave out the papers that hold every word of a phrase but not
    next to each other (stop words between them count as nothing, as the tokeniser drops them)."""
    from explorer.services import phrase_scan, search

    abstracts = [
        "Exploration in reinforcement learning: a study.",  # the words, apart
        "Learning exploration of reinforcement signals.",  # the words, in another order
        "We use deep-Reinforcement  learning\nexploration bonuses.",  # the phrase, across a line
        "Reinforcement learning for exploration.",  # a stop word between: not the phrase, same tokens
        "Diffusion models for image generation.",
    ]
    corpus = _tiny_corpus([None] * len(abstracts), abstracts)
    index = search.build_bm25(corpus)
    # with no more papers holding the words than the check's next round reads, the signatures are not read
    assert index.phrase_candidates("reinforcement learning exploration").tolist() == [1, 1, 1, 1, 0]
    monkeypatch.setattr(bm25_pairs, "MIN_ROWS", 0)
    assert index.bm25.pairs.shape == (len(abstracts), bm25_pairs.BYTES)
    # "for" is no token: the fourth paper makes the phrase's pairs too, and the check reads and rejects it
    assert index.phrase_candidates("reinforcement learning exploration").tolist() == [0, 0, 1, 1, 0]
    assert phrase_scan.phrase_mask(corpus, "reinforcement learning exploration").tolist() == [0, 0, 1, 0, 0]
    assert index.phrase_candidates("reinforcement learning for exploration").tolist() == [0, 0, 1, 1, 0]
    assert index.phrase_candidates("forcement learning exploration").tolist() == [0, 0, 1, 1, 0]  # a word's end
    assert not index.phrase_candidates("learning reinforcement exploration").any()
    index.bm25.pairs = None  # an index without signatures (version 2) narrows by the words alone
    assert index.phrase_candidates("reinforcement learning exploration").tolist() == [1, 1, 1, 1, 0]


#: Words that make and break a phrase's pairs: stop words, one letter, hyphens and brackets,
#: underscores, letters the check folds to ASCII, letters outside ASCII, words glued together.
PHRASE_WORDS = WORDS + [
    "reinforcement", "Learning", "learning", "exploration", "for", "a", "k-means", "deep-reinforcement",
    "(LLMs)", "state-of-the-art", "ſtate", "ın", "x-ray", "learningexploration", "re", "is",
]  # fmt: skip
GAPS = [" ", " ", " ", "  ", "\n", "\t", "\u00a0", "-", ""]


def test_no_paper_holding_a_phrase_cut_from_any_text_is_left_out(monkeypatch):
    """Texts of those words with any gaps (glued, hyphens, tabs, no-break spaces), phrases cut from
    them at any two characters or as whole words: every paper holding one is among the candidates,
    and the signatures leave out papers the words alone keep (or the check would be vacuous)."""
    from explorer.services import phrase_scan, search

    monkeypatch.setattr(bm25_pairs, "MIN_ROWS", 0)
    rng = np.random.default_rng(7)

    def text() -> str:
        return "".join(rng.choice(PHRASE_WORDS) + rng.choice(GAPS) for _ in range(int(rng.integers(4, 16))))

    titles, abstracts = [text() for _ in range(60)], [text() for _ in range(60)]
    corpus = _tiny_corpus(titles, abstracts)
    index = search.build_bm25(corpus)
    signatures = index.bm25.pairs
    checked = cut = 0
    for _ in range(1500):
        source = (titles + abstracts)[int(rng.integers(120))]
        if rng.random() < 0.5:  # whole words, one space between them
            words = source.split()
            start = int(rng.integers(0, max(len(words) - 1, 1)))
            query = " ".join(words[start : start + int(rng.integers(2, 5))])
        else:  # any two characters
            start = int(rng.integers(0, len(source)))
            query = source[start : start + int(rng.integers(3, 40))]
        if not phrase_scan.is_phrase(query) or (candidates := index.phrase_candidates(query)) is None:
            continue
        holds = phrase_scan.phrase_mask(corpus, query)
        assert not (holds & ~candidates).any(), query
        index.bm25.pairs = None
        by_words = index.phrase_candidates(query)
        index.bm25.pairs = signatures
        assert not (candidates & ~by_words).any(), query  # the signatures only ever leave papers out
        checked += 1
        cut += int(candidates.sum() < by_words.sum())
    assert checked > 500 and cut > 100, (checked, cut)


def test_keyword_search_finds_the_same_papers_with_the_index_narrowing_the_phrase_check(monkeypatch):
    """The narrowed check gives the full check's answer (the round after the first narrows): same
    papers, order and marks as an index that cannot narrow (an older build's)."""
    from explorer.services import phrase_scan, search

    corpus = _tiny_corpus(ODD_TITLES * 3, ODD_ABSTRACTS * 3)
    index = search.build_bm25(corpus)
    plain = search.KeywordIndex(index.bm25, shown_text=False)
    monkeypatch.setattr(bm25_pairs, "MIN_ROWS", 0)
    monkeypatch.setattr(search, "PHRASE_FIRST_ROUND", 1)
    monkeypatch.setattr(search, "PHRASE_ROUND_GROWTH", 2)
    for query in PHRASES:
        for k in (1, 2, 5, 50):
            a = search.keyword_search(corpus, index, query, k=k)
            b = search.keyword_search(corpus, plain, query, k=k)
            np.testing.assert_array_equal(a.rows, b.rows, err_msg=f"{query} k={k}")
            np.testing.assert_array_equal(a.exact, b.exact, err_msg=f"{query} k={k}")
            np.testing.assert_array_equal(a.exact, phrase_scan.phrase_mask(corpus, query)[a.rows], err_msg=query)


def test_real_abstracts_phrases_cut_anywhere_are_kept(small_artifacts, monkeypatch):
    """Phrases cut from the fixture's own abstracts at any character (the first word the end of a
    word, the last the start of one) are found among the candidates wherever they are held."""
    from explorer.services import phrase_scan, search
    from explorer.state import data

    monkeypatch.setattr(bm25_pairs, "MIN_ROWS", 0)
    corpus = data.load_corpus(small_artifacts, "small")
    index = search.open_bm25(corpus)
    assert index.shown_text and index.bm25.pairs is not None
    rng = np.random.default_rng(11)
    abstracts = corpus.papers["abstract"].tolist()
    tried = 0
    for _ in range(300):
        text = abstracts[int(rng.integers(len(abstracts)))]
        if len(text) < 80:
            continue
        start = int(rng.integers(len(text) - 60))
        query = text[start : start + int(rng.integers(12, 60))]
        if not phrase_scan.is_phrase(query):
            continue
        candidates = index.phrase_candidates(query)
        if candidates is not None:
            holds = phrase_scan.phrase_mask(corpus, query)
            assert holds.any() and not (holds & ~candidates).any(), query
            tried += 1
    assert tried > 100


def test_the_letters_indexed_as_ascii_are_every_letter_the_phrase_check_folds_to_ascii():
    """Over all of Unicode: a character that RE2 (the check) or Python's re (its fallback) matches
    with an ASCII letter or digit, case ignored, lower-cases to it or is indexed as it."""
    import re

    import pyarrow as pa
    import pyarrow.compute as pc

    chars = [chr(i) for i in range(128, 0x110000) if not 0xD800 <= i < 0xE000]
    text = "".join(chars)
    python = {m.group() for m in re.finditer(r"[a-z0-9]", text, re.IGNORECASE)}
    hit = pc.match_substring_regex(pa.array(chars), "^[a-z0-9]$", ignore_case=True).to_numpy(zero_copy_only=False)
    folded = python | {chars[i] for i in np.flatnonzero(hit)}
    assert folded  # the Kelvin sign and the long s at least
    for char in folded:
        shown = bm25.index_texts([char], [""])[0].split("\n")[0]
        assert shown.lower().isascii() and len(shown.lower()) == 1, hex(ord(char))


def test_an_index_of_version_2_loads_and_narrows_by_the_words_alone(tmp_path, monkeypatch):
    """A build made before the signatures (``meta.json`` version 2, no ``pairs.npy``) keeps its
    index: it loads, ranks the same and narrows the phrase check by the postings alone."""
    import json

    from explorer.services import search

    monkeypatch.setattr(bm25_pairs, "MIN_ROWS", 0)
    texts = bm25.index_texts(
        [None] * 3, ["reinforcement learning exploration", "exploration of learning reinforcement", "x"]
    )
    bm25.save_index(bm25.build_index(texts), tmp_path / "v3", 3)
    new = bm25.load_index(tmp_path / "v3", 3)
    assert new is not None and new.pairs.shape == (3, bm25_pairs.BYTES)
    old = tmp_path / "v2"
    (tmp_path / "v3").rename(old)
    (old / bm25_pairs.FILE).unlink()
    meta = json.loads((old / bm25.INDEX_META).read_text())
    (old / bm25.INDEX_META).write_text(json.dumps({**meta, "version": 2}))
    index = bm25.load_index(old, 3)
    assert index is not None and index.pairs is None and bm25.indexes_shown_text(old)
    words = bm25.vocabulary(index)
    assert bm25.phrase_candidates(index, words, "reinforcement learning exploration").tolist() == [True, True, False]
    assert bm25.phrase_candidates(new, bm25.vocabulary(new), "reinforcement learning exploration").tolist() == [
        True,
        False,
        False,
    ]
    assert search.KeywordIndex(index, shown_text=True).phrase_candidates("learning exploration") is not None
