"""M0's checks fail when the model is wrong in the way each is about (issue 8, issue 10), and pass when it is not.

* ``causal_mask`` under ``causal_leak`` (the fault M0 must catch in the sensitivity run);
* ``heads_distinct`` under ``single_head``; ``positional_encoding`` under ``no_positional_encoding``;
* ``padding_ignored`` with a key-padding mask that is dropped (patched ``build_mask``): padded keys get weight.
Faults a check is not about leave it green (a check that fails under every fault would prove nothing)."""
from __future__ import annotations

import pytest
import torch

import claims.test_m0_model_checks as m0
import model.attention as attention
from model import faults

torch.set_num_threads(1)

CFG = m0.model_config({"model": {"d_model": 16, "n_heads": 4, "d_ff": 32, "n_encoder_layers": 1,
                                 "n_decoder_layers": 2}})
SEEDS = [0, 1]
CHECKS = {"causal_mask": (m0.measure_causal, m0.evaluate_causal, "causal_leak"),
          "heads_distinct": (m0.measure_heads, m0.evaluate_heads, "single_head"),
          "positional_encoding": (m0.measure_positional, m0.evaluate_positional, "no_positional_encoding")}


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    faults.set_fault(None)
    yield
    faults.set_fault(None)


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_check_fails_under_its_fault_only(check):
    measure, judge, fault = CHECKS[check]
    clean = judge(measure(CFG, SEEDS))
    assert clean["passed"] and not clean["refuted"], clean["detail"]
    with faults.inject(fault):
        broken = judge(measure(CFG, SEEDS))
    assert not broken["passed"] and broken["refuted"], broken["detail"]
    other = next(f for f in ("no_scale", "uniform_attention") if f != fault)
    with faults.inject(other):
        assert judge(measure(CFG, SEEDS))["passed"]


def test_causal_leak_is_seen_on_both_attention_paths():
    with faults.inject("causal_leak"):
        df = m0.measure_causal(CFG, [0])
    assert set(df.path) == {"sdpa_fast_path", "tapped_explicit_path"}
    assert (df.future_max > 0).all() and (df.first_leak != "").all()


def test_padding_check_fails_when_the_padding_mask_is_dropped(monkeypatch):
    clean = m0.evaluate_padding(m0.measure_padding(CFG, SEEDS))
    assert clean["passed"], clean["detail"]
    real = attention.build_mask

    def no_padding(T, S, key_padding_mask=None, causal=False, leak=False, device=None):
        return real(T, S, None, causal, leak, device)

    monkeypatch.setattr(attention, "build_mask", no_padding)
    broken = m0.evaluate_padding(m0.measure_padding(CFG, SEEDS))
    assert not broken["passed"] and broken["refuted"], broken["detail"]
