"""Mistral: grouped-query attention (4 query heads, 2 key/value heads) and a sliding window of 8 keys."""
from transformers import MistralConfig, MistralModel


def build_model(**overrides):
    config = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=256, sliding_window=8)
    config.update(overrides)
    return MistralModel(MistralConfig(**config))
