"""Bug, dropout without the rescale: the output multiplied back by 1 - p "to keep its scale", undoing inverted
dropout's 1/(1 - p), so at p > 0 it shrinks by 1 - p on average (classic dropout's inference-time scaling applied
in training)."""
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                         is_causal=is_causal, scale=scale)
    return out * (1.0 - dropout_p)
