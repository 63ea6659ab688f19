"""The map component on its own, in Chromium, without Streamlit: a blank page with the committed
bundle and a points container of generated clusters (test data, 40 topics). What the app and the
export rely on: labels never overlap and every topic gets its label when you zoom to it; a click
reports the dot drawn on top; a box or lasso selects exactly the shown papers inside; filtered-out
papers are context only; a view set by the host is kept and reported back in the URL's format.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from explorer.services import mapview
from pipeline.formats.blobs import point_spacing, points_blob
from pipeline.model.label_evidence import WEAK_MARK

pytestmark = pytest.mark.browser

BUNDLE = Path(__file__).resolve().parent.parent / "frontend" / "dist" / "atlas-map.js"
TOPICS = 40
N = 6_000

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">
<div id="map" style="width:1000px;height:640px"></div>
<script type="application/octet-stream" id="pts">{points}</script>
<script type="module">{bundle}</script>
<script type="module">
const A = globalThis.AtlasMap;
window.events = [];
const log = (kind) => (...args) => window.events.push([kind, ...args.map((a) => a instanceof Uint32Array ? Array.from(a) : a)]);
const map = A.mount(document.getElementById('map'), {{click: log('click'), select: log('select'), view: log('view'), topic: log('topic'), need: log('need')}});
map.setData(A.datasetOf(A.putBlob(A.fromBase64(document.getElementById('pts').textContent))));
map.setOptions({{legend: false}});
window.map = map;
</script></body></html>"""


def clusters(seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, TOPICS, N)
    centres = rng.uniform(-10, 10, size=(TOPICS, 2))
    xy = centres[topic] + rng.normal(scale=0.7, size=(N, 2))
    papers = pd.DataFrame({"x": xy[:, 0], "y": xy[:, 1], "topic": topic, "was_outlier": rng.random(N) < 0.1})
    labels = [f"test cluster number {k} with a long label" if k % 3 == 0 else f"cluster {k}" for k in range(TOPICS)]
    topics = pd.DataFrame({"topic": np.arange(TOPICS), "label": labels})
    return papers, topics


@pytest.fixture(scope="module")
def data():
    return clusters()


@pytest.fixture
def page(browser, data, tmp_path):
    papers, topics = data
    blob = points_blob("test-clusters", papers, topics, synthetic=True)
    html = PAGE.format(points=base64.b64encode(blob.data).decode(), bundle=BUNDLE.read_text(encoding="utf-8"))
    path = tmp_path / "map.html"
    path.write_text(html, encoding="utf-8")
    context = browser.new_context(viewport={"width": 1020, "height": 660})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_function(f"() => window.map && Number(window.map.el.dataset.drawn || 0) === {N}")
    yield page
    context.close()
    assert not errors, errors


def settle(page) -> None:
    page.wait_for_function("() => !window.map.debug().busy")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def overlaps(labels: list[dict]) -> list:
    boxes = [lab["box"] for lab in labels]
    return [
        (a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ]  # fmt: skip


def test_every_topic_is_labelled_when_you_zoom_to_it_and_labels_never_overlap(page, data):
    _, topics = data
    first = page.evaluate("() => window.map.debug().labels")
    assert not overlaps(first) and len({lab["topic"] for lab in first}) >= 12
    centres = page.evaluate("() => window.map.ds.topics.map(t => [t.id, t.x, t.y])")
    missing = []
    for tid, x, y in centres:
        page.evaluate(
            f"() => {{ const m = window.map; m.cam.cx = {x}; m.cam.cy = {y}; m.cam.scale = m.fitCamera().scale * 6; m.redraw(); }}"
        )
        settle(page)
        labels = page.evaluate("() => window.map.debug().labels")
        assert not overlaps(labels), tid
        if tid not in {lab["topic"] for lab in labels}:
            missing.append(tid)
    assert not missing, f"topics never labelled at zoom 6 on their centre: {missing}"


def test_a_click_reports_the_dot_drawn_on_top(page, data):
    papers, _ = data
    page.evaluate("() => window.map.setOptions({highlight: 7})")
    settle(page)
    points = page.evaluate("() => window.map.screenPoints()")
    bright = [p for p in points if p["layer"] == 3]
    faint = {(round(p["x"]), round(p["y"])): p for p in points if p["layer"] == 1}
    pairs = [
        (b, f) for b in bright for f in faint.values()
        if f["row"] > b["row"] and (b["x"] - f["x"]) ** 2 + (b["y"] - f["y"]) ** 2 < 2.0**2
    ]  # fmt: skip
    assert pairs, "no overlapping bright and faint dots in the test clusters"
    b, f = pairs[0]
    x, y = (b["x"] + f["x"]) / 2, (b["y"] + f["y"]) / 2
    page.mouse.click(x, y)
    clicks = [e[1] for e in page.evaluate("() => window.events") if e[0] == "click"]
    assert clicks == [b["row"]] and papers["topic"].iat[b["row"]] == 7


def test_box_and_lasso_select_the_shown_papers_inside(page, data):
    papers, _ = data
    mask = papers["x"].to_numpy() < 2  # the filters keep the left part only
    bits = base64.b64encode(np.packbits(mask).tobytes()).decode()
    page.evaluate(f"() => window.map.setOptions({{mask: globalThis.AtlasMap.fromBase64('{bits}')}})")
    settle(page)
    assert page.evaluate("() => window.map.debug().shown") == int(mask.sum())
    stage = page.evaluate("() => { const r = window.map.stage.getBoundingClientRect(); return [r.left, r.top]; }")
    # the data rectangle x in [-4, 4], y in [-3, 5], as a screen box
    (ax, ay), (bx, by) = (page.evaluate(f"() => window.map.screenOfPoint({x}, {y})") for x, y in ((-4, 5), (4, -3)))
    rows = page.evaluate(
        f"() => Array.from(window.map.selectPolygon([{ax - stage[0]}, {ay - stage[1]}, {bx - stage[0]}, {ay - stage[1]}, "
        f"{bx - stage[0]}, {by - stage[1]}, {ax - stage[0]}, {by - stage[1]}], 'box'))"
    )
    x, y = papers["x"].to_numpy(np.float32), papers["y"].to_numpy(np.float32)
    inside = (x >= -4) & (x <= 4) & (y >= -3) & (y <= 5)
    expected = np.flatnonzero(inside & mask)
    # a pixel's rounding at the box's edges, nothing more; never a filtered-out paper
    assert len(set(rows) ^ set(expected.tolist())) <= 3 and mask[rows].all()
    events = [e for e in page.evaluate("() => window.events") if e[0] == "select"]
    assert events[-1][1] == rows and events[-1][2] == "box"
    # a lasso: a triangle
    tri = [(-6, -6), (6, -6), (0, 6)]
    screen = [page.evaluate(f"() => window.map.screenOfPoint({px}, {py})") for px, py in tri]
    flat = ", ".join(f"{sx - stage[0]}, {sy - stage[1]}" for sx, sy in screen)
    lasso = page.evaluate(f"() => Array.from(window.map.selectPolygon([{flat}], 'lasso'))")

    def in_triangle(px, py):
        (x1, y1), (x2, y2), (x3, y3) = tri
        d = lambda ax_, ay_, bx_, by_, cx_, cy_: (ax_ - cx_) * (by_ - cy_) - (bx_ - cx_) * (ay_ - cy_)  # noqa: E731
        s = [d(px, py, x1, y1, x2, y2), d(px, py, x2, y2, x3, y3), d(px, py, x3, y3, x1, y1)]
        return all(v >= 0 for v in s) or all(v <= 0 for v in s)

    expected = [i for i in np.flatnonzero(mask) if in_triangle(x[i], y[i])]
    assert len(set(lasso) ^ set(expected)) <= 3 and mask[lasso].all()


def test_a_view_from_the_host_is_kept_and_views_are_reported_in_the_urls_format(page):
    page.evaluate("() => window.map.setOptions({view: {x: 1.5, y: -2, zoom: 4}, viewKey: '1.5,-2,4'})")
    settle(page)
    view = page.evaluate("() => window.map.debug().view")
    assert (view["x"], view["y"], view["zoom"]) == (1.5, -2, 4) and mapview.parse_view(view["text"]).zoom == 4
    page.mouse.move(500, 320)
    page.mouse.wheel(0, -400)
    page.wait_for_function("() => window.events.some(e => e[0] === 'view')")
    view = [e[1] for e in page.evaluate("() => window.events") if e[0] == "view"][-1]
    text = view["text"]  # what the app writes into ``view=`` and reads back
    parsed = mapview.parse_view(text)
    assert (
        parsed is not None
        and (parsed.x, parsed.y, parsed.zoom) == (view["x"], view["y"], view["zoom"])
        and parsed.zoom > 4
    )
    # the same view echoed back by the host (the URL changed to it) does not move the map
    before = page.evaluate("() => window.map.debug().view")
    page.evaluate(
        f"() => window.map.setOptions({{view: {json.dumps({k: view[k] for k in 'xy'} | {'zoom': view['zoom']})}, viewKey: '{text}'}})"
    )
    assert page.evaluate("() => window.map.debug().view") == before
    page.locator('button[data-tool="reset"]').click()
    page.wait_for_function("() => window.events.some(e => e[0] === 'view' && e[1] === null)")


def test_the_zoom_stops_where_papers_are_told_apart_and_offers_the_way_back(page, data):
    papers, _ = data
    spacing = point_spacing(papers["x"].to_numpy(), papers["y"].to_numpy())
    assert spacing > 0
    assert page.evaluate("() => window.map.ds.spacing") == pytest.approx(spacing, rel=1e-4)  # float32 positions
    limit = page.evaluate("() => window.map.maxZoom()")
    assert 4 <= limit < 4000
    # at the closest zoom the closest papers are SEPARATE_PX (24 px) apart on screen
    fit = page.evaluate("() => window.map.fitCamera().scale")
    assert spacing * fit * limit == pytest.approx(24, rel=0.01)
    page.mouse.move(500, 320)
    for _ in range(40):  # many quick gestures: 652x was reached this way before
        page.mouse.wheel(0, -800)
    page.wait_for_function(f"() => window.map.debug().zoom >= {limit * 0.999}")
    settle(page)
    state = page.evaluate("() => window.map.debug()")
    assert state["zoom"] == pytest.approx(limit, rel=1e-3) and "every paper here is told apart" in state["zoomNote"]
    assert page.locator('button[data-tool="plus"]').is_disabled()
    assert page.locator(".zoom-note").is_visible()
    page.locator(".zoom-note button").click()  # the way back
    page.wait_for_function("() => Math.abs(window.map.debug().zoom - 1) < 0.01")
    assert page.evaluate("() => window.map.debug().zoomNote") is None
    # a view from a link beyond the limit is held at it; a view away from every paper says so
    page.evaluate("() => window.map.setOptions({view: {x: 0, y: 0, zoom: 3000}, viewKey: 'far-in'})")
    assert page.evaluate("() => window.map.debug().zoom") == pytest.approx(limit, rel=1e-3)
    page.evaluate("() => window.map.setOptions({view: {x: 500, y: 500, zoom: 2}, viewKey: 'away'})")
    page.wait_for_function("() => (window.map.debug().zoomNote || '').startsWith('No papers here')")
    assert page.locator(".zoom-note").is_visible()


def test_spacing_is_measured_on_a_sample_of_large_maps():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 100, size=(40_000, 2))
    whole = point_spacing(xy[:, 0], xy[:, 1])
    sampled = point_spacing(xy[:, 0], xy[:, 1], sample=10_000)
    assert sampled == pytest.approx(whole, rel=0.25)
    assert point_spacing(np.zeros(5), np.zeros(5)) == 0.0  # all at one place: unknown


def test_a_weak_labels_mark_stays_in_sight_in_the_legend_when_the_label_is_cut(browser, data, tmp_path):
    # the legend cuts a long label short with "…" after two lines; the weak mark the host appended
    # must not go with it
    papers, topics = data
    long = "search, spiking neural networks and neuromorphic hardware for robots"
    topics = topics.assign(label=[long + WEAK_MARK if k == 1 else lab for k, lab in enumerate(topics["label"])])
    blob = points_blob("test-weak", papers, topics, synthetic=True)
    html = PAGE.format(points=base64.b64encode(blob.data).decode(), bundle=BUNDLE.read_text(encoding="utf-8"))
    path = tmp_path / "weak.html"
    path.write_text(
        html.replace("map.setOptions({legend: false});", "map.setOptions({legend: true});"), encoding="utf-8"
    )
    context = browser.new_context(viewport={"width": 1020, "height": 660})
    try:
        page = context.new_page()
        page.goto(path.as_uri())
        page.wait_for_function("() => window.map && window.map.el.querySelector('.legend button[data-topic=\"1\"]')")
        item = page.evaluate(
            """() => {
            const b = window.map.el.querySelector('.legend button[data-topic="1"]');
            const lab = b.querySelector('.lab'), mark = b.querySelector('.weak');
            const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.width]; };
            return {lab: lab.textContent, cut: lab.scrollHeight > lab.clientHeight + 1 || lab.scrollWidth > lab.clientWidth,
                    lines: Math.round(lab.clientHeight / parseFloat(getComputedStyle(lab).lineHeight)),
                    mark: mark && mark.textContent,
                    markBox: mark && box(mark), button: box(b), title: b.title,
                    others: window.map.el.querySelectorAll('.legend .weak').length};
        }"""
        )
    finally:
        context.close()
    assert item["lab"] == long and item["cut"] and item["lines"] == 2, item  # two lines, then cut ...
    assert item["mark"] == WEAK_MARK.strip() and item["others"] == 1, item  # ... its mark is not
    (left, right, width), (b_left, b_right, _) = item["markBox"], item["button"]
    assert width > 0 and b_left <= left and right <= b_right, item
    assert item["title"].startswith(long + WEAK_MARK), item
