"""Check that a change to the representation stage leaves topics, keywords and labels as they were.

Builds the bundled corpus (``assets/neurips2026``, the real packaged model) and the test fixture
corpus (``tests/fixtures/small_corpus.jsonl``, the hashing test encoder) with this checkout's code
and with the code of ``--baseline`` (``pipeline/`` and ``assets/`` extracted with ``git archive``),
each in a fresh process, and compares every paper's topic and the topic tables: labels, names,
keywords and their weights, KeyBERT and MMR words, representative papers, the relevance terms and
the hierarchy. Exact equality, no tolerance.

    .venv/bin/python benchmarks/check_represent_identity.py --baseline 4c179b5

Exit status 0 when identical, 1 with the differences listed otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from pipeline.core import artifacts, schema  # noqa: E402

_BUILD = """
import sys
from pathlib import Path
from pipeline.build.build import build
from pipeline.core.config import BuildConfig
from pipeline.embed.encoders import HashingEncoder
root, kind = Path(sys.argv[1]), sys.argv[2]
if kind == "bundled":
    build(sorted(Path(sys.argv[3]).glob("*.txt")), "neurips2026", root, BuildConfig())
else:
    build([Path(sys.argv[3])], "small", root, BuildConfig(), encoder=HashingEncoder())
"""

CORPORA = {
    "bundled": ("neurips2026", ROOT / "assets" / "neurips2026"),
    "fixture": ("small", ROOT / "tests" / "fixtures" / "small_corpus.jsonl"),
}
TOPIC_COLUMNS = [
    "topic", "label", "name", "size", "keywords", "keyword_weights", "keybert", "mmr",
    "representative_doc_ids", "label_support",
]  # fmt: skip


def baseline_tree(ref: str, dest: Path) -> Path:
    """``pipeline/`` and ``assets/`` of git ref ``ref``, extracted into ``dest``."""
    archive = subprocess.run(["git", "archive", ref, "pipeline", "assets"], cwd=ROOT, capture_output=True, check=True)
    with tempfile.TemporaryFile() as handle:
        handle.write(archive.stdout)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(dest, filter="data")
    return dest


def build(code_root: Path, out: Path, kind: str) -> Path:
    """Build corpus ``kind`` with the code in ``code_root`` into ``out``; its corpus folder."""
    env = os.environ | {"PYTHONPATH": str(code_root)}
    source = CORPORA[kind][1]
    subprocess.run([sys.executable, "-c", _BUILD, str(out), kind, str(source)], cwd=code_root, env=env, check=True)
    return artifacts.corpus_path(out, CORPORA[kind][0])


def _plain(frame: pd.DataFrame) -> list:
    """Rows as plain Python values (lists for arrays), comparable with ``==``."""
    return [[v.tolist() if hasattr(v, "tolist") else v for v in row] for row in frame.itertuples(index=False)]


def differences(before: Path, after: Path) -> list[str]:
    """What differs between two builds of one corpus (topics, keywords, labels, terms, hierarchy)."""
    out = []
    pb, pa = (artifacts.read_table(f, schema.PAPERS).sort_values("doc_id") for f in (before, after))
    if pb["doc_id"].tolist() != pa["doc_id"].tolist() or pb["topic"].tolist() != pa["topic"].tolist():
        out.append("papers' topics differ")
    tb, ta = (artifacts.read_table(f, schema.TOPICS) for f in (before, after))
    for column in TOPIC_COLUMNS:
        if column in tb and _plain(tb[[column]]) != _plain(ta[[column]]):
            out.append(f"topics.{column} differs")
    for table in (schema.TOPIC_TERMS, schema.HIERARCHY):
        b, a = (artifacts.read_table(f, table) for f in (before, after))
        if list(b.columns) != list(a.columns) or _plain(b) != _plain(a):
            out.append(f"{table} differs")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="main", help="git ref of the code to compare with (default: main)")
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=list(CORPORA))
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="represent-identity-") as tmp:
        base = baseline_tree(args.baseline, Path(tmp) / "baseline")
        for kind in args.corpora:
            before = build(base, Path(tmp) / f"before-{kind}", kind)
            after = build(ROOT, Path(tmp) / f"after-{kind}", kind)
            found = differences(before, after)
            topics = len(artifacts.read_table(after, schema.TOPICS))
            print(f"{kind}: {topics} topics, " + ("identical" if not found else "DIFFERENT: " + "; ".join(found)))
            failed |= bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
