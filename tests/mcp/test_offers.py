"""Everything a server offers besides tools, through the connection, against the reference
``server-everything`` and ``server-filesystem`` (npm, pinned, started over stdio): resources and
templates listed and read (text and blobs kept whole as artifacts), prompts listed and produced,
roots declared and changed from the notebook (``server-filesystem`` reads only inside them), and
the server's log messages on the connection and on the card of the call they arrived in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.server.mcpserver import Context, MCPServer

import workbench as wb
from tests.conftest import wait_until
from tests.mcp.support import node_tool
from tests.widgets.support import notebook_showing
from workbench import mcp as wbmcp
from workbench.mcp._offers import UNTIED_LOG_NOTE


def run(tools: wb.Registry, name: str, args: dict[str, object]) -> wb.Call:
    call = tools.invoke(name, args)
    call.wait(60)
    return call


@pytest.fixture(scope="module")
def everything(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[wb.Registry, wbmcp.Connection, Path]]:
    root = tmp_path_factory.mktemp("everything-root")
    tools = wb.Registry(history=":memory:", artifacts=tmp_path_factory.mktemp("artifacts"))
    conn = wbmcp.connect([node_tool("mcp-server-everything")], tools=tools, roots=[root])
    yield tools, conn, root
    conn.close()
    tools.history.close()


def test_resources_and_templates_are_listed(everything):
    _, conn, _ = everything
    resources = conn.resources()
    assert len(resources) == 7
    assert all(resource["uri"].startswith("demo://resource/static/") for resource in resources)
    templates = {template["uriTemplate"] for template in conn.resource_templates()}
    assert templates == {
        "demo://resource/dynamic/text/{resourceId}",
        "demo://resource/dynamic/blob/{resourceId}",
    }


def test_a_text_resource_reads_as_a_card_with_its_text_kept(everything):
    _, conn, _ = everything
    uri = next(r["uri"] for r in conn.resources() if r["uri"].endswith("architecture.md"))
    read = conn.read(uri)
    assert read.ok and read.summary_text.startswith(f"{uri}: 1 contents")
    assert read.result["text"].startswith(f"[resource {uri}]\n# Everything Server")
    assert not read.result.get("truncated") and read.artifacts == ()  # short: kept whole inline
    assert "text/html" in read._repr_mimebundle_()
    row = conn.reads.history.get(read.call_id)
    assert row is not None and row["tool"] == "mcp_read_resource" and row["state"] == "succeeded"


def test_a_blob_resource_is_kept_whole_and_named(everything):
    _, conn, _ = everything
    read = conn.read("demo://resource/dynamic/blob/3")
    assert read.ok and len(read.artifacts) == 1
    saved = Path(read.artifacts[0].path)
    assert f"saved as {saved}" in read.result["text"]
    # The blob arrives base64-encoded; what is kept is its decoded bytes.
    assert "Resource 3" in saved.read_bytes().decode()
    assert f", {saved.stat().st_size} bytes) saved as" in read.result["text"]


def test_prompts_are_listed_and_produce_their_messages(everything):
    _, conn, _ = everything
    names = {prompt["name"] for prompt in conn.prompts()}
    assert names == {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"}
    simple = conn.prompt("simple-prompt")
    assert simple == [
        {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt without arguments."},
        }
    ]
    with_arguments = conn.prompt("args-prompt", city="Oslo", state="Viken")
    assert "Oslo" in with_arguments[0]["content"]["text"]


def test_roots_are_declared_and_changed_from_the_notebook(everything, tmp_path):
    tools, conn, root = everything
    assert conn.roots == [root.resolve().as_uri()]
    assert root.resolve().as_uri() in run(tools, "get_roots_list", {}).receipt
    updates = sum("Roots updated" in str(entry["data"]) for entry in conn.log)
    conn.roots = [tmp_path]
    # The server asks for the new list when told it changed, and says so in its log. (Its log
    # line for the list it read at connect may come late, so the list itself is what is
    # waited for.)
    assert wait_until(
        lambda: tmp_path.resolve().as_uri() in run(tools, "get_roots_list", {}).receipt, 20
    )
    assert wait_until(
        lambda: sum("Roots updated" in str(entry["data"]) for entry in conn.log) > updates, 20
    )


def test_log_messages_reach_the_connection_and_the_call_they_arrived_in(everything):
    tools, conn, _ = everything
    conn.set_log_level("debug")  # the first message's level is random: every level is asked for
    before = len(conn.log)
    call = run(tools, "toggle_simulated_logging", {})
    try:
        assert call.state == "succeeded"
        # One message is sent at once, while the call is in flight; then one every 5 s.
        assert wait_until(lambda: len(conn.log) > before, 20)
        # Before 2026-07-28 a log message is the session's, not a request's: the card says so
        # once, before the first line.
        assert conn.protocol_version != "2026-07-28"
        log = call.output("log")
        assert log.startswith(UNTIED_LOG_NOTE) and log.count(UNTIED_LOG_NOTE) == 1
        assert "\n[server " in log
        entry = conn.log[-1]
        assert entry["level"] in wbmcp.LOG_LEVELS and entry["data"]
    finally:
        run(tools, "toggle_simulated_logging", {})  # stop it
        conn.set_log_level("info")


def test_a_log_line_that_comes_while_a_call_runs_is_not_said_to_be_the_calls(everything, tmp_path):
    """server-everything logs "Roots updated" when the client's roots change: that line may
    arrive while a long-running operation runs, and its card must not pass it off as its own."""
    tools, conn, root = everything
    updates = sum("Roots updated" in str(entry["data"]) for entry in conn.log)
    operation = tools.invoke("trigger_long_running_operation", {"duration": 3, "steps": 3})
    assert wait_until(lambda: operation.state == "running", 20)
    conn.roots = [tmp_path]
    try:
        assert wait_until(
            lambda: sum("Roots updated" in str(entry["data"]) for entry in conn.log) > updates, 20
        )
        operation.wait(60)
        assert operation.state == "succeeded", operation.receipt
        log = operation.output("log")
        assert "Roots updated" in log
        assert log.index(UNTIED_LOG_NOTE) < log.index("Roots updated")
    finally:
        conn.roots = [root]


def test_the_log_level_is_set_on_the_server(everything):
    _, conn, _ = everything
    conn.set_log_level("emergency")
    with pytest.raises(ValueError, match="level must be one of"):
        conn.set_log_level("loud")  # type: ignore[arg-type]


def test_server_filesystem_works_through_the_roots_it_is_given(tmp_path):
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    (inside / "a.txt").write_text("alpha")
    (outside / "b.txt").write_text("beta")
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    # No directory on its command line: the server reads only inside the client's roots.
    conn = wbmcp.connect([node_tool("mcp-server-filesystem")], tools=tools, roots=[inside])
    try:
        assert wait_until(lambda: "Updated allowed directories" in conn.server_log(), 20)
        assert run(tools, "read_text_file", {"path": str(inside / "a.txt")}).receipt == "alpha"
        refused = run(tools, "read_text_file", {"path": str(outside / "b.txt")})
        assert refused.state == "failed" and "outside allowed directories" in refused.receipt
        conn.roots = [outside]
        assert wait_until(lambda: conn.server_log().count("Updated allowed directories") >= 2, 20)
        assert run(tools, "read_text_file", {"path": str(outside / "b.txt")}).receipt == "beta"
    finally:
        conn.close()
        tools.history.close()


def test_roots_cannot_be_set_on_a_connection_that_declared_none(tmp_path):
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    with wbmcp.connect([node_tool("mcp-server-everything")], tools=tools) as conn:
        assert conn.roots == [] and "get_roots_list" not in conn.names
        with pytest.raises(ValueError, match="declared no roots"):
            conn.roots = [tmp_path]
    tools.history.close()


def test_a_long_running_operations_progress_is_a_bar_on_its_card(everything):
    from workbench.widgets import card

    tools, _, _ = everything
    call = run(tools, "trigger_long_running_operation", {"duration": 0.4, "steps": 4})
    assert call.state == "succeeded" and "Steps: 4" in call.receipt
    reports = [(e.data["done"], e.data["total"]) for e in call.events if e.type == "tool.progress"]
    assert reports == [(1, 4), (2, 4), (3, 4), (4, 4)]
    html = card(call).static_html()
    assert "<progress class='wb-progress-bar' value='4' max='4'>" in html and "4/4 (100%)" in html
    row = tools.history.get(call.id)
    assert row is not None
    assert [e["done"] for e in row["events"] if e["type"] == "tool.progress"] == [1, 2, 3, 4]


def test_subscribed_resources_updates_arrive_live_and_unsubscribe_stops_them(everything):
    tools, conn, _ = everything
    first, second = (r["uri"] for r in conn.resources()[:2])
    heard: list[str] = []
    conn.subscribe(first, on_update=heard.append)
    conn.subscribe(second)
    assert conn.subscriptions == [first, second]
    # server-everything sends updates only once asked to: at once, then every 5 s.
    toggle = run(tools, "toggle_subscriber_updates", {})
    try:
        assert wait_until(lambda: first in heard, 20)
        assert {update["uri"] for update in conn.updates} >= {first, second}
        assert {"level": "info", "logger": "resources/updated", "data": first} in conn.log
        # The first round arrives while the tool call is in flight: it is on that call's card.
        assert f"[server resources/updated] {first}" in toggle.output("log")
        conn.unsubscribe(first)
        assert conn.subscriptions == [second]
        stopped_at = len(conn.updates)
        # The next round for the URI still subscribed proves a round passed without the other.
        assert wait_until(lambda: len(conn.updates) > stopped_at, 20)
        later = [update["uri"] for update in list(conn.updates)[stopped_at:]]
        assert second in later and first not in later
        heard_count = len(heard)
    finally:
        run(tools, "toggle_subscriber_updates", {})  # stop them
        conn.unsubscribe(second)
    assert len(heard) == heard_count
    with pytest.raises(ValueError, match="not subscribed to"):
        conn.unsubscribe(first)


def test_a_failing_update_function_is_on_the_log_and_others_still_run(everything):
    tools, conn, _ = everything
    uri = conn.resources()[0]["uri"]
    heard: list[str] = []

    def broken(_uri: str) -> None:
        raise RuntimeError("my notebook function broke")

    conn.subscribe(uri, on_update=broken)
    conn.subscribe(uri, on_update=heard.append)
    run(tools, "toggle_subscriber_updates", {})
    try:
        assert wait_until(lambda: bool(heard), 20)
        assert any("my notebook function broke" in str(e["data"]) for e in conn.log)
    finally:
        run(tools, "toggle_subscriber_updates", {})
        conn.unsubscribe(uri)


def test_subscriptions_over_protocol_2026_use_one_listen_stream(tmp_path):
    app = MCPServer("notes")

    @app.resource("note://a")
    def note_a() -> str:
        return "a"

    @app.resource("note://b")
    def note_b() -> str:
        return "b"

    @app.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Say the note changed."""
        await ctx.notify_resource_updated(uri)
        return uri

    tools = wb.Registry(history=":memory:", artifacts=tmp_path)
    with wbmcp.connect(app, tools=tools) as conn:
        assert conn.protocol_version == "2026-07-28"  # no resources/subscribe here
        heard: list[str] = []
        conn.subscribe("note://a", on_update=heard.append)
        conn.subscribe("note://b", on_update=heard.append)
        run(tools, "touch", {"uri": "note://a"})
        run(tools, "touch", {"uri": "note://b"})
        assert wait_until(lambda: heard == ["note://a", "note://b"], 10)
        conn.unsubscribe("note://a")
        run(tools, "touch", {"uri": "note://a"})  # no longer listened for
        run(tools, "touch", {"uri": "note://b"})
        assert wait_until(lambda: len(conn.updates) == 3, 10)
        assert [u["uri"] for u in conn.updates] == ["note://a", "note://b", "note://b"]
    assert not any(entry["logger"] == "transport" for entry in conn.log)


def test_a_server_without_subscriptions_is_refused_clearly(tmp_path):
    served = wb.Registry(history=":memory:", artifacts=tmp_path / "served")

    @served.tool
    def ping() -> str:
        """Answer."""
        return "pong"

    tools = wb.Registry(history=":memory:", artifacts=tmp_path)
    with wbmcp.connect(wbmcp.build_server(served), tools=tools) as conn:
        with pytest.raises(ValueError, match="does not offer resource subscriptions"):
            conn.subscribe("note://a")
        assert conn.subscriptions == []


def test_completions_of_a_prompt_and_a_template_come_from_the_server(everything):
    _, conn, _ = everything
    assert conn.completes
    assert conn.complete("department", "S", prompt="completable-prompt") == ["Sales", "Support"]
    # The second argument's suggestions depend on the first, given as context.
    leaders = conn.complete(
        "name", "", prompt="completable-prompt", context={"department": "Engineering"}
    )
    assert leaders == ["Alice", "Bob", "Charlie"]
    template = "demo://resource/dynamic/text/{resourceId}"
    assert conn.complete("resourceId", "3", template=template) == ["3"]
    assert conn.complete("resourceId", "x", template=template) == []
    with pytest.raises(ValueError, match="name one of prompt="):
        conn.complete("department", "S")


def test_a_prompt_form_offers_the_servers_completions_as_the_person_types(everything):
    from workbench.widgets import OfferForm
    from workbench.widgets._saved_notebook import saved_form

    _, conn, _ = everything
    form = OfferForm(conn, prompt="completable-prompt")
    assert list(form.fields) == ["department", "name"]
    department, name = form.fields["department"], form.fields["name"]
    assert department.options == ("Engineering", "Sales", "Marketing", "Support")
    assert name.options == ()  # no department chosen yet: the server suggests nobody
    department.value = "S"
    assert department.options == ("Sales", "Support")
    department.value = "Sales"
    assert name.options == ("David", "Eve", "Frank")  # narrowed by the other field
    html = form.static_html()
    assert "<datalist" in html and "<option value='Eve'>" in html
    name.value = "Eve"
    messages = form.submit()
    assert "Please promote Eve to the head of the Sales team." in messages[0]["content"]["text"]
    assert "Please promote Eve" in form.output.value
    # What a notebook saved now keeps (the model's saved form, which the save hook puts in
    # place of the widget): the arguments as typed and the prompt as fetched.
    assert wait_until(lambda: "Please promote Eve" in form.saved_html, 10)
    assert "value='Sales'" in form.saved_html and "value='Eve'" in form.saved_html
    saved = saved_form(notebook_showing(form))
    shown = saved["cells"][0]["outputs"][0]["data"]["text/html"]
    assert "Please promote Eve" in shown and "value='Eve'" in shown


def test_a_template_form_offers_completions_and_reads_what_it_names(everything):
    from workbench.widgets import OfferForm

    _, conn, _ = everything
    form = OfferForm(conn, template="demo://resource/dynamic/text/{resourceId}")
    box = form.fields["resourceId"]
    box.value = "2"
    assert box.options == ("2",)
    read = form.submit()
    assert read.ok and read.summary_text.startswith("demo://resource/dynamic/text/2:")
    assert "Resource 2" in form.output.value
    box.value = "<b>"  # the server suggests nothing; what is typed is escaped on the form
    assert box.options == ()
    assert "<b>" not in form.static_html() and "&lt;b&gt;" in form.static_html()


def test_the_log_level_is_asked_for_at_connect_over_the_handshake(tmp_path):
    from tests.mcp import sdk_servers
    from tests.mcp.test_reading import REPO

    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    argv = sdk_servers.command("levels")
    with wbmcp.connect(argv, tools=tools, mode="legacy", cwd=REPO) as conn:
        assert conn.protocol_version == "2025-11-25"
        assert run(tools, "chatter", {}).receipt == "setLevel asked: info"
        assert wait_until(lambda: any(e["level"] == "emergency" for e in conn.log), 20)
        levels = [entry["level"] for entry in conn.log if entry["logger"] is None]
        assert levels == list(sdk_servers.LEVELS[1:])  # info and above; no debug
        conn.set_log_level("error")
        assert run(tools, "chatter", {}).receipt == "setLevel asked: info,error"
    tools.history.close()


def test_a_log_level_for_a_server_that_does_not_log_is_refused_clearly(tmp_path):
    from tests.mcp import misbehaving_server

    with misbehaving_server.connected(tmp_path) as (_, conn, log):
        with pytest.raises(ValueError, match="this server does not log"):
            conn.set_log_level("debug")
        received = misbehaving_server.received(log)
    assert "logging/setLevel" not in [message.get("method") for message in received]


def test_a_form_of_many_arguments_asks_a_bounded_number_of_completions(tmp_path):
    from tests.mcp import sdk_servers
    from tests.mcp.test_reading import REPO
    from workbench.widgets import OfferForm

    bound = sdk_servers.ARGUMENTS // 100  # a handful, never one per argument

    def asked(conn: wbmcp.Connection) -> int:
        """How many completions the server has answered so far."""
        read = conn.read("count://completions")
        assert read.ok, read.error
        return int(read.result["text"].splitlines()[-1])

    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    with wbmcp.connect(sdk_servers.command("many"), tools=tools, cwd=REPO) as conn:
        form = OfferForm(conn, prompt="wide")
        assert len(form.fields) == sdk_servers.ARGUMENTS
        when_made = asked(conn)
        assert 0 < when_made < bound
        assert form.fields["a0"].options == ("x",) and form.fields["a9999"].options == ()
        assert f"asked for {when_made} of 10,000 fields" in form.note.value
        form.fields["a5000"].value = "v"  # typed in: that field, then the ones after it
        assert form.fields["a5000"].options == ("vx",)
        assert asked(conn) - when_made < bound
    tools.history.close()


def test_ping_measures_the_round_trip_over_either_protocol(everything, tmp_path):
    _, conn, _ = everything
    assert conn.protocol_version == "2025-11-25"  # server-everything: a ping request
    seconds = conn.ping(timeout=30)
    assert seconds > 0 and conn.round_trip_s == seconds

    served = wb.Registry(history=":memory:", artifacts=tmp_path / "served")
    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    modern = wbmcp.connect(wbmcp.build_server(served), tools=tools)
    with modern:
        assert modern.protocol_version == "2026-07-28"  # no ping there: server/discover
        assert modern.ping() > 0 and modern.round_trip_s is not None
    with pytest.raises(ConnectionError):
        modern.ping()  # the connection is over
    tools.history.close()


def test_the_log_level_asked_for_goes_with_each_request_over_2026(tmp_path):
    from tests.mcp import sdk_servers
    from tests.mcp.test_reading import REPO

    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    with wbmcp.connect(sdk_servers.command("levels"), tools=tools, cwd=REPO) as conn:
        assert conn.protocol_version == "2026-07-28"  # no setLevel: each request says its level
        chatter = run(tools, "chatter", {})
        assert wait_until(lambda: any(e["level"] == "emergency" for e in conn.log), 20)
        assert [e["level"] for e in conn.log] == list(sdk_servers.LEVELS[1:])
        # From 2026-07-28 a server logs only for the request that asked: the line is the call's
        assert "[server info] a info message" in chatter.output("log")
        assert UNTIED_LOG_NOTE not in chatter.output("log")
        conn.set_log_level("error")
        run(tools, "chatter", {})
        assert wait_until(lambda: len(conn.log) == 7 + 4, 20)
        assert [e["level"] for e in list(conn.log)[7:]] == [
            "error",
            "critical",
            "alert",
            "emergency",
        ]
    tools.history.close()
