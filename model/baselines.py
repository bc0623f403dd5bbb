"""The prior architectures the paper positions itself against (its section 4 and Table 1), with
the Transformer's interface so that a task swaps them by name (C1, C2).

* ``ConvStack`` — ConvS2S-style: kernel k, GLU, residual; relating positions d apart takes
  ceil(d / (k-1)) layers (path length linear in distance).
* ``DilatedConvStack`` — ByteNet-style: kernel 2, dilation 1, 2, 4, ...; ceil(log2(d+1)) layers.
* ``LSTMTagger`` / ``LSTMSeq2Seq`` — recurrent: d sequential steps. ``features(..., window=w)``
  truncates the recurrence to the last w steps, so a probe can find the smallest w at which
  y_i depends on x_{i-d} (the number of sequential operations between them: d + 1 steps).

Simplifications against the originals (stated here, not hidden): no weight normalisation or
ConvS2S's scaled init, no ByteNet bottleneck (1x1) sub-blocks, no input feeding in the LSTM
decoder (it would forbid teacher-forced parallel decoding; Luong et al. list it as optional).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .attention import masked_softmax
from .common import Embedding, Tagger, init_linear_weights
from .config import ModelConfig
from .taps import Tap


def _require_layers(name: str, n: int) -> int:
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"{name} must be an integer >= 1 for this model, got {n!r}")
    return n


# ---------------------------------------------------------------------- convolutional
class ConvBlock(nn.Module):
    """x + GLU(Conv1d(x)), times sqrt(1/2) to keep the residual sum's variance (ConvS2S, Gehring
    et al. 2017). Causal: left padding only, so output i sees inputs i - (k-1)*dilation .. i."""

    def __init__(self, d_model: int, kernel_size: int, dilation: int, causal: bool, dropout: float) -> None:
        super().__init__()
        self.conv = nn.Conv1d(d_model, 2 * d_model, kernel_size, dilation=dilation)
        total = (kernel_size - 1) * dilation
        self.padding = (total, 0) if causal else (total // 2, total - total // 2)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        y = x if pad_mask is None else x.masked_fill(pad_mask.unsqueeze(-1), 0.0)
        y = self.conv(F.pad(y.transpose(1, 2), self.padding))
        y = F.glu(y, dim=1).transpose(1, 2)
        return (x + self.drop(y)) * math.sqrt(0.5)


class ConvStack(Tagger):
    """ConvS2S-style tagger: embedding (token + ``cfg.positional``) -> ``n_layers`` GLU conv
    blocks of kernel ``kernel_size`` (default ``cfg.n_encoder_layers`` layers) -> head."""

    def __init__(self, cfg: ModelConfig, n_classes: int, pool: str | None = None, kernel_size: int = 3,
                 n_layers: int | None = None, causal: bool = True, dilations: list[int] | None = None) -> None:
        super().__init__(cfg, n_classes, pool)
        if not isinstance(kernel_size, int) or kernel_size < 2:
            raise ValueError(f"kernel_size must be an integer >= 2, got {kernel_size!r}")
        n_layers = cfg.n_encoder_layers if n_layers is None else n_layers
        if not isinstance(n_layers, int) or n_layers < 0:
            raise ValueError(f"n_layers must be an integer >= 0, got {n_layers!r}")
        dilations = [1] * n_layers if dilations is None else dilations
        self.kernel_size, self.causal, self.dilations = kernel_size, causal, list(dilations)
        self.embedding = Embedding(cfg.src_vocab, cfg)
        self.layers = nn.ModuleList(ConvBlock(cfg.d_model, kernel_size, d, causal, cfg.dropout)
                                    for d in self.dilations)
        self.head = nn.Linear(cfg.d_model, n_classes)
        init_linear_weights(self, cfg)

    def receptive_field(self, n_layers: int | None = None) -> int:
        """How many input positions (including i) output i can see through the first n layers."""
        n = self._check_n_layers(n_layers, len(self.layers))
        return 1 + sum((self.kernel_size - 1) * d for d in self.dilations[:n])

    def features(self, h: torch.Tensor, n_layers: int | None = None,
                 pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        n = self._check_n_layers(n_layers, len(self.layers))
        for layer in list(self.layers)[:n]:
            h = layer(h, pad_mask)
        return h


class DilatedConvStack(ConvStack):
    """ByteNet-style tagger: kernel 2, dilation doubling 1, 2, 4, ... per layer (restarting after
    ``dilation_cycle`` layers when given, as ByteNet's repeated blocks do), causal by default."""

    def __init__(self, cfg: ModelConfig, n_classes: int, pool: str | None = None, kernel_size: int = 2,
                 n_layers: int | None = None, causal: bool = True, dilation_cycle: int | None = None) -> None:
        n_layers = cfg.n_encoder_layers if n_layers is None else n_layers
        if dilation_cycle is not None and (not isinstance(dilation_cycle, int) or dilation_cycle < 1):
            raise ValueError(f"dilation_cycle must be None or an integer >= 1, got {dilation_cycle!r}")
        cycle = dilation_cycle or max(n_layers, 1)
        super().__init__(cfg, n_classes, pool, kernel_size, n_layers, causal,
                         dilations=[2 ** (i % cycle) for i in range(n_layers)])


# ---------------------------------------------------------------------- recurrent
def _lengths(pad_mask: torch.Tensor) -> torch.Tensor:
    return (~pad_mask).sum(1).clamp_min(1).cpu()


def _run_lstm(lstm: nn.LSTM, x: torch.Tensor, pad_mask: torch.Tensor | None = None, state=None):
    """nn.LSTM on (B, T, d), packed when a (right-)padding mask is given, so the final state and
    the backward direction ignore padding. Returns (outputs (B, T, d'), (h_n, c_n))."""
    if pad_mask is None:
        return lstm(x, state)
    packed = pack_padded_sequence(x, _lengths(pad_mask), batch_first=True, enforce_sorted=False)
    out, state = lstm(packed, state)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out, state


class LSTMTagger(Tagger):
    """A stack of single-layer LSTMs (hidden d_model; d_model/2 per direction when bidirectional)
    with dropout between layers -> head. The embedding has no positional encoding by default:
    the recurrence supplies order (pass ``positional`` to override)."""

    def __init__(self, cfg: ModelConfig, n_classes: int, pool: str | None = None, n_layers: int | None = None,
                 bidirectional: bool = False, positional: str = "none") -> None:
        super().__init__(cfg, n_classes, pool)
        n_layers = _require_layers("n_layers", cfg.n_encoder_layers if n_layers is None else n_layers)
        if bidirectional and cfg.d_model % 2:
            raise ValueError(f"bidirectional LSTMTagger needs an even d_model, got {cfg.d_model}")
        hidden = cfg.d_model // 2 if bidirectional else cfg.d_model
        self.bidirectional = bidirectional
        self.embedding = Embedding(cfg.src_vocab, cfg, positional=positional)
        self.layers = nn.ModuleList(nn.LSTM(cfg.d_model, hidden, batch_first=True, bidirectional=bidirectional)
                                    for _ in range(n_layers))
        self.drop = nn.Dropout(cfg.dropout)
        self.head = nn.Linear(cfg.d_model, n_classes)
        init_linear_weights(self, cfg)

    def _stack(self, h: torch.Tensor, n: int, pad_mask: torch.Tensor | None) -> torch.Tensor:
        for i, lstm in enumerate(list(self.layers)[:n]):
            h = _run_lstm(lstm, self.drop(h) if i else h, pad_mask)[0]
        return h

    def features(self, h: torch.Tensor, n_layers: int | None = None, pad_mask: torch.Tensor | None = None,
                 window: int | None = None) -> torch.Tensor:
        """The first ``n_layers`` LSTM layers on continuous inputs h (B, T, d).

        ``window=w`` (unidirectional only): output i is computed by running the stack from a zero
        state over inputs i-w+1 .. i only, so y_i depends on x_{i-d} iff d < w; the smallest such
        w is d + 1 sequential steps (C2's path length for recurrence). ``None``: full recurrence.
        """
        n = self._check_n_layers(n_layers, len(self.layers))
        full = self._stack(h, n, pad_mask)
        T = h.shape[1]
        if window is None or window >= T:
            return full
        if self.bidirectional:
            raise ValueError("window is defined for a unidirectional LSTMTagger only")
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an integer >= 1, got {window!r}")
        B, _, d = h.shape
        starts = T - window + 1
        windows = h.unfold(1, window, 1).permute(0, 1, 3, 2).reshape(B * starts, window, d)
        last = self._stack(windows, n, None)[:, -1].reshape(B, starts, -1)
        # outputs before position window-1 already see fewer than `window` inputs
        return torch.cat([full[:, : window - 1], last], dim=1)


class LuongAttention(nn.Module):
    """Global attention of Luong et al. (2015): score(h_t, s) = h_t . s ("dot") or
    h_t . W_a s ("general"); taps ``logits`` and ``weights`` (B, T, S)."""

    def __init__(self, d_model: int, kind: str = "general") -> None:
        super().__init__()
        if kind not in ("dot", "general"):
            raise ValueError(f"attention: unknown kind {kind!r}; valid: 'dot', 'general'")
        self.w_a = nn.Linear(d_model, d_model, bias=False) if kind == "general" else None
        self.logits, self.weights = Tap(), Tap()

    def forward(self, query: torch.Tensor, memory: torch.Tensor,
                key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        keys = memory if self.w_a is None else self.w_a(memory)
        logits = self.logits(torch.bmm(query, keys.transpose(1, 2)))
        mask = None if key_padding_mask is None else ~key_padding_mask[:, None, :]
        return torch.bmm(self.weights(masked_softmax(logits, mask)), memory)


class LSTMSeq2Seq(nn.Module):
    """Encoder-decoder LSTM with Luong attention, the Transformer's seq2seq interface.

    Decoder state starts from the encoder's final state (its top layer's, repeated, when the
    layer counts differ); attentional hidden state tanh(W_c [context; h_t]) -> generator.
    """

    def __init__(self, cfg: ModelConfig, attention: str = "general", positional: str = "none") -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        n_enc = _require_layers("n_encoder_layers", cfg.n_encoder_layers)
        n_dec = _require_layers("n_decoder_layers", cfg.n_decoder_layers)
        self.src_embed = Embedding(cfg.src_vocab, cfg, positional=positional)
        share = cfg.tie_embeddings and cfg.src_vocab == cfg.tgt_vocab
        self.tgt_embed = self.src_embed if share else Embedding(cfg.tgt_vocab, cfg, positional=positional)
        self.encoder = nn.LSTM(d, d, n_enc, batch_first=True, dropout=cfg.dropout if n_enc > 1 else 0.0)
        self.decoder = nn.LSTM(d, d, n_dec, batch_first=True, dropout=cfg.dropout if n_dec > 1 else 0.0)
        self.cross_attn = LuongAttention(d, attention)
        self.combine = nn.Linear(2 * d, d)
        self.drop = nn.Dropout(cfg.dropout)
        self.generator = nn.Linear(d, cfg.tgt_vocab)
        init_linear_weights(self, cfg)
        if cfg.tie_embeddings:
            self.generator.weight = self.tgt_embed.tok.weight

    def encode(self, src: torch.Tensor, src_pad_mask: torch.Tensor | None = None):
        """-> memory: (encoder outputs (B, S, d), (h_n, c_n))."""
        return _run_lstm(self.encoder, self.src_embed(src), src_pad_mask)

    def decode(self, tgt_in: torch.Tensor, memory, src_pad_mask: torch.Tensor | None = None,
               tgt_pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        enc_out, (h_n, c_n) = memory
        n_dec = self.decoder.num_layers
        if h_n.shape[0] != n_dec:
            h_n, c_n = (s[-1:].expand(n_dec, -1, -1).contiguous() for s in (h_n, c_n))
        dec_out, _ = self.decoder(self.tgt_embed(tgt_in), (h_n, c_n))
        context = self.cross_attn(dec_out, enc_out, src_pad_mask)
        h_tilde = torch.tanh(self.combine(torch.cat([context, dec_out], dim=-1)))
        return self.generator(self.drop(h_tilde))

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, src_pad_mask: torch.Tensor | None = None,
                tgt_pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.decode(tgt_in, self.encode(src, src_pad_mask), src_pad_mask, tgt_pad_mask)
