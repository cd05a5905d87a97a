"""The torture test: writers, a fork pool, a reader, an opener, a clearer, a write lock held for
20 s or more, a full disk and ``kill -9``, all at once on one history file, each counted against
accounts kept apart from the history (``tests/history/torture.py``). About a minute here;
``make soak`` runs it for longer (``WORKBENCH_TORTURE_SECONDS``). The seed is printed and kept
with the table in ``test-output/torture-table.md``; ``WORKBENCH_TORTURE_SEED`` runs one again.
"""

from __future__ import annotations

import math
import os
import random
import subprocess
from pathlib import Path

import pytest

from tests.history import torture

TABLE = torture.REPO / "test-output" / "torture-table.md"


def _mounted(directory: Path, size: str) -> None:
    directory.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)], check=True
    )


@pytest.mark.slow
def test_several_processes_at_once_lose_nothing_and_invent_nothing(tmp_path):
    assert os.geteuid() == 0, "the torture mounts a small disk to fill: run the tests as root"
    seed = int(os.environ.get("WORKBENCH_TORTURE_SEED") or random.SystemRandom().randrange(10**6))
    seconds = float(os.environ.get("WORKBENCH_TORTURE_SECONDS") or 60)
    plan = torture.Plan.drawn(seed, seconds)
    print(f"torture seed {seed} ({seconds:.0f} s): {plan}")
    disk, logs, spare = tmp_path / "disk", tmp_path / "logs", tmp_path / "spare"
    # 256 MiB a minute: the history grows about 100 MiB a minute here, and the disk must be
    # full only when the plan fills it.
    _mounted(disk, f"{256 * max(1, math.ceil(seconds / 60))}m")
    try:
        logs.mkdir()
        spare.mkdir()
        victim = tmp_path / "victim.txt"
        planted = torture.plant(disk, victim)
        ran = torture.conduct(disk, logs, spare, plan)
        counted = torture.check(disk, logs, spare, planted, victim)
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
    table = "\n".join(
        [
            f"# The history's torture\n\nseed {seed}, {seconds:.0f} s; {plan}\n",
            f"writers killed with kill -9: {', '.join(ran['kills']) or 'none'}\n",
            "| measure | count | must be zero |",
            "|---|---:|:---:|",
            *(
                f"| {name} | {count} | {'yes' if name in torture.MUST_BE_ZERO else ''} |"
                for name, count in counted.items()
            ),
        ]
    )
    TABLE.parent.mkdir(exist_ok=True)
    TABLE.write_text(table + "\n")
    assert ran["stuck"] == [] and ran["failed"] == {}, (ran, table)
    assert counted["calls acknowledged"] > 1000, table  # the roles really ran
    wrong = {name: counted[name] for name in torture.MUST_BE_ZERO if counted[name]}
    assert wrong == {}, f"seed {seed}\n{table}"
