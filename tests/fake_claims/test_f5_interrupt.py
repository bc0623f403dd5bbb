"""F5: holds, unless FAKE_INTERRUPT=1, when it records a metric and then the user presses Ctrl-C."""
import os

import pytest

pytestmark = pytest.mark.claim("F5")


def test_f5_interrupt(evidence):
    ev = evidence
    ev.claim("F5", title="A fake claim cut short", statement="It finishes unless interrupted",
             strength="strong")
    crit = ev.criterion("finished", prediction="it finishes", threshold="-", test="none")
    ev.metric("partial", 1.5)
    if os.environ.get("FAKE_INTERRUPT") == "1":
        raise KeyboardInterrupt
    crit.record(measured=1, passed=True)
