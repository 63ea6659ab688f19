"""Where 90% samples part: the graph clustering's stages compared across samples and seeds (issue 20).

For each corpus, three random 90% samples (drawn as ``pipeline.evaluation.quality.resampled_clustering``
draws them: the corpus's kNN graph less the papers left out, the whole corpus's number of topics)
are each clustered with seeds 0-2, and every stage of the graph clustering is kept: the consensus
micro topics, the merged topics (core papers; border papers ``-1``), every paper placed by the
runs' vote, and the topics after the k-means step. Pairs of the nine clusterings are compared
(adjusted Rand index over the papers both samples hold; for the micro and merged topics, over the
papers core in both) in three groups: the same sample with another seed, another sample with the
same seed, and both different (what "stability on 90% samples" measures). The topics of the last
group are also compared separately on the papers that are core in both clusterings and on the
others. Appends one JSON line per corpus to ``benchmarks/results/sample-stages.jsonl``.

    .venv/bin/python benchmarks/sample_stages.py neurips2023 icml2024 --artifacts /tmp/tv
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import topic_variants as tv  # noqa: E402  (the corpora and their loading)
from pipeline.evaluation.quality import RESAMPLE_SHARE, restrict_knn  # noqa: E402
from pipeline.model import cluster as C  # noqa: E402
from pipeline.model import cluster_consensus as CC  # noqa: E402
from pipeline.model.cluster_params import resolve_params  # noqa: E402
from pipeline.model.reduce import shared_knn  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "sample-stages.jsonl"
STAGES = ("micro", "merged", "voted", "topics")
ABSENT = -2


def staged_clusterings(name: str, artifacts: Path, samples: int = 3, seeds: int = 3) -> dict:
    """``{(sample, seed): {stage: int (n,) labels, ABSENT for papers the sample left out}}``."""
    _, embeddings, _, config, _ = tv.load(name, artifacts)
    knn = shared_knn(embeddings, config.umap)
    n = len(embeddings)
    k = resolve_params(config.cluster, n).n_topics
    kept: dict = {}
    merge, vote = CC.merge_by_agreement, CC.placed_topics

    def merge_kept(micro, finals, topics, emb=None):
        kept["micro"], kept["merged"] = micro.copy(), merge(micro, finals, topics, emb)
        return kept["merged"]

    def vote_kept(merged, finals):
        kept["voted"] = vote(merged, finals)
        return kept["voted"]

    CC.merge_by_agreement, CC.placed_topics = merge_kept, vote_kept
    out = {}
    try:
        for s in range(samples):
            keep = np.sort(np.random.default_rng(s).permutation(n)[: round(RESAMPLE_SHARE * n)])
            sub = restrict_knn(knn, keep, n)[0]
            for seed in range(seeds):
                params = dataclasses.replace(config.cluster, seed=seed, n_topics=k)
                kept["topics"] = C.cluster(None, embeddings[keep], params, knn=sub).labels
                full = {stage: np.full(n, ABSENT, dtype=np.int64) for stage in STAGES}
                for stage in STAGES:
                    full[stage][keep] = kept[stage]
                out[(s, seed)] = full
    finally:
        CC.merge_by_agreement, CC.placed_topics = merge, vote
    return out


def compare(runs: dict) -> dict:
    """Mean ARI per stage for the three kinds of pair, and the topics on core and other papers."""
    from sklearn.metrics import adjusted_rand_score

    def ari(a, b, stage, papers=None):
        x, y = runs[a][stage], runs[b][stage]
        both = (x != ABSENT) & (y != ABSENT)
        if stage in ("micro", "merged"):
            both &= (x >= 0) & (y >= 0)
        if papers is not None:
            both &= papers
        return adjusted_rand_score(x[both], y[both])

    kinds = {
        "same sample, another seed": lambda a, b: a[0] == b[0],
        "another sample, same seed": lambda a, b: a[1] == b[1],
        "another sample and seed": lambda a, b: a[0] != b[0] and a[1] != b[1],
    }
    row = {}
    for kind, keep in kinds.items():
        pairs = [(a, b) for a, b in itertools.combinations(sorted(runs), 2) if keep(a, b)]
        row[kind] = {stage: round(float(np.mean([ari(a, b, stage) for a, b in pairs])), 3) for stage in STAGES}
    pairs = [(a, b) for a, b in itertools.combinations(sorted(runs), 2) if kinds["another sample and seed"](a, b)]
    core = [(runs[a]["merged"] >= 0) & (runs[b]["merged"] >= 0) for a, b in pairs]
    held = [(runs[a]["merged"] != ABSENT) & (runs[b]["merged"] != ABSENT) for a, b in pairs]
    row["topics, papers core in both"] = round(
        float(np.mean([ari(a, b, "topics", c) for (a, b), c in zip(pairs, core, strict=True)])), 3
    )
    row["topics, the others"] = round(
        float(np.mean([ari(a, b, "topics", h & ~c) for (a, b), c, h in zip(pairs, core, held, strict=True)])), 3
    )
    row["share core in both"] = round(
        float(np.mean([(c & h).sum() / h.sum() for c, h in zip(core, held, strict=True)])), 3
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", choices=sorted(tv.CORPORA))
    parser.add_argument("--artifacts", type=Path, default=Path("/tmp/topic-variants"), help="embedding cache")
    args = parser.parse_args()
    for name in args.corpora:
        runs = staged_clusterings(name, args.artifacts)
        row = {"corpus": name, "n": len(next(iter(runs.values()))["topics"])} | compare(runs)
        print(json.dumps(row), flush=True)
        with OUT.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
