"""A local app server in tests: a free port, waiting until Streamlit answers its health check, and
stopping it. The wait is for a condition (the health check says ``ok``), never a fixed time, so a
busy machine makes it slower, not wrong."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_healthy(base: str, proc: subprocess.Popen, log: Path, *, timeout: float = 90) -> None:
    """Poll ``base``'s ``/_stcore/health`` until it answers ``ok``; fail, with the server's log,
    when the process ends first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=5) as response:
                if response.read().strip() == b"ok":
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            ended = "ended" if proc.poll() is not None else f"did not answer in {timeout:.0f} s"
            tail = log.read_text(encoding="utf-8", errors="replace")[-3000:] if log.exists() else ""
            pytest.fail(f"the app server {ended}; its log ({log}) ends:\n{tail}")
        time.sleep(0.3)


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """Ask the server to end (SIGTERM), and kill it if it has not after ``timeout`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
