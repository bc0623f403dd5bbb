"""Q1 and Q3 (issue 11): each question's decision can come out both ways. The decision functions of the claim
modules run on fabricated measurement tables for a 'yes' world and a 'no' world; the measurement functions run
at a tiny budget (seconds) to show they produce what the decisions read, and that a scale fault moves them."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from claims import test_q1_qk_norm as q1
from claims import test_q3_variance_after_training as q3
from harness.sweeps import clear_sweep_cache
from model import inject, set_fault

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _clean():
    clear_sweep_cache()
    set_fault(None)
    yield
    clear_sweep_cache()
    set_fault(None)


# ============================================================================================== Q1
def _q1_table(unscaled_mean: float, scaled_mean: float = 0.5, d_k: int = 64, seeds=range(4)) -> pd.DataFrame:
    """A per-seed table as ``lr_table`` returns it; QK-LN arms with the given lr_mean_loss (+ seed jitter)."""
    rows = []
    for s in seeds:
        jitter = 0.01 * (s - 1.5)
        for arm, mean in (("qk_layernorm_unscaled", unscaled_mean), ("qk_layernorm_scaled", scaled_mean)):
            rows.append({"arm": arm, "d_k": d_k, "seed": s, "best_loss": mean / 2 + jitter,
                         "lr_sensitivity": mean / 2, "lr_mean_loss": mean + jitter})
    return pd.DataFrame(rows)


def test_q1_scale_matters_decides_yes_and_no():
    yes = q1.evaluate_scale_matters(_q1_table(unscaled_mean=1.2), 64)
    assert yes["passed"] and not yes["refuted"] and yes["measured"] == pytest.approx(0.7)
    no = q1.evaluate_scale_matters(_q1_table(unscaled_mean=0.5), 64)
    assert no["refuted"] and not no["passed"]
    # a cost of about the margin is neither
    edge = q1.evaluate_scale_matters(_q1_table(unscaled_mean=0.5 + q1.MARGIN), 64)
    assert not edge["passed"] and not edge["refuted"]


def test_q1_lr_table_caps_at_chance_and_computes_sensitivity_by_hand():
    l0 = math.log(8)
    rows = []
    for lr, loss, absmax, div in ((1e-3, 1.0, 5.0, False), (1e-2, 0.2, 9.0, False), (1e-1, np.nan, 900.0, True)):
        rows.append({"variant": "scaled", "d_k": 8, "seed": 0, "lr": lr, "final_loss": loss,
                     "logit_absmax_first_k": absmax, "logit_std_init": 0.5, "diverged": div, "chance_loss": l0})
    t = q1.lr_table(pd.DataFrame(rows)).iloc[0]
    assert t.best_loss == pytest.approx(0.2) and t.best_lr == 1e-2
    assert t.lr_mean_loss == pytest.approx((1.0 + 0.2 + l0) / 3)
    assert t.lr_sensitivity == pytest.approx((0.8 + 0.0 + (l0 - 0.2)) / 3)
    assert t.max_logit_top_lr == 900.0 and t.n_diverged == 1


def test_q1_logit_growth_and_sensitivity_decide_both_ways():
    def table(qk_max, plain_max, qk_sens, plain_sens):
        return pd.DataFrame([{"arm": arm, "d_k": 64, "seed": s, "max_logit_top_lr": m * (1 + 0.05 * s),
                              "lr_sensitivity": v + 0.01 * s}
                             for s in range(3)
                             for arm, m, v in (("qk_layernorm_scaled", qk_max, qk_sens),
                                               ("scaled", plain_max, plain_sens))])
    bounded = table(10.0, 2000.0, 0.1, 0.6)
    assert q1.evaluate_logit_growth(bounded, 64)["passed"]
    assert q1.evaluate_sensitivity_reduced(bounded, 64)["passed"]
    unbounded = table(2000.0, 10.0, 0.6, 0.1)
    assert q1.evaluate_logit_growth(unbounded, 64)["refuted"]
    assert q1.evaluate_sensitivity_reduced(unbounded, 64)["refuted"]


TINY_Q1 = {"task": {"name": "kv_lookup", "n_pairs": 4, "n_values": 4},
           "model": {"d_model": 32, "n_heads": 2, "d_v": 16, "d_ff": 16},
           "train": {"steps": 3, "batch_size": 8, "schedule": "constant", "eval_every": 0, "eval_size": 16},
           "probe_size": 64, "d_ks": [8, 64], "lrs": [1e-2], "seeds": 3}


def test_q1_measurement_at_a_tiny_budget_and_a_scale_fault():
    arms = ["qk_layernorm_scaled", "qk_layernorm_unscaled", "qk_l2_gain"]
    df = q1.measure_lr_sweep(TINY_Q1, [0, 1, 2], only=arms)
    assert len(df) == len(arms) * 2 * 3
    assert df["logit_absmax_first_k"].gt(0).all() and set(df["lr"]) == {1e-2}
    # the l2 arm's logits are bounded by its gain (Henry's g0 = log2(L^2 - L), L = 5) after 3 small steps
    l2 = df[df["variant"] == "qk_l2_gain"]
    assert (l2["logit_absmax_first_k"] <= q1.henry_gain_init(5) + 0.1).all()
    t = q1.lr_table(df)
    # init logit std ~ d_k^slope: about 0.5 for QK-LN without the scale (3 seeds at this size: 0.39..0.52)
    grows = q1.evaluate_init_dk_growth(t)
    assert not grows["refuted"] and 0.35 < grows["measured"] < 0.6
    flat = q1.evaluate_init_dk_growth(t, arm="qk_layernorm_scaled")     # with the scale: flat
    assert flat["refuted"] and abs(flat["measured"]) < 0.1
    with inject("no_scale"):                                           # the default scale dropped: it grows
        faulty = q1.lr_table(q1.measure_lr_sweep(TINY_Q1, [0, 1, 2], only=["qk_layernorm_scaled"]))
    broken = q1.evaluate_init_dk_growth(faulty, arm="qk_layernorm_scaled")
    assert not broken["refuted"] and broken["measured"] > 0.35


def test_q1_henry_gain_and_bad_length():
    assert q1.henry_gain_init(9) == pytest.approx(math.log2(72))
    with pytest.raises(ValueError, match="seq_len"):
        q1.henry_gain_init(1)


# ============================================================================================== Q3
def _q3_frame(ratio_final: float, var_slope_final: float, d_ks=(8, 64), seeds=range(3)) -> pd.DataFrame:
    """Checkpoint rows as ``measure_drift`` returns them (two layers, steps 0 and 100), scaled and unscaled.
    At init the footnote holds (ratio 1, Var(logits) flat in d_k); after training: the given ratio and slope."""
    rows = []
    for arm in ("scaled", "unscaled"):
        for d_k in d_ks:
            for s in seeds:
                for step, ratio, slope in ((0, 1.0, 0.0), (100, ratio_final, var_slope_final)):
                    for layer in range(2):
                        noise = 1 + 0.02 * (s - 1) + 0.01 * layer
                        v = 0.2 * (d_k / 8) ** slope * noise
                        rows.append({"arm": arm, "d_k": d_k, "seed": s, "step": step, "layer": f"L{layer}",
                                     "var_q": 0.33 * noise, "var_k": 0.33 * noise, "q_offdiag": 0.2,
                                     "k_offdiag": 0.2, "qk_same_index": 0.2, "var_qk_over_dk": v,
                                     "independence_ratio": ratio * noise,
                                     "logit_var": v if arm == "scaled" else v * d_k})
    return pd.DataFrame(rows)


def test_q3_decisions_yes_world():
    df = _q3_frame(ratio_final=1.1, var_slope_final=0.05)
    assert q3.evaluate_independence(df)["passed"]
    assert q3.evaluate_normalisation(df)["passed"]
    assert q3.evaluate_independence(df, step=0)["passed"] and q3.evaluate_normalisation(df, step=0)["passed"]
    assert q3.evaluate_component_drift(df)["passed"]


def test_q3_decisions_no_world():
    df = _q3_frame(ratio_final=7.0, var_slope_final=0.8)
    ind, norm = q3.evaluate_independence(df), q3.evaluate_normalisation(df)
    assert ind["refuted"] and not ind["passed"]
    assert norm["refuted"] and not norm["passed"] and norm["measured"] == pytest.approx(0.8, abs=0.05)
    # the controls still pass on the same frame: the decision reads the final checkpoint
    assert q3.evaluate_independence(df, step=0)["passed"] and q3.evaluate_normalisation(df, step=0)["passed"]
    assert q3.evaluate_unscaled_growth(df)["passed"]          # unscaled logit var ~ d_k^1.8


TINY_Q3 = {"task": {"name": "kv_lookup", "n_pairs": 4, "n_values": 4},
           "model": {"d_model": 16, "n_heads": 2, "d_v": 8, "d_ff": 16, "n_encoder_layers": 2},
           "train": {"steps": 4, "batch_size": 8, "schedule": "constant", "lr": 1e-3, "eval_every": 0,
                     "eval_size": 16},
           "checkpoints": [2, 4], "probe_size": 128, "d_ks": [4, 64], "seeds": 3}


def test_q3_measurement_at_a_tiny_budget_and_a_scale_fault():
    df = q3.measure_drift(TINY_Q3, [0, 1, 2])
    assert len(df) == 2 * 2 * 3 * 3 * 2                       # arms x d_k x seeds x (0, 2, 4) x layers
    assert set(df["step"]) == {0, 2, 4} and df[list(q3.STAT_COLUMNS)].notna().all().all()
    init = q3.per_seed(df, 0)
    assert init["independence_ratio"].between(0.7, 1.4).all()   # the footnote's premise holds at init
    assert q3.evaluate_normalisation(df, step=0)["passed"]        # and the scale normalises there (C4)
    with inject("no_scale"):                                      # a model whose default scale is gone
        faulty = q3.measure_drift(TINY_Q3, [0, 1, 2], arms=["scaled"])
    broken = q3.evaluate_normalisation(faulty, step=0)
    assert broken["refuted"] and broken["measured"] == pytest.approx(1.0, abs=0.2)


def test_q3_bad_budget_and_arm():
    with pytest.raises(ValueError, match="last checkpoint"):
        q3.measure_drift({**TINY_Q3, "checkpoints": [2]}, [0])
    with pytest.raises(ValueError, match="arm"):
        q3.model_config(TINY_Q3, "halfscaled", 8)
