"""Encoders that turn texts into L2-normalised float32 vectors: ONNX (fp32 or int8, exported once
from the model folder and cached), torch (sentence-transformers) and a hashing encoder for tests;
and the registry through which tests hand the app an injected encoder.

The backends and their measured speed and agreement are described in ``pipeline.embed.embed``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from pipeline.core.config import EmbedParams
from pipeline.core.errors import PipelineError
from pipeline.embed.embed_model import EMBED_VERSION, model_fingerprint, resolve_model_path

ProgressFn = Callable[[int, int], None]


_REGISTERED: dict[str, Encoder] = {}


def register_encoder(encoder: Encoder) -> None:
    """Make ``encoder`` the encoder of vectors keyed ``encoder.key`` in this process (tests only).

    Tests build fixture corpora with an injected encoder (``build(..., encoder=...)``), whose key
    the manifest records as ``embedding.model_key``; the app's query encoder
    (``explorer.services.search.encoder_for``) looks that key up here first. Product code never calls this
    and no setting reaches it: with nothing registered, queries use the corpus's own model.
    """
    key = getattr(encoder, "key", None)
    if not key:
        raise ValueError("only an encoder with a `key` attribute can be registered")
    _REGISTERED[key] = encoder


def registered_encoder(key: str | None) -> Encoder | None:
    """The encoder registered for ``key`` (:func:`register_encoder`), or None."""
    return _REGISTERED.get(key) if key else None


class Encoder:
    """Turns texts into L2-normalised float32 vectors of shape ``(n, dim)``.

    An encoder may set a class or instance attribute ``key``: its vectors are then stored and
    recorded under that key instead of the configured model's (tests inject such encoders).
    """

    dim: int

    def encode(self, texts: Sequence[str], progress: ProgressFn | None = None) -> np.ndarray:
        raise NotImplementedError


def length_order(texts: Sequence[str]) -> np.ndarray:
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
        order = length_order(texts)
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
        order = length_order(texts)
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
    small fixtures. No setting selects it: tests pass it to ``build(..., encoder=...)`` and
    register it for the app's queries (``register_encoder``, done by tests/conftest.py).
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


#: Held while a model is exported and quantized, in the export's folder: builds started together
#: (two command lines, the app's build queue and a command line) prepare it once, one after another.
PREPARE_LOCK = ".prepare.lock"


def export_onnx(model_path: Path, out_dir: Path, *, quantize: bool) -> Path:
    """Export a sentence-transformers BERT folder to ONNX (and optionally int8), no network needed.

    Each file is written in a temporary folder beside it and renamed into place, under a file lock
    (:data:`PREPARE_LOCK`): a process that finds the file can use it, and one that waits for the
    lock finds the file its predecessor made. What a killed process left aside is removed by the
    next one.

    Returns:
        Path of ``model.onnx`` (fp32) or ``model_int8.onnx``.
    """
    from filelock import FileLock

    fp32 = out_dir / "model.onnx"
    int8 = out_dir / "model_int8.onnx"
    wanted = int8 if quantize else fp32
    if wanted.exists():
        return wanted
    out_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out_dir / PREPARE_LOCK)):
        for stale in out_dir.glob(".tmp-*"):  # a killed export's: nobody else writes here now
            shutil.rmtree(stale, ignore_errors=True)
        if not fp32.exists():
            _export_fp32(model_path, fp32)
        if quantize and not int8.exists():
            _quantize_int8(fp32, int8)
    return wanted


def _export_fp32(model_path: Path, fp32: Path) -> None:
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
    with tempfile.TemporaryDirectory(prefix=".tmp-", dir=fp32.parent) as tmp, _quiet():
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


def _quantize_int8(fp32: Path, int8: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix=".tmp-", dir=int8.parent) as tmp:
        # quantize_dynamic writes "<input>-inferred.onnx" beside its input and deletes it: the input
        # is linked into the temporary folder so that file is this process's own.
        source = Path(tmp) / "model.onnx"
        try:
            os.link(fp32, source)
        except OSError:
            shutil.copyfile(fp32, source)
        out = Path(tmp) / "model_int8.onnx"
        # per_channel: the per-tensor default drops cosine to the fp32 vectors to about 0.94.
        with _quiet():
            quantize_dynamic(str(source), str(out), weight_type=QuantType.QInt8, per_channel=True)
        os.replace(out, int8)


def onnx_model_path(params: EmbedParams, cache_dir: Path) -> Path | None:
    """Where ``load_encoder`` keeps the ONNX export for ``params`` (it may not exist yet); None
    for the other backends. Lets a read-only reader check before loading (loading would write it)."""
    if params.backend not in ("onnx", "onnx-int8"):
        return None
    model_path = resolve_model_path(params.model)
    export_dir = cache_dir / "models" / f"{model_path.name[:40]}-{model_fingerprint(model_path)}"
    return export_dir / ("model_int8.onnx" if params.backend == "onnx-int8" else "model.onnx")


def load_encoder(params: EmbedParams, cache_dir: Path) -> Encoder:
    """Build the encoder for ``params``; ONNX exports are made once and cached under ``cache_dir``."""
    model_path = resolve_model_path(params.model)
    if params.backend == "torch":
        return TorchEncoder(model_path, params)
    if params.backend in ("onnx", "onnx-int8"):
        export_dir = onnx_model_path(params, cache_dir).parent
        onnx_path = export_onnx(model_path, export_dir, quantize=params.backend == "onnx-int8")
        return OnnxEncoder(onnx_path, model_path, params)
    raise PipelineError(f"unknown embedding backend {params.backend!r}: use onnx-int8, onnx or torch.")
