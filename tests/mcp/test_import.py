"""``import workbench.mcp`` is light: the MCP SDK (about a second to import) is loaded on the
first use of a name that needs it, every public name resolves to the object its module defines,
and without the SDK the import says which extra brings it. Each case runs in a fresh
interpreter, as a notebook's first cell does."""

from __future__ import annotations

import json
import subprocess
import sys

import workbench.mcp as wbmcp


def fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_the_package_loads_no_sdk_until_a_name_is_used():
    ran = fresh(
        "import json, sys\n"
        "import workbench.mcp as m\n"
        "sdk = lambda name: name.split('.')[0] in ('mcp', 'mcp_types')\n"
        "before = sorted(filter(sdk, sys.modules))\n"
        "argv = m.server_command('pkg:tools')\n"
        "still = 'mcp' in sys.modules\n"
        "m.connect\n"
        "print(json.dumps([before, still, 'mcp' in sys.modules, argv[1:4]]))\n"
    )
    assert ran.returncode == 0, ran.stderr
    before, still, after, argv = json.loads(ran.stdout)
    assert before == [] and still is False  # server_command needs no SDK
    assert after is True
    assert argv == ["-m", "workbench.mcp", "serve"]


def test_every_public_name_is_the_object_its_module_defines():
    from workbench.mcp import _offers, client, server

    assert set(wbmcp.__all__) <= set(dir(wbmcp))
    values = {name: getattr(wbmcp, name) for name in wbmcp.__all__}
    assert values["connect"] is client.connect and values["serve"] is server.serve
    assert values["LOG_LEVELS"] is _offers.LEVELS
    from workbench.mcp import Connection  # `from … import` finds the lazy names too

    assert Connection is client.Connection
    try:
        wbmcp.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name must be an AttributeError")


def test_without_the_sdk_the_import_names_the_extra_that_brings_it():
    ran = fresh(
        "import sys\n"
        "sys.modules['mcp'] = None  # as if the SDK were not installed\n"
        "try:\n"
        "    import workbench.mcp\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name, '|', exc)\n"
    )
    assert ran.returncode == 0, ran.stderr
    name, message = ran.stdout.strip().split(" | ")
    assert name == "mcp"
    assert "pip install 'tool-workbench[mcp]'" in message and "official MCP SDK" in message
