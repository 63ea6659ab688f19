"""Topic lineage within one multi-year build: where each period's topics come from.

Each paper of a period votes for the topics of its nearest papers of the period before; the votes,
balanced to the topics' shares (iterative proportional fitting), become the flows of a Sankey
chart, and each topic's share in the last two periods gets an interval (:mod:`pipeline.analysis.intervals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.analysis.intervals import share_changes
from pipeline.analysis.novelty import neighbours, rows_of


@dataclass(frozen=True)
class Lineage:
    """Topics of one build across periods.

    Attributes:
        periods: ``[(first, last), ...]`` inclusive year ranges, in order.
        nodes: one row per (period, topic) with papers: period (index), topic, n, share (of the
            period's papers).
        links: one row per (earlier period topic, later period topic): period (index of the later
            period), source, target, votes (later papers' neighbour votes, in papers), from_share
            (share of the target's papers whose nearest earlier papers are in the source), flow
            (share of the later period, balanced so that each node's flows add up to its share).
        changes: one row per topic: its share in the period before the last and in the last, with
            intervals (see :func:`share_changes`, Bonferroni over the topics), topic column first.
    """

    periods: list[tuple[int, int]]
    nodes: pd.DataFrame
    links: pd.DataFrame
    changes: pd.DataFrame


def default_periods(years: np.ndarray, n_periods: int = 5, *, min_papers: int = 50) -> list[tuple[int, int]]:
    """Cut the years into up to ``n_periods`` consecutive ranges of similar weight, a year weighing
    the square root of its paper count.

    Equal paper counts would give a growing field's last years one period each (NeurIPS has 20
    times more papers in 2023 than in 1995) and equal lengths would leave its early periods with a
    few hundred papers; the square root sits between the two (NeurIPS 1987-2023: 1987-1999,
    2000-2009, 2010-2017, 2018-2021, 2022-2023). Every period keeps ``min_papers`` papers or more
    where the corpus allows it.
    """
    years = np.asarray(years, dtype=float)
    years = years[~np.isnan(years)].astype(int)
    if len(years) == 0:
        return []
    uniq, counts = np.unique(years, return_counts=True)
    n_periods = max(1, min(n_periods, len(uniq), len(years) // max(min_papers, 1) or 1))
    weights = np.sqrt(counts)
    cum = np.cumsum(weights) / weights.sum()
    periods, start = [], 0
    for q in [i / n_periods for i in range(1, n_periods)]:
        end = max(int(np.searchsorted(cum, q, side="left")), start)
        while end < len(uniq) - 1 and counts[start : end + 1].sum() < min_papers:
            end += 1
        if end >= len(uniq) - 1 or counts[end + 1 :].sum() < min_papers:
            break
        periods.append((int(uniq[start]), int(uniq[end])))
        start = end + 1
    periods.append((int(uniq[start]), int(uniq[-1])))
    return periods


def balance(votes: np.ndarray, rows: np.ndarray, cols: np.ndarray, *, iterations: int = 2000) -> np.ndarray:
    """Scale ``votes`` (iterative proportional fitting) so that rows sum to ``rows`` and columns to ``cols``.

    The result is the table closest to the votes (in Kullback-Leibler divergence) with those
    margins: each earlier topic's whole share flows somewhere, each later topic's share comes from
    somewhere, in the proportions the neighbour votes give. Rows or columns without any vote keep
    no flow.
    """
    table = np.asarray(votes, dtype=float).copy()
    rows, cols = np.asarray(rows, dtype=float), np.asarray(cols, dtype=float)
    for _ in range(iterations):
        r = table.sum(axis=1)
        table *= np.where(r > 0, rows / np.where(r > 0, r, 1), 0)[:, None]
        c = table.sum(axis=0)
        table *= np.where(c > 0, cols / np.where(c > 0, c, 1), 0)[None, :]
        if np.allclose(table.sum(axis=1), rows, rtol=1e-6, atol=1e-9):
            break
    return table


def lineage(
    years: np.ndarray,
    topics: np.ndarray,
    embeddings: np.ndarray,
    periods: Sequence[tuple[int, int]],
    *,
    k: int = 10,
    level: float = 0.95,
) -> Lineage:
    """Where each period's topics come from: each paper's ``k`` nearest papers of the period before.

    Args:
        years: float ``(n,)`` (NaN: unknown, left out).
        topics: int ``(n,)``.
        embeddings: float32 ``(n, dim)`` normalised.
        periods: consecutive inclusive year ranges.
    """
    years = np.asarray(years, dtype=float)
    topics = np.asarray(topics, dtype=np.int64)
    which = np.full(len(years), -1)
    for i, (lo, hi) in enumerate(periods):
        which[(years >= lo) & (years <= hi)] = i
    topic_ids = np.unique(topics[which >= 0]) if (which >= 0).any() else np.zeros(0, dtype=np.int64)
    col = np.searchsorted(topic_ids, topics)
    col = np.where(which >= 0, col, -1)
    totals = np.array([int((which == i).sum()) for i in range(len(periods))])
    grid = np.zeros((len(periods), len(topic_ids)))
    np.add.at(grid, (which[which >= 0], col[which >= 0]), 1)
    nodes = pd.DataFrame(
        [
            {"period": i, "topic": int(t), "n": int(grid[i, j]), "share": grid[i, j] / max(totals[i], 1)}
            for i in range(len(periods))
            for j, t in enumerate(topic_ids.tolist())
            if grid[i, j] > 0
        ],
        columns=["period", "topic", "n", "share"],
    )
    links = []
    for i in range(1, len(periods)):
        before, after = np.flatnonzero(which == i - 1), np.flatnonzero(which == i)
        if len(before) == 0 or len(after) == 0:
            continue
        idx, _ = neighbours(rows_of(embeddings, after), rows_of(embeddings, before), k)
        votes = np.zeros((len(topic_ids), len(topic_ids)))
        src = col[before][idx]  # (after, k) topics of the earlier neighbours
        dst = np.repeat(col[after][:, None], idx.shape[1], axis=1)
        np.add.at(votes, (src.ravel(), dst.ravel()), 1.0 / idx.shape[1])
        flow = balance(votes, grid[i - 1] / totals[i - 1], grid[i] / totals[i])
        received = votes.sum(axis=0)
        for s, t in zip(*np.nonzero(votes), strict=True):
            links.append(
                {
                    "period": i,
                    "source": int(topic_ids[s]),
                    "target": int(topic_ids[t]),
                    "votes": float(votes[s, t]),
                    "from_share": float(votes[s, t] / received[t]) if received[t] else 0.0,
                    "flow": float(flow[s, t]),
                }
            )
    link_table = pd.DataFrame(links, columns=["period", "source", "target", "votes", "from_share", "flow"])
    first = max(len(periods) - 2, 0)  # emerging and declining: the last period against the one before
    changes = share_changes(grid[first], int(totals[first]), grid[-1], int(totals[-1]), level=level)
    changes.insert(0, "topic", topic_ids.astype(np.int64))
    return Lineage(list(periods), nodes, link_table, changes)


def ancestry(lineage_: Lineage, topic: int, *, min_share: float = 0.1) -> set[tuple[int, int]]:
    """The (period, topic) nodes ``topic`` in the last period descends from: walking back, every
    source that gives at least ``min_share`` of a kept node's papers."""
    last = len(lineage_.periods) - 1
    keep = {(last, int(topic))}
    frontier = {int(topic)}
    links = lineage_.links
    for i in range(last, 0, -1):
        step = links[(links["period"] == i) & links["target"].isin(frontier) & (links["from_share"] >= min_share)]
        frontier = set(step["source"].astype(int).tolist())
        keep |= {(i - 1, t) for t in frontier}
    return keep
