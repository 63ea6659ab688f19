"""What changed: a corpus against a reference corpus, topics of two builds matched, topic lineage.

Three questions, one set of tools (numpy and pandas only: the app and the CLI both use it):

* :func:`compare` puts the papers of a *new* corpus on a *reference* corpus: each new paper is placed
  into the reference's topics and onto its map without refitting anything (:mod:`pipeline.model.place`:
  the map position of the incremental build; the topic most of its nearest reference papers hold,
  which keeps topic shares unbiased where the nearest topic embedding does not), each reference
  topic's share then and now gets an
  interval, the terms that tell the two apart come from :mod:`pipeline.model.logodds`, each new paper
  gets a novelty score (how far it lies from its nearest reference papers) with its closest prior
  work, and the two builds' own topics are matched (:func:`~pipeline.analysis.topic_matching.match_topics`).
* :func:`~pipeline.analysis.topic_matching.match_topics` matches the topics of any two builds (two years
  built separately, or a rebuild with other settings): matched, split, merged, new, vanished, with
  the evidence.
* :func:`~pipeline.analysis.lineage.lineage` follows the topics of one multi-year build across periods.

Its settings, its typed summary, the result's tables and where they are stored are in
:mod:`pipeline.analysis.comparison`; this module loads the builds, computes, stores and describes.

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

import time
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.analysis.comparison import (
    COMPARE_VERSION,
    CalibrationSummary,
    CompareError,
    CompareParams,
    Comparison,
    ComparisonSummary,
    MatchingSummary,
    ReferenceSummary,
    SharesSummary,
    SideSummary,
    store,
    stored,
)
from pipeline.analysis.distinctive import distinctive_terms, shared_document_frequencies
from pipeline.analysis.intervals import detectable_change, share_changes, z_quantile
from pipeline.analysis.novelty import NoveltyNull
from pipeline.analysis.side import Side
from pipeline.analysis.topic_files import read_terms_written, with_written_terms
from pipeline.analysis.topic_matching import Lookup, lookup, match_topics
from pipeline.core import artifacts, schema
from pipeline.model.label_evidence import shown_labels
from pipeline.model.place import map_position, vote_topics

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
    terms, written = read_terms_written(folder, ["term", "df"])
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
        model_key=str(manifest.embedding.model_key or ""),
        doc_ids=papers["doc_id"].astype(str).to_numpy(dtype=object),
        topics=papers["topic"].to_numpy(dtype=np.int64),
        years=pd.to_numeric(papers["year"], errors="coerce").to_numpy(dtype=float),
        embeddings=artifacts.read_array(folder, schema.EMBEDDINGS, mmap=True),
        xy=papers[["x", "y"]].to_numpy(dtype=np.float32),
        topic_table=topic_frame(with_written_terms(topics, written)),
        topic_embeddings=np.asarray(artifacts.read_array(folder, schema.TOPIC_EMBEDDINGS), dtype=np.float32),
        terms=terms,
        texts=texts,
        ngram_range=tuple((manifest.params or {}).get("represent", {}).get("ngram_range", (1, 2))),
        written=written,
    )


def topic_frame(topics: pd.DataFrame) -> pd.DataFrame:
    out = topics[["topic", "label", "size", "keywords"]].copy()
    out["topic"] = out["topic"].astype(np.int64)
    out["label"] = out["label"].astype(str)
    out["keywords"] = [list(k) if k is not None else [] for k in out["keywords"]]
    return out.reset_index(drop=True)


# ------------------------------------------------------------------------------------------
# A corpus against a reference
# ------------------------------------------------------------------------------------------


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
    # One lookup of the new papers among the reference papers they are not (a paper is not its own
    # prior work) gives the placement, the map position and the novelty.
    found = lookup(new, np.arange(new.n), ref, np.arange(ref.n), params)
    # Placement: the topic most of its nearest reference papers belong to (pipeline.model.place).
    placed_topic, placed_prob = vote_topics(
        ref.topics[found.pool][found.idx[:, : params.k]],
        found.sims[:, : params.k],
        np.sort(ref.topic_table["topic"].to_numpy()),
    )
    papers = placed_papers(new, ref, found, placed_topic, placed_prob, params)
    then, shares = topic_shares(new, ref, ref_rows, placed_topic, found.p_values, params)

    # Terms, and the two builds' own topics matched.
    df = shared_document_frequencies(
        new, ref, ref_rows, shared_rows, candidates=3 * params.top_terms, prior_mass=params.prior_mass
    )
    terms = distinctive_terms(df, new.n, len(ref_rows), top=params.top_terms, prior_mass=params.prior_mass)
    terms["term"] = [new.written.get(t) or ref.written.get(t) or t for t in terms["term"]]  # as the papers write them
    matching = match_topics(ref, new, params, b_in_a=found)
    matches = matching.topics.copy()
    matches["keywords"] = [
        list(k)[:8]
        for k in pd.concat([ref.topic_table, new.topic_table], ignore_index=True)["keywords"]
    ]  # fmt: skip

    summary = ComparisonSummary(
        version=COMPARE_VERSION,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        seconds=round(time.perf_counter() - started, 3),
        new=_side_summary(new),
        reference=ReferenceSummary(
            **vars(_side_summary(ref)), papers_used=int(len(ref_rows)), papers_shared=int(len(shared_rows))
        ),
        params=params,
        matching=MatchingSummary(method=matching.method, shared=matching.shared),
        calibration=_calibration(found.null, found.p_values, params),
        shares=_shares_summary(then, shares, len(ref_rows), new.n, params),
    )
    return Comparison(summary, papers, shares, terms, matching.flows, matches)


def placed_papers(
    new: Side, ref: Side, found: Lookup, placed_topic: np.ndarray, placed_prob: np.ndarray, params: CompareParams
) -> pd.DataFrame:
    """One row per new paper (``schema.CMP_PAPER_COLUMNS``), most novel first: its reference topic,
    its map position on the reference's map (the incremental build's: the similarity-weighted mean
    of its nearest reference papers'), novelty, p-value and closest prior work."""
    idx, sims, scores, p = found.idx, found.sims, found.scores, found.p_values
    xy = map_position(idx[:, : params.k], sims[:, : params.k], ref.xy[found.pool])
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
    return papers


def topic_shares(
    new: Side, ref: Side, ref_rows: np.ndarray, placed_topic: np.ndarray, p: np.ndarray, params: CompareParams
) -> tuple[np.ndarray, pd.DataFrame]:
    """Shares of the reference's topics, then (its own papers ``ref_rows``) and now (the new papers
    placed), with intervals (``schema.CMP_SHARE_COLUMNS``); also the counts then."""
    ref_topic_ids = ref.topic_table["topic"].to_numpy()
    ref_labels = ref.labels
    ref_topic_pos = pd.Index(ref_topic_ids).get_indexer(ref.topics[ref_rows])
    then = np.bincount(ref_topic_pos[ref_topic_pos >= 0], minlength=len(ref_topic_ids))
    now_pos = pd.Index(ref_topic_ids).get_indexer(placed_topic)
    now = np.bincount(now_pos[now_pos >= 0], minlength=len(ref_topic_ids))
    shares = share_changes(then, len(ref_rows), now, new.n, level=params.level)
    shares.insert(0, "topic", ref_topic_ids.astype(np.int64))
    shares.insert(1, "label", [ref_labels.get(int(t), f"topic {t}") for t in ref_topic_ids])
    shares["keywords"] = [list(k)[:8] for k in ref.topic_table["keywords"]]
    shares["far_new"] = np.bincount(now_pos[(now_pos >= 0) & (p < params.novel_alpha)], minlength=len(ref_topic_ids))
    return then, shares


def _side_summary(side: Side) -> SideSummary:
    years = side.years[~np.isnan(side.years)]
    return SideSummary(
        name=side.name,
        build_id=side.build_id,
        papers=int(side.n),
        topics=int(len(side.topic_table)),
        years=(int(years.min()), int(years.max())) if len(years) else None,
    )


def _calibration(null: NoveltyNull, p: np.ndarray, params: CompareParams) -> CalibrationSummary:
    return CalibrationSummary(
        null_papers=int(len(null.scores)),
        novelty_p50=null.percentile(0.5),
        novelty_p95=null.percentile(1 - params.novel_alpha),
        far_papers=int((p < params.novel_alpha).sum()),
    )


def _shares_summary(then: np.ndarray, shares: pd.DataFrame, n_ref: int, n_new: int, params: CompareParams):
    """The share changes' headline numbers: how large a rise a typical topic must show, how many moved."""
    typical = float(np.median(then / max(n_ref, 1))) if len(then) else float("nan")
    return SharesSummary(
        z=z_quantile(params.level, len(then)),
        typical_share=typical,
        detectable_rise=detectable_change(typical, n_ref, n_new, level=params.level, tests=len(then))
        if len(then)
        else float("nan"),
        grew=int((shares["verdict"] == "grew").sum()),
        shrank=int(shares["verdict"].isin(["shrank", "gone"]).sum()),
    )


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
        if existing is not None and existing.summary.params == params:
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
    new, ref = s.new, s.reference
    shares, matches, papers = result.shares, result.matches, result.papers
    far = int(papers["far"].sum())
    alpha = s.params.novel_alpha

    def topics_of(verdicts: tuple[str, ...]) -> str:
        rows = shares[shares["verdict"].isin(verdicts)].sort_values("change", key=abs, ascending=False)
        return ", ".join(
            f"{r.label} {r.change * 100:+.1f} points [{r.change_lo * 100:+.1f}, {r.change_hi * 100:+.1f}]"
            for r in rows.head(5).itertuples()
        )

    lines = [
        f"{'Compared' if computed else 'Up to date:'} {new.name!r} ({new.papers:,} papers, {new.topics} topics) "
        f"with {ref.name!r} ({ref.papers_used:,} papers"
        + (f"; {ref.papers_shared:,} shared papers left out" if ref.papers_shared else "")
        + (f") in {s.seconds:.1f} s" if computed else f"), stored {s.created_at[:16]}"),
        f"  far from all earlier work: {far:,} papers ({far / max(new.papers, 1):.1%}; a paper like the "
        f"reference's own is flagged {alpha:.0%} of the time)",
    ]
    grew, shrank = s.shares.grew, s.shares.shrank
    lines.append(f"  topics that grew: {grew}" + (f" ({topics_of(('grew',))})" if grew else ""))
    lines.append(f"  topics that shrank: {shrank}" + (f" ({topics_of(('shrank', 'gone'))})" if shrank else ""))
    rise = s.shares.detectable_rise
    if rise == rise:
        lines.append(
            f"  a typical topic ({s.shares.typical_share:.1%} of the reference) must gain at least "
            f"{rise * 100:.1f} points to count as grown at this size"
        )
    counts = matches[matches["side"] == "b"]["status_text"].value_counts()
    lines.append(
        f"  topics of {new.name}: "
        + ", ".join(f"{n} {status}" for status, n in counts.items())
        + f" (matched by {s.matching.method})"
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
