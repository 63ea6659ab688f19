"""Every page through ``streamlit.testing.v1.AppTest`` on the fixture corpus, opened from URLs.

Each test runs the router (app.py) with query parameters, as a pasted link would, then checks
what the page shows: no exception, the right content, friendly messages for bad links.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from explorer.services import search
from explorer.state import access, data
from explorer.ui import caches
from pipeline.core import artifacts, schema
from pipeline.formats.blobs import MAGIC, unpack
from pipeline.formats.ids import short_id

APP = Path(__file__).resolve().parent.parent / "app.py"


@pytest.fixture(scope="module")
def mixed_root(small_artifacts, tmp_path_factory) -> Path:
    """Corpora of every kind: good, single-year, old schema, damaged."""
    root = tmp_path_factory.mktemp("mixed")
    source = artifacts.corpus_path(small_artifacts, "small")
    shutil.copytree(source, root / "small")
    one = root / "oneyear"
    shutil.copytree(source, one)
    papers = pd.read_parquet(one / schema.PAPERS)
    papers["year"] = pd.array([2026] * len(papers), dtype="Int16")
    papers["venue"] = "NeurIPS 2026"
    papers.to_parquet(one / schema.PAPERS, index=False)
    pd.DataFrame(
        {"year": np.array([2026], dtype=np.int32), "n_papers": np.array([len(papers)], dtype=np.int32)}
    ).to_parquet(one / schema.YEARS, index=False)
    old = root / "old"
    shutil.copytree(source, old)
    manifest = json.loads((old / schema.MANIFEST).read_text())
    (old / schema.MANIFEST).write_text(json.dumps({**manifest, "schema_version": 0}))
    broken = root / "broken"
    shutil.copytree(source, broken)
    (broken / schema.TOPICS).write_bytes(b"damaged")
    return root


def _as_after_first_run(monkeypatch) -> None:
    """Run the app as a server does after its first request: with Streamlit's old ``pages/``
    folder mode off. AppTest turns that mode back on before every run (a real server leaves it
    after the first run of app.py; that first run is covered by tests/test_browser.py)."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


def run(root: Path, monkeypatch, view: str | None = None, *, args: tuple[str, ...] = (), **params) -> AppTest:
    """Open the app at ``view`` (a script in pages/) with ``params`` in the URL and ``args`` after
    ``--``, as a link would; access settings come from ``args`` only, never the environment."""
    monkeypatch.setattr(sys, "argv", ["app.py", "--artifacts", str(root), *args])
    monkeypatch.delenv(access.TOKEN_ENV, raising=False)
    monkeypatch.delenv(access.READ_ONLY_ENV, raising=False)
    _as_after_first_run(monkeypatch)
    at = AppTest.from_file(str(APP), default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if view:
        at.switch_page(view)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def qp(at: AppTest, key: str) -> list[str] | None:
    """The URL's values of ``key`` after the run (None when absent)."""
    if key not in at.query_params:
        return None
    value = at.query_params[key]
    return list(value) if isinstance(value, list | tuple) else [value]


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def unescape(markdown: str) -> str:
    """Markdown-escaped text as the reader sees it."""
    return re.sub(r"\\(.)", r"\1", markdown)


def main_links(at: AppTest) -> list:
    return list(at.main.get("page_link"))


def link_params(link) -> dict[str, list[str]]:
    return parse_qs(link.proto.query_string)


def plotly_specs(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.main.get("plotly_chart")]


def decode(array) -> np.ndarray:
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"]))
    return np.asarray(array)


# ------------------------------------------------------------------------------------------
# Topic map
# ------------------------------------------------------------------------------------------


def map_data(at: AppTest) -> tuple[dict, dict[str, tuple[dict, dict]]]:
    """The map component's JSON state and the binary containers sent with it, by id."""
    elements = at.main.get("bidi_component")
    blobs = {}
    for el in elements:
        if el.proto.bytes.startswith(MAGIC):  # (the other bytes are the map's bundle)
            header, arrays = unpack(el.proto.bytes)
            blobs[header["id"]] = (header, arrays)
    states = [json.loads(el.proto.json) for el in elements if el.proto.json]
    assert len(states) == 1, states
    # the map's own instance (it reruns on every hover) carries a small loader, not the bundle
    assert all(len(el.proto.js_content) < 2_000 for el in elements)
    bundle = (APP.parent / "frontend" / "dist" / "atlas-map.js").read_bytes()
    assert sum(el.proto.bytes == bundle for el in elements) == 1  # sent once, by a data-only instance
    return states[0], blobs


def test_map_draws_every_paper_and_names_the_corpus_in_the_url(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch)
    assert at.title[0].value == "Topic map"
    assert qp(at, "corpus") == ["small"]  # a copied link names its corpus
    state, blobs = map_data(at)
    header, arrays = blobs[state["points"]]
    assert header["n"] == 137 and len(arrays["x"]) == 137 and state["mask"] is None
    papers = pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS)
    sent = json.dumps(state) + json.dumps(header)
    assert not any(title in sent for title in papers["title"])  # titles are fetched on hover, not shipped


def test_the_map_marks_search_hits_and_the_reading_list_and_keeps_its_view(small_artifacts, monkeypatch):
    ids = [short_id(d) for d in ("latex-1", "xss-1")]
    at = run(
        small_artifacts, monkeypatch, corpus="small", q="scheduling makespan", list=",".join(ids), years="2021-2023"
    )
    at.query_params["view"] = "0.5,-1.25,3"  # (``run`` takes ``view`` for the page)
    at.run()
    state, blobs = map_data(at)
    papers = pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS).set_index("row")
    marks = {m["shape"]: blobs[m["rows"]][1]["rows"].tolist() for m in state["marks"]}
    assert sorted(papers.loc[marks["diamond"], "doc_id"]) == ["latex-1", "xss-1"]  # the reading list
    assert papers.loc[marks["ring"][0], "doc_id"] == "latex-1"  # the best match first
    mask = np.unpackbits(blobs[state["mask"]][1]["bits"])[:137].astype(bool)
    assert np.array_equal(mask, papers["year"].between(2021, 2023).to_numpy())  # the filters dim the rest
    assert state["view"] == {"x": 0.5, "y": -1.25, "zoom": 3.0} and state["viewKey"] == "0.5,-1.25,3"
    assert f"Rings: the {len(marks['ring'])} papers sharing a word with “scheduling makespan”" in texts(at.caption)


def test_the_map_rings_the_papers_closest_in_meaning_as_the_search_page_ranks_them(small_artifacts, monkeypatch):
    params = dict(corpus="small", q="multi-agent planning", mode="semantic", years="2021-2023")
    found = run(small_artifacts, monkeypatch, "pages/search.py", **params)
    listed = [link_params(link)["paper"][0] for link in main_links(found) if link_params(link).get("paper")]
    (to_map,) = [link for link in main_links(found) if link.label == "Show the matches on the map"]
    assert link_params(to_map)["mode"] == ["semantic"] and link_params(to_map)["q"] == ["multi-agent planning"]

    at = run(small_artifacts, monkeypatch, **params)
    assert at.toggle(key="map_semantic").value
    state, blobs = map_data(at)
    (ring,) = [m for m in state["marks"] if m["shape"] == "ring"]
    papers = pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS).set_index("row")
    rows = blobs[ring["rows"]][1]["rows"].tolist()
    shown = int(papers["year"].between(2021, 2023).sum())  # every one has a similarity: a tenth are ringed
    assert len(rows) == min(-(-shown // 10), 100) < len(listed) == 25
    assert papers.loc[rows, "doc_id"].tolist() == listed[: len(rows)]  # the Search page's first, in its order
    assert f"Rings: the {len(rows)} papers closest in meaning to “multi\\-agent planning”" in texts(at.caption)
    assert "sharing a word" not in texts(at.caption)

    at.toggle(key="map_semantic").set_value(False).run()  # words again: the URL says so
    assert qp(at, "mode") is None and "sharing a word with" in texts(at.caption)


def test_map_with_a_topic_lists_its_papers(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, corpus="small", topic="1")
    assert at.selectbox(key="map_topic").value == 1
    assert "Topic 1" in texts(at.subheader)
    table = at.dataframe[0].value
    assert len(table) == int(
        (pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS)["topic"] == 1).sum()
    )
    assert all(link.startswith("paper?corpus=small") and "paper=" in link for link in table["link"])


def test_choosing_a_topic_writes_the_url(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, corpus="small")
    at.selectbox(key="map_topic").select(0).run()
    assert qp(at, "topic") == ["0"]
    at.selectbox(key="map_topic").select("all").run()
    assert qp(at, "topic") is None


def test_unknown_topic_is_explained(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, corpus="small", topic="99")
    assert "Topic 99 does not exist" in texts(at.warning)
    at = run(small_artifacts, monkeypatch, corpus="small", topic="abc")
    assert "not a topic number" in texts(at.warning)


# ------------------------------------------------------------------------------------------
# Topics
# ------------------------------------------------------------------------------------------


def test_topics_page_shows_a_topic_in_depth(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/topics.py", corpus="small", topic="0", lam="0.3")
    assert "Topic 0 · " in texts(at.header)
    assert at.slider(key="lam").value == pytest.approx(0.3)
    table = at.dataframe[0].value
    assert {"label", "size", "reassigned", "label_support"} <= set(table.columns)
    assert "coherence" not in table.columns  # 137 abstracts are too few for NPMI: said, not shown
    assert "Coherence is not shown" in texts(at.caption)
    metrics = {m.label: m.value for m in at.metric}
    assert {"Papers", "Coherence", "Reassigned", "Growth", "Label support"} <= set(metrics)
    assert metrics["Coherence"] == "–"
    titles = " ".join(s.get("layout", {}).get("title", {}).get("text", "") for s in plotly_specs(at))
    for name in ("c-TF-IDF", "λ = 0.30", "Topic hierarchy", "Intertopic distance", "Topic similarity"):
        assert name in titles
    links = main_links(at)
    assert any(link_params(link).get("paper") for link in links)  # representative papers
    assert any(link_params(link).get("topic") == ["1"] for link in links)  # nearest topics


def test_topics_page_without_a_topic(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/topics.py", corpus="small")
    assert at.selectbox(key="topics_topic").value is None
    assert len(at.dataframe) == 1


# ------------------------------------------------------------------------------------------
# Keyword trends
# ------------------------------------------------------------------------------------------


def test_trends_page_with_keywords_from_the_url(small_artifacts, monkeypatch):
    at = run(
        small_artifacts,
        monkeypatch,
        "pages/trends.py",
        corpus="small",
        kw=["planning", "scheme for job-shop"],
        support="3",
    )
    assert at.multiselect(key="trend_kw").value == ["planning", "scheme for job-shop"]
    assert "whole-word match in titles and abstracts: scheme for job-shop" in unescape(texts(at.caption))
    titles = [s["layout"]["title"]["text"] for s in plotly_specs(at)]
    assert "Share of each year's papers using the keyword" in titles and "Emerging" in titles
    assert at.number_input(key="trend_support").value == 3


def test_trends_page_writes_keywords_as_the_papers_do(small_artifacts, monkeypatch):
    terms = pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / "terms.parquet")
    cased = {t for t, w in zip(terms["term"], terms["written"], strict=True) if t != w}
    assert {"sat", "markov decision", "mdps"} <= cased
    at = run(small_artifacts, monkeypatch, "pages/trends.py", corpus="small", kw=["sat", "planning", "mdps solvers"])
    # looked up, counted and linked in lower case; shown as the papers write them, a typed phrase word by word
    assert at.multiselect(key="trend_kw").value == ["sat", "planning", "mdps solvers"]
    specs = {s["layout"]["title"]["text"]: s for s in plotly_specs(at)}
    lines = specs["Share of each year's papers using the keyword"]
    assert [t["name"] for t in lines["data"]] == ["SAT", "planning", "MDPs solvers"]
    bars = [str(y) for name in ("Emerging", "Declining") if name in specs for t in specs[name]["data"] for y in t["y"]]
    assert bars and not [y for y in bars if y in cased]


def test_a_trends_link_may_list_keywords_with_commas(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/trends.py", corpus="small", kw="planning, scheduling,zzqxunused")
    assert at.multiselect(key="trend_kw").value == ["planning", "scheduling", "zzqxunused"]  # three, not one phrase
    lines = [
        s for s in plotly_specs(at) if s["layout"]["title"]["text"] == "Share of each year's papers using the keyword"
    ]
    assert [t["name"] for t in lines[0]["data"]] == ["planning", "scheduling", "zzqxunused"]
    captions = unescape(texts(at.caption))
    assert "No paper here uses zzqxunused (the line stays at 0%)" in captions
    many = ",".join(f"w{i}" for i in range(10))
    at = run(small_artifacts, monkeypatch, "pages/trends.py", corpus="small", kw=many)
    assert len(at.multiselect(key="trend_kw").value) == 8
    assert "names 10 keywords; a chart shows at most 8" in unescape(texts(at.caption))


def test_trends_page_suggests_rising_keywords(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/trends.py", corpus="small", years="2021-2024")
    assert len(at.multiselect(key="trend_kw").value) == 3
    assert at.slider(key="trend_before").value[0] == 2021


def test_trends_page_explains_a_single_year(mixed_root, monkeypatch):
    at = run(mixed_root, monkeypatch, "pages/trends.py", corpus="oneyear")
    message = texts(at.info)
    assert "from 2026" in message and "year" in message and "title line" in message
    titles = [s["layout"]["title"]["text"] for s in plotly_specs(at)]
    assert titles == ["Distinctive terms (vs. ML abstracts)", "Topics"]  # not raw counts


# ------------------------------------------------------------------------------------------
# Paper
# ------------------------------------------------------------------------------------------


def test_paper_page_renders_hostile_text_inert(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/paper.py", corpus="small", paper="xss-1")
    body = texts(at.markdown)
    assert "\\<script\\>" in body and "\\<img src\\=x onerror\\=" in body
    assert not re.search(r"(?<!\\)[<>]", body)  # every angle bracket is escaped
    assert "](javascript" not in body
    assert not at.get("link_button")  # javascript: URL is not a link ...
    assert "not an http or https address" in texts(at.caption)  # ... it is shown as text


def test_paper_page_renders_valid_math_and_links(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/paper.py", corpus="small", paper="latex-1")
    body = texts(at.markdown)
    assert r"$\mathcal{O}(n \log n)$" in body and r"$\ell_1$" in body
    assert at.get("link_button")[0].proto.url == "https://example.org/paper"
    similar = [link for link in main_links(at) if link_params(link).get("paper") and link.proto.page == "paper"]
    assert len(similar) == 10 and all(link_params(link)["corpus"] == ["small"] for link in similar)
    assert any(link_params(link).get("topic") for link in main_links(at))  # its topic


def test_unknown_paper_is_explained(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/paper.py", corpus="small", paper="no-such-paper")
    assert "There is no paper" in texts(at.warning)
    at.text_input(key="paper_find").input("Zero-Shot").run()
    assert any("Zero\\-Shot" in link.value for link in main_links(at))


# ------------------------------------------------------------------------------------------
# Search
# ------------------------------------------------------------------------------------------


def test_keyword_search_from_the_url_ranks_the_phrase_first(small_artifacts, monkeypatch):
    papers = pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS)
    row = papers[papers["doc_id"] == "ijcai2022-paper114"].iloc[0]
    phrase = " ".join(row["abstract"].split()[20:28])
    at = run(small_artifacts, monkeypatch, "pages/search.py", corpus="small", q=phrase)
    assert at.text_input(key="search_q").value == phrase
    first = main_links(at)[0]
    assert link_params(first)["paper"] == ["ijcai2022-paper114"]
    assert "exact phrase" in texts(at.caption)
    to_map = main_links(at)[-1]  # the same matches, ringed on the map
    assert to_map.proto.label == "Show the matches on the map" and link_params(to_map)["q"] == [phrase]


def test_the_search_says_how_many_papers_it_ranked_and_lists_more_on_request(small_artifacts, monkeypatch):
    query = "learning agents"
    at = run(small_artifacts, monkeypatch, "pages/search.py", corpus="small", q=query)
    index = search.build_bm25(data.load_corpus(small_artifacts, "small"))
    sharing = int((np.asarray(index.bm25.get_scores(index.bm25.get_tokens_ids(query.split()))) > 0).sum())
    assert 50 < sharing < 75  # three pages of them

    def listed() -> int:
        return len([link for link in main_links(at) if link_params(link).get("paper")])

    assert listed() == 25 and f"The 25 best of {sharing} papers sharing a word with “{query}”" in texts(at.caption)
    at.button(key="search_k_more").click().run()
    assert listed() == 50 and f"The 50 best of {sharing} papers" in texts(at.caption)
    at.button(key="search_k_more").click().run()
    assert listed() == sharing and f"All {sharing} papers sharing a word" in texts(at.caption)
    assert not [b for b in at.button if b.key == "search_k_more"]  # nothing more to show
    at.text_input(key="search_q").input("planning agents").run()  # another query starts again at 25
    assert listed() == 25 and "The 25 best of" in texts(at.caption) and "exact phrase" in texts(at.caption)


def test_semantic_search_and_placement(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/search.py", corpus="small", q="multi-agent planning", mode="semantic")
    assert at.segmented_control(key="search_mode").value == "semantic"
    assert len([link for link in main_links(at) if link_params(link).get("paper")]) == 25
    assert "The 25 of 137 papers closest in meaning to “multi\\-agent planning”" in texts(at.caption)
    at.text_area(key="place_text").input("We plan for teams of agents with temporal constraints and formal guarantees.")
    at.form_submit_button[0].click().run()
    assert not at.exception
    assert "Predicted topic" in texts(at.markdown)
    assert "Nearest papers" in texts(at.markdown)


def test_search_respects_filters(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, "pages/search.py", corpus="small", q="planning", years="2020")
    papers = pd.read_parquet(artifacts.corpus_path(small_artifacts, "small") / schema.PAPERS).set_index("doc_id")
    ids = [link_params(link)["paper"][0] for link in main_links(at) if link_params(link).get("paper")]
    assert ids and all(papers.loc[i, "year"] == 2020 for i in ids)


# ------------------------------------------------------------------------------------------
# Filters, links and friendly states
# ------------------------------------------------------------------------------------------


def test_filters_from_the_url_travel_with_links(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, corpus="small", years="2021-2022", venue="IJCAI 2021", text="learning")
    assert at.slider(key="f_years:small").value == (2021, 2022)
    assert at.multiselect(key="f_venues:small").value == ["IJCAI 2021"]
    caption = texts(at.sidebar.caption)
    assert "of 137 papers" in caption and "IJCAI 2021" in caption
    nav = list(at.sidebar.get("page_link"))
    assert [link.proto.page for link in nav] == [
        "", "topics", "trends", "compare", "lineage", "paper", "search", "list", "tour", "curate", "add",
    ]  # fmt: skip
    for link in nav:
        params = link_params(link)
        assert params["corpus"] == ["small"] and params["years"] == ["2021-2022"] and params["venue"] == ["IJCAI 2021"]
        assert params["text"] == ["learning"]


def test_changing_a_filter_writes_the_url(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, corpus="small")
    at.slider(key="f_years:small").set_value((2022, 2023)).run()
    assert qp(at, "years") == ["2022-2023"]
    at.text_input(key="f_text:small").input("planning").run()
    assert qp(at, "text") == ["planning"]


def test_clear_filters_and_switch_corpus(mixed_root, monkeypatch):
    at = run(mixed_root, monkeypatch, corpus="small", years="2021-2022", topic="1")
    at.sidebar.button[0].click().run()  # "Clear filters"
    assert qp(at, "years") is None and at.slider(key="f_years:small").value == (2020, 2024)
    at.selectbox(key="corpus_pick").select("oneyear").run()
    assert qp(at, "corpus") == ["oneyear"] and qp(at, "topic") is None  # topic ids belong to a corpus
    assert at.selectbox(key="corpus_pick").value == "oneyear" and "· 2026" in texts(at.sidebar.caption)


def test_url_text_is_never_markup(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, corpus="small", text="[x](javascript:alert(1)) <b>", topic="0")
    assert "\\[x\\]\\(javascript\\:alert" in texts(at.sidebar.caption)
    assert not re.search(r"(?<!\\)[<\[]", texts(at.sidebar.caption))


def test_a_filter_that_keeps_nothing(small_artifacts, monkeypatch):
    for page in (None, "pages/trends.py"):
        at = run(small_artifacts, monkeypatch, page, corpus="small", text="zzzzqqqq")
        assert "No paper matches the filters" in texts(at.info)


def test_page_parameter_opens_that_page(small_artifacts, monkeypatch):
    at = run(small_artifacts, monkeypatch, corpus="small", page="topics", topic="1")
    assert at.title[0].value == "Topics"
    assert "Topic 1 · " in texts(at.header)


@pytest.mark.parametrize("name", ["../../etc", "..", "%2e%2e", "nope"])
def test_bad_corpus_names_are_refused_kindly(small_artifacts, monkeypatch, name):
    at = run(small_artifacts, monkeypatch, corpus=name)
    message = texts(at.error)
    assert "cannot be opened" in message
    assert "small" in [link.value for link in main_links(at)]  # a way out
    assert not at.get("plotly_chart")


def test_broken_and_old_corpora_say_what_to_do(mixed_root, monkeypatch):
    at = run(mixed_root, monkeypatch, corpus="old")
    assert "schema" in texts(at.error) and "Rebuild" in texts(at.error)
    at = run(mixed_root, monkeypatch, corpus="broken")
    assert "topics.parquet is damaged" in unescape(texts(at.error))
    at = run(mixed_root, monkeypatch, corpus="small")  # the others keep working
    assert at.title[0].value == "Topic map" and not at.error


def test_no_corpus_at_all(tmp_path, monkeypatch):
    at = run(tmp_path / "empty", monkeypatch)
    message = texts(at.info)
    assert "no corpus" in message and "python -m pipeline build" in message and "make run" in message


@pytest.fixture(scope="module")
def sample_root(tmp_path_factory) -> Path:
    """Only the bundled sample (built with the test encoder), as a newcomer's first start has it."""
    from pipeline.build.build import build
    from pipeline.core.inputs import default_inputs
    from tests.conftest import TEST_ENCODER, fast_config

    root = tmp_path_factory.mktemp("sample")
    build(default_inputs(), "neurips2026", root, fast_config(), encoder=TEST_ENCODER)
    return root


def test_the_first_screen_says_it_is_a_sample_until_a_second_corpus_exists(sample_root, small_artifacts, monkeypatch):
    at = run(sample_root, monkeypatch)
    note = unescape(texts(at.main.markdown))
    assert "A 38-abstract sample" in note and "labels marked (?) are weak" in note
    links = [link for link in at.main.get("page_link") if link.proto.label == "Add your own conference"]
    assert links and links[0].proto.page.endswith("add")  # one click to their own conference
    assert "python -m pipeline build papers.csv --name myconf" in links[0].proto.help  # or the command
    at = run(sample_root, monkeypatch, "pages/topics.py")  # on every page
    assert "A 38-abstract sample" in unescape(texts(at.main.markdown))
    # a read-only viewer is told the command, not offered a page they cannot use
    at = run(sample_root, monkeypatch, args=("--read-only",))
    note = unescape(texts(at.main.markdown))
    assert "`python -m pipeline build papers.csv --name myconf` on your machine" in note
    assert not [link for link in at.main.get("page_link") if link.proto.label == "Add your own conference"]
    # a corpus of one's own is not a sample; with a second corpus the note is gone
    at = run(small_artifacts, monkeypatch)
    assert "-abstract sample" not in unescape(texts(at.main.markdown))
    shutil.copytree(artifacts.corpus_path(small_artifacts, "small"), sample_root / "small")
    caches.reread_corpus_list()  # the app re-reads the list every few seconds; the test does not wait
    at = run(sample_root, monkeypatch)
    assert "-abstract sample" not in unescape(texts(at.main.markdown))
