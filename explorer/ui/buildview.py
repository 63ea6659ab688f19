"""The "Add a corpus" page's builds panel: the builds running, waiting and finished.

Draws with Streamlit. Running builds is ``explorer.services.job_runner``'s job and their progress
``explorer.services.job_progress``'s; every write goes through ``jobs.cancel``/``jobs.forget``, which refuse
a viewer. The form that asks for a build is ``explorer.ui.build_form``'s. Corpus names and the build's
messages are untrusted: they are escaped (``text.plain``), never shown as HTML.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from explorer.services import job_progress, job_queue, job_runner, jobs, text
from explorer.ui import caches
from explorer.ui.shell import PAGE, Workspace
from pipeline.core import artifacts
from pipeline.core.progress import format_seconds

# ------------------------------------------------------------------------------------------
# Builds: running, waiting and finished
# ------------------------------------------------------------------------------------------


def builds(ws: Workspace) -> bool:
    """The builds of this artifacts folder, refreshed every second while one runs or waits;
    True when one does."""
    waiting = job_queue.queue(ws.root)
    if waiting and job_runner.runner_pid(ws.root) is None:
        job_runner.ensure_runner(ws.root)  # the worker stopped (server restart): start it, it recovers
    st.session_state["_add_active"] = {j.id for j in waiting}
    st.fragment(run_every=1.0 if waiting else None)(_builds_panel)(ws)
    return bool(waiting)


def _builds_panel(ws: Workspace) -> None:
    every = job_queue.list_jobs(ws.root)
    active = [j for j in every if j.active]
    if {j.id for j in active} != st.session_state.get("_add_active", set()):
        _refresh_corpora()
        st.rerun()  # a build finished (or started elsewhere): redraw the page and the corpus picker
    finished = [j for j in every if not j.active][::-1]
    if not (active or finished):
        return
    st.subheader("Builds", anchor=False)
    for position, job in enumerate(active, start=1):
        _active_job(ws, job, position)
    if finished:
        _finished_job(ws, finished[0])
    if finished[1:]:
        with st.expander(f"Earlier builds ({len(finished) - 1})"):
            for job in finished[1:]:
                _earlier_job(ws, job)
    st.divider()


def _refresh_corpora() -> None:
    caches.reread_corpus_list()  # the corpus picker lists the new corpus at once (its cache lives 5 s)


def _ago(seconds: float) -> str:
    return "just now" if seconds < 2 else f"{format_seconds(seconds)} ago"


def _what(job: job_queue.Job) -> str:
    n = len(job.added)
    files = f"{n} file{'s' if n != 1 else ''}"
    return (
        f"new corpus from {files}"
        if job.kind == "new"
        else f"{files} added" + (", topics refitted" if job.refit else "")
    )


def _active_job(ws: Workspace, job: job_queue.Job, position: int) -> None:
    now = time.time()
    name = text.plain(job.corpus)
    with st.container(border=True, key=f"add_job_{job.id}"):
        head, button = st.columns([6, 1], vertical_alignment="center")
        if job.status == "queued":
            head.markdown(f"**{name}** · {_what(job)} · waiting for the build before it (number {position} in line)")
        else:
            started = job.started_at or now
            head.markdown(f"**Building {name}** · {_what(job)} · started {_ago(now - started)}")
        if job.cancel_requested:
            button.caption("Cancelling…")
        elif button.button("Cancel", key=f"add_cancel_{job.id}", icon=":material/stop_circle:", width="stretch"):
            jobs.cancel(ws.access, ws.root, job.id)
            st.rerun(scope="fragment")
        if job.status != "running":
            return
        p = job_progress.read_progress(ws.root, job)
        label = (
            f"Step {p.step} of {max(p.steps, p.step)} · {job_progress.plain_stage(p.title)}" if p.step else "Starting…"
        )
        st.progress(p.fraction, text=label)
        bits = []
        if p.label and p.total:
            bits.append(f"{p.label} {p.done:,} of {p.total:,} {p.unit}")
            if p.rate and p.done < p.total:
                bits.append(f"{p.rate:,.0f} per second")
            eta = p.eta_now(now)
            if eta is not None and p.done < p.total:
                bits.append(f"about {format_seconds(eta)} left in this step")
        if p.step_started:
            bits.append(f"this step started {_ago(now - p.step_started)}")
        st.caption(text.plain(" · ".join(bits)))


def _outcome(job: job_queue.Job) -> str:
    return {"done": "built", "cancelled": "cancelled", "failed": "failed"}.get(job.status, job.status)


def _earlier_job(ws: Workspace, job: job_queue.Job) -> None:
    when = _ago(time.time() - (job.finished_at or time.time()))
    line, log, clear = st.columns([5, 1, 1], vertical_alignment="center")
    line.markdown(f"**{text.plain(job.corpus)}** · {_what(job)} · {_outcome(job)} {when}")
    log.download_button(
        "Log", job_progress.log_text(ws.root, job).encode("utf-8"), file_name=f"{job.corpus}-build-{job.id}.log",
        mime="text/plain", key=f"add_log_{job.id}", on_click="ignore", width="stretch",
    )  # fmt: skip
    if clear.button("Clear", key=f"add_forget_{job.id}", width="stretch"):
        jobs.forget(ws.access, ws.root, job.id)
        st.rerun()


def _finished_job(ws: Workspace, job: job_queue.Job) -> None:
    name = text.plain(job.corpus)
    when = _ago(time.time() - (job.finished_at or time.time()))
    with st.container(border=True, key=f"add_done_{job.id}"):
        if job.status == "done":
            counts = _counts(ws.root, job.corpus)
            st.success(f"**{name}** is ready ({when}){counts}.", icon=":material/check_circle:")
            if job.message:  # it published, then stopped (a cancel that came too late)
                st.caption(text.plain(job.message))
            if st.button(
                f"Open the map of {name}", type="primary", icon=":material/scatter_plot:", key=f"add_open_{job.id}"
            ):
                _refresh_corpora()
                st.switch_page(PAGE["map"].path, query_params={"corpus": job.corpus})
            _report(ws, job)
        elif job.status == "cancelled":
            after = "nothing was added" if job.kind == "new" else f"{name} is as it was before"
            st.warning(f"The build of **{name}** was cancelled ({when}): {after}.", icon=":material/cancel:")
            if job.message:
                st.caption(text.plain(job.message))
        else:
            st.error(f"Building **{name}** failed ({when}):\n\n{text.plain(job.message)}", icon=":material/error:")
            if job.kind == "add":
                st.caption(f"{name} is as it was before; the new files were not kept.")
        _job_buttons(ws, job)


def _counts(root: Path, name: str) -> str:
    try:
        counts = artifacts.read_manifest(artifacts.corpus_path(root, name)).counts
    except artifacts.ArtifactError:
        return ""
    return f": {counts.papers:,} papers in {counts.topics} topics"


def _report(ws: Workspace, job: job_queue.Job) -> None:
    if job.summary:
        with st.expander("What the build did"):
            st.code("\n".join(job.summary), language=None, wrap_lines=True)
    report = job_progress.ingest_report(ws.root, job)
    if report is None or report.empty:
        return
    skipped = int((report["action"] == "skipped").sum())
    changed = len(report) - skipped
    what = " and ".join(
        f"{n:,} row{'s' if n != 1 else ''} {verb}" for n, verb in ((skipped, "skipped"), (changed, "changed")) if n
    )
    with st.expander(f"{what} while reading the files", expanded=skipped > 0):
        st.dataframe(
            report,
            hide_index=True,
            column_config={
                "source_file": st.column_config.TextColumn("File", width="medium"),
                "source_row": st.column_config.NumberColumn("Row", format="%d", width="small"),
                "action": st.column_config.TextColumn("Done", width="small"),
                "reason": st.column_config.TextColumn("Reason", width="small"),
                "detail": st.column_config.TextColumn("Detail", width="large"),
            },
        )
        st.download_button(
            "Download the ingest report (CSV)",
            report.to_csv(index=False).encode("utf-8"),
            file_name=f"{job.corpus}-ingest-report.csv",
            mime="text/csv",
            icon=":material/download:",
            key=f"add_report_{job.id}",
            on_click="ignore",
        )


def _job_buttons(ws: Workspace, job: job_queue.Job) -> None:
    left, right = st.columns(2)
    left.download_button(
        "Build log",
        job_progress.log_text(ws.root, job).encode("utf-8"),
        file_name=f"{job.corpus}-build-{job.id}.log",
        mime="text/plain",
        icon=":material/description:",
        key=f"add_log_{job.id}",
        on_click="ignore",
        width="stretch",
    )
    if right.button("Clear from this list", key=f"add_forget_{job.id}", icon=":material/close:", width="stretch"):
        jobs.forget(ws.access, ws.root, job.id)
        st.rerun()
