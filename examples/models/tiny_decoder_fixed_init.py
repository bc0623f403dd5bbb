"""A planted flaw of init: the tiny decoder with every weight drawn N(0, 0.02), whatever the width (transformers'
``initializer_range`` habit). q and k components then grow with the width, and so does q.k: R2's check flags it."""
import torch
from torch import nn

from examples.models.tiny_decoder import build_model as tiny


def build_model(width: int = 64, head_dim: int = 16, **overrides):
    model = tiny(width=width, head_dim=head_dim, **overrides)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                module.weight.normal_(0.0, 0.02)
                module.bias.zero_()
    return model
