"""One dataclass that describes every model in the suite (nanoGPT style).

Everything a claim module varies (d_k alone for C3/C4 and Table 3 rows B, the score function for
C3/R2, the scale for C4/R1, QK-norm for Q1, heads for C5) is a field here, validated once in
``__post_init__`` so that a bad sweep point fails with a ValueError naming the field, not deep
inside a matmul.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Union

POSITIONAL_KINDS = ("sinusoidal", "learned", "none")
INIT_KINDS = ("torch_default", "xavier")
SCORE_KINDS = ("dot", "additive")
SCALE_KINDS = ("default", "none")
QK_NORM_KINDS = ("none", "layernorm", "l2", "rmsnorm")
#: how the per-head gain g of layernorm/l2 QK-norm is learnt: g itself ("linear"), or log g ("log": Adam's step on
#: log g is a relative change of g, so g can grow by a factor, not only by about lr per step)
QK_GAIN_PARAMS = ("linear", "log")

# Fields that __post_init__ derives when left as None; ``replace`` re-derives them.
_DERIVED = ("tgt_vocab", "d_k", "d_v")


def _bad(field_name: str, msg: str) -> ValueError:
    return ValueError(f"ModelConfig.{field_name}: {msg}")


@dataclass
class ModelConfig:
    """Hyper-parameters of the Transformer and of the baselines built from the same config.

    ``d_k``/``d_v`` default to ``d_model // n_heads`` but are independent fields: the paper's
    Table 3 rows B and our C3/C4 sweeps vary d_k with d_model fixed.
    """

    src_vocab: int = 32
    tgt_vocab: int | None = None            # None -> src_vocab
    d_model: int = 64
    n_heads: int = 4
    d_k: int | None = None                  # None -> d_model // n_heads (must divide)
    d_v: int | None = None                  # None -> d_model // n_heads (must divide)
    d_ff: int = 256
    n_encoder_layers: int = 2
    n_decoder_layers: int = 2
    dropout: float = 0.0                    # on sublayer outputs and on embeddings+positions (paper 5.4)
    attn_dropout: float = 0.0               # on attention weights; the paper does not use it
    norm_first: bool = False                # False = post-LN as in the paper; True = pre-LN
    layer_norm_eps: float = 1e-5
    positional: str = "sinusoidal"          # "sinusoidal" (paper) | "learned" | "none"
    max_len: int = 512
    scale_embeddings: bool = True           # multiply token embeddings by sqrt(d_model) (paper 3.4)
    # Std of the token-embedding init. None -> d_model**-0.5 when scale_embeddings, else 1.0.
    # Why: with PyTorch's default N(0, 1) embeddings multiplied by sqrt(d_model) every embedding
    # component has std sqrt(d_model) (8 at d_model=64) while the sinusoidal encoding has
    # amplitude 1, so position is swamped; we measured a reversal task stalling at 0.3-0.8 exact
    # match that way. std d_model**-0.5 makes the *scaled* embedding unit-variance, the same
    # magnitude as the positional signal (and as an unscaled N(0,1) embedding).
    embed_init_std: float | None = None
    init: str = "torch_default"             # "torch_default" | "xavier" (Linear weights)
    tie_embeddings: bool = False            # output projection (and src/tgt tables if vocabs match) share weights
    score: str = "dot"                      # "dot" (scaled dot product) | "additive" (Bahdanau)
    # Additive score only: None materialises the (B, h, T, S, d_k) hidden units (the plain form);
    # an int computes the score that many queries at a time and recomputes tanh in backward, so
    # memory is O(B h T S) like dot-product's (R3's lean form; same numbers, same gradients).
    additive_chunk: int | None = None
    # "default": 1/sqrt(d_k) for dot, 1 for additive (Bahdanau has no scale); "none": 1; or any float.
    scale: Union[str, float] = "default"
    scale_exponent: float | None = None     # alpha: scale = d_k ** -alpha (overrides nothing: exclusive with a non-default scale)
    # "none" | "layernorm" | "l2" (each with a learnable per-head gain g on the logits; l2 is Henry et al. 2020's
    # QKNorm, whose g0 is model.attention.henry_gain_init(L)) | "rmsnorm" (learnable per-dimension gains on q and k)
    qk_norm: str = "none"
    qk_norm_gain_init: float = 1.0          # initial gain: g (layernorm, l2), each dimension's (rmsnorm)
    qk_norm_gain_param: str = "linear"      # the per-head gain (layernorm, l2) learnt as g or as log g
    # A kernel registered in model/kernels.py (``register_kernel``) that this model's dot-product attention calls in
    # place of its own score-softmax-value step (issue 27's training arm); None: the session's kernel, if any.
    kernel: str | None = None
    _derived: tuple = field(default=(), init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ validation
    def __post_init__(self) -> None:
        derived = []
        for name in ("src_vocab", "d_model", "n_heads", "d_ff", "max_len"):
            self._check_positive_int(name)
        for name in ("n_encoder_layers", "n_decoder_layers"):
            v = getattr(self, name)
            if not _is_int(v) or v < 0:
                raise _bad(name, f"must be an integer >= 0, got {v!r}")
        if self.tgt_vocab is None:
            self.tgt_vocab = self.src_vocab
            derived.append("tgt_vocab")
        self._check_positive_int("tgt_vocab")
        for name in ("d_k", "d_v"):
            if getattr(self, name) is None:
                if self.d_model % self.n_heads:
                    raise _bad(name, f"d_model ({self.d_model}) is not divisible by n_heads "
                                     f"({self.n_heads}); set {name} explicitly")
                setattr(self, name, self.d_model // self.n_heads)
                derived.append(name)
            self._check_positive_int(name)
        for name in ("dropout", "attn_dropout"):
            p = getattr(self, name)
            if not isinstance(p, (int, float)) or not (0.0 <= p < 1.0):
                raise _bad(name, f"must be a probability in [0, 1), got {p!r}")
        if not _is_finite_number(self.layer_norm_eps) or self.layer_norm_eps <= 0:
            raise _bad("layer_norm_eps", f"must be a finite number > 0, got {self.layer_norm_eps!r}")
        self._check_choice("positional", POSITIONAL_KINDS)
        self._check_choice("init", INIT_KINDS)
        self._check_choice("score", SCORE_KINDS)
        self._check_choice("qk_norm", QK_NORM_KINDS)
        self._check_choice("qk_norm_gain_param", QK_GAIN_PARAMS)
        if self.qk_norm_gain_param != "linear" and self.qk_norm not in ("layernorm", "l2"):
            raise _bad("qk_norm_gain_param", f"applies to the per-head gain of qk_norm 'layernorm' or 'l2', "
                                             f"got qk_norm={self.qk_norm!r}")
        if self.additive_chunk is not None and (not _is_int(self.additive_chunk) or self.additive_chunk <= 0):
            raise _bad("additive_chunk", f"must be None or a positive integer (queries per chunk), "
                                         f"got {self.additive_chunk!r}")
        if self.embed_init_std is not None and (not _is_finite_number(self.embed_init_std)
                                                or self.embed_init_std <= 0):
            raise _bad("embed_init_std", f"must be None or a finite number > 0, got {self.embed_init_std!r}")
        if isinstance(self.scale, str):
            if self.scale not in SCALE_KINDS:
                raise _bad("scale", f"must be one of {', '.join(map(repr, SCALE_KINDS))} or a "
                                    f"positive float, got {self.scale!r}")
        elif not _is_finite_number(self.scale) or self.scale <= 0:
            raise _bad("scale", f"must be a finite number > 0, got {self.scale!r}")
        if self.scale_exponent is not None:
            if not _is_finite_number(self.scale_exponent):
                raise _bad("scale_exponent", f"must be a finite number (alpha in d_k**-alpha), "
                                             f"got {self.scale_exponent!r}")
            if self.scale != "default":
                raise _bad("scale_exponent", f"is exclusive with scale={self.scale!r}; "
                                             f"leave scale='default' when setting an exponent")
        if self.kernel is not None:
            if not isinstance(self.kernel, str) or not self.kernel:
                raise _bad("kernel", f"must be None or the name of a registered kernel, got {self.kernel!r}")
            if self.score != "dot" or self.qk_norm != "none":
                raise _bad("kernel", f"replaces the dot product's score-softmax-value step: needs score='dot' and "
                                     f"qk_norm='none', got score={self.score!r}, qk_norm={self.qk_norm!r}")
        if not _is_finite_number(self.qk_norm_gain_init) or self.qk_norm_gain_init <= 0:
            raise _bad("qk_norm_gain_init", f"must be a finite number > 0, got {self.qk_norm_gain_init!r}")
        for name in ("norm_first", "scale_embeddings", "tie_embeddings"):
            if not isinstance(getattr(self, name), bool):
                raise _bad(name, f"must be a bool, got {getattr(self, name)!r}")
        self._derived = tuple(derived)

    def _check_positive_int(self, name: str) -> None:
        v = getattr(self, name)
        if not _is_int(v) or v <= 0:
            raise _bad(name, f"must be a positive integer, got {v!r}")

    def _check_choice(self, name: str, choices: tuple) -> None:
        v = getattr(self, name)
        if v not in choices:
            raise _bad(name, f"unknown kind {v!r}; valid: {', '.join(map(repr, choices))}")

    # ------------------------------------------------------------------ derived values
    def attn_scale(self) -> float:
        """The factor multiplying q.k (or the additive score) that this config asks for.

        Faults from ``model.faults`` (``no_scale``, ``scale_by_dk``) act on top of this, at forward
        time; ``MultiHeadAttention.effective_scale()`` returns what a forward actually uses.
        """
        if self.scale_exponent is not None:
            return float(self.d_k) ** -float(self.scale_exponent)
        if self.scale == "none":
            return 1.0
        if self.scale == "default":
            return 1.0 if self.score == "additive" else float(self.d_k) ** -0.5
        return float(self.scale)

    def uses_default_scale(self) -> bool:
        """True when the scale is the score function's default (the one faults act on)."""
        return self.scale == "default" and self.scale_exponent is None

    def resolved_embed_init_std(self) -> float:
        if self.embed_init_std is not None:
            return float(self.embed_init_std)
        return self.d_model ** -0.5 if self.scale_embeddings else 1.0

    def replace(self, **changes: Any) -> "ModelConfig":
        """A copy with ``changes`` applied; fields that were derived (d_k, d_v, tgt_vocab left as
        None) are derived again, so ``cfg.replace(d_model=128)`` gets d_k = 128 // n_heads.
        (``dataclasses.replace`` would keep the old derived values.)"""
        kw = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        for name in self._derived:
            kw[name] = None
        kw.update(changes)
        return ModelConfig(**kw)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}

    # ------------------------------------------------------------------ presets
    @classmethod
    def paper_base(cls, **overrides: Any) -> "ModelConfig":
        """The paper's base model (Table 3): N=6, d_model=512, d_ff=2048, h=8, d_k=d_v=64,
        P_drop=0.1, shared 37000-token BPE vocabulary with tied embeddings, post-LN, sinusoidal."""
        return cls._preset(overrides, src_vocab=37000, d_model=512, n_heads=8, d_ff=2048,
                           n_encoder_layers=6, n_decoder_layers=6, dropout=0.1, norm_first=False,
                           positional="sinusoidal", max_len=1024, tie_embeddings=True)

    @classmethod
    def tiny(cls, **overrides: Any) -> "ModelConfig":
        """Unit tests and smoke probes: trains in seconds on one CPU core."""
        return cls._preset(overrides, src_vocab=16, d_model=32, n_heads=4, d_ff=64,
                           n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=128)

    @classmethod
    def small(cls, **overrides: Any) -> "ModelConfig":
        """CPU training runs of the claim modules (minutes on 2 cores)."""
        return cls._preset(overrides, src_vocab=32, d_model=64, n_heads=4, d_ff=256,
                           n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, max_len=256)

    @classmethod
    def _preset(cls, overrides: dict[str, Any], **base: Any) -> "ModelConfig":
        base.update(overrides)
        return cls(**base)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_finite_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
