"""The reference the kernel trial's probes compare against, and the rounding shared by their rules.

``reference_attention``: softmax(q k^T s + mask) v written out plainly (flash-attn's ``attention_ref``), in float64 or
in the inputs' own dtype (a yardstick); ``_atol``: flash-attn's atol, the reference's rounding in a dtype;
``_first_line``: how a probe cell records the kernel's own message when the kernel rejects it.
"""
from __future__ import annotations

import math

import torch

from harness.trial.kernel import causal_allowed

ATOL_SHIFT = 0.3                        # flash-attn's atol: 2 max|(ref + 0.3) - 0.3 - ref|, the dtype's rounding
# flash-attn's rule is written for fp16/bf16, where its atol is a bf16 ulp. In float32 that atol is 1e-7, and a
# correct kernel that sums in another order than every yardstick misses it by an ulp or two (the tiled kernel's dk
# at L=1, S=64: 1.7e-7 against 7.5e-8): float32 keeps the suite's earlier absolute floor (outputs O(1); gradients
# sum over L or S products, x10)
ATOL_FLOOR = {torch.float32: 1e-5, torch.float64: 1e-10}
GRAD_ATOL_FLOOR_FACTOR = 10.0


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, mask: torch.Tensor | None = None,
                        is_causal: bool = False, scale: float | None = None, alignment: str = "top-left",
                        upcast: bool = True, scale_on: str = "q", window: int = 0, softcap: float = 0.0
                        ) -> torch.Tensor:
    """softmax(q k^T s + mask) v written out plainly, as flash-attn's tests' ``attention_ref``: ``upcast`` computes in
    float64 (the reference), else in the inputs' own dtype (a yardstick); ``scale_on`` q, k (flash-attn's
    ``reorder_ops``) or the scores (the paper's order) is the same math with other roundings. A bool mask is True
    where a query may attend; causal is
    top-left (SDPA: query i sees keys j <= i) or bottom-right (flash-attn: j <= i + S - L), and a sliding ``window``
    W > 0 keeps the W keys up to the query's position (``harness.trial.kernel.causal_allowed``); ``softcap`` c > 0 caps
    the scaled logits at c tanh(logits / c) before any mask (Gemma 2's, flash-attn's). A row with no allowed key
    gives zeros. Fewer key/value heads than query heads (GQA) serve consecutive groups of query heads."""
    if upcast:
        q, k, v = q.double(), k.double(), v.double()
    if k.shape[-3] != q.shape[-3]:
        groups = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(groups, dim=-3), v.repeat_interleave(groups, dim=-3)
    L, S = q.shape[-2], k.shape[-2]
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    logits = {"q": lambda: (q * s) @ k.transpose(-2, -1), "k": lambda: q @ (k * s).transpose(-2, -1),
              "scores": lambda: (q @ k.transpose(-2, -1)) * s}[scale_on]()
    if softcap:
        logits = softcap * torch.tanh(logits / softcap)
    if mask is not None:
        logits = logits.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else logits + mask.to(logits.dtype)
    if is_causal:
        logits = logits.masked_fill(~causal_allowed(L, S, q.device, window, alignment), -math.inf)
    return torch.nan_to_num(torch.softmax(logits, -1), nan=0.0) @ v


def _max_abs(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.detach().double() - b.detach().double()).abs().max()) if a.numel() else 0.0


def _atol(ref: torch.Tensor, gradient: bool = False) -> float:
    """flash-attn's atol, twice the rounding that any arithmetic on the reference in its dtype incurs, or the dtype's
    floor (``ATOL_FLOOR``; x ``GRAD_ATOL_FLOOR_FACTOR`` for a gradient) where that is larger."""
    ref = ref.detach()
    floor = ATOL_FLOOR.get(ref.dtype, 0.0) * (GRAD_ATOL_FLOOR_FACTOR if gradient else 1.0)
    return max(2 * _max_abs(ref + ATOL_SHIFT - ATOL_SHIFT, ref), floor)
