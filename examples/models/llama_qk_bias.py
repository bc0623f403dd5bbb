"""A planted bug: Llama with query and key biases initialised to one instead of zero, so q and k share a mean.
The footnote's law (Var(q.k) = d_k E[q^2] E[k^2] for zero-mean, independent components) then fails: C4 refutes it."""
import torch

from examples.models.llama import build_model as llama


def build_model(**overrides):
    model = llama(**{"attention_bias": True, **overrides})
    with torch.no_grad():
        for layer in model.layers:
            layer.self_attn.q_proj.bias.fill_(1.0)
            layer.self_attn.k_proj.bias.fill_(1.0)
    return model
