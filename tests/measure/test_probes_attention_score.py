"""harness.measure.probes.attention_score: the model's own compatibility function as a saturation_check score (R2)."""
import pytest
import torch

from harness.measure import probes
from model import ModelConfig, faults


def _cfg(**kw):
    return lambda d: ModelConfig(d_model=d, n_heads=1, d_k=d, d_v=d, **kw)


def test_attention_score_is_the_modules_score_on_q_and_k():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 5, 16, generator=g), torch.randn(2, 7, 16, generator=g)
    default = probes.attention_score(_cfg())(16, torch.Generator().manual_seed(1))
    torch.testing.assert_close(default(q, k), q @ k.transpose(-2, -1) / 4.0)
    by_d = probes.attention_score(_cfg(scale_exponent=1.0))(16, torch.Generator().manual_seed(1))
    torch.testing.assert_close(by_d(q, k), q @ k.transpose(-2, -1) / 16.0)
    additive = probes.attention_score(_cfg(score="additive"))(16, torch.Generator().manual_seed(1))
    assert additive(q, k).shape == (2, 5, 7)


def test_attention_score_follows_an_active_scale_fault():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 3, 64, generator=g), torch.randn(1, 4, 64, generator=g)
    score = probes.attention_score(_cfg())(64, torch.Generator().manual_seed(1))
    with faults.inject("no_scale"):
        torch.testing.assert_close(score(q, k), q @ k.transpose(-2, -1))
    with faults.inject("scale_by_dk"):
        torch.testing.assert_close(score(q, k), q @ k.transpose(-2, -1) / 64.0)


def test_attention_score_is_seeded_by_the_generator_and_checks_the_config():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 3, 8, generator=g), torch.randn(1, 4, 8, generator=g)
    a = probes.attention_score(_cfg(score="additive"))(8, torch.Generator().manual_seed(5))(q, k)
    b = probes.attention_score(_cfg(score="additive"))(8, torch.Generator().manual_seed(5))(q, k)
    torch.testing.assert_close(a, b)
    with pytest.raises(ValueError, match="n_heads=1"):
        probes.attention_score(lambda d: ModelConfig(d_model=2 * d, n_heads=2))(8, g)
