"""Correct: attention one query row at a time in a Python loop (a first port of a paper's formula): exact, and slow,
the kernel that R3's "the same speed as SDPA" must answer no for."""
import math

import torch


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    L, S = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    q, k_t, v = query.float(), key.float().transpose(-2, -1), value.float()   # cast once: gradients sum in float32
    rows = []
    for i in range(L):
        scores = (q[..., i:i + 1, :] @ k_t) * s                                              # (B, H, 1, S)
        if attn_mask is not None:
            m = attn_mask[..., i:i + 1, :] if attn_mask.shape[-2] > 1 else attn_mask
            scores = scores.masked_fill(~m, -math.inf) if m.dtype == torch.bool else scores + m.float()
        if is_causal:
            scores = scores.masked_fill(torch.arange(S, device=query.device) > i, -math.inf)   # top-left, as SDPA
        weights = torch.nan_to_num(torch.softmax(scores, -1), nan=0.0)
        rows.append(weights @ v)
    return torch.cat(rows, -2).to(query.dtype)
