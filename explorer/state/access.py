"""Who may change files: the app's command-line options, read-only sharing and the editor token.

``streamlit run app.py -- --read-only`` (or ``ATLAS_READ_ONLY=1``) serves the app with every
write switched off: no curation, no saving or deleting tours. ``--editor-token TOKEN`` (better:
``ATLAS_EDITOR_TOKEN``, which does not show in ``ps``) implies read-only and lets a session that
opens any page with ``?token=TOKEN`` edit. The token is compared in constant time, removed from
the address bar at once, and never written into a link or the page.

Enforcement does not rest on hiding widgets: every function that writes a file (``explorer.state.curate``,
``explorer.state.tours``) takes an :class:`Access` and calls :func:`require_write` before it opens
anything. An ``Access`` is made by ``explorer.ui.url_state.session`` (in ``app.py``) from server-side
session state, so a viewer cannot forge one. Without ``--read-only`` (``make run`` on your own
machine) every session may edit.
"""

from __future__ import annotations

import argparse
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

READ_ONLY_ENV = "ATLAS_READ_ONLY"
TOKEN_ENV = "ATLAS_EDITOR_TOKEN"
TOKEN_PARAM = "token"


class ReadOnlyError(PermissionError):
    """A write was attempted by a session that may not write."""


@dataclass(frozen=True)
class Options:
    """The app's own command-line options (after ``--``).

    Attributes:
        root: the artifacts folder.
        read_only: serve read-only (``--read-only``, ``--editor-token`` or the environment).
        editor_token: the token that lets a session edit a read-only server, or None.
        build_config: TOML settings for corpora built from the browser (``--build-config``), as
            ``python -m pipeline build --config`` reads them; None for the defaults.
    """

    root: Path
    read_only: bool = False
    editor_token: str | None = None
    build_config: Path | None = None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def options(argv: list[str], app_dir: Path, environ: Mapping[str, str] | None = None) -> Options:
    """Parse ``[app.py, --artifacts DIR, --read-only, --editor-token TOKEN, --build-config FILE]``
    (a literal ``--`` is skipped).

    The environment (``ATLAS_READ_ONLY``, ``ATLAS_EDITOR_TOKEN``) fills what the command line leaves out.
    """
    environ = os.environ if environ is None else environ
    args = argv[argv.index("--") + 1 :] if "--" in argv else argv[1:]
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--artifacts", type=Path, default=app_dir / "artifacts")
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--editor-token", default=None)
    parser.add_argument("--build-config", type=Path, default=None)
    known, _ = parser.parse_known_args(args)
    token = (known.editor_token or environ.get(TOKEN_ENV) or "").strip() or None
    read_only = known.read_only or _truthy(environ.get(READ_ONLY_ENV)) or token is not None
    config = known.build_config.expanduser().resolve() if known.build_config else None
    return Options(root=known.artifacts.expanduser(), read_only=read_only, editor_token=token, build_config=config)


@dataclass(frozen=True)
class Access:
    """What this session may do.

    Attributes:
        read_only: the server is shared read-only.
        editor: this session may write files (always on a private server; with the token on a
            read-only one).
        refused: a wrong editor token came with this request (to say so).
    """

    read_only: bool = False
    editor: bool = True
    refused: bool = False

    @property
    def can_write(self) -> bool:
        return self.editor


VIEWER = Access(read_only=True, editor=False)


def require_write(access: Access, what: str) -> None:
    """Raise :class:`ReadOnlyError` unless ``access`` may write. Call before touching any file."""
    if not isinstance(access, Access) or not access.can_write:
        raise ReadOnlyError(f"{what} is switched off: this server is read-only.")


def token_matches(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison; no token configured means no token matches."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))
