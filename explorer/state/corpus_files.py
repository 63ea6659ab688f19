"""Reading one build's files into the app's frames and arrays, checked against each other.

``explorer.state.data.load_corpus`` puts these together into a ``Corpus``. The papers (``papers.arrow``),
the embeddings and the topic distribution are memory-mapped, never copied: texts are read from the
file when a page uses them. Every reader raises ``ArtifactError`` with what to do when a file is
missing, damaged or does not match the others.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis.topic_files import text_column
from pipeline.core import artifacts, schema
from pipeline.core.artifacts import ArtifactError

#: Columns of papers.parquet the app reads (``source_*`` and ``extra`` stay on disk).
PAPER_COLUMNS = schema.APP_PAPER_COLUMNS
#: Columns that builds made before them lack; the app makes them itself (``short_id``: from
#: ``doc_id``, ``explorer.state.data.Corpus.short_ids``).
LATER_PAPER_COLUMNS = ("short_id",)
TEXT_COLUMNS = ["title", "abstract", "model_text", "venue", "authors", "url", "label", "keywords"]


def check(condition: bool, name: str, what: str) -> None:
    """Raise ArtifactError (corpus ``name`` is inconsistent: ``what``) unless ``condition``."""
    if not condition:
        raise ArtifactError(f"corpus {name!r}: {what}. The build is inconsistent; rebuild the corpus.")


def read_papers(folder: Path, name: str) -> pd.DataFrame:
    """``PAPER_COLUMNS`` of the build's papers, in row order (``LATER_PAPER_COLUMNS`` only where the
    build has them).

    From ``papers.arrow`` memory-mapped when the build has it: its texts stay in the file (pages
    are read when a page shows them), so opening a corpus costs little time and memory whatever
    its size. Builds made before that file existed are read from papers.parquet, as before.
    """
    path = folder / schema.PAPERS_ARROW
    if path.is_file():
        try:
            papers = map_arrow(path)
        except Exception as exc:  # pyarrow raises several types for damaged files
            raise ArtifactError(
                f"corpus {name!r}: {schema.PAPERS_ARROW} is damaged ({type(exc).__name__}). Rebuild the corpus."
            ) from None
        source = schema.PAPERS_ARROW
    else:
        papers, source = artifacts.read_table(folder, schema.PAPERS, columns=_parquet_columns(folder)), schema.PAPERS
    missing = [c for c in PAPER_COLUMNS if c not in papers.columns and c not in LATER_PAPER_COLUMNS]
    check(not missing, name, f"{source} lacks columns {missing}")
    papers = papers[[c for c in PAPER_COLUMNS if c in papers.columns]]
    rows = papers["row"].to_numpy()
    if not (rows[1:] > rows[:-1]).all():  # sorting copies every column: only when needed
        papers = papers.sort_values("row", kind="stable")
    return papers.reset_index(drop=True)


def _parquet_columns(folder: Path) -> list[str] | None:
    """The app's columns that papers.parquet has (the others, e.g. ``extra``, are not read), or
    None when its schema cannot be read (``read_table`` then says the file is damaged)."""
    import pyarrow.parquet as pq

    try:
        names = set(pq.read_schema(folder / schema.PAPERS).names)
    except Exception:  # pyarrow raises several types for missing or damaged files
        return None
    return [c for c in PAPER_COLUMNS if c in names]


def map_arrow(path: Path) -> pd.DataFrame:
    """An Arrow IPC file as a frame whose text columns point into the memory-mapped file."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    table = ipc.open_file(pa.memory_map(str(path), "r")).read_all()
    return table.to_pandas(ignore_metadata=True)


def load_papers(folder: Path, name: str) -> pd.DataFrame:
    """The papers as the app holds them: rows 0..n-1 checked, texts as strings, ``year`` as Int16,
    and a ``moved`` column (False: no paper is moved by hand until the edits are applied)."""
    papers = read_papers(folder, name)
    n = len(papers)
    check(bool((papers["row"].to_numpy() == np.arange(n)).all()), name, "papers.row is not 0..n-1")
    for col in TEXT_COLUMNS:
        papers[col] = text_column(papers[col])
    papers["year"] = papers["year"].astype("Int16")
    papers["moved"] = False
    return papers


def check_shapes(
    name: str,
    n: int,
    k: int,
    embeddings: np.ndarray,
    distribution: np.ndarray,
    topic_embeddings: np.ndarray,
    similarity: np.ndarray,
) -> None:
    """The arrays fit ``n`` papers and ``k`` topics (ArtifactError otherwise)."""
    check(
        embeddings.ndim == 2 and embeddings.shape[0] == n,
        name,
        f"embeddings.npy has shape {embeddings.shape} for {n} papers",
    )
    check(
        distribution.shape == (n, k),
        name,
        f"topic_distribution.npy has shape {distribution.shape}, expected ({n}, {k})",
    )
    check(
        topic_embeddings.shape[0] == k,
        name,
        f"topic_embeddings.npy has {topic_embeddings.shape[0]} rows for {k} topics",
    )
    check(similarity.shape == (k, k), name, f"topic_similarity.npy has shape {similarity.shape}, expected ({k}, {k})")


def read_terms(folder: Path) -> pd.DataFrame:
    """terms.parquet, most frequent first (ties by term)."""
    terms = artifacts.read_table(folder, schema.TERMS)
    terms["term"] = terms["term"].astype("str")
    if _most_used_first(terms):  # the build writes this order; checking it costs ms, sorting 1M terms seconds
        return terms
    return terms.sort_values(["df", "term"], ascending=[False, True], kind="stable").reset_index(drop=True)


def _most_used_first(terms: pd.DataFrame) -> bool:
    """Whether ``terms`` is already most frequent first, ties by term, on a fresh index."""
    df = terms["df"].to_numpy()
    words = terms["term"].array
    in_order = np.asarray(words[1:] >= words[:-1], dtype=bool) | (df[1:] != df[:-1])
    return terms.index.equals(pd.RangeIndex(len(terms))) and bool((df[1:] <= df[:-1]).all() and in_order.all())
