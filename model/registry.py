"""Every architecture by name, so a task swaps them with one string (C1, C2)."""
from __future__ import annotations

from typing import Any, Callable

from torch import nn

from .baselines import ConvStack, DilatedConvStack, LSTMSeq2Seq, LSTMTagger
from .config import ModelConfig
from .transformer import DecoderLM, EncoderTagger, Transformer

_BUILDERS: dict[str, Callable[..., nn.Module]] = {
    "transformer": Transformer,            # seq2seq: (cfg)
    "encoder_tagger": EncoderTagger,       # tagger: (cfg, n_classes, pool=None, causal=False)
    "decoder_lm": DecoderLM,               # tagger: (cfg, n_classes=None, pool=None)
    "conv": ConvStack,                     # tagger: (cfg, n_classes, pool=None, kernel_size=3, n_layers=None, causal=True)
    "dilated_conv": DilatedConvStack,      # tagger: (cfg, n_classes, pool=None, kernel_size=2, n_layers=None, causal=True, dilation_cycle=None)
    "lstm_tagger": LSTMTagger,             # tagger: (cfg, n_classes, pool=None, n_layers=None, bidirectional=False)
    "lstm_seq2seq": LSTMSeq2Seq,           # seq2seq: (cfg, attention="general")
}
MODEL_NAMES: tuple[str, ...] = tuple(_BUILDERS)
SEQ2SEQ_NAMES: tuple[str, ...] = ("transformer", "lstm_seq2seq")
TAGGER_NAMES: tuple[str, ...] = tuple(n for n in MODEL_NAMES if n not in SEQ2SEQ_NAMES)


def build(name: str, cfg: ModelConfig, **kw: Any) -> nn.Module:
    """Build architecture ``name`` from ``cfg``; ``kw`` go to its constructor (taggers need ``n_classes``)."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown model {name!r}; valid names: {', '.join(MODEL_NAMES)}")
    if not isinstance(cfg, ModelConfig):
        raise TypeError(f"cfg must be a ModelConfig, got {type(cfg).__name__}")
    return _BUILDERS[name](cfg, **kw)


def param_count(model: nn.Module, trainable_only: bool = True) -> int:
    """Number of parameters (tied weights counted once)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
