"""R1 must fail when the model's default scale changes (issue 5, issue 10: no_scale and scale_by_dk -> R1).

Runs R1's own measurement and verdict functions (claims/test_r1_scale_by_sqrt_dk.py) on a tiny grid: clean they
pass; under either scale fault criterion (a) is refuted. (b)'s verdict function is checked on constructed
per-seed tables: a default significantly worse than a comparator refutes, an equal one passes.
"""
import importlib.util
from pathlib import Path

import pandas as pd
import pytest
import torch

from model import inject, set_fault

torch.set_num_threads(1)
_PATH = Path(__file__).resolve().parent.parent / "claims" / "test_r1_scale_by_sqrt_dk.py"
_spec = importlib.util.spec_from_file_location("claims_r1", _PATH)
r1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(r1)

GRID = dict(d_ks=[1, 8, 64], heads=[1, 2], seeds=[0])


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    set_fault(None)
    yield
    set_fault(None)


def test_default_scale_criterion_passes_clean():
    df = r1.measure_default_scale(**GRID)
    res = r1.evaluate_default_scale(df)
    assert res["passed"] and not res["refuted"], res["detail"]
    assert res["measured"] < 1e-12
    assert set(df["mask"]) == set(r1.MASKS) and set(df.attention) == {"self", "cross"}
    assert set(df.path) == {"sdpa_fast_path", "tapped_explicit_path"}
    assert df.scale_times_sqrt_dk.sub(1).abs().max() < 1e-12


@pytest.mark.parametrize("fault, scale_times_sqrt_dk", [("no_scale", lambda d: d ** 0.5),
                                                        ("scale_by_dk", lambda d: d ** -0.5)])
def test_default_scale_criterion_fails_when_the_default_scale_changes(fault, scale_times_sqrt_dk):
    with inject(fault):
        df = r1.measure_default_scale(**GRID)
    res = r1.evaluate_default_scale(df)
    assert not res["passed"] and res["refuted"], res["detail"]
    # every d_k but 1 (where 1, 1/sqrt(d_k) and 1/d_k coincide) is off, on both module paths
    off = df[df.d_k > 1]
    assert (off.rel_err_vs_sdpa_default > 1e-3).all()
    assert (df[df.d_k == 1].rel_err_vs_sdpa_default < 1e-12).all()
    for d_k, got in off.groupby("d_k").scale_times_sqrt_dk.mean().items():
        assert got == pytest.approx(scale_times_sqrt_dk(d_k), rel=1e-9)


def _sweep(default_acc, other_acc, default_steps=100.0, other_steps=100.0):
    rows = []
    for d_k in (32, 512):
        for variant, acc, steps in (("default", default_acc, default_steps), ("unscaled", other_acc, other_steps),
                                    ("additive", other_acc, other_steps)):
            for seed, jitter in enumerate((-0.01, 0.0, 0.01)):
                rows.append({"variant": variant, "d_k": d_k, "seed": seed, "final_accuracy": acc + jitter,
                             "steps_to_target_censored": steps + 10 * jitter})
    return pd.DataFrame(rows)


def test_never_worse_verdict():
    same = r1.evaluate_never_worse(_sweep(0.9, 0.9))
    assert same["passed"] and not same["refuted"]
    better = r1.evaluate_never_worse(_sweep(0.95, 0.5, 100, 300))
    assert better["passed"]
    worse = r1.evaluate_never_worse(_sweep(0.5, 0.95))
    assert worse["refuted"] and not worse["passed"]
    slower = r1.evaluate_never_worse(_sweep(0.9, 0.9, 300, 100))
    assert slower["refuted"]
    assert len(worse["tests"]) == 2 * 2 * 2
