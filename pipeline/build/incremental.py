"""Incremental builds: new papers placed into the topics of the previous build, nothing refitted.

A previous build can take new papers when it was fitted with the same settings and model (its
manifest's ``fit_settings``), all its papers are still in the input, unchanged, and the new ones
are at most ``MAX_INCREMENTAL_SHARE`` of the papers the topics were fitted on. Each new paper goes
to its nearest topic embedding and onto the map beside its nearest papers (``pipeline.model.place``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis.novelty import neighbours
from pipeline.analysis.trends import Trends, add_papers, growth_per_year
from pipeline.build.results import PreviousModel, TopicResult
from pipeline.core import artifacts, schema
from pipeline.core.config import BuildConfig
from pipeline.core.manifest import Manifest
from pipeline.core.topic_tables import TopicTables
from pipeline.model.place import map_position, topic_distribution, vote_topics
from pipeline.model.topic_parts import without_stale_parts
from pipeline.model.vocab import DocTerms, make_vectorizer

#: Papers placed into existing topics at most, as a share of the fitted corpus, before a refit is
#: required: beyond it the topics no longer describe the corpus well.
MAX_INCREMENTAL_SHARE = 0.5

#: Nearest fitted papers that vote for a new paper's topic and set its map position.
PLACE_NEIGHBOURS = 10


def text_hashes(texts) -> np.ndarray:
    """A short hash per text: tells a paper whose text changed from the same paper unchanged."""
    return np.array([hashlib.blake2b(t.encode(), digest_size=8).hexdigest() for t in texts])


@dataclass(frozen=True)
class PreviousBuild:
    """The current build of a corpus, as a possible base for an incremental build.

    Attributes:
        folder: its build folder.
        manifest: its manifest.
        config: its settings, validated (``pipeline.core.settings.config_from_manifest``).
    """

    folder: Path
    manifest: Manifest
    config: BuildConfig


@dataclass(frozen=True)
class IncrementalPlan:
    """Which papers are new, and the build they are placed into.

    Attributes:
        previous: the build the topics come from.
        old_papers: its papers.parquet.
        new_mask: bool ``(n,)`` over the new papers table: True for papers to place.
    """

    previous: PreviousBuild
    old_papers: pd.DataFrame
    new_mask: np.ndarray

    @property
    def n_new(self) -> int:
        return int(self.new_mask.sum())


def plan(previous: PreviousBuild | None, papers: pd.DataFrame, fit_settings: str) -> IncrementalPlan | None:
    """An incremental plan when the previous build can take the new papers, else None.

    Args:
        previous: the corpus's current build, if any.
        papers: the new input's papers (``pipeline.ingest.ingest``).
        fit_settings: this build's ``pipeline.build.build.fit_settings_key``.
    """
    if previous is None or previous.manifest.fit_settings != fit_settings:
        return None
    try:
        old = artifacts.read_table(previous.folder, schema.PAPERS)
    except artifacts.ArtifactError:
        return None
    old_keys = set(zip(old["doc_id"], text_hashes(old["model_text"]), strict=True))
    new_keys = list(zip(papers["doc_id"], text_hashes(papers["model_text"]), strict=True))
    if not old_keys.issubset(new_keys):
        return None
    new_mask = np.array([k not in old_keys for k in new_keys], dtype=bool)
    fitted = previous.manifest.counts.fitted_papers
    fitted = len(old) if fitted is None else fitted
    if not new_mask.any() or (len(papers) - fitted) > MAX_INCREMENTAL_SHARE * fitted:
        return None
    return IncrementalPlan(previous, old, new_mask)


def index_rows(plan: IncrementalPlan, papers: pd.DataFrame) -> np.ndarray:
    """For each paper of the new input (in its row order), its row in the previous build's keyword
    index, or -1 where that index does not hold it as it is now: a new paper, or one whose title or
    abstract changed (the plan compares the cleaned text only), which is indexed again."""
    rows = np.full(len(papers), -1, dtype=np.int64)
    existing = np.flatnonzero(~plan.new_mask)
    old = plan.old_papers
    at = pd.Index(old["doc_id"]).get_indexer(papers["doc_id"].iloc[existing])
    same = np.ones(len(existing), dtype=bool)
    for column in ("title", "abstract"):
        same &= _same_shown(old[column], at, papers[column].iloc[existing])
    rows[existing[same]] = old["row"].to_numpy(dtype=np.int64)[at[same]]
    return rows


def _same_shown(before: pd.Series, at: np.ndarray, now: pd.Series) -> np.ndarray:
    """Whether ``before`` at positions ``at`` and ``now`` read the same to the keyword index, where
    anything but a string is empty: compared in Arrow for columns of text, else value by value."""
    if isinstance(before.dtype, pd.StringDtype) and isinstance(now.dtype, pd.StringDtype):
        import pyarrow as pa
        import pyarrow.compute as pc

        a = pc.fill_null(pa.array(before).take(pa.array(at)), "")
        b = pc.fill_null(pa.array(now), "")
        return pc.equal(a, b).to_numpy(zero_copy_only=False)
    return _shown(before)[at] == _shown(now)


def _shown(values: pd.Series) -> np.ndarray:
    values = values.to_numpy(dtype=object)
    text = np.fromiter((isinstance(v, str) for v in values), dtype=bool, count=len(values))
    return np.where(text, values, "")


def place(plan: IncrementalPlan, papers: pd.DataFrame, embeddings: np.ndarray) -> TopicResult:
    """Topics, map positions and distributions of all papers: the old ones keep theirs, each new
    one joins the topic of most of its nearest fitted papers and sits among them on the map. Refits nothing; the topics' tables are the previous build's
    with new sizes and shares.

    Args:
        plan: from :func:`plan`.
        papers: the new input's papers; embeddings: float32 ``(n, dim)`` of them.
    """
    folder = plan.previous.folder
    old = plan.old_papers.set_index("doc_id")
    topic_table = artifacts.read_table(folder, schema.TOPICS)
    if "keyword_terms" not in topic_table:  # built before keywords were written as phrases: they are its terms
        topic_table["keyword_terms"] = topic_table["keywords"]
    t_emb = artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS)
    old_emb = artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True)  # only read, in blocks
    distribution = topic_distribution(embeddings, t_emb)
    topic_ids = topic_table["topic"].to_numpy()
    n = len(papers)
    topics = np.empty(n, dtype=np.int64)
    xy = np.empty((n, 2), dtype=np.float32)
    was_outlier = np.zeros(n, dtype=bool)
    placed = np.zeros(n, dtype=bool)
    existing = ~plan.new_mask
    old_rows = old.loc[papers.loc[existing, "doc_id"]]
    topics[existing] = old_rows["topic"].to_numpy()
    xy[existing] = old_rows[["x", "y"]].to_numpy(dtype=np.float32)
    was_outlier[existing] = old_rows["was_outlier"].to_numpy(dtype=bool)
    placed[existing] = old_rows["placed"].to_numpy(dtype=bool) if "placed" in old_rows else False
    new_idx = np.flatnonzero(plan.new_mask)
    by_row = plan.old_papers.sort_values("row")
    # A new paper joins the topic most of its nearest fitted papers belong to (the clustering's own
    # notion of a topic; the nearest topic embedding misplaces about one paper in five), and sits on
    # the map among them.
    idx, sims = neighbours(embeddings[new_idx], old_emb, PLACE_NEIGHBOURS)
    sorted_ids = np.sort(topic_ids)
    topics[new_idx], _ = vote_topics(by_row["topic"].to_numpy()[idx], sims, sorted_ids)
    placed[new_idx] = True
    xy[new_idx] = map_position(idx, sims, by_row[["x", "y"]].to_numpy(dtype=np.float32))
    pos = {t: i for i, t in enumerate(topic_ids.tolist())}
    probs = distribution[np.arange(n), [pos.get(int(t), 0) for t in topics]]
    counts = pd.Series(topics).value_counts()
    topic_table = topic_table.copy()
    topic_table["size"] = topic_table["topic"].map(counts).fillna(0).astype(int)
    topic_table["share"] = topic_table["size"] / n
    manifest = plan.previous.manifest
    return TopicResult(
        topics=topics,
        topic_prob=probs.astype(np.float32),
        was_outlier=was_outlier,
        placed=placed,
        xy=xy,
        tables=TopicTables(
            topics=topic_table,
            topic_terms=artifacts.read_table(folder, schema.TOPIC_TERMS),
            hierarchy=artifacts.read_table(folder, schema.HIERARCHY),
            topic_embeddings=t_emb,
            similarity=artifacts.read_array(folder, schema.TOPIC_SIMILARITY),
            distribution=distribution,
        ),
        trends=None,  # recomputed by ``with_trends``
        model=PreviousModel(folder / schema.BERTOPIC_DIR),
        cluster_params=manifest.cluster_params,
        fitted_papers=len(plan.old_papers) if manifest.counts.fitted_papers is None else manifest.counts.fitted_papers,
        fitted_at=manifest.created_at if manifest.fitted_at is None else manifest.fitted_at,
        stability={"computed": "off"} if manifest.stability is None else manifest.stability,
        reassigned=int(was_outlier.sum()),
        placed_new=plan.n_new,
        knn=manifest.knn,
    )


def with_trends(result: TopicResult, papers: pd.DataFrame, plan: IncrementalPlan) -> TopicResult:
    """``result`` with trends and topic growth over all papers: the previous build's term counts
    plus the new papers' own, counted on the fitted vocabulary with the settings the topics were
    fitted with (nothing is recounted: adding papers to a million costs their own counting)."""
    from dataclasses import replace

    folder, config = plan.previous.folder, plan.previous.config
    previous = Trends(
        artifacts.read_table(folder, schema.TERMS),
        None,
        None,
        artifacts.read_table(folder, schema.KEYWORD_YEARS),
    )
    vocabulary = np.sort(previous.terms["term"].astype(str).to_numpy())
    new_texts = papers.loc[plan.new_mask, "model_text"].tolist()
    if len(vocabulary):
        vectorizer = make_vectorizer(
            ngram_range=config.represent.ngram_range, vocabulary={t: i for i, t in enumerate(vocabulary.tolist())}
        )
        counts = vectorizer.transform(new_texts).astype(np.int32)
    else:
        from scipy import sparse

        counts = sparse.csr_matrix((len(new_texts), 0), dtype=np.int32)
    trends = add_papers(previous, papers["year"], result.topics, plan.new_mask, DocTerms(counts.tocsr(), vocabulary))
    growth = growth_per_year(trends.topic_years) if len(trends.years) >= 2 else {}
    table = result.tables.topics.copy()
    table["growth"] = [growth.get(int(t), np.nan) for t in table["topic"]]
    if "stability" not in table:  # built before stability was measured
        table["stability"] = np.nan
    if "label_support" not in table:  # built before label support was measured
        table["label_support"] = np.nan
    table = without_stale_parts(table)  # the topics that took papers no longer have the parts they were split in
    return replace(result, trends=trends, tables=replace(result.tables, topics=table))
