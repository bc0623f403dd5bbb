"""C3's probe criteria (a) can fail, and the model's default scale does not reach them (issue 5).

C3 sets scaled and unscaled explicitly (scale_exponent=0.5, scale="none"), so the scale faults, which change only
the *default* scale (R1 catches those), leave its measurement bit-identical; uniform attention (weights that ignore
the logits) makes entropy and gradient flat in d_k, and (a) no longer passes. Runs the module's own functions on a
tiny budget.
"""
import importlib.util
from pathlib import Path

import pandas as pd
import pytest
import torch

from model import inject, set_fault

torch.set_num_threads(1)
_PATH = Path(__file__).resolve().parent.parent / "claims" / "test_c3_softmax_saturation.py"
_spec = importlib.util.spec_from_file_location("claims_c3", _PATH)
c3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(c3)

BUDGET = {"task": {"name": "kv_lookup", "n_pairs": 8}, "model": {"d_model": 32, "n_heads": 1, "d_v": 32, "d_ff": 64},
          "train": {"steps": 1}}
D_KS, SEEDS = [8, 64, 512], [0, 1, 2]     # three seeds: the slopes' CI is a t interval across seeds


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    set_fault(None)
    yield
    set_fault(None)


def _probe():
    return c3.measure_saturation_at_init(D_KS, SEEDS, BUDGET, probe_size=32)


def test_probe_criteria_pass_clean_and_scale_faults_do_not_touch_them():
    clean = _probe()
    verdicts = c3.evaluate_probe(clean)
    assert all(v["passed"] and not v["refuted"] for v in verdicts.values()), verdicts
    for fault in ("no_scale", "scale_by_dk"):
        with inject(fault):
            pd.testing.assert_frame_equal(_probe(), clean)


def test_probe_criteria_fail_when_attention_ignores_the_logits():
    with inject("uniform_attention"):
        broken = _probe()
    verdicts = c3.evaluate_probe(broken)
    assert not verdicts["a_unscaled_entropy_and_grad_fall"]["passed"]
    assert not verdicts["a_unscaled_saturated_rows_rise"]["passed"]
    assert (broken.grad_abs_mean == 0).all() and (broken.saturated_fraction == 0).all()


def test_probe_criteria_fail_if_unscaled_were_scaled():
    """A broken 'unscaled' arm (really scaled) must not pass (a): the check is about the variant, not a label."""
    fake = c3.measure_saturation_at_init(D_KS, SEEDS, BUDGET, probe_size=32,
                                         variants={"unscaled": c3.SCALED, "scaled": c3.SCALED})
    verdicts = c3.evaluate_probe(fake)
    assert not verdicts["a_unscaled_entropy_and_grad_fall"]["passed"]
    assert not verdicts["a_unscaled_saturated_rows_rise"]["passed"]
