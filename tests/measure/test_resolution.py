"""harness/measure/resolution.py: the linear probe, its base-rate correction, and that resolution separates kept-apart
positions from averaged ones (so the C5/Q2 metric can come out either way)."""
import numpy as np
import pytest
import torch

from harness.measure import resolution


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def test_probe_reads_a_linear_code_and_not_noise():
    g = _gen(0)
    n, d, k = 3000, 16, 8
    emb = torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    x = emb[y] + 0.1 * torch.randn(n, d, generator=g)
    assert resolution.linear_probe_accuracy(x[:2000], y[:2000], x[2000:], y[2000:], k) > 0.99
    noise = torch.randn(n, d, generator=g)
    acc = resolution.linear_probe_accuracy(noise[:2000], y[:2000], noise[2000:], y[2000:], k)
    assert acc < 0.25                                            # chance is 1/8
    assert resolution.decodability(x[:2000], y[:2000], x[2000:], y[2000:], k) > 0.98
    assert abs(resolution.decodability(noise[:2000], y[:2000], noise[2000:], y[2000:], k)) < 0.15


def test_decodability_is_zero_for_a_label_that_never_varies():
    x = torch.randn(100, 4, generator=_gen(1))
    y = torch.full((100,), 3)
    assert resolution.decodability(x[:50], y[:50], x[50:], y[50:], 5) == 0.0


def test_positional_resolution_separates_kept_apart_from_averaged_positions():
    """Four slots, tokens from 16: concatenating per-slot embeddings resolves every slot; averaging the same
    embeddings (no slot tag, the position-bound case a single head faces) leaves each slot barely decodable."""
    g = _gen(2)
    n, m, v, d = 4000, 4, 16, 16
    emb = torch.randn(v, d, generator=g)
    tok = torch.randint(0, v, (n, m), generator=g)
    kept = emb[tok].reshape(n, m * d)                            # heads that each attend one slot
    averaged = emb[tok].mean(1)                                  # one head averaging the slots
    apart = resolution.positional_resolution(kept[:3000], tok[:3000], kept[3000:], tok[3000:], v)
    blurred = resolution.positional_resolution(averaged[:3000], tok[:3000], averaged[3000:], tok[3000:], v)
    assert apart.shape == (m,) and apart.min() > 0.95
    assert blurred.max() < 0.4 and blurred.mean() < apart.mean() - 0.5


def test_head_resolution_sharp_head_vs_sink_head():
    g = _gen(3)
    n, s, v, d = 3000, 6, 10, 12
    emb = torch.randn(v, d, generator=g)
    tokens = torch.randint(0, v, (n, s), generator=g)
    tokens[:, 0] = 0                                             # BOS-like first token, always the same
    sharp_pos = torch.randint(1, s, (n,), generator=g)
    w = torch.zeros(n, 2, s)
    w[torch.arange(n), 0, sharp_pos] = 0.9
    w[:, 0] += 0.1 / s
    w[:, 1, 0] = 0.8                                             # head 1: a sink on position 0
    w[:, 1, 1:] = 0.2 / (s - 1)
    out = torch.einsum("nhs,nsd->nhd", w, emb[tokens])
    res = resolution.head_resolution(out[:2000], w[:2000], tokens[:2000], out[2000:], w[2000:], tokens[2000:], v)
    assert res.shape == (2,)
    assert res[0] > 0.9 and res[1] == 0.0
    top = resolution.top_attended_tokens(w[:5], tokens[:5])
    assert top[:, 1].tolist() == [0] * 5 and top[:, 0].tolist() == tokens[:5].gather(1, sharp_pos[:5, None])[:, 0].tolist()


def test_bad_inputs_raise():
    x = torch.randn(10, 3)
    with pytest.raises(ValueError, match="x_fit"):
        resolution.linear_probe_accuracy(x[0], torch.zeros(10), x, torch.zeros(10), 3)
    with pytest.raises(ValueError, match="labels"):
        resolution.linear_probe_accuracy(x, torch.zeros(9), x, torch.zeros(10), 3)
    with pytest.raises(ValueError, match="lie in"):
        resolution.linear_probe_accuracy(x, torch.full((10,), 5), x, torch.zeros(10), 3)
    with pytest.raises(ValueError, match="n_classes"):
        resolution.linear_probe_accuracy(x, torch.zeros(10), x, torch.zeros(10), 1)
    with pytest.raises(ValueError, match="width"):
        resolution.linear_probe_accuracy(x, torch.zeros(10), torch.randn(10, 4), torch.zeros(10), 3)
    with pytest.raises(ValueError, match="targets"):
        resolution.positional_resolution(x, torch.zeros(10, 2), x, torch.zeros(10, 3), 3)
    with pytest.raises(ValueError, match="weights"):
        resolution.top_attended_tokens(torch.zeros(4, 2, 5), torch.zeros(4, 6, dtype=torch.long))
    assert np.isfinite(resolution.linear_probe_accuracy(x, torch.zeros(10), x, torch.zeros(10), 3))
