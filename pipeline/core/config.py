"""Settings of every stage as frozen dataclasses; the CLI and a TOML config file override them.

Each dataclass carries, next to its fields, the table of what every field accepts (``ALLOWED``: a
type, a range or a list of choices, and whether "unset" is allowed). A value is checked when the
dataclass is made, whoever makes it (defaults, ``dataclasses.replace``, a TOML file, command-line
flags, a manifest read back for an incremental build or ``evaluate``), so a bad setting fails at
once, before any file is read or any text embedded, with a :class:`SettingsError` that names the
key, the value and what is allowed. ``pipeline.core.settings`` adds where the value came from.

There is deliberately no setting that selects a test-only code path: the hashing test encoder is
injected by tests (``build(..., encoder=...)``, ``pipeline.embed.encoders.register_encoder``), never chosen.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

from pipeline.core.errors import PipelineError

#: Embedding backends a user can choose (``EmbedParams.backend``).
BACKENDS = ("onnx-int8", "onnx", "torch")
CLUSTER_METHODS = ("auto", "graph", "ward", "hdbscan", "agglomerative")
HDBSCAN_SELECTIONS = ("eom", "leaf")


class SettingsError(PipelineError):
    """A setting has a value it does not accept.

    Attributes:
        key: ``section.field`` (e.g. ``cluster.method``).
        value: the value given.
        allowed: what the setting accepts, in words.
    """

    def __init__(self, key: str, value: Any, allowed: str, where: str = ""):
        self.key, self.value, self.allowed, self.where = key, value, allowed, where
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{key} = {value!r} is not allowed; {key} must be {allowed}.")

    def located(self, where: str) -> SettingsError:
        """The same error, saying where the value came from (a file, the command line, a manifest)."""
        return SettingsError(self.key, self.value, self.allowed, where)


@dataclass(frozen=True)
class Allowed:
    """What one setting accepts.

    Attributes:
        kind: ``int``, ``float``, ``bool``, ``str``, ``tuple`` (of ints) or a settings dataclass.
        choices: the only values allowed (strings), if not empty.
        low / high: inclusive range of a number (of each item of a tuple).
        optional: ``None`` (unset) is allowed; ``unset`` says what it means.
        length: number of items of a tuple; ``ordered``: items must not decrease.
    """

    kind: type
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    optional: bool = False
    unset: str = ""
    length: int = 0
    ordered: bool = False

    def describe(self) -> str:
        """What is allowed, in words (used in error messages and the README's configuration table)."""
        if self.choices:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind is bool:
            text = "true or false"
        elif self.kind is str:
            text = "a non-empty string"
        elif self.kind is tuple:
            text = f"a list of {self.length} integers{_range_words(self.low, self.high)}"
            text += ", the first no larger than the second" if self.ordered else ""
        elif self.kind in (int, float):
            text = ("an integer" if self.kind is int else "a number") + _range_words(self.low, self.high)
        else:
            text = f"a table of {self.kind.__name__} settings"
        if self.optional:
            text += f", or unset ({self.unset or 'none'})"
        return text

    def check(self, value: Any) -> tuple[bool, Any]:
        """``(ok, value)``: whether ``value`` is allowed, and the value normalised (ints for int
        settings, floats for float settings, a tuple for a list)."""
        if value is None:
            return self.optional, None
        if self.kind is bool:
            return isinstance(value, bool), value
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                return False, value
            return self._in_range(int(value)), int(value)
        if self.kind is float:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                return False, value
            value = float(value)
            return value == value and self._in_range(value), value
        if self.kind is str:
            ok = isinstance(value, str) and value.strip() != "" and (not self.choices or value in self.choices)
            return ok, value
        if self.kind is tuple:
            if not isinstance(value, list | tuple) or len(value) != self.length:
                return False, value
            items = tuple(value)
            if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in items):
                return False, value
            items = tuple(int(v) for v in items)
            ok = all(self._in_range(v) for v in items) and (not self.ordered or list(items) == sorted(items))
            return ok, items
        return isinstance(value, self.kind), value

    def _in_range(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


def _range_words(low: float | None, high: float | None) -> str:
    def num(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else f"{x:g}"

    if low is not None and high is not None:
        return f" from {num(low)} to {num(high)}"
    if low is not None:
        return f" >= {num(low)}"
    if high is not None:
        return f" <= {num(high)}"
    return ""


class _Checked:
    """Validates every field against the class's ``ALLOWED`` table when an instance is made."""

    SECTION: ClassVar[str]
    ALLOWED: ClassVar[dict[str, Allowed]]

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            rule = self.ALLOWED.get(f.name)
            if rule is None:  # a field without a rule is a bug here, not a user error
                raise TypeError(f"{type(self).__name__}.{f.name} has no entry in ALLOWED")
            value = getattr(self, f.name)
            ok, normalised = rule.check(value)
            if not ok:
                raise SettingsError(f"{self.SECTION}.{f.name}", value, rule.describe())
            if normalised is not value:
                object.__setattr__(self, f.name, normalised)


@dataclass(frozen=True)
class EmbedParams(_Checked):
    """How texts become vectors.

    Attributes:
        model: "default" (packaged all-MiniLM-L6-v2) or a local sentence-transformers folder.
        backend: "onnx-int8" (default, ~2x faster), "onnx" (fp32) or "torch" (reference).
        max_tokens: truncation length; 256 is what sentence-transformers uses for this model.
        batch_size: texts per forward pass. It does not change a build's result: the embedding
            store keeps the first vector computed for a text and every later build reads that one.
        threads: CPU threads for the encoder; 0 lets the runtime decide. Like ``batch_size``, it
            changes speed, not results.
    """

    SECTION: ClassVar[str] = "embed"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        "model": Allowed(str),
        "backend": Allowed(str, choices=BACKENDS),
        "max_tokens": Allowed(int, low=8, high=512),
        "batch_size": Allowed(int, low=1, high=4096),
        "threads": Allowed(int, low=0, high=1024),
    }

    model: str = "default"
    backend: str = "onnx-int8"
    max_tokens: int = 256
    batch_size: int = 16
    threads: int = 0


@dataclass(frozen=True)
class ColumnMap(_Checked):
    """Explicit input column names; ``None`` means "recognise it by its common names".

    Common names (case-insensitive): abstract/summary/text, title/paper/name, year/date,
    venue/conference, authors, url/link/site/pdf, id/paper_id/forum, label/primary_area/category,
    keywords.
    """

    SECTION: ClassVar[str] = "ingest.columns"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        role: Allowed(str, optional=True, unset="recognised by its common names")
        for role in ("abstract", "title", "year", "venue", "authors", "url", "id", "label", "keywords")
    }

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
class IngestParams(_Checked):
    """How input files become papers.

    Attributes:
        columns: explicit column names (else recognised by common names).
        min_words: abstracts with fewer words are skipped as too short.
        dedupe: skip exact and near-exact duplicate abstracts (the first one is kept).
        venue / year: values for papers whose input gives none (e.g. ``--venue NeurIPS``).
    """

    SECTION: ClassVar[str] = "ingest"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        "columns": Allowed(ColumnMap),
        "min_words": Allowed(int, low=0, high=10_000),
        "dedupe": Allowed(bool),
        "venue": Allowed(str, optional=True, unset="from the input"),
        "year": Allowed(int, low=1800, high=2100, optional=True, unset="from the input"),
    }

    columns: ColumnMap = ColumnMap()
    min_words: int = 8
    dedupe: bool = True
    venue: str | None = None
    year: int | None = None


@dataclass(frozen=True)
class UmapParams(_Checked):
    """UMAP to ``cluster_dims`` dimensions for clustering and to 2 for the map.

    Attributes:
        n_neighbors: size of the shared cosine kNN graph (capped at n - 1); None adapts: 15 up to
            9,000 papers, rising to 30 at 18,000 (steadier topics on large corpora).
        cluster_dims: dimensions of the clustering projection (the ``hdbscan`` method only).
        min_dist_cluster: 0 packs clusters tightly, which helps density clustering.
        min_dist_map: a little spread so that points on the map do not sit on top of each other.
        n_epochs: None lets UMAP choose (200 above 10,000 points, else 500).
        seed: random seed; fixed so that two builds give the same map and topics.
        exact_knn_max: up to this many papers the kNN graph is exact, beyond it approximate.
        min_points_for_umap: smaller corpora are projected with PCA.
    """

    SECTION: ClassVar[str] = "umap"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        "n_neighbors": Allowed(int, low=2, high=1000, optional=True, unset="adapts to the corpus size"),
        "cluster_dims": Allowed(int, low=1, high=256),
        "min_dist_cluster": Allowed(float, low=0.0, high=1.0),
        "min_dist_map": Allowed(float, low=0.0, high=1.0),
        "n_epochs": Allowed(int, low=1, high=100_000, optional=True, unset="UMAP chooses"),
        "seed": Allowed(int, low=0, high=2**32 - 1),
        "exact_knn_max": Allowed(int, low=0),
        "min_points_for_umap": Allowed(int, low=4, high=100_000),
    }

    n_neighbors: int | None = None
    cluster_dims: int = 5
    min_dist_cluster: float = 0.0
    min_dist_map: float = 0.1
    n_epochs: int | None = None
    seed: int = 42
    exact_knn_max: int = 40_000
    min_points_for_umap: int = 8


@dataclass(frozen=True)
class ClusterParams(_Checked):
    """Clustering of the papers into topics.

    Attributes:
        method: "auto" ("graph" from 500 papers, "ward" below); "graph" (micro topics of the shared kNN graph found by Leiden
            in ``runs`` seeded runs and merged to ``n_topics`` by how often the runs agree, their
            borders then refined by one k-means step: needs no UMAP projection and gives the
            same topics on every processor from the same embeddings); "hdbscan" (the
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
            one Leiden pass over the graph. None adapts: 40 up to 5,000 papers, then fewer as
            the graph grows (21 at 18,661, 9 at 100,000, 3 at a million;
            ``cluster.default_runs``). With 10 runs or more each sees 80% of the papers
            (``cluster.RUN_SHARE``).
        min_cluster_size: HDBSCAN's smallest topic; None adapts it to the corpus size.
        min_samples: HDBSCAN's noise sensitivity; None adapts it.
        selection: HDBSCAN's cluster selection, "eom" or "leaf".
        n_topics: number of topics the micro topics are merged down to (agglomerative: the
            number of clusters); None adapts (sqrt(n)/2.3: 25 topics at 3,281 papers).
        smooth_k: neighbours in one round of majority-vote smoothing of the topic borders; None
            adapts (off for ``graph``, whose runs' vote places the border papers), 0 turns it off.
        reassign_outliers: place papers clustering left out (border papers) into a topic, kept
            as a flag per paper: with ``graph`` the topic the runs grouped them with most, else
            their nearest topic. Off keeps them as topic -1.
    """

    SECTION: ClassVar[str] = "cluster"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        "method": Allowed(str, choices=CLUSTER_METHODS),
        "seed": Allowed(int, low=0, high=2**31 - 1),
        "resolution": Allowed(float, low=1e-6, high=1e3, optional=True, unset="calibrated on the graph"),
        "runs": Allowed(int, low=1, high=500, optional=True, unset="adapts to the corpus size"),
        "min_cluster_size": Allowed(int, low=2, optional=True, unset="adapts to the corpus size"),
        "min_samples": Allowed(int, low=1, optional=True, unset="adapts to min_cluster_size"),
        "selection": Allowed(str, choices=HDBSCAN_SELECTIONS),
        "n_topics": Allowed(int, low=1, optional=True, unset="adapts to the corpus size"),
        "smooth_k": Allowed(int, low=0, high=1000, optional=True, unset="adapts to min_cluster_size; off for graph"),
        "reassign_outliers": Allowed(bool),
    }

    method: str = "auto"
    seed: int = 42
    resolution: float | None = None
    runs: int | None = None
    min_cluster_size: int | None = None
    min_samples: int | None = None
    selection: str = "eom"
    n_topics: int | None = None
    smooth_k: int | None = None
    reassign_outliers: bool = True


@dataclass(frozen=True)
class RepresentParams(_Checked):
    """Topic representations (BERTopic's c-TF-IDF plus KeyBERTInspired and MMR).

    Attributes:
        ngram_range: 1- and 2-word terms.
        min_df: a term must appear in at least this many papers (None adapts to corpus size).
        top_n_words: terms kept per topic.
        mmr_diversity: diversity of the MMR re-ranking.
        n_representative: representative papers stored per topic.
        n_terms_stored: terms per topic stored for the relevance slider.
    """

    SECTION: ClassVar[str] = "represent"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        "ngram_range": Allowed(tuple, low=1, high=4, length=2, ordered=True),
        "min_df": Allowed(int, low=1, optional=True, unset="adapts to the corpus size"),
        "top_n_words": Allowed(int, low=1, high=100),
        "mmr_diversity": Allowed(float, low=0.0, high=1.0),
        "n_representative": Allowed(int, low=1, high=100),
        "n_terms_stored": Allowed(int, low=1, high=1000),
    }

    ngram_range: tuple[int, int] = (1, 2)
    min_df: int | None = None
    top_n_words: int = 10
    mmr_diversity: float = 0.3
    n_representative: int = 5
    n_terms_stored: int = 40


@dataclass(frozen=True)
class StabilityParams(_Checked):
    """Per-topic stability: how well each topic is found again when the corpus is a little different.

    The build clusters the papers ``runs`` more times, each time a different random 90% of them
    with its own seed (``cluster.seed + 1`` to ``cluster.seed + runs``), with the same stages and
    settings on the build's kNN graph less the papers left out
    (``pipeline.evaluation.quality.resampled_clustering``); a topic's stability is the mean over those runs of
    its best Jaccard overlap with any of their topics, over the papers the run kept
    (``pipeline.evaluation.evaluate.topic_stability``). With the default graph clustering an extra run costs
    one clustering (IJCAI, 3,281 papers: about 2.5 s; no UMAP), hence the size limit.

    Attributes:
        runs: extra clusterings; 0 turns the measurement off (``--no-stability``).
        max_papers: larger corpora are not measured; 0 lifts the limit (``--stability``).
        background_min_cpus: with at least this many CPUs, corpora of 2,000 papers or more compute
            the extra runs in a separate process while the build goes on (map, clustering,
            representations); 0 never does. On fewer cores a second process only competes. Where
            the runs are computed does not change them.
    """

    SECTION: ClassVar[str] = "stability"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        "runs": Allowed(int, low=0, high=50),
        "max_papers": Allowed(int, low=0),
        "background_min_cpus": Allowed(int, low=0, high=4096),
    }

    runs: int = 2
    max_papers: int = 5_000
    background_min_cpus: int = 4


@dataclass(frozen=True)
class BuildConfig(_Checked):
    """Everything that decides a build's result (``pipeline.build.build.fingerprint`` hashes the part
    of it that changes results: see :data:`SPEED_ONLY`)."""

    SECTION: ClassVar[str] = "config"
    ALLOWED: ClassVar[dict[str, Allowed]] = {
        "ingest": Allowed(IngestParams),
        "embed": Allowed(EmbedParams),
        "umap": Allowed(UmapParams),
        "cluster": Allowed(ClusterParams),
        "represent": Allowed(RepresentParams),
        "stability": Allowed(StabilityParams),
    }

    ingest: IngestParams = IngestParams()
    embed: EmbedParams = EmbedParams()
    umap: UmapParams = UmapParams()
    cluster: ClusterParams = ClusterParams()
    represent: RepresentParams = RepresentParams()
    stability: StabilityParams = StabilityParams()


#: Settings that change how fast a build runs, never what it produces; the build fingerprint and
#: the incremental-build check leave them out, so changing them forces no refit. ``embed.model``
#: is replaced there by the model's content fingerprint (``pipeline.embed.embed_model.model_key``): moving a
#: model folder changes nothing, changing its weights changes everything.
SPEED_ONLY: tuple[tuple[str, str], ...] = (
    ("embed", "batch_size"),  # the store keeps a text's first vector, whatever the batch it came in
    ("embed", "threads"),
    ("stability", "background_min_cpus"),  # where the extra runs are computed, not what they are
)

#: Every settings section, by its name in a TOML file and in the manifest.
SECTIONS: dict[str, type] = {
    "ingest": IngestParams,
    "embed": EmbedParams,
    "umap": UmapParams,
    "cluster": ClusterParams,
    "represent": RepresentParams,
    "stability": StabilityParams,
}


def readme_table() -> str:
    """The README's table of allowed values (between the ``settings-allowed`` markers), from the
    ``ALLOWED`` tables above; ``tests/test_integrity_settings.py`` fails when the README differs.
    Regenerate it with ``python -c "from pipeline.core import config; print(config.readme_table())"``."""
    lines = ["| setting | default | allowed |", "|---|---|---|"]
    for section, cls in SECTIONS.items():
        default = cls()
        for f in dataclasses.fields(cls):
            value = getattr(default, f.name)
            if dataclasses.is_dataclass(value):
                continue
            shown = "unset" if value is None else (list(value) if isinstance(value, tuple) else value)
            shown = str(shown).lower() if isinstance(shown, bool) else shown
            speed = " (speed only)" if (section, f.name) in SPEED_ONLY else ""
            lines.append(f"| `{section}.{f.name}` | `{shown}` | {cls.ALLOWED[f.name].describe()}{speed} |")
    roles = ", ".join(f.name for f in dataclasses.fields(ColumnMap))
    lines.append(f"| `ingest.columns.ROLE` ({roles}) | `unset` | {ColumnMap.ALLOWED['abstract'].describe()} |")
    return "\n".join(lines)
