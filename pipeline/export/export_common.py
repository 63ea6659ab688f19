"""The pieces both parts of the offline export write: the corpus (``pipeline.export.export``) and its
comparison with a reference (``pipeline.export.export_compare``).

Corpus strings are untrusted: ``text_or_none`` turns missing values into None and ``http_url``
keeps only ``http(s)`` links; ``gzip_json`` is the compressed JSON the page inflates with the
browser's ``DecompressionStream``; ``topic_table`` is the topics as the page's map lists them.
"""

from __future__ import annotations

import gzip
import json
import math
import re

import numpy as np
import pandas as pd

from pipeline.model.label_evidence import shown_labels
from pipeline.model.topic_parts import broad_reason, median_spread, shown_parts

HTTP_URL = re.compile(r"^https?://[^\s]+$", re.IGNORECASE)
GZIP_LEVEL = 6


def gzip_json(data) -> bytes:
    """Compact JSON, gzip-compressed (``mtime=0``: the same data gives the same bytes)."""
    return gzip.compress(
        json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(), GZIP_LEVEL, mtime=0
    )


def text_or_none(value) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    text = str(value).strip()
    return text or None


def column_texts(column: pd.Series) -> list[str]:
    """Each value's text, "" where missing."""
    return [text_or_none(v) or "" for v in column]


def http_url(value) -> str | None:
    text = text_or_none(value)
    return text if text and HTTP_URL.match(text) else None


def topic_table(topics: pd.DataFrame, topic_ids: np.ndarray) -> pd.DataFrame:
    """One row per topic that has papers, in the table's order, then any topic only papers name
    (``topic, label, keywords, x, y, parts, broad``; x and y may be missing: the map then uses the
    median). Labels are as the app shows them: weak ones end in
    ``pipeline.model.label_evidence.WEAK_MARK``; a broad topic's ``parts`` (``[label, papers, support]``) and
    ``broad`` (why it is broad) as the Topics page says them (``pipeline.model.topic_parts``)."""
    present = set(np.unique(topic_ids).tolist())
    median = median_spread(topics)
    rows, seen = [], set()
    named = topics.assign(label=[text_or_none(v) or "" for v in topics["label"]])
    for rec, raw, label in zip(topics.to_dict("records"), named["label"], shown_labels(named), strict=True):
        tid = int(rec["topic"])
        if tid in present and tid not in seen:
            seen.add(tid)
            parts = shown_parts(rec)
            rows.append(
                {
                    "topic": tid,
                    "label": label if raw else f"topic {tid}",
                    "keywords": rec.get("keywords"),
                    "x": rec.get("x"),
                    "y": rec.get("y"),
                    "parts": [[name, size, round(support, 2)] for name, size, support, _ in parts],
                    "broad": broad_reason(rec, median) if parts else None,
                }
            )
    for tid in sorted(present - seen):
        rows.append(
            {"topic": tid, "label": "outliers" if tid == -1 else f"topic {tid}", "keywords": None, "x": None, "y": None}
            | {"parts": [], "broad": None}
        )
    return pd.DataFrame(rows, columns=["topic", "label", "keywords", "x", "y", "parts", "broad"])
