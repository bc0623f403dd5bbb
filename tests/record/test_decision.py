"""The decision protocol (harness/record/decision.py, issue 16) on synthetic samples whose truth is known.

Each kind is checked supported / refuted / inconclusive, at and near its margin, at n = 3 and n = 25, paired and
unpaired, and on degenerate samples; then the family (Holm) and firmness.
"""
import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.record import decision as D
from harness.record import objections as O
from harness.record import verdict as V

R = "test"


def around(mean, sd, n, seed=0):
    """n values with exactly this mean and sample sd (so each test's interval is known in closed form)."""
    z = np.random.default_rng(seed).standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=1)
    return mean + sd * z


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


# -------------------------------------------------------------------------------------------- firmness
def test_a_large_effect_is_firm_and_needs_no_more_seeds():
    res = D.decide_alone(D.superiority(0.0, reason=R), [D.samples(around(1.0, 0.1, 3), around(0.0, 0.1, 3))],
                         firmness=True)
    assert res["outcome"] == "passed" and res["firmness"] > 0.9 and res["seeds_for_firm"] is None


def test_predictive_firmness_is_lower_than_plug_in_at_three_seeds():
    """Issue 26 item 4: the plug-in simulation takes a 2-df SD as the truth; the predictive one draws it from its
    posterior first, so the same data are less firm."""
    rec = [{"rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(1.0, 0.4, 3))]}]
    predictive = D.judge(rec, [True]).criteria[0]["firmness"]
    plug_in = D.judge(rec, [True], predictive=False).criteria[0]["firmness"]
    assert predictive < plug_in - 0.05


def test_an_effect_at_the_edge_is_a_coin_flip():
    """Observed lower bound exactly at the margin: a fresh set of seeds passes about half the time."""
    n, sd = 25, 1.0
    q = sps.t.isf(D.ALPHA, n - 1) * sd / math.sqrt(n)
    res = D.decide_alone(D.superiority(0.0, reason=R), [D.samples(around(q, sd, n))], firmness=True)
    assert 0.4 <= res["firmness"] <= 0.6
    assert res["seeds_for_firm"] is not None and res["seeds_for_firm"] > n


def test_fragile_inconclusive_points_to_the_seeds_that_would_decide_it():
    res = D.decide_alone(D.superiority(0.0, reason=R), [D.samples(around(0.5, 1.0, 3))], firmness=True)
    assert res["outcome"] == "inconclusive"
    assert res["seeds_for_firm"] is not None and 10 <= res["seeds_for_firm"] <= 100   # d = 0.5: n ~ 36 for 90%


def test_claim_firmness_combines_its_criteria():
    firm = {"rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(1.0, 0.05, 4), around(0.0, 0.05, 4))]}
    coin = {"rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(0.3, 0.3, 3), around(0.0, 0.3, 3))]}
    one = V.judge_record([firm])
    both = V.judge_record([firm, coin])
    assert one["verdict"] == "supported" and one["firmness"] > 0.9
    assert both["firmness"] < 0.9 and V.fragile(0.5) and not V.fragile(0.85)
    assert "fragile at 3 seeds: about 12 needed" == V.firmness_text({"firmness": 0.5, "seeds_for_firm": 12}, 3)[:35]


def test_firmness_is_null_for_degenerate_invalid_unmeasured_and_exact_criteria():
    """Issue 26: nothing to simulate, so no firmness (with the reason), and an inconclusive verdict that rests on
    such a criterion has none either; a refutation beside it keeps its own."""
    good = {"name": "good", "rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(-1.0, 0.05, 4))]}
    flat = {"name": "flat", "rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples([1.0, 1.0, 1.0], [0.5, 0.6, 0.7])]}
    edge = {"name": "edge", "rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(around(1.0, 0.1, 3), invalid="an arm at the grid's edge")]}
    exact = {"name": "exact", "rule": D.exact().as_dict(), "counts": True, "recorded": True, "exact_holds": True}
    for c in (flat, edge):
        j = V.judge_record([c])
        assert j["criteria"][0]["firmness"] is None and "not simulated" in j["criteria"][0]["firmness_reason"]
        assert j["verdict"] == "inconclusive" and j["firmness"] is None and j["firmness_reason"]
    j = V.judge_record([exact])
    assert j["firmness"] is None and j["firmness_reason"].startswith("deterministic")
    assert O.objections({**j, "criteria": j["criteria"]})[-1]["status"] == "not applicable"
    j = V.judge_record([good, flat])
    assert j["verdict"] == "refuted" and j["firmness"] is not None and j["criteria"][1]["firmness"] is None


def test_predictive_firmness_is_calibrated_on_synthetic_claims():
    """Issue 26: on synthetic criteria whose truths are drawn widely (mean uniform, spread log-uniform: the flat
    priors the predictive simulation assumes), within bins of predicted firmness the share of fresh seed sets that
    repeat the outcome matches the mean prediction within Monte Carlo error; the plug-in estimate overstates it."""
    rng = np.random.default_rng(26)
    rule = D.superiority(0.5, reason=R).as_dict()
    rows = []
    for _ in range(1500):
        sd, mu = math.exp(rng.uniform(math.log(0.05), math.log(20))), rng.uniform(-8, 10)
        x = rng.normal(mu, sd, 3)
        rec = [{"rule": rule, "counts": True, "recorded": True, "measurements": [D.samples(x)]}]
        j = D.judge(rec, [True], n_sim=400, search_seeds=False)
        again = D.judge([{**rec[0], "measurements": [D.samples(rng.normal(mu, sd, 3))]}], [True],
                        firmness=False).criteria[0]["outcome"]
        plug = D.judge(rec, [True], n_sim=400, search_seeds=False, predictive=False).criteria[0]["firmness"]
        rows.append((j.criteria[0]["firmness"], plug, j.criteria[0]["outcome"] == again))
    a = np.array(rows, float)
    for lo, hi in ((0.5, 0.7), (0.7, 0.9), (0.9, 1.01)):
        m = (a[:, 0] >= lo) & (a[:, 0] < hi)
        observed, predicted = a[m, 2].mean(), a[m, 0].mean()
        assert m.sum() >= 100 and abs(observed - predicted) <= 3 * math.sqrt(observed * (1 - observed) / m.sum()) + 0.02
    top = a[:, 1] >= 0.9
    assert a[top, 1].mean() - a[top, 2].mean() > 0.02       # plug-in: more confident than the repeats bear out


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


# --------------------------------------------------------------------------- criteria that share runs (issue 38)
def _superior(name, *measurements):
    return {"name": name, "rule": D.superiority(0.5, reason=R, paired=True).as_dict(), "counts": True,
            "recorded": True, "measurements": list(measurements)}


def _firmness(records, shared=True):
    j = D.judge(records, [True] * len(records), shared=shared)
    return j.firmness, [c["firmness"] for c in j.criteria]


def test_criteria_on_one_cell_share_its_draws_the_claim_is_as_firm_as_its_weakest():
    """Issue 38, finding 10: three criteria that subtract three foils from the same runs of one arm (C3's (c)
    criteria) pass or fail together, so the claim repeats about as often as its weakest criterion (the minimum),
    not as often as all three would if they were independent (the product)."""
    a = around(1.3, 0.8, 5, seed=1)                  # the shared arm: nearly all of each criterion's spread
    records = [_superior(f"c{k}", D.samples(a, around(0.0, 0.02, 5, seed=k), paired=True)) for k in (2, 3, 4)]
    claim, each = _firmness(records)
    assert 0.5 < min(each) < 0.56 and abs(claim - min(each)) < 0.03            # 0.511 against min 0.516
    before, each_before = _firmness(records, shared=False)
    assert abs(before - np.prod(each_before)) < 0.03 and before < 0.2           # 0.153 against product 0.145
    assert max(abs(x - y) for x, y in zip(each, each_before)) < 0.02           # each criterion as before


def test_criteria_on_uncorrelated_seeds_stay_independent_the_claim_is_the_product():
    """Per-seed values with no correlation (here exactly orthogonal patterns), and samples over another number
    of seeds, are drawn independently: the claim's firmness is the product of its criteria's, as before."""
    pats = [np.array(p, float) for p in ([1, -1, 0, 0, 0], [1, 1, -2, 0, 0], [1, 1, 1, -3, 0])]
    records = [_superior(f"c{k}", D.samples(1.3 + 0.8 * p / p.std(ddof=1))) for k, p in enumerate(pats)]
    claim, each = _firmness(records)
    assert (claim, each) == _firmness(records, shared=False)
    assert abs(claim - np.prod(each)) < 0.03                                    # 0.151 against 0.145
    other_seeds = [_superior("c0", D.samples(around(1.3, 0.8, 5, seed=1))),
                   _superior("c1", D.samples(around(1.3, 0.8, 6, seed=1)))]
    assert _firmness(other_seeds) == _firmness(other_seeds, shared=False)


def test_criteria_that_share_an_arm_with_opposite_signs_are_drawn_against_each_other():
    """a − b and b − c share b with opposite signs: a fresh set of seeds that favours one disfavours the other,
    so the claim is less firm than the product (0.23 against 0.27; a common draw, 'perfect correlation', would
    make it the minimum, 0.52). Both still pass together where the drawn spread is small: the spreads are shared."""
    b = around(0.0, 0.8, 5, seed=5)
    records = [_superior("ab", D.samples(around(1.3, 0.02, 5, seed=6), b, paired=True)),
               _superior("bc", D.samples(b, around(-1.3, 0.02, 5, seed=7), paired=True))]
    claim, each = _firmness(records)
    assert claim < np.prod(each) - 0.03 and claim < _firmness(records, shared=False)[0] - 0.03


def _claim_calibration(shared, n_claims=1500, n=3, one_arm=True):
    """(predicted claim firmness, whether a fresh seed set repeated the verdict) for synthetic claims of three
    criteria that subtract three foils from one shared arm (``one_arm=False``: each from its own arm, independent
    runs on the same seeds), truths drawn widely."""
    rng = np.random.default_rng(38)
    rows = []
    for _ in range(n_claims):
        sa = math.exp(rng.uniform(math.log(0.05), math.log(5)))
        sb = sa * math.exp(rng.uniform(math.log(0.05), 0.0))
        mu = rng.uniform(-1, 4) + rng.normal(0, 0.3, 3)

        def draw():
            a = rng.normal(0, sa, n)
            return [_superior(f"c{k}", D.samples((a if one_arm else rng.normal(0, sa, n)) + mu[k],
                                                 rng.normal(0, sb, n), paired=True)) for k in range(3)]
        j = D.judge(draw(), [True] * 3, n_sim=400, search_seeds=False, shared=shared)
        again = D.judge(draw(), [True] * 3, firmness=False).verdict_code
        rows.append((j.firmness, j.verdict_code == again))
    return np.array(rows, float)


def test_claim_firmness_is_calibrated_on_synthetic_claims_whose_criteria_share_runs():
    """Within bins of predicted claim firmness, the share of fresh seed sets that repeat the verdict matches the
    mean prediction within Monte Carlo error when the criteria share their draws (0.61 predicted against 0.62
    repeated, 0.82 against 0.85, 0.96 against 0.97); drawn independently, the prediction misses by far more (0.35
    against 0.59 below 0.5, 0.61 against 0.73, 0.96 against 0.92 above 0.9)."""
    a = _claim_calibration(shared=True)
    for lo, hi in ((0.5, 0.7), (0.7, 0.9), (0.9, 1.01)):
        m = (a[:, 0] >= lo) & (a[:, 0] < hi)
        observed, predicted = a[m, 1].mean(), a[m, 0].mean()
        assert m.sum() >= 100 and abs(observed - predicted) <= 3 * math.sqrt(observed * (1 - observed) / m.sum()) + 0.02
    b = _claim_calibration(shared=False)
    top, low = b[:, 0] >= 0.9, b[:, 0] < 0.5
    assert b[top, 0].mean() - b[top, 1].mean() > 0.03 and b[low, 1].mean() - b[low, 0].mean() > 0.15


def test_independent_runs_on_the_same_seeds_lose_nothing_to_a_spurious_correlation():
    """Three seeds give a correlation far from 0 where the runs are independent; on such synthetic claims the shared
    draws predict the verdict's repeats as well as independent draws (Brier score, 1500 claims)."""
    brier = {shared: float(np.mean(np.diff(_claim_calibration(shared, one_arm=False), axis=1) ** 2))
             for shared in (True, False)}
    assert brier[True] <= brier[False] + 0.005, brier


# ------------------------------------------------------------------------- issue 47, mechanism 3: rate choice
def _rate(key, sign, choice, value, chosen=1, sd=0.05, df=5, n_tuning=1, value_sd=0.05):
    lrs = [1e-3, 2e-3, 4e-3][:len(choice)]
    return D.rate_choice(key, sign, lrs, choice, value, lrs[chosen], n_tuning, sd, df, value_sd)


def _firm(*rates, a=None, b=None):
    a = around(0.5, 0.1, 5) if a is None else a
    b = around(0.0, 0.1, 5, seed=1) if b is None else b
    rec = [{"rule": D.superiority(0.0, reason=R).as_dict(), "counts": True, "recorded": True,
            "measurements": [D.samples(a, b, paired=True, rates=list(rates) or None)]}]
    return D.judge(rec, [True]).criteria[0]["firmness"]


def test_a_clear_rate_choice_leaves_firmness_as_it_was_and_an_unclear_one_that_matters_lowers_it():
    """A fresh tuning run re-chooses each arm's rate: a choice no seed could move (the other rates far worse)
    changes nothing; a choice the tuning seed could move, to a rate at which the arm is no better than its foil,
    makes the outcome less firm; the same unclear choice where every rate gives the arm the same value does not."""
    base = _firm()
    assert base > 0.9
    clear = _rate("a", 1.0, [3.0, 1.0, 3.0], [0.9, 0.3, 0.9])
    assert _firm(clear) == base
    # arm a's value (entering delta with +1: a - b, superiority above 0) is 0.5 lower at the neighbouring rate,
    # which the tuning seed nearly chose: a fresh choice often lands there and loses
    close = _rate("a", 1.0, [1.01, 1.0, 3.0], [-0.2, 0.3, 0.9])
    assert _firm(close) < base - 0.2
    flat = _rate("a", 1.0, [1.01, 1.0, 3.0], [0.3, 0.3, 0.3], value_sd=0.0)
    assert _firm(flat) == pytest.approx(base, abs=1e-12)


def test_a_rate_choice_is_one_draw_for_every_measurement_that_reads_the_arm_and_its_own_stream():
    """The same arm (key) in two measurements is one simulated choice; a criterion without rates is simulated
    exactly as before (its own generator), whatever other criteria carry."""
    close = lambda sign: _rate("shared", sign, [1.01, 1.0, 3.0], [0.0, 0.3, 0.9])  # noqa: E731
    m1 = D.samples(around(0.3, 0.1, 5), around(0.0, 0.1, 5, seed=1), paired=True, rates=[close(1.0)])
    m2 = D.samples(around(0.3, 0.1, 5), around(0.0, 0.1, 5, seed=1), paired=True, rates=[close(1.0)])
    plain = D.samples(around(0.3, 0.1, 5, seed=2), around(0.0, 0.1, 5, seed=3), paired=True)
    rule = D.superiority(0.0, reason=R).as_dict()
    rec = lambda ms: [{"rule": rule, "counts": True, "recorded": True, "measurements": [m]} for m in ms]  # noqa: E731
    both = D.judge(rec([m1, m2]), [True, True], search_seeds=False)
    f1, f2 = both.criteria[0]["firmness"], both.criteria[1]["firmness"]
    assert f1 == f2 and both.firmness == pytest.approx(f1, abs=0.02)       # one choice: the claim as firm as each
    without = {k: v for k, v in m1.items() if k != "rates"}
    beside = D.judge(rec([m1, plain]), [True, True], search_seeds=False).criteria[1]["firmness"]
    assert beside == D.judge(rec([without, plain]), [True, True], search_seeds=False).criteria[1]["firmness"]
    assert "rates" not in plain and m1["rates"][0]["key"] == "shared"


def test_the_words_given_the_tuned_rates_go_where_every_simulated_counted_sample_carries_its_rates():
    rates = [_rate("a", 1.0, [3.0, 1.0, 3.0], [0.9, 0.3, 0.9])]
    crit = lambda r: {"counts": True, "firmness": 0.9, "measurements": [  # noqa: E731
        D.samples(around(0.3, 0.1, 5), around(0.0, 0.1, 5, seed=1), paired=True, rates=r)]}
    tuned = {"tuned_lr/X/a/8/kv": 1e-3}
    assert V.tuned({"metrics": tuned, "criteria": [crit(None)]})
    assert not V.tuned({"metrics": tuned, "criteria": [crit(rates)]})
    assert not V.tuned({"metrics": {}, "criteria": [crit(None)]})
