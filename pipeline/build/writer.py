"""Writing a build's files into its (unpublished) build folder.

``write_tables`` writes every table, array and the BERTopic model; ``write_manifest`` writes
``manifest.json`` last, once the stage timings are final. The build runner publishes the folder
only after both (``pipeline.core.artifacts.publish``), inside the build lock: a published build is never
written to again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import platform
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis import bm25, bm25_update
from pipeline.build.results import TopicResult
from pipeline.core import artifacts, schema
from pipeline.core.topic_tables import TopicTables
from pipeline.formats import blobs, palette
from pipeline.formats.ids import short_ids

#: Packages whose versions the manifest records: those that change the topics or the map (igraph's
#: Leiden for the graph clustering, pynndescent's approximate kNN graph), the embedding and the files.
PACKAGES = (
    "bertopic", "umap-learn", "hdbscan", "igraph", "pynndescent", "sentence-transformers", "transformers", "torch",
    "onnxruntime", "scikit-learn", "numpy", "pandas", "pyarrow", "numba",
)  # fmt: skip


def package_versions() -> dict[str, str]:
    """Python's and the main packages' versions, for the manifest."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[name] = metadata.version(name)
    return out


def paper_table(papers: pd.DataFrame, result: TopicResult) -> pd.DataFrame:
    """papers.parquet: the ingested papers with their row, topic, probability, flags and position."""
    n = len(papers)
    out = papers.copy(deep=False)  # new columns only: the texts are not copied
    out.insert(1, "short_id", short_ids(out["doc_id"]))  # a hash a paper: made once here, not by each app start
    out.insert(2, "row", np.arange(n, dtype=np.int32))
    out["topic"] = np.asarray(result.topics, dtype=np.int32)
    out["topic_prob"] = np.asarray(result.topic_prob, dtype=np.float32)
    out["was_outlier"] = np.asarray(result.was_outlier, dtype=bool)
    out["placed"] = np.asarray(result.placed, dtype=bool)
    out["x"] = result.xy[:, 0].astype(np.float32)
    out["y"] = result.xy[:, 1].astype(np.float32)
    return out[list(schema.PAPER_COLUMNS)]


#: Rows per record batch of papers.arrow: the app scans the batches on all cores (the phrase check).
PAPER_BATCH_ROWS = 65_536


def write_paper_arrow(path: Path, table: pd.DataFrame) -> None:
    """``papers.arrow``: ``schema.APP_PAPER_COLUMNS`` of ``table`` (papers.parquet, in row order) as
    an uncompressed Arrow IPC file, text as ``large_string`` (pandas' own string storage), so that
    the app maps it and reads no text until a page shows it."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    arrow = pa.Table.from_pandas(table[schema.APP_PAPER_COLUMNS], preserve_index=False)
    fields = [
        pa.field(f.name, pa.large_string()) if pa.types.is_string(f.type) or pa.types.is_large_string(f.type) else f
        for f in arrow.schema
    ]
    arrow = arrow.cast(pa.schema(fields, metadata=arrow.schema.metadata))
    tmp = path.with_name(path.name + ".tmp")
    with ipc.new_file(tmp, arrow.schema) as out:
        out.write_table(arrow, max_chunksize=PAPER_BATCH_ROWS)
    tmp.rename(path)


def write_tables(
    folder: Path, result: TopicResult, papers: pd.DataFrame, embeddings: np.ndarray, ingest_report: pd.DataFrame
) -> None:
    """Every file of a build except the manifest (``schema.FILES``).

    Args:
        folder: the new, unpublished build folder.
        result: topics and tables from the fit or the incremental placement.
        papers: the ingested papers (``pipeline.ingest.ingest``), row i is embeddings row i.
        embeddings: float32 ``(n, dim)``.
        ingest_report: the rows ingest skipped or changed.
    """
    table = paper_table(papers, result)
    table.to_parquet(folder / schema.PAPERS, index=False)
    write_paper_arrow(folder / schema.PAPERS_ARROW, table)
    write_map(folder, table, result.tables.topics["topic"])
    del table
    write_topic_tables(folder, result.tables)
    trends = result.trends
    trends.terms.to_parquet(folder / schema.TERMS, index=False)
    trends.years.to_parquet(folder / schema.YEARS, index=False)
    trends.topic_years.to_parquet(folder / schema.TOPIC_YEARS, index=False)
    trends.keyword_years.to_parquet(folder / schema.KEYWORD_YEARS, index=False)
    ingest_report.to_parquet(folder / schema.INGEST_REPORT, index=False)
    if not (folder / schema.EMBEDDINGS).exists():  # written already by ``save_embeddings``
        np.save(folder / schema.EMBEDDINGS, np.asarray(embeddings, dtype=np.float32), allow_pickle=False)
    result.model.save(folder / schema.BERTOPIC_DIR)


def write_map(folder: Path, table: pd.DataFrame, topic_ids) -> None:
    """``map.json``: the topics' colours and which touch (``palette.map_colouring``) and the papers'
    spacing (``blobs.point_spacing``), from the positions the app reads (float32, papers.parquet's
    ``x, y``), so that the app's first visitor does not wait for them (about 2 s at a million papers)."""
    x = table["x"].to_numpy(dtype=np.float32)
    y = table["y"].to_numpy(dtype=np.float32)
    colouring = palette.map_colouring(x, y, table["topic"].to_numpy(), topic_ids)
    artifacts.write_json(folder / schema.MAP, {**colouring.to_dict(), "spacing": blobs.point_spacing(x, y)})


def write_topic_tables(folder: Path, tables: TopicTables) -> None:
    """topics.parquet (``schema.TOPIC_COLUMNS``), topic_terms.parquet, hierarchy.parquet and the
    topic arrays (float32 ``.npy``) of ``tables``."""
    tables.topics[list(schema.TOPIC_COLUMNS)].to_parquet(folder / schema.TOPICS, index=False)
    tables.topic_terms.to_parquet(folder / schema.TOPIC_TERMS, index=False)
    tables.hierarchy.to_parquet(folder / schema.HIERARCHY, index=False)
    for file, array in (
        (schema.TOPIC_EMBEDDINGS, tables.topic_embeddings),
        (schema.TOPIC_SIMILARITY, tables.similarity),
        (schema.TOPIC_DISTRIBUTION, tables.distribution),
    ):
        np.save(folder / file, np.asarray(array, dtype=np.float32), allow_pickle=False)


def write_keyword_index(folder: Path, papers: pd.DataFrame, update: tuple | None = None) -> None:
    """``keyword_index/``: the keyword search's BM25 index of the papers' titles and abstracts as
    shown (``bm25.index_texts``, in row order), which the app memory-maps instead of indexing the
    papers itself.

    Args:
        update: for a build that adds papers, the previous build's index with its counts
            (``bm25_update.previous_counts``) and each paper's row in it or -1
            (``incremental.index_rows``): only the papers marked -1 are read, the others' counts
            come from that index, and the index written is the same.
    """
    if update is not None:
        index = bm25_update.update_index(update[0], update[1], papers["title"], papers["abstract"])
    else:
        index = bm25.build_index(bm25.ShownTexts(papers["title"], papers["abstract"]))
    bm25.save_index(index, folder / schema.KEYWORD_INDEX, len(papers))


def save_embeddings(folder: Path, vectors: np.ndarray) -> np.ndarray:
    """Write ``embeddings.npy`` into the (unpublished) build folder and return it memory-mapped,
    read-only: the stages after embedding only read the vectors.

    Args:
        vectors: float32 ``(n, dim)``; the caller drops its own reference afterwards.
    """
    path = folder / schema.EMBEDDINGS
    np.save(path, np.asarray(vectors, dtype=np.float32), allow_pickle=False)
    if len(vectors) == 0:  # numpy cannot map an empty file's data
        return np.load(path, allow_pickle=False)
    return np.load(path, mmap_mode="r", allow_pickle=False)


def manifest(
    *,
    build_id: str,
    summary,
    result: TopicResult,
    papers: pd.DataFrame,
    embeddings: np.ndarray,
    inputs: list[dict],
    config,
    fingerprint: str,
    fit_settings: str,
    embedding: dict,
) -> dict:
    """``manifest.json`` of a build: what was built from what, how, and what it cost.

    Args:
        build_id: the build folder's name.
        summary: the ``pipeline.build.build.BuildSummary`` with its final stage records and time.
        result: topics and tables; papers, embeddings: what was written.
        inputs: the input files (path, format, sha256, rows).
        config: the settings (all of them, as given).
        fingerprint, fit_settings: ``pipeline.build.build.fingerprint`` and ``fit_settings_key``.
        embedding: model, model_key, model_fingerprint and backend of the vectors.
    """
    created = now()
    stages = summary.stages
    return {
        "schema_version": schema.SCHEMA_VERSION,
        "name": summary.name,
        "build_id": build_id,
        "created_at": created,
        "fitted_at": result.fitted_at or created,
        "mode": summary.mode,
        "fingerprint": fingerprint,
        "fit_settings": fit_settings,
        "inputs": inputs,
        "params": json.loads(json.dumps(dataclasses.asdict(config), default=list)),
        "cluster_params": result.cluster_params,
        "knn": result.knn,
        "stability": result.stability,
        "embedding": {
            **embedding,
            "dim": int(embeddings.shape[1]) if embeddings.ndim == 2 else 0,
            "computed": summary.embedded,
            "cached": summary.embeddings_cached,
        },
        "counts": counts(result, papers, summary),
        "files": file_rows(result, papers),
        "packages": package_versions(),
        "stages": [s.to_dict() for s in stages],
        "seconds_total": round(summary.seconds, 3),
        "peak_rss_mb": round(max((s.peak_rss_mb for s in stages), default=0.0), 1),
    }


def counts(result: TopicResult, papers: pd.DataFrame, summary) -> dict:
    """The manifest's ``counts`` section."""
    years = result.trends.years["year"]
    return {
        "read": summary.read,
        "papers": len(papers),
        "skipped": summary.skipped,
        "changed": summary.changed,
        "skipped_by_reason": summary.skipped_by_reason,
        "topics": len(result.tables.topics),
        "outlier_share": round(result.outlier_share, 4),
        "reassigned": result.reassigned,
        "placed": result.placed_new,
        "fitted_papers": result.fitted_papers,
        "years": [int(years.min()), int(years.max())] if len(years) else None,
        "papers_with_year": int(result.trends.years["n_papers"].sum()) if len(years) else 0,
    }


def file_rows(result: TopicResult, papers: pd.DataFrame) -> dict:
    """The manifest's ``files`` section: row counts of the main tables."""
    return {
        f: {"rows": int(v)}
        for f, v in [
            (schema.PAPERS, len(papers)),
            (schema.TOPICS, len(result.tables.topics)),
            (schema.TOPIC_TERMS, len(result.tables.topic_terms)),
            (schema.KEYWORD_YEARS, len(result.trends.keyword_years)),
        ]
    }


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def write_manifest(folder: Path, manifest: dict) -> None:
    """``manifest.json``, atomically; the last file a build writes before it is published."""
    artifacts.write_json(folder / schema.MANIFEST, manifest)
