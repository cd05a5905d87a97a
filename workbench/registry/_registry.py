"""The registry: where tools are declared, exported, checked, invoked and remembered.

A ``Registry`` is a ``ToolSet`` (the tools by name, redefined when their cell runs again) with
the runtime that runs their calls under its ``Policy`` and ``Limits``, and the history that
remembers them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from workbench._views import display_widget, widget_mimebundle
from workbench.context import end_owned_by
from workbench.declare import (
    Permission,
    Tool,
    ToolSpec,
    check_name,
    from_framework,
    is_framework_tool,
    tool_from_function,
    tool_from_schema,
)
from workbench.families import DEFAULT_BUDGETS, Budgets
from workbench.history import DEFAULT_PATH, History
from workbench.output import ArtifactStore
from workbench.registry._toolset import ToolSet
from workbench.runtime import (
    DRIVERS,
    AfterHook,
    Approver,
    BeforeHook,
    Call,
    Fault,
    Policy,
    Subscriber,
    current_call,
    launch_many,
    limits_for,
)

if TYPE_CHECKING:
    from workbench.envelope import ErrorKind as Kind
    from workbench.registry._replay import Replay

_META = frozenset(ToolSpec.model_fields) - {
    "name",
    "description",
    "input_schema",
    "declare_warnings",
}


class Registry(ToolSet):
    """A set of tools with the runtime that invokes them and the history that remembers them.

    ``history`` is a path (default ``.workbench/history.sqlite``), ``":memory:"`` or a History;
    artifacts go to ``artifacts`` (default: ``artifacts/`` beside the history file, or for an
    in-memory history a temporary directory, removed when the process exits). At most
    ``max_concurrency`` calls run at once (a call made from inside a running tool runs in its
    ancestor's slot); a stopped tool gets ``terminate_grace`` seconds to let go before the call
    ends without it. An ``approver`` (see ``workbench.Approver``) may decide ``always_ask``
    calls before a person does.

    Examples:
        >>> tools = Registry(history=":memory:")
        >>> @tools.tool(read_only=True)
        ... def add(a: int, b: int = 1) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> tools.spec("add").input_schema["required"]
        ['a']
        >>> call = tools.invoke("add", {"a": "2"})  # as a model might send it
        >>> call.wait().result, call.receipt, call.coercions[0].rule
        (3, '3', 'string_to_integer')
        >>> tools.close()
    """

    def __init__(
        self,
        *,
        history: str | Path | History = DEFAULT_PATH,
        artifacts: str | Path | None = None,
        max_concurrency: int = 4,
        budgets: Budgets = DEFAULT_BUDGETS,
        secrets: Mapping[str, str] | None = None,
        terminate_grace: float = 3.0,
        approver: Approver | None = None,
    ) -> None:
        super().__init__()
        self.history = history if isinstance(history, History) else History(history)
        if artifacts is None and self.history.directory is not None:
            artifacts = self.history.directory / "artifacts"
        self.artifacts = ArtifactStore(artifacts)
        self.limits = limits_for(max_concurrency)
        """How many calls run at once, a ``serial`` tool's turn, and the lanes."""
        self.policy = Policy(self.get, approver)
        """Permissions, the approver, hooks and injected faults, as the runtime reads them."""
        self.budgets = budgets
        self.secrets: Mapping[str, str] = dict(secrets or {})
        self.terminate_grace = terminate_grace

    # ── declaring ───────────────────────────────────────────────────────────────────────
    @overload
    def tool(self, fn: Callable[..., Any], /) -> Tool: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        replace: bool = False,
        **meta: Any,
    ) -> Callable[[Callable[..., Any]], Tool]: ...
    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        replace: bool = False,
        **meta: Any,
    ) -> Tool | Callable[[Callable[..., Any]], Tool]:
        """Declare a tool from a function: ``@tools.tool`` or ``@tools.tool(read_only=True)``.

        Metadata: read_only, destructive, idempotent, open_world, permission ("always_allow" |
        "always_ask"), ownership ("managed" | "mcp" | "custom"), effects, interrupt ("cancel" |
        "block"), timeout (seconds or None), streaming, serial, family, output_schema.
        """

        def decorate(function: Callable[..., Any]) -> Tool:
            return self.register(
                function, name=name, description=description, replace=replace, **meta
            )

        return decorate if fn is None else decorate(fn)

    def register(
        self,
        fn: Callable[..., Any] | Tool | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        replace: bool = False,
        **meta: Any,
    ) -> Tool:
        """Register a function, a Tool, a tool of another framework (a LangChain or inspect_ai
        tool: its own schema and invoke path, ``wb.declare.from_framework``), or a hand-written
        JSON-Schema tool (give ``name``, ``description`` and ``input_schema``; the handler then
        receives the arguments dict)."""
        unknown = sorted(set(meta) - _META)
        if unknown:
            raise TypeError(
                f"unknown tool metadata {', '.join(unknown)}; known: {', '.join(sorted(_META))}"
            )
        if isinstance(fn, Tool):
            tool = fn
        elif input_schema is not None:
            if name is None:
                raise TypeError("a JSON-Schema tool needs a name")
            tool = tool_from_schema(
                fn,
                name=check_name(name),
                description=description or "",
                input_schema=input_schema,
                meta=dict(meta),
            )
        elif is_framework_tool(fn):  # a LangChain or inspect_ai tool, with its own schema
            tool = from_framework(fn, name=name, **meta)
        elif fn is not None:
            tool_name = check_name(name if name is not None else getattr(fn, "__name__", None))
            tool = tool_from_function(fn, name=tool_name, description=description, meta=dict(meta))
        else:
            raise TypeError("register() needs a function, a Tool, or input_schema= and name=")
        return self.add(tool, self, replace=replace)

    # ── running ─────────────────────────────────────────────────────────────────────────
    def invoke(
        self,
        name: str,
        args: Any = None,
        *,
        dry_run: bool = False,
        call_id: str | None = None,
        parent: Call | None = None,
        subscriber: Subscriber | None = None,
    ) -> Call:
        """Start a call and return it at once; it runs on workbench's runtime loop thread.
        ``call.wait()`` (any thread, any cell) or ``await call`` (any asyncio code) gives the
        envelope. ``call_id`` is the id the model sent (a string), kept beside workbench's own;
        any other type is refused here with ``TypeError``. A call made from inside a running
        tool is that call's child (``parent``, found by itself). A ``subscriber`` is
        subscribed before the call starts, so it sees every event."""
        call = self.prepare(name, args, call_id=call_id, dry_run=dry_run, parent=parent)
        if subscriber is not None:
            call.subscribe(subscriber)
        return call.start()

    def prepare(
        self,
        name: str,
        args: Any = None,
        *,
        call_id: str | None = None,
        dry_run: bool = False,
        parent: Call | None = None,
        run_id: str | None = None,
        message_id: str | None = None,
        replay_of: dict[str, Any] | None = None,
    ) -> Call:
        """Make a call as ``invoke`` does, without starting it: ``call.start()`` starts it
        (``workbench.runtime.launch_many`` starts a burst). ``run_id`` and ``message_id`` name
        the model run and message that asked for it; ``replay_of`` is the link a replayed
        call's row carries to its original."""
        call = Call(
            self,
            name,
            args,
            drivers=DRIVERS,
            call_id=_model_call_id(call_id),
            dry_run=dry_run,
            parent=current_call() if parent is None else parent,
            run_id=run_id,
            message_id=message_id,
            replay_of=replay_of,
        )
        call.sheet.emit("tool.queued", tool=name, parent_call_id=call.parent_id)
        return call

    def invoke_many(self, calls: Iterable[tuple[str, Any] | Mapping[str, Any]]) -> list[Call]:
        """Start a model's parallel calls; at most ``max_concurrency`` run at once, ``serial``
        tools one at a time. The calls come back in the order given. A burst of plain ``def``
        calls that need no person runs in lanes: worker threads that
        run them inline and commit their rows together. An ``id`` that is not a string is
        refused with ``TypeError`` before any call starts."""
        wanted = [_wanted(item) for item in calls]  # every id checked before any call starts
        queued = [self.prepare(name, args, call_id=call_id) for name, args, call_id in wanted]
        launch_many(queued)
        return queued

    @property
    def max_concurrency(self) -> int:
        """How many calls may run at once."""
        return self.limits.concurrency.size

    @property
    def left_running(self) -> int:
        """How many tool bodies run on after their calls ended without them (stopped, they
        ignored cancellation past ``terminate_grace``). Up to ``max_concurrency`` of them give
        their concurrency slot back at once; past that, each keeps it until it returns."""
        return self.limits.concurrency.left_behind

    # ── policy, hooks and faults ────────────────────────────────────────────────────────
    def permission(self, name: str) -> Permission:
        """The permission that applies to a tool now: a run-time override, else its own."""
        return self.policy.permission(name)

    def set_permission(self, name: str, policy: Permission | None) -> None:
        """Change a tool's permission at run time: "always_allow", "always_ask" or
        "always_deny" (calls end ``rejected``); None goes back to the tool's own."""
        self.policy.set_permission(name, policy)
        self._changed()

    @property
    def approver(self) -> Approver | None:
        """Decides ``always_ask`` calls before a person does (see ``workbench.Approver``)."""
        return self.policy.approver

    @approver.setter
    def approver(self, approver: Approver | None) -> None:
        self.policy.approver = approver

    def before_tool(self, hook: BeforeHook) -> BeforeHook:
        """Add a hook run before every call's body, after preflight: ``hook(call, arguments)``
        returns None to proceed, a dict of new arguments, a str (or False) to refuse with
        ``rejected``, or an envelope that ends the call."""
        self.policy.before.append(hook)
        return hook

    def after_tool(self, hook: AfterHook) -> AfterHook:
        """Add a hook run on every call's envelope: ``hook(call, envelope)`` returns a new
        envelope or None to keep it."""
        self.policy.after.append(hook)
        return hook

    def inject_fault(
        self,
        name: str,
        kind: str | Kind,
        *,
        times: int = 1,
        after_output: str | list[str] | None = None,
        message: str | None = None,
    ) -> Fault:
        """Make the next ``times`` calls of ``name`` end with ``kind`` through the normal path
        (preflight, gate, events, history), after streaming ``after_output`` if given."""
        return self.policy.faults.inject(
            name, kind, times=times, after_output=after_output, message=message
        )

    def clear_faults(self, name: str | None = None) -> None:
        """End fault injection, for one tool or all."""
        self.policy.faults.clear(name)

    def __repr__(self) -> str:
        return f"<Registry {len(self)} tools, history={self.history.path!s}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return widget_mimebundle("registry", self, self._plain(), **kwargs)

    def _ipython_display_(self) -> None:
        display_widget("registry", self, self._plain)

    def _plain(self) -> dict[str, Any]:
        listing = "\n".join(f"  {spec.name}: {spec.description}" for spec in self.specs())
        return {"text/plain": f"{self!r}\n{listing}"}

    # ── ending ──────────────────────────────────────────────────────────────────────────
    def close(self) -> None:
        """End every process this registry's tools started, background jobs included, with all
        their descendants (SIGTERM, then SIGKILL after ``terminate_grace``); returns once they
        ended. The registry stays usable."""
        end_owned_by(self)

    # ── replay ───────────────────────────────────────────────────────────────────────────
    def replay(
        self, row_or_call_id: Any, args: Any = None, *, history: History | None = None
    ) -> Replay:
        """Run a recorded call again with the tools registered now: the same arguments as the
        model sent, or ``args``. Returns a ``Replay`` at once; its new call is recorded here,
        linked to the original (``parent_call_id``), and ``replay.receipts()`` diffs the two.
        A call id is looked up in ``history`` (an imported transcript) or this history."""
        from workbench.registry._replay import replay

        return replay(self, row_or_call_id, args, history=history)


def _wanted(item: Any) -> tuple[str, Any, str | None]:
    """One call of ``invoke_many``: a mapping with a name, arguments and the model's id, or a
    ``(name, args)`` pair."""
    if isinstance(item, Mapping):
        name, args = item["name"], item.get("arguments", item.get("args"))
        return name, args, _model_call_id(item.get("id") or item.get("call_id"))
    name, args = item
    return name, args, None


def _model_call_id(call_id: object) -> str | None:
    """The id a model sent with a call, as given: a string, or None for none. Anything else
    cannot be read back as an envelope's ``call_id`` and is refused at once."""
    if call_id is None or isinstance(call_id, str):
        return call_id
    raise TypeError(
        f"call_id must be the id the model sent, as a string (or None), not "
        f"{type(call_id).__name__} {call_id!r:.60}"
    )
