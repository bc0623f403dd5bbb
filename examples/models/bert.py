"""BERT: a bidirectional encoder (no causal mask), scaled dot product, fixed-std init (0.02)."""
from transformers import BertConfig, BertModel


def build_model(**overrides):
    config = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, vocab_size=256, max_position_embeddings=128)
    config.update(overrides)
    return BertModel(BertConfig(**config))
