"""A planted bug: Llama whose attention forgets the 1/sqrt(d_k) scale (a subclass that sets ``scaling = 1.0``).
R1 refutes it (the applied scale does not fall as d_k ** -0.5) and so does C4 (the logit std grows with head_dim)."""
from transformers.models.llama.modeling_llama import LlamaAttention

from examples.models.llama import build_model as llama


def build_model(**overrides):
    model = llama(**overrides)
    for module in model.modules():
        if isinstance(module, LlamaAttention):
            module.scaling = 1.0
    return model
