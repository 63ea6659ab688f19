"""Ingest: every format, column recognition, the bundled corpus, and bad input at row, field and file level."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.config import ColumnMap, IngestParams
from pipeline.core.errors import InputError
from pipeline.core.schema import INGEST_REPORT_COLUMNS
from pipeline.ingest.clean import clean_text
from pipeline.ingest.ingest import IngestResult, detect_format, ingest
from pipeline.ingest.ingest_papers import MAX_MODEL_CHARS, PAPER_COLUMNS

INPUTS = Path(__file__).parent / "fixtures" / "inputs"
SEEDS = Path(__file__).resolve().parent.parent / "assets" / "neurips2026"

TITLES = [
    "Sparse Attention for Long Documents",
    "Graph Neural Networks at Scale",
    "Résumé of Unicode Names 🚀",
    "Untitled Work Without an Identifier",
]


def words(i: int, n: int = 12) -> str:
    """A distinct abstract of ``n`` words."""
    return " ".join([f"Paper{i}", "studies"] + [f"topic{i}x{k}" for k in range(n - 2)]) + "."


def write(folder: Path, name: str, content: str | bytes, encoding: str = "utf-8") -> Path:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode(encoding))
    return path


def csv_of(rows: list[list[str]], header: str = "id,title,abstract") -> str:
    return header + "\n" + "".join(",".join(row) + "\n" for row in rows)


def gzipped(folder: Path, path: Path) -> Path:
    out = folder / (path.name + ".gz")
    out.write_bytes(gzip.compress(path.read_bytes()))
    return out


def parquet_fixture(folder: Path) -> Path:
    frame = pd.DataFrame(json.loads((INPUTS / "papers.json").read_text(encoding="utf-8")))
    frame["id"] = [None if v is None else str(v) for v in frame["id"]]
    frame["year"] = [None if v is None else str(v) for v in frame["year"]]
    path = folder / "papers.parquet"
    frame.to_parquet(path)
    return path


def reasons(result: IngestResult) -> list[tuple[int, str]]:
    return list(zip(result.report["source_row"], result.report["reason"], strict=True))


def fixture_path(name: str, folder: Path) -> Path:
    if name == "papers.parquet":
        return parquet_fixture(folder)
    if name.endswith(".gz"):
        return gzipped(folder, fixture_path(name.removesuffix(".gz"), folder))
    return INPUTS / name


# --- formats ------------------------------------------------------------------------------------

FORMAT_FILES = {
    "papers.csv": "csv",
    "papers.tsv": "tsv",
    "papers.json": "json",
    "papers_records.json": "json",
    "papers.jsonl": "jsonl",
    "papers.parquet": "parquet",
}


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", list(FORMAT_FILES))
def test_every_format_gives_the_same_papers(name, gz, tmp_path):
    path = fixture_path(name + (".gz" if gz else ""), tmp_path)
    result = ingest([path])
    papers = result.papers

    assert list(papers.columns) == PAPER_COLUMNS
    assert papers["title"].tolist() == TITLES
    assert not papers["title_derived"].any()
    assert papers["doc_id"].tolist()[:3] == ["p-1", "p-2-x", "3"]
    assert re.fullmatch(r"p[0-9a-f]{10}", papers["doc_id"].iat[3])
    assert papers["abstract"].iat[0].count("\n") == 1  # the quoted CSV field spans two lines
    assert '"quoted"' in papers["abstract"].iat[0]
    assert papers["year"].tolist()[:3] == [2023, 2022, 2024] and pd.isna(papers["year"].iat[3])
    assert papers["venue"].tolist()[:3] == ["ICML", "NeurIPS", "ICLR"] and pd.isna(papers["venue"].iat[3])
    assert papers["authors"].iat[0] == "Ada Lovelace; Alan Turing"
    assert pd.isna(papers["authors"].iat[2])
    assert papers["keywords"].iat[0] == "attention; long context"
    assert papers["url"].iat[1] == "https://example.org/p2"
    assert papers["source_id"].tolist()[:3] == ["p-1", "p 2/x", "3"]
    assert papers["source_row"].tolist() == [1, 2, 3, 4]
    assert [json.loads(e) for e in papers["extra"]] == [
        {"status": "Poster"},
        {"status": "Oral"},
        {"status": None},
        {"status": "Poster"},
    ]
    assert papers["model_text"].iat[2] == (
        "Résumé of Unicode Names 🚀. We show that -divergences with tempered weights recover café-style "
        "estimators 🚀 on three benchmarks."
    )
    info = result.inputs[0]
    assert info.format == FORMAT_FILES[name] + (".gz" if gz else "")
    assert (info.rows_read, info.rows_kept) == (4, 4)
    assert info.columns["abstract"] == "abstract" and info.columns["url"] == "url"
    assert info.sha256 and info.bytes == path.stat().st_size
    assert result.report.empty


def test_papers_and_report_dtypes():
    result = ingest([INPUTS / "papers.csv"])
    dtypes = result.papers.dtypes
    for column in ("doc_id", "title", "abstract", "model_text", "venue", "authors", "url", "source_id"):
        assert pd.api.types.is_string_dtype(dtypes[column]), column
    assert pd.api.types.is_bool_dtype(dtypes["title_derived"])
    assert dtypes["year"] == "Int16"
    assert dtypes["source_row"] == np.int32
    assert list(result.report.columns) == list(INGEST_REPORT_COLUMNS)
    assert result.report["source_row"].dtype == np.int32
    assert json.loads(json.dumps(result.inputs[0].to_dict()))["format"] == "csv"


def test_column_oriented_json(tmp_path):
    columns = {"abstract": [words(1), words(2)], "title": ["One", "Two"], "year": [2020.0, 2021.0]}
    path = write(tmp_path, "cols.json", json.dumps(columns))
    papers = ingest([path]).papers
    assert papers["title"].tolist() == ["One", "Two"]
    assert papers["year"].tolist() == [2020, 2021]


def test_json_records_keyed_by_id_and_bare_strings(tmp_path):
    keyed = write(tmp_path, "keyed.json", json.dumps({"a1": {"abstract": words(1)}, "a2": {"abstract": words(2)}}))
    assert ingest([keyed]).papers["doc_id"].tolist() == ["a1", "a2"]
    strings = write(tmp_path, "strings.jsonl", json.dumps(words(3)) + "\n" + json.dumps(words(4)) + "\n")
    papers = ingest([strings]).papers
    assert len(papers) == 2 and papers["title_derived"].all()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("id,abstract\n1,hello\n2,world\n", "csv"),
        ("id\tabstract\n1\thello\n2\tworld\n", "tsv"),
        ('[{"abstract": "x"}]', "json"),
        ('{"abstract": "x"}\n{"abstract": "y"}\n', "jsonl"),
        ('{"papers": [\n{"abstract": "x"}]}', "json"),
        ("NeurIPS 2026 Papers\n\nAn abstract, with a comma.\n\nAnother one.\n", "text"),
    ],
)
def test_detect_format_sniffs_content_without_a_known_extension(content, expected, tmp_path):
    path = write(tmp_path, "input.dat", content)
    assert detect_format(path) == expected
    assert detect_format(gzipped(tmp_path, path)) == expected + ".gz"


def test_detect_format_by_extension(tmp_path):
    assert detect_format(INPUTS / "papers.tsv") == "tsv"
    assert detect_format(parquet_fixture(tmp_path)) == "parquet"
    path = write(tmp_path, "p.bin", parquet_fixture(tmp_path).read_bytes())
    assert detect_format(path) == "parquet"
    with pytest.raises(InputError, match="not found"):
        detect_format(tmp_path / "nope.csv")


# --- plain text and the bundled corpus ------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_text_file_with_title_line(gz, tmp_path):
    result = ingest([gzipped(tmp_path, INPUTS / "abstracts.txt") if gz else INPUTS / "abstracts.txt"])
    assert result.inputs[0].format == ("text.gz" if gz else "text")
    papers = result.papers
    assert len(papers) == 3
    assert papers["venue"].unique().tolist() == ["ICML"]
    assert papers["year"].unique().tolist() == [2024]
    assert papers["title_derived"].all()
    assert papers["title"].iat[0] == "FlashSort: cache-aware sorting network for accelerators"
    # A paragraph's lines are joined with spaces; rows are paragraph numbers (the title line is 1).
    assert (
        papers["abstract"]
        .iat[0]
        .startswith("We introduce FlashSort, a cache-aware sorting network for accelerators that sorts")
    )
    assert papers["source_row"].tolist() == [2, 3, 5]
    assert papers["model_text"].iat[1] == clean_text(papers["abstract"].iat[1])
    assert reasons(result) == [(4, "short_abstract")]
    assert result.inputs[0].columns == {"abstract": "paragraph", "venue": "title line", "year": "title line"}


def test_text_file_without_title_line(tmp_path):
    path = write(tmp_path, "plain.txt", f"{words(1)}\n\n{words(2)}\n")
    papers = ingest([path]).papers
    assert len(papers) == 2
    assert papers["venue"].isna().all() and papers["year"].isna().all()
    assert papers["source_row"].tolist() == [1, 2]


def test_seed_corpus():
    result = ingest(sorted(SEEDS.glob("*.txt")))
    papers = result.papers
    assert len(papers) == 38
    assert [i.rows_kept for i in result.inputs] == [19, 19]
    assert (papers["venue"] == "NeurIPS").all()
    assert (papers["year"] == 2026).all()
    assert papers["title_derived"].all()
    assert papers["title"].is_unique and papers["doc_id"].is_unique
    assert papers["doc_id"].str.fullmatch(r"p[0-9a-f]{10}").all()
    assert (papers["model_text"] == papers["abstract"].map(clean_text)).all()
    assert not papers["model_text"].str.contains("anonymous.4open.science|https?://").any()
    assert result.report.empty


def test_params_fill_venue_and_year():
    papers = ingest([INPUTS / "papers.csv"], IngestParams(venue="Workshop", year=1999)).papers
    assert papers["venue"].tolist() == ["ICML", "NeurIPS", "ICLR", "Workshop"]
    assert papers["year"].tolist() == [2023, 2022, 2024, 1999]


# --- columns --------------------------------------------------------------------------------------


def test_columns_are_recognised_by_common_names(tmp_path):
    header = "Paper_ID,Paper Title,Summary,Publication Date,Conference,Author,Link,Primary_Area,Tags,Notes"
    row = ["x1", "A Title", words(1), "May 2023", "ICML", "A. Author", "https://a.b/c", "Vision", "a; b", "n"]
    result = ingest([write(tmp_path, "p.csv", csv_of([row], header))])
    paper = result.papers.iloc[0]
    assert (paper["doc_id"], paper["title"], paper["year"], paper["venue"]) == ("x1", "A Title", 2023, "ICML")
    assert (paper["authors"], paper["url"], paper["label"], paper["keywords"]) == (
        "A. Author",
        "https://a.b/c",
        "Vision",
        "a; b",
    )
    assert json.loads(paper["extra"]) == {"Notes": "n"}
    assert result.inputs[0].columns["abstract"] == "Summary"


def test_explicit_column_map(tmp_path):
    path = write(tmp_path, "p.csv", csv_of([["1", "Headline", words(1), "Body text here"]], "key,head,body,abstract"))
    params = IngestParams(columns=ColumnMap(abstract="BODY", title="head", id="key"))
    paper = ingest([path], params).papers.iloc[0]
    assert paper["abstract"] == words(1) and paper["title"] == "Headline" and paper["doc_id"] == "1"
    assert json.loads(paper["extra"]) == {"abstract": "Body text here"}
    with pytest.raises(InputError, match=r"p\.csv: has no column 'summary'.*key, head, body, abstract"):
        ingest([path], IngestParams(columns=ColumnMap(abstract="summary")))


def test_no_abstract_column_lists_columns_and_how_to_map(tmp_path):
    path = write(tmp_path, "notes.csv", csv_of([["1", "T", words(1, 30)]], "id,name,body"))
    with pytest.raises(InputError) as err:
        ingest([path])
    message = str(err.value)
    assert "notes.csv" in message and "no abstract column" in message
    assert "id, name, body" in message and "--abstract-column NAME" in message
    assert "'body' holds long texts" in message


# --- row level: skipped -------------------------------------------------------------------------


def test_bad_rows_are_skipped_and_reported_and_good_rows_survive(tmp_path):
    rows = [
        ["1", "Good", words(1)],
        ["2", "Empty", ""],
        ["3", "Short", "Too short."],
        ["4", "Copy", words(1)],
        ["5", "Near copy", words(1).upper().replace(" ", "  ") + "!"],
        ["6", "Markup only", "$x^2$ <b></b>"],
        ["7", "Good too", words(7)],
    ]
    result = ingest([write(tmp_path, "mixed.csv", csv_of(rows))])
    assert result.papers["doc_id"].tolist() == ["1", "7"]
    assert reasons(result) == [
        (2, "empty_abstract"),
        (3, "short_abstract"),
        (4, "duplicate"),
        (5, "near_duplicate"),
        (6, "empty_abstract"),
    ]
    report = result.report.set_index("source_row")
    assert (report["action"] == "skipped").all()
    assert "doc_id 1 (mixed.csv row 1)" in report.loc[4, "detail"]
    assert "fewer than 8" in report.loc[3, "detail"]
    assert result.summary() == {
        "files": 1,
        "read": 7,
        "kept": 2,
        "skipped": 5,
        "changed": 0,
        "empty_abstract": 2,
        "short_abstract": 1,
        "duplicate": 1,
        "near_duplicate": 1,
    }


def test_min_words_and_dedupe_params(tmp_path):
    path = write(tmp_path, "p.csv", csv_of([["1", "A", "Three short words."], ["2", "B", "Three short words."]]))
    assert len(ingest([path], IngestParams(min_words=3, dedupe=False)).papers) == 2
    assert len(ingest([path], IngestParams(min_words=3)).papers) == 1


def test_duplicates_across_files_keep_the_first(tmp_path):
    first = write(tmp_path, "a.csv", csv_of([["1", "A", words(1)], ["2", "B", words(2)]]))
    second = write(tmp_path, "b.jsonl", json.dumps({"abstract": words(2)}) + "\n" + json.dumps({"abstract": words(3)}))
    result = ingest([first, second])
    assert result.papers["source_file"].tolist() == ["a.csv", "a.csv", "b.jsonl"]
    assert reasons(result) == [(1, "duplicate")]
    assert result.report["source_file"].iat[0] == "b.jsonl"
    assert "doc_id 2 (a.csv row 2)" in result.report["detail"].iat[0]
    assert [i.rows_kept for i in result.inputs] == [2, 1]


def test_all_identical_papers_keep_one(tmp_path):
    path = write(tmp_path, "same.jsonl", "".join(json.dumps({"abstract": words(1)}) + "\n" for _ in range(5)))
    result = ingest([path])
    assert len(result.papers) == 1
    assert reasons(result) == [(row, "duplicate") for row in range(2, 6)]


def test_one_paper(tmp_path):
    result = ingest([write(tmp_path, "one.json", json.dumps([{"abstract": words(1)}]))])
    assert len(result.papers) == 1 and result.papers["title_derived"].iat[0]


def test_bad_json_lines_are_reported_by_line_number(tmp_path):
    lines = [
        json.dumps({"abstract": words(1)}),
        '{"abstract": "broken',
        "",
        "[1, 2]",
        json.dumps({"abstract": words(5)}),
    ]
    result = ingest([write(tmp_path, "p.jsonl", "\n".join(lines))])
    assert result.papers["source_row"].tolist() == [1, 5]
    assert reasons(result) == [(2, "bad_record"), (4, "bad_record")]
    assert "line 2 is not valid JSON" in result.report["detail"].iat[0]
    assert result.inputs[0].rows_read == 4


# --- field level: changed ----------------------------------------------------------------------


def test_bad_year_keeps_the_paper_without_a_year(tmp_path):
    rows = [
        ["1", words(1), "2023-05-01"],
        ["2", words(2), "soon"],
        ["3", words(3), "2023.0"],
        ["4", words(4), "n/a"],
    ]
    result = ingest([write(tmp_path, "y.csv", csv_of(rows, "id,abstract,date"))])
    years = result.papers["year"]
    assert years.iat[0] == 2023 and pd.isna(years.iat[1]) and years.iat[2] == 2023 and pd.isna(years.iat[3])
    assert reasons(result) == [(2, "bad_year")]
    assert result.report["action"].iat[0] == "changed" and "'soon'" in result.report["detail"].iat[0]


def test_ragged_rows_are_kept_when_they_have_an_abstract(tmp_path):
    content = "id,abstract,year\n1," + words(1) + ",2020\n2," + words(2) + "\n3," + words(3) + ",2021,extra,more\n4\n"
    result = ingest([write(tmp_path, "r.csv", content)])
    assert result.papers["doc_id"].tolist() == ["1", "2", "3"]
    assert reasons(result) == [(2, "ragged_row"), (3, "ragged_row"), (4, "ragged_row"), (4, "empty_abstract")]
    assert json.loads(result.papers["extra"].iat[2]) == {"_overflow": ["extra", "more"]}
    assert "row has 2 fields, the header has 3" in result.report["detail"].iat[0]


def test_long_abstract_keeps_display_text_and_cuts_model_text(tmp_path):
    abstract = " ".join(f"w{i % 1000}" for i in range(25_000))  # about 125,000 characters
    assert len(abstract) > 100_000
    result = ingest([write(tmp_path, "long.json", json.dumps([{"abstract": abstract}]))])
    paper = result.papers.iloc[0]
    assert paper["abstract"] == abstract
    assert len(paper["model_text"]) <= MAX_MODEL_CHARS
    assert abstract.startswith(paper["model_text"])
    assert reasons(result) == [(1, "long_abstract")]


def test_duplicate_ids_with_different_abstracts_get_suffixes(tmp_path):
    rows = [["a", "A", words(1)], ["a", "B", words(2)], ["a-2", "C", words(3)], ["a", "D", words(4)]]
    result = ingest([write(tmp_path, "ids.csv", csv_of(rows))])
    assert result.papers["doc_id"].tolist() == ["a", "a-3", "a-2", "a-4"]
    assert result.papers["source_id"].tolist() == ["a", "a", "a-2", "a"]
    assert reasons(result) == [(2, "duplicate_id"), (4, "duplicate_id")]
    assert "'a-3'" in result.report["detail"].iat[0]


def test_html_and_emoji_are_kept_for_display_and_stripped_for_modelling(tmp_path):
    abstract = "We <b>boldly</b> claim &amp; prove 🚀 results <script>alert('x')</script> for all graphs here."
    paper = ingest([write(tmp_path, "h.json", json.dumps([{"title": "<i>T</i>", "abstract": abstract}]))]).papers.iloc[
        0
    ]
    assert paper["abstract"] == abstract
    assert paper["title"] == "<i>T</i>"
    assert paper["model_text"] == "T. We boldly claim & prove 🚀 results for all graphs here."


# --- encodings ----------------------------------------------------------------------------------


def test_latin1_file_falls_back_and_says_so(tmp_path):
    path = write(tmp_path, "latin.csv", csv_of([["1", "Café", words(1) + " Café crème."]]), encoding="latin-1")
    result = ingest([path])
    assert result.papers["title"].iat[0] == "Café"
    assert result.inputs[0].encoding == "cp1252"
    assert reasons(result) == [(0, "encoding")]
    assert "cp1252" in result.report["detail"].iat[0]


def test_utf8_with_a_stray_legacy_byte_keeps_the_utf8(tmp_path):
    text = csv_of([["1", "Zürich", words(1)], ["2", "Mañana", words(2) + " caf"]])
    path = write(tmp_path, "mixed.csv", text.encode("utf-8").replace(b" caf", b" caf\xe9"))
    result = ingest([path])
    assert result.papers["title"].tolist() == ["Zürich", "Mañana"]
    assert result.papers["abstract"].iat[1].endswith("café")
    assert reasons(result) == [(0, "encoding")]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_text_with_a_byte_order_mark(encoding, tmp_path):
    path = write(tmp_path, "bom.csv", csv_of([["1", "Ünïcode", words(1)]]), encoding=encoding)
    result = ingest([path])
    assert result.papers["doc_id"].iat[0] == "1"  # the BOM is not part of the first column's name
    assert result.papers["title"].iat[0] == "Ünïcode"
    assert result.inputs[0].encoding == encoding
    assert result.report.empty


def test_utf16_text_file(tmp_path):
    path = write(tmp_path, "u16.txt", f"ACL 2021 Papers\n\n{words(1)}\n", encoding="utf-16")
    papers = ingest([path]).papers
    assert papers["venue"].iat[0] == "ACL" and papers["year"].iat[0] == 2021


def test_nul_bytes_are_removed(tmp_path):
    path = write(tmp_path, "nul.jsonl", (json.dumps({"abstract": words(1)}) + "\n").replace("Paper1", "Pa\x00per1"))
    result = ingest([path])
    assert result.papers["abstract"].iat[0] == words(1)
    assert reasons(result) == [(0, "nul_bytes")]


# --- file level: InputError ----------------------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nope\.csv: file not found"):
        ingest([tmp_path / "nope.csv"])


@pytest.mark.parametrize(
    ("name", "content", "found"),
    [
        ("empty.csv", b"", "is empty"),
        ("blank.txt", b"\n \n\t\n", "is empty"),
        ("header.csv", b"id,title,abstract\n", "has a header"),
        ("random.txt", bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8)), "binary data"),
        ("image.csv", b"\x89PNG\r\n\x1a\n" + bytes(200), "a PNG image"),
        ("sheet.csv", b"PK\x03\x04" + bytes(100), "export it as CSV"),
        ("bad.json", b'[{"abstract": "x"},', "is not valid JSON"),
        ("obj.json", b'{"count": 3}', "expected a JSON array of paper records"),
        ("bad.parquet", b"not parquet at all", "expected a Parquet file"),
        ("broken.csv.gz", gzip.compress(b"id,abstract\n" * 50)[:30], "expected gzip-compressed data"),
    ],
)
def test_unusable_files_raise_an_input_error_naming_the_file(name, content, found, tmp_path):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as err:
        ingest([path])
    assert str(err.value).startswith(f"{path}: ")
    assert found in str(err.value)


def test_file_without_usable_rows_says_how_many_and_why(tmp_path):
    path = write(tmp_path, "short.csv", csv_of([["1", "A", "Too short."], ["2", "B", ""], ["3", "C", "Also short."]]))
    with pytest.raises(InputError) as err:
        ingest([path])
    message = str(err.value)
    assert "short.csv: none of its 3 rows can be used" in message
    assert "short_abstract 2" in message and "empty_abstract 1" in message and "--min-words" in message
    assert "First problem, row 1: abstract has 2 word(s)" in message


def test_invalid_json_names_the_line_and_column(tmp_path):
    path = write(tmp_path, "bad.json", '[\n {"abstract": "x"},\n {"abstract": }\n]')
    with pytest.raises(InputError, match=r"bad\.json: is not valid JSON: Expecting value at line 3, column 15"):
        ingest([path])


def test_one_unusable_file_stops_the_whole_ingest(tmp_path):
    good = INPUTS / "papers.csv"
    bad = write(tmp_path, "bad.jsonl", '{"abstract": \n')
    with pytest.raises(InputError, match=r"bad\.jsonl: none of its 1 rows can be used \(bad_record 1\)"):
        ingest([good, bad])


def test_a_directory_is_not_an_input(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        ingest([tmp_path])


def test_same_file_name_in_two_folders_is_told_apart(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(INPUTS / "abstracts.txt", tmp_path / folder / "abstracts.txt")
    result = ingest([tmp_path / "a" / "abstracts.txt", tmp_path / "b" / "abstracts.txt"])
    assert result.papers["source_file"].unique().tolist() == [str(tmp_path / "a" / "abstracts.txt")]
    assert set(result.report["reason"]) == {"short_abstract", "duplicate"}


# --- scale --------------------------------------------------------------------------------------


def test_progress_counts_every_row(tmp_path):
    # Its speed (against pandas.read_csv of the same file) is measured in benchmarks/bench_ingest.py.
    rng = np.random.default_rng(1)
    vocab = np.array([f"term{i}" for i in range(3000)])
    rows = [[str(i), f"Title {i}", " ".join(rng.choice(vocab, 150))] for i in range(3000)]
    path = write(tmp_path, "big.csv", csv_of(rows))
    calls = []
    result = ingest([path], progress=lambda done, total: calls.append((done, total)))
    assert len(result.papers) == 3000
    assert calls[-1] == (3000, 3000) and all(t == 3000 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


# --- never a traceback ----------------------------------------------------------------------------

LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(["2023", "May 2023", "n/a", "", words(1), words(2)]),
)
RECORDS = st.lists(
    st.dictionaries(
        st.sampled_from(["id", "ID", "abstract", "Summary", "title", "year", "authors", "tags", "other"]),
        st.one_of(LEAF, st.lists(LEAF, max_size=3), st.dictionaries(st.text(max_size=3), LEAF, max_size=2)),
        min_size=1,
        max_size=5,
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RECORDS, st.sampled_from(["json", "jsonl", "csv"]))
def test_any_records_give_papers_or_an_input_error(records, fmt):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"fuzz.{fmt}"
        if fmt == "json":
            path.write_text(json.dumps(records))
        elif fmt == "jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
        else:
            pd.DataFrame(records).to_csv(path, index=False)
        try:
            result = ingest([path])
        except InputError as e:
            assert str(e).startswith(str(path))
            return
    papers = result.papers
    assert list(papers.columns) == PAPER_COLUMNS and len(papers) > 0
    assert papers["doc_id"].is_unique
    assert (papers["abstract"].str.len() > 0).all() and (papers["title"].str.len() > 0).all()
    assert all(isinstance(json.loads(e), dict) for e in papers["extra"])


def test_abstracts_in_unspaced_scripts_are_not_too_short(tmp_path):
    path = tmp_path / "zh.jsonl"
    path.write_text(
        json.dumps(
            {"title": "图神经网络", "abstract": "我们研究用于分子性质预测的图神经网络，并提出一种新的消息传递方法。"},
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    result = ingest([path])
    assert len(result.papers) == 1 and result.summary()["skipped"] == 0


# --- streaming: the same papers and report as reading every file first -----------------------------

#: Digests of ``papers`` and ``report`` (JSON records) as the ingest that parsed every file before
#: cleaning any (before files were streamed one at a time) gave them for the fixture corpora.
BEFORE_STREAMING = {
    "small_corpus": (137, "e18904a9a12839fd", "4f53cda18c2baa0c"),
    "ijcai_labelled": (1603, "7b960afdbd1f8ee8", "4f53cda18c2baa0c"),
    # duplicates across six formats; since CLEAN_VERSION 2 its "$Q$-learning" and "$f$-divergence"
    # keep their letter in model_text (before: "16ef290ee0fe788f", the only difference)
    "inputs_all": (39, "763e78a5566ff101", "ec00f4217ac251c8"),
    "small_twice": (140, "66927e3cd4b51112", "5668f9456a747216"),
    "bundled": (38, "44ae555125966b7c", "4f53cda18c2baa0c"),  # paper 000: a title without a hole (issue 19)
}


def _digest(frame: pd.DataFrame) -> str:
    import hashlib

    return hashlib.sha256(frame.to_json(orient="records", force_ascii=False).encode()).hexdigest()[:16]


@pytest.mark.parametrize("case", sorted(BEFORE_STREAMING))
def test_streamed_ingest_gives_the_papers_and_report_of_reading_all_files_first(case):
    fixtures = INPUTS.parent
    paths = {
        "small_corpus": [fixtures / "small_corpus.jsonl"],
        "ijcai_labelled": [fixtures / "ijcai_labelled.jsonl.gz"],
        "inputs_all": sorted(INPUTS.iterdir()),
        "small_twice": [fixtures / "small_corpus.jsonl", sorted(INPUTS.iterdir())[0]],
        "bundled": sorted(SEEDS.iterdir()),
    }[case]
    result = ingest(paths)
    assert (len(result.papers), _digest(result.papers), _digest(result.report)) == BEFORE_STREAMING[case]


def test_a_missing_later_file_fails_before_any_file_is_cleaned(tmp_path):
    calls = []
    with pytest.raises(InputError, match="missing.csv: file not found"):
        ingest([INPUTS / "papers.csv", tmp_path / "missing.csv"], progress=lambda d, t: calls.append((d, t)))
    assert calls == []
    empty = write(tmp_path, "empty.csv", "")
    with pytest.raises(InputError, match="empty.csv: is empty"):
        ingest([INPUTS / "papers.csv", empty], progress=lambda d, t: calls.append((d, t)))
    assert calls == []


def test_progress_over_several_files_ends_at_the_rows_read(tmp_path):
    paths = [
        write(tmp_path, f"part{k}.csv", csv_of([[f"{k}-{i}", f"T {k} {i}", words(100 * k + i)] for i in range(7)]))
        for k in range(3)
    ]
    calls = []
    result = ingest(paths, progress=lambda d, t: calls.append((d, t)))
    assert len(result.papers) == 21
    assert calls[-1] == (21, 21)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
