"""What the quality evaluation (``pipeline.evaluation.quality``) found, and its report: one method's run per
seed (:class:`Run`), each method's runs and scores (:class:`MethodResult`), the whole evaluation
(:class:`Evaluation`, which saves itself as a dict) and the Markdown report
(:func:`report_markdown`, ``NAME.evaluation.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: Methods in report order, with their display names.
METHODS: dict[str, str] = {
    "pipeline": "our pipeline (defaults)",
    "bertopic": "vanilla BERTopic",
    "bertopic_reduce": "vanilla BERTopic + reduce_outliers",
    "kmeans": "k-means",
    "lda": "LDA on word counts",
}


@dataclass(frozen=True)
class Run:
    """One method's result for one seed.

    Attributes:
        labels: int ``(n,)`` final topic per paper; ``-1`` = no topic.
        clustered: bool ``(n,)``, papers the method itself put in a topic (False for outliers,
            also when a later step placed them in a topic).
        topic_words: per topic its top terms, best first; None for k-means.
        seconds: wall time of the run.
    """

    labels: np.ndarray
    clustered: np.ndarray
    topic_words: list[list[str]] | None
    seconds: float
    topic_scores: dict[str, float] = field(default_factory=dict)


@dataclass
class MethodResult:
    """All runs of one method and their scores (means over the seeds unless noted).

    ``scores`` keys: ``n_topics``, ``outlier_share`` (papers left without a topic),
    ``reassigned_share`` (papers the method left out and then placed in a topic),
    ``nmi_all``/``ari_all`` (all papers, outliers as one more cluster), ``nmi_clustered``/
    ``ari_clustered`` (only the papers the method clustered itself), ``diversity``, ``npmi``,
    ``bad_keywords`` (top-10 keywords that are LaTeX, URL, number or stop-word fragments, over all
    topics), ``stability`` (mean pairwise ARI between the seeds' assignments), ``seconds`` (median).
    """

    method: str
    runs: dict[int, Run] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)
    per_seed: list[dict] = field(default_factory=list)
    bad_examples: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def name(self) -> str:
        return METHODS.get(self.method, self.method)


@dataclass
class Evaluation:
    """What :func:`evaluate` found; :meth:`markdown` and :meth:`to_dict` are the report."""

    corpus: str
    n_papers: int
    n_labels: int
    k: int
    seeds: list[int]
    settings: dict
    results: list[MethodResult]
    notes: list[str] = field(default_factory=list)

    @property
    def labelled(self) -> bool:
        return self.n_labels > 0

    def result(self, method: str) -> MethodResult:
        return next(r for r in self.results if r.method == method)

    def to_dict(self) -> dict:
        return {
            "corpus": self.corpus,
            "n_papers": self.n_papers,
            "n_labels": self.n_labels,
            "k": self.k,
            "seeds": self.seeds,
            "settings": self.settings,
            "notes": self.notes,
            "methods": [
                {
                    "method": r.method,
                    "name": r.name,
                    "error": r.error,
                    "scores": {k: _json_float(v) for k, v in r.scores.items()},
                    "per_seed": [{k: _json_float(v) for k, v in row.items()} for row in r.per_seed],
                    "bad_keyword_examples": r.bad_examples,
                }
                for r in self.results
            ],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Evaluation:
        """The evaluation back from :meth:`to_dict` (runs are not stored: scores only)."""
        nan = math.nan
        results = [
            MethodResult(
                m["method"],
                scores={k: nan if v is None else v for k, v in m["scores"].items()},
                per_seed=[{k: nan if v is None else v for k, v in row.items()} for row in m["per_seed"]],
                bad_examples=list(m.get("bad_keyword_examples", [])),
                error=m.get("error"),
            )
            for m in data["methods"]
        ]
        return cls(
            data["corpus"],
            data["n_papers"],
            data["n_labels"],
            data["k"],
            list(data["seeds"]),
            data["settings"],
            results,
            list(data.get("notes", [])),
        )

    def markdown(self) -> str:
        """The results table (one row per method) with a line saying what was measured."""
        cols = [
            ("method", None),
            ("topics", "n_topics"),
            ("outliers", "outlier_share"),
            ("reassigned", "reassigned_share"),
        ]
        if self.labelled:
            cols += [
                ("NMI", "nmi_all"),
                ("ARI", "ari_all"),
                ("NMI clustered", "nmi_clustered"),
                ("ARI clustered", "ari_clustered"),
            ]
        keyworded = any(not math.isnan(r.scores.get("label_keywords", math.nan)) for r in self.results)
        cols += [
            ("label coverage", "label_coverage"),
            ("large topics below 0.5 (weak)", "low_coverage_large"),
            ("contained labels", "contained_labels"),
            ("labels retrieve their topic", "label_retrieval"),
            ("largest topic", "largest_share"),
            ("large and loose", "loose_large"),
            *([("labels in the authors' keywords", "label_keywords")] if keyworded else []),
            ("diversity", "diversity"),
            ("NPMI", "npmi"),
            ("bad keywords", "bad_keywords"),
            ("stability", "stability"),
            ("stability, 90% samples", "resampled_stability"),
            ("seconds", "seconds"),
        ]
        lines = ["| " + " | ".join(c for c, _ in cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
        for r in self.results:
            if r.error:
                lines.append(f"| {r.name} | failed: {r.error} |" + " |" * (len(cols) - 2))
                continue
            name = f"{r.name} (k = {self.k})" if r.method in ("kmeans", "lda") else r.name
            cells = [f"**{name}**" if r.method == "pipeline" else name]
            for _, key in cols[1:]:
                cells.append(_cell(key, r.scores.get(key, math.nan)))
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _json_float(value):
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else round(float(value), 4)
    return value


def _cell(key: str, value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if key in ("outlier_share", "reassigned_share", "largest_share"):
        return f"{value:.1%}"
    if key == "n_topics":
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    if key in ("bad_keywords", "low_coverage_large", "contained_labels", "loose_large"):
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    if key == "seconds":
        return f"{value:.1f}"
    if key == "diversity":
        return f"{value:.2f}"
    return f"{value:.3f}"


def report_markdown(result: Evaluation, command: str = "") -> str:
    """The evaluation report (``NAME.evaluation.md``): the command, the table, what the columns mean."""
    lines = [f"## {result.corpus}", ""]
    if command:
        lines += ["```sh", command, "```", ""]
    lines += [
        f"{result.n_papers:,} papers; seeds {', '.join(map(str, result.seeds))}; " + "; ".join(result.notes) + ".",
        "",
        result.markdown(),
        "",
        "Means over the seeds. outliers: papers left without a topic; reassigned: papers the method left out and then"
        " placed in a topic (our pipeline flags them per paper). NMI/ARI over all papers, outliers as one more"
        ' cluster; "clustered": only the papers the method clustered itself. Diversity: distinct terms among all'
        " topics' top 10; NPMI of the top 10 over document co-occurrence in this corpus; bad keywords: top-10 terms"
        " that are LaTeX, URL, number or stop-word fragments (all topics); stability: mean pairwise ARI between the"
        " seeds' assignments (what the seed changes: our pipeline's Leiden runs, UMAP for BERTopic, the"
        " initialisation for k-means and LDA); stability, 90% samples (our pipeline): the same between runs that"
        " each cluster a different random 90% of the papers with their own seed, over the papers two runs"
        " share; seconds: median per run (ours includes the kNN graph and term counts). Our pipeline's labels"
        " (made as the build makes them, each seed): label coverage, the size-weighted share of a topic's papers"
        ' whose title or abstract use all words of its label (of any part of an "A and B" or "A, B and C"'
        " label; plurals folded); large topics below 0.5, topics of 5% or more of the papers under that coverage (the app marks"
        " a label weak below 0.5); contained labels, pairs where one label holds all the other's words; labels"
        " retrieve their topic, the share of labels whose embedding is nearest their own topic's centroid;"
        " largest topic, its share of the papers; large and loose, topics above 12% of the papers whose papers"
        " are less alike (mean cosine to their centroid) than the median topic's; labels in the authors' keywords"
        " (where papers have keywords), the share of the topics' papers with keywords whose keywords use all words"
        " of one part of their topic's label.",
    ]
    examples = [f"{r.name}: {', '.join(r.bad_examples)}" for r in result.results if r.bad_examples]
    if examples:
        lines += ["", "Keyword fragments, e.g. " + "; ".join(examples) + "."]
    return "\n".join(lines) + "\n"
