"""A corpus as ONE self-contained HTML file: the app's map, search and papers, offline.

The file works opened from disk (``file://``) with no network and no Python: it references no
external script, stylesheet, font or image, and its Content-Security-Policy forbids every fetch.

What it carries (``ExportData``), each in a ``<script>`` element of its own:

* the map component's bundle (``frontend/dist/atlas-map.js``, the same code as the app's map) and
  the corpus's points container (``pipeline.formats.blobs``: 11 bytes a paper, base64);
* the papers' metadata (titles, years, venues, authors, links, short ids for reading lists) as
  gzip-compressed JSON, and the abstracts as a second gzip-compressed JSON read only when a paper
  is opened, a phrase is searched or a CSV is written (the browser inflates them with its own
  ``DecompressionStream``);
* the keyword index (``pipeline.analysis.bm25.export_index``), also gzip-compressed, so that the file's
  search ranks as the app's keyword search does: BM25 over the title and abstract as shown, same
  tokens, same float32 arithmetic, papers containing the exact phrase first;
* a small JSON of corpus facts and topics;
* with a reference (``export_html(..., reference=REF)``; the app's download from a page whose URL
  names ``ref=``), the comparison the app's *What changed* page shows, the reference's map with the
  new papers on it and the titles of their closest prior work (``pipeline.export.export_compare``).

Safety: JSON is written with ``<``, ``>`` and ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026`` (a title
holding ``</script>`` cannot end its element early); the binary parts are base64; the page renders
every untrusted string with ``textContent`` or on a canvas, and links only ``http(s)`` URLs.

The page (HTML/CSS/JS) is ``pipeline/export/templates/export.html``; this module fills its markers. The
page reads its state from the URL fragment with the app's parameter names (``#list=...``,
``#topic=3&q=...``, ``#tourdata=...&step=2``, ``#ref=REF&show=shares``), so an app link's query
string opens the same view.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
import os
import re
import uuid
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis import bm25
from pipeline.analysis.compare import compare_builds
from pipeline.analysis.curation import Curation, CurationError, curation_path
from pipeline.analysis.topic_edits import curate
from pipeline.analysis.topic_files import read_topic_tables, read_topics
from pipeline.core import artifacts, schema
from pipeline.core.inputs import ROOT
from pipeline.core.manifest import Manifest
from pipeline.core.ranking import RESULTS_PAGE
from pipeline.core.topic_tables import TopicTables
from pipeline.export.export_common import GZIP_LEVEL, column_texts, gzip_json, http_url, text_or_none, topic_table
from pipeline.export.export_compare import compare_part, reference_tables
from pipeline.formats.blobs import points_blob, unpack
from pipeline.formats.ids import paper_short_ids
from pipeline.model.label_evidence import weak_labels_note
from pipeline.model.place import own_topic_similarity

TEMPLATE = "export.html"
BUNDLE = ROOT / "frontend" / "dist" / "atlas-map.js"
#: Markers in the template, each replaced exactly once in a single pass (so a marker string
#: inside the bundle or the data can never be substituted again).
MARKERS = (
    "{{TITLE}}",
    "/*{{BUNDLE}}*/",
    "{{META}}",
    "{{POINTS}}",
    "{{PAPERS}}",
    "{{ABSTRACTS}}",
    "{{INDEX}}",
    "{{COMPARE}}",
)
PAPER_REQUIRED = ("doc_id", "title", "abstract", "topic", "x", "y")
TOPIC_REQUIRED = ("topic", "label")
JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


@dataclass(frozen=True)
class ExportData:
    """What the page is filled with (see the module docstring).

    Attributes:
        meta: corpus facts, topics (id, label, size, keywords), venue and label names, BM25 notes.
        points: the map's points container (``pipeline.formats.blobs.points_blob``).
        papers: gzip JSON, one list per field, all of length N: ``id`` doc ids, ``t`` titles,
            ``sid`` reading-list short ids, and when the corpus has them ``yr`` years (null when
            unknown), ``v``/``lb`` indexes into ``meta.venues``/``meta.labels`` (-1 when
            unknown), ``au`` authors, ``kw`` author keywords, ``u`` http(s) links, ``ts`` each
            paper's cosine similarity to its topic's embedding (2 decimals; null outside every
            topic); ``td`` lists the rows whose title was derived.
        abstracts: gzip JSON list of the N abstracts.
        index: gzip of the BM25 container (``pipeline.analysis.bm25.export_index``).
        compare: the comparison with a reference (``pipeline.export.export_compare.ComparePart``), or None.
    """

    meta: dict
    points: object
    papers: bytes
    abstracts: bytes
    index: bytes
    compare: object | None = None

    @property
    def sizes(self) -> dict[str, int]:
        """Bytes of each part as stored in the file (base64 for the binary ones)."""
        b64 = lambda n: 4 * math.ceil(n / 3)  # noqa: E731
        out = {
            "points": b64(len(self.points.data)),
            "papers": b64(len(self.papers)),
            "abstracts": b64(len(self.abstracts)),
            "index": b64(len(self.index)),
            "meta": len(json_for_script(self.meta)),
        }
        if self.compare is not None:
            out["compare"] = b64(len(self.compare.data))
            out["ref_points"] = b64(len(self.compare.ref_points.data))
            out["ref_titles"] = b64(len(self.compare.ref_titles or b""))
        return out


def export_html(
    root: Path,
    name: str,
    out: Path,
    *,
    papers: pd.DataFrame | None = None,
    topics: pd.DataFrame | None = None,
    curated: bool = True,
    reference: str | None = None,
) -> Path:
    """Write corpus ``name`` as one self-contained, offline HTML file.

    Args:
        root: artifacts folder holding the corpus (its manifest is always read from here).
        name: corpus name.
        out: the HTML file to write (parent folders are created; written atomically).
        papers: papers to export instead of ``papers.parquet`` (e.g. after curation). Needs the
            columns ``doc_id, title, abstract, topic, x, y``; uses ``title_derived, year, venue,
            authors, url, keywords, label, topic_similarity, was_outlier, placed, moved`` when
            present (``topic_similarity``: cosine to the topic's embedding; computed here when
            neither table is given). The keyword index is made from the titles and abstracts.
        topics: topics to export instead of ``topics.parquet``. Needs ``topic, label``; uses
            ``keywords, x, y`` when present (else the median position of the topic's papers), and
            ``label_support, curated`` to mark weak labels as the app does (``pipeline.model.label_evidence.shown_labels``).
            Sizes are always counted from ``papers``; topics without papers are left out, and
            papers whose topic is not in the table get a generic label ("topic 7", "outliers").
        curated: when neither table is given, apply the corpus's topic edits
            (``<root>/<name>.curation.json``, see ``pipeline.analysis.curation``) as the app does.
        reference: a corpus of ``root`` to compare with: the file then also holds the comparison
            (the stored one, ``python -m pipeline compare``, or computed now and stored), of the
            two builds' own topics.

    Returns:
        ``out``.

    Raises:
        ArtifactError: the corpus cannot be read, or a table lacks a required column.
        CompareError: the two corpora cannot be compared (the message says why).
    """
    folder = artifacts.corpus_path(root, name)
    manifest = artifacts.read_manifest(folder)
    edits = []
    if curated and papers is None and topics is None:
        try:
            edits = Curation.load(curation_path(root, name)).edits
        except CurationError as exc:
            raise artifacts.ArtifactError(str(exc)) from None
    if papers is None and topics is None:
        # As the app reads a build (pipeline.analysis.topic_files) and applies its edits (the same curate).
        papers = artifacts.read_table(folder, schema.PAPERS)
        tables = read_topic_tables(folder)
        if edits:
            applied = curate(papers, tables, edits)
            papers, tables = applied.papers, applied.tables
        papers = papers.assign(topic_similarity=paper_topic_similarity(folder, papers, tables))
        topics = tables.topics
    elif papers is None:
        papers = artifacts.read_table(folder, schema.PAPERS)
    elif topics is None:
        topics = read_topics(folder)
    data = export_data(name, manifest, papers, topics)
    if reference is not None:
        data = _with_reference(root, name, reference, data, edited=bool(edits))
    return _write_atomically(Path(out), render_page(data))


def _with_reference(root: Path, name: str, reference: str, data: ExportData, *, edited: bool) -> ExportData:
    """``data`` with the comparison against corpus ``reference`` (stored, or computed and stored)."""
    result, _ = compare_builds(root, name, artifacts.check_name(reference))
    ref_papers, ref_topics, ref_manifest = reference_tables(root, reference)
    note = None
    if edited or curation_path(root, reference).exists():
        note = "The comparison is of the two builds' own topics: topic edits made in the app are not applied to it."
    part = compare_part(
        result, data_ids(data), ref_papers, ref_topics, synthetic=bool(ref_manifest.synthetic), note=note
    )
    return with_comparison(data, part)


def _write_atomically(out: Path, page: str) -> Path:
    """Write ``page`` to ``out`` through a temporary file in the same folder, then rename it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def paper_topic_similarity(folder: Path, papers: pd.DataFrame, tables: TopicTables) -> np.ndarray:
    """Each paper's cosine similarity to its topic's embedding (``pipeline.model.place.own_topic_similarity``),
    from the build's embeddings and ``tables`` (after any edits: a merged topic's embedding is then
    the size-weighted mean of those merged, as ``pipeline.analysis.topic_edits.curate`` folds it for the app).

    Returns:
        float32 ``(len(papers),)``, NaN for papers outside every topic.
    """
    rows = papers["row"].to_numpy(dtype=np.int64)
    order = np.argsort(rows, kind="stable")  # the embeddings read in file order
    embeddings = artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True)
    index = pd.Index(tables.topics["topic"].to_numpy()).get_indexer(papers["topic"].to_numpy())
    out = np.empty(len(rows), dtype=np.float32)
    out[order] = own_topic_similarity(_Rows(embeddings, rows[order]), tables.topic_embeddings, index[order])
    return out


class _Rows:
    """Rows ``rows`` of an array, read a block at a time (``own_topic_similarity`` slices it)."""

    def __init__(self, array: np.ndarray, rows: np.ndarray) -> None:
        self.array, self.rows = array, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, part: slice) -> np.ndarray:
        return np.asarray(self.array[self.rows[part]])


def bundle() -> str:
    """The map component's bundle, checked safe to inline in a ``<script>`` element."""
    code = BUNDLE.read_text(encoding="utf-8")
    if "</script" in code.lower() or "<!--" in code:
        raise RuntimeError(f"{BUNDLE} contains '</script' or '<!--'; it cannot be inlined safely")
    return code


def data_ids(data: ExportData) -> list[str]:
    """The exported papers' doc ids, in the order of their rows in the file."""
    return json.loads(gzip.decompress(data.papers))["id"]


def with_comparison(data: ExportData, part) -> ExportData:
    """``data`` with a comparison (``pipeline.export.export_compare.ComparePart``) added."""
    from dataclasses import replace

    return replace(data, compare=part, meta={**data.meta, "compare": part.meta})


def render_page(data: ExportData) -> str:
    """The HTML page: the template filled with the bundle and ``data`` (see :func:`export_data`)."""
    template = resources.files("pipeline.export").joinpath("templates", TEMPLATE).read_text(encoding="utf-8")
    title = f"{data.meta['name']}: topic map"
    compare = ""
    if data.compare is not None:
        title += f" and what changed since {data.compare.meta['ref']}"
        b64 = lambda raw: base64.b64encode(raw).decode("ascii")  # noqa: E731
        compare = (
            f'<script type="application/octet-stream" id="atlas-compare" data-encoding="gzip">{b64(data.compare.data)}</script>\n'
            f'<script type="application/octet-stream" id="atlas-ref-points">{b64(data.compare.ref_points.data)}</script>\n'
        )
        if data.compare.ref_titles is not None:
            compare += f'<script type="application/octet-stream" id="atlas-ref-titles" data-encoding="gzip">{b64(data.compare.ref_titles)}</script>\n'
    values = {
        "{{TITLE}}": html.escape(title),
        "/*{{BUNDLE}}*/": bundle(),
        "{{META}}": json_for_script(data.meta),
        "{{POINTS}}": base64.b64encode(data.points.data).decode("ascii"),
        "{{PAPERS}}": base64.b64encode(data.papers).decode("ascii"),
        "{{ABSTRACTS}}": base64.b64encode(data.abstracts).decode("ascii"),
        "{{INDEX}}": base64.b64encode(data.index).decode("ascii"),
        "{{COMPARE}}": compare,
    }
    for marker in MARKERS:
        if template.count(marker) != 1:
            raise RuntimeError(f"template {TEMPLATE} must contain {marker} exactly once")
    pattern = re.compile("|".join(re.escape(m) for m in MARKERS))
    return pattern.sub(lambda m: values[m.group(0)], template)


def json_for_script(data) -> str:
    """Compact JSON that is safe inside a ``<script>`` element (no ``<``, ``>`` or ``&`` in it)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).translate(JSON_ESCAPES)


def export_data(name: str, manifest: Manifest, papers: pd.DataFrame, topics: pd.DataFrame) -> ExportData:
    """Everything the page reads (see ``ExportData``), from the corpus's tables."""
    _require(papers, PAPER_REQUIRED, "papers")
    _require(topics, TOPIC_REQUIRED, "topics")
    papers = papers.reset_index(drop=True)
    topic_ids = papers["topic"].astype(int).to_numpy()
    table = topic_table(topics, topic_ids)
    points = points_blob(name, papers, table)

    p: dict[str, list] = {
        "id": papers["doc_id"].astype(str).tolist(),
        "t": column_texts(papers["title"]),
        "sid": [str(s) for s in paper_short_ids(papers)],
    }
    if "title_derived" in papers:
        p["td"] = np.flatnonzero(papers["title_derived"].fillna(False).astype(bool).to_numpy()).tolist()
    years = None
    if "year" in papers and papers["year"].notna().any():
        years = pd.to_numeric(papers["year"], errors="coerce")
        p["yr"] = [None if pd.isna(v) else int(v) for v in years]
    meta_lists = {}
    for column, key, meta_key in (("venue", "v", "venues"), ("label", "lb", "labels")):
        if column in papers and papers[column].notna().any():
            codes, uniques = pd.factorize(papers[column].map(text_or_none), sort=True)
            p[key] = codes.tolist()
            meta_lists[meta_key] = [str(u) for u in uniques]
    for column, key in (("authors", "au"), ("keywords", "kw")):
        if column in papers and papers[column].notna().any():
            p[key] = [text_or_none(v) for v in papers[column]]
    if "url" in papers:
        urls = [http_url(v) for v in papers["url"]]
        if any(urls):
            p["u"] = urls
    if "topic_similarity" in papers:
        p["ts"] = [None if pd.isna(v) else round(float(v), 2) for v in papers["topic_similarity"]]

    index = bm25.export_index(bm25.index_texts(p["t"], column_texts(papers["abstract"])))
    indexed = "the title and abstract"

    valid_years = years.dropna().astype(int) if years is not None else pd.Series([], dtype=int)
    embedding = manifest.embedding
    sizes = dict(zip(*np.unique(topic_ids, return_counts=True), strict=True))
    meta = {
        "name": name,
        "papers": len(papers),
        "topics": sum(1 for t in table["topic"] if t != -1),
        "built": manifest.created_at,
        "model": _model_name(embedding.model),
        "backend": embedding.backend,
        "build_id": manifest.build_id,
        "years": [int(valid_years.min()), int(valid_years.max())] if len(valid_years) else None,
        "exported": pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%dT%H:%M:%S%z"),
        "synthetic": bool(manifest.synthetic),
        "topic_list": [
            {"id": int(t), "label": str(lab), "size": int(sizes.get(int(t), 0)), "kw": _keywords(kw)}
            | (
                {"parts": parts, "broad": broad} if parts else {}
            )  # a broad topic's parts, as the Topics page lists them
            for t, lab, kw, parts, broad in zip(
                table["topic"], table["label"], table["keywords"], table["parts"], table["broad"], strict=True
            )
        ],
        "weak_note": weak_labels_note(table["label"]),  # what a label's (?) means, as the app's map page says it
        "search": {"indexed": indexed, "terms": len(index_vocab(index)), "k": RESULTS_PAGE},
        **meta_lists,
    }
    return ExportData(
        meta=meta,
        points=points,
        papers=gzip_json(p),
        abstracts=gzip_json(column_texts(papers["abstract"])),
        index=gzip.compress(index.data, GZIP_LEVEL, mtime=0),
    )


def index_vocab(index) -> list[str]:
    return unpack(index.data)[0]["vocab"]


def _require(df: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise artifacts.ArtifactError(f"cannot export: the {what} table lacks the column(s) {', '.join(missing)}.")


def _model_name(model: str | None) -> str | None:
    if model in (None, ""):
        return None
    if model == "default":
        return "all-MiniLM-L6-v2"
    return Path(str(model)).name or str(model)


def _keywords(value, n: int = 10) -> list[str]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, str):
        items = [s.strip() for s in re.split(r"[;,]", value)]
    else:
        items = [str(s).strip() for s in list(value)]
    return [s for s in items if s][:n]
