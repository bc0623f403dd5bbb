"""Each named fault changes what it claims to change, and only while active (issue 10 builds the
suite-sensitivity run on these)."""
import math
import re

import pytest
import torch

from model import (FAULTS, DecoderLM, EncoderTagger, ModelConfig, MultiHeadAttention, active_fault,
                   capture, inject, set_fault)

torch.set_num_threads(1)
CFG = ModelConfig(d_model=32, n_heads=4, src_vocab=16, n_encoder_layers=1, n_decoder_layers=1)


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    set_fault(None)
    yield
    set_fault(None)


def _mha(cfg=CFG, causal=False):
    torch.manual_seed(0)
    return MultiHeadAttention(cfg, causal=causal).double().eval()


def _x(B=2, T=6, seed=0):
    return torch.randn(B, T, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def _taps(mha, x, **kw):
    with capture(mha) as cache:
        out = mha(x, **kw)
    return out, cache


def test_registry_api():
    """Read from the registry (model/faults.py), not a copy of it: a new fault costs that file and the model code
    it changes, nothing here."""
    names = list(FAULTS)
    assert names and all(isinstance(FAULTS[f], str) and FAULTS[f].strip() for f in names), "say what it breaks"
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", f) for f in names), "a fault is named like --inject-fault's value"
    with pytest.raises(ValueError, match=f"{names[0]}.*{names[-1]}"):
        set_fault("leak")
    with pytest.raises(ValueError, match="valid faults"):
        with inject("nope"):
            pass
    outer, inner = names[0], names[-1]
    with inject(outer):
        assert active_fault() == outer
        with inject(inner):
            assert active_fault() == inner
        assert active_fault() == outer
    assert active_fault() is None
    set_fault(inner)
    assert active_fault() == inner


def _probe_outputs() -> list[torch.Tensor]:
    """What the model computes on a spread of paths (dot and additive scores, causal and key-padded self-attention
    over more keys than local_window reaches, an encoder with positions), float64."""
    T = 12
    x = _x(T=T)
    pad = torch.zeros(2, T, dtype=torch.bool)
    pad[1, 8:] = True
    torch.manual_seed(0)
    tagger = EncoderTagger(CFG, 3).double().eval()
    tokens = torch.randint(3, 16, (2, T), generator=torch.Generator().manual_seed(0))
    return [_mha()(x), _mha(CFG.replace(score="additive"))(x), _mha(causal=True)(x),
            _mha()(x, key_padding_mask=pad), tagger(tokens)]


@pytest.mark.parametrize("fault", list(FAULTS))
def test_every_registered_fault_changes_what_the_model_computes(fault):
    """Each fault of the registry (a new one included, with no edit here) changes some output of the model, and
    only while active; the tests below pin down what each one changes."""
    clean = _probe_outputs()
    with inject(fault):
        broken = _probe_outputs()
    assert any((a - b).abs().max() > 1e-6 for a, b in zip(clean, broken)), f"{fault} changes none of the probes"
    assert all(torch.equal(a, b) for a, b in zip(clean, _probe_outputs()))


@pytest.mark.parametrize("fault, factor", [("no_scale", math.sqrt(8)), ("scale_by_dk", 1 / math.sqrt(8)),
                                           ("scale_inverted", 8.0)])
def test_scale_faults_change_a_scale_derived_from_d_k_only(fault, factor):
    mha, x = _mha(), _x()
    out, clean = _taps(mha, x)
    fast_clean = mha(x)
    with inject(fault):
        broken_out, broken = _taps(mha, x)
        fast_broken = mha(x)                                 # the SDPA fast path is broken too
        assert mha.effective_scale() == pytest.approx(CFG.attn_scale() * factor)
    torch.testing.assert_close(broken["logits"], clean["logits"] * factor, atol=1e-12, rtol=1e-12)
    torch.testing.assert_close(fast_broken, broken_out, atol=1e-10, rtol=0)
    assert (fast_broken - fast_clean).abs().max() > 1e-3
    alpha = _mha(CFG.replace(scale_exponent=0.25))             # d_k^-alpha is derived from d_k too
    with inject(fault):
        expected = {"no_scale": 1.0, "scale_by_dk": 8 ** -0.5, "scale_inverted": 8 ** 0.25}[fault]
        assert alpha.effective_scale() == pytest.approx(expected)
    for explicit in (CFG.replace(scale=CFG.attn_scale()), CFG.replace(scale="none"), CFG.replace(score="additive")):
        m = _mha(explicit)
        ref = m(x)
        with inject(fault):
            assert torch.equal(m(x), ref)                    # a number, "none" and additive are not derived


def test_uniform_attention_gives_uniform_weights_over_allowed_keys():
    mha, x = _mha(causal=True), _x()
    pad = torch.zeros(2, 6, dtype=torch.bool)
    pad[1, 4:] = True
    clean_out = mha(x, key_padding_mask=pad)
    with inject("uniform_attention"):
        out, cache = _taps(mha, x, key_padding_mask=pad)
        assert torch.equal(mha(x, key_padding_mask=pad), out)      # no taps: same broken path
    w = cache["weights"]
    allowed = torch.ones(6, 6, dtype=torch.bool).tril()[None, None] & ~pad[:, None, None, :]
    expected = allowed.double() / allowed.double().sum(-1, keepdim=True).clamp_min(1)
    torch.testing.assert_close(w, expected.expand_as(w), atol=0, rtol=0)
    assert (out - clean_out).abs().max() > 1e-3


def test_single_head_makes_every_head_use_head_zero():
    mha, x = _mha(), _x()
    clean_out, clean = _taps(mha, x)
    assert not torch.allclose(clean["q"][:, 1], clean["q"][:, 0])
    with inject("single_head"):
        out, cache = _taps(mha, x)
    for name in ("q", "k", "v", "weights", "out"):
        t = cache[name]
        assert torch.equal(t, t[:, :1].expand_as(t)), name
    torch.testing.assert_close(cache["q"][:, 0], clean["q"][:, 0])
    assert (out - clean_out).abs().max() > 1e-3


def _dependency(fn, T=6):
    x = torch.randn(1, T, 32, dtype=torch.float64)
    J = torch.autograd.functional.jacobian(lambda inp: fn(inp)[0], x)[:, :, 0]
    return J.abs().sum(dim=(1, 3))


def test_causal_leak_lets_position_i_see_i_plus_one_only():
    mha = _mha(causal=True)
    clean = _dependency(mha)
    assert torch.all(clean.triu(1) == 0)
    with inject("causal_leak"):
        leaky = _dependency(mha)
        with capture(mha):                                           # tapped path leaks the same way
            tapped = _dependency(mha)
    diag1 = torch.diagonal(leaky, offset=1)
    assert torch.all(diag1 > 0) and torch.all(leaky.triu(2) == 0)
    assert torch.equal(leaky > 0, tapped > 0)
    bidir = _mha()                                                   # non-causal attention is unaffected
    ref = bidir(_x())
    with inject("causal_leak"):
        assert torch.equal(bidir(_x()), ref)


def test_causal_leak_reaches_decoder_lm():
    torch.manual_seed(0)
    lm = DecoderLM(CFG).double()
    h = lm.embed(torch.randint(3, 16, (1, 6)))
    with inject("causal_leak"):
        J = torch.autograd.functional.jacobian(lambda x: lm.features(x)[0], h)[:, :, 0]
    dep = J.abs().sum(dim=(1, 3))
    assert torch.all(torch.diagonal(dep, offset=1) > 0)


def test_no_positional_encoding_removes_position():
    torch.manual_seed(0)
    tagger = EncoderTagger(CFG, 3).double().eval()
    x = torch.randint(3, 16, (1, 6))
    perm = torch.tensor([3, 1, 5, 0, 2, 4])
    emb = tagger.embedding
    scaled_tokens = emb.tok(x) * emb.multiplier
    assert not torch.allclose(tagger.embed(x), scaled_tokens)
    clean_perm = tagger(x[:, perm])
    assert not torch.allclose(clean_perm, tagger(x)[:, perm])       # with positions: order matters
    with inject("no_positional_encoding"):
        torch.testing.assert_close(tagger.embed(x), scaled_tokens, atol=0, rtol=0)
        # without positions a bidirectional encoder is permutation-equivariant
        torch.testing.assert_close(tagger(x[:, perm]), tagger(x)[:, perm], atol=1e-12, rtol=0)


def test_no_fault_is_a_no_op():
    mha, x = _mha(), _x()
    ref = mha(x)
    with inject(None):
        assert torch.equal(mha(x), ref)


def test_local_window_cuts_self_attention_beyond_its_reach_only():
    from model.faults import LOCAL_WINDOW
    T = 2 * LOCAL_WINDOW + 3
    mha = _mha()
    x = torch.randn(1, T, 32, dtype=torch.float64)
    clean = _dependency(mha, T)
    assert torch.all(clean > 0)
    with inject("local_window"):
        local = _dependency(mha, T)
        with capture(mha):
            tapped = _dependency(mha, T)
    i, j = torch.meshgrid(torch.arange(T), torch.arange(T), indexing="ij")
    assert torch.equal(local > 0, (i - j).abs() <= LOCAL_WINDOW) and torch.equal(tapped > 0, local > 0)
    memory = torch.randn(1, T, 32, dtype=torch.float64)
    ref = mha(x, memory=memory)
    with inject("local_window"):
        assert torch.equal(mha(x, memory=memory), ref)             # cross-attention keeps every key


def test_additive_no_tanh_makes_the_weights_independent_of_the_query():
    mha = _mha(CFG.replace(score="additive"))
    x = _x()
    _, clean = _taps(mha, x)
    with inject("additive_no_tanh"):
        _, broken = _taps(mha, x)
    w = broken["weights"]
    torch.testing.assert_close(w, w[:, :, :1].expand_as(w), atol=1e-12, rtol=0)    # every query, one row
    assert not torch.allclose(clean["weights"], clean["weights"][:, :, :1].expand_as(clean["weights"]))
    dot = _mha()
    ref = dot(x)
    with inject("additive_no_tanh"):
        assert torch.equal(dot(x), ref)


def test_padding_leak_drops_the_key_padding_mask():
    mha, x = _mha(), _x()
    pad = torch.zeros(2, 6, dtype=torch.bool)
    pad[1, 4:] = True
    with inject("padding_leak"):
        _, cache = _taps(mha, x, key_padding_mask=pad)
        leaked = mha(x, key_padding_mask=pad)
    assert (cache["weights"][1, :, :, 4:] > 0).all()
    torch.testing.assert_close(leaked, mha(x), atol=1e-12, rtol=0)          # as if nothing were padded
