"""ModelConfig validation: a bad sweep point must fail at construction, naming the field."""
import math

import pytest

from model import ModelConfig


@pytest.mark.parametrize("kwargs, field", [
    (dict(d_model=30, n_heads=4), "d_k"),                 # d_k derived, not divisible
    (dict(d_model=30, n_heads=4, d_k=8), "d_v"),          # d_v derived, not divisible
    (dict(score="multiplicative"), "score"),
    (dict(qk_norm="rms"), "qk_norm"),
    (dict(positional="rotary"), "positional"),
    (dict(init="he"), "init"),
    (dict(d_model=0), "d_model"),
    (dict(n_heads=-1), "n_heads"),
    (dict(d_ff=0), "d_ff"),
    (dict(d_k=0), "d_k"),
    (dict(d_v=-3), "d_v"),
    (dict(src_vocab=0), "src_vocab"),
    (dict(tgt_vocab=-1), "tgt_vocab"),
    (dict(max_len=0), "max_len"),
    (dict(n_encoder_layers=-1), "n_encoder_layers"),
    (dict(d_model=64.0), "d_model"),
    (dict(dropout=1.0), "dropout"),
    (dict(attn_dropout=-0.1), "attn_dropout"),
    (dict(scale_exponent=math.nan), "scale_exponent"),
    (dict(scale_exponent=math.inf), "scale_exponent"),
    (dict(scale="none", scale_exponent=0.5), "scale_exponent"),
    (dict(scale="sqrt"), "scale"),
    (dict(scale=math.inf), "scale"),
    (dict(scale=0.0), "scale"),
    (dict(qk_norm_gain_init=0.0), "qk_norm_gain_init"),
    (dict(qk_norm="l2", qk_norm_gain_param="exp"), "qk_norm_gain_param"),
    (dict(qk_norm="rmsnorm", qk_norm_gain_param="log"), "qk_norm_gain_param"),
    (dict(embed_init_std=-1.0), "embed_init_std"),
    (dict(norm_first="yes"), "norm_first"),
])
def test_bad_config_raises_value_error_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=rf"\b{field}\b"):
        ModelConfig(**kwargs)


def test_derived_fields_and_replace():
    cfg = ModelConfig(d_model=64, n_heads=4, src_vocab=20)
    assert (cfg.d_k, cfg.d_v, cfg.tgt_vocab) == (16, 16, 20)
    wider = cfg.replace(d_model=128)
    assert (wider.d_k, wider.d_v) == (32, 32)                    # re-derived, not copied
    assert cfg.replace(d_k=40).d_k == 40 and cfg.replace(d_k=40).d_v == 16
    explicit = ModelConfig(d_model=30, n_heads=4, d_k=8, d_v=8)   # explicit d_k lifts divisibility
    assert explicit.replace(d_model=60).d_k == 8


def test_attn_scale():
    assert ModelConfig(d_model=64, n_heads=4).attn_scale() == 0.25
    assert ModelConfig(d_model=64, n_heads=4, scale="none").attn_scale() == 1.0
    assert ModelConfig(d_model=64, n_heads=4, scale=0.3).attn_scale() == 0.3
    assert ModelConfig(d_model=64, n_heads=4, scale_exponent=1.0).attn_scale() == 1 / 16
    assert ModelConfig(d_model=64, n_heads=4, scale_exponent=0.0).attn_scale() == 1.0
    assert ModelConfig(d_model=64, n_heads=4, score="additive").attn_scale() == 1.0


def test_presets():
    base = ModelConfig.paper_base()
    assert (base.n_encoder_layers, base.n_decoder_layers, base.d_model, base.d_ff, base.n_heads,
            base.d_k, base.d_v, base.dropout) == (6, 6, 512, 2048, 8, 64, 64, 0.1)
    assert base.norm_first is False and base.positional == "sinusoidal" and base.scale_embeddings
    assert ModelConfig.tiny().d_model < ModelConfig.small().d_model <= 128
    assert ModelConfig.tiny(n_heads=2).n_heads == 2


def test_embedding_init_std_default():
    """Issue 2: scaled N(0,1) embeddings swamp the positional encoding; the default std d^-0.5
    gives unit-variance scaled embeddings."""
    assert ModelConfig(d_model=64, n_heads=4).resolved_embed_init_std() == 64 ** -0.5
    assert ModelConfig(d_model=64, n_heads=4, scale_embeddings=False).resolved_embed_init_std() == 1.0
    assert ModelConfig(d_model=64, n_heads=4, embed_init_std=0.02).resolved_embed_init_std() == 0.02
