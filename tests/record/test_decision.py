"""The decision protocol (harness/record/decision.py, issue 16) on synthetic samples whose truth is known.

Each kind is checked supported / refuted / inconclusive, at and near its margin, at n = 3 and n = 25, paired and
unpaired, and on degenerate samples; then the family (Holm). Firmness: test_firmness.py.
"""
import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.record import decision as D
from harness.record import verdict as V
from tests.record.synthetic import R, around


def outcome(rule, *measurements, holds=None):
    return D.decide_alone(rule, list(measurements), holds=holds)


# ------------------------------------------------------------------------------------------- each kind
@pytest.mark.parametrize("n", [3, 25])
@pytest.mark.parametrize("paired", [False, True])
def test_superiority_supported_refuted_inconclusive(n, paired):
    rule = D.superiority(0.1, reason=R, paired=paired)
    b = around(0.0, 0.05, n, seed=1)
    big = D.samples(b + around(1.0, 0.05, n, seed=2), b, paired=paired)
    below = D.samples(b + around(-1.0, 0.05, n, seed=2), b, paired=paired)
    near = D.samples(b + around(0.1, 0.3, n, seed=2), b, paired=paired)   # δ at the margin, wide spread
    assert outcome(rule, big)["outcome"] == "passed"
    assert outcome(rule, below)["outcome"] == "refuted"
    assert outcome(rule, near)["outcome"] == "inconclusive"


def test_the_interval_is_the_one_sided_t_bound_at_the_margin():
    """Just above and just below the margin: passed iff the 1 - alpha lower t bound clears it (n = 3, 2 df)."""
    n, sd = 3, 0.1
    q = sps.t.isf(D.ALPHA, n - 1) * sd / math.sqrt(n)
    rule = D.superiority(0.2, reason=R)
    assert outcome(rule, D.samples(around(0.2 + q * 1.01, sd, n)))["outcome"] == "passed"
    assert outcome(rule, D.samples(around(0.2 + q * 0.99, sd, n)))["outcome"] == "inconclusive"
    res = outcome(rule, D.samples(around(0.2 + q * 1.01, sd, n)))
    assert res["ci"][0] == pytest.approx(0.2 + q * 0.01, abs=1e-9) and res["level"] == D.ALPHA


def test_welch_matches_scipy():
    a, b = around(1.0, 0.3, 5, seed=3), around(0.6, 0.1, 7, seed=4)
    s = D.stat(D.samples(a, b))
    ref = sps.ttest_ind(a, b, equal_var=False, alternative="greater")
    p_support, _ = D.criterion_p(D.superiority(0.0, reason=R), [s])
    assert p_support == pytest.approx(ref.pvalue, rel=1e-9)
    assert s.df == pytest.approx(ref.df, rel=1e-9)


def test_pairing_removes_the_shared_seed_effect():
    """Arms that share each seed's data move together: the paired test sees the small, steady gap."""
    seed_effect = around(0.0, 1.0, 5, seed=5)
    a, b = seed_effect + around(0.3, 0.02, 5, seed=6), seed_effect
    rule_p, rule_u = D.superiority(0.1, reason=R, paired=True), D.superiority(0.1, reason=R)
    assert outcome(rule_p, D.samples(a, b, paired=True))["outcome"] == "passed"
    assert outcome(rule_u, D.samples(a, b))["outcome"] == "inconclusive"
    with pytest.raises(D.DecisionError, match="paired arms differ"):
        D.samples([1, 2, 3], [1, 2], paired=True)


@pytest.mark.parametrize("n", [3, 25])
def test_non_inferiority(n):
    rule = D.non_inferiority(0.05, reason=R, paired=True)
    b = around(1.0, 0.01, n, seed=7)
    assert outcome(rule, D.samples(b - around(0.01, 0.005, n, seed=9), b, paired=True))["outcome"] == "passed"
    assert outcome(rule, D.samples(b - around(0.3, 0.01, n), b, paired=True))["outcome"] == "refuted"
    assert outcome(rule, D.samples(b + around(-0.05, 0.2, n), b, paired=True))["outcome"] == "inconclusive"


@pytest.mark.parametrize("n", [3, 25])
def test_equivalence_is_tost_and_never_non_significance(n):
    rule = D.equivalence(0.1, reason=R)
    tight = D.samples(around(0.0, 0.01, n, seed=8))
    wide = D.samples(around(0.0, 1.0, n, seed=8))      # the classic trap: p >> 0.05, yet nothing shown similar
    far = D.samples(around(1.0, 0.01, n, seed=8))
    assert outcome(rule, tight)["outcome"] == "passed"
    assert outcome(rule, wide)["outcome"] == "inconclusive"
    assert outcome(rule, far)["outcome"] == "refuted"
    assert outcome(rule, D.samples(around(-1.0, 0.01, n, seed=8)))["outcome"] == "refuted"


def test_band_with_open_sides_and_slope_fits():
    assert outcome(D.band(None, 0.0, reason=R), D.samples(around(-1.0, 0.1, 3)))["outcome"] == "passed"
    assert outcome(D.band(None, 0.0, reason=R), D.samples(around(1.0, 0.1, 3)))["outcome"] == "refuted"
    assert outcome(D.band(0.9, 1.1, reason=R), D.estimate(1.0, 0.01, 20, 3))["outcome"] == "passed"
    assert outcome(D.band(0.9, 1.1, reason=R), D.estimate(1.5, 0.01, 20, 3))["outcome"] == "refuted"
    from harness.measure import stats
    x = np.tile([1.0, 2.0, 4.0, 8.0], 3)
    fit = stats.loglog_slope(x, x ** 1.0 * np.exp(np.random.default_rng(0).normal(0, 0.01, x.size)))
    assert outcome(D.band(0.9, 1.1, reason=R), D.from_fit(fit))["outcome"] == "passed"


def test_exact_holds_or_fails():
    assert outcome(D.exact(), holds=True)["outcome"] == "passed"
    assert outcome(D.exact(), holds=False)["outcome"] == "refuted"


def test_parts_intersection_union_and_bonferroni():
    rule = D.band(None, 0.0, reason=R)
    good, bad, unsure = (D.samples(around(m, s, 5), label=l)
                         for m, s, l in ((-1, 0.1, "good"), (1, 0.1, "bad"), (-0.05, 1.0, "unsure")))
    assert outcome(rule, good, good)["outcome"] == "passed"
    res = outcome(rule, good, unsure)
    assert res["outcome"] == "inconclusive" and res["deciding_part"] == "unsure"
    assert outcome(rule, good, bad)["outcome"] == "refuted"


@pytest.mark.parametrize("a,b", [([1.0, 1.0, 1.0], [0.5, 0.7, 0.6]), ([1.0, 1.0, 1.0], [0.5, 0.5, 0.5])])
def test_degenerate_samples_are_never_significant(a, b):
    """An arm at a ceiling (accuracy 1.000 on every seed) has no spread to test: inconclusive, never p = 0."""
    res = outcome(D.superiority(0.0, reason=R), D.samples(a, b))
    assert res["outcome"] == "inconclusive" and res["p_value"] == 1.0
    assert "ceiling" in res["decision_note"]
    assert outcome(D.superiority(0.0, reason=R), D.samples([1.0, 1.0, 1.0]))["outcome"] == "inconclusive"
    assert outcome(D.band(0.0, None, reason=R), D.estimate(1.0, 0.0, 5, 3))["outcome"] == "inconclusive"


def test_an_exact_point_is_decided_where_it_lies_and_has_no_firmness():
    """estimate(..., exact=why): zero spread stated as exact by the caller is the point's interval; without the
    reason se 0 stays degenerate (above). On the pass region's open edge it does not pass; on the refutation
    region's closed edge (a level band's edge, a direction's null) it refutes."""
    rule = D.band(0.05, None, reason=R)
    below = D.decide_alone(rule, [D.estimate(0.0, 0.0, 2, 3, exact="the arms are one function")], firmness=True)
    assert below["outcome"] == "refuted" and below["ci"] == (0.0, 0.0) and below["firmness"] is None
    assert "exact point" in below["firmness_reason"]
    assert outcome(rule, D.estimate(0.3, 0.0, 2, 3, exact="why"))["outcome"] == "passed"
    assert outcome(rule, D.estimate(0.05, 0.0, 2, 3, exact="why"))["outcome"] == "refuted"
    falls = D.band(0.05, None, null=0.0, reason=R)
    assert outcome(falls, D.estimate(0.05, 0.0, 2, 3, exact="why"))["outcome"] == "inconclusive"
    assert outcome(falls, D.estimate(0.0, 0.0, 2, 3, exact="why"))["outcome"] == "refuted"
    short = outcome(D.superiority(0.25, reason=R), D.estimate(0.1, 0.0, 2, 3, exact="why"))
    assert short["outcome"] == "inconclusive" and short["short_of_margin"]
    with pytest.raises(D.DecisionError):
        D.estimate(0.1, 0.01, 2, 3, exact="why")
    # beside a statistical criterion the claim keeps a firmness; alone it is deterministic
    point = {"name": "point", "rule": rule.as_dict(), "counts": True, "recorded": True,
             "measurements": [D.estimate(0.0, 0.0, 2, 3, exact="why")]}
    good = {"name": "good", "rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(1.0, 0.05, 4))]}
    alone = V.judge_record([point])
    assert alone["verdict"] == "refuted" and alone["firmness"] is None
    assert alone["firmness_reason"].startswith("deterministic")
    both = V.judge_record([good, point])
    assert both["verdict"] == "refuted" and both["firmness"] == pytest.approx(1.0)


def test_paired_arms_identical_on_every_seed_are_an_exact_point_only_when_the_caller_says_why():
    """samples(..., identical=why): equal paired arms that vary across seeds are an exact point at 0 (a kernel that
    computes the reference bit for bit); without the reason, or with an arm constant across seeds (a ceiling), they
    stay degenerate; arms that differ anywhere are the samples as given; ``invalid`` still wins."""
    rule = D.non_inferiority(0.1, reason=R, paired=True)
    loss = [0.3, 0.5, 0.4]
    same = D.samples(loss, list(loss), paired=True, identical="one computation")
    assert same["source"] == "estimate" and same["exact"].endswith("one computation")
    assert outcome(rule, same)["outcome"] == "passed"
    assert outcome(rule, D.samples(loss, list(loss), paired=True))["outcome"] == "inconclusive"
    ceiling = D.samples([1.0] * 3, [1.0] * 3, paired=True, identical="why")
    assert ceiling["source"] == "samples" and outcome(rule, ceiling)["outcome"] == "inconclusive"
    assert D.samples(loss, [0.3, 0.5, 0.41], paired=True, identical="why")["source"] == "samples"
    edge = D.samples(loss, list(loss), paired=True, identical="why", invalid="an arm at its grid's edge")
    assert outcome(rule, edge)["outcome"] == "inconclusive"


def test_proportion_is_plus_four_and_binomial_outcome_is_the_exact_test():
    m = D.proportion(8, 8)
    assert m["value"] == pytest.approx(10 / 12) and m["se"] == pytest.approx(math.sqrt(10 / 12 * 2 / 12 / 12))
    assert m["df"] == 7 and m["n"] == 8
    assert D.binomial_p(8, 8)[0] == pytest.approx(1 / 256) and D.binomial_p(0, 8)[1] == pytest.approx(1 / 256)
    assert [D.binomial_outcome(k, 8) for k in (8, 4, 0)] == ["passed", "inconclusive", "refuted"]
    with pytest.raises(D.DecisionError):
        D.proportion(3, 1)


def test_proportion_detail_says_where_the_exact_test_decides_otherwise():
    rule = D.band(0.5, None, reason="on most seeds")
    assert D.proportion_detail(rule, 8, 8) == "exact binomial p (more than half) 0.003906, (fewer than half) 1"
    assert D.proportion_detail(rule, 17, 25).endswith(
        f"; at alpha = {D.ALPHA} alone the exact test would say inconclusive, the plus-four estimate passed")


# ---------------------------------------------------------------------------------------------- family
def test_holm_levels_and_step_down():
    levels, rejected, adjusted = D.holm_levels([0.01, 0.04, 0.03, 0.2])
    assert levels == pytest.approx([0.05 / 4, 0.05 / 2, 0.05 / 3, 0.05 / 1])
    assert rejected == [True, False, False, False]            # 0.03 > 0.05/3 stops the step-down
    assert adjusted == pytest.approx([0.04, 0.09, 0.09, 0.2])


def _claim(rng, truth, m=5, n=3, rule=None):
    """m counted paired superiority criteria whose true δ is ``truth`` (unit spread), judged as one claim."""
    rule = rule or D.superiority(0.5, reason=R, paired=True)
    crits = [{"name": f"c{i}", "rule": rule.as_dict(), "counts": True, "recorded": True,
              "measurements": [D.samples(rng.normal(truth, 1, n), rng.normal(0, 1e-9, n), paired=True)]}
             for i in range(m)]
    return V.judge_record(crits, firmness=False)


def test_family_wise_false_refutation_rate_is_at_most_alpha():
    """Issue 26: 5 counted superiority criteria, no true effect (δ = 0, the edge of the refutation region): P(the
    claim is refuted) <= 0.05 within Monte Carlo error (2 s.e. at 1500 claims: 0.011). Holm over the criteria's
    refutations; without it, 1 - 0.95^5 = 0.23."""
    rng = np.random.default_rng(16)
    n = 1500
    refuted = sum(_claim(rng, 0.0)["verdict"] == "refuted" for _ in range(n))
    assert refuted / n <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / n)


def test_family_wise_false_support_rate_is_at_most_alpha_with_no_correction():
    """Issue 26: criteria that sit exactly at their margins (δ = 0.5): support needs every one to pass at alpha
    (intersection-union), so P(supported) <= 0.05 without any correction; here each alone passes 5% of the time,
    so all five together almost never do."""
    rng = np.random.default_rng(17)
    n = 1500
    one = sum(_claim(rng, 0.5, m=1)["verdict"] == "supported" for _ in range(n)) / n
    five = sum(_claim(rng, 0.5, m=5)["verdict"] == "supported" for _ in range(n)) / n
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / n)
    assert one <= bound and five <= bound
    assert one > 0.02                         # uncorrected: a criterion at its margin passes at about alpha


def test_support_is_not_holm_adjusted():
    """Issue 26 item 5: three criteria that each pass at alpha support the claim (Holm would have needed 0.05/3)."""
    n, sd = 3, 0.1
    q = sps.t.isf(D.ALPHA, n - 1) * sd / math.sqrt(n)
    crit = {"rule": D.superiority(0.2, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(0.2 + 1.05 * q, sd, n))]}
    assert V.judge_record([dict(crit, name=f"c{i}") for i in range(3)], firmness=False)["verdict"] == "supported"


# --------------------------------------------------------------------------------- the three regions
@pytest.mark.parametrize("n", [3, 25])
def test_superiority_smaller_than_the_margin_is_inconclusive_not_refuted(n):
    """Issue 26 item 3: a positive effect smaller than the margin (interval inside (0, margin)) is 'not shown'.
    Only an interval at or below 0 refutes a superiority."""
    rule = D.superiority(0.5, reason=R)
    small = outcome(rule, D.samples(around(0.25, 0.01, n)))
    assert small["outcome"] == "inconclusive" and small["short_of_margin"]
    assert "smaller than the margin" in small["decision_note"]
    assert outcome(rule, D.samples(around(-0.25, 0.01, n)))["outcome"] == "refuted"
    assert outcome(rule, D.samples(around(0.75, 0.01, n)))["outcome"] == "passed"
    wide = outcome(rule, D.samples(around(0.25, 1.0, n)))
    assert wide["outcome"] == "inconclusive" and not wide["short_of_margin"]


def test_non_inferiority_equivalence_and_band_regions():
    ni = D.non_inferiority(0.1, reason=R)
    assert outcome(ni, D.samples(around(-0.05, 0.001, 5)))["outcome"] == "passed"
    assert outcome(ni, D.samples(around(-0.2, 0.001, 5)))["outcome"] == "refuted"      # worse by more than 0.1
    eq = D.equivalence(0.1, reason=R)
    assert outcome(eq, D.samples(around(0.0, 0.001, 5)))["outcome"] == "passed"
    assert outcome(eq, D.samples(around(0.3, 0.001, 5)))["outcome"] == "refuted"
    assert outcome(eq, D.samples(around(0.1, 0.001, 5)))["outcome"] == "inconclusive"
    band = D.band(0.9, 1.1, reason=R)
    assert outcome(band, D.samples(around(2.0, 0.001, 5)))["outcome"] == "refuted"


def test_a_one_sided_band_with_a_null_refutes_only_beyond_it():
    """band(None, -0.1, null=0): 'falls by more than 0.1'; a slope of -0.05 falls, but by less than the margin."""
    rule = D.band(None, -0.1, reason=R, null=0.0)
    assert rule.refute_above == 0.0 and rule.has_gap
    assert outcome(rule, D.samples(around(-0.5, 0.01, 5)))["outcome"] == "passed"
    short = outcome(rule, D.samples(around(-0.05, 0.001, 5)))
    assert short["outcome"] == "inconclusive" and short["short_of_margin"]
    assert outcome(rule, D.samples(around(0.05, 0.001, 5)))["outcome"] == "refuted"
    assert D.band(None, -0.1, reason=R).refute_above == -0.1        # without a null: the complement
    with pytest.raises(D.DecisionError):
        D.band(0.0, 1.0, reason=R, null=0.5)
    with pytest.raises(D.DecisionError):
        D.band(None, 0.1, reason=R, null=0.0)


def test_a_rule_from_an_older_record_keeps_the_complement():
    old = {"kind": "superiority", "lo": 0.1, "hi": None, "margin": 0.1, "reason": R, "paired": False}
    assert D.rule_from_dict(old).refute_below == 0.1
    assert D.rule_from_dict(D.superiority(0.1, reason=R).as_dict()).refute_below == 0.0


# ---------------------------------------------------------------------------------------- replications
def test_replications_refute_on_any_part_and_name_the_scope():
    """Issue 26: one rule for parts. A refuted part refutes the criterion (and the claim), a part that passes
    beside it is named in the verdict's scope; a part that is only inconclusive keeps the criterion from passing."""
    rule = D.superiority(0.0, reason=R)
    yes = D.samples(around(1.0, 0.1, 5), label="delayed copy")
    no = D.samples(around(-1.0, 0.1, 5), label="key-value lookup")
    open_ = D.samples(around(0.1, 1.0, 5), label="key-value lookup")

    def judged(*ms):
        rec = {"name": "c", "rule": rule.as_dict(), "counts": True, "recorded": True, "measurements": list(ms)}
        return V.judge_record([rec], firmness=False)
    r = judged(yes, no)
    assert r["verdict"] == "refuted" and r["criteria"][0]["outcome"] == "refuted"
    assert r["criteria"][0]["deciding_part"] == "key-value lookup"
    assert r["scope"] == "c: refuted on key-value lookup; passed on delayed copy"
    assert [p["outcome"] for p in r["criteria"][0]["parts"]] == ["passed", "refuted"]
    assert judged(yes, open_)["verdict"] == "inconclusive"
    assert judged(yes, yes)["verdict"] == "supported" and judged(yes, yes)["scope"] == ""


def test_judgement_is_deterministic():
    rec = [{"rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(0.3, 0.3, 3), around(0.0, 0.3, 3))]}]
    assert V.judge_record(rec) == V.judge_record(rec)


def test_an_invalid_comparison_is_inconclusive_with_its_reason():
    """Issue 17: an arm whose tuned learning rate sits at its grid's edge cannot decide a comparison."""
    m = D.samples(around(1.0, 0.1, 5), around(0.0, 0.1, 5), invalid="additive's lr is the grid's highest")
    res = outcome(D.superiority(0.0, reason=R), m)
    assert res["outcome"] == "inconclusive" and "grid's highest" in res["decision_note"]


def test_an_unmeasured_criterion_is_inconclusive_and_says_why(tmp_path):
    from harness.record.evidence import Evidence

    ev = Evidence(tmp_path)
    ev.claim("C9", title="t", statement="s", strength="strong")
    a = ev.criterion("a", rule=D.exact(), prediction="p", metric="m")
    b = ev.criterion("b", rule=D.band(0.0, None, reason=R), prediction="p", metric="m")
    a.check(True)
    b.unmeasured("only 1 seed ran")
    judged = V.judge_record(ev.to_record()["criteria"])
    assert judged["verdict"] == "inconclusive" and judged["criteria"][1]["outcome"] == "inconclusive"
    assert "only 1 seed ran" in judged["criteria"][1]["decision_note"]


def test_an_unmeasured_exact_check_is_inconclusive_not_refuted(tmp_path):
    """A deterministic check that could not be made (a kernel rejected every mask; a model that declares no causal
    attention) says nothing against the claim: inconclusive, with the reason, never refuted."""
    from harness.record.evidence import Evidence

    ev = Evidence(tmp_path)
    ev.claim("C9", title="t", statement="s", strength="strong")
    ev.criterion("a", rule=D.exact(), prediction="p", metric="m").unmeasured("the model is bidirectional")
    judged = V.judge_record(ev.to_record()["criteria"])
    assert judged["criteria"][0]["outcome"] == "inconclusive" and judged["verdict"] == "inconclusive"
    assert "bidirectional" in judged["criteria"][0]["decision_note"]


# ------------------------------------------------------------------------------------------ a live foil
LN2 = math.log(2)


def test_a_foil_at_chance_on_every_seed_makes_the_comparison_inconclusive_with_the_reason():
    """Issue 38: beating a foil that learnt nothing shows only that the claimed arm learnt something. A foil at
    chance on every seed, and at every rate tried, makes the comparison invalid: inconclusive, no firmness."""
    foil = np.array([0.6931, 0.6940, 0.6936, 0.7050])              # held-out loss; 0.705 is worse than chance
    claimed = np.array([0.02, 0.03, 0.025, 0.01])
    why = D.dead_foil(foil, chance=LN2, tol=0.01, better="lower", tried=[0.6932, 0.6929, 0.71], arm="the LSTM")
    assert why.startswith("the LSTM is at chance") and "every seed (4" in why and "every rate tried (3" in why
    rule = D.superiority(0.1, reason=R, paired=True)
    m = D.samples(foil, claimed, paired=True, foil_dead=why)
    assert m["foil_dead"] == why and m["invalid"] == f"{D.DEAD_FOIL}: {why}"
    res = D.decide_alone(rule, [m], firmness=True)
    assert res["outcome"] == "inconclusive" and res["firmness"] is None
    assert why in res["decision_note"] and "not simulated" in res["firmness_reason"]
    # in a claim: counted, it leaves the verdict inconclusive with no firmness, whatever its δ (0.67 nats here)
    j = V.judge_record([{"name": "helps", "rule": rule.as_dict(), "counts": True, "recorded": True,
                         "measurements": [m]}])
    assert j["verdict"] == "inconclusive" and j["firmness"] is None and j["criteria"][0]["firmness"] is None
    # an accuracy foil: chance 0.5, better higher (below chance is no better than chance)
    assert D.dead_foil([0.50, 0.49, 0.47], chance=0.5, tol=0.02, better="higher")
    # a foil at the floor on every seed: no room left to separate the arms
    assert "at the floor" in D.dead_foil([0.0004, 0.001, 0.0], chance=LN2, floor=0.0, tol=0.01)
    # it joins an invalid reason already given (an arm at its grid's edge): both are said
    both = D.samples(foil, claimed, paired=True, invalid="an arm at its grid's edge", foil_dead=why)
    assert both["invalid"].startswith("an arm at its grid's edge; dead foil: ")


def test_a_foil_above_chance_on_one_seed_or_at_one_rate_keeps_the_ordinary_decision():
    rule = D.superiority(0.1, reason=R, paired=True)
    foil = np.array([0.6931, 0.6940, 0.55, 0.6936])                 # one seed learnt something
    claimed = np.array([0.02, 0.03, 0.025, 0.01])
    assert D.dead_foil(foil, chance=LN2, tol=0.01, better="lower") == ""
    live = D.samples(foil, claimed, paired=True, foil_dead=D.dead_foil(foil, chance=LN2, tol=0.01, better="lower"))
    assert "invalid" not in live and "foil_dead" not in live
    assert D.decide_alone(rule, [live])["outcome"] == D.decide_alone(rule, [D.samples(foil, claimed, paired=True)]
                                                                    )["outcome"] == "passed"
    # at chance on every seed, but it learnt at one of the rates the module tried: mistuned, not dead
    at_chance = np.array([0.6931, 0.6940, 0.6936])
    assert D.dead_foil(at_chance, chance=LN2, tol=0.01, better="lower", tried=[0.6935, 0.40, 0.6931]) == ""
    # two-sided by default: a loss well below chance is alive, and so is one above it unless better="lower"
    assert D.dead_foil([0.80, 0.82], chance=LN2, tol=0.01) == ""
    assert D.dead_foil([0.80, 0.82], chance=LN2, tol=0.01, better="lower")
    # a diverged rate (inf) learnt nothing
    assert D.dead_foil(at_chance, chance=LN2, tol=0.01, tried=[math.inf, 0.6931])


def test_dead_foil_needs_a_reference_and_a_tolerance():
    with pytest.raises(D.DecisionError, match="chance or its floor"):
        D.dead_foil([0.7, 0.7], tol=0.01)
    with pytest.raises(D.DecisionError, match="tol"):
        D.dead_foil([0.7, 0.7], chance=LN2, tol=0.0)
    with pytest.raises(D.DecisionError, match="better"):
        D.dead_foil([0.7, 0.7], chance=LN2, tol=0.01, better="up")
