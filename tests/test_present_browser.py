"""Present mode as slides, in Chromium at the two common projector sizes (1280x720 and 1920x1080):
for each kind of step (map, topic, trends, what changed, lineage, paper) the bar's buttons and note
do not overlap, no text is cut, and the step's subject lies whole on the first screen and fills it.

Every wait is on a condition (the app settled, the slide sized), never a fixed time. Screenshots are
left in tests/output/present-*.png for a human to look at.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from explorer.state import tours
from tests.test_browser import Tab, serve
from tests.test_chart_layout_browser import _overlap

pytestmark = pytest.mark.browser

SIZES = ((1280, 720), (1920, 1080))
#: (kind, page, params, the subject's selector, the least share of the window's height it fills)
STEPS = (
    ("map", "map", {"corpus": ["all"]}, ".st-key-map", 0.7),
    ("topic", "topics", {"corpus": ["all"], "topic": ["1"]}, '[class*="st-key-slide_"]', 0.4),
    ("trends", "trends", {"corpus": ["all"]}, '[class*="st-key-slide_"]', 0.5),
    ("changed", "compare", {"corpus": ["late"], "ref": ["early"], "show": ["shares"]}, '[class*="st-key-slide_"]', 0.4),
    ("lineage", "lineage", {"corpus": ["all"]}, '[class*="st-key-slide_"]', 0.5),
    ("paper", "paper", {"corpus": ["all"], "paper": ["latex-1"]}, '[data-testid="stMain"] h2', 0.0),
)

#: Boxes of the bar's parts, the subject and any text cut with an ellipsis, in window pixels.
LAYOUT = """(subject) => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const visible = (e) => e.offsetParent !== null && e.getBoundingClientRect().height > 0;
  const first = Array.from(document.querySelectorAll(subject)).find(visible);
  const cut = Array.from(document.querySelectorAll('[data-testid="stMain"] *')).filter((e) => visible(e) &&
      getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1 && e.textContent.trim())
    .map((e) => e.textContent.trim().slice(0, 60));
  return {
    bar: box(document.querySelector('.st-key-tour_bar')), note: box(document.querySelector('.st-key-tour_note')),
    buttons: ['tour_prev', 'tour_next', 'tour_exit'].map((k) => box(document.querySelector('.st-key-' + k + ' button'))),
    subject: box(first), cut, width: window.innerWidth, height: window.innerHeight,
    scrollWidth: document.scrollingElement.scrollWidth,
  };
}"""


@pytest.fixture(scope="module")
def root(compare_artifacts, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("present-browser") / "art"
    shutil.copytree(compare_artifacts, out, symlinks=True)
    return out


@pytest.fixture(scope="module")
def server(root, output_dir) -> Iterator[str]:
    with serve(root, output_dir / "present-browser-server.log") as base:
        yield base


def _slide(tab: Tab, subject: str, fills: float, timeout: float = 60) -> dict:
    """The layout once the subject lies whole on the first screen, filling ``fills`` of it (the
    slide is sized by a script after the page settles); the last layout seen when it never does."""
    deadline = time.time() + timeout
    while True:
        layout = tab.page.evaluate(LAYOUT, subject)
        s = layout["subject"]
        if s and s["y"] + s["h"] <= layout["height"] + 1 and s["h"] >= fills * layout["height"]:
            return layout
        if time.time() > deadline:
            return layout
        time.sleep(0.2)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_kind_of_step_is_a_slide(browser, server, output_dir, size):
    steps = tuple(tours.make_step(page, params, f"The {kind} step") for kind, page, params, _, _ in STEPS)
    blob = tours.encode(tours.Tour("slides", steps, "all"))
    tab = Tab(browser, server, *size)
    try:
        for i, (kind, page, params, subject, fills) in enumerate(STEPS, start=1):
            path = "" if page == "map" else page
            tab.open(f"/{path}?corpus={params['corpus'][0]}&tourdata={blob}&step={i}")
            layout = _slide(tab, subject, fills)
            tab.shot(output_dir, f"present-{kind}-{size[0]}x{size[1]}")
            where = f"{kind} at {size[0]}x{size[1]}"
            bar, note, s = layout["bar"], layout["note"], layout["subject"]
            assert bar and note and s, f"{where}: no bar or no subject ({layout})"
            assert bar["y"] + bar["h"] <= 0.2 * size[1], f"{where}: the bar takes {bar['h']:.0f} px"
            for button in filter(None, layout["buttons"]):
                assert not _overlap(button, note), f"{where}: a button covers the note"
            assert layout["cut"] == [], f"{where}: text cut: {layout['cut']}"
            assert layout["scrollWidth"] <= size[0] + 1, f"{where}: the page scrolls sideways"
            assert s["y"] >= bar["y"] + bar["h"] - 1, f"{where}: the subject starts under the bar"
            assert s["y"] + s["h"] <= size[1] + 1, f"{where}: the subject runs past the bottom ({s})"
            assert s["h"] >= fills * size[1], f"{where}: the subject fills {s['h'] / size[1]:.0%} of the height"
            assert s["w"] >= (0.9 if kind in ("map", "lineage", "trends") else 0.4) * size[0], f"{where}: too narrow"
        assert not tab.errors, tab.errors
    finally:
        tab.close()
