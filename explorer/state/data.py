"""Loading a built corpus into one read-only bundle, with the user's topic edits applied.

``load_corpus``, ``with_edits`` and ``with_curation`` are plain functions (tests call them
directly). The app goes through ``explorer.ui.caches.get_corpus``: two ``st.cache_resource`` layers,
the build keyed by (artifacts root, corpus name, :func:`build_key`) and the curated corpus keyed by
that plus a hash of the curation file (``<root>/<name>.curation.json``, see ``pipeline.analysis.curation``;
:func:`edits_key`). Every browser session shares one copy; a rebuilt corpus (a new build behind
the ``<name>`` symlink, or a plain folder replaced by hand) or an edit (a new file hash) is picked
up on the next rerun, and undoing an edit finds the earlier copy again. The papers (``papers.arrow``), the embeddings and the topic distribution are
memory-mapped, never copied: texts are read from the file when a page uses them.

One identity for every cache: :func:`build_key` (the build id plus a stamp of its manifest file)
identifies a build everywhere. ``Corpus.key`` (build + edits) and ``Corpus.text_key`` (build only)
are made from it, and every derived cache in the app (BM25 index, map figure, overview figures,
keyword changes, offline HTML) is keyed by one of them, so none can serve data of an earlier build
that had the same folder name.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from explorer.state.corpus_files import check_shapes, load_papers, read_terms
from pipeline.analysis.curation import Curation, CurationError, curation_path
from pipeline.analysis.topic_edits import curate
from pipeline.analysis.topic_files import read_topic_tables, written_forms
from pipeline.core import artifacts, schema
from pipeline.core.manifest import Manifest
from pipeline.core.topic_tables import TopicTables
from pipeline.formats import palette
from pipeline.formats.ids import paper_short_ids
from pipeline.model.label_case import shown_term


@dataclass(frozen=True, eq=False)
class Corpus:
    """A built corpus, read-only: never mutate these frames or arrays (they are shared by sessions).

    Attributes:
        name, build_id, folder, root, manifest: where it came from.
        papers: ``corpus_files.PAPER_COLUMNS``, one row per paper, position ``i`` is embeddings row ``i``.
        tables: the topic tables (``pipeline.core.topic_tables.TopicTables``): ``topics`` is topics.parquet
            (``schema.TOPIC_COLUMNS``, plus ``stability`` if present) in file order, ``topic_terms``
            and ``hierarchy`` the tables of the same names, ``topic_embeddings`` float32
            ``(topics, dim)`` (row ``j`` is ``topics`` row ``j``), ``similarity`` float32
            ``(topics, topics)``, ``distribution`` float32 ``(papers, topics)`` memory map.
        terms, years, topic_years: the tables of the same names.
        written: the vocabulary's terms that the papers write otherwise than in lower case, with
            that form (``terms.parquet``'s ``written``: "llms": "LLMs"); empty for a build made
            before it. Read with ``terms``, once for every reader of the load.
        embeddings: float32 ``(papers, dim)`` memory map.
        xy: float32 ``(papers, 2)`` map positions.
        topic_index: int ``(papers,)`` row of each paper's topic in ``topics`` (-1: outlier, topic -1).
        quoted_ids: object ``(papers,)`` doc ids percent-encoded for URLs (made on first use).
        short_ids: object ``(papers,)`` short ids for reading-list links (``explorer.state.readinglist``;
            the build's ``short_id`` column, read on first use).
        edits: the curation edits applied (``pipeline.analysis.curation``), oldest first.
        skipped_edits: those that no longer match any topic or paper (e.g. after a rebuild).
        curation_error: why the curation file could not be read, or None.

    ``papers`` has a ``moved`` column (moved to another topic by hand) and ``tables.topics`` a
    ``curated`` one (renamed or merged by hand).
    """

    name: str
    build_id: str
    folder: Path
    root: Path
    manifest: Manifest
    papers: pd.DataFrame
    tables: TopicTables
    terms: pd.DataFrame
    years: pd.DataFrame
    topic_years: pd.DataFrame
    embeddings: np.ndarray
    xy: np.ndarray
    topic_index: np.ndarray
    _topic_pos: dict[int, int] = field(repr=False)
    build_key: str = ""
    edits_key: str = ""
    edits: tuple[dict, ...] = ()
    skipped_edits: tuple[dict, ...] = ()
    curation_error: str | None = None
    #: The build's ``map.json`` (colours, touching topics, spacing), or None in builds before it.
    stored_map: StoredMap | None = field(default=None, repr=False)
    written: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies this corpus in caches: (root, name, :func:`build_key` + the edits' hash)."""
        build = self.build_key or self.build_id
        return (str(self.root), self.name, f"{build}+{self.edits_key}" if self.edits_key else build)

    @property
    def text_key(self) -> tuple[str, str, str]:
        """(root, name, :func:`build_key`): for caches of the texts alone (edits do not change them)."""
        return (str(self.root), self.name, self.build_key or self.build_id)

    @property
    def n_papers(self) -> int:
        return len(self.papers)

    @property
    def topic_ids(self) -> np.ndarray:
        return self.tables.topics["topic"].to_numpy()

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
    def colouring(self) -> palette.Colouring:
        """The topics' colours (``palette.map_colouring``: touching topics never share one), the
        same on the map, in every chart and in the offline export. The build computed them for its
        own topics (``map.json``); after topic edits, or for a build without the file, they are
        computed here from the same positions, by the same function."""
        if self.stored_map is not None and not self.edits:
            return self.stored_map.colouring
        return palette.map_colouring(self.xy[:, 0], self.xy[:, 1], self.papers["topic"].to_numpy(), self.topic_ids)

    @property
    def map_spacing(self) -> float | None:
        """How close the closest papers lie on the map (``blobs.point_spacing``), from the build's
        ``map.json``; None when the build has none (then measured when the map is drawn). Topic
        edits move no paper on the map, so it holds for them too."""
        return self.stored_map.spacing if self.stored_map is not None else None

    def topic_colour(self, topic: int) -> str:
        """Topic ``topic``'s colour (grey for outliers)."""
        return self.colouring.colour(topic)

    def topic_colours(self, topics) -> list[str]:
        return [self.colouring.colour(int(t)) for t in topics]

    # The ids below are made on first use, not by the load: a hash or a string a paper, seconds
    # for a million papers that the map's first view does not need.

    @cached_property
    def quoted_ids(self) -> np.ndarray:
        """object ``(papers,)``: doc ids percent-encoded for URLs."""
        return self.papers["doc_id"].map(lambda d: quote(str(d), safe="")).to_numpy(dtype=object)

    @cached_property
    def short_ids(self) -> np.ndarray:
        """object ``(papers,)``: short ids for reading-list links (``explorer.state.readinglist``): the
        build's ``short_id`` column, or made from the doc ids for a build without it (0.9 s a million)."""
        ids = paper_short_ids(self.papers)
        ids.setflags(write=False)
        return ids

    @cached_property
    def _doc_pos(self) -> pd.Index:
        return pd.Index(self.papers["doc_id"].to_numpy(dtype=object))

    @cached_property
    def _short_pos(self) -> pd.Index:
        return pd.Index(self.short_ids)

    @cached_property
    def venues(self) -> list[str]:
        return sorted(self.papers["venue"].dropna().unique().tolist())

    def shown_term(self, term: str) -> str:
        """``term`` as every page shows it: as the corpus's papers write it ("LLMs", "Gaussian
        processes"); a phrase outside the vocabulary word by word. Terms are looked up as they are."""
        return shown_term(str(term), self.written)

    def shown_terms(self, terms) -> list[str]:
        return [self.shown_term(t) for t in terms]

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

    def short_rows(self, ids: list[str]) -> np.ndarray:
        """Rows of papers by short id (-1 where unknown); vectorised."""
        return self._short_pos.get_indexer(ids).astype(np.int64)

    def topic_pos(self, topic: int | None) -> int | None:
        """Row of topic ``topic`` in ``tables.topics`` (and the topic arrays), or None if unknown."""
        return None if topic is None else self._topic_pos.get(int(topic))

    def topic_label(self, topic: int) -> str:
        pos = self.topic_pos(topic)
        if pos is None:
            return "outliers" if topic == -1 else f"topic {topic}"
        return str(self.tables.topics["label"].iat[pos])


def load_corpus(root: Path, name: str, folder: Path | None = None) -> Corpus:
    """Read every artifact of corpus ``name`` under ``root`` (``explorer.state.corpus_files``).

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
    stamp = build_key(folder)  # taken before reading: a folder replaced meanwhile gets a new key on the next rerun
    manifest = artifacts.read_manifest(folder)
    papers = load_papers(folder, name)
    terms = read_terms(folder)
    written = written_forms(terms)
    tables = read_topic_tables(folder, written)
    topics = tables.topics
    topic_pos = {int(t): i for i, t in enumerate(topics["topic"].to_numpy())}
    embeddings = artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True)
    check_shapes(
        name, len(papers), len(topics), embeddings, tables.distribution, tables.topic_embeddings, tables.similarity
    )

    # -1 where a paper's topic is not in the topics table (outliers kept as topic -1).
    topic_index = pd.Index(topics["topic"].to_numpy()).get_indexer(papers["topic"].to_numpy()).astype(np.int32)
    topic_index.setflags(write=False)

    xy = papers[["x", "y"]].to_numpy(dtype=np.float32)
    xy.setflags(write=False)

    stored_map = read_map(folder, topics)
    return Corpus(
        name=name,
        build_id=folder.name,
        folder=folder,
        root=root,
        manifest=manifest,
        papers=papers,
        tables=tables,
        terms=terms,
        years=artifacts.read_table(folder, schema.YEARS),
        topic_years=artifacts.read_table(folder, schema.TOPIC_YEARS),
        embeddings=embeddings,
        xy=xy,
        topic_index=topic_index,
        _topic_pos=topic_pos,
        build_key=stamp,
        stored_map=stored_map,
        written=written,
    )


@dataclass(frozen=True)
class StoredMap:
    """The build's ``map.json``, read: the topics' colours and the papers' spacing on the map
    (``blobs.point_spacing``; None when the file does not say)."""

    colouring: palette.Colouring
    spacing: float | None


def read_map(folder: Path, topics: pd.DataFrame) -> StoredMap | None:
    """The build's ``map.json`` when it is there and names a colour for each of ``topics``' ids;
    else None, and the app computes the same from the positions (the file holds nothing else)."""
    try:
        data = json.loads((folder / schema.MAP).read_text(encoding="utf-8"))
        colouring = palette.Colouring.from_dict(data)
        spacing = None if data.get("spacing") is None else float(data["spacing"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    ids = {int(t) for t in topics["topic"] if int(t) >= 0}
    return StoredMap(colouring, spacing) if set(colouring.colours) == ids else None


# ------------------------------------------------------------------------------------------
# Topic curation (rename, merge, move) applied on load
# ------------------------------------------------------------------------------------------


def with_edits(base: Corpus, edits: list[dict], edits_key: str) -> Corpus:
    """``base`` with curation ``edits`` applied (``pipeline.analysis.topic_edits.curate``: renames, merges
    and moves, the topic tables folded where topics merged); ``base`` is untouched."""
    cur = curate(base.papers, base.tables, list(edits))
    out = replace(
        base,
        papers=cur.papers,
        tables=cur.tables,
        topic_years=cur.topic_years,
        topic_index=cur.topic_index,
        _topic_pos={int(t): i for i, t in enumerate(cur.tables.topics["topic"].to_numpy())},
        edits_key=edits_key,
        edits=tuple(edits),
        skipped_edits=tuple(cur.skipped),
    )
    # Already made: share them (edits change no doc id and no row).
    for name in ("keyword_years", "quoted_ids", "short_ids", "_doc_pos", "_short_pos"):
        if name in base.__dict__:
            out.__dict__[name] = base.__dict__[name]
    return out


def parse_edits(raw: bytes, source: str) -> list[dict]:
    """The edits in the bytes of a curation file (``pipeline.analysis.curation`` format)."""
    return Curation.parse(raw.decode("utf-8", errors="replace"), source).edits


def build_key(folder: Path) -> str:
    """The one identity of a build in every cache of the app: the build folder's name plus a
    stamp of its manifest file (modification and change time, inode, size).

    A published build's folder name is unique, but a plain folder copied in by hand keeps the
    corpus's name whatever it holds; the manifest's stamp changes whenever it is replaced (a copy
    writes a new file, even one that keeps the original modification time). Costs one ``stat``.
    """
    try:
        st = (folder / schema.MANIFEST).stat()
        stamp = f"{st.st_mtime_ns}.{st.st_ctime_ns}.{st.st_ino}.{st.st_size}"
    except OSError:
        stamp = "0"
    return f"{folder.name}@{stamp}"


def read_curation(root: Path, name: str) -> bytes | None:
    """The curation file's bytes (a few kB), or None when there is none."""
    try:
        return curation_path(root, name).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"unreadable: {exc}".encode()


def edits_key(raw: bytes) -> str:
    """The identity of a curation file's content (``Corpus.edits_key``)."""
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def with_curation(base: Corpus, root: Path, name: str, key: str, raw: bytes) -> Corpus:
    """``base`` with the edits of curation file bytes ``raw`` (hashed to ``key``) applied; ``base``
    with the file's error (``Corpus.curation_error``) when the file cannot be read."""
    try:
        edits = parse_edits(raw, str(curation_path(root, name)))
    except CurationError as exc:
        return replace(base, edits_key=key, curation_error=str(exc))
    return with_edits(base, edits, key) if edits else base
