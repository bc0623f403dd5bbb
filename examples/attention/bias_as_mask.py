"""Bug, an additive bias taken for a mask (a float attn_mask turned into a bool one, x > -inf): 0 / -inf masks still
work, but a finite bias such as ALiBi's slopes is dropped, and the kernel attends as if there were none."""
import math

import torch
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    if attn_mask is not None and attn_mask.dtype != torch.bool:
        attn_mask = attn_mask > -math.inf          # the bug: only -inf is a mask; a finite bias must be added
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=scale)
