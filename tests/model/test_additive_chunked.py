"""The chunked additive score (ModelConfig.additive_chunk, R3's memory-lean form) computes the same
numbers and gradients as the materialised one; only memory differs."""
import pytest
import torch

from model import ModelConfig, MultiHeadAttention, additive_logits


def _qkv(T=7, S=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(2, 3, T, 4, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 3, S, 4, generator=g, dtype=torch.float64, requires_grad=True)
    v_a = torch.randn(3, 4, generator=g, dtype=torch.float64, requires_grad=True)
    return q, k, v_a


@pytest.mark.parametrize("chunk", [1, 3, 7, 100])          # 3 does not divide T=7; 100 > T
def test_chunked_matches_materialised_values_and_grads(chunk):
    q, k, v_a = _qkv()
    ref = additive_logits(q, k, v_a, 0.7)
    out = additive_logits(q, k, v_a, 0.7, chunk=chunk)
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    w = torch.randn_like(ref)
    g_ref = torch.autograd.grad((ref * w).sum(), (q, k, v_a))
    g_out = torch.autograd.grad((out * w).sum(), (q, k, v_a))
    for a, b in zip(g_out, g_ref):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_chunked_gradcheck():
    q, k, v_a = _qkv(T=4, S=3, seed=1)
    assert torch.autograd.gradcheck(lambda q, k, v: additive_logits(q, k, v, 1.3, chunk=3), (q, k, v_a))


def test_module_switch_same_output_and_grads():
    cfg = ModelConfig(src_vocab=8, d_model=16, n_heads=2, score="additive")
    torch.manual_seed(0)
    plain = MultiHeadAttention(cfg).double()
    lean = MultiHeadAttention(cfg.replace(additive_chunk=2)).double()
    lean.load_state_dict(plain.state_dict())
    x = torch.randn(3, 5, 16, dtype=torch.float64)
    mask = torch.tensor([[False] * 5, [False] * 4 + [True], [False] * 3 + [True] * 2])
    outs = []
    for m in (plain, lean):
        y = m(x, key_padding_mask=mask)
        y.pow(2).sum().backward()
        outs.append((y, [p.grad for p in m.parameters()]))
    torch.testing.assert_close(outs[1][0], outs[0][0])
    for a, b in zip(outs[1][1], outs[0][1]):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("bad", [0, -2, 2.5, True])
def test_additive_chunk_validated(bad):
    with pytest.raises(ValueError, match="additive_chunk"):
        ModelConfig(src_vocab=8, score="additive", additive_chunk=bad)
