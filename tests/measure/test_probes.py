"""harness/measure/probes.py: exact path lengths per architecture (d up to 64), probes against hand-worked and autograd
values, and checks that each probe can report the other outcome."""
import math

import numpy as np
import pytest
import torch

from harness.measure import probes
from harness.data import tasks
from harness.train.loop import build_for_task
from model import ModelConfig, build

torch.set_num_threads(1)

PROBE_CFG = ModelConfig.tiny(d_model=8, n_heads=2, d_ff=16, n_encoder_layers=2, max_len=80)
DS = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64]


def built(name, **kw):
    torch.manual_seed(0)
    return build(name, PROBE_CFG, n_classes=3, **kw)


# ------------------------------------------------------------------------------------------ path length
def test_path_length_self_attention_is_one():
    model = built("encoder_tagger")
    assert probes.path_lengths(model, DS) == {d: 1 for d in DS}
    assert probes.path_length(model, 7) == 1
    causal = built("encoder_tagger", causal=True)
    assert probes.path_length(causal, 64) == 1


@pytest.mark.parametrize("k", [3, 5])
def test_path_length_causal_conv(k):
    model = built("conv", kernel_size=k, n_layers=math.ceil(64 / (k - 1)))
    assert probes.path_lengths(model, DS) == {d: math.ceil(d / (k - 1)) for d in DS}


def test_path_length_dilated_conv():
    model = built("dilated_conv", n_layers=7)
    assert probes.path_lengths(model, DS) == {d: math.floor(math.log2(d)) + 1 for d in DS}


def test_path_length_lstm():
    model = built("lstm_tagger", n_layers=1)
    assert probes.path_lengths(model, DS) == {d: d for d in DS}
    assert probes.path_length(model, 6) == 6                     # alone, on a sequence of d + 1


def test_path_length_can_disagree_with_the_formula():
    """It measures: a non-causal kernel-3 conv sees one position back per layer, so d layers, not ceil(d/2);
    a stack too shallow for d reports None; a model whose path is broken reports None."""
    centred = built("conv", kernel_size=3, n_layers=8, causal=False)
    assert probes.path_lengths(centred, [1, 2, 5, 8]) == {1: 1, 2: 2, 5: 5, 8: 8}
    shallow = built("conv", kernel_size=3, n_layers=4)
    assert probes.path_lengths(shallow, [8, 9]) == {8: 4, 9: None}
    attn = built("encoder_tagger")
    assert probes.path_length(attn, 5, max_layers=0) is None
    lstm = built("lstm_tagger", n_layers=1)
    assert probes.path_length(lstm, 10, max_layers=5) is None


def test_float64_keeps_paths_that_float32_loses():
    """Why the probe runs in float64 (PATH_TOL): the deep conv path at d=64 is tiny but nonzero."""
    model = built("conv", kernel_size=3, n_layers=32)
    m64 = probes._float64_copy(model)
    h = probes._input_states(m64, 65, 1, 0)
    mag = probes.dependency_magnitude(m64, h, 64, n_layers=32)[0]
    assert probes.PATH_TOL < mag < 1e-6
    assert probes.dependency_magnitude(m64, h, 64, n_layers=31)[0] == 0.0


def test_input_grad_vs_distance():
    lstm = probes.input_grad_vs_distance(built("lstm_tagger", n_layers=1), [1, 2, 4, 8, 16, 32])
    assert list(lstm) == [1, 2, 4, 8, 16, 32] and all(v > 0 for v in lstm.values())
    assert lstm[32] < lstm[8] < lstm[1]                          # recurrence: decays with distance
    attn = probes.input_grad_vs_distance(built("encoder_tagger"), [1, 2, 4, 8, 16, 32])
    assert max(attn.values()) / min(attn.values()) < 10          # attention: same order at every distance


# ----------------------------------------------------------------------------------------- weight probes
def test_entropy_max_saturation_sink_hand_worked():
    n = 8
    uniform = torch.full((2, 3, 4, n), 1.0 / n)
    onehot = torch.zeros(2, 3, 4, n)
    onehot[..., 0] = 1.0
    assert probes.attention_entropy(uniform) == pytest.approx([math.log(n)] * 3)
    assert probes.attention_entropy(onehot) == pytest.approx([0.0] * 3)
    assert probes.max_attention_weight(uniform) == pytest.approx([1 / n] * 3)
    assert probes.saturated_fraction(onehot) == pytest.approx([1.0] * 3)
    assert probes.saturated_fraction(uniform) == pytest.approx([0.0] * 3)
    assert probes.sink_mass(onehot) == pytest.approx([1.0] * 3)
    assert probes.sink_mass(uniform) == pytest.approx([1 / n] * 3)
    mixed = torch.cat([uniform[:, :1], onehot[:, :1]], 1)       # head 0 uniform, head 1 one-hot
    assert probes.attention_entropy(mixed) == pytest.approx([math.log(n), 0.0])
    # padded query rows are left out
    w = uniform.clone()
    w[:, :, -1] = onehot[:, :, -1]
    pad = torch.zeros(2, 4, dtype=torch.bool)
    pad[:, -1] = True
    assert probes.attention_entropy(w, pad) == pytest.approx([math.log(n)] * 3)
    assert probes.attention_entropy(w)[0] == pytest.approx(math.log(n) * 3 / 4)
    with pytest.raises(ValueError, match="thr"):
        probes.saturated_fraction(w, thr=1.5)


def test_softmax_jacobian_norm_matches_autograd():
    torch.manual_seed(0)
    logits = torch.randn(2, 2, 3, 6, dtype=torch.float64) * 3
    w = torch.softmax(logits, -1)
    norms = []
    for row in logits.reshape(-1, 6):
        jac = torch.autograd.functional.jacobian(lambda z: torch.softmax(z, -1), row)
        norms.append(jac.norm().item())
    assert probes.softmax_jacobian_norm(w) == pytest.approx(float(np.mean(norms)))
    n = 6
    assert probes.softmax_jacobian_norm(torch.full((1, 1, 1, n), 1 / n)) == pytest.approx(math.sqrt(1 / n - 1 / n**2))
    onehot = torch.zeros(1, 1, 1, n)
    onehot[..., 2] = 1
    assert probes.softmax_jacobian_norm(onehot) == pytest.approx(0.0)


def test_variance_probes_iid_and_dependent():
    g = torch.Generator().manual_seed(0)
    for d in (16, 256):
        q = torch.randn(8, 2, 64, d, generator=g)
        k = torch.randn(8, 2, 64, d, generator=g)
        assert probes.qk_logit_variance(q, k) / d == pytest.approx(1.0, abs=0.08)
        assert probes.qk_logit_variance(q, k, scale=d ** -0.5) == pytest.approx(1.0, abs=0.08)
        assert probes.component_variance(q) == pytest.approx(1.0, abs=0.05)
    assert probes.component_variance(q * 0.5, per_head=True) == pytest.approx([0.25, 0.25], abs=0.02)
    assert probes.qk_logit_variance(q, k, per_head=True).shape == (2,)
    corr = probes.qk_component_correlation(q[..., :16], k[..., :16])
    assert all(v < 0.05 for v in corr.values())
    same = probes.qk_component_correlation(q[..., :16], q[..., :16])
    assert same["qk_same_index"] == pytest.approx(1.0)
    mixed = q[..., :16] + q[..., :1]                               # every component shares one: correlated
    assert probes.qk_component_correlation(mixed, k[..., :16])["q_offdiag"] > 0.4


def test_run_with_taps_on_the_real_model():
    task = tasks.KeyValueLookup(n_pairs=4, n_keys=6, n_values=4)
    model = build_for_task("encoder_tagger", task, ModelConfig.tiny(n_encoder_layers=1), seed=0)
    batch = task.heldout(32)
    cache, logits = probes.run_with_taps(model, batch, ["*.q", "*.logits", "*.weights"], task.tgt_vocab,
                                         backward=True)
    q = cache["encoder.layers.0.self_attn.q"]
    assert q.shape[:2] == (32, 4) and 0.05 < probes.component_variance(q) < 2
    grad = cache.grad("encoder.layers.0.self_attn.logits")
    mag = probes.softmax_grad_magnitude(grad)
    assert mag > 0 and math.isfinite(mag)
    assert all(p.grad is None for p in model.parameters())       # no gradient left behind
    w = cache["encoder.layers.0.self_attn.weights"]
    assert probes.attention_entropy(w).shape == (4,) and probes.sink_mass(w).shape == (4,)
    assert model.training                                        # mode restored


# ------------------------------------------------------------------------------------ saturation check
def test_saturation_check_flags_each_direction():
    dims = [8, 32, 128, 512]
    kw = dict(seeds=(0, 1), n_keys=32, n_queries=16, batch=8)
    unscaled = probes.saturation_check(probes.dot_score(0.0), dims, **kw)
    scaled = probes.saturation_check(probes.dot_score(0.5), dims, **kw)
    by_d = probes.saturation_check(probes.dot_score(1.0), dims, **kw)
    assert unscaled.logit_trend == "grows" and unscaled.slopes["logit_std"].contains(0.5)
    assert unscaled.trends["grad_mean_abs"] == "shrinks"
    assert scaled.logit_trend == "flat" and scaled.trends["grad_mean_abs"] == "flat"
    assert by_d.logit_trend == "shrinks"
    assert by_d.measurements.query("dim == 512")["entropy_ratio"].min() > 0.99    # uniform: entropy -> ln n
    assert len(unscaled.measurements) == 8
    assert set(unscaled.measurements.columns) >= {"dim", "seed", "logit_std", "entropy", "grad_mean_abs",
                                                  "jacobian_norm", "saturated_fraction"}


def test_saturation_check_with_a_parametrised_score_and_errors():
    def additive(dim, gen):
        w = torch.randn(dim, dim, generator=gen) / math.sqrt(dim)
        v = torch.randn(dim, generator=gen) / math.sqrt(dim)
        return lambda q, k: torch.tanh((q @ w).unsqueeze(2) + (k @ w).unsqueeze(1)) @ v

    r = probes.saturation_check(additive, [8, 16, 32], n_keys=16, n_queries=8, batch=4, seeds=(0,))
    assert r.logit_trend in ("grows", "flat", "shrinks") and len(r.measurements) == 3
    with pytest.raises(ValueError, match="dims"):
        probes.saturation_check(probes.dot_score(0.5), [8])
    with pytest.raises(ValueError, match="shape"):
        probes.saturation_check(lambda d, g: (lambda q, k: q), [8, 16], seeds=(0, 1))
