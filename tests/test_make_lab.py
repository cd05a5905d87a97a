"""`make lab PORT=…` serves JupyterLab on that port and says its URL once it answers there; a
port already in use is refused before any URL or token is made."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import urllib.request
from pathlib import Path

from tests.browser.harness import free_port, lab_environment

ROOT = Path(__file__).resolve().parents[1]


# -o: the environment and its settings are already in place; make must not rebuild them.
MAKE_LAB = ["make", "--no-print-directory", "-o", ".venv/.installed-lab", "-o"]
MAKE_LAB += [".venv/share/jupyter/lab/settings/overrides.json", "-o"]
MAKE_LAB += [
    ".workbench/lab/user-settings/@jupyterlab/mainmenu-extension/plugin.jupyterlab-settings"
]
MAKE_LAB += ["-o"]
MAKE_LAB += [".venv/etc/jupyter/jupyter_server_config.d/workbench.json", "-o", ".node/.installed"]
MAKE_LAB += ["lab"]


def start_make_lab(port: int, home: Path) -> subprocess.Popen[str]:
    env = lab_environment(home)
    env["BROWSER"] = "true"  # JupyterLab "opens" the URL with `true`: no window here
    env.pop("JUPYTER_TOKEN", None)
    return subprocess.Popen(
        [*MAKE_LAB, f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def stop(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


def test_make_lab_says_its_url_once_the_server_answers_there(tmp_path):
    port = free_port()
    process = start_make_lab(port, tmp_path)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        said = re.fullmatch(
            rf"workbench: JupyterLab serves (http://127\.0\.0\.1:{port}/lab/tree/notebooks\?token=(\S+))\n",
            first,
        )
        assert said, (first, process.stderr.read() if process.poll() is not None else "")
        # Asked once, at the moment the URL is said: no waiting, no retry.
        status = f"http://127.0.0.1:{port}/api/status?token={said[2]}"
        with urllib.request.urlopen(status, timeout=5) as response:
            assert response.status == 200
        with urllib.request.urlopen(said[1], timeout=30) as response:
            assert response.status == 200
    finally:
        stop(process)


def test_make_lab_on_a_port_in_use_says_so_and_makes_no_url(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = start_make_lab(port, tmp_path)
        try:
            out, err = process.communicate(timeout=60)
        finally:
            stop(process)
    assert process.returncode != 0
    assert "token" not in out + err
    assert "http://" not in out + err
    assert f"port {port} is in use" in err


def test_make_lab_brings_notebook_06s_mcp_servers_where_npm_is_and_says_so_where_not(tmp_path):
    # -n: say what would run; -W: as if the pinned npm packages had changed since installed.
    dry = ["make", "--no-print-directory", "-n", "-W", "tests/node/package.json", "lab"]
    env = {**os.environ, "PORT": "8899"}
    with_npm = subprocess.run(dry, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert "npm ci" in with_npm.stdout
    assert "npm is missing: notebook 06" not in with_npm.stdout
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("make", "sh", "python3", "cp", "mkdir", "touch", "id"):
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    without = subprocess.run(
        dry, cwd=ROOT, env={**env, "PATH": str(bare)}, capture_output=True, text=True, check=True
    )
    assert "npm ci" not in without.stdout
    assert "npm is missing: notebook 06 shows workbench's demo server" in without.stdout
