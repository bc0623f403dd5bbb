"""Correct: attention with logit soft-capping (Gemma 2's ``attn_logit_softcapping``, flash-attn's ``softcap``): the
scaled logits capped at c tanh(logits / c) before the mask and the softmax."""
import math

import torch


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, softcap=None):
    L, S = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    logits = (query.float() @ key.float().transpose(-2, -1)) * s
    if softcap:
        logits = softcap * torch.tanh(logits / softcap)
    if attn_mask is not None:
        logits = logits.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else \
            logits + attn_mask.float()
    if is_causal:
        logits = logits.masked_fill(torch.ones(L, S, dtype=torch.bool, device=query.device).tril().logical_not(),
                                    -math.inf)                                           # top-left, as SDPA
    weights = torch.nan_to_num(torch.softmax(logits, -1), nan=0.0)
    weights = torch.nn.functional.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return (weights @ value.float()).to(query.dtype)
