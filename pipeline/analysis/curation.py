"""The user's edits to a corpus's topics: rename a topic, merge topics, move a paper.

Edits live in a small JSON file beside the artifacts (``<artifacts>/<name>.curation.json``), are
applied whenever the corpus is loaded (the app, exports), can be undone, and survive a rebuild: an
edit names topics by their content (member papers and keywords) as well as their id, and is matched
to the rebuilt topics by overlap of members, so a refit that renumbers topics keeps the edits.

Everything here is pure pandas/JSON; the app calls :func:`apply_edits` on its cached tables.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.core import artifacts
from pipeline.model.label_words import one_form_each
from pipeline.model.topic_parts import without_stale_parts

VERSION = 1
#: A topic reference matches a rebuilt topic when this share of members overlap (Jaccard).
MIN_MEMBER_OVERLAP = 0.4
#: ... or, failing that, when this share of its top keywords are shared.
MIN_KEYWORD_OVERLAP = 0.6


class CurationError(Exception):
    """An edit cannot be made (unknown topic or paper, read-only corpus); the message says why."""


def curation_path(root: Path, name: str) -> Path:
    return Path(root) / f"{artifacts.check_name(name)}.curation.json"


def topic_ref(topics: pd.DataFrame, papers: pd.DataFrame, topic: int) -> dict:
    """A reference to a topic by id *and* content, so it can be found again after a rebuild."""
    row = topics.loc[topics["topic"] == topic]
    if row.empty:
        raise CurationError(f"there is no topic {topic} in this corpus.")
    return {
        "id": int(topic),
        "label": str(row["label"].iloc[0]),
        "keywords": [str(k) for k in list(row["keywords"].iloc[0])[:10]],
        "members": sorted(papers.loc[papers["topic"] == topic, "doc_id"].astype(str).tolist()),
    }


def resolve(ref: dict, topics: pd.DataFrame, papers: pd.DataFrame) -> int | None:
    """The current topic a reference means, or None when no topic is similar enough."""
    members = set(ref.get("members", []))
    by_topic = papers.groupby("topic")["doc_id"].agg(lambda s: set(s.astype(str)))
    if members:
        best, best_score = None, 0.0
        for topic, docs in by_topic.items():
            score = len(members & docs) / len(members | docs)
            if score > best_score or (score == best_score and topic == ref.get("id")):
                best, best_score = int(topic), score
        if best is not None and best_score >= MIN_MEMBER_OVERLAP:
            return best
    keywords = {str(k).lower() for k in ref.get("keywords", [])}  # as written by the build, or before it wrote them so
    if keywords:
        scores = topics["keywords"].map(lambda k: len(keywords & {str(w).lower() for w in k}) / len(keywords))
        if len(scores) and scores.max() >= MIN_KEYWORD_OVERLAP:
            return int(topics.loc[scores.idxmax(), "topic"])
    return None


@dataclass
class Curation:
    """The edit log of one corpus (``edits`` in order; undo pops the last)."""

    edits: list[dict] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Curation:
        """Read the edit file; a missing file means no edits, a damaged one is an error."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            raise CurationError(f"{path} is damaged ({exc}); fix or delete it to drop the edits.") from None
        return cls.parse(text, str(path))

    @classmethod
    def parse(cls, text: str, source: str = "the curation file") -> Curation:
        """The edits in a curation file's text; ``source`` names it in errors."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CurationError(f"{source} is damaged ({exc}); fix or delete it to drop the edits.") from None
        if not isinstance(data, dict) or not isinstance(data.get("edits"), list):
            raise CurationError(f"{source} is not a curation file (no 'edits' list).")
        return cls(edits=[e for e in data["edits"] if isinstance(e, dict) and "op" in e])

    def save(self, path: Path) -> None:
        artifacts.write_json(Path(path), {"version": VERSION, "edits": self.edits})

    def rename(self, topics, papers, topic: int, label: str) -> dict:
        label = " ".join(str(label).split())[:80]
        if not label:
            raise CurationError("a topic label cannot be empty.")
        return self._add({"op": "rename", "topic": topic_ref(topics, papers, topic), "label": label})

    def merge(self, topics, papers, topic_ids: list[int]) -> dict:
        ids = list(dict.fromkeys(int(t) for t in topic_ids))
        if len(ids) < 2:
            raise CurationError("choose at least two topics to merge.")
        return self._add({"op": "merge", "topics": [topic_ref(topics, papers, t) for t in ids]})

    def move(self, topics, papers, doc_id: str, topic: int) -> dict:
        if not (papers["doc_id"] == doc_id).any():
            raise CurationError(f"there is no paper {doc_id!r} in this corpus.")
        return self._add({"op": "move", "doc_id": str(doc_id), "to": topic_ref(topics, papers, topic)})

    def undo(self) -> dict | None:
        return self.edits.pop() if self.edits else None

    def _add(self, edit: dict) -> dict:
        edit["at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.edits.append(edit)
        return edit


@dataclass(frozen=True)
class Applied:
    """Tables with the edits applied, and the edits that no longer match anything."""

    papers: pd.DataFrame
    topics: pd.DataFrame
    skipped: list[dict]


def apply_edits(papers: pd.DataFrame, topics: pd.DataFrame, edits: list[dict]) -> Applied:
    """Apply edits in order to copies of the papers and topics tables.

    Adds ``topics.curated`` (True for renamed or merged topics) and ``papers.moved`` (True for
    papers moved by hand). Sizes, shares and label positions follow the edited assignments.
    """
    papers = papers.copy()
    topics = topics.copy()
    before = papers["topic"].to_numpy().copy()
    papers["moved"] = False
    topics["curated"] = False
    skipped: list[dict] = []
    for edit in edits:
        op = edit.get("op")
        if op == "rename":
            t = resolve(edit["topic"], topics, papers)
            if t is None:
                skipped.append(edit)
                continue
            topics.loc[topics["topic"] == t, ["label", "curated"]] = [edit["label"], True]
        elif op == "merge":
            targets = [resolve(r, topics, papers) for r in edit["topics"]]
            targets = list(dict.fromkeys(t for t in targets if t is not None))
            if len(targets) < 2:
                skipped.append(edit)
                continue
            papers, topics = _merge(papers, topics, targets)
        elif op == "move":
            t = resolve(edit["to"], topics, papers)
            mask = papers["doc_id"] == edit.get("doc_id")
            if t is None or not mask.any():
                skipped.append(edit)
                continue
            papers.loc[mask, ["topic", "moved"]] = [t, True]
        else:
            skipped.append(edit)
    after = papers["topic"].to_numpy()
    changed = before != after  # a topic that lost or took papers by hand loses its parts
    topics = without_stale_parts(_recount(papers, topics), touched=set(before[changed]) | set(after[changed]))
    return Applied(papers, topics, skipped)


def _merge(papers: pd.DataFrame, topics: pd.DataFrame, targets: list[int]):
    sizes = papers["topic"].value_counts()
    keep = max(targets, key=lambda t: (sizes.get(t, 0), -t))
    others = [t for t in targets if t != keep]
    papers.loc[papers["topic"].isin(others), "topic"] = keep
    rows = topics[topics["topic"].isin(targets)]
    # Keywords of the merged topic: each term's best weight across the merged topics.
    weights: dict[str, float] = {}
    behind: dict[str, str] = {}  # keyword -> its term (keyword_terms; absent in builds before it)
    has_terms = "keyword_terms" in rows
    terms = rows["keyword_terms"] if has_terms else rows["keywords"]
    for kws, ws, ts in zip(rows["keywords"], rows["keyword_weights"], terms, strict=False):
        for k, w, t in zip(kws, ws, ts, strict=False):
            if float(w) > weights.get(k, -1.0):
                weights[k], behind[k] = float(w), str(t)
    ranked = sorted(weights, key=lambda k: -weights[k])
    ranked = [ranked[i] for i in one_form_each(ranked, 10)]  # one form of each, as the build keeps them
    idx = topics.index[topics["topic"] == keep][0]
    topics.at[idx, "keywords"] = ranked
    topics.at[idx, "keyword_weights"] = [weights[k] for k in ranked]
    if has_terms:
        topics.at[idx, "keyword_terms"] = [behind[k] for k in ranked]
    topics.at[idx, "n_reassigned"] = int(rows["n_reassigned"].sum())
    topics.at[idx, "curated"] = True
    for col in ("coherence", "growth", "stability", "spread"):  # measured on the unmerged topics: now unknown
        if col in topics:
            topics[col] = topics[col].astype(float)
            topics.at[idx, col] = np.nan
    topics = topics[~topics["topic"].isin(others)].reset_index(drop=True)
    return papers, topics


def _recount(papers: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    counts = papers["topic"].value_counts()
    topics["size"] = topics["topic"].map(counts).fillna(0).astype(int)
    topics["share"] = topics["size"] / max(len(papers), 1)
    centres = papers.groupby("topic")[["x", "y"]].median()
    has = topics["topic"].isin(centres.index)
    topics.loc[has, "x"] = topics.loc[has, "topic"].map(centres["x"]).astype(np.float64)
    topics.loc[has, "y"] = topics.loc[has, "topic"].map(centres["y"]).astype(np.float64)
    return topics


def topic_targets(
    old_ids: np.ndarray, new_ids: np.ndarray, old_topic: np.ndarray, new_topic: np.ndarray, moved: np.ndarray
) -> dict[int, int]:
    """Where each stored topic went after the edits: itself, or the topic most of its papers (not
    moved by hand) are in now, the one it was merged into. Topics that went nowhere are left out.

    Args:
        old_ids: int ``(k_old,)`` the stored topics; new_ids: int ``(k_new,)`` those after the edits.
        old_topic, new_topic: int ``(n,)`` each paper's topic before and after the edits.
        moved: bool ``(n,)`` papers moved by hand (they say nothing about a merge).
    """
    kept = set(np.asarray(new_ids).tolist())
    target: dict[int, int] = {}
    for t in np.asarray(old_ids).tolist():
        sel = (old_topic == t) & ~moved
        if t in kept:
            target[t] = t
        elif sel.any():
            target[t] = int(pd.Series(new_topic[sel]).mode().iat[0])
    return target


def fold_matrix(target: dict[int, int], old_ids: np.ndarray, new_ids: np.ndarray) -> np.ndarray:
    """float32 ``(k_old, k_new)``: 1 where stored topic ``old_ids[i]`` went to ``new_ids[j]``
    (``topic_targets``); a row of zeros for a topic that went nowhere."""
    new_pos = {int(t): j for j, t in enumerate(np.asarray(new_ids).tolist())}
    fold = np.zeros((len(old_ids), len(new_ids)), dtype=np.float32)
    for i, t in enumerate(np.asarray(old_ids).tolist()):
        if target.get(t) in new_pos:
            fold[i, new_pos[target[t]]] = 1.0
    return fold


def folded_embeddings(fold: np.ndarray, sizes: np.ndarray, topic_embeddings: np.ndarray) -> np.ndarray:
    """Topic embeddings after merges: each the size-weighted mean of the stored topics folded into
    it (``fold_matrix``), normalised. float32 ``(k_new, dim)`` from sizes ``(k_old,)`` and float32
    ``(k_old, dim)``."""
    emb = (fold * np.asarray(sizes, dtype=np.float32)[:, None]).T @ np.asarray(topic_embeddings, dtype=np.float32)
    emb /= np.clip(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12, None)
    return emb.astype(np.float32)
