"""Where issue 20 stands: every corpus against every criterion, from the runs already recorded.

Reads the rows that measured today's clustering and today's labels (named by their ``run``, below)
from ``benchmarks/results/topic-variants.jsonl`` and ``label-variants.jsonl`` and writes one table
into EVALUATION.md (the block ``issue20-status``), so that the status is read off the recorded
figures, not copied by hand. Nothing is clustered or labelled here; when the clustering or the
labels change, the runs that measure them are named below and the table is written again.

    .venv/bin/python benchmarks/issue20_status.py
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.markdown_block import write_block  # noqa: E402
from pipeline.core.config import ClusterParams  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
EVALUATION = ROOT / "EVALUATION.md"

#: The runs of today's clustering (CLUSTER_VERSION 11, CLEAN_VERSION 2): every corpus with seeds
#: 0-2 and 90% samples, and the labelled corpora over ten seeds beside the same-run baselines.
CLUSTER_RUN = "2026-12-05 eighteenth session: EVALUATION.md, A one-letter variable keeps its letter (CLEAN_VERSION 2; all corpora, seeds 0-2)"
AGREEMENT_RUN = (
    "2026-12-05 eighteenth session: EVALUATION.md, Agreement with the areas over ten seeds (CLEAN_VERSION 2)"
)
#: The run of today's labels (REPRESENT_VERSION 23), seeds 0-5 on the same clusterings, and the
#: seed a build uses unless told otherwise (:data:`BUILD_SEED`): what a user's first build shows.
LABEL_RUN = "A weak label names what half of its papers share (2026-12-07, thirty-second session)"
BUILD_SEED = ClusterParams().seed

#: Corpora some setting of the clustering or the labels was chosen on (EVALUATION.md names them:
#: "tuning" in its tables, the first six corpora, NeurIPS 2020 and 2021 where the generic phrases
#: were found and corrected, and NeurIPS 2018 where their weak labels were); the others were only
#: measured.
TUNED = {
    "icml2024", "iclr2022", "ijcai", "ijcai-fine", "neurips-kw", "ijcai2021", "ijcai2024",
    "neurips2017", "neurips2019", "neurips2022", "iclr2019", "neurips2020", "neurips2021", "neurips2018",
}  # fmt: skip
#: Corpora no setting was chosen on whose papers are partly those of one that was: the IJCAI years
#: (all in "ijcai"), NeurIPS 2023 (some in "neurips-kw") and NeurIPS 1987-2023 (every NeurIPS year).
OVERLAP = {"ijcai2020", "ijcai2022", "ijcai2023", "neurips2023", "neurips-all"}
NAMES = {
    "icml2024": "ICML 2024",
    "ijcai": "IJCAI 2020-2024, 16 areas",
    "ijcai-fine": "IJCAI, 20 author subareas",
    "neurips-kw": "NeurIPS 2022-23, 20 keyword subfields",
    "neurips-all": "NeurIPS 1987-2023",
}

COVERAGE, RETRIEVAL, STABILITY = 0.60, 0.90, 0.80
BUILT = f"label coverage >= 0.60 with the build's seed ({BUILD_SEED})"


def name(corpus: str) -> str:
    """A corpus's name as the tables print it ("neurips2023" -> "NeurIPS 2023")."""
    if corpus in NAMES:
        return NAMES[corpus]
    for key, shown in (("neurips", "NeurIPS"), ("iclr", "ICLR"), ("ijcai", "IJCAI")):
        if corpus.startswith(key):
            return f"{shown} {corpus[len(key) :]}"
    return corpus


def rows(path: Path, run: str) -> list[dict]:
    """The rows of one run."""
    with open(path, encoding="utf-8") as fh:
        found = [r for r in map(json.loads, fh) if r.get("run") == run]
    if not found:
        raise SystemExit(f"{path}: no rows of the run {run!r}")
    return found


def status() -> list[dict]:
    """Per corpus: its label figures (mean over seeds 0-5), its clustering figures (seeds 0-2),
    and where it has labels its agreement and the best same-run baseline's (ten seeds)."""
    by_stage = defaultdict(lambda: defaultdict(list))
    for r in rows(RESULTS / "label-variants.jsonl", LABEL_RUN):
        if r["variant"] == "base":
            by_stage[r["corpus"]][r.get("stage")].append(r)
    # seeds 0-5 of the product's labels, and the build's own seed apart
    labels = {c: [r for r in stages["final"] if r["seed"] != BUILD_SEED] for c, stages in by_stage.items()}
    built = {c: [r for r in stages["final"] if r["seed"] == BUILD_SEED] for c, stages in by_stage.items()}
    cluster = {r["corpus"]: r for r in rows(RESULTS / "topic-variants.jsonl", CLUSTER_RUN) if r["kind"] == "summary"}
    agreement: dict[str, dict] = {}
    baseline = defaultdict(lambda: defaultdict(list))
    for r in rows(RESULTS / "topic-variants.jsonl", AGREEMENT_RUN):
        if r["kind"] == "summary":
            agreement[r["corpus"]] = r
        elif r["kind"] == "baseline":
            baseline[r["corpus"]][r["variant"]].append(r)
    table = []
    for corpus in sorted(labels, key=lambda c: (labels[c][0]["n"], c)):
        runs = labels[corpus]
        row = {
            "corpus": corpus,
            "n": runs[0]["n"],
            "seeds": len(runs),
            "tuned": "yes" if corpus in TUNED else "its papers" if corpus in OVERLAP else "no",
            **{k: statistics.mean(r[k] for r in runs) for k in ("cov", "low_large", "contained", "retrieval", "weak")},
        }
        if built[corpus]:
            row["build_cov"] = built[corpus][0]["cov"]
        if corpus in cluster:
            c = cluster[corpus]
            row |= {k: c[k] for k in ("stability", "resampled_stability", "largest", "over12_incoherent")}
        if corpus in agreement:
            best = {
                m: max(statistics.mean(r[m] for r in rs) for rs in baseline[corpus].values()) for m in ("nmi", "ari")
            }
            row |= {"nmi": agreement[corpus]["nmi"], "ari": agreement[corpus]["ari"]}
            row |= {"best_nmi": best["nmi"], "best_ari": best["ari"]}
        table.append(row)
    return table


def _mark(text: str, missed: bool) -> str:
    return f"**{text}**" if missed else text


def criteria(row: dict) -> dict[str, bool | None]:
    """Each criterion of issue 20 for one corpus: True met, False missed, None not measured."""
    has_cluster = "stability" in row
    return {
        "label coverage >= 0.60": row["cov"] >= COVERAGE,
        BUILT: (row["build_cov"] >= COVERAGE if "build_cov" in row else None),
        "no label contained in another": row["contained"] == 0,
        "labels retrieve their topic >= 0.90": row["retrieval"] >= RETRIEVAL,
        "no topic above 12% looser than the median": row["over12_incoherent"] == 0 if has_cluster else None,
        "NMI and ARI at or above the best baseline": (
            row["nmi"] >= row["best_nmi"] and row["ari"] >= row["best_ari"] if "nmi" in row else None
        ),
        "stability across seeds >= 0.80": row["stability"] >= STABILITY if has_cluster else None,
        "stability on 90% samples >= 0.80": row["resampled_stability"] >= STABILITY if has_cluster else None,
    }


def render(table: list[dict]) -> str:
    """The block: how it was made, the table (a missed criterion in bold), and each criterion's count."""
    lines = [
        "Written by `benchmarks/issue20_status.py` from the recorded runs of today's clustering and labels",
        f"(`run` in `benchmarks/results/`): labels {LABEL_RUN!r}, seeds 0-5 (mean) and the seed a",
        f"build uses unless told otherwise ({BUILD_SEED}: the labels a user's first build shows),",
        "labelled as the build labels them (since this run: KeyBERTInspired and MMR terms among the",
        "candidates) on the product's clusterings of the embeddings its machine",
        "computed (a fresh machine embeds the corpora anew, and its vectors can differ slightly,",
        "so the topics the labels' run named can differ in detail from the clustering run's);",
        f"clustering {CLUSTER_RUN!r}, seeds 0-2;",
        f"agreement {AGREEMENT_RUN!r}, seeds 0-9, beside the best same-run baseline (k-means at",
        "the number of labels or at ours, vanilla BERTopic + `reduce_outliers`). *Tuned*: some setting",
        'was chosen on that corpus ("its papers": on a corpus holding some of its papers); the others',
        "were only measured (held out). A bold figure misses its target;",
        '"-": not measured with today\'s clustering. Every topic of 5% or more below 0.5 coverage is',
        "marked weak in the app and the export (its support is the lower bound of the same share).",
        "",
        f"| corpus | papers | tuned | label coverage (≥ 0.60) | with seed {BUILD_SEED} | weak labels, per seed | "
        "of them ≥ 5% of the papers | contained labels | retrieval (≥ 0.90) | largest topic | above 12% and looser "
        "than the median, per seed | NMI / ARI (best baseline) | stability across seeds (≥ 0.80) | on 90% "
        "samples (≥ 0.80) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    for row in table:
        met = criteria(row)
        cells = [
            name(row["corpus"]),
            f"{row['n']:,}",
            row["tuned"],
            _mark(f"{row['cov']:.3f}", not met["label coverage >= 0.60"]),
            _mark(f"{row['build_cov']:.3f}", met[BUILT] is False) if "build_cov" in row else "-",
            f"{row['weak']:.1f}",
            f"{row['low_large']:.1f}",
            _mark(f"{row['contained']:.1f}", not met["no label contained in another"]),
            _mark(f"{row['retrieval']:.3f}", not met["labels retrieve their topic >= 0.90"]),
        ]
        if "stability" in row:
            cells += [
                f"{row['largest']:.1%}",
                _mark(f"{row['over12_incoherent']:.1f}", not met["no topic above 12% looser than the median"]),
            ]
        else:
            cells += ["-", "-"]
        if "nmi" in row:
            text = f"{row['nmi']:.3f} / {row['ari']:.3f} ({row['best_nmi']:.3f} / {row['best_ari']:.3f})"
            cells.append(_mark(text, not met["NMI and ARI at or above the best baseline"]))
        else:
            cells.append("no labels")
        if "stability" in row:
            cells += [
                _mark(f"{row['stability']:.3f}", not met["stability across seeds >= 0.80"]),
                _mark(f"{row['resampled_stability']:.3f}", not met["stability on 90% samples >= 0.80"]),
            ]
        else:
            cells += ["-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Each criterion, on the corpora measured (and on those held out):", ""]
    verdicts = [criteria(r) for r in table]
    for criterion in verdicts[0]:
        measured = [(r, met[criterion]) for r, met in zip(table, verdicts, strict=True) if met[criterion] is not None]
        held = [(r, ok) for r, ok in measured if r["tuned"] == "no"]
        missed = [name(r["corpus"]) for r, ok in measured if not ok]
        lines.append(
            f"* {criterion}: met on {sum(ok for _, ok in measured)} of {len(measured)}"
            + (f" ({sum(ok for _, ok in held)} of {len(held)} held out)" if held else " (none held out)")
            + (f"; missed on {', '.join(missed)}" if missed else "")
        )
    return "\n".join(lines)


def main() -> None:
    block = render(status())
    write_block("issue20-status", "Where issue 20 stands", block, path=EVALUATION)
    print(block)


if __name__ == "__main__":
    main()
