"""R1 must fail when the model's default scale changes (issue 5, issue 10: no_scale and scale_by_dk -> R1).

Runs R1's own measurement functions (harness/study/default_scale.py, claims/test_r1_scale_by_sqrt_dk.py) on a tiny
grid: clean, the exact check holds; under either scale fault it fails, so ``default_is_sdpa_scale`` is refuted. The
non-inferiority criteria are decided alone with their declared rules (``decision.decide_alone``) on constructed
per-seed tables: a default worse than a comparator by more than the margin refutes, an equal one passes.
"""

import numpy as np
import pandas as pd
import pytest
import torch

from harness.record import decision
from harness.study import default_scale, tuning
from model import inject, set_fault

import claims.test_r1_scale_by_sqrt_dk as r1

torch.set_num_threads(1)

GRID = dict(d_ks=[1, 8, 64], heads=[1, 2], seeds=[0])


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    set_fault(None)
    yield
    set_fault(None)


def _decide(name, holds=None, measurements=None):
    return decision.decide_alone(r1.CRITERIA[name]["rule"], measurements, holds=holds)["outcome"]


def test_default_scale_criterion_passes_clean():
    df = default_scale.measure_default_scale(**GRID)
    holds, worst, detail = default_scale.default_scale_check(df)
    assert holds and _decide("default_is_sdpa_scale", holds) == "passed", detail
    assert worst < 1e-12
    assert set(df["mask"]) == set(default_scale.MASKS) and set(df.attention) == {"self", "cross"}
    assert set(df.path) == {"sdpa_fast_path", "tapped_explicit_path"}
    assert df.scale_times_sqrt_dk.sub(1).abs().max() < 1e-12


@pytest.mark.parametrize("fault, scale_times_sqrt_dk", [("no_scale", lambda d: d ** 0.5),
                                                        ("scale_by_dk", lambda d: d ** -0.5)])
def test_default_scale_criterion_fails_when_the_default_scale_changes(fault, scale_times_sqrt_dk):
    with inject(fault):
        df = default_scale.measure_default_scale(**GRID)
    holds, _, detail = default_scale.default_scale_check(df)
    assert not holds and _decide("default_is_sdpa_scale", holds) == "refuted", detail
    # every d_k but 1 (where 1, 1/sqrt(d_k) and 1/d_k coincide) is off, on both module paths
    off = df[df.d_k > 1]
    assert (off.rel_err_vs_sdpa_default > 1e-3).all()
    assert (df[df.d_k == 1].rel_err_vs_sdpa_default < 1e-12).all()
    for d_k, got in off.groupby("d_k").scale_times_sqrt_dk.mean().items():
        assert got == pytest.approx(scale_times_sqrt_dk(d_k), rel=1e-9)


def _sweep(default_loss, other_loss, task="kv_lookup", edge=()):
    rng = np.random.default_rng(0)
    rows = []
    for d_k in (8, 256):
        for arm, loss in (("default", default_loss), ("unscaled", other_loss), ("additive", other_loss)):
            for seed, jitter in enumerate(rng.normal(0, 0.01, 5)):
                rows.append({"arm": arm, "d_k": d_k, "seed": seed, "final_loss": loss + jitter,
                             "final_accuracy": 0.9, "steps_to_target_censored": 200.0,
                             "curve_accuracy": [0.5, 0.9]})
    return tuning.TunedSweep.from_runs(task, pd.DataFrame(rows), edge=edge)


def _both(default_loss, other_loss, second=None, edge=()):
    second = second or (default_loss, other_loss)
    return {"kv_lookup": _sweep(default_loss, other_loss, edge=edge),
            "delayed_copy": _sweep(*second, task="delayed_copy")}


def test_never_worse_criteria():
    def outcomes(sweeps_):
        return {name: decision.judge([{"rule": r1.CRITERIA[name]["rule"].as_dict(), "recorded": True, "counts": True,
                                       "exact_holds": None,
                                       "measurements": [m for ms in parts.values() for m in ms]}], [True],
                                     firmness=False).criteria[0]["outcome"]
                for name, parts in r1.never_worse_measurements(sweeps_).items()}

    assert set(outcomes(_both(0.1, 0.1)).values()) == {"passed"}
    assert set(outcomes(_both(0.1, 1.0)).values()) == {"passed"}              # the default is better
    assert set(outcomes(_both(0.5, 0.1)).values()) == {"refuted"}             # worse by 0.4 nats on both tasks
    # the tasks disagree: refuted where one task contradicts it (issue 26: one rule for replications)
    assert set(outcomes(_both(0.5, 0.1, second=(0.1, 0.1))).values()) == {"refuted"}
    assert outcomes(_both(0.1, 0.1, edge={("unscaled", 256)}))["default_never_worse"] == "inconclusive"
    assert len(r1.never_worse_table(_sweep(0.5, 0.1).runs)) == 2 * 2 * 4
    assert r1.CRITERIA["default_never_worse"].get("role", "counted") == "counted"
    assert r1.CRITERIA["default_vs_additive"]["role"] == "reported"
