"""Charts whose layout only a browser shows: drawn by plotly in Chromium from the app's own figure
functions, offline (plotly.js inlined), at the normal size and at present mode's text scale.

* Topic matching (What changed): the labels of many small reference topics never overlap.
* Topic lineage: the chart's toolbar (plotly's mode bar, top right) never covers the periods' names
  or the topics' labels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explorer.services import compare as cview
from explorer.services import figures
from explorer.state import data
from explorer.ui import present
from pipeline.analysis.lineage import default_periods, lineage

pytestmark = pytest.mark.browser

BOXES = """(selector) => Array.from(document.querySelectorAll(selector)).filter((e) => e.textContent.trim())
  .map((e) => { const r = e.getBoundingClientRect(); return {text: e.textContent.trim(), x: r.x, y: r.y, w: r.width, h: r.height}; })"""


def _overlap(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["w"] - 1
        and b["x"] < a["x"] + a["w"] - 1
        and a["y"] < b["y"] + b["h"] - 1
        and b["y"] < a["y"] + a["h"] - 1
    )


def _draw(browser, fig, tmp_path, name: str, *, width: int = 1100):
    """The figure in a page of its own (plotly.js inlined: no network), mode bar always shown."""
    path = tmp_path / f"{name}.html"
    config = {**figures.config(name), "displayModeBar": True}
    fig.write_html(str(path), include_plotlyjs=True, full_html=True, config=config, default_width=f"{width}px")
    page = browser.new_page(viewport={"width": width + 40, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_function("() => document.querySelector('.main-svg') && document.querySelector('.modebar')")
    return page


def many_small_reference_topics() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One large reference topic and 30 small ones, each a tenth of one of three new topics."""
    flows = [{"topic_a": 0, "topic_b": 0, "papers_b": 200.0, "from_b": 1.0, "from_a": 0.9}]
    for j in range(30):
        flows.append({"topic_a": j + 1, "topic_b": 1 + j // 10, "papers_b": 3.0, "from_b": 0.1, "from_a": 0.6})
    rows = [{"side": "a", "topic": t, "label": f"small reference topic number {t}", "status": "matched",
             "status_text": "matched"} for t in range(31)]  # fmt: skip
    rows += [{"side": "b", "topic": t, "label": f"new topic {t}", "status": "unclear",
              "status_text": "no clear precursor"} for t in range(4)]  # fmt: skip
    return pd.DataFrame(flows), pd.DataFrame(rows)


@pytest.mark.parametrize("scale", [1.0, present.PRESENT_SCALE])
def test_small_reference_topics_labels_never_overlap(browser, tmp_path, output_dir, scale):
    flows, matches = many_small_reference_topics()
    fig = figures.scale_text(cview.matching_sankey(flows, matches, left="ref", right="new"), scale)
    page = _draw(browser, fig, tmp_path, f"matching-{scale}")
    try:
        labels = page.evaluate(BOXES, ".sankey .node-label")
        assert len(labels) >= 31
        page.screenshot(path=str(output_dir / f"chart-matching-{scale}.png"), full_page=True)
        clashes = [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1 :] if _overlap(a, b)]
        assert clashes == []
    finally:
        page.close()


@pytest.mark.parametrize("scale", [1.0, present.PRESENT_SCALE])
def test_the_lineage_toolbar_never_covers_the_periods(browser, small_artifacts, tmp_path, output_dir, scale):
    corpus = data.load_corpus(small_artifacts, "small")
    years = corpus.papers["year"].astype(float).to_numpy()
    periods = default_periods(corpus.papers["year"].dropna().astype(int).to_numpy())
    lin = lineage(years, corpus.papers["topic"].to_numpy(), np.asarray(corpus.embeddings), periods)
    labels = dict(zip(corpus.topic_ids.tolist(), corpus.tables.topics["label"], strict=True))
    fig = figures.scale_text(cview.lineage_sankey(lin, labels, colours=corpus.colouring.colours), scale)
    page = _draw(browser, fig, tmp_path, f"lineage-{scale}")
    try:
        buttons = page.evaluate(BOXES.replace(".filter((e) => e.textContent.trim())", ""), ".modebar-btn")
        names = page.evaluate(BOXES, "g.annotation")
        nodes = page.evaluate(BOXES, ".sankey .node-label")
        assert buttons and len(names) == len(periods) and nodes
        page.screenshot(path=str(output_dir / f"chart-lineage-{scale}.png"), full_page=True)
        covered = [t["text"] for t in names + nodes for b in buttons if _overlap(t, b)]
        assert covered == []
        assert [(n["text"], t["text"]) for n in names for t in nodes if _overlap(n, t)] == []
    finally:
        page.close()
