"""The runtime in a real Jupyter kernel: the kernel stays free while a tool runs, so Terminate,
Allow and Deny work mid-run; interrupting or killing the kernel leaves no orphan processes."""

from __future__ import annotations

import queue
import textwrap
import time
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager

from .conftest import pid_alive

pytestmark = pytest.mark.kernel


class Kernel:
    """A real ipykernel, driven over its channels like a notebook front end would."""

    def __init__(self, cwd: Path) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(cwd))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 30) -> tuple[str, float]:
        """Execute a cell; returns its stdout and how long the kernel took to reply."""
        started = time.monotonic()
        msg_id = self.client.execute(textwrap.dedent(code))
        reply = self.client.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=timeout)
        elapsed = time.monotonic() - started
        output = []
        while True:
            try:
                msg = self.client.get_iopub_msg(timeout=2)
            except queue.Empty:
                break
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                output.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                raise AssertionError("\n".join(msg["content"]["traceback"]))
            elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(output), elapsed

    def value(self, expression: str) -> str:
        return self.run(f"print({expression})")[0].strip()

    def until(self, expression: str, expected: str, timeout: float = 10) -> str:
        deadline = time.monotonic() + timeout
        seen = self.value(expression)
        while seen != expected and time.monotonic() < deadline:
            time.sleep(0.1)
            seen = self.value(expression)
        return seen

    def shutdown(self, now: bool = False) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=now)


@pytest.fixture
def kernel(tmp_path):
    session = Kernel(tmp_path)
    session.run(
        """
        import asyncio, threading, time
        import workbench as wb
        tools = wb.Registry(history="history.sqlite")

        @tools.tool
        async def slow(seconds: float) -> str:
            '''Sleep on the kernel's loop.'''
            await asyncio.sleep(seconds)
            return "slept"

        @tools.tool
        def blocking(seconds: float, ctx: wb.ToolContext) -> str:
            '''Block a worker thread until done or cancelled.'''
            ctx.token.wait(seconds)
            return "done"

        @tools.tool(permission="always_ask")
        def touch(name: str) -> str:
            '''Create a file.'''
            open(name, "w").close()
            return name
        """
    )
    yield session
    session.shutdown()


def test_invoke_returns_at_once_and_terminate_works_from_a_later_cell(kernel):
    _, took = kernel.run('call = tools.invoke("slow", {"seconds": 60})')
    assert took < 5
    assert kernel.until("call.state", "running") == "running"
    _, took = kernel.run("call.terminate()")
    assert took < 5
    assert kernel.until("call.state", "terminated") == "terminated"
    assert kernel.value("call.envelope.killed_by") == "user"


def test_a_blocking_tool_leaves_the_kernel_free(kernel):
    kernel.run('call = tools.invoke("blocking", {"seconds": 60})')
    assert kernel.until("call.state", "running") == "running"
    assert kernel.value("1 + 1") == "2"  # the kernel answers while the tool runs
    kernel.run("call.terminate()")
    assert kernel.until("call.state", "terminated") == "terminated"


def test_allow_and_deny_are_handled_while_the_call_waits(kernel, tmp_path):
    kernel.run('allowed = tools.invoke("touch", {"name": "yes.txt"})')
    kernel.run('denied = tools.invoke("touch", {"name": "no.txt"})')
    assert kernel.until("allowed.state", "awaiting_approval") == "awaiting_approval"
    assert not (tmp_path / "yes.txt").exists()
    kernel.run("allowed.approve(); denied.deny()")
    assert kernel.until("allowed.state", "succeeded") == "succeeded"
    assert kernel.until("denied.state", "failed") == "failed"
    assert kernel.value("denied.envelope.error.kind.value") == "user_denied"
    assert (tmp_path / "yes.txt").exists() and not (tmp_path / "no.txt").exists()


def test_await_and_wait_both_work_in_a_cell(kernel):
    out, _ = kernel.run('env = await tools.invoke("slow", {"seconds": 0.1}); print(env.result)')
    assert out.strip() == "slept"
    out, _ = kernel.run('print(tools.invoke("slow", {"seconds": 0.1}).wait().result)')
    assert out.strip() == "slept"


def test_an_awaited_async_tool_runs_on_the_runtime_loop_not_the_kernel_s(kernel):
    """Outside Jupyter an awaited ``async def`` call runs on the awaiting loop; in a kernel that
    loop is the notebook's, which a blocking body would freeze, so the runtime loop runs it."""
    kernel.run(
        """
        @tools.tool
        async def where() -> str:
            '''Name the thread.'''
            return threading.current_thread().name
        """
    )
    out, _ = kernel.run('print((await tools.invoke("where")).result)')
    assert out.strip() == "workbench-runtime"


def test_history_written_in_the_kernel_is_readable_outside(kernel, tmp_path):
    kernel.run('tools.invoke("slow", {"seconds": "0.01"}).wait(); tools.history.flush()')
    import workbench as wb

    rows = wb.History(tmp_path / "history.sqlite").rows()
    assert rows[-1]["tool"] == "slow" and rows[-1]["arguments"] == {"seconds": 0.01}


SPAWN_TOOL = """
@tools.tool
def tree(ctx: wb.ToolContext) -> int:
    '''Start a process tree.'''
    p = ctx.spawn(["bash", "-c", "sleep 120 & echo $! > grandchild.pid; wait"])
    return p.wait()
"""


def wait_for_pid(path: Path) -> int:
    deadline = time.monotonic() + 15
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(path.read_text())


def test_interrupting_a_waiting_cell_terminates_the_call_and_its_processes(kernel, tmp_path):
    kernel.run(SPAWN_TOOL)
    msg_id = kernel.client.execute('tools.invoke("tree").wait()')
    grandchild = wait_for_pid(tmp_path / "grandchild.pid")
    assert pid_alive(grandchild)
    kernel.manager.interrupt_kernel()
    reply = kernel.client.get_shell_msg(timeout=20)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["status"] == "error"
    deadline = time.monotonic() + 8
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild)


def error_of(kernel, msg_id: str) -> dict:
    """The error the cell ``msg_id`` reported on iopub (fails if none comes)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        msg = kernel.client.get_iopub_msg(timeout=20)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "error":
            return msg["content"]
    raise AssertionError("the interrupted cell reported no error")


def test_interrupting_a_wait_prints_one_line_naming_the_terminated_call(kernel):
    kernel.run('call = tools.invoke("slow", {"seconds": 60})')
    call_id = kernel.value("call.id")
    assert kernel.until("call.state", "running") == "running"
    msg_id = kernel.client.execute("call.wait()")
    time.sleep(1)  # the cell is now blocked in wait()
    kernel.manager.interrupt_kernel()
    error = error_of(kernel, msg_id)
    line = f"KeyboardInterrupt: interrupted: terminated the slow call {call_id}"
    assert error["traceback"] == [line]
    reply = kernel.client.get_shell_msg(timeout=20)
    assert reply["parent_header"]["msg_id"] == msg_id and reply["content"]["status"] == "error"
    time.sleep(1)  # requests sent just after an error are aborted by the kernel
    assert kernel.until("call.state", "terminated") == "terminated"


def test_interrupting_a_def_tool_run_by_its_waiting_cell_prints_one_line(kernel):
    """A plain def tool waited for at once runs on the waiting thread; Ctrl-C there too ends
    in one line naming the terminated call, not a traceback through the runtime."""
    msg_id = kernel.client.execute('call = tools.invoke("blocking", {"seconds": 60}); call.wait()')
    time.sleep(1.5)  # the body now runs in the cell's own thread
    kernel.manager.interrupt_kernel()
    error = error_of(kernel, msg_id)
    kernel.client.get_shell_msg(timeout=20)
    time.sleep(1)  # requests sent just after an error are aborted by the kernel
    call_id = kernel.value("call.id")
    assert error["traceback"] == [
        f"KeyboardInterrupt: interrupted: terminated the blocking call {call_id}"
    ]
    assert kernel.until("call.state", "terminated") == "terminated"


def test_killing_the_kernel_leaves_no_orphan_processes(tmp_path):
    session = Kernel(tmp_path)
    try:
        session.run(
            "import workbench as wb\ntools = wb.Registry(history=':memory:')\n" + SPAWN_TOOL
        )
        session.run('call = tools.invoke("tree")')
        grandchild = wait_for_pid(tmp_path / "grandchild.pid")
        assert pid_alive(grandchild)
    finally:
        session.shutdown(now=True)
    deadline = time.monotonic() + 8
    while pid_alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(grandchild)


# ── issue: one runtime loop of its own ───────────────────────────────────────────────────
HOG_TOOL = """
@tools.tool
async def hog(seconds: float) -> str:
    '''An async tool that blocks instead of awaiting: the bug a tool author writes.'''
    time.sleep(seconds)
    return "hogged"
"""


def test_wait_in_a_later_cell_on_a_running_an_approved_and_a_finished_call(kernel, tmp_path):
    kernel.run('running = tools.invoke("slow", {"seconds": 1})')
    out, _ = kernel.run("print(running.wait(20).result)")
    assert out.strip() == "slept"
    kernel.run('asking = tools.invoke("touch", {"name": "approved.txt"})')
    assert kernel.until("asking.state", "awaiting_approval") == "awaiting_approval"
    kernel.run("asking.approve()")
    out, _ = kernel.run("print(asking.wait(20).result)")
    assert out.strip() == "approved.txt" and (tmp_path / "approved.txt").exists()
    out, _ = kernel.run("print(running.wait().result, asking.wait().ok)")
    assert out.strip() == "slept True"


def test_await_in_a_later_cell_on_a_running_an_approved_and_a_finished_call(kernel):
    kernel.run('running = tools.invoke("slow", {"seconds": 1})')
    out, _ = kernel.run("print((await running).result)")
    assert out.strip() == "slept"
    kernel.run('asking = tools.invoke("touch", {"name": "awaited.txt"})')
    assert kernel.until("asking.state", "awaiting_approval") == "awaiting_approval"
    kernel.run("asking.approve()")
    out, _ = kernel.run("print((await asking).result)")
    assert out.strip() == "awaited.txt"
    out, _ = kernel.run("print((await running).result)")
    assert out.strip() == "slept"


def test_a_blocking_async_tool_never_freezes_the_kernel_and_is_named_on_its_call(kernel):
    kernel.run(HOG_TOOL)
    kernel.run('hogging = tools.invoke("hog", {"seconds": 10}); time.sleep(0.5)')
    out, took = kernel.run("print(1 + 1)")
    assert out.strip() == "2"
    assert took < 1.0  # the kernel answers while the runtime loop is held for 10 s
    kernel.run("hogging.wait(30)")
    out, _ = kernel.run("print([w for w in hogging.warnings if 'blocked' in w])")
    assert "`hog`" in out and "runtime loop was blocked" in out


def test_terminate_from_a_later_cell_reaches_a_call_that_a_blocked_loop_delays(kernel):
    kernel.run(HOG_TOOL)
    kernel.run('victim = tools.invoke("slow", {"seconds": 60})')
    assert kernel.until("victim.state", "running") == "running"
    kernel.run('hogging = tools.invoke("hog", {"seconds": 3}); time.sleep(0.3)')
    _, took = kernel.run("victim.terminate()")
    assert took < 1.0  # returns at once although the runtime loop is held
    assert kernel.until("victim.state", "terminated", timeout=15) == "terminated"
    assert kernel.value("victim.envelope.killed_by") == "user"
    out, _ = kernel.run("print(any('`hog`' in w for w in victim.warnings))")
    assert out.strip() == "True"  # the delayed call is told who held the loop
