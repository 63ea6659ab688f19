"""A comparison as data: its settings, its typed summary, its tables, and where it is stored.

What :func:`pipeline.analysis.compare.compare` returns and ``python -m pipeline compare`` stores, and what the
app, the CLI's description and the offline export read: :class:`CompareParams` (the settings),
:class:`ComparisonSummary` (names, build ids, version, params, counts, calibration; saved as
``comparison.json`` with the same keys in the same order as its :meth:`~ComparisonSummary.to_dict`),
and :class:`Comparison` (the summary with its five tables, saved as one folder per pair of corpora:
``<root>/.compare/<new>/<ref>``, a link swapped atomically to its current version).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from pipeline.analysis.side import Side
from pipeline.core import artifacts, schema
from pipeline.model.logodds import DEFAULT_PRIOR_MASS

#: Bump when what a comparison computes changes: stored comparisons of another version are recomputed.
#: 2: topic labels as the app shows them (weak ones marked); 3: terms and keywords as the papers
#: write them ("LLMs", terms.parquet's ``written``).
COMPARE_VERSION = 3


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
            at random: see :func:`pipeline.analysis.novelty.novelty_null`.
        listed: closest prior papers kept per new paper.
        top_terms: distinctive terms kept on each side.
        prior_mass: total pseudo-count of the log-odds prior (:mod:`pipeline.model.logodds`).
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
# The summary (comparison.json)
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SideSummary:
    """One corpus of the comparison: its name, build, papers, topics and years (first, last) or None."""

    name: str
    build_id: str
    papers: int
    topics: int
    years: tuple[int, int] | None

    @classmethod
    def from_dict(cls, data: dict) -> SideSummary:
        return cls(**{**data, "years": _years(data["years"])})

    def to_dict(self) -> dict:
        out = asdict(self)
        out["years"] = None if self.years is None else list(self.years)
        return out


@dataclass(frozen=True)
class ReferenceSummary(SideSummary):
    """The reference, with the papers taking part (``papers_used``) and those left out because the
    new corpus holds them too (``papers_shared``: a paper is not prior work to itself)."""

    papers_used: int
    papers_shared: int


@dataclass(frozen=True)
class MatchingSummary:
    """How the two corpora's topics were matched (:class:`pipeline.analysis.topic_matching.Matching`)."""

    method: str
    shared: int


@dataclass(frozen=True)
class CalibrationSummary:
    """The novelty calibration: reference papers scored leave-one-out, their median and the
    ``1 - novel_alpha`` quantile of their scores (NaN without any), new papers flagged far."""

    null_papers: int
    novelty_p50: float
    novelty_p95: float
    far_papers: int


@dataclass(frozen=True)
class SharesSummary:
    """The share changes: the interval's z (Bonferroni over the topics), a typical topic's share of
    the reference, the rise it must show to count as grown (both NaN without topics), topics that
    grew and that shrank (or are gone)."""

    z: float
    typical_share: float
    detectable_rise: float
    grew: int
    shrank: int


@dataclass(frozen=True)
class ComparisonSummary:
    """What a comparison was computed from and its headline numbers (``comparison.json``)."""

    version: int
    created_at: str
    seconds: float
    new: SideSummary
    reference: ReferenceSummary
    params: CompareParams
    matching: MatchingSummary
    calibration: CalibrationSummary
    shares: SharesSummary

    @classmethod
    def from_dict(cls, data: dict) -> ComparisonSummary:
        """From the dict :meth:`to_dict` gives (``comparison.json`` as saved).

        Raises:
            KeyError, TypeError: a section or field is missing, or one is unknown.
        """
        return cls(
            version=data["version"],
            created_at=data["created_at"],
            seconds=data["seconds"],
            new=SideSummary.from_dict(data["new"]),
            reference=ReferenceSummary.from_dict(data["reference"]),
            params=CompareParams(**data["params"]),
            matching=MatchingSummary(**data["matching"]),
            calibration=CalibrationSummary(**data["calibration"]),
            shares=SharesSummary(**data["shares"]),
        )

    def to_dict(self) -> dict:
        """JSON-able, keys in the order ``comparison.json`` has them."""
        return {
            "version": self.version,
            "created_at": self.created_at,
            "seconds": self.seconds,
            "new": self.new.to_dict(),
            "reference": self.reference.to_dict(),
            "params": asdict(self.params),
            "matching": asdict(self.matching),
            "calibration": asdict(self.calibration),
            "shares": asdict(self.shares),
        }


def _years(value) -> tuple[int, int] | None:
    return None if value is None else (value[0], value[1])


# ------------------------------------------------------------------------------------------
# The comparison: summary and tables
# ------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    """A new corpus against a reference: plain tables and a typed summary (saved as files).

    Attributes:
        summary: names, build ids, version, params, counts, calibration (:class:`ComparisonSummary`).
        papers: one row per new paper (``schema.CMP_PAPER_COLUMNS``), most novel first.
        shares: one row per reference topic (``schema.CMP_SHARE_COLUMNS``).
        terms: distinctive terms (``schema.CMP_TERM_COLUMNS``).
        flows, matches: :class:`~pipeline.analysis.topic_matching.Matching` of the reference's topics (a)
            with the new corpus's (b).
    """

    summary: ComparisonSummary
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
        return (s.new.build_id, s.reference.build_id, s.version)

    def to_dict(self, tables: Iterable[str] | None = None) -> dict:
        """Everything as JSON-able data (for an offline export): the summary and each table's
        records (NaN as null), or only ``tables`` (names of ``TABLES``)."""
        out = {"summary": self.summary.to_dict()}
        for attr in self.TABLES if tables is None else tables:
            frame = getattr(self, attr)
            out[attr] = json.loads(frame.to_json(orient="records", force_ascii=False))
        return out

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for attr, file in self.TABLES.items():
            getattr(self, attr).to_parquet(folder / file, index=False)
        artifacts.write_json(folder / schema.COMPARISON, self.summary.to_dict())

    @classmethod
    def load(cls, folder: Path) -> Comparison:
        try:
            data = json.loads((folder / schema.COMPARISON).read_text(encoding="utf-8"))
            summary = ComparisonSummary.from_dict(data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise artifacts.ArtifactError(f"comparison in {folder} cannot be read ({exc}); recompute it.") from None
        tables = {attr: artifacts.read_table(folder, file) for attr, file in cls.TABLES.items()}
        return cls(summary=summary, **tables)


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
    link = comparison_dir(root, result.summary.new.name, result.summary.reference.name)
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
