"""A server's lists are followed to their last page: 100,000 resources of an SDK server (a process
over stdio, 100 to a page) are listed whole, and a list that stops early (a limit, a server that
repeats its cursor) says where and why, on the listing and on the connection's log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import workbench as wb
from tests.mcp import misbehaving_server, sdk_servers
from tests.mcp.test_reading import REPO
from workbench import mcp as wbmcp


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wbmcp.Connection]:
    tools = wb.Registry(history=":memory:", artifacts=tmp_path_factory.mktemp("listing"))
    conn = wbmcp.connect(sdk_servers.command("many"), tools=tools, cwd=REPO)
    yield conn
    conn.close()
    tools.history.close()


def test_every_page_of_a_long_list_is_listed(many):
    listed = many.resources()
    assert len(listed) == sdk_servers.MANY and listed.complete and listed.stopped is None
    assert listed.pages == sdk_servers.MANY // sdk_servers.PAGE
    assert listed[0]["uri"] == "many://0" and listed[-1]["uri"] == f"many://{sdk_servers.MANY - 1}"
    assert not [entry for entry in many.log if entry["logger"] == "workbench"]


def test_a_list_that_stops_at_its_limit_says_so(many):
    with pytest.warns(UserWarning, match="stopped at 250 resources"):
        listed = many.resources(limit=250)
    assert len(listed) == 250 and not listed.complete
    assert "limit=250" in listed.stopped and "pass limit= to list more" in listed.stopped
    assert any(listed.stopped in str(entry["data"]) for entry in many.log)


def test_a_server_that_repeats_its_cursor_is_stopped_and_named(tmp_path: Path):
    with misbehaving_server.connected(tmp_path) as (_, conn, _):
        with pytest.warns(UserWarning, match="sent the cursor 'again' again"):
            listed = conn.resources()
        assert [item["uri"] for item in listed] == ["loop://a", "loop://a"]
        assert listed.pages == 2 and not listed.complete
        noted = [entry for entry in conn.log if entry["logger"] == "workbench"]
        assert noted and "resources/list" in noted[-1]["data"] and noted[-1]["level"] == "warning"


def test_a_server_that_offers_no_tools_is_not_asked_for_them(tmp_path: Path):
    from mcp.server.lowlevel import Server

    tools = wb.Registry(history=":memory:", artifacts=tmp_path / "artifacts")
    with wbmcp.connect(Server("bare"), tools=tools) as conn:  # no tools capability at all
        assert conn.names == [] and conn.alive
    tools.history.close()
