"""The graph clustering: Leiden runs on the kNN graph, consensus micro topics, and their merge into
topics by how often the runs put their papers together (evidence accumulation).

Border papers (too few neighbours in their own micro topic) come out as ``-1``; the caller
(``pipeline.model.cluster.cluster``) places them. Measured in benchmarks/results/stability.md and
EVALUATION.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.model.cluster_graph import LeidenGraph, leiden_runs, snn_edges
from pipeline.model.cluster_params import ResolvedClusterParams
from pipeline.model.cluster_refine import merge_to, reassign_outliers

#: A paper is a core member of its micro topic when at least this share of its graph neighbours
#: are in the same micro topic; the others ("border" papers, flagged in ``raw_outlier``) neither
#: shape the micro topics' centroids nor vote in the merge, and join a topic last (:func:`vote_topics`).
CORE_SHARE = 0.5


#: Micro topics per target topic that the graph clustering's Leiden resolution is calibrated for
#: (measured, ten seeds: 2.6 gave ICML 2024 stability 0.86 against 0.69 for 3.5 and 4.5; 3.5 gave
#: IJCAI +0.007 NMI and +0.013 ARI; benchmarks/results/stability.md).
MICRO_PER_TOPIC = 2.6


@dataclass(frozen=True)
class GraphTopics:
    """The graph clustering's topics.

    Attributes:
        labels: int ``(n,)``: the merged topics; border papers ``-1``.
        voted: int ``(n,)`` or None: every paper in the topic whose core papers the runs put it
            with most (:func:`vote_topics`; the core papers of a topic the vote does not uphold
            stay in it, :func:`placed_topics`); None with a single run (the caller then places
            border papers by their nearest centroid).
    """

    labels: np.ndarray
    voted: np.ndarray | None


def graph_topics(knn: np.ndarray, embeddings: np.ndarray, p: ResolvedClusterParams) -> GraphTopics:
    """Topics from the kNN graph; border papers are ``-1`` in ``labels`` (placed in ``voted``).

    1. ``p.runs`` Leiden runs (modularity at ``p.resolution``, seeds from ``p.seed``) on the
       shared-neighbour graph (:func:`snn_edges`) find micro topics, about 2-3 times as many as
       the target. With :data:`SHARE_MIN_RUNS` runs or more, each run sees a random
       :data:`RUN_SHARE` of the papers (seeded by the run), the others sit it out.
    2. Consensus micro topics: Leiden once more, on the same edges weighted by the share of the
       runs that saw both ends which put them together.
    3. In each run and in the consensus, papers with fewer than ``CORE_SHARE`` of their
       neighbours in their own micro topic are border papers: left out of the merge.
    4. Each run's micro topics are merged to ``p.n_topics`` (average linkage on the cosine of their
       mean embeddings, :func:`merge_to`); the consensus micro topics are then merged by how often
       those runs put their papers in one topic (evidence accumulation), with Ward's method
       (:func:`merge_by_agreement`, :data:`MERGE_WARD`), no topic above :data:`GIANT_SHARE`.
    5. ``voted``: each paper joins the merged topic whose core papers the runs' merged topics held
       it with most (:func:`vote_topics`), border papers included; the core papers of a merged
       topic the vote does not uphold (it would keep under half of them) stay in it
       (:func:`placed_topics`).
    """
    n = len(knn)
    a, b, w = snn_edges(knn)
    graph = LeidenGraph(n, (a, b, w))
    resolution = p.resolution or calibrated_resolution(graph, p)
    subsample = RUN_SHARE < 1 and p.runs >= SHARE_MIN_RUNS
    if subsample:
        present = [np.random.default_rng(_run_seed(p.seed, r)).random(n) < RUN_SHARE for r in range(p.runs)]
    else:
        present = [np.ones(n, dtype=bool)] * p.runs
    seeds = [_run_seed(p.seed, r) for r in range(p.runs)]
    runs = leiden_runs(graph, (a, b, w), resolution, seeds, [None if keep.all() else keep for keep in present])
    if len(runs) == 1:
        consensus = runs[0]
    elif subsample:
        together = sum(((r[a] == r[b]) & k[a] & k[b]).astype(np.float64) for r, k in zip(runs, present, strict=True))
        both = sum((k[a] & k[b]).astype(np.float64) for k in present)
        consensus = graph.leiden(resolution, _run_seed(p.seed, p.runs), (w * together / np.maximum(both, 1)).tolist())
    else:
        together = sum((r[a] == r[b]).astype(np.float64) for r in runs)
        consensus = graph.leiden(resolution, _run_seed(p.seed, p.runs), (w * together).tolist())
    micro = _core(consensus, knn)
    if (micro == -1).all():  # no paper has most of its neighbours in its community: keep them all
        micro = consensus
    if len(runs) == 1:
        return GraphTopics(merge_to(micro, embeddings, p.n_topics), None)
    finals = [
        reassign_outliers(merge_to(_core_present(r, knn, keep), embeddings, p.n_topics), embeddings)
        for r, keep in zip(runs, present, strict=True)
    ]
    merged = merge_by_agreement(micro, finals, p.n_topics, embeddings)
    if not VOTE:
        return GraphTopics(merged, None)
    return GraphTopics(merged, placed_topics(merged, finals))


#: Place the papers by the runs' vote (:func:`vote_topics`) rather than border papers by their
#: nearest centroid. Measured on six corpora, six seeds (EVALUATION.md, "Papers placed by the
#: runs' vote"): stability on 90% samples rises on each.
VOTE = True


def vote_topics(merged: np.ndarray, finals: list[np.ndarray], chunk: int = 16_384) -> np.ndarray:
    """Every paper in the merged topic whose core papers the runs put it with most.

    The score of paper i for topic T is the sum over the runs of the share of T's core papers
    (``merged == T``) that the run's merged topics put with i: how many runs, in expectation,
    group i with a random core paper of T. A border paper, which the nearest centroid of one
    clustering would place, is placed by all the runs' clusterings at once (bagging): a tenth of
    the corpus more or less moves it less. Core papers almost always keep their topic. Ties go to
    the smaller topic id; sums of the same terms in the same order, so every processor agrees.

    Args:
        merged: int ``(n,)`` topics, ``-1`` for border papers; every topic has core papers.
        finals: int ``(n,)`` the runs' complete clusterings.
        chunk: papers scored at a time (memory: ``chunk`` x topics floats; at a million papers,
            435 topics and 3 runs the vote takes about 5 s).

    Returns:
        int ``(n,)``; ``-1`` only for a border paper no run put with any core paper (the caller
        places it by its nearest centroid).
    """
    ids, _, _, member = _members(merged)
    if not len(ids) or not finals:  # no topic to vote for, or no voters
        return np.asarray(merged, dtype=np.int64).copy()
    shares = [_share(member, final) for final in finals]  # (topic, the run's topic)
    out = np.empty(len(merged), dtype=np.int64)
    for s in range(0, len(merged), chunk):
        score = np.zeros((len(merged[s : s + chunk]), len(ids)))
        for share, final in zip(shares, finals, strict=True):
            score += share[:, final[s : s + chunk]].T
        best = ids[np.argmax(score, axis=1)]
        out[s : s + chunk] = np.where(score.max(axis=1) > 0, best, merged[s : s + chunk])  # no vote: as merged
    return out


#: A merged topic is upheld when the runs' vote keeps at least this share of its own core papers
#: in it (:func:`placed_topics`): a majority.
HELD_SHARE = 0.5
#: Whether a merged topic the vote does not uphold keeps its own core papers (:func:`placed_topics`).
KEEP_UNHELD = True


def placed_topics(merged: np.ndarray, finals: list[np.ndarray]) -> np.ndarray:
    """Every paper's topic: the runs' vote (:func:`vote_topics`), except that the core papers of a
    merged topic the vote does not uphold stay in it.

    Ward's merge on the runs' agreement can keep apart a group of micro topics that each run's own
    merge (average linkage down to as many topics) joins to larger ones: a small subject of its own,
    such as hyperbolic and manifold networks on NeurIPS 2021 (32 core papers). The vote then sends
    most of its core papers to those larger topics; what was left was a remnant of a few papers
    named as if it were a topic (2 of the 32), and the larger topics grew. So a topic
    whose core papers the vote keeps fewer than :data:`HELD_SHARE` of keeps all of them; every
    other paper is placed by the vote. Measured on twenty corpora (EVALUATION.md, "Topics the runs'
    vote does not uphold").
    """
    voted = vote_topics(merged, finals)
    if not KEEP_UNHELD:
        return voted
    ids, counts = np.unique(merged[merged >= 0], return_counts=True)
    kept = np.bincount(merged[(merged >= 0) & (voted == merged)], minlength=int(ids.max(initial=0)) + 1)[ids]
    unheld = np.isin(merged, ids[kept < HELD_SHARE * counts])
    return np.where(unheld, merged, voted)


def _members(labels: np.ndarray):
    """The groups of ``labels`` (``-1`` none): their sorted ids, the rows in one, each such row's
    group index, and the (group, paper) matrix whose rows sum to 1 over the group's papers."""
    from scipy import sparse

    ids = np.unique(labels[labels != -1])
    inlier = np.flatnonzero(labels != -1)
    rows = np.searchsorted(ids, labels[inlier])
    member = sparse.csr_matrix((np.ones(len(inlier)), (rows, inlier)), shape=(len(ids), len(labels)))
    return ids, inlier, rows, sparse.diags(1.0 / np.maximum(np.asarray(member.sum(axis=1)).ravel(), 1.0)) @ member


def _share(member, final: np.ndarray) -> np.ndarray:
    """Dense (group, topic of ``final``): the share of each group's papers in each topic."""
    from scipy import sparse

    onehot = sparse.csr_matrix(
        (np.ones(len(final)), (np.arange(len(final)), final)), shape=(len(final), int(final.max()) + 1)
    )
    return (member @ onehot).toarray()


#: Share of the papers each Leiden run of the graph clustering sees, when there are at least
#: :data:`SHARE_MIN_RUNS` runs (the others sit out that run: their edges weigh nothing there, and
#: they join the run's nearest topic before the vote). Runs that each miss a different fifth of
#: the papers agree only on structure that does not hang on a few papers, so the topics change less
#: when the corpus does (stability on 90% samples, EVALUATION.md "Since issue 20").
RUN_SHARE = 0.8
#: Fewer runs than this all see every paper (with 3 runs, one edge in twenty would have both ends
#: absent from every run).
SHARE_MIN_RUNS = 10


def _core_present(labels: np.ndarray, knn: np.ndarray, present: np.ndarray) -> np.ndarray:
    """:func:`_core` of a run that saw only the ``present`` papers (the others are -1)."""
    if present.all():
        return _core(labels, knn)
    seen = np.where(knn >= 0, present[np.clip(knn, 0, None)], False)
    out = _core(labels, np.where(seen, knn, -1))
    out[~present] = -1
    return out


def calibrated_resolution(graph: LeidenGraph, p: ResolvedClusterParams) -> float:
    """Leiden's resolution for about ``MICRO_PER_TOPIC`` micro topics per target topic.

    One run at a first guess (6 up to 3,000 papers, growing as n^0.45: 9.8 at 9,800 papers, 13 at
    18,700; measured on the shared corpora) counts the communities; the number of communities
    grows about as resolution^0.7 (measured on IJCAI, ICML, ICLR and NeurIPS), which gives the
    resolution that hits the wanted count. Deterministic: the run is seeded.
    """
    guess = 6.0 * max(1.0, graph.n / 3_000) ** 0.45
    found = len(np.unique(graph.leiden(guess, _run_seed(p.seed, 999))))
    wanted = MICRO_PER_TOPIC * p.n_topics
    return float(np.clip(guess * (wanted / max(found, 1)) ** (1 / 0.7), 0.5, 1_000.0))


def _run_seed(seed: int, run: int) -> int:
    return int(seed) * 1_000 + run


def _core(labels: np.ndarray, knn: np.ndarray) -> np.ndarray:
    """``labels`` with border papers (fewer than CORE_SHARE of their neighbours alike) set to -1."""
    near = knn[:, 1:]
    valid = near >= 0
    alike = ((labels[near] == labels[:, None]) & valid).sum(axis=1)
    return np.where(alike >= CORE_SHARE * np.maximum(valid.sum(axis=1), 1), labels, -1)


def merge_by_agreement(
    micro: np.ndarray, finals: list[np.ndarray], k: int, embeddings: np.ndarray | None = None
) -> np.ndarray:
    """Merge micro topics into ``k`` topics by how often other clusterings put their papers together.

    The agreement of micro topics A and B is the mean over ``finals`` of the probability that a
    paper drawn from A and one drawn from B share a topic there. With :data:`MERGE_WARD` each micro
    topic is a point whose dot products with the others are these agreements (its share of papers
    in each run's topics, all runs side by side), weighing as many papers as it holds, and Ward's
    method merges them (:func:`ward_merge`): a merge costs what it adds to the papers' spread
    around their topic, so two large groups the runs only sometimes join stay apart where a small
    one is taken in; no merge makes a topic of more than :data:`GIANT_SHARE` of the core papers
    (the next cheapest is made instead). Otherwise average linkage on ``1 - agreement`` merges
    them. Micro topics are few (about 2.6 per topic), so the matrices are small.

    Args:
        micro: int ``(n,)`` micro topic per paper, ``-1`` for none.
        finals: int ``(n,)`` complete clusterings (no ``-1``) of the same papers.
        k: topics wanted (no merge when there are no more micro topics than that).
    """
    from scipy import sparse
    from sklearn.cluster import AgglomerativeClustering

    ids, inlier, rows, member = _members(micro)
    if len(ids) <= k:
        return micro
    agreement = np.zeros((len(ids), len(ids)))
    shares = []
    for final in finals:
        share = _share(member, final)  # (micro, topic): share of A's papers in each topic
        agreement += share @ share.T
        shares.append(share)
    distance = 1.0 - agreement / len(finals)
    np.fill_diagonal(distance, 0.0)
    counts = np.bincount(rows, minlength=len(ids)).astype(np.float64)
    if MERGE_WARD and MERGE_CUT is None:
        # each micro topic a point whose dot products are the agreement, weighed by its papers; the
        # size limit never under twice the mean topic's share (``--topics 3`` gives three topics)
        limit = None if GIANT_SHARE is None else max(GIANT_SHARE, 2.0 / max(k, 1)) * counts.sum()
        groups = ward_merge(np.hstack(shares) / np.sqrt(len(finals)), counts, k, max_size=limit)
    else:  # average linkage, to k topics or (MERGE_CUT) while most runs put the two groups together
        merge = AgglomerativeClustering(
            n_clusters=k if MERGE_CUT is None else None,
            distance_threshold=MERGE_CUT,
            metric="precomputed",
            linkage="average",
        )
        groups = np.asarray(merge.fit_predict(distance), dtype=np.int64)
    if embeddings is not None and CAP_LARGE:
        raw = sparse.csr_matrix((np.ones(len(inlier)), (rows, inlier)), shape=(len(ids), len(micro)))
        sums = np.zeros((len(ids), embeddings.shape[1]))
        for s in range(0, len(micro), 100_000):  # a block of papers at a time (embeddings may be memory-mapped)
            sums += raw[:, s : s + 100_000] @ np.asarray(embeddings[s : s + 100_000], dtype=np.float64)
        groups = cap_large(groups, distance, k, counts, sums, MAX_SHARE * len(inlier))
    lookup = np.full(len(micro), -1, dtype=np.int64)
    out = lookup.copy()
    out[inlier] = groups[rows]
    return out


#: None: the merge stops at ``k`` topics. A number: it stops where the average agreement distance
#: between the groups reaches it, whatever their count (measured in EVALUATION.md, not the default).
MERGE_CUT: float | None = None
#: No merge makes a topic of more than this share of the papers whose papers are less alike than
#: the median topic's (:func:`cap_large`).
MAX_SHARE = 0.12
#: Whether the graph clustering's merge keeps large topics to those as coherent as the median one.
CAP_LARGE = False
#: Whether the consensus merge is Ward's on the runs' agreement (:func:`ward_merge`) instead of
#: average linkage on ``1 - agreement``. Measured on six corpora, six seeds (EVALUATION.md, "Ward's
#: merge on the runs' agreement"): smaller largest topics on each, steadier topics on ICLR 2022 and
#: the two proxies, label coverage up; IJCAI's areas lose 0.012 NMI and 0.016 ARI, NeurIPS 2023
#: 0.017 of stability on 90% samples.
MERGE_WARD = True
#: No merge of Ward's makes a topic of more than this share of the core papers (None: no limit):
#: a quarter of a conference in one topic is a grab bag, not a subject. Set before measuring, not
#: tuned. Below 8 topics (only when asked for: √N/2.3 is 10 at 500 papers) the limit is twice the
#: mean topic's share instead, so that ``--topics 3`` gives three topics. On 15 corpora, seeds
#: 0-5, it changed no full-corpus clustering and one of 90 clusterings of 90% samples, one year of
#: IJCAI where the runs joined vision, learning and language papers into a topic of 35%
#: (EVALUATION.md, "One year of IJCAI, with its authors' areas").
GIANT_SHARE: float | None = 0.25
#: Decimals Ward's merge costs are rounded to, so that near-equal costs are equal on every
#: processor and the tie goes to the first pair.
MERGE_DECIMALS = 9


def ward_merge(features: np.ndarray, sizes: np.ndarray, k: int, max_size: float | None = None) -> np.ndarray:
    """Ward's merge of weighted points down to ``k`` groups: each step merges the two groups whose
    merge adds least to the within-group sum of squares, ``n_a n_b / (n_a + n_b) |c_a - c_b|^2``.

    Args:
        features: float ``(m, d)`` one point per micro topic.
        sizes: float ``(m,)`` its papers (its weight).
        k: groups wanted.
        max_size: no merge makes a group heavier than this (the next cheapest merge is made
            instead); None: no limit.

    Returns:
        int ``(m,)`` group of each point, numbered by first point.

    scipy's and scikit-learn's Ward take no weights (a micro topic repeated once per paper would
    make the matrices papers by papers), hence this loop over the few micro topics.
    """
    m = len(features)
    centres = np.asarray(features, dtype=np.float64).copy()
    weight = np.asarray(sizes, dtype=np.float64).copy()
    alive = np.ones(m, dtype=bool)
    label = np.arange(m)

    def costs(i: int) -> np.ndarray:
        gap = ((centres - centres[i]) ** 2).sum(axis=1)
        cost = weight * weight[i] / (weight + weight[i]) * gap
        cost = np.round(cost, MERGE_DECIMALS)  # equal up to rounding on every processor: ties by index
        cost[~alive] = np.inf
        cost[i] = np.inf
        return cost

    d = np.stack([costs(i) for i in range(m)])
    groups = m
    while groups > max(k, 1):
        i, j = divmod(int(np.argmin(d)), m)
        if not np.isfinite(d[i, j]):
            break
        i, j = min(i, j), max(i, j)
        if max_size is not None and weight[i] + weight[j] > max_size:
            d[i, j] = d[j, i] = np.inf  # too large a topic: never this pair (their groups only grow)
            continue
        groups -= 1
        centres[i] = (weight[i] * centres[i] + weight[j] * centres[j]) / (weight[i] + weight[j])
        weight[i] += weight[j]
        alive[j] = False
        label[label == j] = i
        d[j, :] = d[:, j] = np.inf
        row = costs(i)
        d[i, :] = row
        d[:, i] = row
    _, out = np.unique(label, return_inverse=True)
    return out.astype(np.int64)


def _spread_of(counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Mean cosine of a group's papers to their normalised mean: ``|sum| / count`` (unit vectors)."""
    return np.linalg.norm(sums, axis=-1) / np.maximum(counts, 1.0)


def cap_large(
    groups: np.ndarray, distance: np.ndarray, k: int, counts: np.ndarray, sums: np.ndarray, max_papers: float
) -> np.ndarray:
    """The merge of micro topics again, without topics larger than ``max_papers`` papers that are
    looser than the median topic, when the plain merge (``groups``) made any.

    Average linkage on ``distance`` (as the plain merge), except that a merge giving a group of
    more than ``max_papers`` papers whose spread (mean cosine of its papers to their mean) is below
    the median spread of the plain merge's topics is not made; the merging stops at ``k`` groups or
    when no merge is allowed (then there are more than ``k``). A large topic that holds one
    subject (as alike as the median topic) is still made: it is a field, not a grab bag.

    Args:
        groups: int ``(m,)`` the plain merge's topic of each micro topic.
        distance: float ``(m, m)`` agreement distance between micro topics.
        k: topics wanted.
        counts: float ``(m,)`` papers of each micro topic.
        sums: float ``(m, dim)`` sum of each micro topic's (unit) embeddings.
        max_papers: the size above which a topic must be as coherent as the median one.

    Returns:
        int ``(m,)`` topic of each micro topic (0, 1, ... by first micro topic).
    """
    ids = np.unique(groups)
    g_counts = np.array([counts[groups == g].sum() for g in ids])
    g_sums = np.stack([sums[groups == g].sum(axis=0) for g in ids])
    spreads = _spread_of(g_counts, g_sums)
    median = float(np.median(spreads))
    if not ((g_counts > max_papers) & (spreads < median)).any():
        return groups
    m = len(distance)
    d = np.array(distance, dtype=np.float64)
    np.fill_diagonal(d, np.inf)
    apart = np.zeros((m, m), dtype=bool)  # pairs whose merge would make a large, loose topic
    weight = np.ones(m)
    papers, total = counts.astype(np.float64).copy(), sums.astype(np.float64).copy()
    label = np.arange(m)
    alive = m
    while alive > k:
        i, j = divmod(int(np.argmin(np.where(apart, np.inf, d))), m)  # closest pair; ties: first in row order
        if not np.isfinite(d[i, j]) or apart[i, j]:
            break  # no merge left that is allowed
        size = papers[i] + papers[j]
        if size > max_papers and float(_spread_of(size, total[i] + total[j])) < median:
            apart[i, j] = apart[j, i] = True
            continue
        i, j = min(i, j), max(i, j)
        row = (weight[i] * d[i] + weight[j] * d[j]) / (weight[i] + weight[j])  # average linkage
        d[i], d[:, i] = row, row
        d[i, i] = np.inf
        d[j], d[:, j] = np.inf, np.inf
        apart[i], apart[:, i] = False, False  # the merged topic is checked again when its turn comes
        weight[i] += weight[j]
        papers[i], total[i] = size, total[i] + total[j]
        label[label == j] = i
        alive -= 1
    _, out = np.unique(label, return_inverse=True)
    return out.astype(np.int64)
