"""Pieces every architecture shares: embeddings with positions, weight init, the tagger interface.

The tagger interface (``embed`` / ``features`` / ``forward``) is what lets a probe swap a
Transformer for a conv or recurrent stack by name and take float64 Jacobians of output i with
respect to input i-d on continuous inputs (C2's path-length measurement).
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .config import ModelConfig
from .faults import active_fault

POOL_KINDS = (None, "first", "last", "mean")


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...) (paper 3.5); (max_len, d)."""
    pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: d_model // 2])
    return pe.to(torch.get_default_dtype())


class Embedding(nn.Module):
    """Token embedding (times sqrt(d_model) when ``cfg.scale_embeddings``) plus positional
    encoding, then dropout (paper 3.4, 3.5, 5.4). Init std: ``cfg.resolved_embed_init_std()``
    (d_model**-0.5 with scaling: see the comment on ``ModelConfig.embed_init_std``)."""

    def __init__(self, vocab: int, cfg: ModelConfig, positional: str | None = None) -> None:
        super().__init__()
        self.positional = cfg.positional if positional is None else positional
        self.max_len = cfg.max_len
        self.tok = nn.Embedding(vocab, cfg.d_model)
        nn.init.normal_(self.tok.weight, std=cfg.resolved_embed_init_std())
        self.multiplier = math.sqrt(cfg.d_model) if cfg.scale_embeddings else 1.0
        if self.positional == "sinusoidal":
            self.register_buffer("pe", sinusoidal_table(cfg.max_len, cfg.d_model), persistent=False)
        elif self.positional == "learned":
            # std sqrt(1/2): the per-component variance of the sinusoidal table, so the two
            # options give the token signal the same competition at init
            self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
            nn.init.normal_(self.pos.weight, std=math.sqrt(0.5))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} exceeds ModelConfig.max_len={self.max_len}")
        h = self.tok(x) * self.multiplier
        if self.positional != "none" and active_fault() != "no_positional_encoding":
            h = h + (self.pe[:T] if self.positional == "sinusoidal" else self.pos.weight[:T])
        return self.drop(h)


def init_linear_weights(module: nn.Module, cfg: ModelConfig) -> None:
    """``cfg.init == "xavier"``: Xavier-uniform Linear weights and zero biases (as the Annotated
    Transformer / tensor2tensor); ``torch_default`` leaves PyTorch's init. Call before tying."""
    if cfg.init != "xavier":
        return
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


def pool_positions(h: torch.Tensor, pool: str | None, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
    """(B, T, d) -> (B, T, d) for pool None, else (B, d): first position, last non-pad position,
    or mean over non-pad positions."""
    if pool is None:
        return h
    if pool == "first":
        return h[:, 0]
    if pool == "last":
        if pad_mask is None:
            return h[:, -1]
        last = ((~pad_mask).sum(1) - 1).clamp_min(0)
        return h[torch.arange(h.shape[0], device=h.device), last]
    if pad_mask is None:
        return h.mean(1)
    keep = (~pad_mask).unsqueeze(-1).to(h.dtype)
    return (h * keep).sum(1) / keep.sum(1).clamp_min(1.0)


class Tagger(nn.Module):
    """Base of every per-position / pooled classifier: token ids -> ``embed`` -> ``features`` ->
    pool -> linear head. Subclasses build ``self.embedding`` and implement ``features``."""

    def __init__(self, cfg: ModelConfig, n_classes: int, pool: str | None = None) -> None:
        super().__init__()
        if not isinstance(n_classes, int) or isinstance(n_classes, bool) or n_classes <= 0:
            raise ValueError(f"n_classes must be a positive integer, got {n_classes!r}")
        if pool not in POOL_KINDS:
            raise ValueError(f"pool: unknown kind {pool!r}; valid: {', '.join(map(repr, POOL_KINDS))}")
        self.cfg = cfg
        self.n_classes = n_classes
        self.pool = pool

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) -> continuous inputs (B, T, d_model) of ``features``."""
        return self.embedding(x)

    def features(self, h: torch.Tensor, n_layers: int | None = None,
                 pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        raise NotImplementedError

    def _check_n_layers(self, n_layers: int | None, total: int) -> int:
        if n_layers is None:
            return total
        if not 0 <= n_layers <= total:
            raise ValueError(f"n_layers must be in [0, {total}], got {n_layers}")
        return n_layers

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x: (B, T) token ids; pad_mask: (B, T) bool, True at padding. -> (B, T, C) or (B, C)."""
        h = self.features(self.embed(x), pad_mask=pad_mask)
        return self.head(pool_positions(h, self.pool, pad_mask))
