"""Sensitivity of C4's and R2's criteria (issues 5 and 10): each fails under the fault it is about and passes
without it, measured by the modules' own functions at tiny budgets."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from claims import test_c4_scaling as c4
from claims import test_r2_saturation_check as r2
from model import faults

TINY_MODEL = dict(dims=[8, 32, 128, 512], seeds=[0, 1, 2], heads=2, fixed_d_model=16, n_layers=1, batch=4,
                  seq_len=16, configs=[("torch_default", "d_model=h*d_k")])


# ------------------------------------------------------------------------------------------- C4 (b)
def test_c4_model_scaled_slope_catches_a_changed_default_scale():
    ok = c4.evaluate_model(c4.measure_model_init(**TINY_MODEL))
    assert ok["scaled"]["passed"] and not ok["scaled"]["refuted"]
    assert ok["unscaled"]["passed"]
    with faults.inject("no_scale"):
        broken = c4.evaluate_model(c4.measure_model_init(**TINY_MODEL))
    assert not broken["scaled"]["passed"] and broken["scaled"]["refuted"]
    assert broken["slope_scaled"] == pytest.approx(1.0, abs=0.15)
    assert broken["unscaled"]["passed"]          # the q.k taps do not depend on the scale: only the default moved
    with faults.inject("scale_by_dk"):
        by_dk = c4.evaluate_model(c4.measure_model_init(**TINY_MODEL))
    assert by_dk["scaled"]["refuted"] and by_dk["slope_scaled"] == pytest.approx(-1.0, abs=0.15)


def test_c4_model_law_fails_when_components_are_not_what_the_taps_say():
    df = c4.measure_model_init(**TINY_MODEL)
    assert c4.evaluate_model(df)["law"]["passed"]
    df = df.assign(var_qk=df["var_qk"] * df["d_k"] ** 0.5)        # a model whose q.k grows faster than the law
    df["var_qk_normalised"] = df["var_qk"] / (df["var_q"] * df["var_k"])
    assert c4.evaluate_model(df)["law"]["refuted"]


# ------------------------------------------------------------------------------------------- C4 (a)
def _all_equal(g, shape):
    """Fully dependent components: one N(0,1) draw repeated d_k times (q.k = d_k z1 z2, variance d_k^2)."""
    return torch.randn(shape[0], 1, generator=g).expand(shape).contiguous()


def _variance_two(g, shape):
    return torch.randn(shape, generator=g) * math.sqrt(2.0)


def test_c4_iid_criteria_pass_on_the_premise_and_fail_off_it():
    dims, seeds = [8, 32, 128], [0, 1]
    good = c4.evaluate_iid(c4.measure_iid_variance(dims, 4096, seeds, {"normal": c4._normal}),
                           scaled_band=(0.9, 1.1))
    assert good["slope"]["passed"] and good["scaled"]["passed"]
    dep = c4.evaluate_iid(c4.measure_iid_variance(dims, 4096, seeds, {"dependent": _all_equal}))
    assert dep["slope"]["refuted"] and dep["slope_unscaled"] == pytest.approx(2.0, abs=0.1)
    wide = c4.evaluate_iid(c4.measure_iid_variance(dims, 4096, seeds, {"variance 2": _variance_two}))
    assert wide["slope"]["passed"]                # the slope cannot see the constant...
    assert wide["scaled"]["refuted"]              # ...the scaled variance can: 4, not 1


# ------------------------------------------------------------------------------------------- C4 (c)
def _sweep(acc: dict[tuple[int, float], list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"d_k": d, "alpha": a, "seed": s, "accuracy": v, "loss": 1.0 - v}
                         for (d, a), vals in acc.items() for s, v in enumerate(vals)])


def test_c4_alpha_criteria_follow_the_accuracies():
    noise = [0.0, 0.01, -0.01]
    good = {(32, a): [0.9 - 0.1 * abs(a - 0.5) + n for n in noise] for a in (0.0, 0.5, 1.0)}
    good.update({(512, a): [v + n for n in noise] for a, v in ((0.0, 0.3), (0.5, 0.95), (1.0, 0.5))})
    ev = c4.evaluate_alpha(_sweep(good))
    assert ev["alpha_half"]["passed"] and ev["alpha0"]["passed"] and ev["alpha1"]["passed"]
    assert ev["best_alpha_small_dk"] == 0.5 and ev["best_alpha_large_dk"] == 0.5
    bad = dict(good)
    bad.update({(512, a): [v + n for n in noise] for a, v in ((0.0, 0.3), (0.5, 0.6), (1.0, 0.99))})
    ev = c4.evaluate_alpha(_sweep(bad))
    assert ev["alpha_half"]["refuted"] and not ev["alpha1"]["passed"] and ev["alpha1"]["refuted"]
    assert ev["best_alpha_large_dk"] == 1.0


# ---------------------------------------------------------------------------------------------- R2
R2_TINY = dict(dims=[8, 32, 128, 512], seeds=[0, 1, 2], n_keys=32, n_queries=16, batch=4)


@pytest.mark.parametrize("fault, flag", [(None, r2.NOT_FLAGGED), ("no_scale", r2.SATURATES),
                                         ("scale_by_dk", r2.UNIFORM)])
def test_r2_default_row_is_flagged_under_a_scale_fault(fault, flag):
    with faults.inject(fault):
        _, summary = r2.measure_saturation(rows=("default",), **R2_TINY)
    result = r2.evaluate_row(summary, "default")
    assert result["measured"] == flag
    assert result["passed"] == (fault is None) and result["refuted"] == (fault is not None)


def test_r2_predicted_rows_match_without_a_fault():
    rows = ("unscaled", "qk_norm", "inverse_dk")
    _, summary = r2.measure_saturation(rows=rows, **R2_TINY)
    assert all(r2.evaluate_row(summary, k)["passed"] for k in rows), summary[["function", "flag"]]
