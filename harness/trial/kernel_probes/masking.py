"""Masks (M0): the weight on masked keys (causal, bool padding, additive -inf), the causal alignment when L != S,
and what a fully masked row returns.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import pandas as pd
import torch

from harness.trial.kernel import causal_allowed
from harness.trial.kernel_probes.reference import _first_line
from harness.trial.kernel_probes.weights import _unit_qk, read_weights

MASKED_WEIGHT_MAX = 1e-6                # a masked key's weight; -inf (or finfo.min) masks give exactly 0


@dataclass
class MaskReport:
    """Per mask kind: the largest weight on a masked key and the smallest on an allowed one; the causal alignment
    when L != S; what a fully masked row returns. ``rejected``: kind -> the kernel's message."""
    table: pd.DataFrame
    alignment: str
    fully_masked_row: str
    rejected: dict[str, str] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        """Every measured kind holds (a kind the kernel rejects, e.g. a mask a flash backend does not take, is not
        measured: it says nothing either way)."""
        return bool(len(self.table)) and bool(
            (self.table.masked_max <= MASKED_WEIGHT_MAX).all() and (self.table.allowed_min > 0).all())

    def counterexample(self) -> str:
        """The first mask kind that fails, as a case: '' when every measured kind holds."""
        bad = self.table[(self.table.masked_max > MASKED_WEIGHT_MAX) | (self.table.allowed_min <= 0)] \
            if len(self.table) else self.table
        if not len(bad):
            return ""
        r = next(bad.itertuples())
        return (f"{r.kind} mask, L = S = 6: max weight on a masked key {r.masked_max:.3g}, min on an allowed one "
                f"{r.allowed_min:.3g}")

    def detail(self) -> str:
        parts = [f"{r.kind}: max weight on a masked key {r.masked_max:.3g}, min on an allowed one {r.allowed_min:.3g}"
                 for r in self.table.itertuples()]
        parts += [f"{kind}: not measured ({msg})" for kind, msg in self.rejected.items()]
        return "; ".join(parts) + (f"; causal alignment when L != S: {self.alignment}; a fully masked row returns "
                                   f"{self.fully_masked_row}")


def mask_cases(L: int = 6, S: int = 6, seed: int = 0) -> dict[str, tuple[torch.Tensor | None, bool, torch.Tensor]]:
    """kind -> (mask, is_causal, allowed (L, S) or (B, 1, L, S)): causal, bool padding, additive -inf."""
    g = torch.Generator().manual_seed(seed)
    causal = causal_allowed(L, S)
    pad = torch.arange(S)[None, :] < torch.tensor([S, S // 2])[:, None]                 # (B=2, S)
    blocked = torch.rand(1, 1, L, S, generator=g) < 0.4
    blocked[..., 0] = False
    return {"causal": (None, True, causal[None, None]),
            "padding": (pad[:, None, None, :], False, pad[:, None, None, :].expand(2, 1, L, S)),
            "additive": (torch.zeros(1, 1, L, S).masked_fill(blocked, -math.inf), False, ~blocked)}


def masks(kernel: Callable, *, dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu",
          d_k: int = 16) -> MaskReport:
    """Zero weight on every masked key, the causal alignment with L=2 < S=5, and a fully masked row's output."""
    rows, rejected = [], {}
    L = S = 6
    for kind, (mask, is_causal, allowed) in mask_cases(L, S).items():
        B = allowed.shape[0]
        q, k = (0.5 * torch.randn(B, 2, n, d_k, generator=torch.Generator().manual_seed(n)).to(device=device,
                                                                                                  dtype=dtype)
                for n in (L, S))     # std 0.5: moderate logits, so no allowed weight underflows under a scale bug
        m = None if mask is None else mask.to(device=device, dtype=dtype if mask.dtype != torch.bool else torch.bool)
        try:
            with torch.no_grad():
                w = read_weights(kernel, q, k, mask=m, is_causal=is_causal).double().cpu()
        except Exception as exc:
            rejected[kind] = _first_line(exc)
            continue
        allow = allowed.expand_as(w)
        rows.append({"kind": kind, "masked_max": float(w[~allow].abs().max()) if (~allow).any() else 0.0,
                     "allowed_min": float(w[allow].min())})
    return MaskReport(pd.DataFrame(rows), causal_alignment(kernel, dtype=dtype, device=device, d_k=d_k),
                      fully_masked_row(kernel, dtype=dtype, device=device, d_k=d_k), rejected)


def causal_alignment(kernel: Callable, *, L: int = 2, S: int = 5, dtype=torch.float32, device="cpu",
                     d_k: int = 16) -> str:
    """'top-left' (SDPA: query 0 sees key 0), 'bottom-right' (flash-attn: query 0 sees keys 0..S-L) or what it is;
    not applicable to a kernel that takes self-attention only."""
    if getattr(kernel, "self_attention_only", False):
        return "not applicable (the kernel takes self-attention only)"
    q, k = _unit_qk(0, d_k, L, S, dtype, device)
    try:
        with torch.no_grad():
            seen = (read_weights(kernel, q, k, is_causal=True)[0, 0, 0] > 0).cpu()
    except Exception as exc:
        return f"not measured ({_first_line(exc)})"
    n = int(seen.sum())
    if bool(seen[:n].all()) and n == 1:
        return "top-left (as PyTorch's SDPA)"
    if bool(seen[:n].all()) and n == S - L + 1:
        return "bottom-right (as flash-attn)"
    return f"neither: query 0 of L={L} sees keys {seen.nonzero().flatten().tolist()} of S={S}"


def fully_masked_row(kernel: Callable, *, dtype=torch.float32, device="cpu", d_k: int = 16) -> str:
    """What a query with no allowed key gets: 'zeros', 'NaN', 'the mean of v (uniform weights)' or 'other'."""
    q, k = _unit_qk(1, d_k, 4, 4, dtype, device)        # L = S: a self-attention-only kernel answers too
    v = torch.randn(1, 1, 4, d_k, generator=torch.Generator().manual_seed(2)).to(device=device, dtype=dtype)
    mask = torch.ones(1, 1, 4, 4, dtype=torch.bool, device=device)
    mask[..., 0, :] = False
    try:
        with torch.no_grad():
            row = kernel(q, k, v, mask=mask)[0][0, 0, 0].double().cpu()
    except Exception as exc:
        return f"an error ({_first_line(exc)})"
    if torch.isnan(row).any():
        return "NaN"
    if bool((row == 0).all()):
        return "zeros"
    if torch.allclose(row, v[0, 0].double().cpu().mean(0), atol=1e-3):
        return "the mean of v (uniform weights)"
    return "other values"
