"""Verdict logic (harness/record/verdict.py): criteria records -> supported / inconclusive / refuted / error."""
import pytest

from harness.record import decision as D
from harness.record import verdict as V


def crit(name="c", passed=False, refuted=False, recorded=True, counts=True, fast=False):
    """A criterion record whose outcome is known: passed / refuted as an exact check, neither as a band whose
    interval straddles its bound (inconclusive)."""
    if passed or refuted:
        rule, extra = D.exact(), {"exact_holds": bool(passed)}
    else:
        rule, extra = D.band(0.5, None, reason="test"), {"measurements": [D.samples([0.0, 1.0, -1.0, 2.0])]}
    return {"name": name, "prediction": "p", "threshold": "t", "measured": 1.0, "rule": rule.as_dict(),
            "recorded": recorded, "counts": counts, "fast": fast, **extra}


def test_every_counted_criterion_passing_is_supported():
    assert V.decide([crit("a", passed=True), crit("b", passed=True)]) == "supported"


def test_a_failing_criterion_contradicted_with_significance_is_refuted():
    assert V.decide([crit("a", passed=True), crit("b", refuted=True)]) == "refuted"


def test_a_borderline_criterion_is_inconclusive():
    # missed the threshold, but not contradicted with significance
    assert V.decide([crit("a", passed=True), crit("b", passed=False, refuted=False)]) == "inconclusive"


def test_a_criterion_declared_but_never_recorded_is_inconclusive():
    assert V.decide([crit("a", passed=True), crit("b", recorded=False)]) == "inconclusive"


def test_no_counted_criterion_supports_nothing():
    assert V.decide([]) == "inconclusive"
    assert V.decide([crit("a", passed=True, counts=False)]) == "inconclusive"


def test_uncounted_criteria_do_not_enter_the_verdict():
    assert V.decide([crit("a", passed=True), crit("b", refuted=True, counts=False)]) == "supported"


def test_a_crash_is_error_whatever_was_recorded():
    assert V.decide([crit("a", passed=True)], errored=True) == "error"


def test_fast_mode_judges_the_fast_criteria_only():
    criteria = [crit("a", passed=True, fast=True), crit("slow", recorded=False)]
    assert V.decide(criteria, fast_only=True) == "supported"
    assert V.decide(criteria) == "inconclusive"


def test_questions_read_as_answers():
    assert V.decide([crit(passed=True)], kind="question") == "answered yes"
    assert V.decide([crit(refuted=True)], kind="question") == "answered no"
    assert V.decide([crit()], kind="question") == "inconclusive at this scale"
    assert V.decide([crit()], kind="question", errored=True) == "error"


def test_unknown_kind_names_the_valid_ones():
    with pytest.raises(ValueError, match="claim, recommendation, question"):
        V.decide([], kind="hunch")


def test_pytest_outcome_without_baseline():
    assert V.test_passes("supported", "claim")
    assert not V.test_passes("inconclusive", "recommendation")
    assert not V.test_passes("refuted", "claim")
    assert V.test_passes("answered no", "question")
    assert V.test_passes("inconclusive at this scale", "question")
    assert not V.test_passes("error", "question")


def test_verdict_order_for_the_gate():
    assert V.is_worse("inconclusive", "supported", "claim")
    assert V.is_worse("refuted", "inconclusive", "claim")
    assert V.is_worse("error", "refuted", "claim")
    assert not V.is_worse("supported", "refuted", "claim")
    assert not V.is_worse("answered no", "answered yes", "question")  # a changed answer is not worse
    assert V.is_worse("error", "answered no", "question")


@pytest.mark.parametrize("verdicts,expected", [
    ({"C3": "supported", "C4": "supported", "R1": "supported"}, "confirmed"),
    ({"C3": "refuted", "C4": "supported", "R1": "supported"}, "not confirmed"),
    ({"C3": "inconclusive", "C4": "supported", "R1": "supported"}, "open"),
    ({"C4": "supported"}, "open"),
    ({}, "not run"),
])
def test_sota_050_disposition_follows_c3_c4_r1(verdicts, expected):
    (row,) = V.practice_dispositions(verdicts)
    assert row["id"] == "SOTA-050" and row["disposition"] == expected
    assert set(row["verdicts"]) == {"C3", "C4", "R1"}


def test_explain_names_the_failing_criterion():
    judged = V.judge_record([crit("slope_ci", refuted=True), crit("wide")])["criteria"]
    judged[0] |= {"ci": [0.1, 0.2], "p_value": 0.001}
    text = V.explain({"id": "C9", "verdict": "refuted", "statement": "s", "criteria": judged})
    assert "slope_ci: REFUTED" in text and "CI [0.1, 0.2]" in text and "p=0.001" in text
    assert "wide: inconclusive; band" in text


def _judged(*criteria):
    record = {"id": "C9", "criteria": list(criteria)}
    return V.apply_judgement(record)


def test_the_deciding_criteria_are_what_the_verdict_rests_on():
    """Issue 19: the claim section opens with the one or two criteria that decided the verdict."""
    refuted = _judged(crit("ok", passed=True), crit("bad", refuted=True), crit("open"))
    shown, more = V.deciding_criteria(refuted)
    assert refuted["verdict"] == "refuted" and [c["name"] for c in shown] == ["bad"] and more == 0
    open_ = _judged(crit("ok", passed=True), crit("open"), crit("never", recorded=False), crit("open2"))
    shown, more = V.deciding_criteria(open_)
    assert open_["verdict"] == "inconclusive" and {c["name"] for c in shown} <= {"open", "never", "open2"}
    assert len(shown) == 2 and more == 1
    supported = _judged(crit("a", passed=True), crit("b", passed=True), crit("r", refuted=True, counts=False))
    supported["criteria"][1]["firmness"] = 0.5  # the weakest link comes first
    shown, more = V.deciding_criteria(supported)
    assert supported["verdict"] == "supported" and shown[0]["name"] == "b" and more == 0
    assert "r" not in [c["name"] for c in shown]  # a reported criterion never decides
    assert V.deciding_criteria({**supported, "verdict": "error"}) == ([], 0)
    assert V.deciding_criteria(_judged(crit("r", passed=True, counts=False))) == ([], 0)
