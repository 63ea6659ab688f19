"""Broad topics and their parts: a large topic whose papers are less alike than the median
topic's is shown with the groups its papers form, each named, instead of one label forced on it.

Issue 20 asks that no topic hold more than 12% of a one-year conference unless its papers are as
alike as those of the corpus's median topic. The clustering cannot be made to split such topics
without losing stability and agreement elsewhere (EVALUATION.md, "Splitting the large loose
topics" and "Broad topics named by their parts"), so the build says which topics are broad and
what they hold: each broad topic's papers are split by k-means on the main directions of their
embeddings into about as many parts as keep a part near :data:`BROAD_SHARE` of the corpus (how
far the split holds when a tenth of the topic's papers is left out is measured and shown), and
each part is named by the same labeller as the topics, its terms weighed against its sibling
parts and the rest of the corpus (so a part's name says what sets it apart within the topic).

The topics table keeps, per topic, its ``spread`` and, for a broad topic, its parts' labels,
sizes, label supports and most central papers and the split's stability
(``schema.TOPIC_COLUMNS``); the app shows them on the topic's page, the offline export when the
topic is chosen.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.core.ranking import evenly_spread
from pipeline.model.label_evidence import shown_label

#: A topic holding more than this share of the papers, whose papers are less alike than the
#: median topic's (its :func:`topic_spread` under the median), is broad (issue 20's criterion).
BROAD_SHARE = 0.12
#: At most this many parts per broad topic.
MAX_PARTS = 4
#: No part holds fewer papers: a label read on fewer says little (at 20 papers, 14 using its words
#: give a support of 0.56, the lower bound of its 80% interval), and a group of a few papers is
#: no group the reader can trust.
MIN_PART_PAPERS = 20
#: The split reads a broad topic's papers in the first :data:`SPLIT_DIMS` principal components of
#: their embeddings, where k-means (:data:`SPLIT_INITS` starts, the best kept) finds the parts: on
#: the broad topics of eleven one-year conferences, parts made so agreed at 0.87 (ARI, mean) with
#: parts made from 90% of the topic's papers, against 0.45 for Ward's method on the embeddings
#: and 0.78 for k-means on them (EVALUATION.md, "Broad topics named by their parts").
SPLIT_DIMS = 10
SPLIT_INITS = 50
#: Papers of a broad topic the split reads (evenly spread); the others join the part whose centre
#: is nearest.
SPLIT_SAMPLE = 4_000
#: The split is made again on this many random 90% samples of the topic's papers; its stability
#: is the mean agreement (ARI) of the parts with those made from each sample, on the papers both hold.
STABILITY_SAMPLES = 5
STABILITY_SHARE = 0.9
#: Most central papers kept per part (the app lists their titles).
PART_PAPERS = 3

#: The columns this module adds to the topics table, with an empty value for a topic that is not
#: broad (``schema.TOPIC_COLUMNS`` describes them).
PART_COLUMNS = ("part_labels", "part_sizes", "part_supports", "part_doc_ids")
#: Below this :func:`split_stability` the parts are one way among several to cut the topic, and the
#: app says so (as it does for a topic's own stability).
STEADY_PARTS = 0.5


def topic_spread(embeddings: np.ndarray, topics: np.ndarray) -> dict[int, float]:
    """Per topic, how alike its papers are: the mean cosine similarity of its papers to their
    normalised mean embedding (1 when all are the same; lower for a topic of several subjects).

    Args:
        embeddings: float ``(n, dim)`` normalised.
        topics: int ``(n,)`` topic per paper (``-1`` ignored).
    """
    topics = np.asarray(topics)
    out = {}
    for t in sorted(set(topics.tolist()) - {-1}):
        rows = np.asarray(embeddings[topics == t], dtype=np.float64)
        mean = rows.mean(axis=0)
        mean /= max(float(np.linalg.norm(mean)), 1e-12)
        out[int(t)] = float((rows @ mean).mean())
    return out


def broad_topics(spread: dict[int, float], sizes: dict[int, int], total: int) -> list[int]:
    """The broad topics, largest first: more than :data:`BROAD_SHARE` of ``total`` papers and a
    spread under the median topic's."""
    if len(spread) < 2 or total <= 0:
        return []
    median = float(np.median(list(spread.values())))
    broad = [t for t in spread if sizes.get(t, 0) > BROAD_SHARE * total and spread[t] < median]
    return sorted(broad, key=lambda t: (-sizes[t], t))


def n_parts(size: int, total: int) -> int:
    """How many parts a broad topic of ``size`` papers is split into: enough that a part holds
    :data:`BROAD_SHARE` of the papers on average, two at least, :data:`MAX_PARTS` at most, and no
    more than parts of :data:`MIN_PART_PAPERS` papers each can fill."""
    fill = max(2, size // MIN_PART_PAPERS)
    return int(min(MAX_PARTS, fill, max(2, math.ceil(size / (BROAD_SHARE * total)))))


def to_split(spread: dict[int, float], sizes: dict[int, int], total: int) -> list[int]:
    """The broad topics (:func:`broad_topics`) that are split into parts: those larger than the
    average topic too (in a corpus of fewer than nine topics a topic of 12% may be an average one)
    and of at least two parts of :data:`MIN_PART_PAPERS` papers."""
    mean = total / max(len(sizes), 1)
    return [t for t in broad_topics(spread, sizes, total) if sizes[t] > mean and sizes[t] >= 2 * MIN_PART_PAPERS]


def _parts_of(embeddings: np.ndarray, k: int) -> np.ndarray | None:
    """:func:`split_topic` into ``k`` parts, or fewer where a part would hold fewer than
    :data:`MIN_PART_PAPERS` papers; None when even two parts cannot (the topic forms no groups)."""
    for parts in range(k, 1, -1):
        found = split_topic(embeddings, parts)
        if np.bincount(found).min() >= MIN_PART_PAPERS:
            return found
    return None


def split_topic(embeddings: np.ndarray, k: int) -> np.ndarray:
    """One topic's papers split into ``k`` parts (:data:`SPLIT_DIMS` principal components, then
    k-means); int part per paper, numbered by size (largest 0; ties by the first paper). Above
    :data:`SPLIT_SAMPLE` papers the split reads an evenly spread sample and every paper joins the
    part whose centre is nearest (ties to the lower part)."""
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA

    n = len(embeddings)
    if n <= k:
        return np.arange(n, dtype=np.int64)
    rows = np.asarray(embeddings, dtype=np.float64)
    sample = evenly_spread(n, SPLIT_SAMPLE)
    dims = min(SPLIT_DIMS, len(sample) - 1, rows.shape[1])
    pca = PCA(n_components=dims, random_state=0).fit(rows[sample])
    model = KMeans(n_clusters=k, n_init=SPLIT_INITS, random_state=0).fit(pca.transform(rows[sample]))
    points = pca.transform(rows)
    distance = ((points[:, None, :] - model.cluster_centers_[None, :, :]) ** 2).sum(axis=2)
    return _by_size(np.argmin(distance, axis=1).astype(np.int64))  # argmin takes the first of equal distances


def split_stability(embeddings: np.ndarray, parts: np.ndarray) -> float:
    """How far the split of a topic's papers (``parts``, from :func:`split_topic`) holds when a
    tenth of them is left out: the mean ARI, over :data:`STABILITY_SAMPLES` seeded samples of
    :data:`STABILITY_SHARE` of the papers, between ``parts`` and the split of the sample."""
    from sklearn.metrics import adjusted_rand_score

    n, k = len(parts), int(parts.max()) + 1
    scores = []
    for seed in range(STABILITY_SAMPLES):
        keep = np.sort(np.random.default_rng(seed).choice(n, int(STABILITY_SHARE * n), replace=False))
        scores.append(adjusted_rand_score(parts[keep], split_topic(embeddings[keep], k)))
    return float(np.mean(scores))


def _by_size(parts: np.ndarray) -> np.ndarray:
    """Parts renumbered by size, largest first, ties by the part's first paper."""
    ids = np.unique(parts)
    first = {int(p): int(np.flatnonzero(parts == p)[0]) for p in ids}
    order = sorted(ids.tolist(), key=lambda p: (-int((parts == p).sum()), first[p]))
    new = {p: j for j, p in enumerate(order)}
    return np.array([new[int(p)] for p in parts], dtype=np.int64)


def topic_parts(
    topics: np.ndarray,
    embeddings: np.ndarray,
    doc_ids: list[str],
    label: Callable[[np.ndarray], dict[int, tuple[str, object]]],
) -> tuple[dict[int, float], dict[int, dict[str, list]]]:
    """Every topic's spread, and the parts of the broad ones.

    Args:
        topics: int ``(n,)`` topic per paper (``-1``: none).
        embeddings: float ``(n, dim)`` normalised.
        doc_ids: ``(n,)`` paper ids.
        label: labels a clustering (int per paper, ``-1`` for papers in no part) as the build labels
            topics: part id -> ``(label, support)`` with a ``value`` (``represent.topic_labels``).

    Returns:
        ``(spread, parts)``: topic -> spread; broad topic -> :data:`PART_COLUMNS` -> one entry per
        part, largest part first, and ``part_stability`` -> :func:`split_stability`.
    """
    topics = np.asarray(topics)
    spread = topic_spread(embeddings, topics)
    sizes = {t: int((topics == t).sum()) for t in spread}
    split: dict[int, np.ndarray] = {}
    for topic in to_split(spread, sizes, len(topics)):
        members = np.flatnonzero(topics == topic)
        found = _parts_of(embeddings[members], n_parts(len(members), len(topics)))
        if found is not None:
            split[topic] = found
    broad = list(split)
    if not broad:
        return spread, {}
    parts = np.full(len(topics), -1, dtype=np.int64)
    owner: dict[int, tuple[int, int]] = {}  # part id -> (topic, part of the topic)
    steady: dict[int, float] = {}
    for topic, found in split.items():
        members = np.flatnonzero(topics == topic)
        steady[topic] = split_stability(embeddings[members], found)
        for j in range(int(found.max()) + 1):
            owner[len(owner)] = (topic, j)
        parts[members] = found + (len(owner) - int(found.max()) - 1)
    named = label(parts)
    ids = np.asarray(doc_ids)
    out: dict[int, dict] = {t: {c: [] for c in PART_COLUMNS} | {"part_stability": steady[t]} for t in broad}
    for pid, (topic, _) in sorted(owner.items()):
        members = np.flatnonzero(parts == pid)
        rows = np.asarray(embeddings[members], dtype=np.float64)
        mean = rows.mean(axis=0)
        central = members[np.argsort(-(rows @ mean), kind="stable")[:PART_PAPERS]]
        name, support = named[pid]
        out[topic]["part_labels"].append(name)
        out[topic]["part_sizes"].append(len(members))
        out[topic]["part_supports"].append(float(support.value))
        out[topic]["part_doc_ids"].append(ids[central].tolist())
    return spread, out


def add_part_columns(table: pd.DataFrame, spread: dict[int, float], parts: dict[int, dict[str, list]]) -> pd.DataFrame:
    """``table`` (one row per topic) with ``spread``, ``part_stability`` and :data:`PART_COLUMNS`
    (NaN and empty lists for a topic that is not broad)."""
    table = table.copy()
    table["spread"] = [spread.get(int(t), np.nan) for t in table["topic"]]
    table["part_stability"] = [parts.get(int(t), {}).get("part_stability", np.nan) for t in table["topic"]]
    for column in PART_COLUMNS:
        table[column] = [list(parts.get(int(t), {}).get(column, [])) for t in table["topic"]]
    return table


def without_stale_parts(table: pd.DataFrame, touched=()) -> pd.DataFrame:
    """``table`` with :data:`PART_COLUMNS` (empty where missing: a build made before parts) emptied
    for every topic whose parts no longer describe its papers: those in ``touched`` (papers moved in
    or out, or merged, by hand) and those whose parts no longer add up to its size (papers added to
    the build after the parts were made). A topic renamed by hand keeps them."""
    table = table.copy()
    for column in PART_COLUMNS:
        if column not in table:
            table[column] = [[] for _ in range(len(table))]
    for column in ("spread", "part_stability"):
        if column not in table:
            table[column] = np.nan
    touched = {int(t) for t in touched}
    stale = [
        int(topic) in touched or sum(int(s) for s in sizes) not in (0, int(size))
        for topic, sizes, size in zip(table["topic"], table["part_sizes"], table["size"], strict=True)
    ]
    for column in PART_COLUMNS:
        table[column] = [[] if gone else list(v) for v, gone in zip(table[column], stale, strict=True)]
    table["part_stability"] = np.where(stale, np.nan, table["part_stability"].to_numpy(dtype=float))
    return table


def shown_parts(row) -> list[tuple[str, int, float, list[str]]]:
    """A topic's parts as the app and the export show them: ``(label, papers, support, doc_ids)``,
    largest first, a weak label marked as a topic's is (``label_evidence.shown_label``); empty for a
    topic that is not broad."""
    labels = list(row.get("part_labels", []))  # a pandas row, or a dict
    if not labels:
        return []
    return [
        (shown_label(str(label), float(support)), int(size), float(support), [str(d) for d in ids])
        for label, size, support, ids in zip(
            labels, row["part_sizes"], row["part_supports"], row["part_doc_ids"], strict=True
        )
    ]


def median_spread(topics: pd.DataFrame) -> float:
    """The median topic's spread in a topics table (NaN when none is measured: a build made before)."""
    values = topics["spread"].to_numpy(dtype=float) if "spread" in topics else np.array([])
    values = values[~np.isnan(values)]
    return float(np.median(values)) if len(values) else float("nan")


def broad_reason(row, median_spread: float) -> str:
    """Why a topic is broad and what its parts are, in two sentences (plain text; the caller
    escapes it for Markdown or HTML and lists the parts, :func:`shown_parts`)."""
    return (
        f"It holds {float(row['share']):.0%} of the papers, more than the {BROAD_SHARE:.0%} a topic may hold "
        "unless its papers are as alike as the median topic's, and they are less alike (spread "
        f"{float(row['spread']):.2f} against {median_spread:.2f}: the mean cosine similarity of a topic's papers "
        f"to their average). Its papers form {len(shown_parts(row))} groups, each named by the words its papers "
        "share and the other groups' papers use less. " + steadiness(float(row.get("part_stability", np.nan)))
    )


def steadiness(stability: float) -> str:
    """What a split's stability (:func:`split_stability`) says, in a sentence."""
    if stability != stability:
        return ""
    held = (
        f"The split holds when a tenth of the topic's papers is left out (agreement {stability:.2f}, ARI, 0-1)."
        if stability >= STEADY_PARTS
        else f"The split is one way among several to cut this topic: it moves when a tenth of its papers is left "
        f"out (agreement {stability:.2f}, ARI, 0-1); read the groups as hints."
    )
    return held
