"""End-to-end topic quality: our pipeline against the obvious alternatives, same embeddings, same seeds.

:func:`evaluate` runs every method once per seed on the same papers and embeddings and scores the
runs with the measures of ``pipeline.evaluation.evaluate``:

* ``pipeline``: our own stages with the corpus's settings: the shared kNN graph
  (``reduce.shared_knn``), ``cluster.cluster`` with the seed (the graph clustering's Leiden seed;
  for ``method="hdbscan"`` the UMAP seed of ``reduce.cluster_projection``), and each topic's top
  terms by the c-TF-IDF the build computes (``represent.ctfidf_words`` on ``vocab.doc_terms``);
  besides, per seed, the same stages on a random 90% of the papers (:func:`resampled_clustering`)
  for the resampled stability;
* ``bertopic``: vanilla BERTopic, default parameters (UMAP seeded), and ``bertopic_reduce``:
  the same fit followed by ``reduce_outliers``;
* ``kmeans``: k-means on the embeddings with k = the number of labels (without labels: the number
  of topics our pipeline aims for), and ``lda``: LDA on word counts with the same k.

Pure: no printing and no file I/O (``python -m pipeline evaluate`` reads the corpus and writes the
report); progress goes to a callback.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from pipeline.core.config import BuildConfig
from pipeline.core.manifest import Manifest
from pipeline.evaluation import evaluate as ev
from pipeline.evaluation.baselines import kmeans, lda, vanilla_bertopic_pair
from pipeline.evaluation.evaluate import (
    ABSENT,
    clustering_scores,
    keyword_agreement,
    keyword_problem,
    label_scores,
    npmi_coherence,
    stability,
    topic_diversity,
)
from pipeline.evaluation.quality_report import METHODS, Evaluation, MethodResult, Run
from pipeline.model import bertopic_import
from pipeline.model.cluster import cluster
from pipeline.model.cluster_params import resolve_params, uses_projection
from pipeline.model.cluster_refine import centroids
from pipeline.model.keywords import FILL_DEPTH, keyword_list, phrase_of, term_uses
from pipeline.model.label_candidates import PhraseStats
from pipeline.model.label_evidence import is_weak
from pipeline.model.reduce import cluster_projection, shared_knn
from pipeline.model.represent import ctfidf_words, topic_labels, topic_texts
from pipeline.model.topic_parts import broad_topics, topic_spread
from pipeline.model.vocab import doc_terms

#: Keywords per topic for diversity, coherence and the fragment check.
TOP_N = 10


# --------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------


@dataclass
class _Shared:
    """What every seed of our pipeline reuses: the kNN graph and the term counts."""

    knn: tuple[np.ndarray, np.ndarray]
    dt: object
    seconds: float  # what they cost; added to every run's time, as a fresh build pays it
    docs: Sequence[str] = ()
    titles: Sequence[str | None] | None = None  # the papers' own titles, for the labels
    keywords: Sequence[str | None] | None = None  # the authors' keywords, to score the labels by


def _prepare(
    docs: Sequence[str],
    embeddings: np.ndarray,
    config: BuildConfig,
    titles: Sequence[str | None] | None = None,
    keywords: Sequence[str | None] | None = None,
) -> _Shared:
    start = time.perf_counter()
    knn = shared_knn(embeddings, config.umap)
    dt = doc_terms(list(docs), ngram_range=config.represent.ngram_range, min_df=config.represent.min_df)
    return _Shared(knn, dt, time.perf_counter() - start, list(docs), titles, keywords)


def pipeline_run(
    embeddings: np.ndarray,
    config: BuildConfig,
    seed: int,
    shared: _Shared,
    embed: Callable[[list[str]], np.ndarray] | None = None,
) -> Run:
    """Our pipeline's clustering, keywords and labels for one seed (the build's own stages).

    With ``embed`` (the corpus's embedder) the run's labels are made as the build makes them and
    scored (:func:`topic_scores`); the seconds are the clustering's and the keywords'.
    """
    start = time.perf_counter()
    clustering = _cluster_with_seed(embeddings, shared.knn, config, seed)
    words = ctfidf_words(clustering.labels, shared.dt, TOP_N * FILL_DEPTH)
    seconds = time.perf_counter() - start + shared.seconds
    # the phrase statistics the build's keywords and labels share, made once for both here too
    stats = {t: PhraseStats(x) for t, x in topic_texts(shared.docs, clustering.labels, sorted(words)).items()}
    topic_words = [  # the terms behind the keywords, as the build keeps them (``keyword_terms``)
        [w for w, _ in keyword_list(words[t], term_uses(clustering.labels, shared.dt, t), TOP_N, phrase_of(stats[t]))]
        for t in sorted(words)
    ]
    scores = (
        topic_scores(
            shared.docs,
            embeddings,
            clustering.labels,
            shared.dt,
            embed,
            titles=shared.titles,
            keywords=shared.keywords,
            stats=stats,
        )
        if embed is not None
        else {}
    )
    return Run(clustering.labels, ~clustering.raw_outlier & (clustering.labels != -1), topic_words, seconds, scores)


def topic_scores(
    docs: Sequence[str],
    embeddings: np.ndarray,
    labels: np.ndarray,
    dt,
    embed: Callable[[list[str]], np.ndarray],
    *,
    titles: Sequence[str | None] | None = None,
    keywords: Sequence[str | None] | None = None,
    stats: Mapping[int, PhraseStats] | None = None,
) -> dict[str, float]:
    """The labels of one clustering, made as the build makes them (``titles``: the papers' own
    titles, as the build passes them; ``stats``: each topic's phrase statistics, when made
    already), and the topics' sizes, scored; with the authors'
    ``keywords`` (one string per paper, None where it has none), also how far the labels agree with them.

    Returns:
        ``label_coverage`` (size-weighted share of a topic's papers using its label's words),
        ``low_coverage_large`` (topics of 5% or more of the papers with coverage below 0.5),
        ``weak_large`` (those of them the app marks weak), ``contained_labels`` (pairs of labels
        one of which holds all the other's words), ``label_retrieval`` (share of labels whose
        embedding is nearest their own topic's centroid), ``largest_share``, ``loose_large``
        (topics above ``topic_parts.BROAD_SHARE`` of the papers less coherent than the median topic:
        ``pipeline.model.topic_parts.broad_topics``, as the build marks them), ``label_keywords``
        (:func:`keyword_agreement`, only with ``keywords``).
    """
    ids, vectors = centroids(labels, embeddings)
    chosen = topic_labels(list(docs), labels, dt, vectors, embed, titles=titles, stats=stats)
    names = {int(t): chosen[int(t)][0] for t in ids}
    scored = label_scores(
        names, labels, docs, label_vectors=np.asarray(embed([names[int(t)] for t in ids])), centroids=vectors
    )
    spread = topic_spread(embeddings, labels)
    n = max(len(labels), 1)
    sizes = {int(t): int((labels == t).sum()) for t in ids}
    return {
        "label_coverage": scored.weighted_coverage,
        "low_coverage_large": float(len(scored.low_large)),
        "weak_large": float(sum(is_weak(chosen[t][1].value) for t in scored.low_large)),
        "contained_labels": float(len(scored.contained)),
        "label_retrieval": scored.retrieval,
        "largest_share": max(sizes.values()) / n if sizes else math.nan,
        "loose_large": float(len(broad_topics(spread, sizes, n))),
    } | ({"label_keywords": keyword_agreement(names, labels, keywords)} if keywords is not None else {})


def _cluster_with_seed(embeddings: np.ndarray, knn: tuple[np.ndarray, np.ndarray], config: BuildConfig, seed: int):
    """``cluster.cluster`` as the build runs it, with ``seed`` for every random choice it makes."""
    params = dataclasses.replace(config.cluster, seed=seed)
    points = cluster_projection(embeddings, knn, config.umap, seed=seed) if uses_projection(params) else None
    return cluster(points, embeddings, params, knn=knn[0])


#: Share of the papers each run of the resampled stability clusters.
RESAMPLE_SHARE = 0.9


def resampled_clustering(
    embeddings: np.ndarray,
    knn: tuple[np.ndarray, np.ndarray],
    config: BuildConfig,
    seed: int,
    share: float = RESAMPLE_SHARE,
) -> np.ndarray:
    """Our clustering of a random ``share`` of the papers, with ``seed`` (sample and clustering).

    The kNN graph is the corpus's, less the papers left out (their places in neighbour lists
    become "missing", ``-1``); the number of topics is the whole corpus's, so that the runs are
    comparable. Papers left out get :data:`pipeline.evaluation.evaluate.ABSENT`.

    Returns:
        int ``(n,)``: topic per paper of the sample, ``ABSENT`` for the others.
    """
    n = len(embeddings)
    keep = np.sort(np.random.default_rng(seed).permutation(n)[: max(3, min(n, round(share * n)))])
    config = dataclasses.replace(
        config, cluster=dataclasses.replace(config.cluster, n_topics=resolve_params(config.cluster, n).n_topics)
    )
    labels = _cluster_with_seed(embeddings[keep], restrict_knn(knn, keep, n), config, seed).labels
    out = np.full(n, ABSENT, dtype=np.int64)
    out[keep] = labels
    return out


def restrict_knn(knn: tuple[np.ndarray, np.ndarray], keep: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The kNN graph of the papers ``keep`` (sorted rows of an ``n``-paper graph), renumbered.

    Neighbours left out are dropped from each list; the lists keep their width, padded with ``-1``
    (index) and ``inf`` (distance) at the end.
    """
    new = np.full(n, -1, dtype=np.int64)
    new[keep] = np.arange(len(keep))
    idx = new[knn[0][keep]]
    dist = np.where(idx >= 0, knn[1][keep], np.inf).astype(np.float32)
    order = np.argsort(idx < 0, axis=1, kind="stable")  # present neighbours first, in their order
    return np.take_along_axis(idx, order, axis=1).astype(np.int32), np.take_along_axis(dist, order, axis=1)


def seed_clusterings(
    embeddings: np.ndarray, knn: tuple[np.ndarray, np.ndarray], config: BuildConfig, seeds: Sequence[int]
) -> tuple[list[np.ndarray], float]:
    """The extra clusterings behind per-topic stability: one :func:`resampled_clustering` per seed.

    Each clusters a different random 90% of the papers with its own seed, with the build's own
    stages and settings. Runs in a separate process for large corpora (``pipeline/build/build.py``).

    Returns:
        One int ``(n,)`` label array per seed (``ABSENT`` for papers a run left out), and the
        seconds it took.
    """
    start = time.perf_counter()
    runs = [resampled_clustering(embeddings, knn, config, seed) for seed in seeds]
    return runs, time.perf_counter() - start


def _baseline_run(result, clustered: np.ndarray | None = None) -> Run:
    labels = np.asarray(result.labels, dtype=np.int64)
    return Run(labels, labels != -1 if clustered is None else clustered, result.topic_words, result.seconds)


# --------------------------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------------------------


def score_runs(
    runs: dict[int, Run],
    labels_true: np.ndarray | None,
    reference: tuple,
) -> tuple[dict[str, float], list[dict], list[str]]:
    """Scores of one method's runs: means over seeds, one row per seed, and bad keyword examples.

    Args:
        runs: seed -> run.
        labels_true: ``(n,)`` reference labels, or None (label-free measures only).
        reference: ``(doc_term, vocab)`` from ``evaluate.reference_doc_term`` for NPMI.
    """
    per_seed, bad_examples = [], []
    for seed, run in runs.items():
        row: dict[str, float] = {
            "seed": seed,
            "n_topics": float(len(set(run.labels.tolist()) - {-1})),
            "outlier_share": float((run.labels == -1).mean()),
            "reassigned_share": float(((run.labels != -1) & ~run.clustered).mean()),
            "seconds": run.seconds,
        }
        row.update(run.topic_scores)
        if labels_true is not None:
            all_ = clustering_scores(labels_true, run.labels)
            core = clustering_scores(labels_true, np.where(run.clustered, run.labels, -1))
            row.update(nmi_all=all_["nmi_all"], ari_all=all_["ari_all"])
            row.update(nmi_clustered=core["nmi_inliers"], ari_clustered=core["ari_inliers"])
        if run.topic_words:
            words = [w[:TOP_N] for w in run.topic_words]
            row["diversity"] = topic_diversity(words, TOP_N)
            row["npmi"] = npmi_coherence(words, reference[0], reference[1], top_n=TOP_N)[0]
            bad = [(w, keyword_problem(w)) for ws in words for w in ws]
            bad = [(w, why) for w, why in bad if why]
            row["bad_keywords"] = float(len(bad))
            for w, why in bad:
                example = f"{w} ({why})"
                if example not in bad_examples and len(bad_examples) < 8:
                    bad_examples.append(example)
        per_seed.append(row)
    keys = [k for k in per_seed[0] if k != "seed"] if per_seed else []
    scores = {k: float(np.nanmean([r.get(k, math.nan) for r in per_seed])) for k in keys}
    if per_seed:  # the median: a first run may pay for one-time compilation (numba, pynndescent)
        scores["seconds"] = float(np.median([r["seconds"] for r in per_seed]))
    scores["stability"] = stability([r.labels for r in runs.values()]) if len(runs) > 1 else math.nan
    return scores, per_seed, bad_examples


# --------------------------------------------------------------------------------------------
# The whole evaluation
# --------------------------------------------------------------------------------------------


def evaluate(
    docs: Sequence[str],
    embeddings: np.ndarray,
    labels: Sequence | np.ndarray | None,
    config: BuildConfig = BuildConfig(),
    *,
    corpus: str = "corpus",
    seeds: Sequence[int] = (0, 1, 2),
    methods: Sequence[str] = tuple(METHODS),
    k: int | None = None,
    progress: Callable[[str], None] | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
    titles: Sequence[str | None] | None = None,
    keywords: Sequence[str | None] | None = None,
) -> Evaluation:
    """Run and score our pipeline and the baselines on the same papers, embeddings and seeds.

    Args:
        docs: ``(n,)`` cleaned modelling texts (``papers.model_text``).
        embeddings: float32 ``(n, dim)`` their normalised embeddings.
        labels: ``(n,)`` reference labels (e.g. primary areas), or None for label-free measures.
            Papers without a label must be removed beforehand.
        config: our pipeline's settings (``config.umap.seed`` is replaced by each seed).
        corpus: name for the report.
        seeds: one run per seed for every method; stability needs two or more.
        methods: a subset of :data:`METHODS`.
        k: clusters for k-means and LDA; default the number of distinct labels, or without labels
            the number of topics our pipeline aims for.
        progress: called with a line of text after each run.
        embed: the corpus's embedder (texts -> normalised vectors): with it, our pipeline's labels
            are made and scored in every run (:func:`topic_scores`).
        titles, keywords: ``(n,)`` the papers' own titles (None where a title was made from the
            abstract), used by the labels as the build uses them, and the authors' keywords (None
            where a paper has none): with them, how far our labels agree (``label_keywords``).
    """
    say = progress or (lambda _line: None)
    embeddings, truth = _inputs(docs, embeddings, labels, methods)
    n = len(docs)
    n_labels = 0 if truth is None else len(set(truth.tolist()))
    k = int(k or n_labels or resolve_params(config.cluster, n).n_topics)
    k = max(1, min(k, n))
    order = [m for m in METHODS if m in methods]
    results = {m: MethodResult(m) for m in order}

    _warm_up(embeddings, config, order)
    shared = None
    resampled: dict[int, np.ndarray] = {}
    for seed in seeds:
        if "pipeline" in results:
            if shared is None:
                shared = _prepare(docs, embeddings, config, titles, keywords)
            _attempt(
                results["pipeline"], seed, lambda s=seed, sh=shared: pipeline_run(embeddings, config, s, sh, embed), say
            )
            if not results["pipeline"].error and len(seeds) > 1:
                resampled[seed] = resampled_clustering(embeddings, shared.knn, config, seed)
        if "bertopic" in results or "bertopic_reduce" in results:
            _attempt_pair(results, docs, embeddings, seed, say)
        if "kmeans" in results:
            _attempt(results["kmeans"], seed, lambda s=seed: _baseline_run(kmeans(embeddings, k, seed=s)), say)
        if "lda" in results:
            _attempt(results["lda"], seed, lambda s=seed: _baseline_run(lda(list(docs), k, seed=s, top_n=TOP_N)), say)

    terms = [w for r in results.values() for run in r.runs.values() for ws in run.topic_words or [] for w in ws[:TOP_N]]
    reference = ev.reference_doc_term(list(docs), terms)
    for r in results.values():
        if r.runs and not r.error:
            r.scores, r.per_seed, r.bad_examples = score_runs(r.runs, truth, reference)
    if "pipeline" in results and len(resampled) > 1:
        results["pipeline"].scores["resampled_stability"] = ev.stability(list(resampled.values()))
    notes = [
        f"{n_labels} labels; k-means and LDA use k = {k}"
        if truth is not None
        else f"no labels: label-free measures only; k-means and LDA use k = {k} (our target topic count)"
    ]
    return Evaluation(corpus, n, n_labels, k, list(seeds), _settings(config), list(results.values()), notes)


def _inputs(docs: Sequence[str], embeddings, labels, methods: Sequence[str]) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`evaluate`'s inputs checked: the embeddings as float32 and the labels as strings."""
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; choose from {list(METHODS)}")
    embeddings = np.asarray(embeddings, dtype=np.float32)
    if len(embeddings) != len(docs) or (labels is not None and len(labels) != len(docs)):
        raise ValueError("docs, embeddings and labels must have one row per paper")
    return embeddings, None if labels is None else np.asarray([str(x) for x in labels])


def _warm_up(embeddings: np.ndarray, config: BuildConfig, methods: Sequence[str]) -> None:
    """Import and JIT-compile once, so that no method's first run pays for it."""
    if "pipeline" in methods or "bertopic" in methods or "bertopic_reduce" in methods:
        bertopic_import.prepare()
        from bertopic.vectorizers import ClassTfidfTransformer  # noqa: F401  (imports BERTopic)

        sample = embeddings[: min(len(embeddings), 300)]
        if len(sample) >= config.umap.min_points_for_umap:
            cluster_projection(sample, shared_knn(sample, config.umap), config.umap, n_epochs=5)


def _attempt(result: MethodResult, seed: int, fit: Callable[[], Run], say: Callable[[str], None]) -> None:
    if result.error:
        return
    try:
        run = fit()
    except Exception as exc:  # a baseline that cannot handle this corpus is a result, not a crash
        result.error = f"{type(exc).__name__}: {str(exc)[:160]}"
        say(f"  {result.name}, seed {seed}: failed ({result.error})")
        return
    result.runs[seed] = run
    say(f"  {result.name}, seed {seed}: {len(set(run.labels.tolist()) - {-1})} topics in {run.seconds:.1f}s")


def _attempt_pair(results: dict[str, MethodResult], docs, embeddings, seed: int, say) -> None:
    targets = [results[m] for m in ("bertopic", "bertopic_reduce") if m in results]
    if all(t.error for t in targets):
        return
    try:
        plain, reduced = vanilla_bertopic_pair(list(docs), embeddings, seed=seed)
    except Exception as exc:
        for t in targets:
            t.error = f"{type(exc).__name__}: {str(exc)[:160]}"
        say(f"  vanilla BERTopic, seed {seed}: failed ({targets[0].error})")
        return
    clustered = np.asarray(plain.labels) != -1
    runs = {"bertopic": _baseline_run(plain), "bertopic_reduce": _baseline_run(reduced, clustered)}
    for t in targets:
        t.runs[seed] = runs[t.method]
        say(
            f"  {t.name}, seed {seed}: {len(set(runs[t.method].labels.tolist()) - {-1})} topics in {runs[t.method].seconds:.1f}s"
        )


def config_from_manifest(manifest: Manifest, base: BuildConfig = BuildConfig()) -> BuildConfig:
    """The fit settings (UMAP, clustering, representation) a corpus was built with, from its manifest.

    Settings the manifest does not know keep ``base``'s values; ones this version no longer has are
    ignored.
    """
    import dataclasses

    params = manifest.params or {}
    changes = {}
    for section in ("umap", "cluster", "represent"):
        current = getattr(base, section)
        known = {f.name for f in dataclasses.fields(current)}
        values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in params.get(section, {}).items() if k in known}
        changes[section] = dataclasses.replace(current, **values)
    return dataclasses.replace(base, **changes)


def _settings(config: BuildConfig) -> dict:
    import json

    return json.loads(
        json.dumps(
            {"umap": asdict(config.umap), "cluster": asdict(config.cluster), "represent": asdict(config.represent)},
            default=list,
        )
    )
