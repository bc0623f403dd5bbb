"""C3's criteria can fail, and the model's default scale does not reach them (issues 5, 16).

C3 sets scaled and unscaled explicitly (scale_exponent=0.5, scale="none"), so the scale faults, which change only
the *default* scale (R1 catches those), leave its measurement bit-identical; uniform attention (weights that ignore
the logits) makes entropy and gradient flat in d_k, and (a) no longer passes. Runs the module's own measurement
functions on a tiny budget and decides each criterion alone with its declared rule (``decision.decide_alone``);
(b) and (c) are checked on constructed per-seed sweep tables.
"""

import numpy as np
import pandas as pd
import pytest
import torch

from harness.record import decision
from harness.study import tuning
from model import inject, set_fault

import claims.test_c3_softmax_saturation as c3

torch.set_num_threads(1)

BUDGET = {"task": {"name": "kv_lookup", "n_pairs": 8}, "model": {"d_model": 32, "n_heads": 1, "d_v": 32, "d_ff": 64},
          "train": {"steps": 1}}
D_KS, SEEDS = [8, 64, 512], [0, 1, 2]     # three seeds: the slopes' CI is a t interval across seeds


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    set_fault(None)
    yield
    set_fault(None)


def _probe(**kw):
    return c3.measure_saturation_at_init(D_KS, SEEDS, BUDGET, probe_size=32, **kw)


def _outcomes(measurements: dict) -> dict:
    return {name: decision.decide_alone(c3.CRITERIA[name]["rule"], ms)["outcome"] for name, ms in measurements.items()}


def test_every_criterion_declares_a_rule_with_a_reason():
    for name, spec in c3.CRITERIA.items():
        rule = spec["rule"]
        assert rule.kind in decision.KINDS and rule.reason.strip(), name
    fast = {n for n, s in c3.CRITERIA.items() if s.get("fast")}
    assert fast == {"a_unscaled_entropy_and_grad_fall", "a_unscaled_saturated_rows_rise", "a_scaled_flat"}
    # issue 47, finding 7: the scaled arm's flatness at init is the variance law's arithmetic, never counted, so
    # no fast criterion counts and C3 is out of the fault matrix
    assert c3.CRITERIA["a_scaled_flat"]["role"] == "reported" and "falsified_by" not in c3.CRITERIA["a_scaled_flat"]
    assert not [n for n, s in c3.CRITERIA.items() if s.get("fast") and s.get("role", "counted") == "counted"]
    assert c3.CRITERIA["c_small_dk_additive_similar_to_unscaled"]["role"] == "reported"
    assert not any("parts_agree" in s for s in c3.CRITERIA.values())     # issue 26: one rule for parts


def test_probe_criteria_pass_clean_and_scale_faults_refute_only_the_scaled_arm():
    """The premises (a) are the explicitly unscaled arm's: no scale fault reaches it. The scaled arm's exponent is
    a scale derived from d_k: no_scale and scale_inverted move its trend out of its band (a_scaled_flat, reported:
    the variance law's arithmetic, issue 47); scale_by_dk (1/d_k) leaves it near uniform at every d_k, as flat as
    the claim says it is."""
    clean = _probe()
    assert set(_outcomes(c3.probe_measurements(clean)).values()) == {"passed"}
    unscaled = clean[clean.arm == "unscaled"].reset_index(drop=True)
    for fault, scaled_flat in (("no_scale", "refuted"), ("scale_by_dk", "passed"), ("scale_inverted", "refuted")):
        with inject(fault):
            broken = _probe()
        pd.testing.assert_frame_equal(broken[broken.arm == "unscaled"].reset_index(drop=True), unscaled)
        out = _outcomes(c3.probe_measurements(broken))
        assert out["a_scaled_flat"] == scaled_flat, (fault, out)
        assert out["a_unscaled_entropy_and_grad_fall"] == "passed"


def test_probe_criteria_fail_when_attention_ignores_the_logits():
    with inject("uniform_attention"):
        broken = _probe()
    assert (broken.grad_abs_mean == 0).all() and (broken.saturated_fraction == 0).all()
    out = _outcomes(c3.probe_measurements(broken))
    assert out["a_unscaled_entropy_and_grad_fall"] != "passed"
    assert out["a_unscaled_saturated_rows_rise"] != "passed"


def test_probe_criteria_refuted_if_unscaled_were_scaled():
    """A broken 'unscaled' arm is caught by (a): the check is about the arm, not a label. "Falls" is a direction
    with a margin (issue 38.4): a flat slope (an arm really scaled) is "not shown", and an arm whose logits shrink
    with d_k (scale 1/d_k) makes entropy rise, beyond the null, which refutes it."""
    out = _outcomes(c3.probe_measurements(_probe(arms={"unscaled": c3.SCALED, "scaled": c3.SCALED})))
    assert out["a_unscaled_entropy_and_grad_fall"] == "inconclusive"
    assert out["a_unscaled_saturated_rows_rise"] == "inconclusive"    # no row saturates at any d_k: no spread
    shrink = {"unscaled": {"scale_exponent": 1.0}, "scaled": c3.SCALED}
    assert _outcomes(c3.probe_measurements(_probe(arms=shrink)))["a_unscaled_entropy_and_grad_fall"] == "refuted"


def test_scaled_flat_refuted_if_scaled_were_unscaled():
    out = _outcomes(c3.probe_measurements(_probe(arms={"unscaled": c3.UNSCALED, "scaled": c3.UNSCALED})))
    assert out["a_scaled_flat"] == "refuted"


def _sweep(loss, grad, task="kv_lookup", edge=()):
    """A tuned sweep (harness.study.tuning.TunedSweep) built from per-seed values: loss[(arm, d_k)] and grad[arm]
    at the large d_k, with seed jitter; every arm's rate interior to its grid except the (arm, d_k) in ``edge``."""
    rng = np.random.default_rng(0)
    rows = [{"arm": v, "d_k": d, "seed": s, "final_loss": loss[(v, d)] + j, "final_accuracy": 0.9,
             "grad_abs_mean_first_k": grad.get(v, 2e-5) * (1 + j)}
            for (v, d) in loss for s, j in enumerate(rng.normal(0, 0.01, 5))]
    return tuning.TunedSweep.from_runs(task, pd.DataFrame(rows), edge=edge)


def _outcomes_parts(measurements: dict) -> dict:
    """Each criterion decided alone over all its parts (passed if every part passes, refuted if any is)."""
    return {name: decision.judge([{"rule": c3.CRITERIA[name]["rule"].as_dict(), "recorded": True, "counts": True,
                                   "exact_holds": None,
                                   "measurements": [m for ms in parts.values() for m in ms]}],
                                 [True], firmness=False).criteria[0]["outcome"]
            for name, parts in measurements.items()}


SATURATING = {("additive", 8): 0.03, ("unscaled", 8): 0.3, ("scaled", 8): 0.03, ("additive", 2): 0.03,
              ("unscaled", 2): 0.04, ("additive", 256): 0.003, ("unscaled", 256): 1.3, ("scaled", 256): 0.1}


def test_training_criteria_pass_on_a_saturating_model_and_fail_on_one_that_does_not():
    sat = {"kv_lookup": _sweep(SATURATING, {"unscaled": 5e-6, "scaled": 2e-5}),
           "delayed_copy": _sweep(SATURATING, {"unscaled": 5e-6, "scaled": 2e-5}, task="delayed_copy")}
    out = _outcomes_parts(c3.training_measurements(sat, 8, 256, [2, 8]))
    # similar at d_k 2, additive better at d_k 8 by more than the margin: one part refutes "similar" (issue 26)
    assert out.pop("c_small_dk_additive_similar_to_unscaled") == "refuted"
    assert set(out.values()) == {"passed"}, out
    assert c3.crossover_dk(sat["kv_lookup"]) == 8.0
    same = {k: 0.1 for k in SATURATING}
    flat = {"kv_lookup": _sweep(same, {}), "delayed_copy": _sweep(same, {}, task="delayed_copy")}
    out = _outcomes_parts(c3.training_measurements(flat, 8, 256, [2, 8]))
    assert out["c_small_dk_additive_similar_to_unscaled"] == "passed"
    assert np.isnan(c3.crossover_dk(flat["kv_lookup"]))
    # equal gradients and equal losses: no effect shown and none contradicted ("at most half" is a direction with
    # a margin, refuted beyond its null, issue 38.4; superiority, issue 26)
    for name in ("b_train_grad_smaller_unscaled_large_dk", "c_large_dk_additive_beats_unscaled",
                 "c_large_dk_scaled_beats_unscaled", "c_additive_advantage_grows_with_dk"):
        assert out[name] == "inconclusive", (name, out)
    # unscaled ahead of both, its gap shrinking with d_k, its gradients larger: each prediction contradicted
    better = {k: (0.05 if k == ("unscaled", 256) else 0.1) for k in SATURATING}
    rev = {"kv_lookup": _sweep(better, {"unscaled": 4e-5, "scaled": 2e-5}),
           "delayed_copy": _sweep(better, {"unscaled": 4e-5, "scaled": 2e-5}, task="delayed_copy")}
    out = _outcomes_parts(c3.training_measurements(rev, 8, 256, [2, 8]))
    for name in ("b_train_grad_smaller_unscaled_large_dk", "c_large_dk_additive_beats_unscaled",
                 "c_large_dk_scaled_beats_unscaled", "c_additive_advantage_grows_with_dk"):
        assert out[name] == "refuted", (name, out)


def test_similar_note_names_the_parts_and_whose_words_they_test():
    """The paper's "similar at small d_k" (not the note's words) is reported; a refuted part is said in a note."""
    rows = pd.DataFrame({"part": ["kv_lookup d_k=2", "kv_lookup d_k=8", "delayed_copy d_k=8"],
                         "outcome": ["passed", "refuted", "inconclusive"]})
    text = c3.similar_note(rows)
    assert "refuted on kv_lookup d_k=8" in text and "passed on kv_lookup d_k=2" in text
    assert "not shown on delayed_copy d_k=8" in text and "contradicted at this scale" in text
    assert "not the note's words" in text
    assert "contradicted" not in c3.similar_note(rows.assign(outcome="passed"))


def test_tasks_that_disagree_and_an_edge_rate_are_inconclusive():
    mixed = {"kv_lookup": _sweep(SATURATING, {"unscaled": 5e-6, "scaled": 2e-5}),
             "delayed_copy": _sweep({k: 0.1 for k in SATURATING}, {}, task="delayed_copy")}
    out = _outcomes_parts(c3.training_measurements(mixed, 8, 256, [2, 8]))
    assert out["c_large_dk_additive_beats_unscaled"] == "inconclusive"
    edged = {"kv_lookup": _sweep(SATURATING, {"unscaled": 5e-6, "scaled": 2e-5}, edge={("additive", 256)}),
             "delayed_copy": _sweep(SATURATING, {"unscaled": 5e-6, "scaled": 2e-5}, task="delayed_copy")}
    ms = c3.training_measurements(edged, 8, 256, [2, 8])
    assert "additive at d_k=256" in ms["c_large_dk_additive_beats_unscaled"]["kv_lookup"][0]["invalid"]
    assert _outcomes_parts(ms)["c_large_dk_additive_beats_unscaled"] == "inconclusive"
    assert _outcomes_parts(ms)["c_large_dk_scaled_beats_unscaled"] == "passed"
