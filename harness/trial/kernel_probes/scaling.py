"""What the kernel's scale does at each d_k, read from its weights (``harness.trial.kernel_probes.weights``):
``scale_law`` (C4 a, R1), the effective scale and the scaled logits' variance, and ``saturation`` (C3 a, R2), the
logit std, attention entropy and mean |dL/dlogits| at scale=None against scale=1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import pandas as pd
import torch

from harness.measure import stats
from harness.trial.kernel_probes.reference import _first_line
from harness.trial.kernel_probes.weights import _unit_qk, read_weights, readout_queries, recovered_logits


@dataclass
class ScaleLaw:
    """The effective scale and the scaled logits' variance per (d_k, seed), and the scale's exponent in d_k."""
    table: pd.DataFrame
    exponent: Any                       # harness.measure.stats.SlopeFit of log scale on log d_k (prediction -0.5)
    rejected: str = ""


def scale_law(kernel: Callable, d_ks, seeds, *, n_queries: int = 16, n_keys: int = 32,
              dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu") -> ScaleLaw:
    """From unit-variance q, k at scale=None: the effective scale s = <l, r> / <r, r> of the recovered logits l on
    q.k (r, both centred per row over the same keys), and the mean within-row variance of l (the footnote: 1 when
    s = 1/sqrt(d_k)). A self-attention-only kernel is read with as many queries as keys."""
    n_queries = readout_queries(kernel, n_queries, n_keys)
    rows = []
    for seed in seeds:
        for d_k in d_ks:
            q, k = _unit_qk(seed, d_k, n_queries, n_keys, dtype, device)
            try:
                with torch.no_grad():
                    logits = recovered_logits(read_weights(kernel, q, k))
            except Exception as exc:
                return ScaleLaw(pd.DataFrame(rows), None, rejected=f"d_k={d_k}: {_first_line(exc)}")
            kept = torch.isfinite(logits)
            raw = q.double() @ k.double().transpose(-2, -1)
            raw_c = torch.where(kept, raw - (raw * kept).sum(-1, keepdim=True) / kept.sum(-1, keepdim=True), 0.0)
            l_c = torch.where(kept, logits, 0.0)
            s = float((l_c * raw_c).sum() / (raw_c * raw_c).sum())
            var = float(((l_c ** 2).sum(-1) / (kept.sum(-1) - 1).clamp_min(1)).mean())
            rows.append({"seed": seed, "d_k": d_k, "effective_scale": s, "scale_times_sqrt_dk": s * math.sqrt(d_k),
                         "scaled_logit_variance": var, "kept_fraction": float(kept.double().mean())})
    table = pd.DataFrame(rows)
    positive = table[table.effective_scale > 0]
    fit = stats.loglog_slope(positive.d_k, positive.effective_scale) if len(positive) >= 3 else None
    return ScaleLaw(table, fit, rejected="" if fit is not None else "the effective scale is not positive")


# ============================================================================================== saturation (C3 a, R2)
SATURATION_ARMS = {"scale=None": None, "scale=1": 1.0}


@dataclass
class Saturation:
    """Per (arm, d_k, seed): recovered logit std, entropy / ln S, mean |dL/dlogits|; slopes against d_k per arm."""
    table: pd.DataFrame
    fits: dict[str, dict[str, Any]]     # arm -> {"logit_std": SlopeFit, "grad_mean_abs": SlopeFit}
    rejected: str = ""


def saturation(kernel: Callable, d_ks, seeds, *, n_queries: int = 16, n_keys: int = 32,
               dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu") -> Saturation:
    """Unit-variance q, k at each d_k through the kernel, at scale=None (its default, which must be 1/sqrt(d_k)) and
    scale=1 (unscaled). The weights are read out of the kernel (``read_weights``); dL/dlogits is autograd through
    softmax of the recovered logits for a random linear loss on the attention output. A self-attention-only kernel
    is read with as many queries as keys."""
    n_queries = readout_queries(kernel, n_queries, n_keys)
    rows = []
    for arm, scale in SATURATION_ARMS.items():
        for seed in seeds:
            for d_k in d_ks:
                q, k = _unit_qk(seed, d_k, n_queries, n_keys, dtype, device)
                try:
                    with torch.no_grad():
                        logits = recovered_logits(read_weights(kernel, q, k, scale=scale)).cpu()
                except Exception as exc:
                    return Saturation(pd.DataFrame(rows), {}, rejected=f"{arm}, d_k={d_k}: {_first_line(exc)}")
                kept = torch.isfinite(logits)
                g = torch.Generator().manual_seed(seed)
                v = torch.randn(n_keys, 8, generator=g, dtype=torch.float64)
                direction = torch.randn(*logits.shape[:-1], 8, generator=g, dtype=torch.float64)
                leaf = logits.clone().requires_grad_()
                w = torch.softmax(leaf, -1)
                ((w @ v) * direction).sum().backward()
                lc = torch.where(kept, logits, 0.0)
                std = ((lc ** 2).sum(-1) / (kept.sum(-1) - 1).clamp_min(1)).sqrt().mean()
                wd = w.detach()
                entropy = -(torch.where(wd > 0, wd * wd.clamp_min(1e-300).log(), 0.0)).sum(-1).mean()
                rows.append({"arm": arm, "seed": seed, "d_k": d_k, "logit_std": float(std),
                             "entropy_ratio": float(entropy) / math.log(n_keys),
                             "grad_mean_abs": float(leaf.grad.abs().mean())})
    table = pd.DataFrame(rows)
    fits = {arm: {col: stats.loglog_slope(t.d_k, t[col].clip(lower=1e-300)) for col in ("logit_std", "grad_mean_abs")}
            for arm, t in table.groupby("arm")}
    return Saturation(table, fits)
