"""Adding a corpus from the browser, without a browser: safe names, previews that read files as the
build does, the editor-only write path, the queue and its worker (real ``python -m pipeline build``
subprocesses with the hashing test embedder), incremental additions and the page through AppTest.

Browser checks of the same page (upload, map the columns, build, open the map; cancel; a read-only
server) are in ``tests/test_add_browser.py``.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from explorer.services import job_progress, job_queue, job_runner, jobs
from explorer.state import access, data, uploads
from explorer.state.access import VIEWER, Access, ReadOnlyError
from pipeline.core import artifacts
from pipeline.ingest.ingest import ingest
from tests.conftest import FIXTURES, SMALL_CORPUS
from tests.test_pages import run, texts, unescape
from tests.test_share import files_under

EDITOR = Access()


DRIVER = Path(__file__).resolve().parent / "build_driver.py"


@pytest.fixture(autouse=True)
def fast_builds(monkeypatch) -> None:
    """Builds started from the browser run the CLI through the tests' driver, which injects the
    deterministic hashing embedder (no setting can select it). The only place these tests choose
    the test encoder; browser tests get the same from tests/serve_app.py."""
    monkeypatch.setattr(job_runner, "BUILD_PROGRAM", (str(DRIVER), "--"))


def small_rows() -> list[dict]:
    return [json.loads(line) for line in SMALL_CORPUS.read_text(encoding="utf-8").splitlines()]


def new_rows(n: int) -> list[dict]:
    """``n`` IJCAI papers that are not in the small fixture corpus."""
    known = {r["abstract"] for r in small_rows()}
    with gzip.open(FIXTURES / "ijcai_labelled.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = (json.loads(line) for line in handle)
        return [r for r in rows if r["abstract"] not in known][:n]


def unusual_csv(rows: list[dict], short: tuple[int, ...] = ()) -> bytes:
    """A spreadsheet whose column names the build does not recognise; rows in ``short`` have a
    two-word abstract (the build skips them)."""
    frame = pd.DataFrame(
        {
            "Headline": [r["title"] for r in rows],
            "Paper Body": [r["abstract"] for r in rows],
            "Yr": [r.get("year") for r in rows],
            "Where": "IJCAI",
        }
    )
    for i in short:
        frame.loc[i, "Paper Body"] = "too short"
    return frame.to_csv(index=False).encode("utf-8")


def upload(name: str, data: bytes) -> jobs.Upload:
    return jobs.Upload(name, data, uploads.preview(name, data))


UNUSUAL = {"abstract": "Paper Body", "title": "Headline", "year": "Yr", "venue": "Where"}


# ------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("papers.csv", "papers.csv"),
        ("reading group (week 3).CSV", "reading-group-week-3.CSV"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\windows\\win.ini", "win-ini"),
        ("/abs/path/to/x.jsonl.gz", "x.jsonl.gz"),
        (".bashrc", "bashrc"),
        ("-rf.csv", "rf.csv"),
        ("résumé des papiers.jsonl", "resume-des-papiers.jsonl"),
        ("run.py", "run-py"),
        ("a\x00b\nc.tsv", "a-b-c.tsv"),
        ("", "upload"),
        ("....", "upload"),
        ("..", "upload"),
        ("x.csv/..", "upload"),
    ],
)
def test_stored_names_are_plain_and_stay_in_their_folder(given, stored, tmp_path):
    name = uploads.safe_filename(given)
    assert name == stored
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name)
    assert (tmp_path / name).resolve().parent == tmp_path.resolve()


def test_huge_names_are_cut_but_keep_their_format():
    name = uploads.safe_filename("a" * 5000 + ".csv.gz")
    assert len(name) <= uploads.MAX_NAME and name.endswith(".csv.gz")
    assert uploads.unique_name(name, {name}) != name and len(uploads.unique_name(name, {name})) <= uploads.MAX_NAME
    assert uploads.unique_name("papers.csv", {"PAPERS.csv", "papers-2.csv"}) == "papers-3.csv"
    assert uploads.default_corpus_name("NeurIPS 2025 (accepted).jsonl.gz") == "NeurIPS-2025-accepted"


# ------------------------------------------------------------------------------------------
# Previews read files as the build does
# ------------------------------------------------------------------------------------------


def _write_formats(folder: Path) -> dict[str, Path]:
    rows = small_rows()[:12]
    frame = pd.DataFrame({"title": [r["title"] for r in rows], "summary": [r["abstract"] for r in rows]})
    frame["publication_year"] = [r["year"] for r in rows]
    out = {}
    out["a.csv"] = folder / "a.csv"
    frame.to_csv(out["a.csv"], index=False)
    out["a.tsv"] = folder / "a.tsv"
    frame.to_csv(out["a.tsv"], index=False, sep="\t")
    out["a.json"] = folder / "a.json"
    out["a.json"].write_text(json.dumps({"papers": frame.to_dict("records")}))
    out["a.jsonl.gz"] = folder / "a.jsonl.gz"
    out["a.jsonl.gz"].write_bytes(gzip.compress(frame.to_json(orient="records", lines=True).encode()))
    out["a.parquet"] = folder / "a.parquet"
    frame.to_parquet(out["a.parquet"])
    out["a.txt"] = folder / "a.txt"
    out["a.txt"].write_text("NeurIPS 2026 Papers\n\n" + "\n\n".join(frame["summary"]))
    out["noext"] = folder / "noext"
    frame.to_csv(out["noext"], index=False)
    return out


def test_a_preview_reads_every_format_and_finds_the_columns_the_build_uses(tmp_path):
    for name, path in _write_formats(tmp_path).items():
        p = uploads.preview(name, path.read_bytes())
        assert p.ok, (name, p.error)
        built = ingest([path])
        assert p.rows == built.inputs[0].rows_read == 12, name
        assert p.format == built.inputs[0].format, name
        mapping, error = uploads.resolve(p, {})
        assert error is None and mapping == built.inputs[0].columns, name
    p = uploads.preview("a.txt", (tmp_path / "a.txt").read_bytes())
    assert p.defaults == {"venue": "NeurIPS", "year": 2026}


def test_a_preview_says_what_the_build_would_say_about_a_bad_file(tmp_path):
    cases = {
        "slides.pdf": b"%PDF-1.7 binary stuff",
        "empty.csv": b"",
        "broken.json": b'[{"abstract": "x"',
        "truncated.csv.gz": gzip.compress(b"abstract\nsome text here")[:12],
        "header-only.csv": b"title,abstract\n",
    }
    for name, raw in cases.items():
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(Exception) as built:
            ingest([tmp_path / name])
        p = uploads.preview(name, raw)
        assert not p.ok, name
        assert p.error == str(built.value).replace(str(tmp_path / name), name), name  # the build's own words


def test_unusual_columns_are_mapped_by_hand_and_the_abstract_is_guessed(tmp_path):
    p = uploads.preview("group.csv", unusual_csv(new_rows(20)))
    mapping, error = uploads.resolve(p, {})
    assert mapping == {} and "found no abstract column" in error and "'Paper Body'" in error
    assert "the Abstract list below" in error and "--abstract-column" not in error
    assert uploads.guess_abstract(p) == "Paper Body"
    mapping, error = uploads.resolve(p, UNUSUAL)
    assert error is None and mapping == UNUSUAL
    _, error = uploads.resolve(p, {"abstract": "Nope"})
    assert "has no column 'Nope' (given for the abstract)" in error
    assert uploads.all_columns([p]) == ["Headline", "Paper Body", "Yr", "Where"]


# ------------------------------------------------------------------------------------------
# Only editors write, and only inside the artifacts folder
# ------------------------------------------------------------------------------------------


@pytest.fixture
def own_root(small_artifacts, tmp_path) -> Path:
    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    return root


def test_a_viewer_cannot_add_or_cancel_and_nothing_is_written(own_root):
    before = files_under(own_root)
    files = [upload("group.csv", unusual_csv(new_rows(10)))]
    for who in (VIEWER, Access(read_only=True, editor=False, refused=True), None, "editor"):
        with pytest.raises(ReadOnlyError):
            jobs.submit(who, own_root, "mine", files, new=True, columns=UNUSUAL, start=False)
        with pytest.raises(ReadOnlyError):
            jobs.cancel(who, own_root, "20260101T000000-000000-abcd")
        with pytest.raises(ReadOnlyError):
            jobs.forget(who, own_root, "20260101T000000-000000-abcd")
    assert files_under(own_root) == before
    assert not (own_root / uploads.INPUTS).exists() and not (own_root / job_queue.JOBS).exists()


def test_uploads_never_go_through_a_link_out_of_the_artifacts_folder(own_root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    files = [upload("group.csv", unusual_csv(new_rows(10)))]
    (own_root / uploads.INPUTS).symlink_to(outside, target_is_directory=True)
    with pytest.raises(uploads.UploadError, match="symbolic link"):
        jobs.submit(EDITOR, own_root, "mine", files, new=True, columns=UNUSUAL, start=False)
    (own_root / uploads.INPUTS).unlink()
    (own_root / uploads.INPUTS).mkdir()
    (own_root / uploads.INPUTS / "mine").symlink_to(outside, target_is_directory=True)
    with pytest.raises(uploads.UploadError, match="symbolic link"):
        jobs.submit(EDITOR, own_root, "mine", files, new=True, columns=UNUSUAL, start=False)
    assert list(outside.iterdir()) == []
    # a link planted where an upload would go is never written through
    folder = own_root / uploads.INPUTS / "other"
    folder.mkdir()
    (outside / "victim.csv").write_text("keep me")
    (folder / "group.csv").symlink_to(outside / "victim.csv")
    with pytest.raises(uploads.UploadError, match="already exists"):
        uploads.write_new_file(folder, "group.csv", b"abstract\nhello")
    with pytest.raises(uploads.UploadError, match="not a safe file name"):
        uploads.write_new_file(folder, "../escape.csv", b"x")
    assert (outside / "victim.csv").read_text() == "keep me"
    for bad in ("../x", "a/b", "", ".hidden", "x" * 65):
        with pytest.raises(artifacts.ArtifactError):
            jobs.submit(EDITOR, own_root, bad, files, new=True, start=False)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.csv"]


def test_hostile_file_names_are_stored_inside_the_corpus_folder(own_root):
    data = unusual_csv(new_rows(10))
    names = ["../../../../tmp/evil.csv", "/etc/cron.d/x.csv", "..", "x" * 3000 + ".csv", "con.csv"]
    files = [upload(n, data.replace(b"IJCAI", n[:10].encode())) for n in names]  # different bytes each
    job = jobs.submit(EDITOR, own_root, "hostile", files, new=True, columns=UNUSUAL, start=False)
    folder = uploads.inputs_dir(own_root, "hostile")
    stored = sorted(p.name for p in folder.iterdir())
    assert stored == sorted(job.added) and len(stored) == len(names)
    for name in stored:
        assert (folder / name).resolve().parent == folder.resolve() and len(name) <= uploads.MAX_NAME
    assert job.originals[job.added[0]] == names[0]


def test_disk_space_is_checked_before_anything_is_written(own_root, monkeypatch):
    files = [upload("group.csv", unusual_csv(new_rows(10)))]
    monkeypatch.setattr(job_queue.shutil, "disk_usage", lambda _: SimpleNamespace(free=10**6))
    with pytest.raises(job_queue.SubmitError, match="Not enough disk space"):
        jobs.submit(EDITOR, own_root, "mine", files, new=True, columns=UNUSUAL, start=False)
    assert not (own_root / uploads.INPUTS / "mine").exists() and job_queue.list_jobs(own_root) == []


def test_names_duplicates_and_one_build_per_corpus(own_root):
    data = unusual_csv(new_rows(10))
    files = [upload("group.csv", data)]
    with pytest.raises(job_queue.SubmitError, match="already exists"):
        jobs.submit(EDITOR, own_root, "small", files, new=True, start=False)
    with pytest.raises(job_queue.SubmitError, match="no corpus named nothing"):
        jobs.submit(EDITOR, own_root, "nothing", files, new=False, start=False)
    with pytest.raises(job_queue.SubmitError, match="None of the files can be read"):
        jobs.submit(EDITOR, own_root, "mine", [upload("x.pdf", b"%PDF-1.4")], new=True, start=False)
    jobs.submit(EDITOR, own_root, "mine", [*files, upload("same.csv", data)], new=True, columns=UNUSUAL, start=False)
    assert len(list((own_root / uploads.INPUTS / "mine").iterdir())) == 1  # the same bytes twice: stored once
    with pytest.raises(job_queue.SubmitError, match="already waiting or running"):
        jobs.submit(EDITOR, own_root, "mine", files, new=True, start=False)
    # a corpus built by the command line from files still on disk takes its files along
    job = jobs.submit(EDITOR, own_root, "small", [upload("more.csv", data)], new=False, columns=UNUSUAL, start=False)
    assert job.files == ("small_corpus.jsonl", "more.csv") and job.added == job.files
    assert (
        uploads.inputs_dir(own_root, "small").joinpath("small_corpus.jsonl").read_bytes() == SMALL_CORPUS.read_bytes()
    )
    assert [j.corpus for j in job_queue.queue(own_root)] == ["mine", "small"]


# ------------------------------------------------------------------------------------------
# The worker: one build at a time, the command line's messages, incremental additions
# ------------------------------------------------------------------------------------------


def test_builds_run_one_at_a_time_with_the_command_lines_messages_and_add_incrementally(tmp_path):
    root = tmp_path / "art"
    first, more = new_rows(60)[:45], new_rows(60)[45:]
    a = jobs.submit(
        EDITOR, root, "cards", [upload("Group A.csv", unusual_csv(first, short=(3,)))], new=True, columns=UNUSUAL,
        start=False,
    )  # fmt: skip
    tiny = b"Body,Name\nnot enough words,one\nstill too short,two\nthree words here,three\n"
    b = jobs.submit(EDITOR, root, "tiny", [upload("tiny.csv", tiny)], new=True, columns={"abstract": "Body"},
                    start=False)  # fmt: skip
    assert [(j.id, j.status) for j in job_queue.queue(root)] == [
        (a.id, "queued"),
        (b.id, "queued"),
    ]  # in line, in order

    assert job_runner.run_queue(root) == 2
    a, b = job_queue.load(root, a.id), job_queue.load(root, b.id)
    assert (a.status, a.exit_code, b.status, b.exit_code) == ("done", 0, "failed", 1)
    assert a.finished_at <= b.started_at  # one build at a time
    # the command line's own error, naming the file as stored, the row and the fix
    assert b.message.startswith("tiny.csv: none of its 3 rows can be used (short_abstract 3). First problem, row 1:")
    assert "--min-words" in b.message
    assert not (root / uploads.INPUTS / "tiny").exists() and not (root / "tiny").exists()  # nothing kept
    # the summary and the ingest report are the build's own
    assert a.summary[0].startswith("Built 'cards' (full)") and "1 skipped (short_abstract: 1)" in a.summary[1]
    report = job_progress.ingest_report(root, a)
    assert report[["source_file", "source_row", "action", "reason"]].values.tolist() == [
        ["Group-A.csv", 4, "skipped", "short_abstract"]  # the fourth record
    ]
    progress = job_progress.read_progress(root, a)
    assert (
        progress.step == progress.steps == job_progress.FULL_STEPS
        and progress.fraction == (job_progress.FULL_STEPS - 1) / job_progress.FULL_STEPS
    )
    assert uploads.read_record(root, "cards").columns == UNUSUAL

    # more papers for the same corpus: placed into its topics, every input read again
    before = data.load_corpus(root, "cards")
    c = jobs.submit(EDITOR, root, "cards", [upload("week 2.csv", unusual_csv(more))], new=False,
                    start=False)  # fmt: skip
    assert c.files == ("Group-A.csv", "week-2.csv") and c.columns == UNUSUAL
    assert job_runner.run_queue(root) == 1
    c = job_queue.load(root, c.id)
    assert c.status == "done", c.message
    manifest = artifacts.read_manifest(artifacts.corpus_path(root, "cards"))
    assert manifest.mode == "incremental" and manifest.counts.placed == len(more)
    after = data.load_corpus(root, "cards")
    old = before.papers.set_index("doc_id")["topic"]
    assert after.papers.set_index("doc_id").loc[old.index, "topic"].tolist() == old.tolist()
    assert job_progress.read_progress(root, c).steps == job_progress.INCREMENTAL_STEPS
    assert [f.name for f in uploads.read_record(root, "cards").files] == ["Group-A.csv", "week-2.csv"]


def test_a_job_left_running_by_a_dead_worker_is_rolled_back(own_root):
    files = [upload("group.csv", unusual_csv(new_rows(10)))]
    job = jobs.submit(EDITOR, own_root, "small", files, new=False, columns=UNUSUAL, start=False)
    job_queue.save(own_root, dataclasses.replace(job, status="running", started_at=job.submitted_at, pid=None))
    build = artifacts.corpus_path(own_root, "small").name
    assert job_runner.run_queue(own_root) == 0
    job = job_queue.load(own_root, job.id)
    assert job.status == "failed" and "interrupted" in job.message
    assert not (own_root / uploads.INPUTS / "small").exists()  # its copies and uploads are gone again
    assert artifacts.corpus_path(own_root, "small").name == build


def test_progress_comes_from_the_events_and_skips_a_half_written_line(tmp_path):
    job = job_queue.Job(id="20260101T000000-000000-abcd", corpus="x", kind="add")
    folder = job_queue.job_dir(tmp_path, job.id)
    folder.mkdir(parents=True)
    lines = [
        {"event": "start", "t": 100.0, "pid": 1},
        {"event": "stage", "t": 100.0, "step": 1, "title": "Reading 1 input file(s)"},
        {"event": "count", "t": 101.0, "label": "rows", "unit": "rows", "done": 10, "total": 10, "rate": 9.0,
         "eta": 0.0, "elapsed": 1.0},
        {"event": "stage", "t": 101.0, "step": 2, "title": "Embedding 400 papers (onnx-int8)"},
        {"event": "count", "t": 110.0, "label": "embedded", "unit": "papers", "done": 100, "total": 400,
         "rate": 50.0, "eta": 6.0, "elapsed": 2.0},
    ]  # fmt: skip
    text = "\n".join(json.dumps(e) for e in lines) + '\n{"event": "count", "t": 111.0, "do'
    (folder / "events.jsonl").write_text(text)
    p = job_progress.read_progress(tmp_path, job)
    assert (p.step, p.steps, p.done, p.total, p.label) == (2, job_progress.INCREMENTAL_STEPS, 100, 400, "embedded")
    assert p.fraction == pytest.approx((1 + 0.25) / job_progress.INCREMENTAL_STEPS)
    assert p.eta_now(112.0) == pytest.approx(4.0) and p.eta_now(200.0) == 0.0
    assert job_progress.plain_stage(p.title) == "Reading the abstracts with the language model"
    with (folder / "events.jsonl").open("a") as handle:
        handle.write('\n{"event": "stage", "t": 120.0, "step": 3, "title": "Projecting with UMAP (5-d)"}\n')
    p = job_progress.read_progress(tmp_path, job)
    assert (p.step, p.steps, p.label) == (
        3,
        job_progress.FULL_STEPS,
        None,
    )  # a full fit after all (e.g. other settings)
    assert job_progress.plain_stage("Something new") == "Something new"


# ------------------------------------------------------------------------------------------
# The page (AppTest)
# ------------------------------------------------------------------------------------------


def test_a_read_only_server_refuses_the_page_even_with_a_forged_state(own_root, monkeypatch):
    before = files_under(own_root)
    at = run(own_root, monkeypatch, "pages/add.py", args=("--read-only",))
    assert "read-only" in texts(at.info)
    assert not at.get("file_uploader") and not [b for b in at.button if b.key == "add_build"]
    assert all("add" not in str(link.proto.page) for link in at.sidebar.get("page_link"))
    # a forged session: the build button "pressed", a mapping and a name in the state
    for key, value in {"add_build": True, "add_name": "forged", "add_explicit": {"abstract": "x"}}.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception and "read-only" in texts(at.info)
    assert files_under(own_root) == before and not (own_root / "forged").exists()


def _finished(root: Path, **fields) -> job_queue.Job:
    job = job_queue.Job(**fields)
    job_queue.job_dir(root, job.id).mkdir(parents=True)
    return job_queue.save(root, job)


def test_the_page_shows_finished_builds_with_the_command_lines_messages(own_root, monkeypatch):
    _finished(
        own_root, id="20260101T000000-000000-aaaa", corpus="tiny", kind="new", status="failed", finished_at=2.0,
        message="tiny.csv: none of its 3 rows can be used (short_abstract 3). First problem, row 1: <b>x</b>",
    )  # fmt: skip
    at = run(own_root, monkeypatch, "pages/add.py")
    assert at.get("file_uploader")  # an editor (a private server) gets the form
    error = texts(at.error)
    assert "Building **tiny** failed" in error and "none of its 3 rows can be used" in error
    assert "\\<b\\>x\\</b\\>" in error  # the message is text, never HTML
    _finished(
        own_root, id="20260101T000001-000000-bbbb", corpus="small", kind="add", status="cancelled", finished_at=3.0
    )
    at.run()
    assert "was cancelled" in texts(at.warning) and "small is as it was before" in texts(at.warning)
    assert any("tiny" in str(e.value) for e in at.markdown)  # the failed build is listed among the earlier ones


def test_an_empty_artifacts_folder_offers_the_page_to_editors_only(tmp_path, monkeypatch):
    at = run(tmp_path, monkeypatch)
    assert any("add" in str(link.proto.page) for link in at.main.get("page_link"))
    viewer = run(tmp_path, monkeypatch, args=("--read-only",))
    assert not any("add" in str(link.proto.page) for link in viewer.main.get("page_link"))
    page = run(tmp_path, monkeypatch, "pages/add.py")
    assert page.get("file_uploader") and page.title[0].value == "Add a corpus"
    assert access.options(["app.py", "--build-config", "x.toml"], tmp_path).build_config == Path("x.toml").resolve()


def test_the_page_shows_the_running_build_and_the_line(own_root, monkeypatch):
    running = _finished(
        own_root, id="20260101T000000-000000-cccc", corpus="small", kind="add", status="running", added=("a.csv",),
        started_at=time.time() - 30,
    )  # fmt: skip
    _finished(own_root, id="20260101T000001-000000-dddd", corpus="other", kind="new", status="queued", added=("b.csv",))
    now = time.time()
    events = [
        {"event": "stage", "t": now - 20, "step": 1, "title": "Reading 1 input file(s)"},
        {"event": "stage", "t": now - 10, "step": 2, "title": "Embedding 400 papers (onnx-int8)"},
        {"event": "count", "t": now, "label": "embedded", "unit": "papers", "done": 100, "total": 400, "rate": 50.0,
         "eta": 60.0, "elapsed": 2.0},
    ]  # fmt: skip
    (job_queue.job_dir(own_root, running.id) / "events.jsonl").write_text(
        "\n".join(json.dumps(e) for e in events) + "\n"
    )
    monkeypatch.setattr(job_runner, "runner_pid", lambda root: 1)  # as if the worker were running them
    at = run(own_root, monkeypatch, "pages/add.py")
    shown = texts(at.markdown) + texts(at.caption)
    assert re.search(r"\*\*Building small\*\* · 1 file added · started [3-9]\d\.\ds ago", shown)
    assert "**other** · new corpus from 1 file · waiting for the build before it (number 2 in line)" in shown
    bar = at.get("progress")[0].proto
    assert bar.text == "Step 2 of 6 · Reading the abstracts with the language model" and bar.value == 20  # 1.25 / 6
    counts = (
        r"embedded 100 of 400 papers · 50 per second · about (5\d\.\ds|1m00s) left in this step · this step started"
    )
    assert re.search(counts, unescape(shown)), unescape(shown)
    assert [b.label for b in at.button if b.key and b.key.startswith("add_cancel_")] == ["Cancel", "Cancel"]
    assert at.get("expander")[0].proto.label == "Add another corpus"  # the form folds away while builds run
