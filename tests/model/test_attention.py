"""MultiHeadAttention checked against PyTorch's own attention (issue 2). If these fail, every
claim's verdict is about a different model than the paper's."""
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from model import (ModelConfig, MultiHeadAttention, build_mask, capture, henry_gain_init, masked_softmax,
                   scaled_dot_product)

torch.set_num_threads(1)


def _qkv(B=3, h=4, T=6, S=7, d=8, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, h, n, d, generator=g, dtype=dtype) for n in (T, S, S)]


def _pad_mask(B, S, seed=1):
    lengths = torch.randint(1, S + 1, (B,), generator=torch.Generator().manual_seed(seed))
    lengths[0] = S
    return torch.arange(S)[None, :] >= lengths[:, None]          # True = pad


def _mha(cfg, causal=False, dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    return MultiHeadAttention(cfg, causal=causal).to(dtype).eval()


@pytest.mark.parametrize("masked", ["none", "padding", "causal", "both"])
def test_explicit_path_equals_sdpa_float64(masked):
    q, k, v = _qkv(T=7, S=7)
    pad = _pad_mask(3, 7) if masked in ("padding", "both") else None
    mask = build_mask(7, 7, pad, causal=masked in ("causal", "both"))
    scale = 8 ** -0.5
    ours = scaled_dot_product(q, k, v, scale, mask, explicit=True)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)      # PyTorch's default scale
    torch.testing.assert_close(ours, ref, atol=1e-10, rtol=0)


@pytest.mark.parametrize("masked", ["none", "padding", "causal"])
def test_module_tapped_path_equals_fast_path_float64(masked):
    cfg = ModelConfig(d_model=32, n_heads=4)
    mha = _mha(cfg, causal=masked == "causal")
    x = torch.randn(3, 7, 32, dtype=torch.float64)
    pad = _pad_mask(3, 7) if masked == "padding" else None
    fast = mha(x, key_padding_mask=pad)
    with capture(mha):
        tapped = mha(x, key_padding_mask=pad)
    torch.testing.assert_close(tapped, fast, atol=1e-10, rtol=0)


def _copy_into_torch_mha(ours: MultiHeadAttention, d_model: int, h: int) -> nn.MultiheadAttention:
    ref = nn.MultiheadAttention(d_model, h, batch_first=True, dtype=ours.q_proj.weight.dtype)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    return ref.eval()


@pytest.mark.parametrize("tapped", [False, True])
@pytest.mark.parametrize("masked", ["none", "padding", "causal", "cross"])
def test_equals_torch_multihead_attention(masked, tapped):
    cfg = ModelConfig(d_model=24, n_heads=3)
    ours = _mha(cfg, causal=masked == "causal")
    ref = _copy_into_torch_mha(ours, 24, 3)
    x = torch.randn(2, 5, 24, dtype=torch.float64)
    mem = torch.randn(2, 9, 24, dtype=torch.float64) if masked == "cross" else None
    kv = x if mem is None else mem
    pad = _pad_mask(2, kv.shape[1]) if masked in ("padding", "cross") else None
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1) if masked == "causal" else None   # True = blocked
    expected, _ = ref(x, kv, kv, key_padding_mask=pad, attn_mask=causal, need_weights=False)
    if tapped:
        with capture(ours):
            got = ours(x, mem, key_padding_mask=pad)
    else:
        got = ours(x, mem, key_padding_mask=pad)
    torch.testing.assert_close(got, expected, atol=1e-10, rtol=0)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_equals_torch_transformer_encoder_layer(norm_first):
    from model import EncoderLayer
    d, h, ff = 32, 4, 64
    cfg = ModelConfig(d_model=d, n_heads=h, d_ff=ff, norm_first=norm_first)
    torch.manual_seed(0)
    ours = EncoderLayer(cfg).eval()
    ref = nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    ref.self_attn = _copy_into_torch_mha(ours.self_attn, d, h)
    ref.linear1.load_state_dict(ours.ff.linear1.state_dict())
    ref.linear2.load_state_dict(ours.ff.linear2.state_dict())
    ref.norm1.load_state_dict(ours.norm1.state_dict())
    ref.norm2.load_state_dict(ours.norm2.state_dict())
    x = torch.randn(3, 10, d)
    pad = _pad_mask(3, 10)
    with torch.no_grad():
        torch.testing.assert_close(ours(x, pad)[~pad], ref(x, src_key_padding_mask=pad)[~pad], atol=1e-5, rtol=0)
        torch.testing.assert_close(ours(x), ref(x), atol=1e-5, rtol=0)


def _logits(cfg, x, seed=0):
    mha = _mha(cfg, seed=seed)
    with capture(mha, "logits") as cache:
        mha(x)
    return cache["logits"]


def test_scale_switch():
    x = torch.randn(2, 5, 64, dtype=torch.float64)
    base = ModelConfig(d_model=64, n_heads=4)                      # d_k = 16
    default = _logits(base, x)
    unscaled = _logits(base.replace(scale="none"), x)
    assert torch.equal(unscaled, default * math.sqrt(16))          # exact: 1/4 is a power of two
    assert torch.equal(_logits(base.replace(scale_exponent=0.5), x), default)
    torch.testing.assert_close(_logits(base.replace(scale=0.1), x), unscaled * 0.1, atol=1e-12, rtol=0)
    torch.testing.assert_close(_logits(base.replace(scale_exponent=1.0), x), unscaled / 16, atol=1e-12, rtol=0)
    odd = ModelConfig(d_model=48, n_heads=4)                        # d_k = 12: not a power of two
    torch.testing.assert_close(_logits(odd.replace(scale="none"), x[..., :48]),
                               _logits(odd, x[..., :48]) * math.sqrt(12), atol=1e-12, rtol=1e-12)
    assert base.attn_scale() == 0.25 and base.replace(score="additive").attn_scale() == 1.0


@pytest.mark.parametrize("score", ["dot", "additive"])
def test_causal_jacobian_is_lower_triangular(score):
    cfg = ModelConfig(d_model=16, n_heads=2, score=score)
    mha = _mha(cfg, causal=True)
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    J = torch.autograd.functional.jacobian(lambda inp: mha(inp)[0], x)[:, :, 0]    # (T, d, T, d)
    dep = J.abs().sum(dim=(1, 3))                                                  # (i, j)
    assert torch.all(dep.triu(1) == 0), "output i depends on a later input j > i"
    lower = torch.ones_like(dep, dtype=torch.bool).tril()
    assert torch.all(dep[lower] > 0), "output i should depend on every j <= i"


def test_padded_keys_get_zero_weight_and_do_not_change_outputs():
    cfg = ModelConfig(d_model=16, n_heads=2)
    mha = _mha(cfg)
    x = torch.randn(3, 6, 16, dtype=torch.float64)
    pad = _pad_mask(3, 6)
    with capture(mha, "weights") as cache:
        out = mha(x, key_padding_mask=pad)
    w = cache["weights"]
    assert torch.all(w.masked_select(pad[:, None, None, :]) == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones_like(w.sum(-1)), atol=1e-12, rtol=0)
    x2 = x.masked_fill(pad.unsqueeze(-1), 5.0)                    # change only the padded positions
    out2 = mha(x2, key_padding_mask=pad)
    torch.testing.assert_close(out2[~pad], out[~pad], atol=1e-12, rtol=0)


def test_fully_masked_query_gets_zero_weights_not_nan():
    logits = torch.randn(1, 1, 2, 3)
    mask = torch.tensor([[False, False, False], [True, False, True]])[None, None]
    w = masked_softmax(logits, mask)
    assert torch.all(w[..., 0, :] == 0) and torch.isfinite(w).all()


@pytest.mark.parametrize("gain", [1.0, 3.0])
def test_l2_qk_norm_bounds_logits_by_gain_times_scale(gain):
    cfg = ModelConfig(d_model=32, n_heads=4, qk_norm="l2", qk_norm_gain_init=gain)
    mha = _mha(cfg)
    x = 50 * torch.randn(4, 9, 32, dtype=torch.float64)               # large inputs: unnormed logits explode
    with capture(mha, "logits") as cache:
        mha(x)
    bound = gain * cfg.attn_scale()
    assert cache["logits"].abs().max() <= bound * (1 + 1e-12)
    assert cache["logits"].abs().max() > 0.5 * bound                  # the bound is nearly reached, not vacuous
    plain = _logits(cfg.replace(qk_norm="none"), x)
    assert plain.abs().max() > 10 * bound                             # the norm is what enforces it


def test_qk_norm_gain_is_learnable_and_layernorm_normalises():
    cfg = ModelConfig(d_model=32, n_heads=4, qk_norm="layernorm", qk_norm_gain_init=2.0)
    mha = _mha(cfg)
    assert mha.qk_gain.requires_grad and mha.qk_gain.shape == (4, 1, 1)
    with capture(mha, "q", "k") as cache:
        mha(10 * torch.randn(2, 7, 32, dtype=torch.float64)).sum().backward()
    k = cache["k"]
    torch.testing.assert_close(k.mean(-1), torch.zeros_like(k.mean(-1)), atol=1e-10, rtol=0)
    torch.testing.assert_close(cache["q"].pow(2).mean(-1), torch.full_like(k.mean(-1), 4.0), atol=1e-3, rtol=0)
    assert mha.qk_gain.grad is not None and mha.qk_gain.grad.abs().sum() > 0


def _qk_at_init(qk_norm, gain=1.0, d_k=64, n=64, seed=0):
    """Unscaled logits (q.k as it enters the score) of a fresh module on unit-variance inputs, and its q, k taps."""
    cfg = ModelConfig(d_model=32, n_heads=2, d_k=d_k, qk_norm=qk_norm, qk_norm_gain_init=gain, scale="none")
    mha = _mha(cfg, seed=seed)
    x = torch.randn(8, n, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    with capture(mha, "q", "k", "logits") as cache:
        mha(x).sum().backward()
    return mha, cache


def test_rmsnorm_qk_norm_shapes_unit_mean_square_and_variance_d_k_at_init():
    for d_k in (16, 64):
        mha, c = _qk_at_init("rmsnorm", d_k=d_k)
        assert mha.q_norm_gain.shape == mha.k_norm_gain.shape == (d_k,) and not hasattr(mha, "qk_gain")
        assert c["q"].shape == (8, 2, 64, d_k) and c["logits"].shape == (8, 2, 64, 64)
        for t in (c["q"], c["k"]):                           # RMSNorm at gain 1: mean square 1 (up to eps)
            torch.testing.assert_close(t.pow(2).mean(-1), torch.ones_like(t[..., 0]), atol=1e-3, rtol=0)
        assert 0.7 < c["logits"].var().item() / d_k < 1.4     # Var(q.k) ~ d_k: what 1/sqrt(d_k) removes
    _, c = _qk_at_init("rmsnorm", gain=0.5)                  # the gains multiply each component: var * 0.5^4
    assert 0.7 < c["logits"].var().item() / (64 * 0.5 ** 4) < 1.4


def test_rmsnorm_gains_are_learnable_per_dimension():
    mha, _ = _qk_at_init("rmsnorm", d_k=16)
    for g in (mha.q_norm_gain, mha.k_norm_gain):
        assert g.requires_grad and g.grad is not None and (g.grad != 0).sum() > 8    # one gradient per dimension
    assert {n for n, _ in mha.named_parameters()} >= {"q_norm_gain", "k_norm_gain"}


def test_l2_qk_norm_is_henry_cosine_times_a_learned_per_head_gain():
    g0 = henry_gain_init(9)
    mha, c = _qk_at_init("l2", gain=g0)
    assert mha.qk_gain.shape == (2, 1, 1) and mha.qk_gain.requires_grad
    assert mha.qk_gain.grad is not None and mha.qk_gain.grad.abs().sum() > 0
    torch.testing.assert_close(c["k"].norm(dim=-1), torch.ones_like(c["k"][..., 0]), atol=1e-10, rtol=0)
    torch.testing.assert_close(c["q"].norm(dim=-1), torch.full_like(c["q"][..., 0], g0), atol=0, rtol=1e-6)
    assert c["logits"].abs().max() <= g0 * (1 + 1e-12)      # logits = g * cos(q, k)
    for d_k in (16, 64):                                     # Var(cos) ~ 1/d_k: the cosine shrinks with d_k
        _, c = _qk_at_init("l2", gain=1.0, d_k=d_k)
        assert 0.7 < c["logits"].var().item() * d_k < 1.4


def test_henry_gain_init_from_the_sequence_length():
    assert henry_gain_init(9) == pytest.approx(math.log2(72)) and henry_gain_init(2) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="seq_len"):
        henry_gain_init(1)


def test_additive_score_is_bahdanau():
    cfg = ModelConfig(d_model=16, n_heads=2, score="additive")
    mha = _mha(cfg)
    x = torch.randn(2, 4, 16, dtype=torch.float64)
    with capture(mha, "q", "k", "logits") as c:
        mha(x)
    q, k = c["q"], c["k"]                                             # (B, h, T, d_k)
    b, hd, t, s = 1, 1, 2, 3
    expected = mha.v_a[hd] @ torch.tanh(q[b, hd, t] + k[b, hd, s])
    torch.testing.assert_close(c["logits"][b, hd, t, s], expected.detach(), atol=1e-12, rtol=0)


def test_d_k_d_v_independent_of_d_model():
    cfg = ModelConfig(d_model=16, n_heads=2, d_k=40, d_v=6)
    mha = _mha(cfg)
    with capture(mha) as c:
        y = mha(torch.randn(2, 3, 16, dtype=torch.float64))
    assert y.shape == (2, 3, 16)
    assert c["q"].shape == (2, 2, 3, 40) and c["v"].shape == (2, 2, 3, 6) and c["out"].shape == (2, 2, 3, 6)
    assert cfg.attn_scale() == 40 ** -0.5


def test_l2_gain_learnt_as_log_g_starts_at_g0_and_the_default_is_unchanged():
    g0 = henry_gain_init(9)
    cfg = ModelConfig(d_model=32, n_heads=2, d_k=16, qk_norm="l2", qk_norm_gain_init=g0, scale="none")
    lin, log = _mha(cfg), _mha(cfg.replace(qk_norm_gain_param="log"))
    assert not hasattr(lin, "qk_log_gain") and not hasattr(log, "qk_gain")          # default: g itself, as before
    assert {n for n, _ in log.named_parameters()} >= {"qk_log_gain"}
    torch.testing.assert_close(log.gain(), torch.full((2, 1, 1), g0, dtype=torch.float64))
    x = torch.randn(4, 9, 32, dtype=torch.float64)
    torch.testing.assert_close(_logits(cfg, x), _logits(cfg.replace(qk_norm_gain_param="log"), x))
    assert ModelConfig().qk_norm_gain_param == "linear"


def test_with_log_g_the_scale_is_a_shift_of_the_gain_start():
    """Q1's l2 control: learnt as log g, l2 with 1/sqrt(d_k) started at g0 * sqrt(d_k) is the arm without it started
    at g0: the same logits, and the same gradient on every parameter (Adam's steps match)."""
    d_k, g0 = 16, henry_gain_init(9)
    base = ModelConfig(d_model=32, n_heads=2, d_k=d_k, qk_norm="l2", qk_norm_gain_param="log")
    scaled = _mha(base.replace(qk_norm_gain_init=g0 * math.sqrt(d_k), scale_exponent=0.5))
    plain = _mha(base.replace(qk_norm_gain_init=g0, scale="none"))
    x = torch.randn(4, 9, 32, dtype=torch.float64)
    logits = []
    for mha in (scaled, plain):
        with capture(mha, "logits") as cache:
            mha(x).pow(2).sum().backward()
        logits.append(cache["logits"])
    torch.testing.assert_close(logits[0], logits[1])
    for (n, a), (_, b) in zip(scaled.named_parameters(), plain.named_parameters()):
        torch.testing.assert_close(a.grad, b.grad, msg=n)
    # learnt as g itself, the two differ: the scaled arm's gradient on g is 1/sqrt(d_k) of the other's
    lin = [_mha(m.replace(qk_norm_gain_param="linear", **k)) for m, k in
           ((base, dict(qk_norm_gain_init=g0 * math.sqrt(d_k), scale_exponent=0.5)),
            (base, dict(qk_norm_gain_init=g0, scale="none")))]
    for mha in lin:
        mha(x).pow(2).sum().backward()
    torch.testing.assert_close(lin[0].qk_gain.grad * math.sqrt(d_k), lin[1].qk_gain.grad)
