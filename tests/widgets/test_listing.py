"""The listing tree: clicking an entry starts file_read on its path through the same registry,
the new card appears below, and a directory's entries appear under it once read."""

from __future__ import annotations

import pytest

import workbench as wb
from tests.conftest import wait_until
from tests.widgets.support import XSS, assert_escaped
from workbench.widgets import CallCard, ListingTree, card
from workbench.widgets._follow_ups import FollowUpRow


@pytest.fixture
def tree_root(tools, tmp_path):
    root = tmp_path / "root"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# readme\n")
    wb.builtins.register(tools, root=root)
    return root


def listed(tools, path="."):
    call = tools.invoke("file_read", {"path": path})
    call.wait(10)
    return call


def test_the_tree_shows_the_entries_and_is_clickable(tools, tree_root):
    call = listed(tools)
    tree = ListingTree(call.envelope, registry=tools)
    assert "wb-listing" in tree._dom_classes
    assert [entry["path"] for entry in tree.view.entries] == ["src", "README.md"]
    assert tree.view.entries[0]["type"] == "directory"
    assert tree.view.clickable


def test_clicking_a_directory_starts_file_read_and_opens_it_below(tools, tree_root):
    call = listed(tools)
    tree = card(call).result_widget
    assert isinstance(tree, ListingTree)
    opened = tree.open_entry("src")
    assert opened.tool_name == "file_read" and opened.raw_args == {"path": "src"}
    assert opened.registry is tools
    follow = tree.follow_ups.children[-1]
    # One row per opened entry, not a whole card nested inside the listing's card.
    assert isinstance(follow, FollowUpRow) and follow.call is opened
    assert not any(isinstance(child, CallCard) for child in tree.follow_ups.children)
    opened.wait(10)
    assert tree.view.loading == []
    assert [e["path"] for e in tree.view.children["src"]] == ["src/pkg", "src/main.py"]
    assert "src" in tree.view.expanded
    # descending: an entry of the opened directory is clickable in turn
    deeper = tree.open_entry("src/main.py")
    assert deeper.wait(10).result["text"] == "print('hi')\n"
    assert "src/main.py" not in tree.view.children  # a file adds no entries
    # The file's row: its compact line and its numbered lines, no header, Terminate or receipt.
    row = tree.follow_ups.children[-1]
    assert wait_until(lambda: "wb-compact" in row.value)
    assert "print(&#x27;hi&#x27;)" in row.value and "wb-lines" in row.value
    assert "wb-card" not in row.value and "wb-receipt" not in row.value


def test_a_message_from_the_browser_is_a_click(tools, tree_root):
    tree = ListingTree(listed(tools).envelope, registry=tools)
    tree._on_message(tree.view, {"open": "README.md"}, [])
    assert [c.raw_args for c in tree.opened] == [{"path": "README.md"}]
    tree._on_message(tree.view, {"open": "../etc/passwd"}, [])  # not an entry: ignored
    tree._on_message(tree.view, {"something": "else"}, [])
    assert len(tree.opened) == 1
    tree.opened[0].wait(10)


def test_only_paths_the_tree_shows_can_be_opened(tools, tree_root):
    tree = ListingTree(listed(tools).envelope, registry=tools)
    with pytest.raises(ValueError, match="not an entry"):
        tree.open_entry("/etc")


def test_without_file_read_the_tree_does_not_open_anything(tools, tree_root):
    envelope = listed(tools).envelope
    tree = ListingTree(envelope)
    assert not tree.view.clickable
    with pytest.raises(RuntimeError):
        tree.open_entry("src")


def test_static_html_holds_the_opened_tree_and_its_cards(tools, tree_root):
    tree = ListingTree(listed(tools).envelope, registry=tools)
    tree.open_entry("src").wait(10)
    html = tree.static_html()
    assert "<code>src/</code><ul>" in html and "<code>main.py</code>" in html
    assert html.count("wb-card") == 0 and html.count("wb-follow-up") == 1
    assert "text/html" in tree._repr_mimebundle_()


def test_entry_names_are_escaped(tools, tree_root):
    (tree_root / XSS.replace("/", "")).write_text("x")
    tree = ListingTree(listed(tools).envelope, registry=tools)
    assert_escaped(tree.static_html())


def test_a_truncated_listing_says_where_the_rest_is(tools, tmp_path):
    root = tmp_path / "many"
    root.mkdir()
    for i in range(12):
        (root / f"f{i:02}.txt").write_text("")
    wb.builtins.register(tools, root=root, listing_limit=5)
    tree = ListingTree(listed(tools).envelope, registry=tools)
    assert len(tree.view.entries) == 5
    assert "showing the first 5 of 12" in tree.summary.value
    assert "full listing (12 entries)" in tree.summary.value
