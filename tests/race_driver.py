"""Test driver: ``python -m pipeline`` with the real model, its preparation timed so that builds
started together really overlap in it. Only tests run it; the product has no such hook.

    python tests/race_driver.py --meet DIR --parties N -- CLI ARGS...

Two meeting points, shared by the N processes through files in DIR:

* every process enters ``pipeline.embed.encoders.export_onnx`` at the same moment (each waits there until
  all N have arrived), whatever its own start-up, reading and queueing took;
* a process that finished ``torch.onnx.export`` waits until every export that has started has
  finished too, so that what follows the exports (the quantization) starts at the same moment in
  each process that exported. A process waiting for the preparation lock never starts an export,
  so nothing waits for it.

Without these, two builds overlap in the preparation only by chance (the export takes about 8 s
and start-up varies by seconds).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.cli import cli
from pipeline.embed import encoders

#: The longest a process waits at a meeting point before it fails (the others did not come).
MEET_TIMEOUT = 300.0


def _wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + MEET_TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"race driver: {what} did not happen within {MEET_TIMEOUT:.0f} s")
        time.sleep(0.02)


def install(meet: Path, parties: int) -> None:
    meet.mkdir(parents=True, exist_ok=True)
    me = str(os.getpid())
    real_export_onnx = encoders.export_onnx

    def export_onnx(*args, **kwargs):
        (meet / f"arrived-{me}").touch()
        _wait_until(lambda: len(list(meet.glob("arrived-*"))) >= parties, f"{parties} processes preparing the model")
        return real_export_onnx(*args, **kwargs)

    encoders.export_onnx = export_onnx

    import torch

    real_torch_export = torch.onnx.export

    def torch_export(*args, **kwargs):
        (meet / f"exporting-{me}").touch()
        try:
            return real_torch_export(*args, **kwargs)
        finally:
            (meet / f"exported-{me}").touch()
            _wait_until(
                lambda: len(list(meet.glob("exported-*"))) >= len(list(meet.glob("exporting-*"))),
                "every started export finishing",
            )

    torch.onnx.export = torch_export


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--meet", type=Path, required=True)
    parser.add_argument("--parties", type=int, required=True)
    parser.add_argument("cli", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    install(args.meet, args.parties)
    return cli.main(args.cli[1:] if args.cli[:1] == ["--"] else args.cli)


if __name__ == "__main__":
    sys.exit(main())
