"""Re-render evaluation reports (markdown) from their JSON, e.g. after a change to the table layout.

.venv/bin/python benchmarks/render_evaluation.py benchmarks/results/evaluation/*.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from pipeline.evaluation.quality_report import Evaluation, report_markdown


def main(paths: list[str]) -> None:
    for path in map(Path, paths):
        data = json.loads(path.read_text())
        result = Evaluation.from_dict(data)
        for r in result.results:  # seconds as the median over seeds, as the command now reports it
            if r.per_seed:
                r.scores["seconds"] = float(np.median([row["seconds"] for row in r.per_seed]))
        path.with_suffix(".md").write_text(report_markdown(result, data.get("command", "")), encoding="utf-8")
        print(f"wrote {path.with_suffix('.md')}")


if __name__ == "__main__":
    main(sys.argv[1:])
