"""Correct: a flash-style kernel in plain torch: keys in tiles of 128 (a tile of flash-attn's forward), an online
softmax (running max and sum, the accumulator rescaled whenever the max moves), causal bottom-right as flash-attn's
(query i sees keys j <= i + S - L)."""
import math

import torch

BLOCK_N = 128   # keys per tile, as a real kernel's: the probes draw key counts above 2 x 128 and between multiples


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    L, S = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    q = query.float() * s
    row_max = torch.full(query.shape[:-1] + (1,), -math.inf, device=query.device)
    row_sum = torch.zeros_like(row_max)
    acc = torch.zeros(query.shape[:-1] + (value.shape[-1],), device=query.device)
    for start in range(0, S, BLOCK_N):
        stop = min(start + BLOCK_N, S)
        scores = q @ key[..., start:stop, :].float().transpose(-2, -1)
        if attn_mask is not None:
            m = attn_mask[..., start:stop]
            scores = scores.masked_fill(~m, -math.inf) if m.dtype == torch.bool else scores + m.float()
        if is_causal:
            j = torch.arange(start, stop, device=query.device)[None, :]
            i = torch.arange(L, device=query.device)[:, None] + (S - L)
            scores = scores.masked_fill(j > i, -math.inf)
        new_max = torch.maximum(row_max, scores.amax(-1, keepdim=True))
        safe = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        p = torch.exp(scores - safe)
        correction = torch.exp(row_max - safe)
        row_sum = row_sum * correction + p.sum(-1, keepdim=True)
        acc = acc * correction + p @ value[..., start:stop, :].float()
        row_max = new_max
    out = torch.where(row_sum > 0, acc / row_sum.clamp_min(1e-30), torch.zeros_like(acc))
    return out.to(query.dtype)
