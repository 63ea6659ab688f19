"""Make the list of words every machine-learning subfield uses (``assets/labels/spread_words.txt``).

A topic of five abstracts shares few words, and the ones it shares are often the words of every
abstract ("observed", "require", "progress", "guarantee"): a label made of them says nothing about
the topic, yet its papers do use it. Which words are like that is measured, not listed by hand: on
NeurIPS 1987-2023 (18,661 papers, the largest corpus we have) clustered with the pipeline's
defaults (59 topics), a word's spread is the Kullback-Leibler divergence, in bits, of the topics of
the papers using it from the topics of all papers: 0 for a word used alike in every topic, 3.7 for
"privacy" (one topic). Words (counted by stem: "update" and "updates" together) used by at least
0.5% of the papers with a spread below 0.5 bits are written, one a line; ``pipeline.model.labels`` lets
none of them be a label on its own (measured: "require" 0.09, "observed" 0.30, "guarantee" 0.46 are
in; "stochastic" 0.64, "diffusion" 1.0, "transformers" 1.3, "scene" 2.3 are not).

    .venv/bin/python benchmarks/make_spread_words.py --artifacts /tmp/x   # the embedding store's folder
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

OUT = ROOT / "assets" / "labels" / "spread_words.txt"
#: Words used by fewer papers say too little about their spread.
MIN_SHARE = 0.005
#: Below this many bits a word is "spread" (every subfield uses it).
MAX_BITS = 0.5


def spread_bits(labels: np.ndarray, presence, terms: np.ndarray, min_share: float = MIN_SHARE) -> dict[str, float]:
    """Each stem's spread over the topics (KL divergence in bits; see the module docstring).

    Args:
        labels: int ``(n,)`` topic per paper (0..k-1).
        presence: papers x unigrams, nonzero where a paper uses the word (CSR).
        terms: the unigrams, ``(n_terms,)``.
        min_share: stems used by fewer papers than this share are left out.
    """
    from scipy import sparse

    from pipeline.model.label_words import stem

    stems = np.array([stem(t) for t in terms.tolist()], dtype=object)
    names, column = np.unique(stems, return_inverse=True)
    merge = sparse.csr_matrix((np.ones(len(terms)), (np.arange(len(terms)), column)), shape=(len(terms), len(names)))
    uses = sparse.csr_matrix(sparse.csr_matrix(presence, dtype=np.float64) @ merge)
    uses.data[:] = 1.0  # a paper uses the stem (any of its forms) or not
    n, k = len(labels), int(labels.max()) + 1
    member = sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    counts = (member @ uses).toarray()  # topics x stems
    df = counts.sum(axis=0)
    prior = np.bincount(labels, minlength=k) / n
    keep = np.flatnonzero(df >= min_share * n)
    share = counts[:, keep] / df[keep]
    bits = (share * np.log2(np.where(share > 0, share, 1.0) / prior[:, None])).sum(axis=0)
    return {str(names[j]): float(b) for j, b in zip(keep.tolist(), bits.tolist(), strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--artifacts", type=Path, default=Path("/tmp/stab-art"), help="folder whose .cache holds the vectors"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from graph_clustering import load

    from pipeline.core.config import BuildConfig
    from pipeline.model.cluster import cluster
    from pipeline.model.reduce import shared_knn
    from pipeline.model.vocab import doc_terms

    texts, x, _ = load("neurips", args.artifacts)
    config = BuildConfig()
    labels = cluster(None, x, config.cluster, knn=shared_knn(x, config.umap)[0]).labels
    dt = doc_terms(texts, ngram_range=(1, 1))
    bits = spread_bits(labels, dt.counts, dt.terms)
    spread = sorted(s for s, b in bits.items() if b < MAX_BITS)
    header = [
        f"# Word stems every ML subfield uses: spread over NeurIPS 1987-2023's {labels.max() + 1} topics below",
        f"# {MAX_BITS} bits, used by at least {MIN_SHARE:.1%} of its {len(texts):,} papers.",
        "# Made by benchmarks/make_spread_words.py; read by pipeline.model.labels (none of them is a label on its own).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(header + spread) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(spread):,} of {len(bits):,} stems")


if __name__ == "__main__":
    main()
