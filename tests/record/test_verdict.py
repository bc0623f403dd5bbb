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
    """Issue 47, mechanism 5: nothing counted, nothing claimed: "not tested", with the reason, and the run passes."""
    assert V.decide([]) == V.NOT_TESTED
    assert V.decide([crit("a", passed=True, counts=False)]) == V.NOT_TESTED
    assert V.decide([crit("a", passed=True, counts=False)], kind="question") == V.NOT_TESTED
    assert V.decide([crit("a", passed=True, counts=False)], errored=True) == "error"
    judged = V.judge_record([crit("p", refuted=True, counts=False)], nothing_counted="its rows are identities")
    assert (judged["verdict"], judged["not_tested"], judged["firmness"]) == (V.NOT_TESTED, "its rows are identities",
                                                                             None)
    assert V.judge_record([crit("a", passed=True)])["not_tested"] == ""     # a claim that counts is judged as ever
    fast = V.judge_record([crit("a", passed=True), crit("r", passed=True, counts=False, fast=True)], fast_only=True)
    assert (fast["verdict"], fast["not_tested"]) == (V.NOT_TESTED, V.NO_FAST_COUNTED)
    assert V.test_passes(V.NOT_TESTED, "claim") and V.test_passes(V.NOT_TESTED, "question")
    assert V.NOT_TESTED in V.ALL_VERDICTS and len(set(V.ALL_VERDICTS)) == len(V.ALL_VERDICTS)


def test_not_tested_and_inconclusive_are_no_regression_of_each_other():
    for now, base in ((V.NOT_TESTED, "inconclusive"), ("inconclusive", V.NOT_TESTED),
                      (V.NOT_TESTED, "inconclusive at this scale")):
        assert not V.is_worse(now, base, "claim") and not V.is_worse(now, base, "question")
    assert V.is_worse(V.NOT_TESTED, "supported", "claim")       # a counted criterion gone: the gate says so too
    assert V.deciding_criteria({"verdict": V.NOT_TESTED, "criteria": [crit("r", passed=True, counts=False)]}) == ([], 0)


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
    assert V.test_passes("inconclusive", "recommendation")     # a finding, not a failure (issue 56)
    assert not V.test_passes("error", "claim")
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


def test_a_kernel_trial_does_not_dispose_of_the_practice():
    """Issue 39: R1 refuted on a kernel with a mask bug judges the kernel, not 1/sqrt(head_dim)."""
    (row,) = V.practice_dispositions({"R1": "refuted", "R2": "supported"}, kernel="pkg.mod:attention")
    assert row["disposition"] == "not judged: these verdicts judge the kernel pkg.mod:attention, not the practice"
    assert row["verdicts"]["R1"] == "refuted"


def test_explain_names_the_failing_criterion():
    judged = V.judge_record([crit("slope_ci", refuted=True), crit("wide")])["criteria"]
    judged[0] |= {"ci": [0.1, 0.2], "p_value": 0.001}
    text = V.explain({"id": "C9", "verdict": "refuted", "statement": "s", "criteria": judged})
    assert "slope_ci: REFUTED" in text and "CI [0.1, 0.2]" in text
    assert "refutation p (one-sided, Holm-adjusted over the claim's counted criteria) = 0.001" in text
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


# ------------------------------------------------------------------------------ roles (issue 38, mechanism 1)
def premise(name="law", passed=False, refuted=False, recorded=True, fast=False):
    """A premise record: ``crit`` with role premise (not counted)."""
    return {**crit(name, passed=passed, refuted=refuted, recorded=recorded, counts=False, fast=fast),
            "role": "premise"}


def test_a_failing_premise_makes_the_claim_inconclusive_whatever_the_counted_criteria_say():
    for counted_ones in ([crit("a", passed=True)], [crit("a", refuted=True)], [crit("a", passed=True), crit("b")]):
        for bad in (premise(refuted=True), premise(), premise(recorded=False)):
            j = V.judge_record(counted_ones + [bad])
            assert j["verdict"] == "inconclusive", (counted_ones, bad)
            assert j["not_testable"].startswith("premise law "), j["not_testable"]
            assert j["firmness"] is None and "premise" in j["firmness_reason"] and j["scope"] == ""
    assert V.judge_record([crit("a", passed=True), premise(refuted=True)])["not_testable"].startswith(
        "premise law refuted: the check failed")
    assert V.judge_record([crit("a", passed=True), premise()])["not_testable"].startswith("premise law not shown:")
    assert V.judge_record([crit("a", passed=True), premise(recorded=False)])["not_testable"] == \
        "premise law not shown: never recorded"
    assert V.decide([crit(passed=True), premise(refuted=True)], kind="question") == "inconclusive at this scale"
    assert V.decide([crit(passed=True), premise(refuted=True)], errored=True) == "error"


def test_a_passing_premise_leaves_the_verdict_to_the_counted_criteria():
    assert V.decide([premise(passed=True), crit("a", passed=True)]) == "supported"
    assert V.decide([premise(passed=True), crit("a", passed=True), crit("b", refuted=True)]) == "refuted"
    assert V.decide([premise(passed=True), crit("a", passed=True), crit("b")]) == "inconclusive"
    j = V.judge_record([premise(passed=True), crit("a", passed=True)])
    assert j["not_testable"] == "" and [c["role"] for c in j["criteria"]] == ["premise", "counted"]
    # a premise is not counted: premises alone claim nothing (issue 47: not tested)
    assert V.decide([premise(passed=True)]) == V.NOT_TESTED


def test_a_fast_run_checks_the_fast_premises_only():
    criteria = [crit("a", passed=True, fast=True), premise("slow_law", refuted=True), premise("quick", passed=True,
                                                                                              fast=True)]
    assert V.decide(criteria, fast_only=True) == "supported"
    assert V.decide(criteria) == "inconclusive"
    assert V.decide([crit("a", passed=True, fast=True), premise("quick", refuted=True, fast=True)],
                    fast_only=True) == "inconclusive"


def test_a_premise_leaves_the_holm_family():
    """A counted criterion whose refutation p (0.036) is rejected alone at 0.05 but not beside a second part with
    p_refute 1 (Holm: 0.036 > 0.05 / 2): counted beside it, the identity check keeps it inconclusive; as a
    premise the check leaves the family and the refutation stands."""
    counted_one = {"name": "gain", "rule": D.superiority(0.1, reason="r").as_dict(), "recorded": True,
                   "measurements": [D.estimate(-1.8, 1.0, 1000, 8)]}
    identity = {"name": "identity", "rule": D.band(0.9, 1.1, reason="r").as_dict(), "recorded": True,
                "measurements": [D.estimate(1.0, 0.01, 1000, 8)]}
    as_counted = V.judge_record([counted_one, {**identity, "counts": True}], firmness=False)
    assert as_counted["verdict"] == "inconclusive" and as_counted["criteria"][0]["outcome"] == "inconclusive"
    as_premise = V.judge_record([counted_one, {**identity, "role": "premise"}], firmness=False)
    assert as_premise["verdict"] == "refuted" and as_premise["criteria"][0]["outcome"] == "refuted"
    assert as_premise["criteria"][0]["p_refute"] == pytest.approx(0.036, abs=0.001)
    assert as_premise["criteria"][1]["outcome"] == "passed" and as_premise["not_testable"] == ""
    # the firmness of the claim is the counted family's: the premise's own does not enter it
    firm = V.judge_record([counted_one, {**identity, "role": "premise"}])
    alone = V.judge_record([counted_one])
    assert firm["firmness"] == alone["firmness"]


def test_roles_are_read_from_counts_when_a_record_has_none():
    assert V.role_of({"counts": True}) == V.role_of({}) == "counted"
    assert V.role_of({"counts": False}) == "reported"
    assert V.role_of({"counts": False, "role": "premise"}) == "premise"
    # a role wins over counts, so a hand-made record cannot put a premise in the family
    assert V.counted([{"counts": True, "role": "premise"}]) == []


def test_what_a_not_testable_claim_rests_on_and_how_it_is_explained():
    record = _judged(crit("ok", passed=True), crit("bad", refuted=True), premise("law", refuted=True),
                     premise("fine", passed=True), crit("r", refuted=True, counts=False))
    assert record["verdict"] == "inconclusive" and record["not_testable"].startswith("premise law refuted")
    shown, more = V.deciding_criteria(record)
    assert [c["name"] for c in shown] == ["law"] and more == 0
    text = V.explain(record)
    assert "law: REFUTED (premise)" in text and "r: REFUTED (not counted)" in text
    assert "not testable here: premise law refuted" in text
    assert _judged(crit("ok", passed=True), premise("fine", passed=True))["not_testable"] == ""


@pytest.mark.parametrize("criteria,kw", [
    ([crit("a", passed=True), crit("b", passed=True)], {}),
    ([crit("a", passed=True), crit("b", refuted=True)], {}),
    ([crit("a", passed=True), crit("b")], {}),
    ([crit("a", passed=True), crit("b", recorded=False)], {}),
    ([crit("a", passed=True, counts=False)], {}),
    ([], {}),
    ([crit("a", passed=True)], {"errored": True}),
    ([crit("a", passed=True, fast=True), crit("slow", recorded=False)], {"fast_only": True}),
    ([premise(refuted=True), crit("a", passed=True)], {}),
    ([premise(passed=True), crit("a", refuted=True)], {"kind": "question"}),
    ([crit("a")], {"kind": "recommendation"}),
])
def test_a_parts_verdict_read_from_the_judged_outcomes_is_the_judgements(criteria, kw):
    """Issue 46: a test part's verdict is read from its criteria as its claim judged them, never decided again;
    on the criteria of a whole claim it is the judgement's own verdict, reason and scope."""
    judged = V.judge_record(criteria, firmness=False, **kw)
    assert V.part_verdict(judged["criteria"], **kw) == {k: judged[k] for k in ("verdict", "not_testable", "not_tested",
                                                                              "scope", "answers")}
def test_a_refutation_decided_by_an_exact_check_has_no_firmness():
    """Issue 47, finding 1: an exact check is fixed in every simulated run, so a refutation it decides would read
    firmness 1.00 by construction; it is null with the reason, as a claim of exact checks only is."""
    stat = {"name": "t", "prediction": "p", "threshold": "t", "measured": 1.0, "recorded": True, "counts": True,
            "fast": False, "rule": D.band(0.5, None, reason="test").as_dict(),
            "measurements": [D.samples([1.0, 1.1, 0.9, 1.05])]}
    j = V.judge_record([stat, crit("m", refuted=True)])
    assert j["verdict"] == V.REFUTED and j["firmness"] is None and j["seeds_for_firm"] is None
    assert "deterministic checks alone" in j["firmness_reason"] and "m refuted" in j["firmness_reason"]
    passing = V.judge_record([stat, crit("m", passed=True)])          # a check that passed decides nothing alone
    assert passing["verdict"] == V.SUPPORTED and passing["firmness"] is not None
