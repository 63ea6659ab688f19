"""Make the shipped background of term document frequencies (``assets/background/``).

The background is what "distinctive" is measured against for a corpus of one year (the keyword
view of the Keyword trends page): recent public ML abstracts, read, cleaned and counted exactly as
a build does (``pipeline.ingest.ingest``, ``pipeline.model.vocab``). Only terms and counts are written, never
texts. Run it again to refresh the file after the cleaning or the vocabulary changes (their versions,
``pipeline.ingest.clean.CLEAN_VERSION`` and ``pipeline.model.vocab.VOCAB_VERSION``, are recorded in
``info.json`` and a test holds them to the code's):

    .venv/bin/python benchmarks/make_background.py            # /work/shared/data, 2018 onwards
    .venv/bin/python benchmarks/make_background.py --data DIR --since 2018 --min-df 10
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SHARED_DATA", ROOT.parent / "shared" / "data"))
if not DATA.is_dir():
    DATA = Path("/work/shared/data")
sys.path.insert(0, str(ROOT))

#: Input files (gzipped JSON Lines with title, abstract, year) and what each one is.
SOURCES = {
    "neurips-1987-2023.jsonl.gz": "NeurIPS proceedings abstracts (papercopilot/paperlists, rajatmodi62/"
    "ai-conf-abstract-generator, 346644054/NeurIPS2022-OpenReviewData, chengyao-xie/NeurIPS2023-OpenReviewData)",
    "iclr-2018-2022-submissions.jsonl.gz": "ICLR submissions (rajatmodi62/ai-conf-abstract-generator, OpenReview)",
    "icml2024-unlabeled.jsonl.gz": "ICML 2024 abstracts (dotd/NeurIPS2024Scrape)",
    "ijcai2020-2024-primary-area.jsonl.gz": "IJCAI 2020-2024 abstracts (papercopilot/paperlists)",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder with the input files (default: %(default)s)")
    parser.add_argument("--since", type=int, default=2018, help="first year kept (default: %(default)s)")
    parser.add_argument("--min-df", type=int, default=None, help="fewest abstracts a kept term is used by")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: assets/background)")
    args = parser.parse_args(argv)

    from pipeline.ingest.clean import CLEAN_VERSION
    from pipeline.ingest.ingest import ingest
    from pipeline.model import background
    from pipeline.model.vocab import VOCAB_VERSION

    started = time.perf_counter()
    files = [args.data / name for name in SOURCES if (args.data / name).is_file()]
    if not files:
        parser.error(f"none of {', '.join(SOURCES)} is in {args.data}")
    papers = ingest(files).papers
    papers = papers[papers["year"].notna() & (papers["year"].astype("Int64") >= args.since)]
    min_df = args.min_df or background.MIN_DF
    table = background.make(papers["model_text"].tolist(), min_df=min_df)
    per_file = papers.groupby("source_file").size()
    years = papers["year"].astype(int)
    info = {
        "name": f"{len(papers):,} ML abstracts, {years.min()}–{years.max()} (NeurIPS, ICLR, ICML, IJCAI)",
        "n_docs": int(len(papers)),
        "years": [int(years.min()), int(years.max())],
        "min_df": int(min_df),
        "n_terms": int(len(table)),
        "sources": [
            {"file": name, "abstracts": int(per_file.get(name, 0)), "what": SOURCES[name]}
            for name in SOURCES
            if per_file.get(name, 0)
        ],
        "made_by": "benchmarks/make_background.py: pipeline.ingest.ingest cleaning, pipeline.model.vocab 1-2-word terms "
        "(English + academic stop words), document frequencies only, terms used by at least min_df abstracts",
        "made_at": time.strftime("%Y-%m-%d"),
        # what the counts depend on: a background counted with other versions is out of date
        # (tests/test_truth.py holds these to the code's)
        "versions": {"clean": CLEAN_VERSION, "vocabulary": VOCAB_VERSION},
    }
    background.write(table, info, args.out or background.FOLDER)
    out = (args.out or background.FOLDER) / background.TERMS_FILE
    print(
        f"{len(table):,} terms from {len(papers):,} abstracts ({info['years'][0]}-{info['years'][1]}) -> {out} "
        f"({out.stat().st_size / 1024:,.0f} kB) in {time.perf_counter() - started:.0f}s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
