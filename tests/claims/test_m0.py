"""M0's checks fail when the model is wrong in the way each is about (issues 8, 10, 16), and pass when it is not.

* ``causal_mask`` under ``causal_leak`` (the fault M0 must catch in the sensitivity run), and under a mask that
  hides each position from itself (``j < i`` in a patched ``build_mask``): the output dependency cannot see that
  one (out_i still reads in_i through the residual stream), the tapped attention weights and the fast path can;
* ``heads_distinct`` under ``single_head``; ``positional_encoding`` under ``no_positional_encoding``;
* ``padding_ignored`` with a key-padding mask that is dropped (patched ``build_mask``): padded keys get weight.
Faults a check is not about leave it green (a check that fails under every fault would prove nothing). Each
failing check is refuted as the protocol decides an exact criterion (``decision.decide_alone``)."""
from __future__ import annotations

import pytest
import torch

import claims.test_m0_model_checks as m0
import model.attention as attention
from harness.record import decision
from model import faults

torch.set_num_threads(1)

CFG = m0.model_config({"model": {"d_model": 16, "n_heads": 4, "d_ff": 32, "n_encoder_layers": 1,
                                 "n_decoder_layers": 2}})
SEEDS = [0, 1]
FAULT_OF = {"causal_mask": "causal_leak", "heads_distinct": "single_head",
            "positional_encoding": "no_positional_encoding"}


def outcome(name: str) -> tuple[str, str]:
    """The protocol's outcome of check ``name`` on CFG, and its detail."""
    measure, check = m0.CHECKS[name]
    holds, _, detail = check(measure(CFG, SEEDS))
    return decision.decide_alone(decision.exact(), holds=holds)["outcome"], detail


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    faults.set_fault(None)
    yield
    faults.set_fault(None)


@pytest.mark.parametrize("check", sorted(FAULT_OF))
def test_check_is_refuted_under_its_fault_only(check):
    clean, detail = outcome(check)
    assert clean == "passed", detail
    with faults.inject(FAULT_OF[check]):
        broken, detail = outcome(check)
    assert broken == "refuted", detail
    other = next(f for f in ("no_scale", "uniform_attention") if f != FAULT_OF[check])
    with faults.inject(other):
        assert outcome(check)[0] == "passed"


def test_causal_leak_is_seen_on_both_attention_paths_and_in_the_weights():
    with faults.inject("causal_leak"):
        df = m0.measure_causal(CFG, [0])
    assert set(df.path) == {"sdpa_fast_path", "tapped_explicit_path"}
    assert (df.future_max > 0).all() and (df.first_leak != "").all()
    assert (df.weight_future_max.dropna() > 0).all()


def _strict_causal(real):
    """``build_mask`` with ``j < i`` for ``j <= i``: each query is hidden from its own key."""
    def build_mask(T, S, key_padding_mask=None, causal=False, leak=False, device=None, window=None):
        allowed = real(T, S, key_padding_mask, False, leak, device, window)
        if causal:
            i = torch.arange(T, device=device).unsqueeze(1) + (S - T)
            j = torch.arange(S, device=device).unsqueeze(0)
            strict = (j < i + int(leak))[None, None]
            allowed = strict if allowed is None else allowed & strict
        return allowed
    return build_mask


def test_causal_mask_is_refuted_when_a_position_cannot_attend_to_itself(monkeypatch):
    monkeypatch.setattr(attention, "build_mask", _strict_causal(attention.build_mask))
    df = m0.measure_causal(CFG, SEEDS)
    holds, measured, detail = m0.check_causal(df)
    assert decision.decide_alone(decision.exact(), holds=holds)["outcome"] == "refuted", detail
    # what the dependency alone read (the old check) stays clean: the residual stream carries in_i to out_i
    assert measured["future_dependency"] == 0.0 and measured["past_dependency_min"] > 0.0
    # the weights through the taps see it: zero weight on the diagonal (and position 0 attends nowhere) ...
    assert measured["self_weight_min"] == 0.0 and measured["allowed_weight_min"] == 0.0
    # ... and the SDPA fast path (is_causal, no build_mask) no longer gives the tapped path's output
    assert measured["fast_path_gap"] > 1e-3


def test_padding_check_is_refuted_when_the_padding_mask_is_dropped():
    assert outcome("padding_ignored")[0] == "passed"
    with faults.inject("padding_leak"):
        broken, detail = outcome("padding_ignored")
    assert broken == "refuted", detail
