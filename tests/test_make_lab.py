"""`make lab PORT=…` serves JupyterLab on that port and says the URL it serves first."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.browser.harness import free_port, lab_environment

ROOT = Path(__file__).resolve().parents[1]


def test_make_lab_serves_on_the_port_given_and_says_its_url(tmp_path):
    port = free_port()
    env = lab_environment(tmp_path)
    env["BROWSER"] = "true"  # JupyterLab "opens" the URL with `true`: no window here
    env.pop("JUPYTER_TOKEN", None)
    # -o: the environment and its settings are already in place; make must not rebuild them.
    command = ["make", "--no-print-directory", "-o", ".venv/.installed-lab", "-o"]
    command += [".venv/share/jupyter/lab/settings/overrides.json", "-o"]
    command += [".venv/etc/jupyter/jupyter_server_config.d/workbench.json", "lab", f"PORT={port}"]
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        said = re.fullmatch(
            rf"workbench: JupyterLab serves (http://127\.0\.0\.1:{port}/lab/tree/notebooks\?token=\S+)\n",
            first,
        )
        assert said, first
        url = said[1]
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert process.poll() is None, process.stdout.read()
                assert time.monotonic() < deadline, f"nothing answered at {url}"
                time.sleep(0.3)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
