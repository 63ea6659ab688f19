"""The "Add a corpus" page's form: choosing files, checking their columns, naming the corpus, starting.

Draws with Streamlit. Reading files is ``explorer.state.uploads``'s job; the build is asked for through
``jobs.submit``, which refuses a viewer. File names, column names and cells are untrusted: they are
escaped (``text.plain``) or shown in tables and select boxes, never as HTML. The builds running,
waiting and finished are ``explorer.ui.buildview``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from explorer.services import job_queue, jobs, text
from explorer.state import uploads
from explorer.state.access import ReadOnlyError
from explorer.ui import caches
from explorer.ui.shell import Workspace
from pipeline.core import artifacts

NONE = ""  # the "no column" choice of a role
MAIN_ROLES = ("abstract", "title", "year", "venue", "authors")
MORE_ROLES = ("url", "id", "label", "keywords")
_CELL_CHARS = 240  # characters of a cell shown in the preview


@dataclass(frozen=True)
class Target:
    """Where the papers go: a new corpus or an existing one."""

    name: str
    new: bool
    refit: bool = False
    venue: str | None = None
    year: int | None = None


# ------------------------------------------------------------------------------------------
# 1 · Files
# ------------------------------------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner="Reading the file…")
def _preview(name: str, file_id: str, _data: bytes) -> uploads.Preview:
    return uploads.preview(name, _data)


def choose_files() -> list[jobs.Upload]:
    """The files dropped, each with its preview."""
    st.subheader("1 · Choose your files", anchor=False)
    limit = int(st.get_option("server.maxUploadSize"))
    files = st.file_uploader(
        "Files of abstracts",
        accept_multiple_files=True,
        key=f"add_files_{_nonce()}",
        help="Drop several files to build one corpus from all of them.",
    )
    st.caption(
        "A spreadsheet saved as CSV or TSV, JSON, JSON Lines, Parquet, or plain text with one abstract per "
        f"paragraph; gzipped (.gz) is fine. One paper per row, with its abstract; up to {limit:,} MB per file."
    )
    out = []
    for f in files or []:
        raw = f.getvalue()
        out.append(jobs.Upload(f.name, raw, _preview(f.name, f.file_id, raw)))
    return out


# ------------------------------------------------------------------------------------------
# 2 · Columns
# ------------------------------------------------------------------------------------------


def check_columns(
    files: list[jobs.Upload], base: dict[str, str], existing: list[uploads.Preview]
) -> tuple[dict[str, str], bool]:
    """Previews and the column mapping; returns the explicit mapping and whether every readable
    file can be read with it. ``base`` and ``existing``: the mapping and the files of the corpus
    the papers are added to (every build reads all of them with one mapping)."""
    st.subheader("2 · Check the columns", anchor=False)
    if not files:
        st.caption("Choose a file to see its first rows and the columns the app will use.")
        return {}, False
    for f in files:
        if not f.preview.ok:
            st.error(f"{text.plain(f.preview.error)}  \nThis file will be left out.", icon=":material/block:")
    good = [f.preview for f in files if f.preview.ok]
    if not good:
        st.caption("Choose at least one file that can be read.")
        return {}, False
    signature = tuple(f.preview.sha256 for f in files)
    if st.session_state.get("add_files_seen") != signature:  # other files: recognise their columns afresh
        st.session_state["add_files_seen"] = signature
        st.session_state["add_explicit"] = {}
    user = st.session_state.setdefault("add_explicit", {})
    explicit = {r: c for r, c in {**base, **user}.items() if c}
    resolved = [(p, *uploads.resolve(p, explicit)) for p in good]
    first_table = next((r for r in resolved if r[0].fixed is None), None)
    guess = uploads.guess_abstract(first_table[0]) if first_table and first_table[2] else None
    fits = guess and all(uploads.resolve(p, {**explicit, "abstract": guess})[1] is None for p in existing)
    if fits and "abstract" not in explicit:  # a sensible default: the column the build would suggest
        user["abstract"] = explicit["abstract"] = guess
        st.session_state["add_guessed"] = guess
        resolved = [(p, *uploads.resolve(p, explicit)) for p in good]
    clashes = [(p, error) for p in existing for error in [uploads.resolve(p, explicit)[1]] if error]
    for p, error in clashes:
        theirs = uploads.resolve(p, base)[0].get("abstract")
        st.error(
            f"The corpus already has {text.plain(p.name)}, which these columns cannot read: {text.plain(error)}  \n"
            "Every file of a corpus is read with the same column names: rename the columns of your file to match"
            + (f" (its abstract column is {text.plain(theirs)})" if theirs else "")
            + ", or make a new corpus.",
            icon=":material/join_inner:",
        )
    choices = uploads.all_columns(good)
    if choices:
        first = next((m for p, m, e in resolved if p.fixed is None), {})
        st.caption(
            "Each paper needs an abstract; the other columns are optional. The app recognised the columns below "
            "by their names: change any that is wrong."
        )
        _mapping(choices, first, user)
    for i, (p, mapping, error) in enumerate(resolved):
        _file_preview(p, mapping, error, expanded=i == 0)
    return explicit, all(e is None for _, _, e in resolved) and not clashes


def _pick(role: str, key: str, user: dict) -> None:
    user[role] = st.session_state[key]
    if not user[role]:
        user.pop(role)


def _mapping(choices: list[str], current: dict[str, str], user: dict) -> None:
    def box(role: str) -> None:
        key = f"add_col_{role}"
        value = current.get(role, NONE)
        options = choices if value else [NONE, *choices]
        st.session_state[key] = value if value in options else NONE
        label = uploads.ROLE_TITLES[role] + (" (required)" if role == "abstract" else "")
        st.selectbox(
            label, options, key=key, format_func=lambda c: c or "— none —", on_change=_pick, args=(role, key, user)
        )

    for role, col in zip(MAIN_ROLES, st.columns(len(MAIN_ROLES)), strict=True):
        with col:
            box(role)
    with st.expander("More columns: link, paper id, label, keywords"):
        for role, col in zip(MORE_ROLES, st.columns(len(MORE_ROLES)), strict=True):
            with col:
                box(role)
    guessed = st.session_state.get("add_guessed")
    if user.get("abstract") and user["abstract"] == guessed:
        st.caption(
            f"No column is named like an abstract: the app chose **{text.plain(guessed)}**, the one with the longest "
            "texts. Change it if it is wrong."
        )
    if {r: c for r, c in user.items() if (r, c) != ("abstract", guessed)} and st.button(
        "Use the recognised columns again", key="add_reset_cols", icon=":material/restart_alt:"
    ):
        user.clear()
        st.rerun()


def _file_preview(p: uploads.Preview, mapping: dict[str, str], error: str | None, *, expanded: bool) -> None:
    kind = p.format.replace(".gz", ", gzipped").upper() if p.format != "text" else "plain text"
    label = f"{p.name} · {kind} · {p.rows:,} record{'s' if p.rows != 1 else ''}"
    with st.expander(text.plain(label), expanded=expanded or error is not None):
        if p.original != p.name:
            st.caption(f"Uploaded as {text.plain(p.original)}; stored as {text.plain(p.name)}.")
        if error:
            st.error(text.plain(error), icon=":material/error:")
        if p.fixed is not None:
            extra = ", ".join(f"{k} {v}" for k, v in p.defaults.items())
            st.caption(
                "Plain text: each paragraph is an abstract."
                + (f" From its title line: {text.plain(extra)}." if extra else "")
            )
        roles = {c: r for r, c in mapping.items()}
        order = list(dict.fromkeys(mapping[r] for r in uploads.ROLE_TITLES if r in mapping and mapping[r] in p.sample))
        head = p.head[order + [c for c in p.sample.columns if c not in order]].copy()
        for col in head.columns:
            head[col] = head[col].map(lambda v: None if v is None else str(v)[:_CELL_CHARS])
        config = {
            c: st.column_config.TextColumn(f"{c} → {uploads.ROLE_TITLES[roles[c]]}" if c in roles else c)
            for c in head.columns
        }
        st.dataframe(head, hide_index=True, column_config=config)
        unused = [c for c in p.columns if c not in roles]
        if unused and p.fixed is None:
            st.caption(
                f"Other columns ({text.plain(', '.join(unused[:12]))}{', …' if len(unused) > 12 else ''}) are kept "
                "with each paper but not used for topics."
            )
        if p.notes:
            shown = "  \n".join(text.plain(n) for n in p.notes[:5])
            more = f"  \n… and {len(p.notes) - 5:,} more (all of them in the ingest report)" if len(p.notes) > 5 else ""
            st.caption(f"Fixed while reading:  \n{shown}{more}")


# ------------------------------------------------------------------------------------------
# 3 · Name, options, build
# ------------------------------------------------------------------------------------------


@st.cache_data(max_entries=16, show_spinner="Reading the corpus's files…")
def _existing_preview(path: str, size: int, mtime: float) -> uploads.Preview:
    return uploads.preview(Path(path).name, Path(path).read_bytes())


@st.cache_data(ttl=30, show_spinner=False)
def _corpus_files(root: str, name: str, build: str) -> list[Path]:
    return uploads.corpus_files(Path(root), name, job_queue.PROJECT)  # hashes a command-line corpus's files


def target_corpus(ws: Workspace) -> tuple[dict[str, str], list[uploads.Preview]]:
    """The column mapping and the files of the corpus chosen in step 3, when papers are added to
    one (read ahead: step 2 is drawn first)."""
    if st.session_state.get("add_mode") != "add" or not st.session_state.get("add_into"):
        return {}, []
    name = st.session_state["add_into"]
    try:
        record = uploads.read_record(ws.root, name)
        columns = dict(record.columns) if record else uploads.manifest_settings(ws.root, name)[0]
        paths = _corpus_files(str(ws.root), name, artifacts.corpus_path(ws.root, name).name)
    except (artifacts.ArtifactError, uploads.UploadError):
        return {}, []
    previews = [_existing_preview(str(p), p.stat().st_size, p.stat().st_mtime) for p in paths]
    return columns, [p for p in previews if p.ok]


@st.cache_data(ttl=30, show_spinner=False)
def _addable(root: str, name: str, build: str) -> str | None:
    """Why papers cannot be added to corpus ``name`` (None: they can)."""
    try:
        if uploads.read_record(Path(root), name) is not None:
            return None
    except uploads.UploadError as exc:
        return str(exc)
    return uploads.manifest_inputs(Path(root), name, job_queue.PROJECT)[1]


def choose_target(ws: Workspace, files: list[jobs.Upload]) -> Target | None:
    """Step 3: a new corpus (named like the command line names one) or an existing corpus."""
    st.subheader("3 · Name the corpus", anchor=False)
    entries = [e for e in caches.list_corpora(ws.root) if e.ok]
    mode = st.radio(
        "Where should the papers go?",
        ["new", "add"],
        key="add_mode",
        horizontal=True,
        format_func=lambda m: "A new corpus" if m == "new" else "Add them to a corpus",
        disabled=not entries,
    )
    if mode == "new":
        first = next((f for f in files if f.preview.ok), None)
        suggested = uploads.default_corpus_name(first.name) if first else ""
        if st.session_state.get("add_name_from") != suggested:  # a new first file: suggest its name
            st.session_state["add_name_from"] = suggested
            st.session_state["add_name"] = suggested
        name = st.text_input("Name", key="add_name", max_chars=64, placeholder="e.g. neurips2025")
        st.caption("Letters, digits, '.', '_' and '-'; it shows in links to the corpus (?corpus=NAME).")
        name = name.strip()
        problem = _name_problem(ws, name)
        if problem:
            st.error(text.plain(problem), icon=":material/edit:")
        target = Target(name, new=True) if name and not problem else None
    else:
        names = [e.name for e in entries]
        name = st.selectbox("Corpus", names, key="add_into")
        entry = next(e for e in entries if e.name == name)
        why = _addable(str(ws.root), name, str(entry.manifest.build_id))
        if why:
            st.error(f"Papers cannot be added to {text.plain(name)}: {text.plain(why)}", icon=":material/block:")
        refit = st.checkbox(
            "Find the topics again from scratch",
            key=f"add_refit_{_nonce()}",
            help="Slower. Otherwise the new papers are placed into the existing topics, which stay as they are.",
        )
        target = None if why else Target(name, new=False, refit=refit)
    with st.expander("Options"):
        left, right = st.columns(2)
        venue = left.text_input("Venue for papers whose file gives none", key=f"add_venue_{_nonce()}", max_chars=80)
        year = right.number_input(
            "Year for papers whose file gives none", 1800, 2100, value=None, step=1, key=f"add_year_{_nonce()}"
        )
    if target is None:
        return None
    return Target(target.name, target.new, target.refit, venue.strip() or None, int(year) if year else None)


def _name_problem(ws: Workspace, name: str) -> str | None:
    if not name:
        return None
    try:
        artifacts.check_name(name)
    except artifacts.ArtifactError as exc:
        return str(exc)
    if (Path(ws.root) / name).exists() or (Path(ws.root) / name).is_symlink():
        return f"A corpus named {name} already exists: choose another name, or add the papers to it."
    return None


def start(
    ws: Workspace, files: list[jobs.Upload], explicit: dict[str, str], readable: bool, target: Target | None
) -> None:
    """The build button: queue the build (``jobs.submit`` refuses a viewer) and reset the form."""
    ready = bool(files) and readable and target is not None and any(f.preview.ok for f in files)
    label = "Build the corpus" if target is None or target.new else f"Add the papers to {target.name}"
    if not st.button(label, type="primary", icon=":material/play_arrow:", disabled=not ready, key="add_build"):
        if not ready:
            st.caption("Choose files that can be read, check the abstract column and name the corpus to build it.")
        return
    try:
        jobs.submit(
            ws.access, ws.root, target.name, files, new=target.new, columns=explicit, refit=target.refit,
            ingest={"venue": target.venue, "year": target.year}, config=ws.build_config,
        )  # fmt: skip
    except (ReadOnlyError, job_queue.SubmitError, uploads.UploadError, artifacts.ArtifactError, OSError) as exc:
        st.error(text.plain(str(exc)), icon=":material/error:")
        return
    st.session_state["add_nonce"] = _nonce() + 1  # a fresh form: no files, no options
    for key in ("add_explicit", "add_name", "add_name_from"):
        st.session_state.pop(key, None)
    st.rerun()


def _nonce() -> int:
    """Part of the form's widget keys; a new one empties the form after a build is queued."""
    return st.session_state.get("add_nonce", 0)
