"""Settings of every stage as frozen dataclasses; the CLI and a TOML config file override them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmbedParams:
    """How texts become vectors.

    Attributes:
        model: "default" (packaged all-MiniLM-L6-v2) or a local sentence-transformers folder.
        backend: "onnx-int8" (default, ~2x faster), "onnx" (fp32), "torch" (reference), or
            "hashing" (no model: bag-of-words hashing, for tests only).
        max_tokens: truncation length; 256 is what sentence-transformers uses for this model.
        batch_size: texts per forward pass.
        threads: CPU threads for the encoder; 0 lets the runtime decide.
    """

    model: str = "default"
    backend: str = "onnx-int8"
    max_tokens: int = 256
    batch_size: int = 16
    threads: int = 0


@dataclass(frozen=True)
class ColumnMap:
    """Explicit input column names; ``None`` means "recognise it by its common names".

    Common names (case-insensitive): abstract/summary/text, title/paper/name, year/date,
    venue/conference, authors, url/link/site/pdf, id/paper_id/forum, label/primary_area/category,
    keywords.
    """

    abstract: str | None = None
    title: str | None = None
    year: str | None = None
    venue: str | None = None
    authors: str | None = None
    url: str | None = None
    id: str | None = None
    label: str | None = None
    keywords: str | None = None


@dataclass(frozen=True)
class IngestParams:
    """How input files become papers.

    Attributes:
        columns: explicit column names (else recognised by common names).
        min_words: abstracts with fewer words are skipped as too short.
        dedupe: skip exact and near-exact duplicate abstracts (the first one is kept).
        venue / year: values for papers whose input gives none (e.g. ``--venue NeurIPS``).
    """

    columns: ColumnMap = ColumnMap()
    min_words: int = 8
    dedupe: bool = True
    venue: str | None = None
    year: int | None = None


@dataclass(frozen=True)
class UmapParams:
    """UMAP to ``cluster_dims`` dimensions for clustering and to 2 for the map.

    Attributes:
        n_neighbors: size of the shared cosine kNN graph (capped at n - 1); None adapts: 15 up to
            9,000 papers, rising to 30 at 18,000 (steadier topics on large corpora).
        cluster_dims: dimensions of the clustering projection.
        min_dist_cluster: 0 packs clusters tightly, which helps density clustering.
        min_dist_map: a little spread so that points on the map do not sit on top of each other.
        n_epochs: None lets UMAP choose (200 above 10,000 points, else 500).
        seed: random seed; fixed so that two builds give the same map and topics.
        exact_knn_max: up to this many papers the kNN graph is exact, beyond it approximate.
        min_points_for_umap: smaller corpora are projected with PCA.
    """

    n_neighbors: int | None = None
    cluster_dims: int = 5
    min_dist_cluster: float = 0.0
    min_dist_map: float = 0.1
    n_epochs: int | None = None
    seed: int = 42
    exact_knn_max: int = 40_000
    min_points_for_umap: int = 8


@dataclass(frozen=True)
class ClusterParams:
    """Clustering of the papers into topics.

    Attributes:
        method: "auto" ("graph" from 500 papers, "ward" below); "graph" (micro topics of the shared kNN graph found by Leiden
            in ``runs`` seeded runs and merged to ``n_topics`` by how often the runs agree: needs
            no UMAP projection and gives the same topics on every processor); "hdbscan" (the
            earlier default: dense micro topics of the UMAP projection merged to ``n_topics``,
            which moves with UMAP's seed and the processor); "agglomerative" (Ward on the UMAP
            projection, ``n_topics`` clusters); "ward" (Ward on the embeddings, ``n_topics``
            clusters: no projection, no seed).
        seed: seed of the graph clustering's Leiden runs (run r uses ``seed * 1000 + r``); the
            evaluation's seeds replace it.
        resolution: Leiden's modularity resolution for the micro topics; None calibrates it on the
            graph for about 2.6 micro topics per topic (``cluster.calibrated_resolution``).
        runs: Leiden runs whose agreement decides the topics; more runs, steadier topics (seed
            stability on ICML 2024: 5 runs 0.67, 10 runs 0.75, 20 runs 0.86), each run costing
            one Leiden pass over the graph.
        min_cluster_size: HDBSCAN's smallest topic; None adapts it to the corpus size.
        min_samples: HDBSCAN's noise sensitivity; None adapts it.
        selection: HDBSCAN's cluster selection, "eom" or "leaf".
        n_topics: number of topics the micro topics are merged down to (agglomerative: the
            number of clusters); None adapts (sqrt(n)/2.3: 25 topics at 3,281 papers).
        smooth_k: neighbours in one round of majority-vote smoothing of the topic borders; None
            adapts, 0 turns it off.
        reassign_outliers: place papers clustering left out into their nearest topic (kept as a
            flag per paper). Off keeps them as topic -1.
    """

    method: str = "auto"
    seed: int = 42
    resolution: float | None = None
    runs: int = 20
    min_cluster_size: int | None = None
    min_samples: int | None = None
    selection: str = "eom"
    n_topics: int | None = None
    smooth_k: int | None = None
    reassign_outliers: bool = True


@dataclass(frozen=True)
class RepresentParams:
    """Topic representations (BERTopic's c-TF-IDF plus KeyBERTInspired and MMR).

    Attributes:
        ngram_range: 1- and 2-word terms.
        min_df: a term must appear in at least this many papers (None adapts to corpus size).
        top_n_words: terms kept per topic.
        mmr_diversity: diversity of the MMR re-ranking.
        n_representative: representative papers stored per topic.
        n_terms_stored: terms per topic stored for the relevance slider.
    """

    ngram_range: tuple[int, int] = (1, 2)
    min_df: int | None = None
    top_n_words: int = 10
    mmr_diversity: float = 0.3
    n_representative: int = 5
    n_terms_stored: int = 40


@dataclass(frozen=True)
class StabilityParams:
    """Per-topic stability: how well each topic is found again when the corpus is a little different.

    The build clusters the papers ``runs`` more times, each time a different random 90% of them
    with its own seed (``cluster.seed + 1`` to ``cluster.seed + runs``), with the same stages and
    settings on the build's kNN graph less the papers left out
    (``pipeline.quality.resampled_clustering``); a topic's stability is the mean over those runs of
    its best Jaccard overlap with any of their topics, over the papers the run kept
    (``pipeline.evaluate.topic_stability``). With the default graph clustering an extra run costs
    one clustering (IJCAI, 3,281 papers: about 2.5 s; no UMAP), hence the size limit.

    Attributes:
        runs: extra clusterings; 0 turns the measurement off (``--no-stability``).
        max_papers: larger corpora are not measured; 0 lifts the limit (``--stability``).
        background_min_cpus: with at least this many CPUs, corpora of 2,000 papers or more compute
            the extra runs in a separate process while the build goes on (map, clustering,
            representations); 0 never does. On fewer cores a second process only competes.
    """

    runs: int = 2
    max_papers: int = 5_000
    background_min_cpus: int = 4


@dataclass(frozen=True)
class BuildConfig:
    """Everything that decides a build's result (hashed into the manifest)."""

    ingest: IngestParams = IngestParams()
    embed: EmbedParams = EmbedParams()
    umap: UmapParams = UmapParams()
    cluster: ClusterParams = ClusterParams()
    represent: RepresentParams = RepresentParams()
    stability: StabilityParams = StabilityParams()
