"""The clustering's size-dependent parameters: topics to merge down to, Leiden runs, HDBSCAN sizes.

:func:`resolve_params` fills in every value ``ClusterParams`` leaves to the corpus size; the
result (:class:`ResolvedClusterParams`) is what the clustering runs with and what the manifest
stores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pipeline.core.config import ClusterParams


@dataclass(frozen=True)
class ResolvedClusterParams:
    """``ClusterParams`` with every size-dependent value filled in (stored in the manifest)."""

    method: str
    seed: int
    resolution: float
    runs: int
    min_cluster_size: int
    min_samples: int
    selection: str
    n_topics: int
    smooth_k: int
    reassign_outliers: bool


def target_topics(n: int) -> int:
    """Number of topics to merge down to: sqrt(n)/2.3, at least min(6, n/6).

    38 papers -> 6 topics, 3,281 -> 25, 9,761 -> 43, 18,682 -> 59, 100,000 -> 137. Measured in
    benchmarks/results/clustering-tuning.md: fewer topics than this buys agreement with coarse
    labels but hides structure users want to see; many more gives the "hundreds of tiny topics"
    of vanilla BERTopic.
    """
    return int(max(1, round(math.sqrt(n) / TOPICS_DIVISOR), min(6, n // 6)))


#: ``target_topics``: sqrt(n) / this many topics.
TOPICS_DIVISOR = 2.3


#: Below this many papers "auto" clusters with Ward on the embeddings themselves: a graph of a few
#: hundred papers has too few papers per micro topic for the consensus merge (on the 38 NeurIPS
#: 2026 abstracts Ward gives six topics of 4-9 papers that read as fields), and Ward has no seed.
AUTO_GRAPH_MIN = 500


#: Leiden runs of the graph clustering up to this many papers; larger graphs get fewer
#: (:func:`default_runs`).
RUNS_FULL = 40
RUNS_FULL_UP_TO = 5_000
RUNS_MIN = 3


def default_runs(n: int) -> int:
    """Leiden runs for ``n`` papers: 40 up to 5,000, then 40 * sqrt(5,000 / n), at least 3.

    A one-year conference (a few thousand papers) gets 40 runs, each a fraction of a second; from
    about 18,000 papers on the counts are those the clustering had before (21 at 18,661, 20 at
    20,000, 9 at 100,000, 3 at a million). Each run is one Leiden pass over a graph of about 15 n
    edges (8 s at 100,000 papers here), so 40 runs would cost minutes at 100,000 papers and most of
    an hour at a million. Fewer runs cost seed stability (ICML 2024: 5 runs 0.67, 10 runs 0.75, 20
    runs 0.86; EVALUATION.md, "Cost"); 40 runs that each leave out a fifth of the papers
    (:data:`RUN_SHARE`) raised stability on 90% samples on every corpus measured (EVALUATION.md,
    "Since issue 20").
    """
    if n <= RUNS_FULL_UP_TO:
        return RUNS_FULL
    return max(RUNS_MIN, round(RUNS_FULL * math.sqrt(RUNS_FULL_UP_TO / n)))


def uses_projection(params: ClusterParams) -> bool:
    """Whether the clustering needs a UMAP projection (only the HDBSCAN method does)."""
    return params.method == "hdbscan"


#: Whether the graph clustering's borders are smoothed by default (one round of kNN majority vote,
#: ``smooth_k`` unset). Its papers are already placed by the vote of 40 runs; a majority of each
#: paper's neighbours on top of that pulled border papers into the largest topic (2-3 points of the
#: papers on conferences of 600-1,000). Off, on twenty corpora, seeds 0-5 (EVALUATION.md, "No
#: smoothing after the runs' vote"): the largest topic smaller in every cell, stability on 90%
#: samples up in 35 of 40, label coverage up on 17 corpora; IJCAI's areas lose 0.013 NMI and 0.024
#: ARI (still above every baseline) and ICML 2024 0.034 of label coverage; on 37 years of NeurIPS
#: (18,661 papers) stability falls by 0.014 and four more labels of 59 are weak. Other methods keep it.
GRAPH_SMOOTH = False


def resolve_params(params: ClusterParams, n: int) -> ResolvedClusterParams:
    """Fill in the size-dependent defaults for a corpus of ``n`` papers.

    ``method="auto"`` is the graph clustering from :data:`AUTO_GRAPH_MIN` papers and Ward on the
    embeddings below; every method merges to :func:`target_topics` (``n_topics``). The HDBSCAN
    values (``min_cluster_size`` about sqrt(n)/5 for its small dense "micro" topics, see
    benchmarks/results/clustering-tuning.md) and ``smooth_k`` are resolved for every method and
    stored in the manifest; only ``hdbscan`` uses the first two. ``smooth_k`` is 0 (no smoothing)
    for ``graph`` unless set (:data:`GRAPH_SMOOTH`).
    """
    mcs = params.min_cluster_size or max(2, round(math.sqrt(n) / 5))
    ms = params.min_samples or max(1, round(mcs / 2))
    method = params.method
    if method == "auto":
        method = "graph" if n >= AUTO_GRAPH_MIN else "ward"
    smooth = min(15, mcs - 1) if mcs > 2 and (method != "graph" or GRAPH_SMOOTH) else 0
    smooth = params.smooth_k if params.smooth_k is not None else smooth
    return ResolvedClusterParams(
        method=method,
        seed=int(params.seed),
        resolution=float(params.resolution or 0.0),
        runs=max(1, int(params.runs or default_runs(n))),
        min_cluster_size=int(mcs),
        min_samples=int(ms),
        selection=params.selection,
        n_topics=int(params.n_topics or target_topics(n)),
        smooth_k=int(smooth),
        reassign_outliers=params.reassign_outliers,
    )
