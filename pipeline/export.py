"""A corpus as ONE self-contained HTML file: map, topics, searchable table, abstracts, offline.

The file inlines plotly.js and every piece of data, so it works opened from disk (``file://``)
with no network: it references no external script, stylesheet, font or image. Reviewers who will
not install Python open it in any browser.

Safety: the data travels as JSON inside ``<script type="application/json">`` with ``<``, ``>``
and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (so a title holding ``</script>`` or
``<!--`` cannot end the element early); the page's script renders every untrusted string with
``textContent``, escapes ``<``, ``>`` and ``&`` in plotly hover text and labels, and links only
``http(s)`` URLs (non-http URLs are also dropped here).

The HTML/JS/CSS template is ``pipeline/templates/export.html``; this module fills its three
markers: the page title, the plotly.js bundle and the data.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import uuid
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import artifacts, schema
from pipeline.curation import Curation, CurationError, apply_edits, curation_path

TEMPLATE = "export.html"
#: Markers in the template, each replaced exactly once in a single pass (so a marker string
#: inside the plotly bundle or the data can never be substituted again).
MARKERS = ("{{TITLE}}", "/*{{PLOTLY}}*/", "{{DATA}}")
PAPER_REQUIRED = ("doc_id", "title", "abstract", "topic", "x", "y")
TOPIC_REQUIRED = ("topic", "label")
#: Map coordinates are rounded to this many decimals: UMAP maps span about 20 units, so 0.001 is
#: far below a pixel even zoomed in tenfold, and it keeps ~6 characters per number.
COORD_DECIMALS = 3
HTTP_URL = re.compile(r"^https?://[^\s]+$", re.IGNORECASE)
JSON_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def export_html(
    root: Path,
    name: str,
    out: Path,
    *,
    papers: pd.DataFrame | None = None,
    topics: pd.DataFrame | None = None,
    curated: bool = True,
) -> Path:
    """Write corpus ``name`` as one self-contained, offline HTML file.

    Args:
        root: artifacts folder holding the corpus (its manifest is always read from here).
        name: corpus name.
        out: the HTML file to write (parent folders are created; written atomically).
        papers: papers to export instead of ``papers.parquet`` (e.g. after curation). Needs the
            columns ``doc_id, title, abstract, topic, x, y``; uses ``title_derived, year, venue,
            authors, url, keywords, label, topic_prob`` when present.
        topics: topics to export instead of ``topics.parquet``. Needs ``topic, label``; uses
            ``keywords, x, y`` when present (else the median position of the topic's papers).
            Sizes are always counted from ``papers``; topics without papers are left out, and
            papers whose topic is not in the table get a generic label ("topic 7", "outliers").
        curated: when neither table is given, apply the corpus's topic edits
            (``<root>/<name>.curation.json``, see ``pipeline.curation``) as the app does.

    Returns:
        ``out``.

    Raises:
        ArtifactError: the corpus cannot be read, or a table lacks a required column.
    """
    folder = artifacts.corpus_path(root, name)
    manifest = artifacts.read_manifest(folder)
    edits = []
    if curated and papers is None and topics is None:
        try:
            edits = Curation.load(curation_path(root, name)).edits
        except CurationError as exc:
            raise artifacts.ArtifactError(str(exc)) from None
    if papers is None:
        papers = artifacts.read_table(folder, schema.PAPERS)
    if topics is None:
        topics = artifacts.read_table(folder, schema.TOPICS)
    if edits:
        applied = apply_edits(papers, topics, edits)
        papers, topics = applied.papers, applied.topics
    data = export_data(name, manifest, papers, topics)
    page = render_page(data)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return out


def render_page(data: dict) -> str:
    """The HTML page: the template with its title, plotly.js and ``data`` (see :func:`export_data`)."""
    from plotly.offline import get_plotlyjs

    plotly_js = get_plotlyjs()
    if "</script" in plotly_js.lower() or "<!--" in plotly_js:  # would end our <script> early
        raise RuntimeError("the plotly.js bundle contains '</script' or '<!--'; it cannot be inlined safely")
    template = resources.files("pipeline").joinpath("templates", TEMPLATE).read_text(encoding="utf-8")
    values = {
        "{{TITLE}}": html.escape(f"{data['meta']['name']}: topic map"),
        "/*{{PLOTLY}}*/": plotly_js,
        "{{DATA}}": json_for_script(data),
    }
    for marker in MARKERS:
        if template.count(marker) != 1:
            raise RuntimeError(f"template {TEMPLATE} must contain {marker} exactly once")
    pattern = re.compile("|".join(re.escape(m) for m in MARKERS))
    return pattern.sub(lambda m: values[m.group(0)], template)


def json_for_script(data: dict) -> str:
    """Compact JSON that is safe inside a ``<script>`` element (no ``<``, ``>`` or ``&`` in it)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).translate(JSON_ESCAPES)


def export_data(name: str, manifest: dict, papers: pd.DataFrame, topics: pd.DataFrame) -> dict:
    """The data the page reads, column-wise with short keys to keep the file small.

    Returns:
        ``{"meta": {...}, "topics": {...}, "papers": {...}}``. ``papers`` holds one list per
        field, all of length N: ``id`` doc ids, ``t`` titles, ``a`` abstracts, ``k`` topic ids,
        ``x``/``y`` rounded map positions, and when the corpus has them ``yr`` years (null when
        unknown), ``v``/``lb`` indexes into ``meta.venues``/``meta.labels`` (-1 when unknown),
        ``au`` authors, ``kw`` author keywords, ``u`` http(s) links, ``p`` topic probabilities;
        ``td`` lists the indexes of papers whose title was derived. ``topics`` holds ``id``,
        ``label``, ``size``, ``kw`` (keyword lists), ``x``, ``y``, one entry per topic with papers.
    """
    _require(papers, PAPER_REQUIRED, "papers")
    _require(topics, TOPIC_REQUIRED, "topics")
    papers = papers.reset_index(drop=True)
    topic_ids = papers["topic"].astype(int).to_numpy()
    x = papers["x"].astype(float).to_numpy()
    y = papers["y"].astype(float).to_numpy()

    p: dict[str, list] = {
        "id": papers["doc_id"].astype(str).tolist(),
        "t": _texts(papers["title"]),
        "a": _texts(papers["abstract"]),
        "k": topic_ids.tolist(),
        "x": _coords(x),
        "y": _coords(y),
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
            codes, uniques = pd.factorize(papers[column].map(_text_or_none), sort=True)
            p[key] = codes.tolist()
            meta_lists[meta_key] = [str(u) for u in uniques]
    for column, key in (("authors", "au"), ("keywords", "kw")):
        if column in papers and papers[column].notna().any():
            p[key] = [_text_or_none(v) for v in papers[column]]
    if "url" in papers:
        urls = [_http_url(v) for v in papers["url"]]
        if any(urls):
            p["u"] = urls
    if "topic_prob" in papers:
        p["p"] = [None if pd.isna(v) else round(float(v), 2) for v in papers["topic_prob"]]

    t = _topic_columns(topics, topic_ids, x, y)
    valid_years = years.dropna().astype(int) if years is not None else pd.Series([], dtype=int)
    embedding = manifest.get("embedding") or {}
    meta = {
        "name": name,
        "papers": len(papers),
        "topics": sum(1 for i in t["id"] if i != -1),
        "built": manifest.get("created_at"),
        "model": _model_name(embedding.get("model")),
        "backend": embedding.get("backend"),
        "build_id": manifest.get("build_id"),
        "years": [int(valid_years.min()), int(valid_years.max())] if len(valid_years) else None,
        "exported": pd.Timestamp.now(tz="UTC").strftime("%Y-%m-%dT%H:%M:%S%z"),
        **meta_lists,
    }
    return {"meta": meta, "topics": t, "papers": p}


def _require(df: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise artifacts.ArtifactError(f"cannot export: the {what} table lacks the column(s) {', '.join(missing)}.")


def _text_or_none(value) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    text = str(value).strip()
    return text or None


def _texts(column: pd.Series) -> list[str]:
    return [_text_or_none(v) or "" for v in column]


def _coords(values: np.ndarray) -> list[float | None]:
    rounded = np.round(values, COORD_DECIMALS)
    return [None if not math.isfinite(v) else v for v in rounded.tolist()]


def _finite(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _http_url(value) -> str | None:
    text = _text_or_none(value)
    return text if text and HTTP_URL.match(text) else None


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


def _topic_columns(topics: pd.DataFrame, topic_ids: np.ndarray, x: np.ndarray, y: np.ndarray) -> dict[str, list]:
    """One entry per topic that has papers, in the table's order, then any topic only papers name."""
    present, counts = np.unique(topic_ids, return_counts=True)
    size = dict(zip(present.tolist(), counts.tolist(), strict=True))
    rows = {}
    for rec in topics.to_dict("records"):
        tid = int(rec["topic"])
        if tid in size and tid not in rows:
            rows[tid] = rec
    for tid in present.tolist():
        rows.setdefault(tid, {"topic": tid, "label": "outliers" if tid == -1 else f"topic {tid}"})
    out: dict[str, list] = {"id": [], "label": [], "size": [], "kw": [], "x": [], "y": []}
    for tid, rec in rows.items():
        mask = topic_ids == tid
        cx, cy = _finite(rec.get("x")), _finite(rec.get("y"))
        if cx is None or cy is None:  # e.g. a topic made by merging: the median of its papers
            finite = mask & np.isfinite(x) & np.isfinite(y)
            cx, cy = (float(np.median(x[finite])), float(np.median(y[finite]))) if finite.any() else (None, None)
        out["id"].append(tid)
        out["label"].append(_text_or_none(rec.get("label")) or f"topic {tid}")
        out["size"].append(int(size[tid]))  # the papers exported, not a stale stored size
        out["kw"].append(_keywords(rec.get("keywords")))
        out["x"].append(None if cx is None else round(cx, COORD_DECIMALS))
        out["y"].append(None if cy is None else round(cy, COORD_DECIMALS))
    return out
