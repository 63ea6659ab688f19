"""Which words stand next to each other in each paper, as a small signature per paper, so that the
exact-phrase check of keyword search skips the papers that hold a phrase's words apart.

The index's postings say which papers hold every word of a phrase (``bm25.phrase_candidates``),
not whether they hold them together: of the million papers of the grown benchmark build, 18,966
hold "reinforcement", "learning" and "exploration", 232 hold them next to each other and 76 the
phrase, and the check read the titles and abstracts of 16,640 of them (BENCHMARKS.md). The build
now also writes, for each paper, which pairs of adjacent tokens its title and abstract hold
(``keyword_index/pairs.npy``): each pair of the token stream the index counts (lower case, stop
words dropped, in text order) sets :data:`HASHES` of :data:`BITS` bits, chosen by a hash of the
two words, so a paper's signature is :data:`BYTES` bytes. A paper can hold a phrase only if the
bits of every pair of adjacent tokens the phrase makes are set; a bit set by another pair only
keeps a paper that cannot hold the phrase, which the check then reads and rejects: the signature
never drops a paper that holds it.

Where a phrase's tokens cannot be known, no pair is asked for there: a word with letters outside
ASCII, or the phrase's first (last) token when it may be the end (start) of a longer word
("forcement learning" matches "reinforcement learning") and more than :data:`VARIANTS_MAX` of the
index's words end (start) with it.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from pipeline.core import pages

#: Bits of a paper's signature (a power of two) and bits each pair sets (a Bloom filter's hashes):
#: a title and abstract make about 150 pairs, which set about a quarter of 1,024 bits two at a
#: time, so a paper passes a pair it does not hold about one time in sixteen (with 512 bits and one
#: hash, one in five on the grown benchmark build: a phrase's common pair, "reinforcement learning",
#: leaves out nothing and the other must do the narrowing alone).
BITS = 1024
HASHES = 2
BYTES = BITS // 8
_WIDTH = BITS.bit_length() - 1  # bits of a bit's position
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xC2B2AE3D27D4EB4F)
#: A phrase's first (last) token that may be the end (start) of a longer word stands for every word
#: of the index that ends (starts) with it (a paper needs the pair of a word it holds); more than
#: this many, and no pair is asked for there (as ``bm25.AFFIX_WORDS_MAX`` for the words).
VARIANTS_MAX = 64
FILE = "pairs.npy"
#: The signatures are read only where more papers than this hold the phrase's words: the phrase
#: check's next round (8 times its first 256) reads that many texts at once anyway, and reading
#: their signatures first only adds a wait on a cold disk (a phrase whose words a few hundred of
#: the grown million papers hold: 0.26 s with them read, 0.16 s without; BENCHMARKS.md).
MIN_ROWS = 2_048

_RUN = re.compile(r"(?u)\b\w\w+\b")  # the tokeniser's pattern (bm25.TOKEN_PATTERN)


def word_hashes(words: list[str]) -> np.ndarray:
    """uint64 hash of each word, the same in every process: the CRC-32 of its UTF-8 bytes (two words
    of one hash only set each other's bits: a paper kept for the check to reject, never one lost)."""
    return np.fromiter(map(zlib.crc32, map(str.encode, words)), dtype=np.uint64, count=len(words))


def _mixed(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """uint64 hash of each ordered pair of word hashes (a multiply spreads the first over 64 bits,
    the second is added, a second multiply carries every bit into the top ones the bits are read
    from)."""
    with np.errstate(over="ignore"):
        mixed = first * _M1
        mixed += second
        mixed *= _M2
    return mixed


def pair_bits(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """int64 ``(pairs, HASHES)``: the bits (0 to ``BITS - 1``) each pair of word hashes
    ``(first[i], second[i])`` sets, in that order (another order is another pair)."""
    mixed = _mixed(first, second)
    return np.stack([_bit(mixed, h) for h in range(HASHES)], axis=1)


def _bit(mixed: np.ndarray, h: int) -> np.ndarray:
    """int64 bit of hash ``h`` of each pair: the ``h``-th field of ``_WIDTH`` bits from the top."""
    return ((mixed >> np.uint64(64 - _WIDTH * (h + 1))) & np.uint64(BITS - 1)).astype(np.int64)


def signatures(words: list[str], flat: np.ndarray, doc_len: np.ndarray, block: int = 32_768) -> np.ndarray:
    """uint8 ``(texts, BYTES)``: each text's signature, from its tokens (``flat``: every text's token
    ids into ``words`` in text order, one text after another; ``doc_len``: tokens per text). The
    pairs are hashed and their bits set ``block`` at a time, so that the hashing's temporaries stay
    small (the per-token arrays, one int64 and one bool each, are made once)."""
    n = len(doc_len)
    bits = np.zeros(n * BITS, dtype=bool)
    if len(flat) >= 2:
        hashes = word_hashes(words)
        start = np.repeat(np.arange(0, n * BITS, BITS, dtype=np.int64), doc_len)  # each token's text's first bit
        last = np.zeros(len(flat), dtype=bool)  # a text's last token pairs with nothing
        last[(np.cumsum(doc_len) - 1)[doc_len > 0]] = True
        for s in range(0, len(flat) - 1, block):
            e = min(s + block, len(flat) - 1)  # pairs s .. e - 1: tokens i and i + 1
            h = hashes[flat[s : e + 1]]
            within = ~last[s:e]
            mixed, row = _mixed(h[:-1], h[1:])[within], start[s + 1 : e + 1][within]
            for k in range(HASHES):
                bits[row + _bit(mixed, k)] = True
    return np.packbits(bits.reshape(n, BITS), axis=1, bitorder="little")


def phrase_tokens(query: str, stop: frozenset[str]) -> list[tuple[str, str] | None]:
    """The index's tokens where ``query`` stands as the exact phrase, in order: ``("exact", word)``;
    ``("ends", run)`` for a first token that may be the end of a longer word, ``("starts", run)``
    for a last one that may begin one; ``None`` where the tokens cannot be known (no pair spans it).

    The phrase check matches the query's words in order, any whitespace between them, case ignored,
    the first word anywhere it ends a text's word and the last anywhere it starts one. An ASCII word
    is matched by the same ASCII letters (``bm25.index_texts`` indexes the few other letters the
    check folds to ASCII as those), so its runs of two or more word characters are the text's, and
    each is a token unless it is a stop word, except a run that touches the phrase's start (end): in
    the text it may go on to the left (right), and it is a token only if no stop word ends (starts)
    with it.

    Args:
        query: the phrase as typed.
        stop: the tokeniser's stop words.
    """
    words = query.split()
    out: list[tuple[str, str] | None] = []
    for place, word in enumerate(words):
        if not word.isascii():
            out.append(None)
            continue
        for m in _RUN.finditer(word.lower()):
            run = m.group()
            if place == 0 and m.start() == 0:
                out.append(None if any(s.endswith(run) for s in stop) else ("ends", run))
            elif place == len(words) - 1 and m.end() == len(word):
                out.append(None if any(s.startswith(run) for s in stop) else ("starts", run))
            elif run not in stop:
                out.append(("exact", run))
    return out


def keep_pairs(
    signature: np.ndarray, rows: np.ndarray, variants: list[tuple[list[str], list[np.ndarray]] | None]
) -> np.ndarray:
    """bool ``(len(rows),)``: which of ``rows`` (paper rows) may hold every pair of adjacent tokens.

    Args:
        signature: uint8 ``(papers, BYTES)``, the build's ``pairs.npy``.
        variants: per token of the phrase (``phrase_tokens``), the index's words it may be and the
            rows holding each (``None``: unknown, or too many words); a pair is asked for between
            two adjacent known tokens. Where a token may be several words, a paper needs the pair's
            bit of a word it holds.
    """
    keep = np.ones(len(rows), dtype=bool)
    asked = [(left, right) for left, right in zip(variants[:-1], variants[1:], strict=True) if left and right]
    if not asked:
        return keep
    pages.advise_rows(signature, rows)  # on a cold disk the rows' pages are read together
    every = np.asarray(signature[rows])  # one read of the rows' signatures (a memory-mapped file)
    for left, right in asked:
        if not keep.any():
            break
        live, sig = rows[keep], every[keep]
        found = np.zeros(len(live), dtype=bool)
        for a, holds_a in _held(live, *left):
            for b, holds_b in _held(live, *right):
                has = np.ones(len(live), dtype=bool)
                for bit in pair_bits(word_hashes([a]), word_hashes([b]))[0].tolist():
                    has &= (sig[:, bit >> 3] >> (bit & 7)) & 1 == 1
                for holds in (holds_a, holds_b):
                    if holds is not None:
                        has &= holds
                found |= has
        keep[np.flatnonzero(keep)[~found]] = False
    return keep


def _held(live: np.ndarray, words: list[str], postings: list[np.ndarray]) -> list[tuple[str, np.ndarray | None]]:
    """The words a token may be, each with which ``live`` rows hold it (None: a single word, not
    looked up), leaving out the words none of them holds."""
    if len(words) == 1:
        return [(words[0], None)]
    out = []
    for word, rows in zip(words, postings, strict=True):
        holds = np.isin(live, rows, kind="table") if len(rows) else np.zeros(len(live), dtype=bool)
        if holds.any():
            out.append((word, holds))
    return out


def token_variants(index, words_by_id, affix_ids, query: str) -> list | None:
    """Per token of ``query`` as the phrase (:func:`phrase_tokens`): the index's words it may be and
    each one's papers (``keep_pairs``' ``variants``), None where unknown; None instead of the list
    when the phrase needs a token no paper has.

    Args:
        index: a ``bm25s.BM25`` of ``bm25.index_texts``.
        words_by_id: ``bm25.vocabulary(index)``.
        affix_ids: ``(kind, run) -> ids`` of the index's words that end (``"ends"``) or start
            (``"starts"``) with ``run``.
    """
    from bm25s.stopwords import STOPWORDS_EN

    indptr, indices = index.scores["indptr"], index.scores["indices"]
    out: list = []
    for token in phrase_tokens(query, frozenset(STOPWORDS_EN)):
        if token is None:
            out.append(None)
            continue
        kind, run = token
        ids = ([index.vocab_dict[run]] if run in index.vocab_dict else []) if kind == "exact" else affix_ids(kind, run)
        if not len(ids):
            return None
        if len(ids) > VARIANTS_MAX:
            out.append(None)
            continue
        out.append(([words_by_id[int(t)].as_py() for t in ids], [indices[indptr[t] : indptr[t + 1]] for t in ids]))
    return out
