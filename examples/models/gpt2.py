"""GPT-2: learned positions, LayerNorm, scaled dot product, fixed-std init (0.02)."""
from transformers import GPT2Config, GPT2Model


def build_model(**overrides):
    config = dict(n_embd=64, n_layer=2, n_head=4, vocab_size=256, n_positions=128, bos_token_id=0, eos_token_id=0)
    config.update(overrides)
    return GPT2Model(GPT2Config(**config))
