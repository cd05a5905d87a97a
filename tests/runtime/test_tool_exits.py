"""A tool cannot end the program that called it: ``SystemExit``, ``KeyboardInterrupt`` and
``GeneratorExit`` raised by a body end its call, with an error envelope that says so, on every
path (``wait()``, ``await``, ``invoke_many``) and for every kind of body, in a script and in a
real Jupyter kernel; the calls after it run. A person's real Ctrl-C (a SIGINT) still stops
their program."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TOOLS = '''
import argparse, asyncio, json, os, sys, time
import workbench as wb

tools = wb.Registry(history="history.sqlite")
EXITS = {
    "SystemExit": lambda: SystemExit(2),
    "KeyboardInterrupt": KeyboardInterrupt,
    "GeneratorExit": GeneratorExit,
}

@tools.tool
def plain(exit: str) -> str:
    """Raise an exit."""
    raise EXITS[exit]()

@tools.tool
async def coroutine(exit: str) -> str:
    """Raise an exit after a turn of the loop."""
    await asyncio.sleep(0)
    raise EXITS[exit]()

@tools.tool
def generator(exit: str):
    """Stream a line, then raise an exit."""
    yield "a line\\n"
    raise EXITS[exit]()

@tools.tool
async def async_generator(exit: str):
    """Stream a line, then raise an exit."""
    yield "a line\\n"
    raise EXITS[exit]()

@tools.tool
def parse(n: str) -> int:
    """Parse a number as a command line would (argparse exits on a bad one)."""
    parser = argparse.ArgumentParser(prog="parse")
    parser.add_argument("--n", type=int)
    return parser.parse_args(["--n", n]).n

@tools.tool
def sleepy() -> str:
    """Say it started, then sleep."""
    open("started", "w").close()
    time.sleep(60)
    return "woke"

@tools.tool
async def sleepy_async() -> str:
    """Say it started, then sleep."""
    open("started", "w").close()
    await asyncio.sleep(60)
    return "woke"

KINDS = ("plain", "coroutine", "generator", "async_generator")
seen = []

def said(how, call, envelope):
    seen.append({
        "how": how,
        "tool": call.tool_name,
        "status": envelope.status,
        "kind": envelope.error.kind.value if envelope.error else None,
        "message": envelope.error.message if envelope.error else None,
        "said": any("would have ended the program" in w for w in envelope.warnings),
        "card": "would have ended the program" in wb.runtime.call_html(call),
    })

def waited():
    for tool in KINDS:
        for exit in EXITS:
            call = tools.invoke(tool, {"exit": exit})
            said("wait()", call, call.wait(30))
    call = tools.invoke("parse", {"n": "many"})
    said("wait()", call, call.wait(30))

async def awaited():
    for tool in KINDS:
        for exit in EXITS:
            call = tools.invoke(tool, {"exit": exit})
            said("await", call, await call)

def many():
    calls = tools.invoke_many([(tool, {"exit": exit}) for tool in KINDS for exit in EXITS])
    for call in calls:
        said("invoke_many", call, call.wait(30))
'''


def judged(seen: list[dict[str, object]]) -> None:
    assert len(seen) == 4 * 3 * 3 + 1
    assert [
        s
        for s in seen
        if (s["status"], s["kind"], s["said"], s["card"])
        != ("error", "execution_error", True, True)
    ] == []
    assert {s["how"] for s in seen} == {"wait()", "await", "invoke_many"}
    messages = {s["message"] for s in seen}
    assert {"SystemExit: 2", "KeyboardInterrupt", "GeneratorExit"} <= messages


def script(tmp_path: Path, body: str) -> subprocess.Popen[str]:
    (tmp_path / "calls.py").write_text(TOOLS + textwrap.dedent(body))
    return subprocess.Popen(
        [sys.executable, "calls.py"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_in_a_script_every_exit_a_tool_raises_ends_its_call_and_the_script_goes_on(tmp_path):
    child = script(
        tmp_path,
        """
        waited()
        asyncio.run(awaited())
        many()
        print(json.dumps(seen))
        print("after", tools.invoke("parse", {"n": "7"}).wait(30).result)
        """,
    )
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err[-3000:]
    lines = out.splitlines()
    judged(json.loads(lines[-2]))
    assert lines[-1] == "after 7"


@pytest.mark.kernel
def test_in_a_kernel_every_exit_a_tool_raises_ends_its_call_and_the_kernel_goes_on(tmp_path):
    from tests.test_kernel import Kernel

    kernel = Kernel(tmp_path)
    try:
        kernel.run(TOOLS)
        kernel.run("waited()", timeout=120)
        kernel.run("await awaited()", timeout=120)
        kernel.run("many()", timeout=120)
        judged(json.loads(kernel.run("print(json.dumps(seen))")[0]))
        assert kernel.value('tools.invoke("parse", {"n": "7"}).wait(30).result') == "7"
    finally:
        kernel.shutdown()


@pytest.mark.parametrize(
    "body",
    ['tools.invoke("sleepy").wait()', "asyncio.run(awaited_sleepy())"],
    ids=["def tool, wait()", "async def tool, await in asyncio.run"],
)
def test_a_persons_ctrl_c_still_stops_their_program(tmp_path, body):
    child = script(
        tmp_path,
        f"""
        import signal
        # Ctrl-C as in a terminal: a process started in the background of a shell without job
        # control (as a CI runner may start the suite) inherits SIGINT ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)

        async def awaited_sleepy():
            return await tools.invoke("sleepy_async")

        {body}
        print("after", flush=True)
        """,
    )
    deadline = time.monotonic() + 120
    while not (tmp_path / "started").exists():
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert "after" not in out
    # Ended by the interruption (a ``KeyboardInterrupt``; ``wait()`` names the call it ended).
    stopped = "KeyboardInterrupt" in err or "CallInterrupted" in err
    assert child.returncode != 0 and stopped, (child.returncode, err[-2000:])
