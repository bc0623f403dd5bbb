"""Bug, scale read but never applied (Megatron-Bridge PR 4155): the softmax scale is computed, then the scores
are left unscaled."""
import math

import torch


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    softmax_scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale   # noqa: F841 (the bug)
    scores = query @ key.transpose(-2, -1)
    L, S = scores.shape[-2:]
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else scores + attn_mask
    if is_causal:
        scores = scores.masked_fill(torch.ones(L, S, dtype=torch.bool, device=scores.device).tril().logical_not(),
                                    -math.inf)
    return torch.softmax(scores, -1) @ value
