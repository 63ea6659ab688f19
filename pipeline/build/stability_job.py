"""The extra clusterings behind per-topic stability, run beside a full build.

``StabilityJob`` gets them from the stage cache, from a background process started as soon as the
kNN graph exists (large corpora on enough cores: the map, clustering and representations go on
meanwhile), or computes them in the build (small corpora). A failure costs the measurement, never
the build; an interrupted build stops the background process.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from pipeline.build.stage_cache import StageCache, array_digest
from pipeline.core.background import stop_pool, usable_cpus, worker_pool
from pipeline.core.config import BuildConfig
from pipeline.evaluation.quality import seed_clusterings
from pipeline.model.cluster import CLUSTER_VERSION
from pipeline.model.reduce import REDUCE_VERSION

#: Corpora at least this large may compute the extra clusterings in a background process
#: (``StabilityParams.background_min_cpus``); below it, starting a second Python (imports, JIT
#: compilation) costs more than it saves.
BACKGROUND_MIN_PAPERS = 2_000


class StabilityJob:
    """The extra clusterings of ``config.stability`` for one build.

    Args:
        embeddings: float32 ``(n, dim)``.
        config: the build's settings.
        cache_dir: ``<artifacts>/.cache`` (the runs are cached in its stage cache).
        background_min_papers: corpora at least this large may use a background process.

    Use ``start(knn)`` once the kNN graph exists, ``runs()`` when the labels are needed and
    ``close()`` in a ``finally``.
    """

    def __init__(
        self,
        embeddings: np.ndarray,
        config: BuildConfig,
        cache_dir: Path,
        *,
        background_min_papers: int = BACKGROUND_MIN_PAPERS,
    ):
        self.embeddings = embeddings
        self.config = config
        self.background_min_papers = background_min_papers
        limit = config.stability.max_papers
        self.skipped = bool(limit) and len(embeddings) > limit and config.stability.runs > 0
        runs = 0 if self.skipped else max(0, config.stability.runs)
        self.seeds = [config.cluster.seed + i for i in range(1, runs + 1)]
        digest = array_digest(embeddings)
        for part in (asdict(config.umap), asdict(config.cluster), self.seeds, [REDUCE_VERSION, CLUSTER_VERSION]):
            digest.update(json.dumps(part, sort_keys=True, default=list).encode())
        self.cache = StageCache(cache_dir)
        self.entry = f"stability-{digest.hexdigest()[:20]}"
        if self.skipped:
            self.mode = f"off: more than {limit:,} papers (--stability measures it anyway)"
        else:
            self.mode = "off" if not self.seeds else "in the build"
        self.seconds = 0.0
        self.error: str | None = None
        self._knn = None
        self._pool = None
        self._pending = None
        self._runs: list[np.ndarray] | None = None

    def start(self, knn: tuple[np.ndarray, np.ndarray]) -> None:
        """Take the runs from the cache, or start them in a background process when worthwhile."""
        if not self.seeds:
            return
        cached = self.cache.get(self.entry)
        if cached is not None:
            try:
                self._runs = list(np.load(cached / "labels.npy", allow_pickle=False))
                self.mode = "cached"
                return
            except (OSError, ValueError):
                self.cache.discard(self.entry)
        self._knn = knn
        wanted = self.config.stability.background_min_cpus
        if len(self.embeddings) >= self.background_min_papers and wanted and usable_cpus() >= wanted:
            try:
                self._pool = worker_pool()
                self._pending = self._pool.submit(seed_clusterings, self.embeddings, knn, self.config, self.seeds)
                self.mode = "background process"
            except (OSError, RuntimeError) as exc:  # no processes here: compute in the build instead
                self.close()
                self.mode = f"in the build ({type(exc).__name__})"

    def runs(self) -> list[np.ndarray] | None:
        """The extra runs' labels (waiting for the background process if needed); None when off or failed."""
        if self._runs is not None or not self.seeds or self.error:
            return self._runs
        try:
            runs = None
            if self._pending is not None:
                try:
                    runs, self.seconds = self._pending.result()
                except Exception as exc:  # the process died or could not start: do it here
                    self.mode = f"in the build (background process failed: {type(exc).__name__})"
                finally:
                    self.close(finished=True)
            if runs is None:
                runs, self.seconds = seed_clusterings(self.embeddings, self._knn, self.config, self.seeds)
        except Exception as exc:  # the measurement is optional: report it, keep the build
            self.error = f"{type(exc).__name__}: {str(exc)[:200]}"
            return None
        self._runs = runs
        labels = np.stack(runs).astype(np.int32)
        self.cache.put(self.entry, lambda folder: np.save(folder / "labels.npy", labels, allow_pickle=False))
        return runs

    def close(self, finished: bool = False) -> None:
        """Stop the background process (let it exit cleanly when its work is done)."""
        if self._pool is None:
            return
        stop_pool(self._pool, finished=finished)
        self._pool = None

    def info(self, values: list[float]) -> dict:
        """What the manifest says about how stability was computed."""
        finite = [v for v in values if v == v]
        return {
            "measure": "per topic: mean over the extra runs of the best Jaccard overlap |A & B| / |A | B| "
            "between the topic's papers and any topic of that run, over the papers the run clustered "
            "(pipeline.evaluation.evaluate.topic_stability)",
            "runs": len(self.seeds),
            "seeds": self.seeds,
            "same_as_build": "each run clusters a random 90% of the papers (pipeline.evaluation.quality.resampled_clustering) "
            "with its own seed, on the build's kNN graph less the papers left out, with the build's settings",
            "computed": self.mode if not self.error else f"failed: {self.error}",
            "seconds": round(self.seconds, 2),
            "mean": round(float(np.mean(finite)), 4) if finite else None,
        }
