"""Gemma 2: logit soft-capping (50 tanh(x / 50)), sliding-window and global layers alternating, GQA, and a scale 1/sqrt(query_pre_attn_scalar): a config constant, set here to the head dim as Gemma 2's small models do."""
from transformers import Gemma2Config, Gemma2Model


def build_model(**overrides):
    config = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, query_pre_attn_scalar=16, vocab_size=256, sliding_window=8, attn_logit_softcapping=50.0)
    config.update(overrides)
    return Gemma2Model(Gemma2Config(**config))
