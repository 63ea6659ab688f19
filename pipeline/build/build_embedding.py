"""Which vectors a build uses and how it gets them: the embedding's identity (store key and
manifest entry) and the embedder the stages call (papers, and words for KeyBERTInspired/MMR),
both through the per-text embedding store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.core import artifacts
from pipeline.core.config import BuildConfig
from pipeline.core.progress import Reporter
from pipeline.embed.embed import embed_texts
from pipeline.embed.embed_model import model_fingerprint, model_key, resolve_model_path
from pipeline.embed.encoders import Encoder, load_encoder


@dataclass(frozen=True)
class Embedding:
    """Which vectors this build uses: the store key, and what the manifest says about them."""

    key: str
    manifest: dict


def embedding_identity(config: BuildConfig, encoder: Encoder | None) -> Embedding:
    """The embedding key and manifest entry; resolves the model folder (a missing one fails here,
    before any input is read)."""
    injected = getattr(encoder, "key", None)
    if injected:
        return Embedding(
            injected,
            {
                "model": f"{type(encoder).__name__} (injected)",
                "model_key": injected,
                "model_fingerprint": None,
                "backend": "injected",
            },
        )
    path = resolve_model_path(config.embed.model)
    return Embedding(
        model_key(config.embed),
        {
            "model": config.embed.model,
            "model_key": model_key(config.embed),
            "model_fingerprint": model_fingerprint(path),
            "backend": config.embed.backend,
        },
    )


class Embedder:
    """Embeds papers and, for KeyBERTInspired/MMR, words; both through the per-text store."""

    def __init__(self, config: BuildConfig, root: Path, encoder: Encoder | None, key: str, engine=None):
        self.config = config
        self.cache = artifacts.cache_dir(root)
        self._encoder = encoder
        self.key = key
        self.engine = engine  # papers only: the few words of KeyBERTInspired stay local

    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = load_encoder(self.config.embed, self.cache)
        return self._encoder

    def _for_store(self) -> Encoder:
        return _LazyEncoder(self) if self._encoder is None else self._encoder

    def embed_papers(self, texts: list[str], reporter: Reporter):
        if self.engine is not None:
            progress = reporter.counter("embedded", "papers")
            return self.engine(texts, self.config.embed, self.cache, progress=progress, encoder=self._encoder)
        return embed_texts(
            texts,
            self.config.embed,
            self.cache,
            progress=reporter.counter("embedded", "papers"),
            encoder=self._for_store(),
        )

    def __call__(self, texts: list[str]) -> np.ndarray:
        return embed_texts(texts, self.config.embed, self.cache, encoder=self._for_store()).vectors


class _LazyEncoder(Encoder):
    """Loads the real encoder only when a text is missing from the store."""

    def __init__(self, owner: Embedder):
        self.owner = owner
        self.key = owner.key

    def encode(self, texts, progress=None):
        return self.owner.encoder().encode(texts, progress=progress)
