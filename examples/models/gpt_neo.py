"""GPT-Neo: off transformers' AttentionInterface (the trial taps its softmax); global and local layers; no 1/sqrt(d_k) scale in its attention."""
from transformers import GPTNeoConfig, GPTNeoModel


def build_model(**overrides):
    config = dict(hidden_size=64, num_layers=2, num_heads=4, vocab_size=256, max_position_embeddings=128, attention_types=[[['global', 'local'], 1]], window_size=8)
    config.update(overrides)
    return GPTNeoModel(GPTNeoConfig(**config))
