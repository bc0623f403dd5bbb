"""harness.measure.stats.variance_ci: the large-sample interval of a sample variance (used by C4's iid probe)."""
import math

import numpy as np
import pytest

from harness.measure import stats


def test_variance_ci_hand_worked():
    x = [1.0, 2.0, 3.0, 4.0]                    # s^2 = 5/3; central m2 = 1.25, m4 = 2.5625
    ci = stats.variance_ci(x, confidence=0.95)
    se = math.sqrt((2.5625 - 1.25 ** 2) / 4)
    assert ci.mean == pytest.approx(5 / 3)
    assert ci.sd == pytest.approx(se)
    assert ci.ci == pytest.approx((5 / 3 - 1.959964 * se, 5 / 3 + 1.959964 * se), rel=1e-6)


def test_variance_ci_covers_the_truth_for_non_normal_draws():
    # Rademacher: variance 1, kurtosis 1 (m4 - m2^2 = 0 exactly) -> a tiny interval; exponential(1): variance 1,
    # heavy tail -> the interval must widen with the fourth moment and still cover 1 most of the time.
    rng = np.random.default_rng(0)
    covered = sum(stats.variance_ci(rng.exponential(1.0, 4000)).contains(1.0) for _ in range(200))
    assert 180 <= covered <= 200                # nominal 95%: 190 expected
    rad = stats.variance_ci(rng.choice([-1.0, 1.0], 4000))
    assert rad.hi - rad.lo < 0.01


def test_variance_ci_needs_two_values():
    with pytest.raises(ValueError, match="at least 2"):
        stats.variance_ci([1.0])
