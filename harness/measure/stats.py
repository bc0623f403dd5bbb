"""Statistics on scipy that the claims use: t and variance intervals, a one-sample t test, linear and log-log
slopes (one fit, or one per replicate with a t interval across them), correlations, Benjamini-Hochberg.

Measurement only: these return numbers (dataclasses with the estimate, its interval and the p-value); deciding
what they mean is the claim's criterion (``harness.record.decision``). Only what a claim or the harness calls
lives here.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
from scipy import stats as sps

ALTERNATIVES = ("two-sided", "greater", "less")
ArrayLike = Sequence[float] | np.ndarray


def _array(values: ArrayLike, name: str, min_n: int = 1) -> np.ndarray:
    a = np.asarray(values, dtype=float).ravel()
    if a.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} value(s), got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf: {a.tolist()}")
    return a


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


class _Interval:
    """An estimate with [lo, hi]: shared accessors of MeanCI and SlopeFit."""
    lo: float
    hi: float

    @property
    def ci(self) -> tuple[float, float]:
        return (self.lo, self.hi)

    def contains(self, value: float) -> bool:
        return self.lo <= value <= self.hi

    def within(self, low: float, high: float) -> bool:
        """The whole CI lies in [low, high] (e.g. C4's slope CI within [0.95, 1.05])."""
        return low <= self.lo and self.hi <= high

    def as_dict(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------------------------- mean with CI
@dataclass(frozen=True)
class MeanCI(_Interval):
    """An estimate (the mean unless a statistic was given) with its confidence interval across ``n`` values."""
    mean: float
    lo: float
    hi: float
    n: int
    sd: float
    confidence: float
    method: str

    def __str__(self) -> str:
        return f"{self.mean:.4g} [{self.lo:.4g}, {self.hi:.4g}] (n={self.n})"


def t_ci(values: ArrayLike, confidence: float = 0.95) -> MeanCI:
    """Mean and Student-t interval (mean +/- t_{n-1} * sd / sqrt(n)). n = 1 gives a NaN interval."""
    _check_confidence(confidence)
    a = _array(values, "values")
    m = float(a.mean())
    if a.size < 2:
        return MeanCI(m, math.nan, math.nan, 1, math.nan, confidence, "t")
    sd = float(a.std(ddof=1))
    half = float(sps.t.ppf(0.5 + confidence / 2, a.size - 1)) * sd / math.sqrt(a.size)
    return MeanCI(m, m - half, m + half, int(a.size), sd, confidence, "t")


def variance_ci(values: ArrayLike, confidence: float = 0.95) -> MeanCI:
    """Sample variance (ddof=1) with its large-sample interval s^2 +/- z * sqrt((m4 - m2^2) / n), m_j the central
    moments: valid for any distribution with a finite fourth moment (unlike the chi-square interval, which assumes
    normality), for the thousands of draws a variance probe takes (C4: Var(q.k) of iid components). ``sd`` is
    the standard error of the variance."""
    _check_confidence(confidence)
    a = _array(values, "values", 2)
    dev = a - a.mean()
    m2, m4 = float(np.mean(dev ** 2)), float(np.mean(dev ** 4))
    s2 = float(a.var(ddof=1))
    se = math.sqrt(max(m4 - m2 * m2, 0.0) / a.size)
    half = float(sps.norm.ppf(0.5 + confidence / 2)) * se
    return MeanCI(s2, s2 - half, s2 + half, int(a.size), se, confidence, "variance, asymptotic (4th moment)")


# --------------------------------------------------------------------------------------- two samples
@dataclass(frozen=True)
class TestResult:
    """A hypothesis test. ``diff = mean_a - mean_b`` (for one sample: mean - popmean); ``ci`` is the interval for
    it where the test defines one (one-sided tests give a one-sided interval, an infinite bound);
    ``effect_size`` is named by ``effect_name`` (Cohen's d, or rank-biserial r for Mann-Whitney)."""
    test: str
    alternative: str
    statistic: float
    p_value: float
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    diff: float
    effect_size: float
    effect_name: str
    ci: tuple[float, float] | None = None
    df: float | None = None

    def significant(self, alpha: float = 0.05) -> bool:
        """p < alpha (False when p is NaN, e.g. two constant samples with equal means)."""
        return bool(self.p_value < alpha)

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return (f"{self.test} ({self.alternative}): diff {self.diff:.4g}, p={self.p_value:.3g}, "
                f"{self.effect_name}={self.effect_size:.3g}, n={self.n_a}/{self.n_b}")


def one_sample_t(values: ArrayLike, popmean: float = 0.0, alternative: str = "two-sided",
                 confidence: float = 0.95) -> TestResult:
    """One-sample t-test of mean(values) against ``popmean`` (e.g. accuracy above chance); effect: (m - mu) / sd."""
    _check_alternative(alternative)
    x = _array(values, "values", 2)
    sd = float(x.std(ddof=1))
    diff = float(x.mean() - popmean)
    d = (diff / sd) if sd > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    if sd == 0.0:  # no spread: p is NaN, never 0 (issue 16)
        p = math.nan
        return TestResult("one_sample_t", alternative, math.copysign(math.inf, diff) if diff else math.nan, p,
                          int(x.size), 0, float(x.mean()), float(popmean), diff, d, "cohens_d", (diff, diff),
                          float(x.size - 1))
    res = sps.ttest_1samp(x, popmean, alternative=alternative)
    ci = res.confidence_interval(confidence)
    return TestResult("one_sample_t", alternative, float(res.statistic), float(res.pvalue), int(x.size), 0,
                      float(x.mean()), float(popmean), diff, d, "cohens_d",
                      (float(ci.low) - popmean, float(ci.high) - popmean), float(res.df))


# ------------------------------------------------------------------------------------------- slopes
@dataclass(frozen=True)
class SlopeFit(_Interval):
    """Least-squares slope with a two-sided t interval (n - 2 df); ``p_value`` tests slope = 0.
    ``transform`` says what was fitted: "linear" (y ~ x) or "loglog" (ln y ~ ln x)."""
    slope: float
    lo: float
    hi: float
    intercept: float
    stderr: float
    r_value: float
    p_value: float
    n: int
    confidence: float
    transform: str

    def __str__(self) -> str:
        return f"slope {self.slope:.4g} [{self.lo:.4g}, {self.hi:.4g}] ({self.transform}, n={self.n})"


def linear_slope(x: ArrayLike, y: ArrayLike, confidence: float = 0.95, transform: str = "linear") -> SlopeFit:
    """``scipy.stats.linregress`` slope of y on x with a t-based CI. Needs 3+ points (one residual df)."""
    _check_confidence(confidence)
    xs, ys = _array(x, "x", 3), _array(y, "y", 3)
    if xs.size != ys.size:
        raise ValueError(f"x and y differ in length: {xs.size} vs {ys.size}")
    if np.all(xs == xs[0]):
        raise ValueError("x is constant: the slope is undefined")
    if np.all(ys == ys[0]):  # an exact fit: slope 0 with no uncertainty (scipy returns a NaN stderr here)
        return SlopeFit(0.0, 0.0, 0.0, float(ys[0]), 0.0, 0.0, 1.0, int(xs.size), confidence, transform)
    res = sps.linregress(xs, ys)
    half = float(sps.t.ppf(0.5 + confidence / 2, xs.size - 2)) * float(res.stderr)
    p = float(res.pvalue) if math.isfinite(res.pvalue) else (0.0 if res.slope != 0 else 1.0)
    return SlopeFit(float(res.slope), float(res.slope) - half, float(res.slope) + half, float(res.intercept),
                    float(res.stderr), float(res.rvalue), p, int(xs.size), confidence, transform)


def loglog_slope(x: ArrayLike, y: ArrayLike, confidence: float = 0.95) -> SlopeFit:
    """Slope of ln y on ln x (the exponent of a power law y ~ x^slope; base-independent), e.g. Var(q.k) vs d_k."""
    xs, ys = _array(x, "x", 3), _array(y, "y", 3)
    if np.any(xs <= 0) or np.any(ys <= 0):
        raise ValueError("loglog_slope needs positive x and y (take |y|, or use linear)")
    return linear_slope(np.log(xs), np.log(ys), confidence, transform="loglog")


_SLOPE_FITS = {"linear": linear_slope, "loglog": loglog_slope}


def replicate_slope(x: ArrayLike, y: ArrayLike, replicate: ArrayLike, transform: str = "loglog",
                    confidence: float = 0.95) -> SlopeFit:
    """A slope with the replicate (seed) as the unit: fit y on x within each replicate (``transform`` as in
    ``linear_slope``/``loglog_slope``), then the mean of those slopes with a Student-t interval
    across replicates; ``p_value`` is the one-sample t-test of slope = 0, ``n`` the number of replicates. Use it
    when points of one replicate share something (e.g. the same seed's embeddings at every d_k), which makes a
    pooled regression's interval too narrow. One replicate gives a NaN interval."""
    if transform not in _SLOPE_FITS:
        raise ValueError(f"transform must be one of {sorted(_SLOPE_FITS)}, got {transform!r}")
    xs, ys = _array(x, "x", 3), _array(y, "y", 3)
    reps = np.asarray(replicate).ravel()
    if not (xs.size == ys.size == reps.size):
        raise ValueError(f"x, y and replicate differ in length: {xs.size}, {ys.size}, {reps.size}")
    def one(x: np.ndarray, y: np.ndarray):
        if transform == "linear" and x.size == 2 and x[0] != x[1]:       # two points: their slope, exactly
            slope = float((y[1] - y[0]) / (x[1] - x[0]))
            return SlopeFit(slope, slope, slope, float(y[0] - slope * x[0]), 0.0, 1.0, math.nan, 2, confidence,
                            "linear, two points")
        return _SLOPE_FITS[transform](x, y, confidence)

    fits = [one(xs[reps == r], ys[reps == r]) for r in np.unique(reps)]
    slopes = np.array([f.slope for f in fits])
    ci = t_ci(slopes, confidence)
    if slopes.size < 2:
        p = math.nan
    elif np.all(slopes == slopes[0]):
        p = 1.0 if slopes[0] == 0 else 0.0
    else:
        p = float(sps.ttest_1samp(slopes, 0.0).pvalue)
    stderr = ci.sd / math.sqrt(slopes.size) if slopes.size > 1 else math.nan
    return SlopeFit(ci.mean, ci.lo, ci.hi, float(np.mean([f.intercept for f in fits])), stderr,
                    float(np.mean([f.r_value for f in fits])), p, int(slopes.size), confidence,
                    f"{transform}, mean over replicates")


# --------------------------------------------------------------------------------------- correlation
@dataclass(frozen=True)
class Correlation:
    r: float
    lo: float
    hi: float
    p_value: float
    n: int
    method: str

    def as_dict(self) -> dict:
        return asdict(self)


def correlation(x: ArrayLike, y: ArrayLike, method: str = "pearson", confidence: float = 0.95) -> Correlation:
    """Pearson (Fisher-z CI from scipy) or Spearman (CI by Fisher z on the rank correlation) with its p-value."""
    _check_confidence(confidence)
    xs, ys = _array(x, "x", 3), _array(y, "y", 3)
    if xs.size != ys.size:
        raise ValueError(f"x and y differ in length: {xs.size} vs {ys.size}")
    if method == "pearson":
        res = sps.pearsonr(xs, ys)
        ci = res.confidence_interval(confidence)
        return Correlation(float(res.statistic), float(ci.low), float(ci.high), float(res.pvalue), int(xs.size),
                           method)
    if method == "spearman":
        res = sps.spearmanr(xs, ys)
        r = float(res.statistic)
        if xs.size > 3 and abs(r) < 1:
            z, se = math.atanh(r), 1.0 / math.sqrt(xs.size - 3)
            q = float(sps.norm.ppf(0.5 + confidence / 2))
            lo, hi = math.tanh(z - q * se), math.tanh(z + q * se)
        else:
            lo = hi = math.nan if abs(r) < 1 else r
        return Correlation(r, lo, hi, float(res.pvalue), int(xs.size), method)
    raise ValueError(f"method must be 'pearson' or 'spearman', got {method!r}")


# ------------------------------------------------------------------------------ multiple comparisons
@dataclass(frozen=True)
class BHResult:
    """Benjamini-Hochberg across a claim's criteria: ``adjusted`` p-values (q-values), ``rejected`` at ``alpha``."""
    p_values: tuple[float, ...]
    adjusted: tuple[float, ...]
    rejected: tuple[bool, ...]
    alpha: float


def benjamini_hochberg(p_values: ArrayLike, alpha: float = 0.05) -> BHResult:
    """``scipy.stats.false_discovery_control(method="bh")``; rejected where adjusted p <= alpha."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    p = _array(p_values, "p_values")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"p_values must lie in [0, 1], got {p.tolist()}")
    adj = sps.false_discovery_control(p, method="bh")
    return BHResult(tuple(float(v) for v in p), tuple(float(v) for v in adj), tuple(bool(v <= alpha) for v in adj),
                    alpha)
