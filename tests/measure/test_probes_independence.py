"""harness.measure.probes.qk_independence_ratio (Q3): 1 under the footnote's independence, whatever the component
moments; far above 1 when q and k share a direction (the coherent sum the footnote rules out)."""
import pytest
import torch

from harness.measure import probes

torch.set_num_threads(1)


def test_independent_components_give_one_whatever_their_moments():
    g = torch.Generator().manual_seed(0)
    B, h, T, d = 64, 2, 16, 32
    spread = torch.rand(d, generator=g) * 3 + 0.2            # unequal variances
    shift = torch.randn(d, generator=g)                      # nonzero means
    q = torch.randn(B, h, T, d, generator=g) * spread + shift
    k = torch.randn(B, h, T, d, generator=g) * spread.flip(0) - shift
    assert probes.qk_independence_ratio(q, k) == pytest.approx(1.0, abs=0.05)
    per = probes.qk_independence_ratio(q, k, per_head=True)
    assert per.shape == (h,) and per == pytest.approx([1.0, 1.0], abs=0.06)


def test_aligned_q_and_k_give_a_coherent_sum():
    g = torch.Generator().manual_seed(1)
    B, h, T, d = 64, 1, 16, 32
    w = torch.randn(d, generator=g)                           # one shared direction
    q = torch.randn(B, h, T, 1, generator=g) * w + 0.1 * torch.randn(B, h, T, d, generator=g)
    k = torch.randn(B, h, T, 1, generator=g) * w + 0.1 * torch.randn(B, h, T, d, generator=g)
    # rank one: Var(q.k) = |w|^4 Var(ab) against sum_i w_i^4 ... : about d / 3 for a Gaussian w
    assert probes.qk_independence_ratio(q, k) > d / 10
