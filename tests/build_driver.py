"""Test driver: ``python -m pipeline`` with the hashing test encoder, optionally signalling itself
at a chosen point of a build. Only tests run it; the product has no such hook.

    python tests/build_driver.py [--signal INT|TERM|KILL | --hold FILE] [--at POINT] [--mark FILE] -- CLI ARGS...

POINT is where the signal is sent, from inside the build process (so it lands exactly there):

* ``enter:<stage>`` / ``exit:<stage>``: as the stage starts / right after it ends (stage names
  as in the manifest: ingest, embed, reduce, cluster, vocabulary, represent, trends, write);
* ``publish``: just before the new build is published (everything, manifest included, written);
* ``aside``: inside the swap, right after a hand-copied plain folder was moved aside and before
  the link to the new build exists;
* ``swap``: inside the swap, right after the link was replaced;
* ``published``: right after publishing returned, before old builds are deleted;
* ``discard``: while old builds are being deleted after publishing.

``--hold FILE --at POINT`` (no signal) waits at the point for as long as FILE exists, so a test can
cancel a build that is certainly still running (a small build would otherwise finish first).

``--mark FILE`` writes the point's name to FILE just before the signal, so a test can tell that
the point was reached (a build that is up to date never reaches ``enter:embed``).

``--plan FILE`` runs several builds one after another in this one process (imports and JIT
compilation paid once), each ``{"signal", "at", "argv"}`` of a JSON list, and prints one JSON line
per build: ``{"code": exit code, "stderr": what the CLI printed, "fired": the point was reached}``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import signal
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.build import build as build_module
from pipeline.cli import cli, cli_build
from pipeline.core import artifacts
from pipeline.embed.encoders import HashingEncoder  # noqa: E402

SIGNALS = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "KILL": signal.SIGKILL}


_RUN = {"signal": None, "at": "", "mark": None, "fired": False, "hold": None}


def fire(point: str) -> None:
    """Send the run's signal to this process if ``point`` is the run's point (or, with a hold file,
    wait there while that file exists: a cancel's SIGTERM interrupts the wait)."""
    if _RUN["hold"] and point == _RUN["at"]:
        _RUN["fired"] = True
        while Path(_RUN["hold"]).exists():
            time.sleep(0.05)
    if _RUN["signal"] and point == _RUN["at"]:
        _RUN["fired"] = True
        if _RUN["mark"]:
            Path(_RUN["mark"]).write_text(point)
        os.kill(os.getpid(), SIGNALS[_RUN["signal"]])


def install() -> None:
    """The hashing encoder instead of the model, and the watch points (see the module docstring)."""
    hashed = functools.partial(build_module.build, encoder=HashingEncoder())
    build_module.build = cli_build.build = hashed  # cli_build calls the name it imported
    real_stage = build_module.StageRunner.stage

    def stage(self, name, title):
        inner = real_stage(self, name, title)

        class _Stage:
            def __enter__(self):
                fire(f"enter:{name}")
                return inner.__enter__()

            def __exit__(self, *exc):
                inner.__exit__(*exc)
                if exc[0] is None:
                    fire(f"exit:{name}")
                return False

        return _Stage()

    build_module.StageRunner.stage = stage
    real_publish = artifacts.publish

    def publish(root, name, folder):
        fire("publish")
        real_publish(root, name, folder)
        fire("published")

    artifacts.publish = publish
    # Inside the swap: artifacts' own reference to os, so only its calls are watched.
    real_os = artifacts.os

    def replace(src, dst):
        real_os.replace(src, dst)
        if str(src).endswith(".link"):
            fire("swap")
        elif Path(dst).name.startswith("imported-"):
            fire("aside")

    artifacts.os = types.SimpleNamespace(**{k: getattr(real_os, k) for k in dir(real_os) if not k.startswith("__")})
    artifacts.os.replace = replace
    real_rmtree = artifacts.shutil.rmtree

    def rmtree(path, *a, **kw):
        fire("discard")
        return real_rmtree(path, *a, **kw)

    artifacts.shutil = types.SimpleNamespace(rmtree=rmtree)


def run_plan(path: Path) -> int:
    for step in json.loads(path.read_text()):
        _RUN.update(signal=step.get("signal"), at=step.get("at", ""), mark=None, fired=False)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(step["argv"])
        print(json.dumps({"code": code, "stderr": err.getvalue(), "fired": _RUN["fired"]}), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--signal", choices=sorted(SIGNALS))
    parser.add_argument("--at", default="")
    parser.add_argument("--mark", type=Path)
    parser.add_argument("--hold", type=Path)
    parser.add_argument("--plan", type=Path)
    parser.add_argument("cli", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    # A launcher that started this process in the background (``nohup``, ``cmd &`` in a
    # non-interactive shell) leaves SIGINT ignored, and Python keeps it so: the interrupt tests
    # would then see no interrupt at all. Ctrl-C's handler is what they test, so put it back.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    install()
    if args.plan:
        return run_plan(args.plan)
    _RUN.update(signal=args.signal, at=args.at, mark=args.mark, hold=args.hold)
    return cli.main(args.cli[1:] if args.cli[:1] == ["--"] else args.cli)


if __name__ == "__main__":
    sys.exit(main())
