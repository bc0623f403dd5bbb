"""Q1 and Q3 (issues 11, 16, 38.5): each question's decision can come out both ways. The modules' declared rules
decide (``decision.decide_alone``, ``verdict.judge_record``) their own measurements of fabricated tables for a 'yes'
world and a 'no' world; the measurement functions run at a tiny budget (seconds) to show they produce what the
criteria read (Q1: through the tuned-rate path), and that a scale fault moves them (Q3)."""
import math

import numpy as np
import pandas as pd
import pytest
import torch

from claims import test_q1_qk_norm as q1
from claims import test_q3_variance_after_training as q3
from harness.record import decision, margins
from harness.study import tuning
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
L0 = math.log(8)            # the smoke task's chance loss (8 values)


def _q1_sweep(unscaled: float, scaled: float, variants=("l2", "rmsnorm"), d_k: int = 64, seeds=range(4),
              edge=(), tried=None, nan_seed=None, jitter=0.01) -> tuning.TunedSweep:
    """A tuned sweep as ``run_sweep`` returns it: every variant's arms with the given mean held-out losses (+ seed
    jitter, so paired differences vary), each tuned inside its grid (``edge``: at the grid's top); ``tried``: the
    tuning seeds' mean loss at each grid rate of every unscaled arm (default: a live foil's)."""
    rows = []
    for v in variants:
        for scaled_arm, mean in ((False, unscaled), (True, scaled)):
            for s in seeds:
                loss = mean + jitter * (s - 1.5) * (1.5 if scaled_arm else 1.0)
                if nan_seed == s and not scaled_arm:
                    loss = math.nan
                rows.append({"arm": q1.arm(v, scaled_arm), "d_k": d_k, "seed": s, "final_loss": loss,
                             "logit_absmax_first_k": 5.0})
    sweep = tuning.TunedSweep.from_runs("kv_lookup", pd.DataFrame(rows), edge=edge)
    if tried is not None:
        for v in variants:
            t = sweep.tuned[(q1.arm(v, False), d_k)]
            sweep.tuned[(t.arm, d_k)] = tuning.Tuned(t.arm, d_k, t.lr, t.grid, tuple(tried))
    return sweep


def q1_decide(name, sweep, init=None):
    return decision.decide_alone(q1.CRITERIA[name]["rule"], q1.measurements(name, sweep, init, 64, L0))


def q1_verdict(sweep):
    record = [{"rule": q1.CRITERIA[n]["rule"].as_dict(), "measurements": q1.measurements(n, sweep, None, 64, L0),
               "recorded": True, "role": q1.CRITERIA[n]["role"]}
              for n in ("scale_earns_place_l2", "scale_earns_place_rmsnorm")]
    return judge_record(record, kind="question", firmness=False)["verdict"]


def test_q1_counts_the_modern_variants_at_the_suites_loss_margin():
    roles = {n: c["role"] for n, c in q1.CRITERIA.items()}
    assert {n for n, r in roles.items() if r == "counted"} == {"scale_earns_place_l2", "scale_earns_place_rmsnorm"}
    assert roles["scale_earns_place_layernorm_gain1"] == "reported"          # yes by construction (issue 38.5)
    for name in ("scale_earns_place_l2", "scale_earns_place_rmsnorm", "scale_earns_place_layernorm_gain1"):
        rule = q1.CRITERIA[name]["rule"]
        assert rule.kind == "superiority" and rule.paired
        assert rule.refute_below == (rule.margin if name in ("scale_earns_place_l2", "scale_earns_place_rmsnorm")
                                     else 0.0)               # issue 63: a counted one answers no below the margin
        assert rule.margin == margins.HELD_OUT_LOSS.value                    # the suite's margin, not Q1's own
    arms = q1.arms(seq_len=9)
    for v in ("l2", "rmsnorm", "layernorm"):                                 # the scale is the only difference
        a, b = dict(arms[q1.arm(v, True)]), dict(arms[q1.arm(v, False)])
        assert a.pop("scale_exponent") == 0.5 and b.pop("scale") == "none" and a == b
    assert arms["l2_scaled"]["qk_norm_gain_init"] == pytest.approx(math.log2(72))
    # l2's gain learnt as log g (it can grow by a factor); the others keep the default parametrisation
    assert {a: c.get("qk_norm_gain_param", "linear") for a, c in arms.items()} == {
        a: "log" if a.startswith("l2_") else "linear" for a in arms}
    assert q1.CONTROL_ARM not in arms
    control = q1.arms(seq_len=9, d_k=64)[q1.CONTROL_ARM]                   # the control: g0 * sqrt(d_k), no scale
    assert control == {**arms["l2_unscaled"], "qk_norm_gain_init": pytest.approx(math.log2(72) * 8)}
    assert q1.CRITERIA["l2_control_scale_earns_place"]["role"] == "reported"


@pytest.mark.parametrize("name", ["scale_earns_place_l2", "scale_earns_place_rmsnorm"])
def test_q1_scale_criteria_decide_yes_no_and_neither(name):
    assert q1_decide(name, _q1_sweep(unscaled=1.0, scaled=0.3))["outcome"] == "passed"
    assert q1.measurements(name, _q1_sweep(1.0, 0.3), None, 64, L0)[0]["paired"]
    assert q1_decide(name, _q1_sweep(unscaled=0.3, scaled=1.0))["outcome"] == "refuted"   # dropping it helps
    small = q1_decide(name, _q1_sweep(unscaled=0.32, scaled=0.3))           # a cost shown below the 0.05-nat margin
    assert small["outcome"] == "refuted" and not small["short_of_margin"]   # issue 63: that is an answer, no
    edge = q1_decide(name, _q1_sweep(unscaled=0.35, scaled=0.3))            # an interval across the margin
    assert edge["outcome"] == "inconclusive"


def test_q1_question_answered_yes_only_when_both_variants_pay_for_dropping_the_scale():
    assert q1_verdict(_q1_sweep(unscaled=1.0, scaled=0.3)) == "answered yes"
    assert q1_verdict(_q1_sweep(unscaled=0.3, scaled=1.0)) == "answered no"
    mixed = _q1_sweep(1.0, 0.3, variants=("rmsnorm",))                      # rmsnorm pays, l2 gains from dropping it
    mixed = tuning.merge(mixed, _q1_sweep(0.3, 1.0, variants=("l2",)))
    assert q1_verdict(mixed) == "answered no"
    assert q1_verdict(_q1_sweep(unscaled=0.32, scaled=0.3)) == "answered no"
    assert q1_verdict(_q1_sweep(unscaled=0.35, scaled=0.3)) == "inconclusive at this scale"


def test_q1_answers_per_variant_each_with_its_firmness():
    mixed = tuning.merge(_q1_sweep(1.0, 0.3, variants=("rmsnorm",)), _q1_sweep(0.3, 1.0, variants=("l2",)))
    names = ("scale_earns_place_l2", "scale_earns_place_rmsnorm")
    record = [{"name": n, "answers": q1.CRITERIA[n]["answers"], "rule": q1.CRITERIA[n]["rule"].as_dict(),
               "measurements": q1.measurements(n, mixed, None, 64, L0), "recorded": True,
               "role": q1.CRITERIA[n]["role"]} for n in names]
    j = judge_record(record, kind="question")
    assert j["verdict"] == "answered no"
    by_case = {a["case"]: a for a in j["answers"]}
    assert (by_case["l2"]["answer"], by_case["rmsnorm"]["answer"]) == ("answered no", "answered yes")
    firm = {c["name"]: c["firmness"] for c in j["criteria"]}
    assert by_case["l2"]["firmness"] == firm["scale_earns_place_l2"] is not None
    assert by_case["rmsnorm"]["firmness"] == firm["scale_earns_place_rmsnorm"] is not None
    assert j["scope"].startswith("answered no for l2; answered yes for rmsnorm")
    same = judge_record([{**r, "measurements": q1.measurements(r["name"], _q1_sweep(1.0, 0.3), None, 64, L0)}
                         for r in record], kind="question")
    assert [a["answer"] for a in same["answers"]] == ["answered yes"] * 2 and same["scope"] == ""


def test_q1_an_edge_rate_or_a_dead_foil_makes_the_comparison_invalid():
    edge = q1_decide("scale_earns_place_rmsnorm", _q1_sweep(1.0, 0.3, edge=[("rmsnorm_scaled", 64)]))
    assert edge["outcome"] == "inconclusive"
    at_chance = _q1_sweep(unscaled=L0 + 0.2, scaled=0.3, tried=(L0, L0 + 0.5, math.inf))
    d = q1_decide("scale_earns_place_l2", at_chance)
    assert d["outcome"] == "inconclusive" and "at chance" in q1.foil(at_chance, "l2", 64, L0)
    alive_at_one_rate = _q1_sweep(unscaled=L0 + 0.2, scaled=0.3, tried=(L0, 1.0, L0))
    assert q1.foil(alive_at_one_rate, "l2", 64, L0) == ""                  # learnt at one rate: tuned badly, not dead
    at_floor = _q1_sweep(unscaled=0.005, scaled=0.003, tried=(0.004, 0.002, 0.006), jitter=0.001)
    assert "at the floor" in q1.foil(at_floor, "rmsnorm", 64, L0)
    assert q1_decide("scale_earns_place_rmsnorm", at_floor)["outcome"] == "inconclusive"


def test_q1_a_diverged_run_counts_as_chance():
    s = _q1_sweep(unscaled=1.0, scaled=0.3, nan_seed=2)
    assert q1.capped(s, "l2_unscaled", 64, L0)[2] == L0
    assert q1.capped(s, "l2_unscaled", 64, L0)[0] == pytest.approx(1.0 - 0.015)
    assert q1_decide("scale_earns_place_l2", s)["outcome"] == "passed"


def test_q1_init_growth_criteria_read_per_seed_slopes():
    rows = [{"arm": q1.arm(v, False), "d_k": d, "seed": s, "logit_std": (1 + 0.05 * s) * d ** (p + 0.01 * s)}
            for v, p in (("rmsnorm", 0.5), ("layernorm", 0.5), ("l2", -0.5)) for d in (8, 16, 32, 64)
            for s in range(4)]
    init = pd.DataFrame(rows)
    np.testing.assert_allclose(q1.init_slopes(init, "l2_unscaled"), [-0.5, -0.49, -0.48, -0.47])
    for name in ("rmsnorm_keeps_dk_growth", "layernorm_keeps_dk_growth", "l2_removes_dk_growth"):
        assert q1_decide(name, None, init)["outcome"] == "passed", name
    flat = init.assign(logit_std=1.0 + 0.01 * init["seed"] * np.log(init["d_k"]))   # what 1/sqrt(d_k) would give
    assert q1_decide("rmsnorm_keeps_dk_growth", None, flat)["outcome"] == "refuted"


TINY_Q1 = {"sweep": {"task": {"name": "kv_lookup", "n_pairs": 4, "n_values": 4},
                     "model": {"d_model": 16, "n_heads": 2, "d_v": 8, "d_ff": 16},
                     "train": {"steps": 3, "batch_size": 8, "schedule": "constant", "lr": 0.01, "eval_every": 0,
                               "eval_size": 16},
                     "grad_steps": 3, "probe_size": 32},
           "d_k": 16, "probe_d_ks": [8, 32], "tuning": {"points": 3, "span": 4.0, "seeds": 1, "extend": 0},
           "seeds": 2}


def test_q1_takes_the_tuned_rate_path_at_a_tiny_budget():
    s = q1.run_sweep(TINY_Q1, [0, 1])
    assert set(s.tuned) == {(a, 16) for a in (*q1.ARM_ORDER, q1.CONTROL_ARM)}
    assert set(s.tuning["seed"]) == {tuning.TUNING_SEED_OFFSET}              # disjoint from the evaluation seeds
    assert sorted(set(s.tuning["lr"])) == pytest.approx([0.005, 0.01, 0.02])
    for a in q1.ARM_ORDER:                                                   # each arm evaluated at its own rate
        runs = s.runs[s.runs["arm"] == a]
        assert sorted(runs["seed"]) == [0, 1] and set(runs["lr"]) == {s.tuned[(a, 16)].lr}
    ms = q1.measurements("scale_earns_place_rmsnorm", s, None, 16, math.log(4))
    assert len(ms[0]["a"]) == 2 and ms[0]["paired"]
    control = q1.measurements("l2_control_scale_earns_place", s, None, 16, math.log(4))[0]
    np.testing.assert_array_equal(control["a"], q1.capped(s, q1.CONTROL_ARM, 16, math.log(4)))
    np.testing.assert_array_equal(control["b"], q1.capped(s, "l2_unscaled", 16, math.log(4)))
    init = q1.measure_init(TINY_Q1, [0, 1])
    assert len(init) == 6 * 2 * 2 and init["logit_std"].gt(0).all()
    assert q1.init_slopes(init, "rmsnorm_unscaled").mean() > 0 > q1.init_slopes(init, "l2_unscaled").mean()


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
