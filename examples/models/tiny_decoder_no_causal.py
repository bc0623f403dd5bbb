"""A planted bug: the tiny decoder says it is causal but its attention forgets ``is_causal=True``, so every position
sees the future. M0 refutes it (outputs depend on later tokens; the tapped weights above the diagonal are not 0)."""
from examples.models.tiny_decoder import TinyDecoder


def build_model(width: int = 64, head_dim: int = 16, **overrides):
    return TinyDecoder(width=width, head_dim=head_dim, causal=False, **overrides)
