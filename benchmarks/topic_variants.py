"""Topics and labels on every corpus we have, per clustering variant, seeds and 90% samples (issue 20).

For each corpus (a one-year conference cut from the shared files, the labelled proxies) and each
variant of the graph clustering, runs the build's own stages per seed: the shared kNN graph, the
clustering with that seed, the labels as the build makes them (``represent.topic_labels`` with the
corpus's embedder), and the same clustering on a random 90% of the papers with its own seed.
Writes one JSON line per run and one summary per corpus and variant to
``benchmarks/results/topic-variants.jsonl``:

* ``nmi``/``ari`` against the labels where the corpus has them;
* ``stability`` (mean pairwise ARI across seeds) and ``resampled_stability`` (the same across
  runs on different 90% samples, over the papers two runs share);
* ``cov``: size-weighted label coverage (share of a topic's papers whose text uses all the words
  of its label, or of any part of "A and B", "A, B and C"); ``low_large``: topics of 5% or more of the papers
  below 0.5 coverage; ``weak``: labels the app marks weak; ``contained``: pairs of labels one of
  which holds the other's words; ``retrieval``: labels whose embedding is nearest their own topic;
* ``largest``: the largest topic's share; ``over12_incoherent``: topics above 12% of the papers
  less alike (mean cosine to their centroid) than the median topic.

Baselines (``--baselines``): k-means at the number of labels and at our number of topics, vanilla
BERTopic + ``reduce_outliers``, on the same embeddings and seeds.

Variants set the clustering modules' constants for the run: ``base`` (the defaults),
``refineN`` (N k-means steps after the merge), ``cap`` (no merge makes a topic of more than 12% of
the papers that is looser than the median one, ``pipeline.model.cluster_consensus.CAP_LARGE``), ``shareNN`` (each
Leiden run sees NN% of the papers, ``pipeline.model.cluster_consensus.RUN_SHARE``), ``runsNN`` (NN runs up to
5,000 papers, ``pipeline.model.cluster_params.RUNS_FULL``), ``iterN`` (Leiden iterations), ``divX``
(√N/X topics), ``cutX`` (the merge stops at agreement distance X), ``microX`` (micro topics per
topic), ``coreX`` (a core paper's share of neighbours in its micro topic), ``smoothN`` (rounds of
the final kNN smoothing), ``gsmooth`` (the graph clustering smoothed by default, as before
CLUSTER_VERSION 10, ``pipeline.model.cluster_params.GRAPH_SMOOTH``; ``base`` rows written before the first
``smooth0`` rows, 2026-12-03, are with it, later ones without, as ``smooth0``), ``ward`` /
``average`` (the consensus merge by Ward's method, the default since CLUSTER_VERSION 8, or by
average linkage as before), ``novote`` (border papers
by their nearest centroid instead of the runs' vote, ``pipeline.model.cluster_consensus.VOTE``),
``wardbelowN`` (Ward's method on the embeddings, as below 500 papers, for corpora under N
papers, ``pipeline.model.cluster_params.AUTO_GRAPH_MIN``), ``giantX`` (no merge makes a topic of
more than X of the core papers,
``pipeline.model.cluster_consensus.GIANT_SHARE``; 0.25 by default since CLUSTER_VERSION 9: the
``base`` rows of the IJCAI years and of 2026-12-03 before are without it), ``generic`` /
``nogeneric`` (labels may or may not be phrases of generic words where nothing else names half of
a topic, ``pipeline.model.labels.GENERIC_PHRASES``, on since REPRESENT_VERSION 8), ``norepair``
(labels chosen larger topic first and left so, ``pipeline.model.label_choice.REPAIR``, as before
REPRESENT_VERSION 10), ``nogenericsmall`` (no phrases of generic words under 1,000 papers,
``pipeline.model.labels.GENERIC_IN_SMALL_CORPORA``, as before REPRESENT_VERSION 11), ``centre``
/ ``centreX`` / ``centregraph`` (the clustering sees the embeddings less the corpus's mean vector,
or less X times it, normalised again; or only its kNN graph is made from them; the measures stay
on the model's own embeddings; screened 2026-12-04, not in the product), ``induced`` (each Leiden
run on the graph its papers induce, :func:`induced_runs_on`; screened 2026-12-04, not in the product),
``knnK`` (the shared kNN graph the clustering and its 90% samples read has K neighbours instead of
``umap.n_neighbors``' 15 under 9,000 papers; screened 2026-12-04, eleventh session),
``acrossphrases`` (terms as scikit-learn makes them, joining words across a stop word or
punctuation, as before REPRESENT_VERSION 12, ``pipeline.model.vocab.WITHIN_PHRASES``; ``base`` rows
of 2026-12-05 before the first ``acrossphrases`` rows are with them), ``lexB`` (the clustering's
kNN graph reranked by words as well, :func:`lexical_knn`; screened 2026-12-05, fourteenth session,
not in the product; rows ``rspreadX``, ``calibN`` and ``corevote`` of that session were knobs
removed again, described in EVALUATION.md), ``byany`` (a label of three parts only where no label
of one or two parts is used by half of the topic's papers, as before REPRESENT_VERSION 14,
``pipeline.model.labels.THREE_PARTS_BY_BEST``; rows ``noun0.1``, ``noun0.15``, ``noun0.3``,
``noun0.15+...`` and ``genericbest`` of the fifteenth session were knobs removed again, described in
EVALUATION.md; so were ``gap0.25``, ``eac1.5`` and ``multicut1.5`` of 2026-12-05, seventeenth session),
``voteunheld`` (the vote places the core papers of a merged topic it does not uphold too, as before
CLUSTER_VERSION 11, ``pipeline.model.cluster_consensus.KEEP_UNHELD``; rows ``unheldkeep`` of the
seventeenth session are today's rule, measured before it was the default, and rows ``dissolve`` and
``corekeep`` two alternatives removed again, described in EVALUATION.md), ``titleX`` (a term that
fewer than X of the corpus's papers using it put in their title is no label unless the label
chosen without such terms would be weak, ``pipeline.model.labels.MIN_TITLE_SHARE``, 0.10 since
REPRESENT_VERSION 16; ``title0`` labels as before), ``twX`` (an option that is not weak ranks X times
the share of the topic's papers whose title uses it higher, ``pipeline.model.labels.TITLE_WEIGHT``,
0.1 since REPRESENT_VERSION 17; ``tw0`` labels as before); join them with ``+``. Label rows carry ``kw``
where the papers have their authors' keywords (:func:`keyword_agreement`).
``--no-samples`` leaves the 90% samples out (for a variant of the labels only: its clustering is the same). In the results file, ``v5``
rows are the defaults before the subsampled runs (20 runs, every paper), ``v6`` rows today's
(40 runs of 80%; measured as ``share80+runs40`` and ``base``); ``base`` rows written before the
2026-12-02 run of all ten corpora with ``--variants base`` are without generic phrases.

Corpora ``iclr2021``, ``neurips2021``, ``iclr2020`` and ``neurips2020`` are held out: no setting
was chosen on them before they were first measured (2026-12-02). The generic phrases were then
found on NeurIPS 2021's labels and corrected on NeurIPS 2020's; nothing was chosen on the two ICLR
years. ``neurips2016``, ``neurips2017``, ``neurips2018``, ``iclr2018`` and ``iclr2019`` are held
out too, smaller one-year conferences (567-1,419 papers, first measured 2026-12-03; ``div2.0`` was
screened on them, nothing chosen). ``ijcai2020`` ... ``ijcai2024`` are one year of IJCAI each,
with the areas its authors chose (the papers of ``ijcai``, so not held out; measured from
2026-12-03). ``neurips-all`` is the whole NeurIPS file (18,661 papers, 1987-2023: the decades case;
measured from 2026-12-03). ``neurips2019`` (1,205 papers) and ``neurips2022`` (2,795) are held out
too: first measured 2026-12-05 (eighteenth session) with the product as it stood, nothing chosen
on them.

    .venv/bin/python benchmarks/make_proxies.py        # the labelled proxies, once
    .venv/bin/python benchmarks/topic_variants.py icml2024 iclr2022 ijcai neurips-kw ijcai-fine \\
        --variants base refine3 cap --seeds 0 1 2 --artifacts /tmp/tv
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import DATA  # noqa: E402  (the shared data folder, found as every benchmark finds it)
from pipeline.core.settings import load_config, with_overrides  # noqa: E402
from pipeline.embed.embed import embed_texts  # noqa: E402
from pipeline.evaluation import baselines as bl  # noqa: E402
from pipeline.evaluation import evaluate as ev  # noqa: E402
from pipeline.evaluation.quality import resampled_clustering  # noqa: E402
from pipeline.ingest.ingest import ingest  # noqa: E402
from pipeline.model import cluster as C  # noqa: E402
from pipeline.model import (  # noqa: E402
    cluster_consensus,
    cluster_graph,
    cluster_params,
    cluster_refine,
    label_candidates,
    label_choice,
    vocab,
)
from pipeline.model import labels as labels_module  # noqa: E402
from pipeline.model.label_background import own_titles  # noqa: E402
from pipeline.model.reduce import shared_knn  # noqa: E402
from pipeline.model.represent import fit_topics, topic_labels  # noqa: E402
from pipeline.model.topic_parts import broad_topics, topic_spread  # noqa: E402
from pipeline.model.vocab import doc_terms  # noqa: E402

RESEARCH = ROOT / ".cache-research"
OUT = ROOT / "benchmarks" / "results" / "topic-variants.jsonl"

#: name -> (file, rows to keep); one-year conferences are cut from the shared multi-year files.
CORPORA = {
    "icml2024": (DATA / "icml2024-unlabeled.jsonl.gz", None),
    "iclr2022": (DATA / "iclr-2018-2022-submissions.jsonl.gz", lambda d: d[d["year"].astype(str) == "2022"]),
    "neurips2023": (DATA / "neurips-1987-2023.jsonl.gz", lambda d: d[d["year"].astype(int) == 2023]),
    "ijcai": (DATA / "ijcai2020-2024-primary-area.jsonl.gz", None),
    "ijcai-fine": (RESEARCH / "ijcai-fine.jsonl.gz", None),
    "neurips-kw": (RESEARCH / "neurips-kw.jsonl.gz", None),
    # 37 years of one conference (18,661 papers): the "decades" case, measured from 2026-12-03
    "neurips-all": (DATA / "neurips-1987-2023.jsonl.gz", None),
    # held out: one-year conferences no setting was chosen on (first measured 2026-12-02)
    "iclr2021": (DATA / "iclr-2018-2022-submissions.jsonl.gz", lambda d: d[d["year"].astype(str) == "2021"]),
    "neurips2021": (DATA / "neurips-1987-2023.jsonl.gz", lambda d: d[d["year"].astype(int) == 2021]),
    "iclr2020": (DATA / "iclr-2018-2022-submissions.jsonl.gz", lambda d: d[d["year"].astype(str) == "2020"]),
    "neurips2020": (DATA / "neurips-1987-2023.jsonl.gz", lambda d: d[d["year"].astype(int) == 2020]),
    # held out, smaller one-year conferences (567-1,419 papers; first measured 2026-12-03)
    **{
        f"neurips{year}": (DATA / "neurips-1987-2023.jsonl.gz", lambda d, y=year: d[d["year"].astype(int) == y])
        for year in (2016, 2017, 2018)
    },
    **{
        f"iclr{year}": (
            DATA / "iclr-2018-2022-submissions.jsonl.gz",
            lambda d, y=year: d[d["year"].astype(str) == str(y)],
        )
        for year in (2018, 2019)
    },
    # held out, first measured 2026-12-05 (eighteenth session), nothing chosen on them: the two
    # NeurIPS years no earlier run read (some of NeurIPS 2022's papers are in "neurips-kw")
    **{
        f"neurips{year}": (DATA / "neurips-1987-2023.jsonl.gz", lambda d, y=year: d[d["year"].astype(int) == y])
        for year in (2019, 2022)
    },
    # four NeurIPS years at a time from before any year the other corpora hold (720, 820, 1,103 and
    # 1,539 papers), first measured 2026-12-05 (nineteenth session): 2008-2011 and 2012-2015 beside
    # the title rule of REPRESENT_VERSION 16 while it was shaped, 2000-2003 and 2004-2007 only after
    **{
        f"neurips{a}-{b}": (
            DATA / "neurips-1987-2023.jsonl.gz",
            lambda d, a=a, b=b: d[d["year"].astype(int).between(a, b)],
        )
        for a, b in ((2000, 2003), (2004, 2007), (2008, 2011), (2012, 2015))
    },
    # one year of IJCAI with the areas its authors chose (590-790 labelled papers): the size and the
    # kind of corpus the product is scored on; the same papers as "ijcai", cut by year
    **{
        f"ijcai{year}": (DATA / "ijcai2020-2024-primary-area.jsonl.gz", lambda d, y=year: d[d["year"].astype(int) == y])
        for year in range(2020, 2025)
    },
}


def load(name: str, artifacts: Path):
    """Papers (labelled ones only, where the corpus has labels), embeddings, labels or None, the
    settings, and the papers' own titles and their authors' keywords (None where a paper has none)."""
    path, keep = CORPORA[name]
    config = with_overrides(load_config(None), {"ingest": {"columns": {"label": "label"}}})
    if keep is not None:
        cut = artifacts / f"{name}.jsonl"
        if not cut.exists():
            cut.parent.mkdir(parents=True, exist_ok=True)
            keep(pd.read_json(path, lines=True, compression="gzip")).to_json(cut, orient="records", lines=True)
        path = cut
    papers = ingest([path], config.ingest).papers.reset_index(drop=True)
    vectors = embed_texts(papers["model_text"].tolist(), config.embed, artifacts / ".cache").vectors
    truth = None
    if "label" in papers and papers["label"].notna().any():
        mask = papers["label"].notna().to_numpy() & (papers["label"].astype(str).str.strip() != "").to_numpy()
        papers, vectors = papers[mask].reset_index(drop=True), vectors[mask]
        truth = papers["label"].astype(str).to_numpy()
    words = papers["keywords"] if "keywords" in papers else pd.Series([None] * len(papers))
    extra = {
        "titles": own_titles(papers),
        "keywords": [k if isinstance(k, str) and k.strip() else None for k in words],
    }
    return papers["model_text"].tolist(), np.asarray(vectors, dtype=np.float32), truth, config, extra


def induced_runs_on(graph, edges, resolution: float, seeds: list[int], keeps: list) -> list[np.ndarray]:
    """Variant ``induced`` (screened 2026-12-04, not in the product): a run that sees only some
    papers runs Leiden on the graph they induce instead of the whole graph with the others' edges
    weighing nothing: the same modularity, about half the time (18,661 papers: 0.7 s against 1.3 s
    a run), the papers visited in another random order; the others are ``-1`` in the run. Replaces
    ``pipeline.model.cluster_graph._runs_on`` in this process only (every corpus here is under
    ``PARALLEL_MIN_PAPERS``, so no worker makes the runs)."""
    out = []
    a, b, w = edges
    for seed, keep in zip(seeds, keeps, strict=True):
        if keep is None:
            out.append(graph.leiden(resolution, seed))
            continue
        both = keep[a] & keep[b]
        rows = np.flatnonzero(keep)
        at = np.full(len(keep), -1, dtype=np.int64)
        at[rows] = np.arange(len(rows))
        run = np.full(len(keep), -1, dtype=np.int64)
        run[rows] = cluster_graph.LeidenGraph(len(rows), (at[a[both]], at[b[both]], w[both])).leiden(resolution, seed)
        out.append(run)
    return out


#: Variant parts: a name with a number (``refine1``, ``div2.0``) -> the constant it sets and how
#: the number reads; and the flags (``cap``, ``novote``) -> the constant and its value.
NUMBERED = {
    "refine": (C, "REFINE_STEPS", int),
    "runs": (cluster_params, "RUNS_FULL", int),
    "cut": (cluster_consensus, "MERGE_CUT", float),
    "iter": (cluster_graph, "LEIDEN_ITERATIONS", int),
    "div": (cluster_params, "TOPICS_DIVISOR", float),
    "micro": (cluster_consensus, "MICRO_PER_TOPIC", float),
    "core": (cluster_consensus, "CORE_SHARE", float),
    "share": (cluster_consensus, "RUN_SHARE", lambda v: int(v) / 100),
    "smooth": (C, "SMOOTH_ROUNDS", int),
    "giant": (cluster_consensus, "GIANT_SHARE", float),
    "wardbelow": (cluster_params, "AUTO_GRAPH_MIN", int),
    "heads": (label_candidates, "MIN_HEAD_USES", int),
    "title": (labels_module, "MIN_TITLE_SHARE", float),
    "tw": (labels_module, "TITLE_WEIGHT", float),
}
FLAGS = {
    "cap": (cluster_consensus, "CAP_LARGE", True),
    "novote": (cluster_consensus, "VOTE", False),
    "generic": (labels_module, "GENERIC_PHRASES", True),
    "nogeneric": (labels_module, "GENERIC_PHRASES", False),
    "ward": (cluster_consensus, "MERGE_WARD", True),
    "average": (cluster_consensus, "MERGE_WARD", False),
    "gsmooth": (cluster_params, "GRAPH_SMOOTH", True),
    "norepair": (label_choice, "REPAIR", False),
    "nogenericsmall": (labels_module, "GENERIC_IN_SMALL_CORPORA", False),
    "induced": (cluster_graph, "_runs_on", induced_runs_on),
    "acrossphrases": (vocab, "WITHIN_PHRASES", False),
    "noable": (label_candidates, "ABLE_ADJECTIVES", False),
    "noadverbpair": (label_candidates, "ADVERB_PAIRS", False),
    "numberall": (labels_module, "NOUN_NUMBER", False),
    "byany": (labels_module, "THREE_PARTS_BY_BEST", False),
    "voteunheld": (cluster_consensus, "KEEP_UNHELD", False),
    "abbrbreak": (label_candidates, "ABBREVIATIONS_APART", False),
    "partsapart": (label_choice, "PARTS_APART", True),
    "hyphenparts": (label_candidates, "WHOLE_WORDS", False),
    "genericstrict": (labels_module, "GENERIC_WHEN_WEAK", False),
}
#: The settings a variant may change (restored after each).
KNOBS = [(module, name) for module, name, _ in (*NUMBERED.values(), *FLAGS.values())]


def apply_variant(variant: str) -> None:
    """Set ``pipeline.model.cluster``'s constants for ``variant`` (parts joined by ``+``)."""
    for part in variant.split("+"):
        name = part.rstrip("0123456789.")
        if part in FLAGS:
            module, constant, value = FLAGS[part]
        elif name in NUMBERED and name != part:
            module, constant, read = NUMBERED[name]
            value = read(part[len(name) :])
        elif part == "base" or part.startswith(("centre", "knn", "lex")):  # applied in ``run``
            continue
        else:
            raise SystemExit(f"unknown variant part {part!r}")
        setattr(module, constant, value)


def describe(labels: np.ndarray, embeddings: np.ndarray, truth) -> dict:
    """Sizes, the large-and-loose check and agreement with the labels of one clustering."""
    n = len(labels)
    ids, sizes = np.unique(labels[labels >= 0], return_counts=True)
    spread = topic_spread(embeddings, labels)
    row = {
        "k": int(len(ids)),
        "largest": float(sizes.max() / n),
        "over12_incoherent": len(broad_topics(spread, dict(zip(ids.tolist(), sizes.tolist(), strict=True)), n)),
    }
    if truth is not None:
        scores = ev.clustering_scores(truth, labels)
        row.update(nmi=scores["nmi_all"], ari=scores["ari_all"])
    return row


def label_row(docs, embeddings, labels, dt, embed, extra: dict | None = None, represent=None) -> dict:
    """The labels of one clustering and their measures; with the papers' keywords (``extra``, from
    :func:`load`), also how far the labels agree with them (:func:`keyword_agreement`).

    With ``represent`` (the corpus's ``RepresentParams``) the labels are the build's own
    (``represent.fit_topics``: BERTopic's c-TF-IDF, KeyBERTInspired and MMR terms as candidates,
    its topic embeddings for the retrieval check); without, they are chosen from the c-TF-IDF terms
    alone (``represent.topic_labels``), as every run before 2026-12-07 (thirty-second session)
    made them: 255 labels of 3,339 differ from the build's (27 corpora, seeds 0-5 and 42)."""
    extra = extra or {}
    if represent is not None:
        labels, chosen = built_labels(docs, embeddings, labels, dt, embed, represent, extra.get("titles"))
    ids = sorted(set(labels.tolist()) - {-1})
    _, centroids = cluster_refine.centroids(labels, embeddings)
    if represent is None:
        chosen = topic_labels(docs, labels, dt, centroids, embed, titles=extra.get("titles"))
    names = {t: chosen[t][0] for t in ids}
    scored = ev.label_scores(names, labels, docs, label_vectors=embed([names[t] for t in ids]), centroids=centroids)
    sizes = {t: int((labels == t).sum()) for t in ids}
    return {
        "cov": scored.weighted_coverage,
        "low_large": len(scored.low_large),
        "contained": len(scored.contained),
        "retrieval": scored.retrieval,
        "weak": sum(chosen[t][1].value < 0.5 for t in ids),
        "labels": [(names[t], sizes[t], round(scored.coverage[t], 2)) for t in sorted(ids, key=lambda t: -sizes[t])],
    } | keyword_agreement(names, labels, extra.get("keywords"))


def built_labels(docs, embeddings, labels, dt, embed, represent, titles) -> tuple[np.ndarray, dict]:
    """The topics and labels (topic -> (label, support)) the build gives this clustering: its
    representation stage as the build runs it (``represent.fit_topics``), on the same papers."""
    n = len(docs)
    model = fit_topics(
        docs, embeddings, np.zeros((n, 2), dtype=np.float32), labels, np.zeros(n, dtype=bool),
        [str(i) for i in range(n)], dt, represent, embed, titles=titles,
    )  # fmt: skip
    table = model.tables.topics
    rows = zip(table["topic"], table["label"], table["label_support"], strict=True)
    return model.topics, {int(t): (label, _Support(support)) for t, label, support in rows}


@dataclasses.dataclass(frozen=True)
class _Support:
    """A built label's support, read as ``label_evidence.LabelSupport`` is (``.value``)."""

    value: float


def keyword_agreement(names: dict[int, str], labels: np.ndarray, keywords) -> dict:
    """``kw``: ``pipeline.evaluation.evaluate.keyword_agreement`` where papers carry their authors'
    keywords, and ``kw_papers``, the papers with keywords. Empty without keywords."""
    if not keywords or not any(keywords):
        return {}
    return {
        "kw": ev.keyword_agreement(names, labels, keywords),
        "kw_papers": sum(isinstance(k, str) and bool(k.strip()) for k in keywords),
    }


def centred(embeddings: np.ndarray, share: float = 1.0) -> np.ndarray:
    """The embeddings less ``share`` of the corpus's mean vector, normalised again (variants
    ``centre``, ``centreX``)."""
    out = embeddings - share * embeddings.mean(axis=0, dtype=np.float64).astype(np.float32)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def lexical_knn(embeddings: np.ndarray, dt, config, weight: float, k: int, candidates: int = 2) -> tuple:
    """Variant ``lexB`` (screened 2026-12-05, fourteenth session): each paper's neighbours are the
    ``candidates`` x k nearest by embedding, reranked by embedding cosine + B x the cosine of their
    TF-IDF term vectors (the build's terms, sublinear counts, idf), the best ``k`` kept (the width of
    the corpus's kNN graph, self first)."""
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.preprocessing import normalize

    wide = with_overrides(config, {"umap": {"n_neighbors": candidates * (k - 1)}})
    idx, dist = shared_knn(embeddings, wide.umap)
    tfidf = normalize(TfidfTransformer(sublinear_tf=True).fit_transform(dt.counts)).tocsr()
    rows = np.repeat(np.arange(len(idx)), idx.shape[1])
    lexical = np.asarray(tfidf[rows].multiply(tfidf[idx.ravel()]).sum(axis=1)).reshape(idx.shape)
    score = (1.0 - dist) + weight * lexical
    score[:, 0] = np.inf  # self first
    order = np.lexsort((idx, -score), axis=1)[:, :k]
    distance = np.take_along_axis(1.0 - score, order, axis=1).astype(np.float32)
    distance[:, 0] = 0.0
    return np.take_along_axis(idx, order, axis=1), distance


def run(
    name: str, variant: str, seeds: list[int], artifacts: Path, *, with_labels: bool, samples: bool = True
) -> list[dict]:
    docs, embeddings, truth, config, extra = load(name, artifacts)
    apply_variant(variant)
    # ``knnK``: the shared kNN graph (the clustering's and its samples') with K neighbours.
    knn_part = next((p for p in variant.split("+") if p.startswith("knn")), None)
    if knn_part is not None:
        config = with_overrides(config, {"umap": {"n_neighbors": int(knn_part[len("knn") :])}})
    # ``centre``: the clustering (its kNN graph, k-means step and vote) sees the centred embeddings;
    # sizes, coherence and labels are measured on the model's own, as for every other variant.
    # ``centregraph``: only the kNN graph is made from the centred embeddings.
    part = next((p for p in variant.split("+") if p.startswith("centre")), None)
    if part == "centregraph":
        knn = shared_knn(centred(embeddings), config.umap)
        clustered = embeddings
    else:
        clustered = embeddings if part is None else centred(embeddings, float(part[len("centre") :] or 1))
        knn = shared_knn(clustered, config.umap)
    dt = doc_terms(docs, ngram_range=config.represent.ngram_range, min_df=config.represent.min_df)
    lex_part = next((p for p in variant.split("+") if p.startswith("lex")), None)
    if lex_part is not None:
        knn = lexical_knn(clustered, dt, config, float(lex_part[len("lex") :]), k=knn[0].shape[1])
    cache = artifacts / ".cache"

    def embed(texts):
        return embed_texts(list(texts), config.embed, cache).vectors

    rows, runs, resampled = [], [], []
    for seed in seeds:
        params = dataclasses.replace(config.cluster, seed=seed)
        started = time.perf_counter()
        labels = C.cluster(None, clustered, params, knn=knn[0]).labels
        row = {"corpus": name, "variant": variant, "kind": "ours", "seed": seed, "n": len(docs)}
        row["seconds"] = round(time.perf_counter() - started, 2)
        row |= describe(labels, embeddings, truth)
        if with_labels:
            row |= label_row(docs, embeddings, labels, dt, embed, extra, represent=config.represent)
        runs.append(labels)
        if samples:
            resampled.append(resampled_clustering(clustered, knn, config, seed))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "labels"}), flush=True)
    summary = {"corpus": name, "variant": variant, "kind": "summary", "seeds": seeds, "n": len(docs)}
    summary["stability"] = ev.stability(runs) if len(runs) > 1 else None
    summary["resampled_stability"] = ev.stability(resampled) if len(resampled) > 1 else None
    for key in (
        "nmi",
        "ari",
        "cov",
        "retrieval",
        "largest",
        "k",
        "low_large",
        "contained",
        "weak",
        "over12_incoherent",
    ):
        values = [r[key] for r in rows if key in r]
        if values:
            summary[key] = round(float(np.mean(values)), 4)
    print(json.dumps(summary), flush=True)
    return [*rows, summary]


def baselines(name: str, seeds: list[int], artifacts: Path) -> list[dict]:
    docs, embeddings, truth, config, extra = load(name, artifacts)
    ours = cluster_params.resolve_params(config.cluster, len(docs)).n_topics
    ks = sorted({ours, len(set(truth.tolist())) if truth is not None else ours})
    rows = []
    for seed in seeds:
        for k in ks:
            labels = np.asarray(bl.kmeans(embeddings, k, seed=seed).labels)
            rows.append(
                {"corpus": name, "variant": f"kmeans{k}", "kind": "baseline", "seed": seed}
                | describe(labels, embeddings, truth)
            )
        labels = np.asarray(bl.vanilla_bertopic_reduce_outliers(docs, embeddings, None, seed=seed).labels)
        rows.append(
            {"corpus": name, "variant": "bertopic_reduce", "kind": "baseline", "seed": seed}
            | describe(labels, embeddings, truth)
        )
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", choices=sorted(CORPORA))
    parser.add_argument("--variants", nargs="+", default=["base"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--artifacts", type=Path, default=Path("/tmp/topic-variants"), help="embedding cache")
    parser.add_argument("--no-labels", action="store_true", help="clustering measures only")
    parser.add_argument(
        "--no-samples",
        action="store_true",
        help="no 90%% samples (a variant of the labels only: the clustering is the same)",
    )
    parser.add_argument("--baselines", action="store_true")
    args = parser.parse_args()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for name in args.corpora:
        rows = baselines(name, args.seeds, args.artifacts) if args.baselines else []
        defaults = [getattr(module, knob) for module, knob in KNOBS]
        for variant in args.variants:
            rows += run(
                name, variant, args.seeds, args.artifacts, with_labels=not args.no_labels, samples=not args.no_samples
            )
            for (module, knob), value in zip(KNOBS, defaults, strict=True):
                setattr(module, knob, value)
        with OUT.open("a", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
