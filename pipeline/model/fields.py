"""Fields: a conference's topics grouped into a few broad subjects, each with its own label.

Two named levels (issue 20): the map shows the fields' labels when it shows the whole corpus and
the topics' labels once you zoom in, and the topic list groups topics under their field. A field is
a group of whole topics, so the two levels always nest: every paper of a topic is in the topic's
field.

How they are made (:func:`group_topics`): Ward's method on the topics' embeddings (the mean of
their papers' vectors, normalised, the vectors the map's layout also starts from), cut at
:func:`field_count` groups (about the square root of the number of topics: 24 topics give 5
fields, 59 give 8). Each field is then named by the same labeller as the topics, from its own
papers against the whole corpus (``pipeline.model.represent.fit_topics``), with its own support:
a field label that fewer than half of its papers use is marked weak wherever it is shown, as a
topic's is.

The read side (:func:`field_table`) makes one row per field from the topics table: its label as
shown, its papers, and where the map writes its label (the label position of the field's most
central topic, so the label always sits on the field's own papers even when they lie in two
places on the map).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pipeline.model.label_evidence import shown_label

#: No fields below this many topics: a handful of topics is its own overview.
MIN_TOPICS = 8
#: At most this many fields (a million papers have hundreds of topics; an overview needs few names).
MAX_FIELDS = 12
#: The topics table's columns for fields (``pipeline.core.schema.TOPIC_COLUMNS``).
FIELD_COLUMNS = ("field", "field_label", "field_label_support")
#: Decimals the topic embeddings are rounded to before Ward's method: the last bits of a float
#: sum differ between processors (numpy picks SIMD paths at run time), and a near-tie in the merge
#: must not fall differently on another machine.
CENTROID_DECIMALS = 6


def field_count(n_topics: int) -> int:
    """How many fields ``n_topics`` topics are grouped into: none under :data:`MIN_TOPICS`, else
    about their square root, 3 to :data:`MAX_FIELDS`."""
    if n_topics < MIN_TOPICS:
        return 0
    return int(min(MAX_FIELDS, max(3, round(math.sqrt(n_topics)))))


def group_topics(topic_ids, centroids: np.ndarray, sizes) -> dict[int, int]:
    """Each topic's field (topic id -> field id); empty when there are too few topics for fields.

    Ward's method on the normalised topic embeddings, cut at :func:`field_count` groups. Field ids
    are 0, 1, ... by papers (most first), ties by the smallest topic id in the field.

    Args:
        topic_ids: the k topic ids, in the order of ``centroids``' rows.
        centroids: float ``(k, dim)`` topic embeddings.
        sizes: papers per topic, in the same order.
    """
    from scipy.cluster.hierarchy import fcluster, linkage

    ids = [int(t) for t in topic_ids]
    n_fields = field_count(len(ids))
    if not n_fields:
        return {}
    c = np.asarray(centroids, dtype=np.float64)
    c = c / np.clip(np.linalg.norm(c, axis=1, keepdims=True), 1e-12, None)
    groups = fcluster(linkage(np.round(c, CENTROID_DECIMALS), method="ward"), n_fields, criterion="maxclust")
    sizes = [int(s) for s in sizes]
    members: dict[int, list[int]] = {}
    for j, g in enumerate(groups.tolist()):
        members.setdefault(int(g), []).append(j)
    order = sorted(members.values(), key=lambda js: (-sum(sizes[j] for j in js), min(ids[j] for j in js)))
    return {ids[j]: f for f, js in enumerate(order) for j in js}


def field_table(topics: pd.DataFrame) -> pd.DataFrame:
    """One row per field of a topics table (``field, label, label_support, size, n_topics, x, y,
    topics``), by field id; empty when the table has no fields (a build made before them, or one
    with too few topics).

    ``label`` is as shown (a weak one ends in the weak mark); ``size`` sums the topics' ``size``;
    ``x, y`` are the label position of the field's most central topic (the one whose label
    position is nearest, weighted by papers, to its other topics'); null when no topic has one.
    """
    columns = ["field", "label", "label_support", "size", "n_topics", "x", "y", "topics"]
    if "field" not in topics or not len(topics):
        return pd.DataFrame(columns=columns)
    rows = []
    known = topics[topics["field"].notna()]
    for field, grp in known.groupby(known["field"].astype(int), sort=True):
        sizes = grp["size"].to_numpy(dtype=float) if "size" in grp else np.ones(len(grp))
        x, y = _anchor(grp, sizes)
        support = float(grp["field_label_support"].iloc[0]) if "field_label_support" in grp else math.nan
        label = str(grp["field_label"].iloc[0]) if "field_label" in grp else ""
        rows.append(
            {
                "field": int(field),
                "label": shown_label(label, support) if label.strip() else f"field {int(field) + 1}",
                "label_support": support,
                "size": int(sizes.sum()),
                "n_topics": len(grp),
                "x": x,
                "y": y,
                "topics": [int(t) for t in grp["topic"]],
            }
        )
    return pd.DataFrame(rows, columns=columns)


def _anchor(grp: pd.DataFrame, sizes: np.ndarray) -> tuple[float | None, float | None]:
    if "x" not in grp or "y" not in grp:
        return None, None
    xy = grp[["x", "y"]].to_numpy(dtype=float)
    ok = np.isfinite(xy).all(axis=1)
    if not ok.any():
        return None, None
    xy, w = xy[ok], sizes[ok]
    cost = (np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=2) * w[None, :]).sum(axis=1)
    best = int(np.lexsort((np.arange(len(cost)), -w, cost))[0])  # ties: the larger topic, then the first
    return float(xy[best, 0]), float(xy[best, 1])
