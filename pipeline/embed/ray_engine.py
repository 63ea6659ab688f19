"""Embedding on Ray: a pool of actors, each holding the encoder once, fed by Ray Data.

What runs where, and why:

* **The driver** (the ``pipeline build`` process) ingests the inputs, looks every text up in the
  embedding cache and plans the encoder batches of the missing ones exactly as the local engine
  does (distinct texts in order of first appearance, sorted by length, ``embed.batch_size`` texts a
  batch). int8 quantises activations per batch, so forming the same batches is what makes the two
  engines give the same vectors.
* It writes those batches as **Parquet shards** into a staging folder (``RayParams.staging``, by
  default ``<artifacts>/.cache/ray-staging/``), one row per encoder batch, a few thousand texts a
  shard. On a cluster the folder must be on a file system every node mounts at the same path; the
  engine checks that each node sees it before it starts.
* **Ray Data** hands the shards' paths to a pool of **actors** (``map_batches``); each reads its
  shards and encodes them. Each actor loads the encoder once, from the ONNX export the driver made and
  cached under ``<artifacts>/.cache/models/`` and shipped through Ray's object store: workers need
  the Python environment (requirements.txt), not the model folder nor the artifacts. Actors ask for a
  GPU when the cluster has GPUs, else ``cpus_per_worker`` CPUs, with as many onnxruntime threads.
* The vectors stream back to the driver, which alone writes the **embedding cache**, in chunks of
  ``store_chunk`` vectors: an interrupted run keeps what was added, and the next run (either engine)
  embeds only the rest.

Ray is imported only inside these functions; the local engine never imports it.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.core.config import EmbedParams
from pipeline.core.errors import PipelineError
from pipeline.core.inputs import ROOT
from pipeline.embed.embed import EmbedResult
from pipeline.embed.embed_model import model_key, resolve_model_path
from pipeline.embed.embed_store import EmbeddingStore, text_hash
from pipeline.embed.encoders import Encoder, OnnxEncoder, TorchEncoder, export_onnx, length_order, onnx_model_path

ProgressFn = Callable[[int, int], None]

#: Where a Ray address comes from when ``RayParams.address`` is not given (Ray's own convention).
ADDRESS_ENV = "RAY_ADDRESS"


@dataclass(frozen=True)
class RayParams:
    """How the Ray engine runs; none of it changes the vectors.

    Attributes:
        address: a running cluster to join ("auto", "HEAD_IP:6379", "ray://HEAD_IP:10001"); None
            reads ``RAY_ADDRESS`` and, when that is unset too, starts a local Ray on this machine.
        cpus_per_worker: CPUs (and onnxruntime threads) per actor. 1 is the most efficient on CPUs:
            no thread synchronisation, and the actors never spin against each other.
        workers: actors in the pool; 0 fits the cluster (its CPUs / ``cpus_per_worker``, or one per GPU).
        staging: folder for the text shards (every node must see it at the same path); None:
            ``<cache_dir>/ray-staging``.
        shard_texts: about this many texts per Parquet shard (a whole number of encoder batches); a
            shard is the unit of work an actor takes (about 8 s of one core here at the default:
            small enough that the actors finish together, large enough that Ray's cost per shard is noise).
        store_chunk: vectors per write into the embedding cache.
        local_cpus: CPUs of a local Ray; 0: all of this machine's.
    """

    address: str | None = None
    cpus_per_worker: int = 1
    workers: int = 0
    staging: str | None = None
    shard_texts: int = 256
    store_chunk: int = 50_000
    local_cpus: int = 0

    def __post_init__(self):
        for name in ("cpus_per_worker", "shard_texts", "store_chunk"):
            if getattr(self, name) < 1:
                raise PipelineError(f"ray.{name} must be at least 1, got {getattr(self, name)}.")
        if self.workers < 0 or self.local_cpus < 0:
            raise PipelineError("ray.workers and ray.local_cpus must be 0 (automatic) or more.")


def plan_batches(texts: Sequence[str], batch_size: int) -> list[np.ndarray]:
    """The encoder batches the local engine forms for ``texts``: indices sorted by length, cut in order.

    Mirrors ``OnnxEncoder.encode``/``TorchEncoder.encode``; an encoder given one planned batch
    encodes it as one forward pass of the same texts in the same order.
    """
    order = length_order(texts)
    return [order[start : start + batch_size] for start in range(0, len(texts), batch_size)]


# --------------------------------------------------------------------------------------------
# The worker side
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EncoderFiles:
    """What an actor needs to build the driver's encoder: settings and, for ONNX, the files' bytes;
    or an encoder given to the engine (tests), sent as it is."""

    params: EmbedParams
    onnx: bytes | None = None
    tokenizer: bytes | None = None
    instance: Encoder | None = None


def encoder_files(params: EmbedParams, cache_dir: Path, encoder: Encoder | None = None) -> EncoderFiles:
    """Make (once, cached) the ONNX export the local engine uses and read it for shipping to workers."""
    if encoder is not None:
        import pickle

        try:
            pickle.dumps(encoder)
        except Exception as exc:
            raise PipelineError(f"the Ray engine cannot send a {type(encoder).__name__} to its workers: {exc}") from exc
        return EncoderFiles(params, instance=encoder)
    model_path = resolve_model_path(params.model)
    if params.backend in ("onnx", "onnx-int8"):
        path = export_onnx(
            model_path, onnx_model_path(params, cache_dir).parent, quantize=params.backend == "onnx-int8"
        )
        return EncoderFiles(params, onnx=path.read_bytes(), tokenizer=(model_path / "tokenizer.json").read_bytes())
    if params.backend == "torch":
        return EncoderFiles(params)  # the model folder must exist on the workers (the packaged one does)
    raise PipelineError(f"unknown embedding backend {params.backend!r}: use onnx-int8, onnx or torch.")


def load_worker_encoder(files: EncoderFiles, threads: int) -> Encoder:
    """The driver's encoder, rebuilt in a worker with ``threads`` CPU threads."""
    if files.instance is not None:
        return files.instance
    params = dataclasses.replace(files.params, threads=threads)
    if params.backend == "torch":
        return TorchEncoder(resolve_model_path(params.model), params)
    with tempfile.TemporaryDirectory(prefix="atlas-encoder-") as tmp:
        folder = Path(tmp)
        (folder / "model.onnx").write_bytes(files.onnx)
        (folder / "tokenizer.json").write_bytes(files.tokenizer)
        return OnnxEncoder(folder / "model.onnx", folder, params)  # both are read into memory here


class EncodeShards:
    """Ray Data actor: reads text shards and encodes their planned batches.

    Input rows: ``path`` of a shard written by :func:`write_shards` (one shard row = one encoder
    batch). Output: one row per text, ``hash`` (16 bytes) and ``vector`` (fixed-size list of float32).
    """

    def __init__(self, files, threads: int):
        import ray

        # Passed inside a list so that Ray does not treat it as a constructor argument to pin
        # (the driver holds the reference until the dataset is done, so restarted actors find it).
        files = ray.get(files[0]) if isinstance(files, list) else files
        self.encoder = load_worker_encoder(files, threads)

    def __call__(self, rows):
        import pyarrow as pa
        import pyarrow.parquet as pq

        hashes: list[bytes] = []
        vectors = []
        for path in rows.column("path").to_pylist():
            shard = pq.read_table(path)
            for batch_hashes, batch_texts in zip(
                shard.column("hashes").to_pylist(), shard.column("texts").to_pylist(), strict=True
            ):
                vectors.append(self.encoder.encode(batch_texts))
                hashes.extend(batch_hashes)
        matrix = np.ascontiguousarray(np.concatenate(vectors), dtype=np.float32)
        return pa.table(
            {
                "hash": pa.array(hashes, pa.binary(16)),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
            }
        )


def _sees(path: str) -> tuple[str, bool]:
    """Run on a node: its IP and whether it can read ``path``."""
    import ray

    return ray.util.get_node_ip_address(), os.path.exists(path)


# --------------------------------------------------------------------------------------------
# The driver side
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def ray_session(params: RayParams) -> Iterator[object]:
    """Ray, initialised: the caller's (left running), a cluster to join, or a local one (shut down after)."""
    import ray

    if ray.is_initialized():
        yield ray
        return
    address = params.address or os.environ.get(ADDRESS_ENV) or None
    quiet = dict(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    print_before = builtins.print
    try:
        if address:
            # The workers import this package from the driver's copy, so both run the same code.
            package = str(ROOT)
            ray.init(address=address, runtime_env={"py_modules": [package]}, **quiet)
        else:
            # "local": a new Ray of our own, never a cluster that `ray start` left running here.
            cpus = params.local_cpus or os.cpu_count() or 1
            ray.init(address="local", num_cpus=cpus, object_store_memory=_local_object_store_bytes(), **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address!r}" if address else "a local Ray"
        raise PipelineError(f"could not start {where}: {exc}") from exc
    try:
        yield ray
    finally:
        ray.shutdown()
        # Ray Data's progress bars replace builtins.print (ray.experimental.tqdm_ray) and leave
        # their replacement behind; numba cannot compile code that prints through it, so the
        # build's later stages (pynndescent's approximate kNN graph) failed after a Ray embedding.
        builtins.print = print_before


def _local_object_store_bytes() -> int:
    """A small object store for a local Ray: shards and vectors stream through it, nothing stays."""
    import psutil

    return int(min(2 << 30, max(256 << 20, psutil.virtual_memory().total * 0.1)))


def write_shards(
    folder: Path, texts: Sequence[str], hashes: Sequence[bytes], batches: list[np.ndarray], shard_texts: int
) -> list[Path]:
    """Write the planned batches as Parquet shards: rows ``(hashes: list<binary(16)>, texts: list<string>)``.

    Returns:
        The shard paths, in plan order.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    per_shard = max(1, shard_texts // max(1, len(batches[0]) if batches else 1))
    schema = pa.schema([("hashes", pa.list_(pa.binary(16))), ("texts", pa.list_(pa.string()))])
    paths = []
    for number, start in enumerate(range(0, len(batches), per_shard)):
        group = batches[start : start + per_shard]
        table = pa.table(
            {
                "hashes": [[hashes[i] for i in batch] for batch in group],
                "texts": [[texts[i] for i in batch] for batch in group],
            },
            schema=schema,
        )
        path = folder / f"shard-{number:06d}.parquet"
        pq.write_table(table, path)
        paths.append(path)
    return paths


def _check_nodes_see(ray, path: Path) -> None:
    """Fail early, naming the nodes, when the staging folder is not visible on every node."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if len(nodes) <= 1:
        return
    probe = ray.remote(num_cpus=0)(_sees)
    answers = ray.get(
        [
            probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(str(path))
            for n in nodes
        ]
    )
    blind = [ip for ip, ok in answers if not ok]
    if blind:
        raise PipelineError(
            f"the Ray nodes {', '.join(sorted(set(blind)))} cannot read the staging folder {path.parent}: put it on "
            "a file system every node mounts at the same path (--ray-staging DIR, or the artifacts folder itself)."
        )


def _pool(ray, params: RayParams, n_calls: int) -> tuple[int, int]:
    """``(actors, gpus per actor)`` for this cluster and job."""
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    if gpus:
        size, per_actor_gpu = params.workers or gpus, 1
    else:
        size, per_actor_gpu = params.workers or max(1, int(resources.get("CPU", 1)) // params.cpus_per_worker), 0
    return max(1, min(size, n_calls)), per_actor_gpu


@dataclass
class RayEngine:
    """``pipeline build --engine ray``: embed the texts missing from the cache on Ray.

    Called like :func:`pipeline.embed.embed.embed_texts` and returning the same :class:`EmbedResult`;
    ``last_run`` describes the last call (workers, GPUs, shards, seconds) for the build's summary.
    """

    params: RayParams = dataclasses.field(default_factory=RayParams)
    name: str = "ray"
    last_run: dict = dataclasses.field(default_factory=dict)

    def __call__(
        self,
        texts: Sequence[str],
        params: EmbedParams,
        cache_dir: Path,
        *,
        progress: ProgressFn | None = None,
        encoder: Encoder | None = None,
    ) -> EmbedResult:
        """Vectors for ``texts``: from the cache, the missing ones computed on Ray and added to it.

        Args:
            texts: the texts to embed.
            params: model, backend, max tokens, batch size (threads come from ``cpus_per_worker``).
            cache_dir: ``<artifacts>/.cache``; the store lives in ``cache_dir / "embeddings"``.
            progress: called with ``(done, total)`` over the distinct texts computed.
            encoder: an encoder to send to the workers instead of building ``params``'s (tests); its
                ``key`` attribute, if any, names its cache, as in ``embed_texts``.

        Raises:
            PipelineError: Ray cannot start or be reached, a node cannot see the staging folder, or
                the workers returned fewer vectors than asked.
        """
        cache_dir = Path(cache_dir)
        key = getattr(encoder, "key", None) or model_key(params)
        store = EmbeddingStore(cache_dir / "embeddings", key)
        hashes = [text_hash(t) for t in texts]
        found, vectors = store.lookup(hashes)
        missing = np.flatnonzero(~found)
        self.last_run = {"engine": "ray", "computed": 0}
        if not len(missing):  # nothing to compute: no Ray start-up at all
            if vectors is None:
                vectors = np.zeros((0, 384), dtype=np.float32)
            return EmbedResult(vectors=vectors, computed=0, cached=int(found.sum()), model_key=key)

        first: dict[bytes, int] = {}
        for i in missing:
            first.setdefault(hashes[i], int(i))
        todo = np.fromiter(first.values(), dtype=np.int64, count=len(first))  # rows, first appearances
        todo_texts = [texts[i] for i in todo]
        todo_hashes = [hashes[i] for i in todo]
        batches = plan_batches(todo_texts, params.batch_size)
        files = encoder_files(params, cache_dir, encoder)  # the export exists before any worker needs it

        started = time.perf_counter()
        root = Path(self.params.staging) if self.params.staging else cache_dir / "ray-staging"
        staging = root / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        try:
            shards = write_shards(staging, todo_texts, todo_hashes, batches, self.params.shard_texts)
            del todo_texts
            with ray_session(self.params) as ray:
                _check_nodes_see(ray, shards[0])
                size, gpus = _pool(ray, self.params, len(shards))
                self.last_run.update(workers=size, gpus_per_worker=gpus, shards=len(shards), texts=len(todo))
                vectors = self._run(shards, files, size, gpus, store, todo, todo_hashes, vectors, len(texts), progress)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            with contextlib.suppress(OSError):
                root.rmdir()  # only when no other run is staging there
        for i in missing:  # repeated texts take the vector of their first appearance
            j = first[hashes[i]]
            if j != i:
                vectors[i] = vectors[j]
        self.last_run.update(computed=int(len(todo)), seconds=round(time.perf_counter() - started, 2))
        return EmbedResult(vectors=vectors, computed=int(len(missing)), cached=int(found.sum()), model_key=key)

    def _run(self, shards, files, size, gpus, store, todo, todo_hashes, vectors, n_texts, progress):
        """Stream the shards through the actor pool; fill ``vectors`` and the store as results arrive."""
        import ray
        import ray.data
        import ray.exceptions

        logging.getLogger("ray.data").setLevel(logging.ERROR)  # our progress line replaces Ray Data's
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        threads = str(self.params.cpus_per_worker)
        files_ref = ray.put(files)
        # The shards' paths go through Ray, the texts do not: each actor reads its shards itself.
        # (Ray Data's read_parquet would need a CPU of its own beside actors that hold every CPU, and
        # its resource reservation then stalls the read; from_items needs none.)
        dataset = ray.data.from_items([{"path": str(p)} for p in shards]).map_batches(
            EncodeShards,
            fn_constructor_kwargs={"files": [files_ref], "threads": self.params.cpus_per_worker},
            batch_size=1,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=size),
            num_cpus=self.params.cpus_per_worker,
            num_gpus=gpus or None,
            # tokenizers (Rayon) and OpenMP would otherwise start a thread per core in every actor.
            runtime_env={"env_vars": {"RAYON_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}},
        )
        keys = np.array(todo_hashes, dtype="S16")
        by_key = np.argsort(keys, kind="stable")
        sorted_keys = keys[by_key]
        got = np.zeros(len(todo), dtype=bool)
        pending: list[np.ndarray] = []
        pending_n = done = 0

        def flush() -> None:
            nonlocal pending, pending_n
            if pending:
                pos = np.concatenate(pending)
                store.add([todo_hashes[p] for p in pos], vectors[todo[pos]])
            pending, pending_n = [], 0

        try:
            for table in dataset.iter_batches(batch_size=None, batch_format="pyarrow"):
                column = table.column("vector").combine_chunks()
                dim = column.type.list_size
                block = column.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
                returned = np.array(table.column("hash").to_pylist(), dtype="S16")
                pos = by_key[np.searchsorted(sorted_keys, returned)]
                if vectors is None:
                    vectors = np.zeros((n_texts, dim), dtype=np.float32)
                vectors[todo[pos]] = block
                got[pos] = True
                done += len(pos)
                pending.append(pos)
                pending_n += len(pos)
                if pending_n >= self.params.store_chunk:
                    flush()
                if progress:
                    progress(done, len(todo))
        except ray.exceptions.RayError as exc:
            flush()  # what came back is kept: the next run embeds only the rest
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise PipelineError(
                f"a Ray worker failed after {done:,} of {len(todo):,} texts (those are cached): {first_line}"
            ) from exc
        except BaseException:
            flush()
            raise
        flush()
        if not got.all():
            raise PipelineError(f"the Ray workers returned {int(got.sum()):,} of {len(todo):,} vectors.")
        return vectors
