"""Bug, softmax computed in float16 (a precision bug: the scores are cast down before the softmax, whatever the
input dtype)."""
import math

import torch


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = query @ key.transpose(-2, -1) * s
    L, S = scores.shape[-2:]
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else scores + attn_mask
    if is_causal:
        scores = scores.masked_fill(torch.ones(L, S, dtype=torch.bool, device=scores.device).tril().logical_not(),
                                    -math.inf)
    weights = torch.softmax(scores.half(), -1).to(query.dtype)
    return weights @ value
