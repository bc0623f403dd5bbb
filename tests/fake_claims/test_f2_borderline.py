"""F2: a recommendation whose criterion misses without contradiction (inconclusive); a statement with
a <script> tag the report must escape. FAKE_F2_MODE=refuted makes the miss significant (refuted)."""
import os

import pytest

pytestmark = pytest.mark.claim("F2")


def test_f2_borderline(evidence):
    refuted = os.environ.get("FAKE_F2_MODE") == "refuted"
    ev = evidence
    ev.claim("F2", title="A fake <b>borderline</b> recommendation",
             statement='Use <script>alert("pwned")</script> & keep the gap small', strength="moderate",
             kind="recommendation")
    gap_crit = ev.criterion("gap_small", prediction="gap < 0.1", threshold="< 0.1", test="one-sided (fake)")
    aux = ev.criterion("aux_reported", prediction="reported only", threshold="-", test="none", counts=False)
    ev.gate("gap", direction="lower", tolerance=1.0)
    gap = 0.5 if refuted else 0.12
    gap_crit.record(measured=gap, passed=gap < 0.1, refuted=gap > 0.3, p_value=0.001 if refuted else 0.2)
    aux.record(measured=1.0, passed=False)
    ev.metric("gap", gap)
    ev.headline("gap")
