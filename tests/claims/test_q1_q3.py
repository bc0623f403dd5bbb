"""Q1 and Q3 (issues 11, 16): each question's decision can come out both ways. The modules' declared rules decide
(``decision.decide_alone``, ``verdict.judge_record``) their own measurements of fabricated tables for a 'yes'
world and a 'no' world; the measurement functions run at a tiny budget (seconds) to show they produce what the
criteria read, and that a scale fault moves them."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from claims import test_q1_qk_norm as q1
from claims import test_q3_variance_after_training as q3
from harness.record import decision
from harness.study.sweeps import clear_sweep_cache
from harness.record.verdict import judge_record
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
            j = jitter * (1.5 if arm == "qk_layernorm_unscaled" else 1.0)     # paired differences vary by seed
            rows.append({"arm": arm, "d_k": d_k, "seed": s, "best_loss": mean / 2 + j,
                         "lr_sensitivity": mean / 2, "lr_mean_loss": mean + j})
    return pd.DataFrame(rows)


def q1_outcome(name, t):
    return decision.decide_alone(q1.CRITERIA[name]["rule"], q1.measurements(name, t))["outcome"]


def test_q1_scale_matters_decides_yes_and_no():
    yes = _q1_table(unscaled_mean=1.2)
    assert q1_outcome("scale_matters_with_qk_norm", yes) == "passed"
    assert q1.measurements("scale_matters_with_qk_norm", yes)[0]["paired"]
    no = _q1_table(unscaled_mean=0.4)          # no scale is better: the cost is contradicted (issue 26)
    assert q1_outcome("scale_matters_with_qk_norm", no) == "refuted"
    assert q1_outcome("scale_matters_with_qk_norm", _q1_table(unscaled_mean=0.5)) == "inconclusive"   # no cost
    # a cost of about the margin is neither
    assert q1_outcome("scale_matters_with_qk_norm", _q1_table(unscaled_mean=0.5 + q1.MARGIN)) == "inconclusive"
    record = [{"rule": q1.CRITERIA[n]["rule"].as_dict(), "measurements": q1.measurements(n, no), "recorded": True,
               "counts": True} for n in ["scale_matters_with_qk_norm"]]
    assert judge_record(record, kind="question", firmness=False)["verdict"] == "answered no"


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
        return pd.DataFrame([{"arm": arm, "d_k": 64, "seed": s, "max_logit_top_lr": m * (1 + j * s),
                              "lr_sensitivity": v + j * s / 5}
                             for s in range(3)
                             for arm, m, v, j in (("qk_layernorm_scaled", qk_max, qk_sens, 0.05),
                                                  ("scaled", plain_max, plain_sens, 0.1))])
    bounded = table(10.0, 2000.0, 0.1, 0.6)
    assert q1_outcome("qk_norm_bounds_logit_growth", bounded) == "passed"
    assert q1_outcome("qk_norm_reduces_lr_sensitivity", bounded) == "passed"
    unbounded = table(2000.0, 10.0, 0.6, 0.1)
    assert q1_outcome("qk_norm_bounds_logit_growth", unbounded) == "refuted"
    assert q1_outcome("qk_norm_reduces_lr_sensitivity", unbounded) == "refuted"


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
    rule = q1.CRITERIA["qk_norm_alone_keeps_dk_growth"]["rule"]

    def growth(table, arm):
        slopes = q1.init_slopes(table, arm)
        return decision.decide_alone(rule, [decision.samples(slopes)])["outcome"], slopes.mean()

    outcome, slope = growth(t, "qk_layernorm_unscaled")
    assert outcome != "refuted" and 0.35 < slope < 0.6
    outcome, slope = growth(t, "qk_layernorm_scaled")                 # with the scale: flat
    assert outcome == "refuted" and abs(slope) < 0.1
    with inject("no_scale"):                                           # the default scale dropped: it grows
        faulty = q1.lr_table(q1.measure_lr_sweep(TINY_Q1, [0, 1, 2], only=["qk_layernorm_scaled"]))
    outcome, slope = growth(faulty, "qk_layernorm_scaled")
    assert outcome != "refuted" and slope > 0.35


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
                                     "var_q": 0.33 * noise * (1 + 0.03 * s * (step > 0)),
                                     "var_k": 0.33 * noise, "q_offdiag": 0.2,
                                     "k_offdiag": 0.2, "qk_same_index": 0.2, "var_qk_over_dk": v,
                                     "independence_ratio": ratio * noise,
                                     "logit_var": v if arm == "scaled" else v * d_k})
    return pd.DataFrame(rows)


def q3_outcome(name, df):
    return decision.decide_alone(q3.CRITERIA[name]["rule"], q3.measurements(name, df))["outcome"]


def test_q3_decisions_yes_world():
    df = _q3_frame(ratio_final=1.1, var_slope_final=0.05)
    for name in ("independence_after_training", "scale_normalises_after_training", "independence_at_init",
                 "scale_normalises_at_init", "component_variance_kept"):
        assert q3_outcome(name, df) == "passed", name


def test_q3_decisions_no_world():
    df = _q3_frame(ratio_final=7.0, var_slope_final=0.8)
    assert q3_outcome("independence_after_training", df) == "refuted"
    assert q3_outcome("scale_normalises_after_training", df) == "refuted"
    assert q3.slopes(df, "logit_var").mean() == pytest.approx(0.8, abs=0.05)
    # the controls still pass on the same frame: the decision reads the final checkpoint
    assert q3_outcome("independence_at_init", df) == "passed" and q3_outcome("scale_normalises_at_init", df) == "passed"
    assert q3_outcome("unscaled_growth_persists", df) == "passed"          # unscaled logit var ~ d_k^1.8
    # the whole question: answered no
    record = [{"rule": q3.CRITERIA[n]["rule"].as_dict(), "measurements": q3.measurements(n, df), "recorded": True,
               "counts": q3.CRITERIA[n].get("counts", True)} for n in q3.CRITERIA]
    assert judge_record(record, kind="question", firmness=False)["verdict"] == "answered no"


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
    assert q3_outcome("scale_normalises_at_init", df) == "passed"   # and the scale normalises there (C4)
    with inject("no_scale"):                                      # a model whose default scale is gone
        faulty = q3.measure_drift(TINY_Q3, [0, 1, 2], arms=["scaled"])
    assert q3_outcome("scale_normalises_at_init", faulty) == "refuted"
    assert q3.slopes(faulty, "logit_var", step=0).mean() == pytest.approx(1.0, abs=0.2)


def test_q3_bad_budget_and_arm():
    with pytest.raises(ValueError, match="last checkpoint"):
        q3.measure_drift({**TINY_Q3, "checkpoints": [2]}, [0])
    with pytest.raises(ValueError, match="arm"):
        q3.model_config(TINY_Q3, "halfscaled", 8)
