"""Compaction: what a long tool history shrinks to when the context fills up (issue 6).

``compact(source, budget_chars)`` reads the canonical records of a history, oldest first, and
reduces the older ones until their receipts fit the budget. Each record's family owns what a step
means for it (``Family.compact``); the steps are tried in this order across the whole history:

1. ``collapse_listings``: a listing becomes ``<N> entries in <path>``;
2. ``shrink_previews``: command and file previews (and a stopped command's output kept in
   ``error.details``) keep a short head and tail with the cut marker;
3. ``drop_to_artifacts``: a field whose complete value an artifact holds is dropped in favour of
   that reference; a failure's large details are dropped;
4. ``collapse_to_line``: a success becomes ``tool_name: summary_text`` (a ``compacted`` record,
   see ``workbench.families.compacted``).

Step 1 is applied to the older items one by one, oldest first, stopping the moment the total fits;
only then step 2, and so on. A step is kept only when it does not make the item's receipt longer
(as ``count`` measures it). The newest ``keep_recent`` items are never touched.

Promises:

- ``tool_name``, ``status``, ``summary_text``, ``error.kind``, ``error.message``,
  ``error.recovery_hint``, ``error.retryable``, ``artifacts``, ``call_id``, handles (``pid``,
  ``log_file``, ``*_id``, ...) and artifact references (``*_artifact``) survive any budget;
  when even that does not fit, ``over_budget`` is True and nothing more is cut.
- Deterministic, and idempotent: compacting ``result.envelopes`` again with the same budget and
  ``keep_recent`` changes nothing. It never re-expands: only canonical records are read, never
  receipts, never artifact files.
- Linear: every record is rendered once, then once more per step applied to it, and totals are
  kept incrementally, so the cost per call stays flat as the history grows.

Receipts are rendered with the default budgets (``families.DEFAULT_BUDGETS``), whatever budgets
the registry that made them used, so a History, its Calls and their Envelopes compact alike.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from workbench._html import esc
from workbench.envelope import Envelope, escape_surrogates
from workbench.families._base import DEFAULT_BUDGETS, Budgets, CompactStep, Family
from workbench.families._table import family_of
from workbench.families.compacted import COMPACTED, is_compacted_result
from workbench.families.failure import fallback_receipt

if TYPE_CHECKING:
    import pandas as pd


@runtime_checkable
class Recorded(Protocol):
    """Anything that holds recorded calls' envelopes: a History."""

    def envelopes(self) -> list[Envelope]: ...


@runtime_checkable
class Ended(Protocol):
    """A call handle: its id, its tool and, once it ended, its envelope."""

    @property
    def id(self) -> str: ...

    @property
    def tool_name(self) -> Any: ...

    @property
    def envelope(self) -> Envelope | None: ...


Source = Recorded | Iterable[Ended | Envelope]
Count = Callable[[str], int]

# Sweeps of all four steps after the first happen only while over budget, to reach a state no
# step changes (what makes compaction idempotent even when ``count`` refused a step once). Every
# step only shortens, so a second sweep is normally a no-op; the bound guards against a
# misbehaving compactor turning that into an endless loop.
MAX_SWEEPS = 8


@dataclass(frozen=True, slots=True)
class CompactionStep:
    """One step applied to one item: what was done (``step``, ``rule``), by which family, what
    it saved, and why (``history_chars``, the history's total just before, was over budget)."""

    index: int
    call_id: str | None
    tool: str
    family: str
    step: int
    rule: str
    before_chars: int
    after_chars: int
    history_chars: int


@dataclass(frozen=True, eq=False)
class Compaction:
    """What a history shrinks to under a budget.

    ``receipts`` and ``envelopes`` are the compacted model-visible strings and canonical records,
    in the source's order; ``before_receipts`` and ``before_envelopes`` what they were.
    ``before_chars`` / ``after_chars`` are the totals as ``count`` measured them (per item in
    ``item_before_chars`` / ``item_after_chars``); ``steps`` lists every step applied, in the
    order applied.
    """

    budget: int
    keep_recent: int
    receipts: tuple[str, ...]
    envelopes: tuple[Envelope, ...]
    before_receipts: tuple[str, ...]
    before_envelopes: tuple[Envelope, ...]
    item_before_chars: tuple[int, ...]
    item_after_chars: tuple[int, ...]
    before_chars: int
    after_chars: int
    steps: tuple[CompactionStep, ...]

    @property
    def over_budget(self) -> bool:
        """True when even the fully compacted history (its preserved fields) exceeds the budget."""
        return self.after_chars > self.budget

    def __len__(self) -> int:
        return len(self.envelopes)

    def recent(self, index: int) -> bool:
        """True when item ``index`` is among the newest ``keep_recent``, which are never touched."""
        return index >= len(self.envelopes) - self.keep_recent

    def to_dataframe(self) -> pd.DataFrame:
        """One row per item: index, call_id, tool, family (before and after), status, recent,
        before_chars, after_chars, the steps and rules applied, and both receipts."""
        import pandas as pd

        applied: dict[int, list[CompactionStep]] = {}
        for step in self.steps:
            applied.setdefault(step.index, []).append(step)
        rows = []
        for index, (before, after) in enumerate(
            zip(self.before_envelopes, self.envelopes, strict=True)
        ):
            done = applied.get(index, [])
            rows.append(
                {
                    "index": index,
                    "call_id": before.call_id,
                    "tool": before.tool_name,
                    "family": family_for(before).name,
                    "family_after": family_for(after).name,
                    "status": before.status,
                    "recent": self.recent(index),
                    "before_chars": self.item_before_chars[index],
                    "after_chars": self.item_after_chars[index],
                    "steps": [step.step for step in done],
                    "rules": [step.rule for step in done],
                    "receipt_before": self.before_receipts[index],
                    "receipt_after": self.receipts[index],
                }
            )
        return pd.DataFrame(rows, columns=_COLUMNS)

    def summary(self) -> str:
        """One line: items, totals, budget, steps, and whether it is over budget."""
        steps = len(self.steps)
        line = (
            f"compaction of {len(self)} calls: {self.before_chars:,} → {self.after_chars:,} "
            f"(budget {self.budget:,}, newest {self.keep_recent} kept), "
            f"{steps:,} {'step' if steps == 1 else 'steps'}"
        )
        return line + (", over budget" if self.over_budget else "")

    def __repr__(self) -> str:
        return f"<Compaction: {self.summary()}>"

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        return {"text/plain": repr(self), "text/html": self._html()}

    def _html(self) -> str:
        tally = Tally((step.step, step.rule) for step in self.steps)
        saved = Tally[tuple[int, str]]()
        for step in self.steps:
            saved[(step.step, step.rule)] += step.before_chars - step.after_chars
        rows = "".join(
            f"<tr><td>{number}</td><td>{esc(rule)}</td><td>{tally[(number, rule)]}</td>"
            f"<td>{saved[(number, rule)]}</td></tr>"
            for number, rule in sorted(tally)
        )
        verdict = (
            "<span class='wb-over-budget' style='color:#cf222e'>over budget</span>"
            if self.over_budget
            else "<span style='color:#1a7f37'>within budget</span>"
        )
        table = (
            f"<table><tr><th>step</th><th>rule</th><th>items</th><th>saved</th></tr>{rows}</table>"
            if rows
            else "<div>no step was needed</div>"
        )
        return (
            f"<div class='wb-compaction-summary' style='{_STYLE}'>"
            f"<div><b>compaction</b> of {len(self)} calls: {self.before_chars} → "
            f"<b>{self.after_chars}</b> (budget {esc(self.budget)}, newest "
            f"{esc(self.keep_recent)} kept) — {verdict}</div>{table}</div>"
        )


_COLUMNS = [
    "index",
    "call_id",
    "tool",
    "family",
    "family_after",
    "status",
    "recent",
    "before_chars",
    "after_chars",
    "steps",
    "rules",
    "receipt_before",
    "receipt_after",
]
_STYLE = (
    "font-family:var(--jp-ui-font-family,sans-serif);border:1px solid #ccc;border-radius:6px;"
    "padding:6px 10px;margin:4px 0;max-width:60em"
)


def family_for(envelope: Envelope) -> Family:
    """The family that renders and compacts ``envelope``, collapsed records included.

    ``family_of`` sends a ``{"kind": "compacted"}`` result to the json family until the compacted
    family is registered in ``workbench.families``; this asks for it first.
    """
    if envelope.error is None and is_compacted_result(envelope.result):
        return COMPACTED
    return family_of(envelope)


def receipt(envelope: Envelope, budgets: Budgets = DEFAULT_BUDGETS) -> str:
    """The receipt of ``envelope`` as compaction measures it (the runtime's fallback when a
    family's renderer fails on an odd record)."""
    return _render(envelope, family_for(envelope), budgets)


def _render(envelope: Envelope, family: Family, budgets: Budgets) -> str:
    try:
        return escape_surrogates(family.render(envelope, budgets))
    except Exception:  # a renderer that fails is replaced by the receipt that cannot fail
        return fallback_receipt(envelope)


def compact(
    source: Source, budget_chars: int, *, keep_recent: int = 2, count: Count = len
) -> Compaction:
    """Compact a history's receipts to ``budget_chars``: see the module docstring for the steps.

    ``source`` is a History, or Calls (ended) or Envelopes, oldest first. ``count`` measures a
    receipt (``len`` by default; pass a tokenizer's ``lambda s: len(encode(s))`` to budget in
    tokens). Raises ``ValueError`` for a negative budget or ``keep_recent``, or a call that has
    not ended.

    Examples:
        >>> from workbench.envelope import listing, success
        >>> files = [{"name": f"f{n}.py"} for n in range(40)]
        >>> calls = [listing("src", files, tool="ls"), success("add", 3)]
        >>> result = compact(calls, 200, keep_recent=1)
        >>> result.receipts, result.after_chars <= 200 < result.before_chars
        (('40 entries in src', '3'), True)
    """
    if budget_chars < 0:
        raise ValueError(f"budget_chars must be 0 or more, not {budget_chars}")
    if keep_recent < 0:
        raise ValueError(f"keep_recent must be 0 or more, not {keep_recent}")
    originals = _envelopes(source)
    budgets = DEFAULT_BUDGETS
    envelopes = list(originals)
    # Recognising a family reads the whole result (every listing entry): once per record.
    families = [family_for(envelope) for envelope in envelopes]
    receipts = [
        _render(envelope, family, budgets)
        for envelope, family in zip(envelopes, families, strict=True)
    ]
    sizes = [count(text) for text in receipts]
    before_receipts, before_sizes = tuple(receipts), tuple(sizes)
    total = before = sum(sizes)
    older = range(max(0, len(envelopes) - keep_recent))
    steps: list[CompactionStep] = []

    for _ in range(MAX_SWEEPS):
        if total <= budget_chars:
            break
        changed = False
        for step in CompactStep:
            for index in older:
                if total <= budget_chars:
                    break
                envelope, family = envelopes[index], families[index]
                reduced = family.compact(envelope, step, budgets)
                if reduced is None:
                    continue
                reduced_family = family_for(reduced)
                text = _render(reduced, reduced_family, budgets)
                size = count(text)
                if size > sizes[index]:
                    continue  # a step never makes an item longer
                steps.append(
                    CompactionStep(
                        index=index,
                        call_id=envelope.call_id,
                        tool=envelope.tool_name,
                        family=family.name,
                        step=int(step),
                        rule=step.rule,
                        before_chars=sizes[index],
                        after_chars=size,
                        history_chars=total,
                    )
                )
                total += size - sizes[index]
                envelopes[index], families[index] = reduced, reduced_family
                receipts[index], sizes[index] = text, size
                changed = True
        if not changed:
            break

    return Compaction(
        budget=budget_chars,
        keep_recent=keep_recent,
        receipts=tuple(receipts),
        envelopes=tuple(envelopes),
        before_receipts=before_receipts,
        before_envelopes=tuple(originals),
        item_before_chars=before_sizes,
        item_after_chars=tuple(sizes),
        before_chars=before,
        after_chars=total,
        steps=tuple(steps),
    )


def _envelopes(source: Source) -> list[Envelope]:
    """The canonical records of ``source``, oldest first."""
    if isinstance(source, Recorded):
        return source.envelopes()
    if isinstance(source, Envelope | Ended | str | bytes):
        raise TypeError("compact takes a History or a list of Calls or Envelopes, not one item")
    envelopes: list[Envelope] = []
    for item in source:
        if isinstance(item, Envelope):
            envelopes.append(item)
        elif isinstance(item, Ended):
            if item.envelope is None:
                raise ValueError(
                    f"call {item.id} ({item.tool_name}) has not ended; wait for it before "
                    "compacting"
                )
            envelopes.append(item.envelope)
        else:
            raise TypeError(f"compact takes Calls or Envelopes, not {type(item).__name__}")
    return envelopes
