"""The keyword index is the same on every build: bm25s's word numbering no longer follows a set's
order (which changes with Python's per-process string hashing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from pipeline.analysis import bm25

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [
    "Diffusion models for protein structure generation.",
    "Graph neural networks learn molecular properties; graphs of molecules.",
    "",
    "Reinforcement learning with sparse rewards and diffusion policies.",
]

SAVE = """
import sys
from pipeline.analysis import bm25
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
