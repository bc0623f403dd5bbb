"""The attention weights out of a black box, and the logits recovered from them (up to a per-row constant): what
``scaling`` and ``masking`` read.
"""
from __future__ import annotations

import math
from typing import Callable

import torch


def read_weights(kernel: Callable, q: torch.Tensor, k: torch.Tensor, *, mask: torch.Tensor | None = None,
                 is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """The kernel's attention weights (B, H, L, S): with v the identity over keys, output row i is query i's
    weights. A kernel that rejects d_v = S is read in one-hot blocks of d_v = d_k keys (its first error raises)."""
    B, H, S, D = k.shape
    try:
        eye = torch.eye(S, dtype=q.dtype, device=q.device).expand(B, H, S, S)
        out, _ = kernel(q, k, eye, mask=mask, is_causal=is_causal, scale=scale)
        if tuple(out.shape[-2:]) == (q.shape[-2], S):
            return out
    except Exception:
        pass
    blocks = []
    for start in range(0, S, D):
        n = min(D, S - start)
        v = torch.zeros(B, H, S, D, dtype=q.dtype, device=q.device)
        v[:, :, torch.arange(start, start + n), torch.arange(n)] = 1.0
        out, _ = kernel(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
        blocks.append(out[..., :n])
    return torch.cat(blocks, -1)


def readout_queries(kernel: Callable, n_queries: int, n_keys: int) -> int:
    """The queries a weight readout asks for: ``n_keys`` where the kernel takes self-attention only."""
    return n_keys if getattr(kernel, "self_attention_only", False) else n_queries


def recovered_logits(weights: torch.Tensor, floor: float = 1e-30) -> torch.Tensor:
    """log weights, centred per row over the keys whose weight is above ``floor`` (the others, underflowed or
    masked, are -inf): the logits up to the per-row constant the softmax removes (float64)."""
    w = weights.double()
    kept = w > floor
    log_w = torch.where(kept, w.clamp_min(floor).log(), torch.zeros_like(w))
    centre = log_w.sum(-1, keepdim=True) / kept.sum(-1, keepdim=True).clamp_min(1)
    return torch.where(kept, log_w - centre, torch.full_like(w, -math.inf))


def _unit_qk(seed: int, d_k: int, n_queries: int, n_keys: int, dtype, device, heads: int = 1):
    g = torch.Generator().manual_seed(seed * 1_000_003 + d_k)
    q = torch.randn(1, heads, n_queries, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(1, heads, n_keys, d_k, generator=g, dtype=torch.float64)
    return q.to(device=device, dtype=dtype), k.to(device=device, dtype=dtype)
