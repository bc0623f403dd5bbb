"""Qwen3: QK-norm (an RMSNorm with a learned gain on each query and key head) before the scaled dot product, GQA."""
from transformers import Qwen3Config, Qwen3Model


def build_model(**overrides):
    config = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=256)
    config.update(overrides)
    return Qwen3Model(Qwen3Config(**config))
