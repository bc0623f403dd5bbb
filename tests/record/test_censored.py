"""Censored parts (issue 63, C2's rule b): a run that never reached its target makes a part's values bounds of δ.

An "upper" bound (a censored cell entering δ with −) can refute a predicted advantage and never support it; a
"lower" bound the mirror; censoring on both sides leaves the part invalid. The same values unbounded decide as
before, so the rule changes only what censoring leaves unknown.
"""
import numpy as np
import pytest

from harness.record import decision

B6 = [0.0, 3, 1, 4, 2, 5]
RULE = decision.superiority(50, reason="steps", paired=True)


def _judge(m):
    crit = {"rule": RULE.as_dict(), "measurements": [m]}
    return decision.judge([crit], [True], firmness=False).criteria[0]


def _part(a, b, plus=(), minus=()):
    m = decision.samples(a, b, paired=True, label="d=64 vs d=4")
    n = len(a)
    up = np.zeros(n, bool) if not plus else np.array(plus, bool)
    down = np.zeros(n, bool) if not minus else np.array(minus, bool)
    return decision.censor_bound(m, up, down, "runs unreached within 800 steps (conv d=4 3/6)")


def test_an_upper_bound_cannot_support():
    big = [900.0, 950, 1000, 980, 940, 990]
    assert _judge(_part(big, B6))["outcome"] == decision.PASSED
    out = _judge(_part(big, B6, minus=[1, 0, 0, 0, 0, 0]))
    assert out["outcome"] == decision.INCONCLUSIVE
    assert "upper bounds of δ, so it can refute and never support" in out["decision_note"]


def test_an_upper_bound_still_refutes():
    low = [-600.0, -650, -550, -700, -620, -580]
    out = _judge(_part(low, B6, minus=[1, 1, 1, 0, 0, 0]))
    assert out["outcome"] == decision.REFUTED


def test_a_lower_bound_cannot_refute_but_supports():
    low = [-600.0, -650, -550, -700, -620, -580]
    assert _judge(_part(low, B6, plus=[1, 0, 0, 0, 0, 0]))["outcome"] == decision.INCONCLUSIVE
    big = [900.0, 950, 1000, 980, 940, 990]
    assert _judge(_part(big, B6, plus=[1, 0, 0, 0, 0, 0]))["outcome"] == decision.PASSED


def test_censoring_on_both_sides_is_invalid():
    m = _part([900.0, 950, 1000], [0.0, 1, 2], plus=[1, 0, 0], minus=[0, 1, 0])
    assert decision.CENSORED_BOTH in m["invalid"] and "bound" not in m


def test_nothing_censored_leaves_the_measurement_alone():
    m = _part([1.0, 2, 3], [0.0, 1, 2])
    assert "bound" not in m and "censored" not in m


def test_a_bound_on_an_equivalence_rule_is_refused():
    m = _part([1.0, 2, 3], [0.0, 1, 2], minus=[1, 0, 0])
    crit = {"rule": decision.equivalence(5, reason="r", paired=True).as_dict(), "measurements": [m]}
    with pytest.raises(decision.DecisionError, match="censored bound"):
        decision.judge([crit], [True], firmness=False)


def test_a_censored_part_stays_bounded_when_replicates_pool():
    """A part bounded in one replicate is bounded pooled: the pooled effect is a mean of bounds."""
    from harness.record import replication

    plain = decision.samples([-600.0, -650, -550], [0.0, 1, 2], paired=True, label="p")
    upper = _part([-600.0, -650, -550], [0.0, 1, 2], minus=[1, 0, 0])
    lower = _part([-600.0, -650, -550], [0.0, 1, 2], plus=[1, 0, 0])
    assert replication.pooled_part("p", [plain, upper, plain], [1, 2, 3])["bound"] == decision.BOUND_UPPER
    assert "bound" not in replication.pooled_part("p", [plain, plain, plain], [1, 2, 3])
    both = replication.pooled_part("p", [upper, lower, plain], [1, 2, 3])
    assert decision.CENSORED_BOTH in both["invalid"]
