"""F4: a claim module that crashes after declaring its criteria (verdict error); FAKE_F4_CRASH=0 fixes it."""
import os

import pytest

from harness.record import decision

pytestmark = pytest.mark.claim("F4")


def test_f4_crash(evidence):
    ev = evidence
    ev.claim("F4", title="A fake claim whose module crashes", statement="It never gets measured",
             strength="strong")
    crit = ev.criterion("anything", rule=decision.exact(), prediction="it runs", metric="runs")
    if os.environ.get("FAKE_F4_CRASH", "1") == "1":
        raise RuntimeError("fake crash in the measurement")
    crit.check(True, measured=1)
