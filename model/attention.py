"""ONE multi-head attention module; every variant the claims compare is a switch of it.

Switches (all from ``ModelConfig``): ``score`` dot | additive (C3, R2, R3), ``scale`` default
1/sqrt(d_k) | none | float | ``scale_exponent`` alpha -> d_k**-alpha (C4, R1), ``qk_norm`` none |
layernorm | l2 (each with a learnable per-head gain on the logits, learnt as g or, ``qk_norm_gain_param="log"``, as
log g) | rmsnorm (learnable per-dimension gains on q and
on k) (Q1), key-padding and causal masks.

Two paths, same numbers: with no tap of this module active, dot-product attention goes through
``F.scaled_dot_product_attention`` with the scale passed explicitly (fast path); otherwise the
explicit path computes logits -> mask -> softmax -> weights @ v with a ``Tap`` at each step.
A kernel under trial (``model/kernels.py``: the config's ``kernel``, else the session's) replaces that step for the
dot score without QK-norm; additive and QK-norm stay ours. Projections, faults and the q/k/v/out taps stay; ``weights`` only if the kernel returns them.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig
from .faults import LOCAL_WINDOW, active_fault
from .kernels import active_kernel, kernel_named
from .taps import Tap


# ---------------------------------------------------------------------- functional helpers
def build_mask(T: int, S: int, key_padding_mask: torch.Tensor | None = None, causal: bool = False,
               leak: bool = False, device: torch.device | None = None,
               window: int | None = None) -> torch.Tensor | None:
    """Boolean mask, True = may attend, broadcastable to (B, h, T, S); None when nothing is masked.

    ``key_padding_mask`` is (B, S) with True at padded keys. ``causal``: query i (the last T of S
    positions) sees keys j <= i; ``leak`` (the ``causal_leak`` fault) also lets it see j = i+1.
    ``window`` (the ``local_window`` fault): query i sees only keys with |i - j| <= window.
    """
    allowed = None
    if causal or window is not None:
        i = torch.arange(T, device=device).unsqueeze(1) + (S - T)
        j = torch.arange(S, device=device).unsqueeze(0)
    if causal:
        allowed = (j <= i + int(leak))[None, None]
    if window is not None:
        near = ((i - j).abs() <= window)[None, None]
        allowed = near if allowed is None else allowed & near
    if key_padding_mask is not None:
        if key_padding_mask.dtype != torch.bool or key_padding_mask.shape[-1] != S:
            raise ValueError(f"key_padding_mask must be a bool (B, S={S}) tensor with True at "
                             f"padded keys, got {key_padding_mask.dtype} {tuple(key_padding_mask.shape)}")
        keep = ~key_padding_mask[:, None, None, :]
        allowed = keep if allowed is None else allowed & keep
    return allowed


def dot_logits(q: torch.Tensor, k: torch.Tensor, scale: float) -> torch.Tensor:
    """scale * q k^T: (B, h, T, d) x (B, h, S, d) -> (B, h, T, S)."""
    return torch.matmul(q, k.transpose(-2, -1)) * scale


def additive_logits(q: torch.Tensor, k: torch.Tensor, v_a: torch.Tensor, scale: float,
                    chunk: int | None = None, tanh: bool = True) -> torch.Tensor:
    """Bahdanau score per head: scale * v_a[h]^T tanh(q_t + k_s), where q, k are already the
    per-head projections W_q x, W_k y (the single hidden layer of width d_k of the paper's
    "additive attention"). ``chunk=None`` materialises (B, h, T, S, d_k) and lets autograd keep
    it: fine at our sizes. ``chunk=c`` computes c queries at a time and recomputes tanh in
    backward (``_ChunkedAdditiveScore``): the same numbers in O(B h T S) memory (R3's lean form).
    ``tanh=False`` (the ``additive_no_tanh`` fault): v_a^T (q_t + k_s) = v_a^T q_t + v_a^T k_s, computed as that
    sum, so nothing of (B, h, T, S, d_k) is ever built."""
    if not tanh:
        va = v_a[:, :, None]                                              # (h, d_k, 1)
        return (torch.matmul(q, va) + torch.matmul(k, va).transpose(-2, -1)) * scale
    if chunk is not None:
        return _ChunkedAdditiveScore.apply(q, k, v_a, int(chunk)) * scale
    hidden = torch.tanh(q.unsqueeze(-2) + k.unsqueeze(-3))          # (B, h, T, S, d_k)
    return torch.einsum("bhtsd,hd->bhts", hidden, v_a) * scale


class _ChunkedAdditiveScore(torch.autograd.Function):
    """v_a[h]^T tanh(q_t + k_s) a chunk of queries at a time, saving only q, k, v_a: backward
    recomputes each chunk's tanh, so no (B, h, T, S, d_k) tensor outlives its chunk (R3: how much of
    additive attention's cost is the materialisation, and how much the score itself)."""

    @staticmethod
    def forward(ctx, q: torch.Tensor, k: torch.Tensor, v_a: torch.Tensor, chunk: int) -> torch.Tensor:
        T, S = q.shape[-2], k.shape[-2]
        va_col = v_a[:, None, :, None]                                   # (h, 1, d_k, 1)
        out = q.new_empty(*q.shape[:-1], S)
        for i in range(0, T, chunk):
            hidden = torch.tanh(q[..., i:i + chunk, None, :] + k[..., None, :, :])   # (B, h, c, S, d_k)
            out[..., i:i + chunk, :] = torch.matmul(hidden, va_col).squeeze(-1)
        ctx.save_for_backward(q, k, v_a)
        ctx.chunk = chunk
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor):
        q, k, v_a = ctx.saved_tensors
        chunk, T = ctx.chunk, q.shape[-2]
        va = v_a[:, None, None, :]                                       # (h, 1, 1, d_k)
        dq, dk, dva = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v_a)
        for i in range(0, T, chunk):
            hidden = torch.tanh(q[..., i:i + chunk, None, :] + k[..., None, :, :])
            g = grad[..., i:i + chunk, :, None]                          # (B, h, c, S, 1)
            dva += (g * hidden).sum(dim=(0, 2, 3))
            dpre = g * va * (1.0 - hidden * hidden)                      # d/d(q_t + k_s)
            dq[..., i:i + chunk, :] = dpre.sum(-2)
            dk += dpre.sum(-3)
        return dq, dk, dva, None


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """softmax over keys with masked keys at exactly zero weight; a query with no allowed key
    gets all-zero weights (what SDPA returns), never NaN."""
    if mask is None:
        return torch.softmax(logits, dim=-1)
    filled = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
    return torch.softmax(filled, dim=-1).masked_fill(~mask, 0.0)


def uniform_weights(logits: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The ``uniform_attention`` fault: equal weight on every allowed key, whatever the logits."""
    allowed = torch.ones_like(logits, dtype=torch.bool) if mask is None else mask.expand_as(logits)
    w = allowed.to(logits.dtype)
    return w / w.sum(-1, keepdim=True).clamp_min(1.0)


def henry_gain_init(seq_len: int) -> float:
    """Henry et al. 2020's initial QKNorm gain g0 = log2(L^2 - L), L the (97.5th percentile) sequence length: the
    gain that lets a cosine logit in [-1, 1] reach the softmax's usable range for L keys (``qk_norm="l2"``)."""
    if seq_len < 2:
        raise ValueError(f"seq_len must be >= 2 for log2(L^2 - L), got {seq_len}")
    return math.log2(seq_len * seq_len - seq_len)


def scaled_dot_product(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float,
                       mask: torch.Tensor | None = None, *, dropout_p: float = 0.0,
                       explicit: bool = False) -> torch.Tensor:
    """softmax(scale * q k^T, masked) v. ``explicit=False``: PyTorch's fused SDPA kernel;
    ``explicit=True``: the same math written out (the module's tapped path uses these steps)."""
    if not explicit:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)
    weights = masked_softmax(dot_logits(q, k, scale), mask)
    if dropout_p:
        weights = F.dropout(weights, dropout_p)
    return torch.matmul(weights, v)


# ---------------------------------------------------------------------- the module
class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)
    (paper 3.2.2), with d_k and d_v independent of d_model / h.

    Taps (module paths under this module): ``q``, ``k`` (B, h, T|S, d_k) as they enter the score
    (after QK-norm and gain), ``v`` (B, h, S, d_v), ``logits`` (B, h, T, S) after scaling, before
    mask and softmax, ``weights`` (B, h, T, S) before attention dropout, ``out`` (B, h, T, d_v) per
    head before the output projection.
    """

    def __init__(self, cfg: ModelConfig, causal: bool = False) -> None:
        super().__init__()
        h, d_k, d_v = cfg.n_heads, cfg.d_k, cfg.d_v
        self.n_heads, self.d_k, self.d_v = h, d_k, d_v
        self.causal = causal
        self.score = cfg.score
        self.additive_chunk = cfg.additive_chunk
        self.qk_norm = cfg.qk_norm
        self.norm_eps = cfg.layer_norm_eps
        self.attn_dropout = cfg.attn_dropout
        self.kernel_name = cfg.kernel
        if cfg.kernel is not None:
            kernel_named(cfg.kernel)                # a name nobody registered fails here, naming the registered
        self.base_scale = cfg.attn_scale()
        # scale faults act on a dot product's scale derived from d_k (default or d_k^-alpha); additive has no
        # scale to break, and an explicit scale ("none" or a number) is the config's, not a derivation
        self.fault_scalable = cfg.score == "dot" and (cfg.uses_default_scale() or cfg.scale_exponent is not None)
        self.q_proj = nn.Linear(cfg.d_model, h * d_k)
        self.k_proj = nn.Linear(cfg.d_model, h * d_k)
        self.v_proj = nn.Linear(cfg.d_model, h * d_v)
        self.out_proj = nn.Linear(h * d_v, cfg.d_model)
        if cfg.score == "additive":
            bound = 1.0 / math.sqrt(d_k)
            self.v_a = nn.Parameter(torch.empty(h, d_k).uniform_(-bound, bound))
        if cfg.qk_norm == "rmsnorm":
            # RMSNorm over the head dimension of q and of k, each with learnable per-dimension gains shared by the
            # heads (Gemma 3's and Qwen3's q_norm/k_norm; OLMo 2 normalises the whole h*d_k projection instead)
            self.q_norm_gain = nn.Parameter(torch.full((d_k,), float(cfg.qk_norm_gain_init)))
            self.k_norm_gain = nn.Parameter(torch.full((d_k,), float(cfg.qk_norm_gain_init)))
        elif cfg.qk_norm != "none":
            # learnable per-head gain g: logits = g * scale * norm(q) . norm(k) (Henry et al. 2020), learnt as g,
            # or as log g (``qk_norm_gain_param="log"``: Adam's steps then change g by a factor, not by ~lr)
            g0 = float(cfg.qk_norm_gain_init)
            if cfg.qk_norm_gain_param == "log":
                self.qk_log_gain = nn.Parameter(torch.full((h, 1, 1), math.log(g0)))
            else:
                self.qk_gain = nn.Parameter(torch.full((h, 1, 1), g0))
        self.q, self.k, self.v = Tap(), Tap(), Tap()
        self.logits, self.weights, self.out = Tap(), Tap(), Tap()
        self._taps = (self.q, self.k, self.v, self.logits, self.weights, self.out)

    def effective_scale(self, fault: str | None = None) -> float:
        """The scale a forward uses now: the config's, unless a scale fault is active."""
        fault = active_fault() if fault is None else fault
        if self.fault_scalable:
            if fault == "no_scale":
                return 1.0
            if fault == "scale_by_dk":
                return self.base_scale ** 2
            if fault == "scale_inverted":
                return 1.0 / self.base_scale
        return self.base_scale

    def _qk_normalize(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """q and k as they enter the score under ``qk_norm`` (gains applied): rmsnorm, each with its per-dimension
        gains (mean square 1 at gain 1: Var(q.k) ~ d_k); layernorm (no affine: Var(q.k) ~ d_k) and l2 (unit vectors:
        |q.k| <= 1, Var(q.k) ~ 1/d_k), the per-head gain on q, so that the logits are g * scale * norm(q).norm(k)."""
        if self.qk_norm == "rmsnorm":
            return (F.rms_norm(q, (self.d_k,), self.q_norm_gain, eps=self.norm_eps),
                    F.rms_norm(k, (self.d_k,), self.k_norm_gain, eps=self.norm_eps))
        if self.qk_norm == "layernorm":
            q, k = (F.layer_norm(t, (self.d_k,), eps=self.norm_eps) for t in (q, k))
        else:
            q, k = (F.normalize(t, dim=-1, eps=1e-12) for t in (q, k))
        return q * self.gain(), k

    def gain(self) -> torch.Tensor:
        """The per-head gain g (h, 1, 1) of layernorm/l2 QK-norm, however it is learnt."""
        return self.qk_log_gain.exp() if hasattr(self, "qk_log_gain") else self.qk_gain

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None,
                key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x: (B, T, d_model) queries; memory: (B, S, d_model) keys/values (None = self-attention);
        key_padding_mask: (B, S) bool, True at padded keys. Returns (B, T, d_model)."""
        kv = x if memory is None else memory
        B, T, _ = x.shape
        S = kv.shape[1]
        h = self.n_heads
        q = self.q_proj(x).view(B, T, h, self.d_k).transpose(1, 2)
        k = self.k_proj(kv).view(B, S, h, self.d_k).transpose(1, 2)
        v = self.v_proj(kv).view(B, S, h, self.d_v).transpose(1, 2)
        fault = active_fault()
        if fault == "single_head":      # every head reads head 0's slice of W^Q, W^K, W^V
            q, k, v = (t[:, :1].expand(-1, h, -1, -1) for t in (q, k, v))
        if self.qk_norm != "none":
            q, k = self._qk_normalize(q, k)
        scale = self.effective_scale(fault)
        leak = self.causal and fault == "causal_leak"
        uniform = fault == "uniform_attention"
        window = LOCAL_WINDOW if fault == "local_window" and memory is None else None
        if fault == "padding_leak":
            key_padding_mask = None
        dropout_p = self.attn_dropout if self.training else 0.0
        tapped = any(t._sinks for t in self._taps)

        kernel = None
        if self.score == "dot" and self.qk_norm == "none" and not uniform:
            kernel = active_kernel() if self.kernel_name is None else kernel_named(self.kernel_name)
        if kernel is not None:                                         # the kernel under trial (issue 27)
            q, k, v = self.q(q), self.k(k), self.v(v)
            mask = build_mask(T, S, key_padding_mask, self.causal, leak, x.device, window)
            o, weights = kernel(q, k, v, mask=mask, is_causal=False, scale=scale, dropout_p=dropout_p)
            if weights is not None:
                self.weights(weights)
            o = self.out(o)
        elif self.score == "dot" and not uniform and not tapped:      # fast path
            if self.causal and key_padding_mask is None and not leak and window is None and T == S:
                o = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True, scale=scale)
            else:
                mask = build_mask(T, S, key_padding_mask, self.causal, leak, x.device, window)
                o = scaled_dot_product(q, k, v, scale, mask, dropout_p=dropout_p)
        else:                                                          # explicit, tapped path
            q, k, v = self.q(q), self.k(k), self.v(v)
            if self.score == "dot":
                logits = dot_logits(q, k, scale)
            else:
                logits = additive_logits(q, k, self.v_a, scale, chunk=self.additive_chunk,
                                         tanh=fault != "additive_no_tanh")
            logits = self.logits(logits)
            mask = build_mask(T, S, key_padding_mask, self.causal, leak, x.device, window)
            weights = uniform_weights(logits, mask) if uniform else masked_softmax(logits, mask)
            weights = self.weights(weights)
            if dropout_p:
                weights = F.dropout(weights, dropout_p)
            o = self.out(torch.matmul(weights, v))
        return self.out_proj(o.transpose(1, 2).reshape(B, T, h * self.d_v))

    def extra_repr(self) -> str:
        return (f"heads={self.n_heads}, d_k={self.d_k}, d_v={self.d_v}, score={self.score}, "
                f"scale={self.base_scale:.4g}, qk_norm={self.qk_norm}, causal={self.causal}")
