"""harness/measure/stats.py against scipy and hand-worked values, and checks that each test can come out the other way."""
import math

import numpy as np
import pytest
from scipy import stats as sps

from harness.measure import stats


def test_t_ci_hand_worked():
    ci = stats.t_ci([1, 2, 3, 4, 5])
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)   # t_{0.975, 4} * sd / sqrt(n)
    assert ci.mean == 3.0 and ci.n == 5
    assert ci.lo == pytest.approx(3 - half) and ci.hi == pytest.approx(3 + half)
    assert ci.contains(3.0) and not ci.contains(5.0)
    one = stats.t_ci([0.7])
    assert one.mean == 0.7 and math.isnan(one.lo)


def test_bootstrap_matches_scipy_and_is_seeded():
    x = np.array([0.91, 0.95, 0.88, 0.97, 0.93, 0.90])
    ours = stats.mean_ci(x, seed=3)
    ref = sps.bootstrap((x,), np.mean, method="BCa", rng=np.random.default_rng(3))
    assert ours.mean == pytest.approx(x.mean())
    assert (ours.lo, ours.hi) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))
    assert stats.mean_ci(x, seed=3) == ours
    assert ours.lo < x.mean() < ours.hi


def test_bootstrap_edge_cases():
    const = stats.mean_ci([1.0, 1.0, 1.0])
    assert (const.lo, const.hi) == (1.0, 1.0)
    tiny = stats.mean_ci([0.2, 0.4, 0.9])          # n = 3: an interval still comes back, finite
    assert math.isfinite(tiny.lo) and math.isfinite(tiny.hi) and tiny.lo <= tiny.mean <= tiny.hi
    assert stats.mean_ci([1, 2, 3], method="t").method == "t"
    with pytest.raises(ValueError, match="method"):
        stats.mean_ci([1, 2], method="jackknife")
    with pytest.raises(ValueError, match="NaN"):
        stats.mean_ci([1.0, float("nan")])


def test_welch_against_formula_and_scipy():
    a, b = [0.9, 0.95, 1.0, 0.97], [0.7, 0.8, 0.75]
    r = stats.welch_t(a, b)
    va, vb = np.var(a, ddof=1) / 4, np.var(b, ddof=1) / 3
    t = (np.mean(a) - np.mean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 2)
    assert r.statistic == pytest.approx(t) and r.df == pytest.approx(df)
    assert r.p_value == pytest.approx(2 * sps.t.sf(abs(t), df))
    greater = stats.welch_t(a, b, alternative="greater")
    assert greater.p_value == pytest.approx(r.p_value / 2)
    assert stats.welch_t(a, b, alternative="less").p_value == pytest.approx(1 - r.p_value / 2)
    assert greater.significant() and not stats.welch_t(a, b, alternative="less").significant()
    assert r.ci[0] < r.diff < r.ci[1] and greater.ci[1] == math.inf


def test_welch_can_fail_on_equal_groups():
    rng = np.random.default_rng(0)
    x, y = rng.normal(0, 1, 5), rng.normal(0, 1, 5)
    assert not stats.welch_t(x, y, alternative="greater").significant()


def test_welch_constant_samples():
    """Issue 16: a degenerate sample (no spread, e.g. accuracy 1.000 on every seed) never gives p = 0."""
    r = stats.welch_t([1.0, 1.0, 1.0], [0.5, 0.5, 0.5], alternative="greater")
    assert math.isnan(r.p_value) and not r.significant()
    assert math.isnan(stats.one_sample_t([1.0, 1.0, 1.0], 0.5, alternative="greater").p_value)
    assert math.isnan(stats.welch_t([1.0, 1.0], [1.0, 1.0]).p_value)
    assert not stats.welch_t([1.0, 1.0], [1.0, 1.0]).significant()


def test_bad_alternative_names_the_field():
    with pytest.raises(ValueError, match="alternative"):
        stats.welch_t([1, 2], [3, 4], alternative="bigger")
    with pytest.raises(ValueError, match="alternative"):
        stats.mann_whitney([1, 2], [3, 4], alternative="up")


def test_mann_whitney_exact_small_sample():
    r = stats.mann_whitney([1, 2, 3], [4, 5, 6], alternative="less")
    assert r.statistic == 0 and r.p_value == pytest.approx(1 / 20)   # 1 of C(6,3)=20 orderings
    assert r.effect_size == -1.0
    assert stats.mann_whitney([4, 5, 6], [1, 2, 3], alternative="greater").effect_size == 1.0
    assert stats.rank_biserial([1, 2], [1, 2]) == 0.0


def test_one_sample_t():
    r = stats.one_sample_t([0.6, 0.7, 0.65, 0.72], popmean=0.5, alternative="greater")
    ref = sps.ttest_1samp([0.6, 0.7, 0.65, 0.72], 0.5, alternative="greater")
    assert r.p_value == pytest.approx(ref.pvalue) and r.diff == pytest.approx(0.1675)
    assert not stats.one_sample_t([0.49, 0.52, 0.5], popmean=0.5, alternative="greater").significant()


def test_effect_sizes_hand_worked():
    assert stats.cohens_d([2, 4, 6], [1, 3, 5]) == pytest.approx(0.5)     # diff 1 / pooled sd 2
    assert stats.hedges_g([2, 4, 6], [1, 3, 5]) == pytest.approx(0.4)     # 0.5 * (1 - 3/15)
    assert stats.cohens_d([1, 1], [0, 0]) == math.inf


def test_loglog_slope_exact_and_noisy():
    x = np.array([8, 16, 32, 64, 128, 256])
    exact = stats.loglog_slope(x, 3.0 * x ** 2.0)
    assert exact.slope == pytest.approx(2.0) and exact.lo == pytest.approx(2.0) and exact.hi == pytest.approx(2.0)
    rng = np.random.default_rng(1)
    y = x * np.exp(rng.normal(0, 0.05, x.size))
    noisy = stats.loglog_slope(x, y)
    ref = sps.linregress(np.log(x), np.log(y))
    half = sps.t.ppf(0.975, x.size - 2) * ref.stderr
    assert noisy.slope == pytest.approx(ref.slope)
    assert (noisy.lo, noisy.hi) == pytest.approx((ref.slope - half, ref.slope + half))
    assert noisy.contains(1.0) and not noisy.contains(0.0) and noisy.within(0.8, 1.2)
    flat = stats.loglog_slope(x, np.full(x.size, 2.0) * np.exp(rng.normal(0, 0.05, x.size)))
    assert flat.contains(0.0) and not flat.contains(1.0)


def test_semilog_and_slope_errors():
    d = np.arange(1, 9)
    fit = stats.semilog_slope(d, 0.5 ** d)
    assert fit.slope == pytest.approx(math.log(0.5)) and fit.transform == "semilog"
    with pytest.raises(ValueError, match="positive"):
        stats.loglog_slope([1, 2, 3], [1, 0, 2])
    with pytest.raises(ValueError, match="at least 3"):
        stats.linear_slope([1, 2], [1, 2])
    with pytest.raises(ValueError, match="constant"):
        stats.linear_slope([1, 1, 1], [1, 2, 3])


def test_benjamini_hochberg_hand_worked():
    r = stats.benjamini_hochberg([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    # sorted 0.005, 0.01, 0.03, 0.04 -> *4/rank: 0.02, 0.02, 0.04, 0.04 (monotone)
    assert r.adjusted == pytest.approx((0.02, 0.04, 0.04, 0.02))
    assert r.rejected == (True, True, True, True)
    r2 = stats.benjamini_hochberg([0.01, 0.04, 0.03, 0.005], alpha=0.03)
    assert r2.rejected == (True, False, False, True)
    with pytest.raises(ValueError, match="p_values"):
        stats.benjamini_hochberg([0.5, 1.5])


def test_correlation():
    x = np.arange(10.0)
    rng = np.random.default_rng(2)
    y = 2 * x + rng.normal(0, 1, 10)
    p = stats.correlation(x, y)
    assert p.r == pytest.approx(sps.pearsonr(x, y).statistic) and p.lo < p.r < p.hi and p.p_value < 0.01
    s = stats.correlation(x, y, method="spearman")
    assert s.r == pytest.approx(sps.spearmanr(x, y).statistic)
    none = stats.correlation(x, rng.normal(0, 1, 10))
    assert none.lo < 0 < none.hi or none.p_value > 0.05


def test_linear_slope_of_constant_y_is_an_exact_zero():
    """A constant y (e.g. C3's saturated fraction, 0 at every d_k for scaled attention) is an exact fit:
    slope 0 with a zero-width CI that contains 0, not scipy's NaN stderr."""
    fit = stats.linear_slope([1, 2, 3, 4], [0.0, 0.0, 0.0, 0.0])
    assert (fit.slope, fit.lo, fit.hi, fit.stderr, fit.p_value) == (0.0, 0.0, 0.0, 0.0, 1.0)
    assert fit.contains(0.0) and fit.intercept == 0.0
    assert stats.loglog_slope([1, 2, 4], [3.0, 3.0, 3.0]).ci == (0.0, 0.0)


def test_replicate_slope_uses_the_replicate_as_the_unit():
    rng = np.random.default_rng(0)
    x = np.tile([8.0, 16, 32, 64, 128], 4)
    reps = np.repeat([0, 1, 2, 3], 5)
    offsets = rng.normal(0, 0.05, 4)               # per-replicate slope jitter around -0.5
    y = np.exp(1.0 + (-0.5 + offsets[reps]) * np.log(x))
    fit = stats.replicate_slope(x, y, reps, "loglog")
    per = [stats.loglog_slope(x[reps == r], y[reps == r]).slope for r in range(4)]
    ci = stats.t_ci(per)
    assert fit.n == 4 and fit.slope == pytest.approx(np.mean(per)) and (fit.lo, fit.hi) == pytest.approx(ci.ci)
    assert fit.p_value == pytest.approx(sps.ttest_1samp(per, 0).pvalue)
    assert fit.transform.startswith("loglog")
    # a constant y in every replicate: exact zero slope
    flat = stats.replicate_slope(x, np.ones_like(x), reps, "linear")
    assert (flat.slope, flat.lo, flat.hi, flat.p_value) == (0.0, 0.0, 0.0, 1.0)
    one = stats.replicate_slope(x[:5], y[:5], reps[:5])
    assert one.n == 1 and math.isnan(one.lo)
    with pytest.raises(ValueError, match="transform"):
        stats.replicate_slope(x, y, reps, "log")
    with pytest.raises(ValueError, match="differ in length"):
        stats.replicate_slope(x, y, reps[:-1])
