"""The built-in tools: ``shell_exec``, ``process``, ``file_read`` and ``artifact_read``.

``wb.builtins.register(tools, root=...)`` declares them on a registry, confined to ``root``::

    import workbench as wb

    tools = wb.Registry()
    builtins = wb.builtins.register(tools, root="workspace")
    tools.invoke("shell_exec", {"command": "ls | head -3"}).wait()

- ``shell_exec`` (command family, streaming): bash with pipefail, live output, idle
  ``timeout``, ``background`` jobs, ``cwd`` inside the root.
- ``process`` (command family): poll, wait for or kill a background job of this registry.
- ``file_read`` (file and listing families): a file's text or a directory's entries.
- ``artifact_read`` (file family): a line or byte range of an artifact a receipt named.

Every built-in refuses unknown arguments (``additionalProperties: false``).
"""

from workbench.builtins._register import Builtins, register

__all__ = ["Builtins", "register"]
