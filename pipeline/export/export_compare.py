"""The comparison with a reference corpus, as the offline export carries it.

``python -m pipeline export NEW --reference REF`` and the app's download (from a page whose URL
names ``ref=``) add to the file what the app's *What changed* page shows at a glance, built from
the stored or computed :class:`~pipeline.analysis.comparison.Comparison` (its ``to_dict`` records):

* the summary (what is new, what grew, what faded, with intervals and the size of change the
  corpus can show), every reference topic's share then and now with intervals, the distinctive
  terms, the new corpus's topics matched to the reference's;
* the ``LISTED`` most novel papers with their ``PRIOR`` closest reference papers: only those
  reference papers' titles, years and links travel, not the reference's texts;
* the reference's map (its points container, 11 bytes a paper, at most ``REF_MAP_MAX`` papers)
  with the new papers on it (the ``OVERLAY_MAX`` most novel, as in the app), and the reference's
  titles for the map's tooltips when they compress to at most ``REF_TITLES_MAX`` bytes (NeurIPS
  1987-2023: 18,661 titles, 0.4 MB).

Three parts, each a ``<script>`` element of the page (``ComparePart``); the page shows them as a
second view, "What changed", beside the corpus's map and papers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis.comparison import Comparison
from pipeline.analysis.distinctive import min_support
from pipeline.analysis.topic_files import read_topics
from pipeline.core import artifacts, schema
from pipeline.core.manifest import Manifest
from pipeline.export.export_common import gzip_json, http_url, text_or_none, topic_table
from pipeline.formats import palette
from pipeline.formats.blobs import TITLE_CHARS, Blob, points_blob

#: Most novel papers listed with their closest prior work (as many as the app's list).
LISTED = 25
#: Closest reference papers shown under each (the app shows three).
PRIOR = 3
#: New papers drawn on the reference's map, most novel first (the app's limit).
OVERLAY_MAX = 5_000
#: Reference papers drawn on its map; a larger reference is drawn from a seeded random sample.
REF_MAP_MAX = 200_000
#: The reference's titles (for the map's tooltips) travel when they compress to this many bytes.
REF_TITLES_MAX = 2_000_000
#: Columns of the reference's papers read for the export.
REF_COLUMNS = ["doc_id", "row", "title", "year", "url", "topic", "x", "y", "was_outlier", "placed"]


@dataclass(frozen=True)
class ComparePart:
    """What the page carries of a comparison.

    Attributes:
        meta: small facts the page reads first: ``ref`` (the reference's name), ``papers``,
            ``map_papers`` (reference papers on its map: all, or a sample), ``titles`` (whether
            the reference's titles are in the file).
        data: gzip JSON: ``summary`` (the comparison's), ``shares``, ``terms``, ``new_topics``
            (records of the comparison's tables), ``listed`` (the most novel papers: rank, row in
            the exported corpus, novelty, p_value, far, ref_topic, prior ``[[doc_id, sim], ...]``),
            ``prior`` (doc_id -> title ``t``, year ``yr``, link ``u``, row on the reference's map
            ``r``), ``overlay`` (row, x, y, far of the new papers drawn on the reference's map),
            ``novelty`` (histogram ``edges``/``counts`` of every new paper's novelty, ``p95``).
        ref_points: the reference's map (``pipeline.formats.blobs.points_blob``).
        ref_titles: gzip JSON ``{"t": titles, "yr": years}`` of the map's rows, or None.
    """

    meta: dict
    data: bytes
    ref_points: Blob
    ref_titles: bytes | None


def reference_tables(root: Path, name: str) -> tuple[pd.DataFrame, pd.DataFrame, Manifest]:
    """The reference's papers (``REF_COLUMNS`` it has, in row order), topics and manifest, as built
    (the comparison the CLI stores is of the builds' own topics), labels as the app shows them."""
    folder = artifacts.corpus_path(root, name)
    manifest = artifacts.read_manifest(folder)
    papers = artifacts.read_table(folder, schema.PAPERS, columns=REF_COLUMNS)
    papers = papers.sort_values("row", kind="stable").reset_index(drop=True)
    topics = read_topics(folder)[["topic", "label", "keywords", "x", "y"]]
    return papers, topics, manifest


def compare_part(
    result: Comparison,
    new_ids: list[str],
    ref_papers: pd.DataFrame,
    ref_topics: pd.DataFrame,
    *,
    synthetic: bool = False,
    note: str | None = None,
    seed: int = 0,
) -> ComparePart:
    """The comparison ``result`` (a :class:`~pipeline.analysis.comparison.Comparison` of the exported corpus
    against a reference) as the page's parts.

    Args:
        new_ids: the exported corpus's doc ids, in the order of its rows in the file.
        ref_papers: the reference's papers in row order: ``doc_id, title, topic, x, y``;
            ``year, url, was_outlier, placed, moved`` when present.
        ref_topics: the reference's topics: ``topic, label``; ``keywords, x, y`` when present.
        synthetic: the reference is generated benchmark data (its map says so on a PNG).
        note: said under the comparison's title (e.g. that it is of the builds' own topics).
    """
    s = result.summary
    ref_name = str(s.reference.name)
    ref_papers = ref_papers.reset_index(drop=True)
    shown, points, titles_blob = reference_map(ref_name, ref_papers, ref_topics, synthetic=synthetic, seed=seed)
    map_row = pd.Series(np.arange(len(shown)), index=shown["doc_id"].astype(str).to_numpy())
    map_row = map_row[~map_row.index.duplicated()]
    data = page_data(result, {d: i for i, d in enumerate(new_ids)}, ref_papers, map_row)
    meta = {
        "ref": ref_name,
        "papers": len(ref_papers),
        "map_papers": int(len(shown)),
        "titles": titles_blob is not None,
        "years": s.reference.to_dict()["years"],
        "note": note,
    }
    return ComparePart(meta=meta, data=gzip_json(data), ref_points=points, ref_titles=titles_blob)


def reference_map(
    ref_name: str, ref_papers: pd.DataFrame, ref_topics: pd.DataFrame, *, synthetic: bool, seed: int
) -> tuple[pd.DataFrame, Blob, bytes | None]:
    """The reference's map: its papers drawn (every one, or a seeded sample of a very large
    reference), their points container, and their titles and years when they compress small enough."""
    n_ref = len(ref_papers)
    rows = np.arange(n_ref)
    if n_ref > REF_MAP_MAX:
        rows = np.sort(np.random.default_rng(seed).choice(n_ref, REF_MAP_MAX, replace=False))
    shown = ref_papers.iloc[rows].reset_index(drop=True)
    table = topic_table(ref_topics, ref_papers["topic"].astype(int).to_numpy())
    points = points_blob(ref_name, shown, table, synthetic=synthetic)

    titles_blob = None
    titles = [(text_or_none(t) or "(untitled)")[:TITLE_CHARS] for t in shown["title"]]
    years = (
        [None if pd.isna(v) else int(v) for v in pd.to_numeric(shown["year"], errors="coerce")]
        if "year" in shown
        else None
    )
    packed = gzip_json({"t": titles, "yr": years})
    if len(packed) <= REF_TITLES_MAX:
        titles_blob = packed
    return shown, points, titles_blob


def page_data(result: Comparison, row_of: dict[str, int], ref_papers: pd.DataFrame, map_row: pd.Series) -> dict:
    """The comparison's data part (``ComparePart.data`` before compression).

    Args:
        row_of: the exported corpus's rows by doc id.
        map_row: rows of the reference's map by doc id.
    """
    tables = result.to_dict(["shares", "terms", "matches"])
    papers = result.papers
    listed = papers.head(LISTED)
    over = papers.head(OVERLAY_MAX)
    over = over[[d in row_of for d in over["doc_id"]]]
    novelty = papers["novelty"].to_numpy(dtype=float)
    bins = min(60, max(10, len(novelty) // 5))
    counts, edges = np.histogram(novelty, bins=bins) if len(novelty) else (np.zeros(0), np.zeros(0))
    return {
        "summary": _finite(result.summary.to_dict()),
        "shares": tables["shares"],
        "terms": tables["terms"],
        "new_topics": [r for r in tables["matches"] if r["side"] == "b"],
        "listed": [_listed(r, row_of) for r in listed.itertuples()],
        "prior": prior_work(listed, ref_papers, map_row),
        "overlay": {
            "row": [row_of[d] for d in over["doc_id"]],
            "x": [round(float(v), 4) for v in over["x"]],
            "y": [round(float(v), 4) for v in over["y"]],
            "far": [bool(v) for v in over["far"]],
            "sizes": list(palette.placed_sizes(len(over))),  # far, near: as the app draws them
        },
        "novelty": {
            "edges": [round(float(v), 4) for v in edges],
            "counts": [int(v) for v in counts],
            "p95": _finite(result.summary.calibration.novelty_p95),
        },
        "min_support": int(min_support(len(papers))),
        "colours": {
            "grew": palette.GREW,
            "shrank": palette.SHRANK,
            "same": palette.SAME,
            "far": palette.FAR,
            "ink": palette.INK,
        },
    }


def _listed(r, row_of: dict[str, int]) -> dict:
    """One of the most novel papers (a row of the comparison's papers) as the page lists it."""
    return {
        "rank": int(r.rank),
        "row": row_of.get(str(r.doc_id)),
        "novelty": round(float(r.novelty), 4),
        "p_value": round(float(r.p_value), 4),
        "far": bool(r.far),
        "ref_topic": int(r.ref_topic),
        "prior": [
            [str(d), round(float(x), 3)] for d, x in list(zip(r.neighbour_ids, r.neighbour_sims, strict=True))[:PRIOR]
        ],
    }


def prior_work(listed: pd.DataFrame, ref_papers: pd.DataFrame, map_row: pd.Series) -> dict[str, dict]:
    """The closest prior work of the ``listed`` papers: only those reference papers travel (title
    ``t``, year ``yr``, link ``u``, row on the reference's map ``r``), by doc id."""
    by_id = ref_papers.assign(doc_id=ref_papers["doc_id"].astype(str)).drop_duplicates("doc_id").set_index("doc_id")
    prior = {}
    for ids in listed["neighbour_ids"]:
        for doc_id in list(ids)[:PRIOR]:
            doc_id = str(doc_id)
            if doc_id in prior or doc_id not in by_id.index:
                continue
            rec = by_id.loc[doc_id]
            year = pd.to_numeric(rec.get("year"), errors="coerce") if "year" in by_id else None
            prior[doc_id] = {
                "t": text_or_none(rec["title"]) or "(untitled)",
                "yr": None if year is None or pd.isna(year) else int(year),
                "u": http_url(rec.get("url")) if "url" in by_id else None,
                "r": int(map_row[doc_id]) if doc_id in map_row.index else None,
            }
    return prior


def _finite(value):
    """``value`` with every non-finite float replaced by None (the page's JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
