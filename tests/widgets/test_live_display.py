"""A displayed widget's saved form follows it, whichever thread republishes it: the form
published last is the one made last, so a form made before a call ended never overwrites the
one made after it (the saved card would read "queued" or "running")."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Each race runs in a fresh interpreter: an IPython shell made here would make every later test
# believe it runs in a kernel. ``first`` is what the script does while another thread ends the
# call 0.05 s in: ``slow_form`` makes a form from the state before the end and returns it after.
RACE = """
import threading, time
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.displaypub import CapturingDisplayPublisher
from workbench.widgets._live_display import LiveDisplay

shell = InteractiveShell.instance()
shell.display_pub = CapturingDisplayPublisher()
live = LiveDisplay()
state = {{"now": "{before}"}}

def slow_form():
    made = {{"text/plain": state["now"]}}
    time.sleep(0.2)
    return made

def end_the_call():
    time.sleep(0.05)
    state["now"] = "ended"
    live.update(lambda: {{"text/plain": state["now"]}})

{setup}
ender = threading.Thread(target=end_the_call)
ender.start()
{first}
ender.join()
print([out["data"]["text/plain"] for out in shell.display_pub.outputs][-1])
"""


def last_form_saved(before: str, first: str, setup: str = "") -> str:
    script = RACE.format(before=before, first=first, setup=textwrap.dedent(setup))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def test_the_form_published_last_is_the_one_made_last():
    shown = 'live.show(lambda: {"text/plain": "queued"})'
    assert last_form_saved("queued", "live.update(slow_form)", setup=shown) == "ended"


def test_a_call_that_ends_while_its_card_is_first_shown_is_saved_ended():
    assert last_form_saved("running", "live.show(slow_form)") == "ended"
