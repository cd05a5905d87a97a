"""The registry: declaring tools, re-running cells, hooks, dry runs and bounded concurrency."""

from __future__ import annotations

import threading
import time

import pytest

import workbench as wb


def test_decorator_forms_and_the_returned_tool(tools):
    @tools.tool
    def plain(x: int) -> int:
        """Double x."""
        return 2 * x

    @tools.tool(read_only=True, name="renamed")
    def other(x: int) -> int:
        """Triple x."""
        return 3 * x

    assert isinstance(plain, wb.Tool)
    assert plain(4) == 8  # still callable as plain Python
    assert tools.names() == ["plain", "renamed"]
    assert tools.spec("renamed").read_only is True
    assert plain.invoke({"x": "2"}).wait(5).result == 4


def test_rerunning_the_same_cell_replaces_the_tool_silently(tools):
    namespace: dict = {"tools": tools}
    cell = '@tools.tool\ndef greet(name: str) -> str:\n    """Greet."""\n    return "hi " + name\n'
    exec(compile(cell, "<cell-1>", "exec"), namespace)
    exec(compile(cell.replace("hi ", "hello "), "<cell-1>", "exec"), namespace)
    assert tools.invoke("greet", {"name": "ada"}).wait(5).result == "hello ada"
    assert len(tools) == 1


def test_a_different_function_under_an_existing_name_is_refused_unless_replace(tools):
    @tools.tool
    def search(q: str) -> str:
        """Search."""
        return q

    def other(q: str) -> str:
        """Another search."""
        return q.upper()

    with pytest.raises(ValueError, match="duplicate tool name 'search'"):
        tools.register(other, name="search")
    tools.register(other, name="search", replace=True)
    assert tools.invoke("search", {"q": "a"}).wait(5).result == "A"


def test_unknown_metadata_is_refused_with_the_known_keys(tools):
    with pytest.raises(TypeError, match="unknown tool metadata colour"):

        @tools.tool(colour="red")
        def f() -> None:
            """Nothing."""


def test_spec_carries_every_metadata_field(tools):
    @tools.tool(
        read_only=True,
        idempotent=True,
        open_world=True,
        permission="always_ask",
        effects=["network"],
        interrupt="block",
        timeout=5,
        serial=True,
    )
    def fetch(url: str) -> str:
        """Fetch a URL."""
        return url

    spec = tools.spec("fetch")
    assert (spec.read_only, spec.destructive, spec.idempotent, spec.open_world) == (
        True,
        False,
        True,
        True,
    )
    assert spec.permission == "always_ask" and spec.ownership == "managed"
    assert spec.effects == ("network",) and spec.interrupt == "block"
    assert spec.timeout == 5 and spec.streaming is False and spec.serial is True
    assert spec.description == "Fetch a URL."


def test_raw_json_schema_tools_receive_the_arguments_dict(tools):
    def handler(args: dict, ctx: wb.ToolContext) -> dict:
        ctx.emit("called\n")
        return {"echo": args["from"]}

    tools.register(
        handler,
        name="echo_raw",
        description="Echo the `from` field.",
        input_schema={
            "type": "object",
            "properties": {"from": {"type": "integer"}},
            "required": ["from"],
            "additionalProperties": False,
        },
    )
    call = tools.invoke("echo_raw", {"from": "7"})
    assert call.wait(5).result == {"echo": 7}
    assert call.output() == "called\n"
    assert tools.spec("echo_raw").input_schema["properties"] == {"from": {"type": "integer"}}


def test_the_default_registry_behind_wb_tool_and_wb_invoke(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("workbench.registry._default._registry", None)

    @wb.tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    assert wb.invoke("shout", {"text": "hi"}).wait(5).result == "HI"
    wb.default_registry().history.flush()
    assert (tmp_path / ".workbench" / "history.sqlite").exists()
    wb.default_registry().history.close()


def test_before_tool_can_change_arguments_or_refuse(tools):
    @tools.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @tools.before_tool
    def censor(call, arguments):
        if arguments["text"] == "secret":
            return "secrets may not be echoed"
        if arguments["text"] == "hi":
            return {"text": "hello"}
        return None

    assert tools.invoke("echo", {"text": "hi"}).wait(5).result == "hello"
    refused = tools.invoke("echo", {"text": "secret"}).wait(5)
    assert refused.error.kind == "rejected"
    assert refused.error.message == "secrets may not be echoed"


def test_a_crashing_before_hook_refuses_the_call_and_the_body_never_runs(tools):
    ran = []

    @tools.tool
    def act() -> None:
        """Act."""
        ran.append(1)

    tools.before_tool(lambda call, arguments: 1 / 0)
    assert tools.invoke("act").wait(5).error.kind == "rejected"
    assert ran == []


def test_after_tool_can_transform_the_envelope(tools):
    @tools.tool
    def number() -> int:
        """Seven."""
        return 7

    @tools.after_tool
    def annotate(call, envelope):
        return envelope.replace(warnings=("checked by a hook",))

    tools.after_tool(lambda call, envelope: 1 / 0)  # a crashing hook is noted, not fatal
    call = tools.invoke("number")
    envelope = call.wait(5)
    assert envelope.result == 7 and envelope.warnings == ("checked by a hook",)
    assert any("after_tool hook" in note for note in call.notes)


def test_dry_run_plans_without_side_effects(tools, tmp_path):
    target = tmp_path / "out.txt"

    @tools.tool(destructive=True, effects=["writes out.txt"])
    def write(text: str, times: int = 1) -> str:
        """Write text."""
        target.write_text(text * times)
        return "written"

    call = tools.invoke("write", {"text": "x", "times": "3"}, dry_run=True)
    envelope = call.wait(5)
    assert not target.exists()
    assert envelope.result["dry_run"] is True
    assert envelope.result["arguments"] == {"text": "x", "times": 3}
    assert envelope.result["coercions"] == ['times: "3" → 3']
    assert envelope.result["effects"] == ["writes out.txt"]
    assert tools.history.get(call.id)["dry_run"] is True


def test_a_tool_may_define_its_own_dry_run(tools, tmp_path):
    @tools.tool
    def delete(path: str) -> str:
        """Delete a file."""
        raise AssertionError("must not run in a dry run")

    @delete.dry_run
    def plan(path: str) -> dict:
        return {"would_delete": path}

    envelope = tools.invoke("delete", {"path": "a.txt"}, dry_run=True).wait(5)
    assert envelope.result == {"dry_run": True, "plan": {"would_delete": "a.txt"}}


def test_invoke_many_bounds_concurrency_and_keeps_order(tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path, max_concurrency=2)
    lock = threading.Lock()
    running = [0]
    peak = [0]

    @tools.tool
    def work(n: int) -> int:
        """Work a little."""
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return n

    calls = tools.invoke_many([("work", {"n": i}) for i in range(8)])
    assert [call.wait(10).result for call in calls] == list(range(8))
    assert peak[0] == 2


def test_serial_tools_run_one_at_a_time(tools):
    lock = threading.Lock()
    running = [0]
    peak = [0]

    @tools.tool(serial=True)
    def exclusive() -> None:
        """One at a time."""
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.03)
        with lock:
            running[0] -= 1

    for call in tools.invoke_many([("exclusive", {})] * 5):
        call.wait(10)
    assert peak[0] == 1


def test_preflight_alone_and_unknown_names(tools):
    @tools.tool
    def add(a: int) -> int:
        """Add."""
        return a

    checked = tools.preflight("add", {"a": "4"})
    assert checked.ok and checked.arguments == {"a": 4}
    unknown = tools.preflight("nope", {})
    assert not unknown.ok and unknown.error.error.kind == "tool_not_found"


def test_an_unknown_family_is_refused_at_registration(tools):
    with pytest.raises(ValueError, match="unknown family 'tabular'"):

        @tools.tool(family="tabular")
        def table() -> list:
            """Rows."""
            return []


@pytest.mark.parametrize("bad_id", [12, 1.5, b"call_1", ["call_1"], {"id": "x"}])
def test_a_model_call_id_that_is_not_a_string_is_refused_at_invoke(tmp_path, bad_id):
    tools = wb.Registry(history=tmp_path / "history.sqlite", artifacts=tmp_path / "artifacts")

    @tools.tool
    def add(a: int) -> int:
        """Add one."""
        return a + 1

    with pytest.raises(TypeError, match="call_id must be the id the model sent, as a string"):
        tools.invoke("add", {"a": 1}, call_id=bad_id)
    with pytest.raises(TypeError, match=type(bad_id).__name__):
        tools.invoke_many(
            [
                {"name": "add", "arguments": {"a": 1}, "id": "fine"},
                {"name": "add", "arguments": {"a": 2}, "id": bad_id},
            ]
        )
    # Nothing was started, so nothing was half recorded; a string id works as before.
    call = tools.invoke("add", {"a": 1}, call_id="toolu_01")
    envelope = call.wait(30)
    assert envelope.call_id == "toolu_01"
    tools.history.flush()
    assert [row["model_call_id"] for row in tools.history.rows()] == ["toolu_01"]
    assert [env.call_id for env in tools.history.envelopes()] == ["toolu_01"]
    tools.history.close()
