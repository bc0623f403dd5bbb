"""F6: one claim split over several tests (one plain, one parametrized): the plugin merges the parts.
FAKE_F6_REFUTE=k refutes part b[k] (the parametrized parts share the criterion name ``b``)."""
import os

import pytest

from harness.record import decision

pytestmark = pytest.mark.claim("F6")

STATEMENT = dict(title="A fake claim in parts", statement="Every part holds", strength="moderate")


def test_f6_part_a(evidence):
    evidence.claim("F6", **STATEMENT)
    crit = evidence.criterion("a", rule=decision.exact(), prediction="part a holds", metric="a")
    crit.check(True, measured=1)
    evidence.metric("a_value", 1.0)


@pytest.mark.parametrize("k", [1, 2])
def test_f6_part_b(evidence, k):
    evidence.claim("F6", **STATEMENT)
    crit = evidence.criterion("b", rule=decision.exact(), prediction="part b holds", metric="b")
    crit.check(os.environ.get("FAKE_F6_REFUTE") != str(k), measured=k)
    evidence.metric(f"b_value/{k}", float(k))


def test_f7_skipped(evidence):
    pytest.skip("needs a corpus (fake)")
