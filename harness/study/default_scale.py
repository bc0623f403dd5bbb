"""R1's default scale: the model's default attention against PyTorch's SDPA at its default scale, in float64.

``measure_default_scale`` builds ``model.MultiHeadAttention`` at each (seed, d_k, heads, self/cross attention, mask)
and runs it on random inputs on both of its paths (the SDPA fast path and the tapped explicit one): one row per case
with its relative error against the module's own projections through ``F.scaled_dot_product_attention`` without
``scale=`` (PyTorch's default 1/sqrt(E)), the reference's own error against softmax(QK^T / sqrt(d_k))V written out,
and the scale read off the ``logits`` tap. ``default_scale_check`` reads that frame against ``REL_TOL``: whether every
case holds, the exact check the claim module records as ``default_is_sdpa_scale``. Nothing trains.
"""
from __future__ import annotations

import math
from itertools import product

import pandas as pd
import torch
import torch.nn.functional as F

from model import ModelConfig, MultiHeadAttention, build_mask, capture

MASKS = ("none", "key_padding", "causal", "causal+key_padding")
# float64 throughout: both computations agree to ~1e-16; any scale other than 1/sqrt(d_k) is off by O(0.1).
REL_TOL = 1e-9


def _reference_sdpa_default(mha: MultiHeadAttention, x: torch.Tensor, memory: torch.Tensor | None,
                            mask: torch.Tensor | None) -> torch.Tensor:
    """The module's projections, then PyTorch's SDPA at its *default* scale (1/sqrt(E), E = q.size(-1))."""
    kv = x if memory is None else memory
    B, T, _ = x.shape
    S, h = kv.shape[1], mha.n_heads
    q = mha.q_proj(x).view(B, T, h, mha.d_k).transpose(1, 2)
    k = mha.k_proj(kv).view(B, S, h, mha.d_k).transpose(1, 2)
    v = mha.v_proj(kv).view(B, S, h, mha.d_v).transpose(1, 2)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)          # no scale=: PyTorch's default
    return mha.out_proj(o.transpose(1, 2).reshape(B, T, h * mha.d_v)), q, k


def _textbook(q: torch.Tensor, k: torch.Tensor, v_proj, kv: torch.Tensor, mha, mask) -> torch.Tensor:
    """softmax(QK^T / sqrt(d_k)) V written out, as a check on the reference itself."""
    B, S, _ = kv.shape
    v = v_proj(kv).view(B, S, mha.n_heads, mha.d_v).transpose(1, 2)
    logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        logits = logits.masked_fill(~mask, -math.inf)
    o = torch.softmax(logits, -1) @ v
    return mha.out_proj(o.transpose(1, 2).reshape(B, q.shape[2], -1))


def measure_default_scale(d_ks, heads, seeds, device="cpu", masks=MASKS, d_model: int = 32,
                          batch: int = 3, T: int = 7, S: int = 9) -> pd.DataFrame:
    """One row per (seed, d_k, heads, attention, mask, path): relative error of the module's default attention
    against SDPA's default scale, the reference's own error against the textbook formula, and the scale read off
    the logits tap (times sqrt(d_k): 1 when the default is 1/sqrt(d_k))."""
    rows = []
    for seed, d_k, h, attention, mask_kind in product(seeds, d_ks, heads, ("self", "cross"), masks):
        causal = "causal" in mask_kind
        if causal and attention == "cross":
            continue  # a causal mask is a self-attention mask
        g = torch.Generator().manual_seed(int(seed) * 1_000_003 + d_k * 101 + h)
        torch.manual_seed(int(seed) * 7919 + d_k + h)
        cfg = ModelConfig(d_model=d_model, n_heads=h, d_k=d_k, d_v=max(d_model // h, 1), src_vocab=8,
                          n_encoder_layers=0, n_decoder_layers=0)
        mha = MultiHeadAttention(cfg, causal=causal).to(device=device, dtype=torch.float64).eval()
        x = torch.randn(batch, T, d_model, generator=g, dtype=torch.float64).to(device)
        memory = None if attention == "self" else torch.randn(batch, S, d_model, generator=g,
                                                              dtype=torch.float64).to(device)
        n_keys = T if memory is None else S
        kpm = None
        if "key_padding" in mask_kind:                    # pad a random tail; key 0 always visible
            lengths = torch.randint(1, n_keys + 1, (batch,), generator=g)
            kpm = (torch.arange(n_keys)[None, :] >= lengths[:, None]).to(device)
        mask = build_mask(T, n_keys, kpm, causal, device=x.device)
        with torch.no_grad():
            ref, q, k = _reference_sdpa_default(mha, x, memory, mask)
            book = _textbook(q, k, mha.v_proj, x if memory is None else memory, mha, mask)
            fast = mha(x, memory, key_padding_mask=kpm)
            with capture(mha, "logits", "q", "k") as cache:
                tapped = mha(x, memory, key_padding_mask=kpm)
            raw = cache["q"] @ cache["k"].transpose(-2, -1)
            measured_scale = float((cache["logits"].flatten() @ raw.flatten()) / (raw.flatten() @ raw.flatten()))
        denom = float(ref.abs().max())
        ref_err = float((ref - book).abs().max()) / denom
        for path, out in (("sdpa_fast_path", fast), ("tapped_explicit_path", tapped)):
            rows.append({"seed": seed, "d_k": d_k, "heads": h, "attention": attention, "mask": mask_kind,
                         "path": path, "rel_err_vs_sdpa_default": float((out - ref).abs().max()) / denom,
                         "reference_rel_err_vs_textbook": ref_err,
                         "scale_times_sqrt_dk": measured_scale * math.sqrt(d_k)})
    return pd.DataFrame(rows)


def default_scale_check(df: pd.DataFrame, rel_tol: float = REL_TOL) -> tuple[bool, float, str]:
    """(holds, worst relative error, detail): every case agrees with SDPA's default within ``rel_tol`` on both
    paths, the reference agrees with the textbook formula (a broken reference cannot pass the module), and the
    scale read off the logits tap is 1/sqrt(d_k)."""
    worst = float(df["rel_err_vs_sdpa_default"].max())
    ref_worst = float(df["reference_rel_err_vs_textbook"].max())
    scale_off = float((df["scale_times_sqrt_dk"] - 1).abs().max())
    bad = df[df["rel_err_vs_sdpa_default"] > rel_tol]
    detail = (f"{len(df)} cases (d_k {sorted(df.d_k.unique().tolist())}, heads {sorted(df.heads.unique().tolist())}, "
              f"self/cross, masks {sorted(df['mask'].unique().tolist())}, both paths); worst relative error "
              f"{worst:.3g} (reference vs textbook {ref_worst:.3g}); scale read off the logits tap x sqrt(d_k): "
              f"{df.scale_times_sqrt_dk.min():.6g}..{df.scale_times_sqrt_dk.max():.6g}")
    if len(bad):
        first = bad.iloc[0]
        detail += (f"; {len(bad)} cases off, e.g. d_k={first.d_k}, heads={first.heads}, {first.attention}, "
                   f"{first['mask']}, {first.path}: {first.rel_err_vs_sdpa_default:.3g}")
    return max(worst, ref_worst, scale_off) <= rel_tol, worst, detail
