"""Llama: RoPE, RMSNorm, scaled dot product (head_dim ** -0.5), transformers' fixed-std init (0.02)."""
from transformers import LlamaConfig, LlamaModel


def build_model(**overrides):
    config = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, vocab_size=256)
    config.update(overrides)
    return LlamaModel(LlamaConfig(**config))
