"""attention-claims model package: one configurable Transformer, its baselines, taps and faults.

Data flows one way: claims -> harness -> model; nothing here imports harness/ or claims/.
"""
from .baselines import ConvBlock, ConvStack, DilatedConvStack, LSTMSeq2Seq, LSTMTagger, LuongAttention
from .attention import (MultiHeadAttention, additive_logits, build_mask, dot_logits, henry_gain_init,
                        masked_softmax, scaled_dot_product, uniform_weights)
from .common import Embedding, Tagger, pool_positions, sinusoidal_table
from .config import ModelConfig
from .decoding import greedy_decode
from .faults import FAULTS, active_fault, inject, set_fault
from .taps import Tap, TapCache, capture, tap_names
from .registry import MODEL_NAMES, SEQ2SEQ_NAMES, TAGGER_NAMES, build, param_count
from .transformer import (Decoder, DecoderLayer, DecoderLM, Encoder, EncoderLayer, EncoderTagger,
                          FeedForward, QueryTagger, Transformer)

__all__ = [
    "ModelConfig", "MultiHeadAttention", "scaled_dot_product", "dot_logits", "additive_logits",
    "masked_softmax", "uniform_weights", "henry_gain_init",
    "build_mask", "Tap", "TapCache", "capture", "tap_names",
    "FAULTS", "set_fault", "active_fault", "inject", "Embedding", "Tagger", "pool_positions",
    "sinusoidal_table", "FeedForward", "EncoderLayer", "DecoderLayer", "Encoder", "Decoder",
    "Transformer", "EncoderTagger", "QueryTagger", "DecoderLM", "greedy_decode", "ConvBlock", "ConvStack",
    "DilatedConvStack", "LSTMTagger", "LSTMSeq2Seq", "LuongAttention", "build", "param_count",
    "MODEL_NAMES", "SEQ2SEQ_NAMES", "TAGGER_NAMES",
]
