"""Cleaning in worker processes gives what cleaning here gives, chunk by chunk, and falls back to
this process when the workers cannot help."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from pipeline.core import background
from pipeline.core.config import IngestParams
from pipeline.ingest import clean_workers
from pipeline.ingest.clean import clean_text
from pipeline.ingest.ingest import ingest
from tests.test_clean import real_abstracts

# Markup of every kind the cleaning removes, nested so that removing one exposes another.
HOSTILE = [
    "&lt;b&gt;bold&lt;/b&gt; words and $x^2$ math",
    "see https://example.org/a?b=c and mail me@example.org (cid:12)",
    "<script>alert(1)</script>kept \\emph{emphasis} $$\\int f$$ end",
    "",
    "   spaces\u00a0and\tcontrol\x07characters  ",
]


def texts() -> list[str]:
    return (real_abstracts() + HOSTILE) * 3


@pytest.fixture
def pools(monkeypatch):
    """Two CPUs as far as the cleaning knows, and a record of the pools it starts."""
    started = []

    def pool(workers=1):
        started.append(pool.__wrapped__(workers))
        return started[-1]

    pool.__wrapped__ = background.worker_pool
    monkeypatch.setattr(background, "usable_cpus", lambda: 2)
    monkeypatch.setattr(background, "worker_pool", pool)
    return started


def test_workers_clean_each_chunk_as_this_process_does(pools):
    given = texts()
    chunks = list(clean_workers.clean_chunks(given, 7, parallel_min=1))
    assert len(pools) == 1  # the workers did the cleaning
    assert [len(c) for c in chunks] == [min(7, len(given) - s) for s in range(0, len(given), 7)]
    assert [t for c in chunks for t in c] == [clean_text(t) for t in given]


def test_few_texts_are_cleaned_here(pools):
    given = texts()
    chunks = list(clean_workers.clean_chunks(given, 7, parallel_min=len(given) + 1))
    assert pools == []
    assert [t for c in chunks for t in c] == [clean_text(t) for t in given]


class Unsendable(str):
    """A text that cannot be sent to a worker (pickling it fails), as a worker that dies would."""

    def __reduce__(self):
        raise TypeError("not sendable")


def test_a_chunk_no_worker_can_clean_is_cleaned_here(pools):
    given = texts()
    given[10] = Unsendable(given[10])
    chunks = list(clean_workers.clean_chunks(given, 7, parallel_min=1))
    assert len(pools) == 1
    assert [t for c in chunks for t in c] == [clean_text(str(t)) for t in given]


def test_workers_that_cannot_start_leave_the_cleaning_here(monkeypatch):
    def no_pool(workers=1):
        raise OSError("no processes here")

    monkeypatch.setattr(background, "usable_cpus", lambda: 2)
    monkeypatch.setattr(background, "worker_pool", no_pool)
    given = texts()
    chunks = list(clean_workers.clean_chunks(given, 5, parallel_min=1))
    assert [t for c in chunks for t in c] == [clean_text(t) for t in given]


class BrokenPool:
    """A pool whose workers died while starting: every submit fails."""

    def submit(self, *args):
        from concurrent.futures.process import BrokenProcessPool

        raise BrokenProcessPool("a worker died while starting")

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def test_a_pool_broken_at_start_leaves_the_cleaning_here(monkeypatch):
    monkeypatch.setattr(background, "usable_cpus", lambda: 2)
    monkeypatch.setattr(background, "worker_pool", lambda workers=1: BrokenPool())
    given = texts()
    chunks = list(clean_workers.clean_chunks(given, 5, parallel_min=1))
    assert [t for c in chunks for t in c] == [clean_text(t) for t in given]


def test_stopping_early_stops_the_workers(pools):
    before = set(multiprocessing.active_children())
    parts = clean_workers.clean_chunks(texts(), 3, parallel_min=1)
    assert next(parts) == [clean_text(t) for t in texts()[:3]]
    assert set(multiprocessing.active_children()) - before  # the workers are running
    parts.close()
    assert set(multiprocessing.active_children()) - before == set()


def test_ingest_with_workers_gives_the_papers_report_and_progress_of_one_process(pools, monkeypatch, tmp_path):
    path = tmp_path / "papers.jsonl"
    rows = [{"title": f"Paper {i}", "abstract": a} for i, a in enumerate(texts())]
    rows.append({"title": "Too short", "abstract": "$x$ two words"})
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")

    def run():
        calls = []
        result = ingest([path], IngestParams(), progress=lambda done, total: calls.append((done, total)))
        return result, calls

    monkeypatch.setattr(clean_workers, "PARALLEL_MIN_TEXTS", len(rows) + 1)
    here, here_calls = run()
    assert pools == []
    monkeypatch.setattr(clean_workers, "PARALLEL_MIN_TEXTS", 1)
    monkeypatch.setattr("pipeline.ingest.ingest._CHUNK", 16)
    workers, worker_calls = run()
    assert len(pools) == 1
    assert workers.papers.equals(here.papers)
    assert workers.report.equals(here.report)
    assert worker_calls[-1] == here_calls[-1] == (len(rows), len(rows))
    assert [done for done, _ in worker_calls[:-1]] == [min(len(rows), s + 16) for s in range(0, len(rows), 16)]
