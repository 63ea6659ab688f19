"""A general background of machine-learning abstracts: how many of them use each term.

A corpus of one year has no earlier years to compare with, and its most frequent words ("data",
"training", "learning") are those of every ML abstract. Compared with this background by log-odds
(``pipeline.model.logodds``), its distinctive terms come out instead. The background is a small file
shipped with the app (``assets/background/``): term document frequencies only, never texts, made
by ``benchmarks/make_background.py`` from public abstracts with the pipeline's own cleaning and
vocabulary (``pipeline.model.vocab``), so a term means the same thing in both.

Numpy and pandas only when reading, so the app can use it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core.inputs import ROOT
from pipeline.model.vocab import keeps_token, make_vectorizer

#: The shipped background, relative to the repository root.
FOLDER = ROOT / "assets" / "background"
TERMS_FILE = "terms.parquet"
INFO_FILE = "info.json"
#: Terms used by fewer background abstracts are left out of the file (they keep it small and say
#: little: a term that rare gets almost no prior mass anyway).
MIN_DF = 10


@dataclass(frozen=True)
class Background:
    """Document frequencies of a background corpus.

    Attributes:
        terms: str ``(m,)`` terms (the pipeline's 1-2-word vocabulary terms), sorted.
        df: int ``(m,)`` abstracts using each term.
        n_docs: abstracts in the background.
        info: where it comes from (``info.json``: sources, years, counts, how it was made).
    """

    terms: np.ndarray
    df: np.ndarray
    n_docs: int
    info: dict

    def counts_for(self, terms: Sequence[str]) -> np.ndarray:
        """The background's document frequency of each of ``terms`` (0 for terms it lacks), int64 ``(len(terms),)``."""
        index = pd.Index(self.terms)
        pos = index.get_indexer(pd.Index(list(terms), dtype=object))
        return np.where(pos >= 0, self.df[np.clip(pos, 0, None)], 0).astype(np.int64)

    @property
    def source(self) -> str:
        """One line naming the background, for captions."""
        return str(self.info.get("name") or f"{self.n_docs:,} ML abstracts")


def load(folder: Path = FOLDER) -> Background:
    """Read the shipped background (``terms.parquet`` and ``info.json`` in ``folder``).

    Raises:
        FileNotFoundError: the background is missing (a checkout without ``assets/background``).
    """
    folder = Path(folder)
    table = pd.read_parquet(folder / TERMS_FILE)
    info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
    return Background(
        terms=table["term"].astype(str).to_numpy(dtype=object),
        df=table["df"].to_numpy(dtype=np.int64),
        n_docs=int(info["n_docs"]),
        info=info,
    )


def make(texts: Sequence[str], *, min_df: int = MIN_DF, ngram_range: tuple[int, int] = (1, 2)) -> pd.DataFrame:
    """Document frequencies of ``texts`` (cleaned modelling texts) with the pipeline's vectorizer.

    Returns:
        Columns term, df (int32): terms used by at least ``min_df`` texts, sorted by term.
    """
    vec = make_vectorizer(ngram_range=ngram_range, min_df=min_df)
    counts = vec.fit_transform(list(texts))
    counts.data[:] = 1
    df = np.asarray(counts.sum(axis=0)).ravel().astype(np.int32)
    terms = vec.get_feature_names_out()
    keep = np.array([all(keeps_token(t) for t in term.split()) for term in terms], dtype=bool)
    return pd.DataFrame({"term": terms[keep].astype(str), "df": df[keep]}).reset_index(drop=True)


def write(table: pd.DataFrame, info: dict, folder: Path = FOLDER) -> None:
    """Write ``terms.parquet`` (zstd) and ``info.json`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    table.to_parquet(folder / TERMS_FILE, index=False, compression="zstd")
    (folder / INFO_FILE).write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
