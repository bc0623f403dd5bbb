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


def test_one_sample_t():
    r = stats.one_sample_t([0.6, 0.7, 0.65, 0.72], popmean=0.5, alternative="greater")
    ref = sps.ttest_1samp([0.6, 0.7, 0.65, 0.72], 0.5, alternative="greater")
    assert r.p_value == pytest.approx(ref.pvalue) and r.diff == pytest.approx(0.1675)
    assert not stats.one_sample_t([0.49, 0.52, 0.5], popmean=0.5, alternative="greater").significant()


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


def test_slope_errors_name_the_problem():
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
