"""Drive a real JupyterLab in Debian's chromium: server, browser and notebook helpers.

Everything here is plain functions over a Playwright sync ``Page`` plus :class:`Lab`, a thin
per-test bundle that the ``lab`` fixture hands to tests. The facts these helpers rely on are
recorded in ``shared/BROWSER-TESTING.md``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, Playwright, Route, expect
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.conftest import pid_alive, wait_for_exit

REPO = Path(__file__).resolve().parents[2]
# Gitignored; screenshots and the server log stay here for a person to look at.
OUTPUT = REPO / "test-output"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)

# What `make lab` and Binder install as the environment's settings (binder/overrides.json: widget
# state saved with notebooks, no "get notified about Jupyter news?" toast): the test server reads
# the same file as its overrides (``--LabApp.app_settings_dir``).
ENVIRONMENT_SETTINGS = REPO / "binder" / "overrides.json"

# The user settings `make lab` and Binder start a lab with (binder/user-settings: workbench's
# Help menu entries), copied into the test server's user settings as they are.
USER_SETTINGS = REPO / "binder" / "user-settings"

# User settings the tests add on top, written into the server's temporary JUPYTER_CONFIG_DIR so
# nothing is written into the environment: with windowing, JupyterLab does not render cells that
# are off screen.
LAB_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}

SERVER_EXTENSION_CONFIG = REPO / "jupyter-config" / "jupyter_server_config.d" / "workbench.json"

UPSTREAM_WIDGET_MANAGER_RACE = "TypeError: Cannot read properties of null (reading 'widgets')"
"""jupyterlab-manager reading ``widgets`` of a disposed notebook panel's content."""

UPSTREAM_BOX_DISPOSAL_RACE = re.compile(
    r"^(Error: Could not add child view to box\b"
    r"|TypeError: Cannot read properties of null \(reading 'processLuminoMessage'\))"
)
"""What ipywidgets' box view logs when it is disposed while its children's views are still
being made: every pending child then fails to be added, and the disposed views are still sent
Lumino messages. A slow page meets it when an output is replaced (a card that was waiting for
Allow/Deny republished as its final form) before the view it held was drawn; nothing on the
page is left broken (the broken-widget selectors count that)."""


def ours(console_errors: Sequence[str]) -> list[str]:
    """The console errors of a page but for ipywidgets' box-disposal race."""
    return [m for m in console_errors if not UPSTREAM_BOX_DISPOSAL_RACE.match(m)]


KERNEL_NAME = "python3"
PROMPT_DONE = re.compile(r"\[\d+\]")
PROMPT_STARTED = re.compile(r"\[(\*|\d+)\]")


@dataclass(frozen=True)
class LabServer:
    """A running JupyterLab started by :func:`start_lab`.

    ``root`` is the server's root directory (and the kernels' working directory for notebooks
    written there); ``url`` has no trailing slash; ``pid`` is the server's, ours alone to stop;
    ``process`` its handle in the process that started it (None in the others that share it,
    ``shared_lab.py``).
    """

    url: str
    root: Path
    home: Path
    log: Path
    pid: int
    process: subprocess.Popen[bytes] | None = None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it: bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def lab_environment(home: Path) -> dict[str, str]:
    """The environment for an isolated server: every Jupyter and IPython path under ``home``."""
    env = dict(os.environ)
    # Anything that would point the server at a user's own Jupyter files goes.
    for name in (
        "JUPYTER_PATH",
        "JUPYTER_CONFIG_PATH",
        "JUPYTERLAB_DIR",
        "JUPYTER_PREFER_ENV_PATH",
    ):
        env.pop(name, None)
    env.update(
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / "jupyter-config"),
        JUPYTER_DATA_DIR=str(home / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(home / "jupyter-runtime"),
        IPYTHONDIR=str(home / "ipython"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "jupyter-config" / "lab" / "user-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "jupyter-config" / "lab" / "workspaces"),
        PYTHONUNBUFFERED="1",
    )
    return env


def prepare_home(home: Path) -> None:
    """Write the kernelspec, the JupyterLab user settings and the environment's settings the
    test server uses into ``home``.

    The ``python3`` kernel runs this interpreter (``sys.executable``), so the editable
    ``workbench`` install is importable in every notebook.
    """
    env = lab_environment(home)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        Path(env[name]).mkdir(parents=True, exist_ok=True)
    kernel_dir = Path(env["JUPYTER_DATA_DIR"]) / "kernels" / KERNEL_NAME
    kernel_dir.mkdir(parents=True, exist_ok=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "metadata": {"debugger": True},
    }
    (kernel_dir / "kernel.json").write_text(json.dumps(spec, indent=1))
    # What `make lab` and Binder install: workbench's server extension (saved notebooks keep
    # each workbench view as its static HTML).
    server_config = Path(env["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.d"
    server_config.mkdir(parents=True, exist_ok=True)
    shutil.copy(SERVER_EXTENSION_CONFIG, server_config / SERVER_EXTENSION_CONFIG.name)
    settings_dir = Path(env["JUPYTERLAB_SETTINGS_DIR"])
    shutil.copytree(USER_SETTINGS, settings_dir, dirs_exist_ok=True)
    for plugin_id, values in LAB_SETTINGS.items():
        package, plugin = plugin_id.split(":")
        path = settings_dir / package / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, indent=1))
    app_settings = home / "app-settings"
    app_settings.mkdir(exist_ok=True)
    shutil.copy(ENVIRONMENT_SETTINGS, app_settings / "overrides.json")


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: if pytest is killed outright, its server must not
    # linger and eat one of the two cores. PR_SET_PDEATHSIG (1) survives exec.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def start_lab(
    home: Path,
    root: Path,
    log: Path,
    *,
    timeout: float = 90.0,
    options: Sequence[str] = (),
    die_with_parent: bool = True,
) -> LabServer:
    """Start JupyterLab on 127.0.0.1 with no token, no password and no XSRF check.

    Returns once ``/api/status`` answers. ``home`` holds every Jupyter path (see
    :func:`lab_environment`), ``root`` is the server root, ``log`` receives the server's output;
    ``options`` are more command-line options for the server; ``die_with_parent=False`` lets it
    outlive this process (for the run's shared server, stopped by the run).
    The server runs in its own session so :func:`stop_lab` can signal its whole group. Raises
    ``RuntimeError`` with the log's tail if the server exits or does not answer in ``timeout``.
    """
    prepare_home(home)
    root.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        server = _launch(home, root, log, options, die_with_parent)
        assert server.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and server.process.poll() is None:
            with contextlib.suppress(OSError):
                api(server, "GET", "/api/status", timeout=2)
                return server
            time.sleep(0.2)
        if server.process.poll() is None:
            stop_lab(server)
            raise RuntimeError(f"JupyterLab gave no answer in {timeout}s:\n{_tail(log)}")
        # Another process may take the port between free_port() and the server's bind.
        if "already in use" not in _tail(log):
            break
    raise RuntimeError(f"JupyterLab exited with {server.process.returncode}:\n{_tail(log)}")


def _launch(
    home: Path, root: Path, log: Path, options: Sequence[str], die_with_parent: bool
) -> LabServer:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--allow-root",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.app_settings_dir={home / 'app-settings'}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *options,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=lab_environment(home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if die_with_parent and sys.platform == "linux" else None,
        )
    return LabServer(f"http://127.0.0.1:{port}", root, home, log, process.pid, process)


def api(server: LabServer, method: str, path: str, *, timeout: float = 10.0) -> Any:
    """Call the server's REST API and return the decoded JSON (None for an empty body)."""
    request = urllib.request.Request(server.url + path, method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
    return json.loads(body) if body else None


def shutdown_sessions(server: LabServer, path: str | None = None) -> None:
    """Delete the server's sessions, and so their kernels; only notebook ``path``'s if given."""
    with contextlib.suppress(OSError):
        for session in api(server, "GET", "/api/sessions"):
            if path is None or session.get("path") == path:
                with contextlib.suppress(OSError):
                    api(server, "DELETE", f"/api/sessions/{session['id']}", timeout=30)


def stop_lab(server: LabServer, *, grace: float = 15.0) -> None:
    """Stop the server we started, by its pid (in whichever process of the run): kernels first,
    then SIGTERM its group, SIGKILL if it lingers."""
    if pid_alive(server.pid):
        shutdown_sessions(server)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if not pid_alive(server.pid):
            break
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile: nothing to signal
            os.killpg(server.pid, sig)
        wait_for_exit([server.pid], wait)
    # Kernels live in the server's group; a SIGTERMed server may leave one behind.
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(server.pid, signal.SIGKILL)
    if server.process is not None:
        server.process.wait(5)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


def launch_chromium(playwright: Playwright, user_data_dir: Path) -> BrowserContext:
    """Launch Debian's chromium, headless, with a fresh profile in ``user_data_dir``.

    Fails the test (not a skip) with a clear message when ``/usr/bin/chromium`` is missing.
    """
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium. "
            "Run `make chromium` (or `apt-get install chromium`); "
            "`playwright install` is not used.",
            pytrace=False,
        )
    return playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=str(CHROMIUM),
        headless=True,
        args=list(CHROMIUM_ARGS),
        viewport={"width": 1400, "height": 1000},
    )


def write_notebook(directory: Path, name: str, cells: Sequence[str]) -> Path:
    """Write ``cells`` (code sources, in order) as ``directory/NAME.ipynb`` for python3."""
    import nbformat  # here: with jsonschema, 2 s of every test process's start otherwise

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells],
        metadata={
            "kernelspec": {
                "name": KERNEL_NAME,
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            },
            "language_info": {"name": "python"},
        },
    )
    path = directory / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path


def notebook_panel(page: Page) -> Locator:
    """The notebook panel currently shown in the main area."""
    return page.locator(".jp-NotebookPanel:visible").first


def wait_for_kernel_idle(page: Page, *, timeout: float = 60.0) -> None:
    """Wait until the status bar reports a started kernel that is idle.

    The status bar (unlike the toolbar indicator) says ``| Idle`` only once a kernel exists.
    """
    expect(page.locator("#jp-main-statusbar")).to_contain_text("| Idle", timeout=timeout * 1000)


def open_notebook(page: Page, server: LabServer, path: str, *, timeout: float = 90.0) -> None:
    """Open notebook ``path`` (relative to the server root, e.g. ``"dir/x.ipynb"``).

    Uses a reset workspace so no saved layout interferes; returns once the notebook shows and
    its kernel is idle.
    """
    url = f"{server.url}/lab/tree/{urllib.parse.quote(path)}?reset"
    page.goto(url, timeout=timeout * 1000)
    expect(notebook_panel(page).locator(".jp-Cell").first).to_be_visible(timeout=timeout * 1000)
    wait_for_kernel_idle(page, timeout=timeout)


def export_notebooks(paths: Sequence[Path], out_dir: Path) -> None:
    """``jupyter nbconvert --to html`` of ``paths`` in one run, each to ``out_dir/<stem>.html``."""
    exported = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html"]
        + [str(path) for path in paths]
        + ["--output-dir", str(out_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert exported.returncode == 0, exported.stderr


def load_offline(page: Page, html: Path) -> None:
    """Load an exported HTML file with every request but ``file:`` ones refused (nbconvert's
    page asks a CDN for MathJax, for one): what a reader without a network sees."""

    def route(target: Route) -> None:
        if target.request.url.startswith("file:"):
            target.continue_()
        else:
            target.abort()

    page.route("**/*", route)
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    time.sleep(0.5)


def code_prompts(page: Page) -> Locator:
    """The input prompts (``[ ]:``, ``[*]:``, ``[3]:``) of the shown notebook's code cells."""
    return notebook_panel(page).locator(".jp-CodeCell .jp-InputPrompt")


def _wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def run_all_cells(
    page: Page, *, wait: bool = True, timeout: float = 60.0, attempts: int = 3
) -> None:
    """Run every cell through the menu Run → Run All Cells.

    The command only fires once the notebook has focus, so this clicks the first prompt, picks
    the menu item, checks that the first prompt turned ``[*]`` or ``[n]`` and tries again if not.
    With ``wait`` it returns once every code cell shows an execution count (cells that start
    background work with ``asyncio.ensure_future`` count as done when they return).
    """
    prompts = code_prompts(page)
    first = prompts.first
    for _ in range(attempts):
        first.click()
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        item = page.locator(".lm-Menu-item:not(.lm-mod-disabled)").filter(
            has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))
        )
        try:
            item.click(timeout=5000)
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
            continue
        if _wait_until(lambda: bool(PROMPT_STARTED.search(first.inner_text())), 10.0):
            break
    else:
        raise AssertionError(f"Run All Cells did not start in {attempts} attempts")
    if wait:
        count = prompts.count()
        for index in range(count):
            expect(prompts.nth(index)).to_have_text(PROMPT_DONE, timeout=timeout * 1000)


def run_cell(page: Page, index: int, *, timeout: float = 60.0) -> None:
    """Run code cell ``index`` (0-based, code cells only) and return once it has finished.

    Finished means its prompt shows a new execution count.
    """
    prompt = code_prompts(page).nth(index)
    before = prompt.inner_text()
    prompt.click()
    # Ctrl+Enter runs the selected cell and keeps the selection, in command mode.
    page.keyboard.press("Control+Enter")

    def finished() -> bool:
        text = prompt.inner_text()
        return text != before and bool(PROMPT_DONE.search(text))

    if not _wait_until(finished, timeout):
        raise AssertionError(f"cell {index} did not finish in {timeout}s: {prompt.inner_text()!r}")


def save_notebook(page: Page, path: Path, *, timeout: float = 30.0) -> None:
    """Save the shown notebook (Ctrl+S, as a person would) and return once ``path`` on disk
    was rewritten. The key goes to the notebook, so its first prompt is clicked first."""
    before = path.stat().st_mtime_ns
    code_prompts(page).first.click()
    deadline = time.monotonic() + timeout
    while path.stat().st_mtime_ns == before:
        assert time.monotonic() < deadline, f"{path.name} was not saved within {timeout}s"
        page.keyboard.press("Control+s")
        _wait_until(lambda: path.stat().st_mtime_ns != before, 2.0)
    # The server writes the file in one step, but give a slow disk a moment to settle.
    _wait_until(lambda: False, 0.3)


def wait_for_output(page: Page, selector: str, *, timeout: float = 30.0) -> Locator:
    """The first element matching ``selector`` inside a cell output of the shown notebook.

    Waits until it is visible and returns its locator.
    """
    locator = notebook_panel(page).locator(".jp-OutputArea-output").locator(selector).first
    expect(locator).to_be_visible(timeout=timeout * 1000)
    return locator


def safe_name(text: str) -> str:
    """``text`` reduced to characters that are safe in a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "unnamed"


def screenshot(locator: Locator, directory: Path, name: str) -> Path:
    """Save a PNG of ``locator`` as ``directory/NAME.png`` and return the path.

    ``locator.screenshot`` is used because JupyterLab scrolls inside its panels, so a full-page
    shot shows only the window.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{safe_name(name)}.png"
    # A card republished when its call ends is drawn anew; the locator finds the new element
    # on the next try.
    for attempt in range(3):
        try:
            locator.screenshot(path=str(path))
            break
        except PlaywrightError as exc:
            if "not attached" not in str(exc) or attempt == 2:
                raise
            time.sleep(0.5)
    return path


def saved_html(path: Path, cell: int) -> str:
    """The ``text/html`` of code cell ``cell``'s outputs in the notebook at ``path``, as last
    saved to disk ("" while it is not written, or caught mid-write)."""
    try:
        notebook = json.loads(path.read_text())
    except (OSError, ValueError):
        return ""
    parts = [out.get("data", {}).get("text/html", "") for out in notebook["cells"][cell]["outputs"]]
    return "".join("".join(part) if isinstance(part, list) else part for part in parts)


def probe_source(filename: str, expression: str) -> str:
    """Code for a cell that writes ``json.dumps(EXPRESSION)`` to ``filename`` in the kernel's cwd.

    The write is atomic (write, then rename), so :func:`wait_for_file` never sees half of it.
    """
    return (
        "import json as _json, os as _os\n"
        f"with open({filename + '.tmp'!r}, 'w') as _f:\n"
        f"    _json.dump({expression}, _f)\n"
        f"_os.replace({filename + '.tmp'!r}, {filename!r})\n"
    )


def wait_for_file(path: Path, *, timeout: float = 10.0) -> str:
    """The text of ``path`` once it exists and is not empty; AssertionError after ``timeout``."""
    text = ""

    def ready() -> bool:
        nonlocal text
        try:
            text = path.read_text()
        except FileNotFoundError:
            return False
        return bool(text)

    if not _wait_until(ready, timeout, interval=0.05):
        raise AssertionError(f"{path} was not written within {timeout}s")
    return text


@dataclass
class Lab:
    """One test's view of the shared JupyterLab: a fresh page plus the helpers bound to it.

    Each test gets its own folder ``workdir`` under the server root: its notebooks go there, so
    their kernels start there and files they write (probes, markers) cannot collide with another
    test's. ``errors`` collects every uncaught JavaScript error of the page (``pageerror``) from
    the moment the page was created; ``screenshots`` is this test's screenshot directory.
    """

    page: Page
    server: LabServer
    workdir: Path
    screenshots: Path
    errors: list[str] = field(default_factory=list)
    notebooks: list[str] = field(default_factory=list)

    def write_notebook(self, cells: Sequence[str], name: str = "test") -> Path:
        """See :func:`write_notebook`: ``workdir/NAME.ipynb``; its kernel stops after the test."""
        path = write_notebook(self.workdir, name, cells)
        self.notebooks.append(path.relative_to(self.server.root).as_posix())
        return path

    def open(self, name: str = "test", *, timeout: float = 90.0) -> None:
        """See :func:`open_notebook`; opens ``workdir/NAME.ipynb``."""
        path = (self.workdir / f"{name}.ipynb").relative_to(self.server.root).as_posix()
        open_notebook(self.page, self.server, path, timeout=timeout)

    def run_all(self, *, wait: bool = True, timeout: float = 60.0) -> None:
        """See :func:`run_all_cells`."""
        run_all_cells(self.page, wait=wait, timeout=timeout)

    def run_cell(self, index: int, *, timeout: float = 60.0) -> None:
        """See :func:`run_cell`."""
        run_cell(self.page, index, timeout=timeout)

    def wait_for_idle(self, *, timeout: float = 60.0) -> None:
        """See :func:`wait_for_kernel_idle`."""
        wait_for_kernel_idle(self.page, timeout=timeout)

    def output(self, selector: str, *, timeout: float = 30.0) -> Locator:
        """See :func:`wait_for_output`."""
        return wait_for_output(self.page, selector, timeout=timeout)

    def screenshot(self, locator: Locator, name: str) -> Path:
        """See :func:`screenshot`; saved under this test's screenshot directory."""
        return screenshot(locator, self.screenshots, name)

    def wait_for_file(self, name: str, *, timeout: float = 10.0) -> str:
        """See :func:`wait_for_file`; ``name`` is relative to ``workdir``."""
        return wait_for_file(self.workdir / name, timeout=timeout)

    def assert_no_page_errors(self) -> None:
        """Fail if the page raised any uncaught JavaScript error so far, but for one known race
        inside JupyterLab's widget manager (not ours): when a notebook panel is disposed while
        the manager still walks its cells (a notebook reopened at once), it reads ``widgets``
        of the panel's content, which is already null."""
        ours = [error for error in self.errors if error != UPSTREAM_WIDGET_MANAGER_RACE]
        assert ours == [], f"uncaught JavaScript errors in the page: {ours}"

    def close(self) -> None:
        """Close the page and shut down the kernels of the notebooks this test wrote."""
        with contextlib.suppress(Exception):
            self.page.close()
        for path in self.notebooks:
            shutdown_sessions(self.server, path)


def new_lab(context: BrowserContext, server: LabServer, test_id: str, screenshots: Path) -> Lab:
    """A fresh page in ``context`` that records its uncaught JavaScript errors.

    The test's folder is ``server.root/TEST_ID`` (created here).
    """
    workdir = server.root / safe_name(test_id)
    workdir.mkdir(parents=True, exist_ok=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    lab = Lab(page=page, server=server, workdir=workdir, screenshots=screenshots)
    page.on("pageerror", lambda error: lab.errors.append(f"{error.name}: {error.message}"))
    return lab


__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "ENVIRONMENT_SETTINGS",
    "LAB_SETTINGS",
    "OUTPUT",
    "REPO",
    "USER_SETTINGS",
    "Lab",
    "LabServer",
    "api",
    "code_prompts",
    "launch_chromium",
    "new_lab",
    "open_notebook",
    "probe_source",
    "run_all_cells",
    "run_cell",
    "save_notebook",
    "screenshot",
    "shutdown_sessions",
    "start_lab",
    "stop_lab",
    "wait_for_file",
    "wait_for_kernel_idle",
    "wait_for_output",
    "write_notebook",
]
