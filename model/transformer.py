"""The Transformer of Figure 1 and its encoder-only / decoder-only variants.

No recurrence and no convolution (C1): every layer is attention + a position-wise feed-forward
network, each wrapped in residual + LayerNorm (post-LN as in the paper; ``norm_first`` for pre-LN,
which adds a final LayerNorm to each stack).
"""
from __future__ import annotations

import torch
from torch import nn

from .attention import MultiHeadAttention
from .common import Embedding, Tagger, init_linear_weights
from .config import ModelConfig


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2 (paper 3.3)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.linear1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.linear2 = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


class _Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.norm_first = cfg.norm_first
        self.drop = nn.Dropout(cfg.dropout)

    def _sublayer(self, x: torch.Tensor, norm: nn.LayerNorm, fn) -> torch.Tensor:
        """Post-LN: LayerNorm(x + Dropout(Sublayer(x))) (paper 3.1, 5.4); pre-LN: x + Dropout(Sublayer(LN(x)))."""
        if self.norm_first:
            return x + self.drop(fn(norm(x)))
        return norm(x + self.drop(fn(x)))


class EncoderLayer(_Block):
    """Self-attention + FFN. ``causal=True`` makes it a decoder-only (GPT-style) layer."""

    def __init__(self, cfg: ModelConfig, causal: bool = False) -> None:
        super().__init__(cfg)
        self.self_attn = MultiHeadAttention(cfg, causal=causal)
        self.ff = FeedForward(cfg)
        self.norm1 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self._sublayer(x, self.norm1, lambda y: self.self_attn(y, key_padding_mask=pad_mask))
        return self._sublayer(x, self.norm2, self.ff)


class DecoderLayer(_Block):
    """Masked self-attention + encoder-decoder attention + FFN (paper 3.1)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__(cfg)
        self.self_attn = MultiHeadAttention(cfg, causal=True)
        self.cross_attn = MultiHeadAttention(cfg, causal=False)
        self.ff = FeedForward(cfg)
        self.norm1 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)
        self.norm3 = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, src_pad_mask: torch.Tensor | None = None,
                tgt_pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self._sublayer(x, self.norm1, lambda y: self.self_attn(y, key_padding_mask=tgt_pad_mask))
        x = self._sublayer(x, self.norm2, lambda y: self.cross_attn(y, memory, key_padding_mask=src_pad_mask))
        return self._sublayer(x, self.norm3, self.ff)


class Encoder(nn.Module):
    """A stack of ``EncoderLayer`` (``causal`` for decoder-only models); final LN when pre-LN."""

    def __init__(self, cfg: ModelConfig, n_layers: int, causal: bool = False) -> None:
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(cfg, causal=causal) for _ in range(n_layers))
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cfg.norm_first else None

    def forward(self, h: torch.Tensor, pad_mask: torch.Tensor | None = None,
                n_layers: int | None = None) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            if n_layers is not None and i >= n_layers:
                break
            h = layer(h, pad_mask)
        return h if self.norm is None else self.norm(h)


class Decoder(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_decoder_layers))
        self.norm = nn.LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps) if cfg.norm_first else None

    def forward(self, h: torch.Tensor, memory: torch.Tensor, src_pad_mask: torch.Tensor | None = None,
                tgt_pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        for layer in self.layers:
            h = layer(h, memory, src_pad_mask, tgt_pad_mask)
        return h if self.norm is None else self.norm(h)


class Transformer(nn.Module):
    """Encoder-decoder Transformer (Figure 1). ``tie_embeddings``: the pre-softmax projection
    shares the target embedding, and source and target embeddings are one table when the
    vocabularies match (paper 3.4)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.src_embed = Embedding(cfg.src_vocab, cfg)
        share = cfg.tie_embeddings and cfg.src_vocab == cfg.tgt_vocab
        self.tgt_embed = self.src_embed if share else Embedding(cfg.tgt_vocab, cfg)
        self.encoder = Encoder(cfg, cfg.n_encoder_layers)
        self.decoder = Decoder(cfg)
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab)
        init_linear_weights(self, cfg)
        if cfg.tie_embeddings:
            self.generator.weight = self.tgt_embed.tok.weight

    def encode(self, src: torch.Tensor, src_pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        """src (B, S) ids -> memory (B, S, d_model)."""
        return self.encoder(self.src_embed(src), src_pad_mask)

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src_pad_mask: torch.Tensor | None = None,
               tgt_pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        """tgt_in (B, T) ids (BOS-shifted) + memory -> next-token logits (B, T, tgt_vocab)."""
        h = self.decoder(self.tgt_embed(tgt_in), memory, src_pad_mask, tgt_pad_mask)
        return self.generator(h)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, src_pad_mask: torch.Tensor | None = None,
                tgt_pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.decode(tgt_in, self.encode(src, src_pad_mask), src_pad_mask, tgt_pad_mask)


class _StackTagger(Tagger):
    """Embedding -> self-attention stack (named ``stack_name``) -> pool -> linear head."""

    def __init__(self, cfg: ModelConfig, n_classes: int, pool: str | None, causal: bool,
                 n_layers: int, stack_name: str) -> None:
        super().__init__(cfg, n_classes, pool)
        self.causal = causal
        self.embedding = Embedding(cfg.src_vocab, cfg)
        self._stack_name = stack_name
        setattr(self, stack_name, Encoder(cfg, n_layers, causal=causal))
        self.head = nn.Linear(cfg.d_model, n_classes)
        init_linear_weights(self, cfg)
        if cfg.tie_embeddings and n_classes == cfg.src_vocab:
            self.head.weight = self.embedding.tok.weight

    def features(self, h: torch.Tensor, n_layers: int | None = None,
                 pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The layer stack on continuous inputs h (B, T, d_model), truncated to the first
        ``n_layers`` layers; differentiable in float64 for Jacobian probes."""
        stack = getattr(self, self._stack_name)
        return stack(h, pad_mask, self._check_n_layers(n_layers, len(stack.layers)))


class EncoderTagger(_StackTagger):
    """Encoder-only Transformer with a per-position (``pool=None``) or pooled classification head.
    Layers live under ``encoder.layers.{i}``; ``causal=True`` masks the self-attention."""

    def __init__(self, cfg: ModelConfig, n_classes: int, pool: str | None = None, causal: bool = False) -> None:
        super().__init__(cfg, n_classes, pool, causal, cfg.n_encoder_layers, "encoder")


class QueryTagger(EncoderTagger):
    """``EncoderTagger(pool="last")`` whose ``forward`` computes the last layer at the last position (the query)
    only: the other positions enter it as keys and values, and their outputs, never read by the head, are not
    computed. Same modules, tap names and parameters as ``EncoderTagger``, so its weights load as they are, and at
    the query the same function up to float rounding; a step costs about half as much when the FFN dominates.
    ``features`` is the base one (every position). No pad mask."""

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        if pad_mask is not None or self.pool != "last":
            raise ValueError("QueryTagger: pool='last' and no pad mask only")
        h = self.embed(x)
        *first, last = self.encoder.layers
        for layer in first:
            h = layer(h)
        q = h[:, -1:]
        if last.norm_first:
            kv = last.norm1(h)
            q = q + last.drop(last.self_attn(kv[:, -1:], kv))
            q = q + last.drop(last.ff(last.norm2(q)))
        else:
            q = last.norm1(q + last.drop(last.self_attn(q, h)))
            q = last.norm2(q + last.drop(last.ff(q)))
        if self.encoder.norm is not None:
            q = self.encoder.norm(q)
        return self.head(q[:, 0])


class DecoderLM(_StackTagger):
    """Decoder-only causal Transformer (no cross-attention), ``cfg.n_decoder_layers`` layers under
    ``decoder.layers.{i}``. Input vocabulary ``src_vocab``; the head predicts ``n_classes``
    (default ``tgt_vocab``, which defaults to ``src_vocab``: a language model)."""

    def __init__(self, cfg: ModelConfig, n_classes: int | None = None, pool: str | None = None) -> None:
        super().__init__(cfg, cfg.tgt_vocab if n_classes is None else n_classes, pool, True,
                         cfg.n_decoder_layers, "decoder")
