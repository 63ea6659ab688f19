"""`make run` serves the editing app to this machine only; `make share` is the way to serve others.

The server is started with the command the Makefile's ``run`` target runs (``make -n run``: the
Makefile is held to it), over an empty artifacts folder (the server listens before any page
loads a corpus). Connections go only to this machine's own addresses.
"""

from __future__ import annotations

import ipaddress
import shlex
import socket
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.servers import free_port, stop, wait_until_healthy


def make_command(target: str, **variables: str) -> list[str]:
    """The streamlit command line of ``make TARGET`` with ``variables`` set, as make would run it."""
    out = subprocess.run(
        ["make", "-n", target, *(f"{k}={v}" for k, v in variables.items())],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    lines = out.replace("\\\n", " ").splitlines()
    command = next(line for line in lines if "-m streamlit run" in line)
    return shlex.split(command)


def own_addresses() -> list[tuple[int, str]]:
    """(family, address) of every non-loopback address of this machine's interfaces."""
    import psutil

    found = []
    for name, addresses in psutil.net_if_addrs().items():
        for a in addresses:
            if a.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            address = a.address.split("%", 1)[0]
            ip = ipaddress.ip_address(address)
            if ip.is_loopback:
                continue
            found.append((a.family, f"{address}%{name}" if ip.version == 6 and ip.is_link_local else address))
    return found


def _connects(family: int, address: str, port: int) -> bool:
    host, _, scope = address.partition("%")
    target = (host, port) if family == socket.AF_INET else (host, port, 0, socket.if_nametoindex(scope) if scope else 0)
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        try:
            s.connect(target)
        except ConnectionRefusedError:
            return False
    return True


def test_make_run_accepts_connections_on_loopback_only(tmp_path):
    addresses = own_addresses()
    if not addresses:
        pytest.skip("this machine has no network address besides loopback: nothing to check")
    port = free_port()
    argv = make_command("run", PY=sys.executable, PORT=str(port), ARTIFACTS=str(tmp_path / "artifacts"))
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", proc, log, timeout=120)
        reachable = [a for family, a in addresses if _connects(family, a, port)]
        assert not reachable, f"`make run` accepts connections on {reachable}: it must listen on 127.0.0.1 only"
    finally:
        stop(proc, timeout=30)


def test_make_share_is_read_only():
    argv = make_command("share", PY=sys.executable, PORT="8501", ARTIFACTS="artifacts")
    assert argv[argv.index("--") + 1 :].count("--read-only") == 1
