"""Loading a built corpus into one read-only bundle.

``load_corpus`` is a plain function (tests call it directly). The app goes through
``get_corpus``, a thin ``st.cache_resource`` wrapper keyed by (artifacts root, corpus name,
build id): every browser session shares one copy, and a rebuilt corpus (a new build id behind the
``<name>`` symlink) is picked up on the next rerun. Embeddings and the topic distribution are
memory-mapped, never copied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import streamlit as st

from pipeline import artifacts, schema
from pipeline.artifacts import ArtifactError, CorpusEntry

#: Columns of papers.parquet the app reads (``source_*`` and ``extra`` stay on disk).
PAPER_COLUMNS = [
    "doc_id", "row", "title", "title_derived", "abstract", "model_text", "year", "venue", "authors",
    "url", "label", "keywords", "topic", "topic_prob", "was_outlier", "placed", "x", "y",
]  # fmt: skip
TEXT_COLUMNS = ["title", "abstract", "model_text", "venue", "authors", "url", "label", "keywords"]
HOVER_TITLE_CHARS = 160
HOVER_WRAP = 60


def escape_plotly(values: pd.Series) -> pd.Series:
    """Escape ``&``, ``<`` and ``>`` so plotly shows the text instead of interpreting tags."""
    return (
        values.str.replace("&", "&amp;", regex=False)
        .str.replace("<", "&lt;", regex=False)
        .str.replace(">", "&gt;", regex=False)
    )


def _text(series: pd.Series) -> pd.Series:
    """A text column as pandas' string dtype (all-null columns are stored as float or object)."""
    return series.astype("str")


@dataclass(frozen=True, eq=False)
class Corpus:
    """A built corpus, read-only: never mutate these frames or arrays (they are shared by sessions).

    Attributes:
        name, build_id, folder, root, manifest: where it came from.
        papers: ``PAPER_COLUMNS``, one row per paper, position ``i`` is embeddings row ``i``.
        topics: topics.parquet (``schema.TOPIC_COLUMNS``, plus ``stability`` if present), in file order.
        topic_terms, hierarchy, terms, years, topic_years: the tables of the same names.
        embeddings: float32 ``(papers, dim)`` memory map.
        topic_embeddings: float32 ``(topics, dim)``, row ``j`` is ``topics`` row ``j``.
        topic_similarity: float32 ``(topics, topics)``.
        topic_distribution: float32 ``(papers, topics)`` memory map.
        xy: float32 ``(papers, 2)`` map positions.
        topic_index: int ``(papers,)`` row of each paper's topic in ``topics`` (-1: outlier, topic -1).
        hover: object ``(papers,)`` map hover text, already escaped for plotly.
        quoted_ids: object ``(papers,)`` doc ids percent-encoded for URLs.
    """

    name: str
    build_id: str
    folder: Path
    root: Path
    manifest: dict
    papers: pd.DataFrame
    topics: pd.DataFrame
    topic_terms: pd.DataFrame
    hierarchy: pd.DataFrame
    terms: pd.DataFrame
    years: pd.DataFrame
    topic_years: pd.DataFrame
    embeddings: np.ndarray
    topic_embeddings: np.ndarray
    topic_similarity: np.ndarray
    topic_distribution: np.ndarray
    xy: np.ndarray
    topic_index: np.ndarray
    hover: np.ndarray
    quoted_ids: np.ndarray
    _doc_pos: pd.Index = field(repr=False)
    _topic_pos: dict[int, int] = field(repr=False)

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies this build in caches: (root, name, build id)."""
        return (str(self.root), self.name, self.build_id)

    @property
    def n_papers(self) -> int:
        return len(self.papers)

    @property
    def topic_ids(self) -> np.ndarray:
        return self.topics["topic"].to_numpy()

    @property
    def year_span(self) -> tuple[int, int] | None:
        """(first, last) year, or None when no paper has a year."""
        if self.years.empty:
            return None
        return int(self.years["year"].min()), int(self.years["year"].max())

    @property
    def has_years(self) -> bool:
        """True when at least two distinct years exist, so trends mean something."""
        return len(self.years) >= 2

    @cached_property
    def venues(self) -> list[str]:
        return sorted(self.papers["venue"].dropna().unique().tolist())

    @cached_property
    def keyword_years(self) -> pd.DataFrame:
        """keyword_years.parquet (loaded on first use: it is the largest table)."""
        table = artifacts.read_table(self.folder, schema.KEYWORD_YEARS)
        table["term"] = table["term"].astype("str")
        return table

    def paper_pos(self, doc_id: str | None) -> int | None:
        """Row of paper ``doc_id`` in ``papers`` (and the arrays), or None if unknown."""
        if doc_id is None:
            return None
        pos = self._doc_pos.get_indexer([doc_id])[0]
        return None if pos < 0 else int(pos)

    def topic_pos(self, topic: int | None) -> int | None:
        """Row of topic ``topic`` in ``topics`` (and the topic arrays), or None if unknown."""
        return None if topic is None else self._topic_pos.get(int(topic))

    def topic_label(self, topic: int) -> str:
        pos = self.topic_pos(topic)
        if pos is None:
            return "outliers" if topic == -1 else f"topic {topic}"
        return str(self.topics["label"].iat[pos])


def _check(condition: bool, name: str, what: str) -> None:
    if not condition:
        raise ArtifactError(f"corpus {name!r}: {what}. The build is inconsistent; rebuild the corpus.")


def load_corpus(root: Path, name: str, folder: Path | None = None) -> Corpus:
    """Read every artifact of corpus ``name`` under ``root``.

    Args:
        root: the artifacts folder.
        name: the corpus name (validated: never a path).
        folder: its build folder, if already resolved (so the build id used as a cache key and the
            files read are the same build even if a rebuild is published meanwhile).

    Raises:
        ArtifactError: invalid name, missing or damaged files, or an incompatible schema version.
    """
    root = Path(root).resolve()
    folder = folder or artifacts.corpus_path(root, name)
    manifest = artifacts.read_manifest(folder)
    papers = artifacts.read_table(folder, schema.PAPERS)
    missing = [c for c in PAPER_COLUMNS if c not in papers.columns]
    _check(not missing, name, f"papers.parquet lacks columns {missing}")
    papers = papers[PAPER_COLUMNS].sort_values("row", kind="stable").reset_index(drop=True)
    n = len(papers)
    _check(bool((papers["row"].to_numpy() == np.arange(n)).all()), name, "papers.row is not 0..n-1")
    for col in TEXT_COLUMNS:
        papers[col] = _text(papers[col])
    papers["year"] = papers["year"].astype("Int16")

    topics = artifacts.read_table(folder, schema.TOPICS).reset_index(drop=True)
    topics["label"] = _text(topics["label"]).fillna("").where(lambda s: s != "", "topic " + topics["topic"].astype(str))
    topic_pos = {int(t): i for i, t in enumerate(topics["topic"].to_numpy())}

    embeddings = artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True)
    distribution = artifacts.read_array(folder, schema.TOPIC_DISTRIBUTION, mmap=True)
    topic_embeddings = np.asarray(artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS), dtype=np.float32)
    similarity = np.asarray(artifacts.read_array(folder, schema.TOPIC_SIMILARITY), dtype=np.float32)
    k = len(topics)
    _check(
        embeddings.ndim == 2 and embeddings.shape[0] == n,
        name,
        f"embeddings.npy has shape {embeddings.shape} for {n} papers",
    )
    _check(
        distribution.shape == (n, k),
        name,
        f"topic_distribution.npy has shape {distribution.shape}, expected ({n}, {k})",
    )
    _check(
        topic_embeddings.shape[0] == k,
        name,
        f"topic_embeddings.npy has {topic_embeddings.shape[0]} rows for {k} topics",
    )
    _check(similarity.shape == (k, k), name, f"topic_similarity.npy has shape {similarity.shape}, expected ({k}, {k})")
    for arr in (topic_embeddings, similarity):
        arr.setflags(write=False)

    # -1 where a paper's topic is not in the topics table (outliers kept as topic -1).
    topic_index = pd.Index(topics["topic"].to_numpy()).get_indexer(papers["topic"].to_numpy()).astype(np.int32)
    topic_index.setflags(write=False)

    xy = papers[["x", "y"]].to_numpy(dtype=np.float32)
    xy.setflags(write=False)
    labels = np.append(topics["label"].to_numpy(dtype=object), "outliers")
    hover = _hover_text(papers, pd.Series(labels[topic_index], dtype="str"))

    terms = artifacts.read_table(folder, schema.TERMS)
    terms["term"] = terms["term"].astype("str")
    return Corpus(
        name=name,
        build_id=folder.name,
        folder=folder,
        root=root,
        manifest=manifest,
        papers=papers,
        topics=topics,
        topic_terms=artifacts.read_table(folder, schema.TOPIC_TERMS),
        hierarchy=artifacts.read_table(folder, schema.HIERARCHY),
        terms=terms.sort_values(["df", "term"], ascending=[False, True], kind="stable").reset_index(drop=True),
        years=artifacts.read_table(folder, schema.YEARS),
        topic_years=artifacts.read_table(folder, schema.TOPIC_YEARS),
        embeddings=embeddings,
        topic_embeddings=topic_embeddings,
        topic_similarity=similarity,
        topic_distribution=distribution,
        xy=xy,
        topic_index=topic_index,
        hover=hover,
        quoted_ids=papers["doc_id"].map(lambda d: quote(str(d), safe="")).to_numpy(dtype=object),
        _doc_pos=pd.Index(papers["doc_id"].to_numpy(dtype=object)),
        _topic_pos=topic_pos,
    )


def _hover_text(papers: pd.DataFrame, topic_labels: pd.Series) -> np.ndarray:
    """Map hover text per paper: wrapped title, topic, venue and year, escaped for plotly.

    Vectorised string operations only (built once per corpus, not per rerun).
    """
    title = papers["title"].fillna("(untitled)").str.slice(0, HOVER_TITLE_CHARS)
    title = (
        escape_plotly(title)
        .str.replace(rf"(.{{1,{HOVER_WRAP}}})(?:\s+|$)", r"\1<br>", regex=True)
        .str.replace(r"(<br>)+$", "", regex=True)
    )
    year = papers["year"].astype("str").fillna("")
    venue = escape_plotly(papers["venue"].fillna(""))
    # "NeurIPS 2026 2026" reads badly: add the year only when the venue does not end with it.
    where = (venue + " " + year.where(venue.str.slice(-4) != year, "")).str.strip()
    text = "<b>" + title + "</b><br>" + escape_plotly(topic_labels.reset_index(drop=True)) + "<br>" + where
    return text.to_numpy(dtype=object)


# ------------------------------------------------------------------------------------------
# Cached access for the app (thin wrappers; the functions above hold the logic)
# ------------------------------------------------------------------------------------------


@st.cache_resource(ttl=5, show_spinner=False)
def _list_cached(root: str) -> list[CorpusEntry]:
    return artifacts.list_corpora(Path(root))


def list_corpora(root: Path) -> list[CorpusEntry]:
    """Every corpus under ``root``, broken ones with their error (re-read every few seconds)."""
    return _list_cached(str(Path(root).resolve()))


def build_key(folder: Path) -> str:
    """The build id of a build folder, plus its manifest's mtime for hand-copied plain folders."""
    try:
        stamp = (folder / schema.MANIFEST).stat().st_mtime_ns
    except OSError:
        stamp = 0
    return f"{folder.name}@{stamp}"


@st.cache_resource(max_entries=6, show_spinner="Loading corpus…")
def _load_cached(root: str, name: str, build: str, _folder: Path) -> Corpus:
    return load_corpus(Path(root), name, _folder)


def get_corpus(root: Path, name: str) -> Corpus:
    """Corpus ``name``'s current build, one copy shared by every session.

    The cache key holds the build id, so a rebuilt corpus is loaded on the next rerun; at most six
    builds stay in memory.

    Raises:
        ArtifactError: the name is invalid, or the corpus is missing or broken.
    """
    folder = artifacts.corpus_path(root, name)
    return _load_cached(str(Path(root).resolve()), name, build_key(folder), folder)
