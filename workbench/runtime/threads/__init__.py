"""The threads the runtime runs code on, knowing nothing of calls: the runtime loop (and
loops dedicated to a job), the worker threads, the watchdog that names a step holding the loop,
and the count of calls the loop drives."""

from workbench.runtime.threads._loop import (
    call_in_loop,
    dedicated_loop,
    on_loop_thread,
    on_runtime_thread,
    running_loop,
    runtime_loop,
)
from workbench.runtime.threads._tasks import driving, handed, launched
from workbench.runtime.threads._watchdog import task_ended, task_runs, watched_step
from workbench.runtime.threads._workers import WORKERS

__all__ = [
    "WORKERS",
    "call_in_loop",
    "dedicated_loop",
    "driving",
    "handed",
    "launched",
    "on_loop_thread",
    "on_runtime_thread",
    "running_loop",
    "runtime_loop",
    "task_ended",
    "task_runs",
    "watched_step",
]
