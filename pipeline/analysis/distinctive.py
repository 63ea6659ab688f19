"""The terms that tell two corpora apart: document frequencies on a shared vocabulary and
Monroe et al.'s log-odds (:mod:`pipeline.model.logodds`), with a guard against a length confound."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.analysis.intervals import newcombe, z_quantile
from pipeline.analysis.side import Side
from pipeline.model import label_candidates
from pipeline.model.logodds import DEFAULT_PRIOR_MASS, log_odds
from pipeline.model.vocab import make_vectorizer


def written_as_phrases(texts: Sequence[str], terms: Sequence[str], *, min_papers: int = 2) -> np.ndarray:
    """Which ``terms`` the papers write as phrases: the label pipeline's phrase check
    (``pipeline.model.labels``), so that a distinctive term is never a fragment no one wrote.

    A word always passes. A phrase passes when it occurs as written inside a clause (not across a
    full stop, comma or bracket: "capabilities language" from "... capabilities. Language ..."
    fails), is not mostly the start of a longer phrase the papers agree on ("knowledge language"
    of "knowledge language models" fails), is a head often enough to name something, and at
    least ``min_papers`` papers use it so.

    Args:
        texts: the papers' texts (as the vocabulary was made from).
        terms: candidate terms.

    Returns:
        bool ``(len(terms),)``.
    """
    out = np.ones(len(terms), dtype=bool)
    multi = [i for i, t in enumerate(terms) if " " in str(t).strip()]
    if not multi or not len(texts):
        return out
    text = label_candidates.PhraseStats(label_candidates.topic_text(list(texts)))
    for i in multi:  # the few phrases shown (a substring search each)
        term = " ".join(str(terms[i]).lower().split())
        found = text.phrase(term)
        out[i] = (
            found is not None
            and found.term == term
            and found.is_noun_phrase
            and text.doc_share(term) * text.n_docs >= min(min_papers, text.n_docs)
        )
    return out


def count_terms(texts: Sequence[str], vocabulary: Sequence[str], ngram_range=(1, 2)) -> np.ndarray:
    """Papers among ``texts`` using each term of ``vocabulary`` (the pipeline's tokenisation)."""
    if not len(vocabulary) or not len(texts):
        return np.zeros(len(vocabulary), dtype=np.int64)
    vec = make_vectorizer(ngram_range=ngram_range, vocabulary=list(vocabulary))
    counts = vec.transform(list(texts))
    counts.data[:] = 1
    return np.asarray(counts.sum(axis=0)).ravel().astype(np.int64)


def count_terms_in(texts: Sequence[str], vocabulary: Sequence[str], ngram_range=(1, 2)) -> np.ndarray:
    """:func:`count_terms`, tokenising only the texts that hold every word of some term (a cheap
    substring test first: exact counts for a few terms over many texts)."""
    if not len(vocabulary) or not len(texts):
        return np.zeros(len(vocabulary), dtype=np.int64)
    lowered = pd.Series(list(texts), dtype=object).str.lower()
    words = sorted({w for term in vocabulary for w in str(term).split()})
    has = {w: lowered.str.contains(w, regex=False).to_numpy(dtype=bool) for w in words}
    keep = np.zeros(len(lowered), dtype=bool)
    for term in vocabulary:  # the few candidate terms
        keep |= np.logical_and.reduce([has[w] for w in str(term).split()])
    rows = np.flatnonzero(keep)
    return count_terms([texts[i] for i in rows], vocabulary, ngram_range)


def shared_document_frequencies(
    new: Side,
    ref: Side,
    ref_rows: np.ndarray,
    shared_rows: np.ndarray,
    *,
    candidates: int | None = None,
    prior_mass: float = DEFAULT_PRIOR_MASS,
) -> pd.DataFrame:
    """Document frequencies of both corpora over the union of their vocabularies.

    The stored vocabularies (terms.parquet) give each side's counts of its own terms; the other
    side's terms are counted in its texts with the same tokenisation. Papers of the reference
    that the new corpus also holds (``shared_rows``) are taken out of the reference's counts.

    Args:
        candidates: count only this many of each side's own terms on the other side: those that
            would rank highest if the other side never used them (an upper bound of their
            log-odds); the others are left out. None counts every term.

    Returns:
        Columns term, df_new, df_ref (papers of ``ref_rows``); every count exact.
    """
    new_terms = new.terms.set_index("term")["df"].astype(np.int64)
    ref_terms = ref.terms.set_index("term")["df"].astype(np.int64)
    ngrams = tuple(ref.ngram_range)
    if len(shared_rows):  # the reference's own counts, less the papers it shares with the new corpus
        ref_terms = ref_terms - count_terms(ref.texts(shared_rows), ref_terms.index.tolist(), ngrams)
    only_new = np.array(sorted(set(new_terms.index) - set(ref_terms.index)), dtype=object)
    only_ref = np.array(sorted(set(ref_terms.index) - set(new_terms.index)), dtype=object)
    if candidates is not None:
        only_new, only_ref = candidate_terms(new_terms, ref_terms, only_new, only_ref, candidates, prior_mass)
    df_new = pd.concat(
        [new_terms, pd.Series(count_terms_in(new.texts(np.arange(new.n)), only_ref, ngrams), index=only_ref)]
    )
    df_ref = pd.concat([ref_terms, pd.Series(count_terms_in(ref.texts(ref_rows), only_new, ngrams), index=only_new)])
    both = new_terms.index.intersection(ref_terms.index).union(pd.Index(only_new)).union(pd.Index(only_ref))
    out = pd.DataFrame({"df_new": df_new.reindex(both), "df_ref": df_ref.reindex(both)}).astype(np.int64)
    out = out.rename_axis("term").reset_index()
    return out.sort_values("term", kind="stable").reset_index(drop=True)


def candidate_terms(new_terms, ref_terms, only_new, only_ref, n: int, prior_mass: float):
    """The one-side terms worth counting on the other side: best log-odds if the other side had none."""
    upper = pd.DataFrame(
        {"df_new": new_terms.reindex(new_terms.index.union(ref_terms.index)).fillna(0),
         "df_ref": ref_terms.reindex(new_terms.index.union(ref_terms.index)).fillna(0)}
    )  # fmt: skip
    lo = log_odds(upper["df_new"].to_numpy(), upper["df_ref"].to_numpy(), prior_mass=prior_mass)
    terms = upper.index.to_numpy(dtype=object)
    pick_new = set(terms[lo.top(n, terms=terms, min_count=3, side="a")]) if len(terms) else set()
    pick_ref = set(terms[lo.top(n, terms=terms, min_count=3, side="b")]) if len(terms) else set()
    return (
        np.array([t for t in only_new if t in pick_new], dtype=object),
        np.array([t for t in only_ref if t in pick_ref], dtype=object),
    )


def min_support(n_papers: int) -> int:
    """Papers that must use a term before it can be called distinctive of a corpus: a term in two
    papers is an anecdote. At least 3 papers and 0.5% of the corpus (the trends page's rule)."""
    return int(max(3, round(0.005 * n_papers)))


def distinctive_terms(
    df: pd.DataFrame, n_new: int, n_ref: int, *, top: int, prior_mass: float = DEFAULT_PRIOR_MASS
) -> pd.DataFrame:
    """Terms that tell the new corpus from the reference: the ``top`` of each side by Monroe et
    al.'s log-odds on document frequencies (:mod:`pipeline.model.logodds`).

    A term is kept when its z passes 1.96, it is used by :func:`min_support` papers on its side,
    and the share of papers using it differs the same way (Newcombe's 95% interval of the
    difference leaves out zero). The last check guards against a confound of log-odds on document
    frequencies: a corpus whose abstracts use more distinct terms gives each term a smaller share
    of all term uses, so a word every corpus uses alike ("data") would otherwise look "used less".

    Returns:
        Columns term, df_new, df_ref, share_new, share_ref, delta, z, side ("new": used more in the
        new corpus; "ref": less); the new side first, each by |z| then term.
    """
    cols = ["term", "df_new", "df_ref", "share_new", "share_ref", "delta", "z", "side"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    a, b = df["df_new"].to_numpy(), df["df_ref"].to_numpy()
    lo = log_odds(a, b, prior_mass=prior_mass)
    d_lo, d_hi = newcombe(a, n_new, b, n_ref, z_quantile(0.95))
    agrees = np.where(lo.z > 0, d_lo > 0, d_hi < 0)
    terms = df["term"].to_numpy(dtype=object)
    picked = []
    for side, min_count in (("a", min_support(n_new)), ("b", min_support(n_ref))):
        ranked = lo.top(len(terms), terms=terms, min_count=min_count, side=side)
        rows = [i for i in ranked if abs(lo.z[i]) > 1.96 and agrees[i]][:top]
        picked += [(i, "new" if side == "a" else "ref") for i in rows]
    if not picked:
        return pd.DataFrame(columns=cols)
    idx = np.array([i for i, _ in picked])
    out = df.iloc[idx][["term", "df_new", "df_ref"]].reset_index(drop=True)
    out["share_new"] = out["df_new"] / max(n_new, 1)
    out["share_ref"] = out["df_ref"] / max(n_ref, 1)
    out["delta"] = lo.delta[idx]
    out["z"] = lo.z[idx]
    out["side"] = [s for _, s in picked]
    return out[cols]
