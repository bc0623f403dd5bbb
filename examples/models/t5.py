"""T5: an encoder-decoder with relative position biases and no 1/sqrt(d_k) in the attention: Mesh TensorFlow's init folds it into the query projection (std (d_model d_kv) ** -0.5)."""
from transformers import T5Config, T5Model


def build_model(**overrides):
    config = dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=256)
    config.update(overrides)
    return T5Model(T5Config(**config))
