"""Synthetic samples whose truth is known, for the decision protocol's tests (test_decision.py, test_firmness.py)."""
import numpy as np

R = "test"      # the reason every synthetic rule gives


def around(mean, sd, n, seed=0):
    """n values with exactly this mean and sample sd (so each test's interval is known in closed form)."""
    z = np.random.default_rng(seed).standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=1)
    return mean + sd * z
