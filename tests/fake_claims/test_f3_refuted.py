"""F3: a claim refuted with significance; FAKE_F3_MODE=fixed makes it hold (an improvement)."""
import os

import pytest

pytestmark = pytest.mark.claim("F3")


def test_f3_refuted(evidence):
    value = 0.95 if os.environ.get("FAKE_F3_MODE") == "fixed" else 0.2
    ev = evidence
    ev.claim("F3", title="A fake claim that fails", statement="The fake value is at least 0.8",
             strength="moderate")
    crit = ev.criterion("value_high", prediction="value >= 0.8", threshold=">= 0.8", test="fake")
    ev.gate("value", direction="higher", tolerance=0.05)
    crit.record(measured=value, passed=value >= 0.8, refuted=value < 0.5, p_value=0.001)
    ev.metric("value", value)
