"""A planted bug: Llama whose attention divides by d_k instead of sqrt(d_k) (``scaling = head_dim ** -1``).
R1 refutes it (the scale falls as d_k ** -1) and so does C4 (the logit std falls with head_dim)."""
from transformers.models.llama.modeling_llama import LlamaAttention

from examples.models.llama import build_model as llama


def build_model(**overrides):
    model = llama(**overrides)
    for module in model.modules():
        if isinstance(module, LlamaAttention):
            module.scaling = module.head_dim ** -1.0
    return model
