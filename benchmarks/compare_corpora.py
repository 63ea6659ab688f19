"""Real corpora for comparisons, and the evaluation of what the comparison claims.

Not part of the test run. Three steps:

    .venv/bin/python benchmarks/compare_corpora.py split              # year splits of the shared corpora
    .venv/bin/python benchmarks/compare_corpora.py build --artifacts X # build them (cached embeddings)
    .venv/bin/python benchmarks/compare_corpora.py evaluate --artifacts X --write  # EVALUATION.md, BENCHMARKS.md

``split`` writes NeurIPS 1987-2022 / 2023 and ICLR 2018-2021 / 2022 as JSON Lines under
``benchmarks/output/compare/``. ``build`` builds those and the whole NeurIPS 1987-2023 corpus into
``X`` (copy the embedding store there first so that nothing is embedded: README, "Comparing
corpora"). ``evaluate`` measures, on the built corpora:

* novelty with a known answer: one topic's papers and a random control sample are taken out of the
  reference; the held-out topic's papers must rank as the most novel (AUC, precision at the number
  held out), and the controls must be flagged "far" no more often than ``novel_alpha``;
* placement: a random fifth of a corpus is placed into the topics of the rest; how often it lands
  in its own topic, and how many topics the share intervals call changed (none changed: the
  sample is random);
* the comparisons of NeurIPS 2023 with 1987-2022 and ICLR 2022 with 2018-2021 (timings, counts).

Results go to ``benchmarks/output/compare/evaluation.json`` and, with ``--write``, into
EVALUATION.md between the ``compare-eval`` markers.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "output" / "compare"
DATA = Path(os.environ.get("SHARED_DATA", ROOT.parent / "shared" / "data"))
if not DATA.exists():
    DATA = ROOT.parent.parent / "shared" / "data"  # from a worktree under wt/
sys.path.insert(0, str(ROOT))

SPLITS = {
    "neurips-1987-2022": ("neurips-1987-2023.jsonl.gz", lambda y: y <= 2022),
    "neurips-2023": ("neurips-1987-2023.jsonl.gz", lambda y: y == 2023),
    "iclr-2018-2021": ("iclr-2018-2022-submissions.jsonl.gz", lambda y: y <= 2021),
    "iclr-2022": ("iclr-2018-2022-submissions.jsonl.gz", lambda y: y == 2022),
}


def split() -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, (source, keep) in SPLITS.items():
        path = OUT / f"{name}.jsonl"
        with gzip.open(DATA / source, "rt", encoding="utf-8") as handle:
            rows = [line for line in handle if keep(int(json.loads(line)["year"]))]
        path.write_text("".join(rows), encoding="utf-8")
        out[name] = path
        print(f"{name}: {len(rows):,} papers -> {path}")
    return out


def build_all(artifacts: Path) -> None:
    inputs = {name: OUT / f"{name}.jsonl" for name in SPLITS}
    inputs["neurips-1987-2023"] = DATA / "neurips-1987-2023.jsonl.gz"
    for name, path in inputs.items():
        started = time.perf_counter()
        cmd = [sys.executable, "-m", "pipeline", "--artifacts", str(artifacts), "build", str(path), "--name", name,
               "--quiet"]  # fmt: skip
        subprocess.run(cmd, cwd=ROOT, check=True)
        print(f"built {name} in {time.perf_counter() - started:.0f} s")
    subprocess.run(
        [sys.executable, "-m", "pipeline", "--artifacts", str(artifacts), "build", "--quiet"], cwd=ROOT, check=True
    )


# ------------------------------------------------------------------------------------------
# Evaluation
# ------------------------------------------------------------------------------------------


def held_out_topics(side, *, n_topics: int, control: int, hold: int, seed: int, ks=(1, 3, 5, 10)) -> list[dict]:
    """For ``n_topics`` topics (spread over sizes): take the topic and ``control`` random other papers
    out of the reference, score both against the rest, and measure how well the topic ranks first."""
    from sklearn.metrics import roc_auc_score

    from pipeline.analysis.novelty import neighbours, novelty_null, novelty_scores

    rng = np.random.default_rng(seed)
    sizes = side.topic_table.set_index("topic")["size"]
    eligible = sizes[sizes >= 20].sort_values(kind="stable")
    picks = eligible.index[np.linspace(0, len(eligible) - 1, min(n_topics, len(eligible))).round().astype(int)]
    rows = []
    for topic in dict.fromkeys(int(t) for t in picks):
        in_topic = np.flatnonzero(side.topics == topic)
        held = np.sort(rng.choice(in_topic, size=min(hold, len(in_topic)), replace=False))
        others = np.flatnonzero(side.topics != topic)
        ctrl = np.sort(rng.choice(others, size=min(control, len(others) // 5), replace=False))
        ref = np.setdiff1d(others, ctrl)
        corpus = np.asarray(side.embeddings[ref], dtype=np.float32)
        queries = np.asarray(side.embeddings[np.concatenate([held, ctrl])], dtype=np.float32)
        truth = np.r_[np.ones(len(held)), np.zeros(len(ctrl))]
        _, sims = neighbours(queries, corpus, max(ks))
        row = {"topic": topic, "label": side.labels[topic], "topic_size": int(len(in_topic)), "held": len(held),
               "control": len(ctrl)}  # fmt: skip
        for k in ks:
            score = novelty_scores(sims, k)
            order = np.lexsort((np.arange(len(score)), -score))
            row[f"auc_k{k}"] = float(roc_auc_score(truth, score))
            row[f"prec_k{k}"] = float(truth[order[: len(held)]].mean())
            null = novelty_null(corpus, k, sample=2000, seed=seed)
            far = null.p_values(score) < 0.05
            row[f"far_held_k{k}"] = float(far[: len(held)].mean())
            row[f"far_ctrl_k{k}"] = float(far[len(held) :].mean())
        rows.append(row)
    return rows


def placement(side, *, fraction: float, seed: int, k: int = 10) -> dict:
    """Place a random ``fraction`` of a corpus into the topics of the rest; compare with its own topics."""
    from pipeline.analysis.comparison import CompareParams
    from pipeline.analysis.intervals import share_changes
    from pipeline.analysis.novelty import neighbours
    from pipeline.model.place import topic_distribution

    rng = np.random.default_rng(seed)
    n = side.n
    sample = np.sort(rng.choice(n, size=int(n * fraction), replace=False))
    rest = np.setdiff1d(np.arange(n), sample)
    ids = side.topic_table["topic"].to_numpy()
    emb = np.asarray(side.embeddings, dtype=np.float32)
    truth = side.topics[sample]
    by_topic = ids[np.argmax(topic_distribution(emb[sample], side.topic_embeddings), axis=1)]
    idx, _ = neighbours(emb[sample], emb[rest], k)
    votes = side.topics[rest][idx]
    by_votes = np.array([np.bincount(np.searchsorted(ids, v), minlength=len(ids)).argmax() for v in votes])
    by_votes = ids[by_votes]
    out = {"papers": int(n), "placed": int(len(sample)), "topics": int(len(ids))}
    for name, placed in (("topic embedding", by_topic), ("neighbour vote", by_votes)):
        then = np.bincount(np.searchsorted(ids, side.topics[rest]), minlength=len(ids))
        now = np.bincount(np.searchsorted(ids, placed), minlength=len(ids))
        own = np.bincount(np.searchsorted(ids, truth), minlength=len(ids))
        changes = share_changes(then, len(rest), now, len(sample), level=CompareParams().level)
        truth_changes = share_changes(then, len(rest), own, len(sample), level=CompareParams().level)
        out[name] = {
            "accuracy": float((placed == truth).mean()),
            "max_share_error_points": float(np.abs(now - own).max() / len(sample) * 100),
            "topics_called_changed": int((changes["verdict"] != "no clear change").sum()),
            "topics_called_changed_with_own_topics": int((truth_changes["verdict"] != "no clear change").sum()),
        }
    return out


def evaluate(artifacts: Path, write: bool) -> dict:
    from pipeline.analysis.compare import compare_builds, load_side

    results: dict = {"measured": time.strftime("%Y-%m-%d %H:%M"), "held_out": {}, "placement": {}, "comparisons": {}}
    for name in ("neurips-1987-2023", "iclr-2018-2021"):
        side = load_side(artifacts, name)
        started = time.perf_counter()
        results["held_out"][name] = held_out_topics(side, n_topics=8, control=300, hold=150, seed=0)
        results["placement"][name] = placement(side, fraction=0.2, seed=0)
        print(f"{name}: evaluated in {time.perf_counter() - started:.0f} s", flush=True)
    for new, ref in (
        ("neurips-2023", "neurips-1987-2022"),
        ("iclr-2022", "iclr-2018-2021"),
        ("neurips2026", "neurips-1987-2023"),
    ):
        started = time.perf_counter()
        result, _ = compare_builds(artifacts, new, ref, force=True)
        s = result.summary
        results["comparisons"][f"{new} vs {ref}"] = {
            "seconds": round(time.perf_counter() - started, 2),
            "new_papers": s.new.papers,
            "reference_papers": s.reference.papers_used,
            "far_papers": s.calibration.far_papers,
            "grew": s.shares.grew,
            "shrank": s.shares.shrank,
            "detectable_rise_points": round(100 * s.shares.detectable_rise, 2),
            "statuses_new": result.matches[result.matches["side"] == "b"]["status_text"].value_counts().to_dict(),
            "statuses_ref": result.matches[result.matches["side"] == "a"]["status_text"].value_counts().to_dict(),
        }
        print(f"{new} vs {ref}: {results['comparisons'][f'{new} vs {ref}']}", flush=True)
    from pipeline.analysis.lineage import default_periods, lineage

    side = load_side(artifacts, "neurips-1987-2023")
    periods = default_periods(side.years)
    started = time.perf_counter()
    lin = lineage(side.years, side.topics, side.embeddings, periods)
    results["lineage"] = {
        "corpus": "neurips-1987-2023",
        "papers": int(side.n),
        "periods": periods,
        "seconds": round(time.perf_counter() - started, 2),
        "grew": [side.labels[int(t)] for t in lin.changes[lin.changes["verdict"] == "grew"]["topic"]],
        "shrank": [side.labels[int(t)] for t in lin.changes[lin.changes["verdict"].isin(["shrank", "gone"])]["topic"]],
    }
    print(f"lineage: {results['lineage']}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "evaluation.json").write_text(json.dumps(results, indent=2) + "\n")
    if write:
        _write_markdown(results)
    return results


def _write_markdown(results: dict) -> None:
    lines = [f"Measured {results['measured']} with `python benchmarks/compare_corpora.py evaluate`.", ""]
    lines += ["| reference | held-out topic | papers | AUC (k=1 / 3 / 5 / 10) | precision at n held (k=5) | "
              "held out flagged far (k=5) | controls flagged far (k=5) |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, rows in results["held_out"].items():
        for r in rows:
            aucs = " / ".join(f"{r[f'auc_k{k}']:.3f}" for k in (1, 3, 5, 10))
            lines.append(
                f"| {name} | {r['label']} | {r['held']} of {r['topic_size']} | {aucs} | {r['prec_k5']:.2f} | "
                f"{r['far_held_k5']:.0%} | {r['far_ctrl_k5']:.1%} |"
            )
        frame = pd.DataFrame(rows)
        means = " / ".join(f"{frame[f'auc_k{k}'].mean():.3f}" for k in (1, 3, 5, 10))
        lines.append(
            f"| {name} | **mean of {len(rows)}** | | **{means}** | **{frame['prec_k5'].mean():.2f}** | "
            f"**{frame['far_held_k5'].mean():.0%}** | **{frame['far_ctrl_k5'].mean():.1%}** |"
        )
    lines += ["", "| corpus | placed (random fifth) | rule | in its own topic | largest share error | "
              "topics called changed (placed / own topics) |", "|---|---|---|---|---|---|"]  # fmt: skip
    for name, p in results["placement"].items():
        for rule in ("topic embedding", "neighbour vote"):
            r = p[rule]
            lines.append(
                f"| {name} | {p['placed']:,} of {p['papers']:,} | {rule} | {r['accuracy']:.1%} | "
                f"{r['max_share_error_points']:.1f} points | {r['topics_called_changed']} / "
                f"{r['topics_called_changed_with_own_topics']} of {p['topics']} |"
            )
    lines += ["", "| comparison | papers (new / reference) | seconds | far from the reference | grew / shrank | "
              "smallest detectable rise | new corpus's topics | reference topics |", "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, c in results["comparisons"].items():
        fmt = lambda d: ", ".join(f"{k} {v}" for k, v in sorted(d.items()))  # noqa: E731
        lines.append(
            f"| {name} | {c['new_papers']:,} / {c['reference_papers']:,} | {c['seconds']} | {c['far_papers']:,} | "
            f"{c['grew']} / {c['shrank']} | {c['detectable_rise_points']} points | {fmt(c['statuses_new'])} | "
            f"{fmt(c['statuses_ref'])} |"
        )
    block = "\n".join(lines)
    _replace(ROOT / "EVALUATION.md", "compare-eval", block)
    bench = [
        f"Measured {results['measured']} on {platform.machine()}, {os.cpu_count()} cores, with "
        "`python benchmarks/compare_corpora.py evaluate` (the computation the app runs once per pair of builds and "
        "caches; the machine was shared with other work: re-measure on a quiet one).",
        "",
        "| comparison | papers (new / reference) | seconds |",
        "|---|---|---|",
    ]
    bench += [
        f"| {name} | {c['new_papers']:,} / {c['reference_papers']:,} | {c['seconds']} |"
        for name, c in results["comparisons"].items()
    ]
    lin = results["lineage"]
    bench.append(
        f"| lineage of {lin['corpus']}, {len(lin['periods'])} periods | {lin['papers']:,} | {lin['seconds']} |"
    )
    _replace(ROOT / "BENCHMARKS.md", "compare-bench", "\n".join(bench))


def _replace(path: Path, marker: str, block: str) -> None:
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(start, 1)
    path.write_text(head + start + "\n" + block + "\n" + end + rest.split(end, 1)[1], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=["split", "build", "evaluate", "render"])
    parser.add_argument("--artifacts", type=Path, default=OUT / "artifacts")
    parser.add_argument("--write", action="store_true", help="write the figures into EVALUATION.md")
    args = parser.parse_args()
    if args.step == "split":
        split()
    elif args.step == "build":
        build_all(args.artifacts)
    elif args.step == "render":  # the last evaluation's figures into the docs again
        _write_markdown(json.loads((OUT / "evaluation.json").read_text()))
    else:
        evaluate(args.artifacts, args.write)


if __name__ == "__main__":
    main()
