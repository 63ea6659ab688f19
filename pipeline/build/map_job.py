"""The map's 2-d UMAP, computed in a background process while the build clusters and represents.

The graph clustering (the default) and Ward cluster the kNN graph or the embeddings, not the map,
so nothing before the trends stage needs the map: a second process makes it from the same kNN
graph, with the same code and settings (``pipeline.model.reduce.map_projection``), while the build
goes on. The map is the same as when the build makes it itself (``tests/test_map_job.py``). If the
process cannot start or fails, the build makes the map itself; an interrupted build stops it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pipeline.core.background import stop_pool, usable_cpus, worker_pool
from pipeline.core.config import BuildConfig, UmapParams
from pipeline.model.cluster_params import resolve_params
from pipeline.model.reduce import Projection, map_projection

#: Corpora from this size on get their map from a background process: below it, starting a second
#: Python (imports, loading UMAP's compiled code) costs about as much as the map itself.
BACKGROUND_MIN_PAPERS = 2_000
#: Above this size the map is made in the build: the background process would hold a second copy
#: of the embeddings (1.5 GB at a million papers) while the build is near its memory peak.
BACKGROUND_MAX_PAPERS = 300_000
#: Clustering methods that do not read the map (``agglomerative`` clusters it, ``hdbscan`` needs
#: its own projection from the same stage).
MAP_FREE_METHODS = ("graph", "ward")


def map_in_background(n: int, config: BuildConfig) -> bool:
    """Whether a build of ``n`` papers with ``config`` makes its map in a background process."""
    if not BACKGROUND_MIN_PAPERS <= n <= BACKGROUND_MAX_PAPERS or n < config.umap.min_points_for_umap:
        return False
    return resolve_params(config.cluster, n).method in MAP_FREE_METHODS and usable_cpus() >= 2


class MapJob:
    """The projection of a build whose map is being made in a background process.

    Args:
        embeddings: float32 ``(n, dim)``.
        knn: the shared kNN graph ``(indices, distances)``.
        params: the UMAP settings.
        on_done: called once with the finished projection (the build puts it in its stage cache).

    ``knn_indices`` is there at once; ``projection()`` waits for the map. Call ``close()`` in a
    ``finally``.
    """

    def __init__(
        self,
        embeddings: np.ndarray,
        knn: tuple[np.ndarray, np.ndarray],
        params: UmapParams,
        on_done: Callable[[Projection], None] | None = None,
    ):
        self.embeddings, self.knn, self.params, self.on_done = embeddings, knn, params, on_done
        self.mode = "background process"
        self._pool = None
        self._pending = None
        self._projection: Projection | None = None
        try:
            self._pool = worker_pool()
            self._pending = self._pool.submit(map_projection, np.asarray(embeddings), knn, params)
        except (OSError, RuntimeError) as exc:  # no processes here: the build makes the map itself
            self.close()
            self.mode = f"in the build ({type(exc).__name__})"

    @property
    def knn_indices(self) -> np.ndarray:
        return self.knn[0]

    def projection(self) -> Projection:
        """The projection with the map (waiting for the background process if needed)."""
        if self._projection is not None:
            return self._projection
        map_2d = None
        if self._pending is not None:
            try:
                map_2d = np.asarray(self._pending.result(), dtype=np.float32)
            except Exception as exc:  # the process died or could not start: make the map here
                self.mode = f"in the build (background process failed: {type(exc).__name__})"
            finally:
                self.close(finished=True)
        if map_2d is None:
            map_2d = map_projection(self.embeddings, self.knn, self.params)
        self._projection = Projection(map_2d, map_2d, self.knn[0], self.knn[1])
        if self.on_done:
            self.on_done(self._projection)
        return self._projection

    def close(self, finished: bool = False) -> None:
        """Stop the background process (let it exit cleanly when its work is done)."""
        if self._pool is None:
            return
        stop_pool(self._pool, finished=finished)
        self._pool = None
