"""F3: a claim refuted with significance; FAKE_F3_MODE=fixed makes it hold (an improvement)."""
import os

import pytest

from harness.record import decision

pytestmark = pytest.mark.claim("F3")


def test_f3_refuted(evidence):
    value = 0.95 if os.environ.get("FAKE_F3_MODE") == "fixed" else 0.2
    ev = evidence
    ev.claim("F3", title="A fake claim that fails", statement="The fake value is at least 0.8",
             strength="moderate")
    crit = ev.criterion("value_high", rule=decision.band(0.8, None, reason="fake floor"), prediction="value >= 0.8",
                        metric="value")
    ev.gate("value", direction="higher", tolerance=0.05)
    crit.sample([value - 0.01, value, value + 0.01])
    ev.metric("value", value)
