"""Correct: PyTorch's FlexAttention (torch.nn.attention.flex_attention) with the masks as a score_mod; it runs on
CPU in torch 2.13.0 unfused and forward only (its backward raises on CPU: the trial records that on every gradient
cell)."""
import math
import warnings

import torch
from torch.nn.attention.flex_attention import flex_attention

warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    B, H, L, _ = query.shape
    S = key.shape[-2]
    bias = torch.zeros(B, H, L, S, dtype=query.dtype, device=query.device)
    if attn_mask is not None:
        bias = bias.masked_fill(~attn_mask, -math.inf) if attn_mask.dtype == torch.bool else bias + attn_mask
    if is_causal:
        bias = bias.masked_fill(torch.ones(L, S, dtype=torch.bool, device=query.device).tril().logical_not(),
                                -math.inf)

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + bias[b, h, q_idx, kv_idx]
    return flex_attention(query, key, value, score_mod=score_mod, scale=scale)
