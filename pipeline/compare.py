"""What changed: a corpus against a reference corpus, topics of two builds matched, topic lineage.

Three questions, one set of tools (numpy and pandas only: the app and the CLI both use it):

* :func:`compare` puts the papers of a *new* corpus on a *reference* corpus: each new paper is placed
  into the reference's topics and onto its map without refitting anything (:mod:`pipeline.place`:
  the map position of the incremental build; the topic most of its nearest reference papers hold,
  which keeps topic shares unbiased where the nearest topic embedding does not), each reference
  topic's share then and now gets an
  interval, the terms that tell the two apart come from :mod:`pipeline.logodds`, each new paper
  gets a novelty score (how far it lies from its nearest reference papers) with its closest prior
  work, and the two builds' own topics are matched (:func:`match_topics`).
* :func:`match_topics` matches the topics of any two builds (two years built separately, or a
  rebuild with other settings): matched, split, merged, new, vanished, with the evidence.
* :func:`lineage` follows the topics of one multi-year build across periods.

Calibration, once for all three: a paper is *far from* a corpus when its novelty score (one minus
its mean cosine similarity to its ``novelty_k`` nearest papers there) is higher than that corpus's
own papers' scores against the rest of it (leave one out) for all but ``novel_alpha`` of them. That
is a conformal p-value (Vovk et al. 2005; Bates et al. 2023, "Testing for outliers with conformal
p-values"): if the paper were like the corpus's papers, the chance of it being flagged is at most
``novel_alpha``, whatever the corpus size.

Shares carry Wilson score intervals and their changes Newcombe's hybrid score interval (Newcombe
1998, method 10), both at a family-wise level over the topics (Bonferroni), so that looking at 60
topics does not find three "trends" by chance.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import artifacts, schema
from pipeline.distinctive import distinctive_terms, shared_document_frequencies
from pipeline.intervals import _z, detectable_change, share_changes
from pipeline.labels import shown_labels
from pipeline.logodds import DEFAULT_PRIOR_MASS
from pipeline.novelty import NoveltyNull, _rows, neighbours, novelty_null, novelty_scores
from pipeline.place import map_position, vote_topics
from pipeline.side import Side

#: Bump when what a comparison computes changes: stored comparisons of another version are recomputed.
#: 2: topic labels as the app shows them (weak ones marked).
COMPARE_VERSION = 2


class CompareError(ValueError):
    """Two builds cannot be compared; the message says why and what to do."""


@dataclass(frozen=True)
class CompareParams:
    """Settings of a comparison (defaults chosen in EVALUATION.md, "Comparing corpora").

    Attributes:
        k: reference neighbours whose topics a paper votes for when topics are matched, and that
            place it on the reference map.
        novelty_k: nearest reference papers averaged in the novelty score.
        novel_alpha: a paper is "far from everything before" when its conformal p-value is below this.
        level: family-wise confidence of the share intervals (Bonferroni over the topics).
        majority: a topic "goes to" a partner when more than this share of its papers does (0.5: a
            majority, so at most one partner can hold it).
        part: the smallest share of a topic's papers that counts as a piece of a split or merge
            (0.25: at most four pieces are named).
        min_papers: topics with fewer papers are not given a match status (too few to tell).
        null_sample: reference papers scored leave-one-out to calibrate novelty (the p-values'
            resolution is 1 / (sample + 1)).
        null_recent: take them among the reference's most recent papers (when it has years), not
            at random: see :func:`novelty_null`.
        listed: closest prior papers kept per new paper.
        top_terms: distinctive terms kept on each side.
        prior_mass: total pseudo-count of the log-odds prior (:mod:`pipeline.logodds`).
        seed: of the calibration sample.
    """

    k: int = 10
    novelty_k: int = 5
    novel_alpha: float = 0.05
    level: float = 0.95
    majority: float = 0.5
    part: float = 0.25
    min_papers: int = 3
    null_sample: int = 2000
    null_recent: bool = True
    listed: int = 5
    top_terms: int = 40
    prior_mass: float = DEFAULT_PRIOR_MASS
    seed: int = 0


# ------------------------------------------------------------------------------------------
# One build, as the comparison sees it
# ------------------------------------------------------------------------------------------


def load_side(root: Path, name: str) -> Side:
    """A built corpus as a :class:`Side` (embeddings memory-mapped; texts read when needed)."""
    folder = artifacts.corpus_path(root, name)
    manifest = artifacts.read_manifest(folder)
    papers = artifacts.read_table(folder, schema.PAPERS, columns=["doc_id", "row", "year", "topic", "x", "y"])
    papers = papers.sort_values("row", kind="stable").reset_index(drop=True)
    topics = artifacts.read_table(folder, schema.TOPICS)
    topics = topics.assign(label=shown_labels(topics))  # as the app shows them: weak ones marked
    texts_cache: dict[str, list[str]] = {}

    def texts(rows: np.ndarray) -> list[str]:
        if "all" not in texts_cache:
            table = artifacts.read_table(folder, schema.PAPERS, columns=["row", "model_text"]).sort_values("row")
            texts_cache["all"] = table["model_text"].astype(str).tolist()
        every = texts_cache["all"]
        return [every[i] for i in np.asarray(rows, dtype=np.int64)]

    return Side(
        name=name,
        build_id=folder.name,
        model_key=str((manifest.get("embedding") or {}).get("model_key", "")),
        doc_ids=papers["doc_id"].astype(str).to_numpy(dtype=object),
        topics=papers["topic"].to_numpy(dtype=np.int64),
        years=pd.to_numeric(papers["year"], errors="coerce").to_numpy(dtype=float),
        embeddings=artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True),
        xy=papers[["x", "y"]].to_numpy(dtype=np.float32),
        topic_table=topic_frame(topics),
        topic_embeddings=np.asarray(artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS), dtype=np.float32),
        terms=artifacts.read_table(folder, schema.TERMS, columns=["term", "df"]),
        texts=texts,
        ngram_range=tuple((manifest.get("params") or {}).get("represent", {}).get("ngram_range", (1, 2))),
    )


def topic_frame(topics: pd.DataFrame) -> pd.DataFrame:
    out = topics[["topic", "label", "size", "keywords"]].copy()
    out["topic"] = out["topic"].astype(np.int64)
    out["label"] = out["label"].astype(str)
    out["keywords"] = [list(k) if k is not None else [] for k in out["keywords"]]
    return out.reset_index(drop=True)


# ------------------------------------------------------------------------------------------
# Topic matching
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Matching:
    """Topics of two builds matched.

    Attributes:
        flows: one row per (topic of A, topic of B) pair with evidence: topic_a, topic_b (-1:
            "nothing close on the other side"), from_a (share of a's papers going to b), from_b
            (share of b's papers coming from a), papers_a / papers_b (those shares as paper counts),
            centroid_sim (cosine of the topic embeddings; NaN for -1).
        topics: one row per topic of either build: side ("a" or "b"), topic, label, size, status,
            partners (topic ids on the other side), partner_shares, none_share (share of its
            papers with nothing close on the other side), best_sim (best centroid similarity).
        method: "shared papers" or "nearest neighbours" (or both, "shared papers and nearest
            neighbours").
        shared: papers the two builds share (by doc_id).
    """

    flows: pd.DataFrame
    topics: pd.DataFrame
    method: str
    shared: int


#: Statuses of a topic of build A (the earlier, or the reference) and of build B.
STATUS_A = {
    "matched": "matched",
    "merged": "merged into",
    "split": "split into",
    "gone": "vanished",
    "unseen": "not seen (too few papers to tell)",
    "unclear": "no clear successor",
    "small": "too small to tell",
}
STATUS_B = {
    "matched": "matched",
    "merged": "split from",
    "split": "merger of",
    "gone": "new",
    "unseen": "not seen (too few papers to tell)",
    "unclear": "no clear precursor",
    "small": "too small to tell",
}


def vote_matrix(
    neighbour_topics: np.ndarray, neighbour_weights: np.ndarray, far: np.ndarray, topic_ids: np.ndarray
) -> np.ndarray:
    """Each paper's distribution over the other build's topics, plus "nothing close" last.

    Args:
        neighbour_topics: int ``(n, k)`` topic ids of each paper's nearest papers on the other side.
        neighbour_weights: float ``(n, k)`` their weights (rows summing to 1).
        far: bool ``(n,)`` papers with nothing close on the other side (all weight to the last column).
        topic_ids: int ``(t,)`` the other side's topic ids (columns).

    Returns:
        float ``(n, t + 1)``, rows sum to 1.
    """
    n = len(neighbour_topics)
    out = np.zeros((n, len(topic_ids) + 1), dtype=float)
    if n == 0:
        return out
    col = pd.Index(topic_ids).get_indexer(neighbour_topics.ravel()).reshape(neighbour_topics.shape)
    col = np.where(col < 0, len(topic_ids), col)
    rows = np.repeat(np.arange(n), neighbour_topics.shape[1])
    np.add.at(out, (rows, col.ravel()), neighbour_weights.ravel())
    out[far] = 0.0
    out[far, -1] = 1.0
    empty = out.sum(axis=1) == 0
    out[empty, -1] = 1.0
    return out


def match_topics(
    a: Side,
    b: Side,
    params: CompareParams = CompareParams(),
    *,
    a_rows: np.ndarray | None = None,
    b_rows: np.ndarray | None = None,
    b_in_a: Lookup | None = None,
) -> Matching:
    """Match the topics of build ``a`` (earlier, or the reference) with those of build ``b``.

    Every paper of each build is given a distribution over the other build's topics: its own
    topic there when the other build holds the same paper (by doc_id), else the topics of its
    ``k`` nearest papers there (equal votes), or "nothing close" when it lies far from every paper
    there (conformal p-value below ``novel_alpha``, calibrated on the other build). A topic's
    flows are its papers' distributions summed. Then, for a topic X with at least ``min_papers``
    papers (MONIC-style rules, Spiliopoulou et al. 2006):

    * nothing close for more than ``majority`` of its papers: vanished (in a) / new (in b);
    * more than ``majority`` of its papers in one partner Y: matched when more than ``majority`` of
      Y's papers are in X too, else "merged into Y" (a) / "split from Y" (b);
    * at least two partners with ``part`` of its papers each, each of them holding more than
      ``majority`` of its own papers in X: "split into" (a) / "merger of" (b);
    * otherwise no clear successor / precursor.

    Args:
        a_rows, b_rows: papers of each build taking part (default all).
        b_in_a: :func:`lookup` of ``b_rows`` in ``a_rows``, when already done.
    """
    if a.model_key and b.model_key and a.model_key != b.model_key:
        raise CompareError(
            f"{a.name} and {b.name} were embedded with different models ({a.model_key} vs {b.model_key}); "
            "rebuild one of them with the other's embedding settings to compare them."
        )
    a_rows = np.arange(a.n) if a_rows is None else np.asarray(a_rows, dtype=np.int64)
    b_rows = np.arange(b.n) if b_rows is None else np.asarray(b_rows, dtype=np.int64)
    a_ids, b_ids = a.topic_table["topic"].to_numpy(), b.topic_table["topic"].to_numpy()
    a_in_b = lookup(a, a_rows, b, b_rows, params)
    b_in_a = b_in_a if b_in_a is not None else lookup(b, b_rows, a, a_rows, params)
    va, vb = _distributions(a_in_b, b, params), _distributions(b_in_a, a, params)
    shared_a = int((a_in_b.shared >= 0).sum())
    # Topic x topic flows: rows topics of a (+ none), columns topics of b (+ none).
    ta = pd.Index(a_ids).get_indexer(a.topics[a_rows])
    tb = pd.Index(b_ids).get_indexer(b.topics[b_rows])
    from_a = _group_sum(va, ta, len(a_ids))  # (ka, kb + 1): a's papers over b's topics
    from_b = _group_sum(vb, tb, len(b_ids))  # (kb, ka + 1): b's papers over a's topics
    size_a = np.bincount(ta[ta >= 0], minlength=len(a_ids)).astype(float)
    size_b = np.bincount(tb[tb >= 0], minlength=len(b_ids)).astype(float)
    share_a = from_a / np.clip(size_a[:, None], 1, None)
    share_b = from_b / np.clip(size_b[:, None], 1, None)
    sim = np.asarray(a.topic_embeddings, dtype=float) @ np.asarray(b.topic_embeddings, dtype=float).T
    flows = _flow_table(a_ids, b_ids, from_a, from_b, share_a, share_b, sim)
    topics = pd.concat(
        [
            _statuses("a", a, a_ids, size_a, share_a, share_b, b_ids, sim, params, n_other=len(b_rows)),
            _statuses("b", b, b_ids, size_b, share_b, share_a, a_ids, sim.T, params, n_other=len(a_rows)),
        ],
        ignore_index=True,
    )
    shared = shared_a
    if shared and shared >= min(len(a_rows), len(b_rows)):
        method = "shared papers"
    elif shared:
        method = "shared papers and nearest neighbours"
    else:
        method = "nearest neighbours"
    return Matching(flows=flows, topics=topics, method=method, shared=shared)


@dataclass(frozen=True)
class Lookup:
    """Papers of one build looked up in another.

    Attributes:
        shared: int ``(m,)`` each paper's row in the other build when it holds the same doc_id, else -1.
        pool: int ``(p,)`` the other build's rows searched (those this build does not hold).
        idx: int ``(m, width)`` nearest ``pool`` positions (rows of shared papers too, unused).
        sims: float32 ``(m, width)`` their cosine similarities, most similar first.
        scores: float ``(m,)`` novelty scores against ``pool``.
        p_values: float ``(m,)`` conformal p-values (calibrated on ``pool``'s own papers).
    """

    shared: np.ndarray
    pool: np.ndarray
    idx: np.ndarray
    sims: np.ndarray
    scores: np.ndarray
    p_values: np.ndarray
    null: NoveltyNull


def lookup(side: Side, rows: np.ndarray, other: Side, other_rows: np.ndarray, params: CompareParams) -> Lookup:
    """Find each paper of ``side`` (``rows``) in ``other`` (``other_rows``): its copy, or its neighbours."""
    position = pd.Index(other.doc_ids[other_rows]).get_indexer(side.doc_ids[rows])
    shared = np.where(position >= 0, other_rows[np.clip(position, 0, None)] if len(other_rows) else -1, -1)
    own = pd.Index(side.doc_ids[rows]).get_indexer(other.doc_ids[other_rows]) < 0
    pool = other_rows[own]  # a paper is never its own neighbour
    width = max(params.k, params.novelty_k, params.listed)
    corpus = _rows(other.embeddings, pool)
    null = novelty_null(
        corpus, params.novelty_k, sample=params.null_sample, seed=params.seed,
        years=other.years[pool] if params.null_recent else None,
    )  # fmt: skip
    idx, sims = neighbours(np.asarray(side.embeddings[rows], dtype=np.float32), corpus, width)
    scores = novelty_scores(sims, params.novelty_k)
    p = null.p_values(scores) if len(null.scores) else np.zeros(len(rows))
    return Lookup(shared.astype(np.int64), pool, idx, sims, scores, p, null)


def _distributions(found: Lookup, other: Side, params: CompareParams) -> np.ndarray:
    """Each looked-up paper's distribution over ``other``'s topics (+ "nothing close" last)."""
    other_ids = other.topic_table["topic"].to_numpy()
    m = len(found.shared)
    out = np.zeros((m, len(other_ids) + 1), dtype=float)
    shared = found.shared >= 0
    if shared.any():
        col = pd.Index(other_ids).get_indexer(other.topics[found.shared[shared]])
        out[np.flatnonzero(shared), np.where(col < 0, len(other_ids), col)] = 1.0
    rest = np.flatnonzero(~shared)
    if len(rest) and found.idx.shape[1]:
        top = found.idx[rest, : params.k]
        weights = np.full(top.shape, 1.0 / top.shape[1])
        far = found.p_values[rest] < params.novel_alpha
        out[rest] = vote_matrix(other.topics[found.pool][top], weights, far, other_ids)
    elif len(rest):
        out[rest, -1] = 1.0
    return out


def _group_sum(values: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    out = np.zeros((n_groups, values.shape[1]), dtype=float)
    keep = groups >= 0
    np.add.at(out, groups[keep], values[keep])
    return out


def _flow_table(a_ids, b_ids, from_a, from_b, share_a, share_b, sim) -> pd.DataFrame:
    ka, kb = len(a_ids), len(b_ids)
    ia, ib = np.meshgrid(np.arange(ka), np.arange(kb), indexing="ij")
    ia, ib = ia.ravel(), ib.ravel()
    table = pd.DataFrame(
        {
            "topic_a": a_ids[ia].astype(np.int64),
            "topic_b": b_ids[ib].astype(np.int64),
            "papers_a": from_a[ia, ib],
            "from_a": share_a[ia, ib],
            "papers_b": from_b[ib, ia],
            "from_b": share_b[ib, ia],
            "centroid_sim": sim[ia, ib] if ka and kb else np.zeros(0),
        }
    )
    none_a = pd.DataFrame(
        {"topic_a": a_ids.astype(np.int64), "topic_b": -1, "papers_a": from_a[:, kb], "from_a": share_a[:, kb],
         "papers_b": 0.0, "from_b": 0.0, "centroid_sim": np.nan}
    )  # fmt: skip
    none_b = pd.DataFrame(
        {"topic_a": -1, "topic_b": b_ids.astype(np.int64), "papers_a": 0.0, "from_a": 0.0,
         "papers_b": from_b[:, ka], "from_b": share_b[:, ka], "centroid_sim": np.nan}
    )  # fmt: skip
    table = pd.concat([t for t in (table, none_a, none_b) if len(t)], ignore_index=True)
    table = table[(table["papers_a"] > 0) | (table["papers_b"] > 0)]
    return table.sort_values(["topic_a", "topic_b"], kind="stable").reset_index(drop=True)


def _statuses(side_name, side: Side, ids, sizes, share, other_share, other_ids, sim, params: CompareParams, *, n_other):
    """Status of each topic of one side from its papers' shares over the other side's topics.

    A topic is only called vanished (or new) when the other side is large enough to show it: with
    its share unchanged, the other side would hold no paper of it with a chance under
    ``novel_alpha`` (``(1 - share) ** n_other``); else it is "unseen" (too few papers to tell).
    """
    rows = []
    total = max(float(sizes.sum()), 1.0)
    labels = side.labels
    k_other = len(other_ids)
    for i, topic in enumerate(ids.tolist()):  # one pass per topic
        dist = share[i, :k_other]
        none = float(share[i, k_other])
        order = np.lexsort((other_ids, -dist))
        best = int(order[0]) if k_other else -1
        parts = [int(j) for j in order if dist[j] >= params.part]
        if sizes[i] < params.min_papers:
            status, partners = "small", []
        elif none > params.majority:
            unseen = (1 - sizes[i] / total) ** n_other >= params.novel_alpha
            status, partners = ("unseen" if unseen else "gone"), []
        elif best >= 0 and dist[best] > params.majority:
            status = "matched" if other_share[best, i] > params.majority else "merged"
            partners = [best]
        elif len(parts) >= 2 and all(other_share[j, i] > params.majority for j in parts):
            status, partners = "split", parts  # each part is mostly made of this topic's papers
        else:
            status, partners = "unclear", parts[:1]
        rows.append(
            {
                "side": side_name,
                "topic": int(topic),
                "label": labels.get(int(topic), f"topic {topic}"),
                "size": int(sizes[i]),
                "status": status,
                "status_text": (STATUS_A if side_name == "a" else STATUS_B)[status],
                "partners": [int(other_ids[j]) for j in partners],
                "partner_shares": [round(float(dist[j]), 4) for j in partners],
                "none_share": round(none, 4),
                "best_partner": int(other_ids[best]) if best >= 0 else -1,
                "best_share": round(float(dist[best]), 4) if best >= 0 else 0.0,
                "best_sim": float(np.max(sim[i])) if k_other else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=[
        "side", "topic", "label", "size", "status", "status_text", "partners", "partner_shares", "none_share",
        "best_partner", "best_share", "best_sim",
    ])  # fmt: skip


# ------------------------------------------------------------------------------------------
# A corpus against a reference
# ------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    """A new corpus against a reference: plain tables and a JSON-able summary (saved as files).

    Attributes:
        summary: names, build ids, version, params, counts, calibration, notes (JSON-able).
        papers: one row per new paper (``schema.CMP_PAPER_COLUMNS``), most novel first.
        shares: one row per reference topic (``schema.CMP_SHARE_COLUMNS``).
        terms: distinctive terms (``schema.CMP_TERM_COLUMNS``).
        flows, matches: :class:`Matching` of the reference's topics (a) with the new corpus's (b).
    """

    summary: dict
    papers: pd.DataFrame
    shares: pd.DataFrame
    terms: pd.DataFrame
    flows: pd.DataFrame
    matches: pd.DataFrame

    TABLES = {
        "papers": schema.CMP_PAPERS,
        "shares": schema.CMP_SHARES,
        "terms": schema.CMP_TERMS,
        "flows": schema.CMP_FLOWS,
        "matches": schema.CMP_MATCHES,
    }

    @property
    def key(self) -> tuple[str, str, int]:
        """(new build id, reference build id, version): what the comparison was computed from."""
        s = self.summary
        return (s["new"]["build_id"], s["reference"]["build_id"], s["version"])

    def to_dict(self, tables: Iterable[str] | None = None) -> dict:
        """Everything as JSON-able data (for an offline export): the summary and each table's
        records (NaN as null), or only ``tables`` (names of ``TABLES``)."""
        out = {"summary": self.summary}
        for attr in self.TABLES if tables is None else tables:
            frame = getattr(self, attr)
            out[attr] = json.loads(frame.to_json(orient="records", force_ascii=False))
        return out

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for attr, file in self.TABLES.items():
            getattr(self, attr).to_parquet(folder / file, index=False)
        artifacts.write_json(folder / schema.COMPARISON, self.summary)

    @classmethod
    def load(cls, folder: Path) -> Comparison:
        try:
            summary = json.loads((folder / schema.COMPARISON).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise artifacts.ArtifactError(f"comparison in {folder} cannot be read ({exc}); recompute it.") from None
        tables = {attr: artifacts.read_table(folder, file) for attr, file in cls.TABLES.items()}
        return cls(summary=summary, **tables)


def overlap(new: Side, ref: Side) -> tuple[np.ndarray, np.ndarray]:
    """(reference rows not in the new corpus, reference rows also in it), by doc_id."""
    in_new = pd.Index(new.doc_ids).get_indexer(ref.doc_ids) >= 0
    return np.flatnonzero(~in_new), np.flatnonzero(in_new)


def compare(new: Side, ref: Side, params: CompareParams = CompareParams()) -> Comparison:
    """Compare corpus ``new`` with reference ``ref`` (see the module docstring).

    Papers the reference shares with the new corpus (same doc_id) are left out of the reference
    for placement, shares, novelty and terms (a paper is not prior work to itself); the topic
    matching uses them as its strongest evidence.

    Raises:
        CompareError: different embedding models, or nothing left in the reference.
    """
    if new.model_key and ref.model_key and new.model_key != ref.model_key:
        raise CompareError(
            f"{new.name} and {ref.name} were embedded with different models; rebuild one with the other's "
            "embedding settings to compare them."
        )
    ref_rows, shared_rows = overlap(new, ref)
    if len(ref_rows) == 0:
        raise CompareError(
            f"every paper of {ref.name} is also in {new.name}: there is no earlier work to compare with. "
            f"Pick a reference that holds other papers."
        )
    started = time.perf_counter()
    ref_topic_ids = ref.topic_table["topic"].to_numpy()
    ref_labels = ref.labels

    # One lookup of the new papers among the reference papers they are not (a paper is not its own
    # prior work) gives the placement, the map position and the novelty.
    found = lookup(new, np.arange(new.n), ref, np.arange(ref.n), params)
    # Placement: the topic most of its nearest reference papers belong to (pipeline.place), and the
    # map position the incremental build gives (the similarity-weighted mean of theirs).
    sorted_ids = np.sort(ref_topic_ids)
    placed_topic, placed_prob = vote_topics(
        ref.topics[found.pool][found.idx[:, : params.k]], found.sims[:, : params.k], sorted_ids
    )
    idx, sims, scores, p = found.idx, found.sims, found.scores, found.p_values
    xy = map_position(idx[:, : params.k], sims[:, : params.k], ref.xy[found.pool])
    null = found.null
    listed = idx[:, : params.listed]
    papers = pd.DataFrame(
        {
            "doc_id": new.doc_ids.astype(str),
            "new_topic": new.topics.astype(np.int64),
            "ref_topic": placed_topic.astype(np.int64),
            "ref_topic_prob": placed_prob.astype(np.float32),
            "x": xy[:, 0],
            "y": xy[:, 1],
            "novelty": scores,
            "p_value": p,
            "far": p < params.novel_alpha,
            "nearest_sim": sims[:, 0].astype(float) if sims.shape[1] else np.zeros(new.n),
            "neighbour_ids": [list(r) for r in ref.doc_ids[found.pool][listed]],
            "neighbour_sims": [[round(float(s), 4) for s in r] for r in sims[:, : params.listed]],
        }
    )
    papers = papers.sort_values(["novelty", "doc_id"], ascending=[False, True], kind="stable").reset_index(drop=True)
    papers.insert(0, "rank", np.arange(1, len(papers) + 1, dtype=np.int32))

    # Shares of the reference's topics, then (its own papers) and now (the new papers placed).
    ref_topic_pos = pd.Index(ref_topic_ids).get_indexer(ref.topics[ref_rows])
    then = np.bincount(ref_topic_pos[ref_topic_pos >= 0], minlength=len(ref_topic_ids))
    now_pos = pd.Index(ref_topic_ids).get_indexer(placed_topic)
    now = np.bincount(now_pos[now_pos >= 0], minlength=len(ref_topic_ids))
    shares = share_changes(then, len(ref_rows), now, new.n, level=params.level)
    shares.insert(0, "topic", ref_topic_ids.astype(np.int64))
    shares.insert(1, "label", [ref_labels.get(int(t), f"topic {t}") for t in ref_topic_ids])
    shares["keywords"] = [list(k)[:8] for k in ref.topic_table["keywords"]]
    shares["far_new"] = np.bincount(now_pos[(now_pos >= 0) & (p < params.novel_alpha)], minlength=len(ref_topic_ids))

    # Terms, and the two builds' own topics matched.
    df = shared_document_frequencies(
        new, ref, ref_rows, shared_rows, candidates=3 * params.top_terms, prior_mass=params.prior_mass
    )
    terms = distinctive_terms(df, new.n, len(ref_rows), top=params.top_terms, prior_mass=params.prior_mass)
    matching = match_topics(ref, new, params, b_in_a=found)
    matches = matching.topics.copy()
    matches["keywords"] = [
        list(k)[:8]
        for k in pd.concat([ref.topic_table, new.topic_table], ignore_index=True)["keywords"]
    ]  # fmt: skip

    typical = float(np.median(then / max(len(ref_rows), 1))) if len(then) else float("nan")
    summary = {
        "version": COMPARE_VERSION,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - started, 3),
        "new": _side_summary(new),
        "reference": _side_summary(ref) | {"papers_used": int(len(ref_rows)), "papers_shared": int(len(shared_rows))},
        "params": asdict(params),
        "matching": {"method": matching.method, "shared": matching.shared},
        "calibration": {
            "null_papers": int(len(null.scores)),
            "novelty_p50": null.percentile(0.5),
            "novelty_p95": null.percentile(1 - params.novel_alpha),
            "far_papers": int((p < params.novel_alpha).sum()),
        },
        "shares": {
            "z": _z(params.level, len(ref_topic_ids)),
            "typical_share": typical,
            "detectable_rise": detectable_change(
                typical, len(ref_rows), new.n, level=params.level, tests=len(ref_topic_ids)
            )
            if len(then)
            else float("nan"),
            "grew": int((shares["verdict"] == "grew").sum()),
            "shrank": int(shares["verdict"].isin(["shrank", "gone"]).sum()),
        },
    }
    return Comparison(summary, papers, shares, terms, matching.flows, matches)


def _side_summary(side: Side) -> dict:
    years = side.years[~np.isnan(side.years)]
    return {
        "name": side.name,
        "build_id": side.build_id,
        "papers": int(side.n),
        "topics": int(len(side.topic_table)),
        "years": [int(years.min()), int(years.max())] if len(years) else None,
    }


# ------------------------------------------------------------------------------------------
# Stored comparisons: <root>/.compare/<new>/<ref> -> <ref>@<key> (atomic symlink swap)
# ------------------------------------------------------------------------------------------


def comparison_dir(root: Path, new: str, ref: str) -> Path:
    """Where the comparison of ``new`` against ``ref`` is stored (a link to its current version)."""
    return Path(root) / schema.COMPARE_DIR / artifacts.check_name(new) / artifacts.check_name(ref)


def stored(root: Path, new: Side, ref: Side) -> Comparison | None:
    """The stored comparison of these two builds, or None when there is none or it is stale."""
    folder = comparison_dir(root, new.name, ref.name)
    if not (folder / schema.COMPARISON).exists():
        return None
    try:
        result = Comparison.load(folder)
    except artifacts.ArtifactError:
        return None
    return result if result.key == (new.build_id, ref.build_id, COMPARE_VERSION) else None


def store(root: Path, result: Comparison) -> Path:
    """Write ``result`` under ``root/.compare/<new>/<ref>`` and make it current in one rename."""
    link = comparison_dir(root, result.summary["new"]["name"], result.summary["reference"]["name"])
    link.parent.mkdir(parents=True, exist_ok=True)
    folder = link.parent / f".{link.name}.{uuid.uuid4().hex[:10]}"
    result.save(folder)
    if link.exists() and not link.is_symlink():
        shutil.rmtree(link, ignore_errors=True)
    tmp = link.parent / f".{link.name}.{uuid.uuid4().hex[:8]}.link"
    os.symlink(folder.name, tmp)
    os.replace(tmp, link)
    for old in link.parent.glob(f".{link.name}.*"):
        if old.is_dir() and not old.is_symlink() and old.name != folder.name:
            shutil.rmtree(old, ignore_errors=True)
    return link


def compare_builds(root: Path, new: str, ref: str, params: CompareParams = CompareParams(), *, force: bool = False):
    """Compare two built corpora of ``root`` and store the result (skipped when stored and current).

    Returns:
        ``(comparison, computed)``: the result and whether it was computed now.
    """
    if new == ref:
        raise CompareError("a corpus cannot be its own reference: pick another corpus.")
    new_side, ref_side = load_side(root, new), load_side(root, ref)
    if not force:
        existing = stored(root, new_side, ref_side)
        if existing is not None and existing.summary.get("params") == asdict(params):
            return existing, False
    result = compare(new_side, ref_side, params)
    store(root, result)
    return result, True


def unclear_topics(matches: pd.DataFrame) -> pd.DataFrame:
    """The new corpus's topics without a clear precursor (status ``unclear``: no majority of their
    papers in one reference topic, not a merger, not new), those least close to the reference first.
    The one definition the command line, the app's *What changed* and the offline file count."""
    own = matches[(matches["side"] == "b") & (matches["status"] == "unclear")]
    return own.sort_values(["none_share", "size", "topic"], ascending=[False, False, True])


def describe(result: Comparison, *, computed: bool = True) -> list[str]:
    """The comparison in a few lines of plain text (the CLI's summary)."""
    s = result.summary
    new, ref = s["new"], s["reference"]
    shares, matches, papers = result.shares, result.matches, result.papers
    far = int(papers["far"].sum())
    alpha = s["params"]["novel_alpha"]

    def topics_of(verdicts: tuple[str, ...]) -> str:
        rows = shares[shares["verdict"].isin(verdicts)].sort_values("change", key=abs, ascending=False)
        return ", ".join(
            f"{r.label} {r.change * 100:+.1f} points [{r.change_lo * 100:+.1f}, {r.change_hi * 100:+.1f}]"
            for r in rows.head(5).itertuples()
        )

    lines = [
        f"{'Compared' if computed else 'Up to date:'} {new['name']!r} ({new['papers']:,} papers, {new['topics']} topics) "
        f"with {ref['name']!r} ({ref['papers_used']:,} papers"
        + (f"; {ref['papers_shared']:,} shared papers left out" if ref["papers_shared"] else "")
        + (f") in {s['seconds']:.1f} s" if computed else f"), stored {s['created_at'][:16]}"),
        f"  far from all earlier work: {far:,} papers ({far / max(new['papers'], 1):.1%}; a paper like the "
        f"reference's own is flagged {alpha:.0%} of the time)",
    ]
    grew, shrank = s["shares"]["grew"], s["shares"]["shrank"]
    lines.append(f"  topics that grew: {grew}" + (f" ({topics_of(('grew',))})" if grew else ""))
    lines.append(f"  topics that shrank: {shrank}" + (f" ({topics_of(('shrank', 'gone'))})" if shrank else ""))
    rise = s["shares"]["detectable_rise"]
    if rise == rise:
        lines.append(
            f"  a typical topic ({s['shares']['typical_share']:.1%} of the reference) must gain at least "
            f"{rise * 100:.1f} points to count as grown at this size"
        )
    counts = matches[matches["side"] == "b"]["status_text"].value_counts()
    lines.append(
        f"  topics of {new['name']}: "
        + ", ".join(f"{n} {status}" for status, n in counts.items())
        + f" (matched by {s['matching']['method']})"
    )
    born = matches[(matches["side"] == "b") & (matches["status"] == "gone")]
    if len(born):
        lines.append("  new topics: " + ", ".join(born["label"].astype(str).head(8)))
    unclear = unclear_topics(matches)
    if len(unclear):
        lines.append(
            f"  without a clear precursor: {len(unclear)} ("
            + ", ".join(unclear["label"].astype(str).head(8))
            + (", ..." if len(unclear) > 8 else "")
            + ")"
        )
    more = result.terms[result.terms["side"] == "new"]["term"].head(10).tolist()
    less = result.terms[result.terms["side"] == "ref"]["term"].head(10).tolist()
    lines.append("  terms used more: " + (", ".join(more) or "none clearly"))
    lines.append("  terms used less: " + (", ".join(less) or "none clearly"))
    return lines
