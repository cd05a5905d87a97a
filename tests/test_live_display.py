"""A displayed widget's saved form follows it, whichever thread republishes it: the form
published last is the one made last, so a form made before a call ended never overwrites the
one made after it (the saved card would read "queued")."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Run in a fresh interpreter: an IPython shell made here would make every later test believe it
# runs in a kernel.
RACE = textwrap.dedent(
    """
    import threading, time
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.displaypub import CapturingDisplayPublisher
    from workbench.widgets._live_display import LiveDisplay

    shell = InteractiveShell.instance()
    shell.display_pub = CapturingDisplayPublisher()
    live = LiveDisplay()
    live.show(lambda: {"text/plain": "queued"})
    state = {"now": "queued"}

    def slow_form():  # made from the state before it changes, published after it changed
        made = {"text/plain": state["now"]}
        time.sleep(0.2)
        return made

    def end_the_call():
        time.sleep(0.05)
        state["now"] = "ended"
        live.update(lambda: {"text/plain": state["now"]})

    ender = threading.Thread(target=end_the_call)
    ender.start()
    live.update(slow_form)
    ender.join()
    updates = [out["data"]["text/plain"] for out in shell.display_pub.outputs if out["update"]]
    print(updates[-1])
    """
)


def test_the_form_published_last_is_the_one_made_last():
    done = subprocess.run(
        [sys.executable, "-c", RACE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "ended"


SHOW_RACE = textwrap.dedent(
    """
    import threading, time
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.displaypub import CapturingDisplayPublisher
    from workbench.widgets._live_display import LiveDisplay

    shell = InteractiveShell.instance()
    shell.display_pub = CapturingDisplayPublisher()
    live = LiveDisplay()
    state = {"now": "running"}

    def slow_form():  # the first form, made while the call runs and published after it ended
        made = {"text/plain": state["now"]}
        time.sleep(0.2)
        return made

    def end_the_call():
        time.sleep(0.05)
        state["now"] = "ended"
        live.update(lambda: {"text/plain": state["now"]})

    ender = threading.Thread(target=end_the_call)
    ender.start()
    live.show(slow_form)
    ender.join()
    print([out["data"]["text/plain"] for out in shell.display_pub.outputs][-1])
    """
)


def test_a_call_that_ends_while_its_card_is_first_shown_is_saved_ended():
    done = subprocess.run(
        [sys.executable, "-c", SHOW_RACE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "ended"
