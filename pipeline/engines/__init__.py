"""Engines that compute the embeddings a build needs.

* ``local`` (the default): :func:`pipeline.embed.embed_texts` in the build process; no start-up cost.
* ``ray``: :class:`pipeline.engines.ray_engine.RayEngine`, the same encoder in a pool of Ray actors on
  this machine or a cluster (``python -m pipeline build --engine ray``).

Both read and write the same per-text embedding cache and form the same encoder batches, so they give
the same vectors and a build with one engine finds the other's vectors cached. An engine is called as
``engine(texts, params, cache_dir, progress=...) -> EmbedResult``, like ``embed_texts``.
"""
