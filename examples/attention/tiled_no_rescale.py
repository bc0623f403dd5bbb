"""Bug, the accumulator not rescaled when the row max moves (the classic online-softmax slip of flash-style
rewrites), here in FlashAttention-1's update O <- (l e^(m - m_new) O + P V) / l_new with e^(m - m_new) dropped from
the O term: the normaliser l is rescaled, the output is not. Exact while the keys fit one tile of 128; wrong once a
later tile raises a row's max (max error 1.2 at L = S = 200, d_k = 64)."""
import math

import torch

BLOCK_N = 128   # keys per tile, as a real kernel's


def _bias(attn_mask, is_causal, L, S, device):
    """The mask as one additive float bias (0 or -inf where a bool mask forbids; a float mask as it is)."""
    bias = torch.zeros(L, S, device=device)
    if is_causal:           # bottom-right, as flash-attn: query i sees keys j <= i + S - L
        bias = bias.masked_fill(torch.ones(L, S, dtype=torch.bool, device=device).tril(S - L).logical_not(),
                                -math.inf)
    if attn_mask is not None:
        bias = bias + (torch.zeros(attn_mask.shape, device=device).masked_fill(~attn_mask, -math.inf)
                       if attn_mask.dtype == torch.bool else attn_mask.float())
    return bias


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    L, S = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    bias = _bias(attn_mask, is_causal, L, S, query.device)
    out = torch.zeros(query.shape[:-1] + (value.shape[-1],), device=query.device)
    m = torch.full(query.shape[:-1] + (1,), -math.inf, device=query.device)
    l = torch.zeros_like(m)
    for blk in (slice(j, min(j + BLOCK_N, S)) for j in range(0, S, BLOCK_N)):
        scores = query.float() @ key[..., blk, :].float().transpose(-2, -1) * s + bias[..., blk]
        m_new = torch.maximum(m, scores.amax(-1, keepdim=True))
        m_safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(scores - m_safe)
        l_new = torch.exp(m - m_safe) * l + p.sum(-1, keepdim=True)
        out = (l * out + p @ value[..., blk, :].float()) / l_new.clamp_min(1e-30)    # the bug: l * e^(m - m_new) * out
        m, l = m_new, l_new
    return out.to(query.dtype)
