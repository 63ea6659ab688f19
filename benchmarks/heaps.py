"""Vocabulary growth for benchmark corpora: Heaps' law measured on real abstracts, continued.

Heaps' law: a text of N tokens holds V = K * N**beta distinct words. :func:`fit_heaps` measures K
and beta on real abstracts (papers in a random order, V counted on growing prefixes, a least-squares
line through log V against log N). Stitching real sentences (``make_corpora.py``) adds no new
words, so :class:`VocabularyGrowth` coins them: after each generated abstract the corpus's
vocabulary is brought back to the fitted curve by replacing some of the abstract's content words
with new, unique word forms (the head of one real word joined to the tail of another:
"regularisformer", "contrastilinear"). A coined word is used again later as real new words are:
for each coined word another token is replaced by an earlier coined word, drawn in proportion to
its uses so far (a few coined words become common, most stay rare).

    .venv/bin/python benchmarks/heaps.py        # fit on the shared real abstracts, print K and beta
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Tokens as scikit-learn's CountVectorizer (and so the vocabulary stage) splits them, lowercased.
TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: A word the generator may replace: letters only, at least this long.
_REPLACEABLE = re.compile(r"[a-z]{5,}")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


@dataclass(frozen=True)
class HeapsFit:
    """``V = k * N**beta``; ``points``: the (N, V) prefixes fitted."""

    k: float
    beta: float
    points: list[tuple[int, int]]

    def types(self, n_tokens: float) -> float:
        return self.k * n_tokens**self.beta


#: Fitted on the 35,310 abstracts of the four shared files (``python benchmarks/heaps.py``; BENCHMARKS.md).
HEAPS = HeapsFit(k=27.161, beta=0.4879, points=[])


def vocabulary_curve(texts: Iterable[str], points: int = 40) -> list[tuple[int, int]]:
    """(tokens, distinct words) after log-spaced prefixes of ``texts``, in the given order."""
    texts = list(texts)
    marks = set(np.unique(np.geomspace(1, len(texts), points).astype(int)).tolist())
    seen: set[str] = set()
    n = 0
    out = []
    for i, text in enumerate(texts, start=1):
        words = tokens(text)
        n += len(words)
        seen.update(words)
        if i in marks:
            out.append((n, len(seen)))
    return out


def fit_heaps(texts: list[str], *, orders: int = 5, seed: int = 0, points: int = 40, skip: int = 1000) -> HeapsFit:
    """Heaps' K and beta on ``texts``: V on growing prefixes of ``orders`` random orders of the
    papers (their mean log V at each prefix), a line through log V against log N. Prefixes of
    fewer than ``skip`` papers (the law's early, steeper start) are left out of the fit."""
    rng = np.random.default_rng(seed)
    curves = [vocabulary_curve([texts[i] for i in rng.permutation(len(texts))], points) for _ in range(orders)]
    marks = sorted(set(np.unique(np.geomspace(1, len(texts), points).astype(int)).tolist()))
    log_n = np.log([[p[0] for p in c] for c in curves]).mean(axis=0)
    log_v = np.log([[p[1] for p in c] for c in curves]).mean(axis=0)
    keep = np.asarray(marks) >= min(skip, len(texts) // 10)
    beta, log_k = np.polyfit(log_n[keep], log_v[keep], 1)
    curve = [(int(round(np.exp(n))), int(round(np.exp(v)))) for n, v in zip(log_n, log_v, strict=True)]
    return HeapsFit(float(np.exp(log_k)), float(beta), curve)


class VocabularyGrowth:
    """Keeps a growing corpus's vocabulary on a Heaps curve by coining words: beyond the texts it
    starts from (N0 tokens, V0 words), V = V0 + K * (N**beta - N0**beta).

    Args:
        fit: the curve to follow.
        texts: the corpus so far (real abstracts); their words are the known ones and the source
            of coined words' parts.
        seed: random seed.
    """

    def __init__(self, fit: HeapsFit, texts: Iterable[str], *, seed: int = 0):
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        self.fit = fit
        self.rng = np.random.default_rng(seed)
        self.known: set[str] = set()
        self.n_tokens = 0
        for text in texts:
            words = tokens(text)
            self.n_tokens += len(words)
            self.known.update(words)
        self.n_types = len(self.known)
        # The curve continues from the real corpus's own vocabulary: new words come at the law's
        # rate (dV/dN) beyond it, whatever the small gap between the law and the real count there.
        self.offset = self.n_types - fit.types(self.n_tokens)
        self.stop = frozenset(ENGLISH_STOP_WORDS)
        parts = sorted(w for w in self.known if _REPLACEABLE.fullmatch(w) and w not in self.stop)
        self.heads = [w[: max(4, len(w) // 2 + 1)] for w in parts]
        self.tails = [w[len(w) // 2 :] for w in parts]
        self.pool: list[str] = []  # each coined word once per use: a uniform draw follows the uses
        self.n_coined = 0

    def _coin(self, taken: set[str]) -> str:
        while True:
            word = self.heads[self.rng.integers(len(self.heads))] + self.tails[self.rng.integers(len(self.tails))]
            if word not in self.known and word not in taken:
                taken.add(word)
                return word

    def apply(self, text: str) -> str:
        """``text`` with as many of its words replaced by coined ones as the curve asks for after it,
        and as many again by earlier coined words; the corpus's counts then include it."""
        words = tokens(text)
        spots = [m for m in TOKEN.finditer(text) if _REPLACEABLE.fullmatch(m.group()) and m.group() not in self.stop]
        already_new = len(set(words) - self.known)  # a junction of two sentences can make a new word
        wanted = self.fit.types(self.n_tokens + len(words)) + self.offset - self.n_types - already_new
        new = max(0, min(int(round(wanted)), len(spots)))
        reuse = min(new, len(spots) - new, len(self.pool))
        picks = self.rng.choice(len(spots), size=new + reuse, replace=False).tolist()
        taken: set[str] = set()
        swaps = {i: self._coin(taken) for i in picks[:new]}
        swaps |= {i: self.pool[self.rng.integers(len(self.pool))] for i in picks[new:]}
        out, last = [], 0
        for i in sorted(swaps):
            out += [text[last : spots[i].start()], swaps[i]]
            last = spots[i].end()
        result = "".join(out) + text[last:]
        words = tokens(result)
        fresh = set(words) - self.known
        self.n_types += len(fresh)
        self.known |= fresh
        self.n_tokens += len(words)
        self.pool += list(swaps.values())
        self.n_coined += new
        return result


def _stitch(texts: list[str], n: int, seed: int) -> list[str]:
    """``n`` abstracts of real sentences (sentence i from a random paper): no new words."""
    split = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[$\\])")
    rng = np.random.default_rng(seed)
    sentences = [[s for s in split.split(" ".join(t.split())) if s] for t in texts]
    out = []
    for _ in range(n):
        length = len(sentences[rng.integers(len(texts))])
        out.append(" ".join(rng.choice(sentences[rng.integers(len(texts))]) for _ in range(length)))
    return out


def main() -> None:
    import argparse

    import pandas as pd

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    from benchmarks.make_corpora import DATA, SOURCES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grow", type=int, help="also grow the real papers to this many with stitched texts")
    args = parser.parse_args()
    texts = [t for name in SOURCES for t in pd.read_json(DATA / name, lines=True, compression="gzip")["abstract"]]
    fit = fit_heaps(texts)
    n, v = fit.points[-1]
    print(f"{len(texts):,} abstracts, {n:,} tokens, {v:,} distinct words: K = {fit.k:.3f}, beta = {fit.beta:.4f}")
    for n, v in fit.points[::5]:
        print(f"  N {n:>10,}  V {v:>8,}  fitted {fit.types(n):>10,.0f}")
    if args.grow:
        growth = VocabularyGrowth(HEAPS, texts, seed=0)
        n0, v0 = growth.n_tokens, growth.n_types
        for i, text in enumerate(_stitch(texts, args.grow - len(texts), seed=1), start=len(texts) + 1):
            growth.apply(text)
            if i % 10_000 == 0 or i == args.grow:
                law = v0 + HEAPS.types(growth.n_tokens) - HEAPS.types(n0)
                print(f"  {i:>9,} papers: N {growth.n_tokens:>11,}  V {growth.n_types:>9,}  law {law:>11,.0f}")
        print(f"  coined {growth.n_coined:,} words; without them V would stay {v0:,}")


if __name__ == "__main__":
    main()
