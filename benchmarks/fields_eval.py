"""Fields (``pipeline.model.fields``) on every corpus of ``topic_variants.py``: how well named, how stable.

For each corpus and seed: today's clustering (as the build makes it), its topics grouped into
fields as the build groups them (Ward on the topics' mean vectors, ``group_topics``), the fields
named by the build's labeller (``represent.topic_labels`` with the fields as its clusters), and the
same on a random 90% of the papers with the seed (``resampled_clustering``). Reports per corpus:

* ``fields``, ``largest`` (share of the papers in the largest field);
* ``cov`` (size-weighted share of a field's papers using its label's words, as topics' label
  coverage), ``weak`` (fields whose label support is under 0.5, marked (?) in the app),
  ``contained``, ``retrieval`` (a field's label embeds nearest its own field's centroid);
* ``stability`` / ``resampled_stability`` (mean pairwise ARI of the papers' fields across seeds
  / across 90% samples, on the papers both kept), beside the same for the topics;
* ``nmi`` / ``ari`` of the fields against the corpus's labels where it has them.

    .venv/bin/python benchmarks/fields_eval.py icml2024 iclr2022 --seeds 0 1 2 --artifacts /tmp/tv

Needs the corpora's embeddings in ``--artifacts`` (``topic_variants.py`` writes them there).
Appends to ``benchmarks/results/fields.jsonl``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.topic_variants import CORPORA, load  # noqa: E402
from pipeline.embed.embed import embed_texts  # noqa: E402
from pipeline.evaluation import evaluate as ev  # noqa: E402
from pipeline.evaluation.quality import resampled_clustering  # noqa: E402
from pipeline.model import cluster as C  # noqa: E402
from pipeline.model import cluster_refine  # noqa: E402
from pipeline.model.fields import group_topics  # noqa: E402
from pipeline.model.reduce import shared_knn  # noqa: E402
from pipeline.model.represent import topic_labels  # noqa: E402
from pipeline.model.vocab import doc_terms  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "fields.jsonl"


def fields_of(labels: np.ndarray, embeddings: np.ndarray) -> np.ndarray:
    """Each paper's field (``ev.ABSENT`` / -1 kept as they are), grouped as the build groups topics."""
    present = labels[(labels >= 0)]
    ids, sizes = np.unique(present, return_counts=True)
    _, centroids = cluster_refine.centroids(np.where(labels >= 0, labels, -1), embeddings)
    field_of = group_topics(ids, centroids, sizes)
    out = labels.copy()
    for t in ids:
        out[labels == t] = field_of.get(int(t), -1)
    return out


def named(docs, embeddings, fields: np.ndarray, dt, embed) -> dict:
    ids = sorted(set(fields.tolist()) - {-1})
    _, centroids = cluster_refine.centroids(fields, embeddings)
    chosen = topic_labels(docs, fields, dt, centroids, embed)
    names = {f: chosen[f][0] for f in ids}
    scored = ev.label_scores(names, fields, docs, label_vectors=embed([names[f] for f in ids]), centroids=centroids)
    sizes = {f: int((fields == f).sum()) for f in ids}
    return {
        "cov": scored.weighted_coverage,
        "contained": len(scored.contained),
        "retrieval": scored.retrieval,
        "weak": sum(chosen[f][1].value < 0.5 for f in ids),
        "labels": [(names[f], sizes[f], round(scored.coverage[f], 2), round(chosen[f][1].value, 2)) for f in ids],
    }


def run(name: str, seeds: list[int], artifacts: Path) -> dict:
    docs, embeddings, truth, config = load(name, artifacts)
    knn = shared_knn(embeddings, config.umap)
    dt = doc_terms(docs, ngram_range=config.represent.ngram_range, min_df=config.represent.min_df)

    def embed(texts):
        return embed_texts(list(texts), config.embed, artifacts / ".cache").vectors

    topics, fields, topics_90, fields_90, rows = [], [], [], [], []
    for seed in seeds:
        started = time.perf_counter()
        labels = C.cluster(None, embeddings, dataclasses.replace(config.cluster, seed=seed), knn=knn[0]).labels
        f = fields_of(labels, embeddings)
        sample = resampled_clustering(embeddings, knn, config, seed)
        topics += [labels]
        fields += [f]
        topics_90 += [sample]
        fields_90 += [fields_of(sample, embeddings)]
        n = len(f)
        row = {"corpus": name, "kind": "seed", "seed": seed, "n": n, "topics": int(len(set(labels.tolist()) - {-1}))}
        row["fields"] = int(len(set(f.tolist()) - {-1}))
        row["largest"] = float(np.bincount(f[f >= 0]).max() / n)
        row |= named(docs, embeddings, f, dt, embed)
        if truth is not None:
            scores = ev.clustering_scores(truth, f)
            row.update(nmi=scores["nmi_all"], ari=scores["ari_all"])
        row["seconds"] = round(time.perf_counter() - started, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    summary = {"corpus": name, "kind": "summary", "seeds": seeds, "n": len(docs), "date": time.strftime("%Y-%m-%d")}
    for key in ("topics", "fields", "largest", "cov", "weak", "contained", "retrieval", "nmi", "ari"):
        values = [r[key] for r in rows if key in r]
        if values:
            summary[key] = round(float(np.mean(values)), 4)
    summary["stability"] = round(ev.stability(fields), 4)
    summary["resampled_stability"] = round(ev.stability(fields_90), 4)
    summary["topic_stability"] = round(ev.stability(topics), 4)
    summary["topic_resampled_stability"] = round(ev.stability(topics_90), 4)
    summary["labels"] = [r["labels"] for r in rows]
    print(json.dumps({k: v for k, v in summary.items() if k != "labels"}), flush=True)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="+", choices=sorted(CORPORA))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--artifacts", type=Path, default=Path("/tmp/topic-variants"))
    args = parser.parse_args()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    for name in args.corpora:
        summary = run(name, args.seeds, args.artifacts)
        with OUT.open("a", encoding="utf-8") as f:
            f.write(json.dumps(summary) + "\n")


if __name__ == "__main__":
    main()
