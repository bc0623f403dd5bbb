"""Bug, dropout without the rescale: the kept weights are not divided by 1 - p, so at p > 0 the output shrinks by
1 - p on average (inverted dropout, as torch's, keeps the expectation)."""
import math

import torch


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    L, S = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    logits = (query.float() @ key.float().transpose(-2, -1)) * s
    if attn_mask is not None:
        logits = logits.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else \
            logits + attn_mask.float()
    if is_causal:
        logits = logits.masked_fill(torch.ones(L, S, dtype=torch.bool, device=query.device).tril().logical_not(),
                                    -math.inf)                                           # top-left, as SDPA
    weights = torch.nan_to_num(torch.softmax(logits, -1), nan=0.0)
    if dropout_p > 0:
        weights = weights * (torch.rand_like(weights) >= dropout_p)     # should be / (1 - dropout_p)
    return (weights @ value.float()).to(query.dtype)
