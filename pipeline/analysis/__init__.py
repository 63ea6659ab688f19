"""Analyses of built corpora: trends, what changed against a reference, lineage, novelty, distinctive terms, curation, the keyword index."""
