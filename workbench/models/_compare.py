"""Two versions of a tool set, the same prompts, the same model: what changed for the model.

``compare_runs`` runs every prompt against each version and counts, per version: the calls,
the ones the preflight refused and the ones it had to coerce (per call too), failures by kind,
turns, tokens and how the runs ended. This is how a tool author learns whether a change to a
description, a schema or a result shape helps a model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench._html import esc
from workbench.models._run import Run, run
from workbench.runtime import Call

if TYPE_CHECKING:
    import pandas as pd

    from workbench.registry import Registry


def refused_by_preflight(call: Call) -> bool:
    """True when the preflight refused the call's arguments (the tool exists, nothing ran)."""
    envelope = call.envelope
    return (
        call.spec is not None
        and call.arguments is None
        and envelope is not None
        and envelope.error is not None
        and envelope.error.kind.value == "invalid_args"
    )


def coerced(call: Call) -> bool:
    """True when the preflight had to forgive something in the call's arguments."""
    return any(not coercion.is_wire_form for coercion in call.coercions)


@dataclass(frozen=True)
class RunComparison:
    """The runs of each version (label → runs, one per prompt, in order) and their table."""

    runs: dict[str, list[Run]]

    def to_dataframe(self) -> pd.DataFrame:
        """One row per measure, one column per version."""
        import pandas as pd

        columns = {label: _measures(runs) for label, runs in self.runs.items()}
        kinds = sorted({key for measures in columns.values() for key in measures})
        order = [key for key in _ORDER if key in kinds]
        order += [key for key in kinds if key.startswith("failed: ")]
        order += [key for key in kinds if key.startswith("ended: ")]
        return pd.DataFrame(
            {label: [measures.get(key, 0) for key in order] for label, measures in columns.items()},
            index=pd.Index(order, name="measure"),
            dtype=object,  # counts stay integers beside the per-call ratios
        )

    def _repr_html_(self) -> str:
        frame = self.to_dataframe()
        head = "".join(f"<th>{esc(label)}</th>" for label in frame.columns)
        body = "".join(
            f"<tr><th>{esc(measure)}</th>"
            + "".join(f"<td>{esc(_shown(value))}</td>" for value in row)
            + "</tr>"
            for measure, row in zip(frame.index, frame.itertuples(index=False), strict=True)
        )
        return (
            f"<table class='wb-run-compare'><thead><tr><th>measure</th>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )

    def __repr__(self) -> str:
        return str(self.to_dataframe().to_string())


_ORDER = [
    "prompts",
    "turns",
    "calls",
    "refused by preflight",
    "refused per call",
    "coerced",
    "coerced per call",
    "failed",
    "input tokens",
    "output tokens",
]


def _shown(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _measures(runs: Sequence[Run]) -> dict[str, Any]:
    calls = [call for one in runs for call in one.calls]
    refused = sum(refused_by_preflight(call) for call in calls)
    forgiven = sum(coerced(call) for call in calls)
    kinds = Counter(
        call.envelope.error.kind.value
        for call in calls
        if call.envelope is not None and call.envelope.error is not None
    )
    usage = [one.usage for one in runs if one.usage is not None]
    measures: dict[str, Any] = {
        "prompts": len(runs),
        "turns": sum(len(one.turns) for one in runs),
        "calls": len(calls),
        "refused by preflight": refused,
        "refused per call": refused / len(calls) if calls else 0.0,
        "coerced": forgiven,
        "coerced per call": forgiven / len(calls) if calls else 0.0,
        "failed": sum(kinds.values()),
        "input tokens": sum(u.input_tokens for u in usage),
        "output tokens": sum(u.output_tokens for u in usage),
    }
    for kind, count in sorted(kinds.items()):
        measures[f"failed: {kind}"] = count
    for reason, count in sorted(Counter(one.end_reason or "?" for one in runs).items()):
        measures[f"ended: {reason}"] = count
    return measures


def compare_runs(
    model: Any,
    versions: Mapping[str, Registry] | Sequence[Registry],
    prompts: str | Sequence[str],
    *,
    timeout: float | None = None,
    **run_options: Any,
) -> RunComparison:
    """Run each prompt against each version of the tools (a mapping label → registry, or two
    registries labelled ``"before"`` and ``"after"``), one run at a time, and compare them.

    ``run_options`` go to ``wb.run`` (``max_turns``, ``base_url``, ...; not ``step``). Calls
    that ask for approval need an ``approver`` on their registry, or the comparison waits for
    a person; ``timeout`` bounds each run (``TimeoutError``).
    """
    if run_options.get("step"):
        raise ValueError("compare_runs drives its runs itself: step mode is not available")
    if isinstance(versions, Mapping):
        labelled = dict(versions)
    else:
        registries = list(versions)
        if len(registries) != 2:
            raise ValueError(
                f"give two registries (or a mapping label → registry), not {len(registries)}"
            )
        labelled = {"before": registries[0], "after": registries[1]}
    prompt_list = [prompts] if isinstance(prompts, str) else list(prompts)
    results: dict[str, list[Run]] = {}
    for label, tools in labelled.items():
        done: list[Run] = []
        for prompt in prompt_list:
            one = run(model, tools, prompt, **run_options)
            _finish(one, timeout)
            done.append(one)
        results[label] = done
    return RunComparison(results)


def _finish(one: Run, timeout: float | None) -> None:
    one.wait(timeout)
    if not one.done:
        one.stop()
        raise TimeoutError(
            f"run {one.id} waits for a person ({one.state}): give the registry an approver "
            "to compare runs whose tools ask for approval"
        )
