"""Label variants on the same clusterings: what a change to the labeller alone does, corpus by corpus.

Not part of the test run. ``benchmarks/topic_variants.py`` clusters each corpus again for every
variant and draws its 90% samples, which a change to the labels does not need: here each corpus
is clustered once per seed (the product's clustering, ``pipeline.model.cluster.cluster``), and
every variant labels those same topics as the build does (``topic_variants.label_row``: the
build's representation stage, KeyBERTInspired and MMR terms among the candidates; with
``--ctfidf-only``, the c-TF-IDF terms alone, as runs before 2026-12-07 did) and measures them
(coverage, weak labels, contained labels, retrieval, and each topic's label, size and coverage). Variants are
``topic_variants``'s (``heads1``, ``acrossphrases``, ``title0``, ...; ``base`` is the product), set before each
labelling and restored after it. One JSON line per corpus, seed and variant.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/label_variants.py icml2024 iclr2022 \\
        --variants base heads1 --artifacts /tmp/topic-variants > labels.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import topic_variants as tv  # noqa: E402
from pipeline.embed.embed import embed_texts  # noqa: E402
from pipeline.model.vocab import doc_terms  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="+", choices=sorted(tv.CORPORA))
    parser.add_argument("--variants", nargs="+", default=["base"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--artifacts", type=Path, default=Path("/tmp/topic-variants"), help="embedding cache")
    parser.add_argument(
        "--ctfidf-only",
        action="store_true",
        help="labels from the c-TF-IDF terms alone, as runs before 2026-12-07 (thirty-second session) made them",
    )
    args = parser.parse_args()
    saved = {(module, name): getattr(module, name) for module, name in tv.KNOBS}

    def restore() -> None:
        for (module, name), value in saved.items():
            setattr(module, name, value)

    for corpus in args.corpora:
        docs, embeddings, _, config, extra = tv.load(corpus, args.artifacts)
        knn = tv.shared_knn(embeddings, config.umap)

        def embed(texts, config=config):
            return embed_texts(list(texts), config.embed, args.artifacts / ".cache").vectors

        terms = {}  # the papers' term counts, per vectorizer setting
        for seed in args.seeds:
            topics = tv.C.cluster(None, embeddings, dataclasses.replace(config.cluster, seed=seed), knn=knn[0]).labels
            for variant in args.variants:
                restore()
                tv.apply_variant(variant)
                key = tv.vocab.WITHIN_PHRASES
                if key not in terms:
                    rep = config.represent
                    terms[key] = doc_terms(docs, ngram_range=rep.ngram_range, min_df=rep.min_df)
                row = {"corpus": corpus, "variant": variant, "seed": seed, "n": len(docs)}
                represent = None if args.ctfidf_only else config.represent
                row |= tv.label_row(docs, embeddings, topics, terms[key], embed, extra, represent=represent)
                print(json.dumps(row), flush=True)
        restore()


if __name__ == "__main__":
    main()
