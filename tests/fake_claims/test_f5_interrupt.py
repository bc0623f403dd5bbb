"""F5: holds, unless FAKE_INTERRUPT=1, when it records a metric and then the user presses Ctrl-C, or
FAKE_INTERRUPT=term, when the process is sent SIGTERM (as `timeout` or a cancelled CI job does), or
FAKE_INTERRUPT=wait, when it writes the file ``f5-measuring`` in the working folder and waits there for a signal
from outside (the test sends the real SIGINT a user's Ctrl-C sends)."""
import os
import signal
import time

import pytest

from harness.record import decision

pytestmark = pytest.mark.claim("F5")


def test_f5_interrupt(evidence):
    ev = evidence
    ev.claim("F5", title="A fake claim cut short", statement="It finishes unless interrupted",
             strength="strong")
    crit = ev.criterion("finished", rule=decision.exact(), prediction="it finishes", metric="finished")
    ev.metric("partial", 1.5)
    if os.environ.get("FAKE_INTERRUPT") == "1":
        raise KeyboardInterrupt
    if os.environ.get("FAKE_INTERRUPT") == "term":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)  # the signal arrives while the claim is still measuring
    if os.environ.get("FAKE_INTERRUPT") == "wait":
        open("f5-measuring", "w").close()
        time.sleep(60)
    crit.check(True, measured=1)
