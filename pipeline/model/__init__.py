"""The topic model: vocabulary, kNN graph and UMAP, clustering, BERTopic representations, labels, placement."""
