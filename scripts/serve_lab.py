"""Serve JupyterLab for ``make lab`` and say its URL once, when the server answers there.

The URL is printed only after ``/api/status`` answers on it, so a person who opens it at once
finds a server. A port already in use is an error said before anything starts: no token is
made and no URL is printed for a server that will never run (``make lab PORT=…`` picks
another port; JupyterLab is never allowed to move to one itself).

Usage: ``python scripts/serve_lab.py PORT FOLDER [JUPYTER LAB OPTION ...]``. The server's root is
the current directory (so the Help menu's links reach ``docs/``) and it opens on ``FOLDER``. The
token is ``$JUPYTER_TOKEN`` when set, else a fresh one. Exits with JupyterLab's own status.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

HOST = "127.0.0.1"
POLL_S = 0.1


def port_in_use(port: int) -> bool:
    """True when something on this machine already listens on ``HOST:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return True
    return False


def answers(url: str) -> bool:
    """True when a Jupyter server answers ``/api/status`` at ``url`` (its base, token query)."""
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: serve_lab.py PORT FOLDER [OPTION ...]", file=sys.stderr)
        return 2
    port, folder, options = int(argv[0]), argv[1].strip("/"), argv[2:]
    if port_in_use(port):
        print(
            f"workbench: port {port} is in use on {HOST}; pick a free one: make lab PORT=8890",
            file=sys.stderr,
        )
        return 1
    token = os.environ.get("JUPYTER_TOKEN") or secrets.token_urlsafe(24)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            f"--ip={HOST}",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.root_dir=.",
            f"--ServerApp.default_url=/lab/tree/{folder}",
            *options,
        ],
        env={**os.environ, "JUPYTER_TOKEN": token},
    )
    # Ctrl+C and a SIGTERM reach JupyterLab, which shuts its kernels down; we wait for it.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda number, _frame: server.send_signal(number))
    status = f"http://{HOST}:{port}/api/status?token={token}"
    while server.poll() is None and not answers(status):
        time.sleep(POLL_S)
    if server.poll() is None:
        url = f"http://{HOST}:{port}/lab/tree/{folder}?token={token}"
        print(f"workbench: JupyterLab serves {url}", flush=True)
    while True:
        try:
            return server.wait()
        except InterruptedError:  # a signal forwarded above: keep waiting for the server
            continue


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
