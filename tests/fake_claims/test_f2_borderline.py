"""F2: a recommendation whose criterion misses without contradiction (inconclusive); a statement with
a <script> tag the report must escape. FAKE_F2_MODE=refuted makes the miss significant (refuted)."""
import os

import pytest

from harness.record import decision

pytestmark = pytest.mark.claim("F2")


def test_f2_borderline(evidence):
    refuted = os.environ.get("FAKE_F2_MODE") == "refuted"
    ev = evidence
    ev.claim("F2", title="A fake <b>borderline</b> recommendation",
             statement='Use <script>alert("pwned")</script> & keep the gap small', strength="moderate",
             kind="recommendation")
    gap_crit = ev.criterion("gap_small", rule=decision.band(None, 0.1, reason="fake: a tenth"), prediction="gap < 0.1",
                            metric="gap")
    aux = ev.criterion("aux_reported", rule=decision.exact(), prediction="reported only", metric="aux",
                       role="reported")
    ev.gate("gap", direction="lower", tolerance=1.0)
    gap = 0.5 if refuted else 0.12
    gap_crit.sample([gap - 0.05, gap, gap + 0.05] if not refuted else [gap - 0.02, gap, gap + 0.02])
    aux.check(False, measured=1.0)
    ev.metric("gap", gap)
    ev.headline("gap")
