"""The cases R1's exactness draws (``harness.trial.kernel_probes.accuracy``): shapes, masks, scales and the optional
features a kernel takes, as Hypothesis strategies, and each case's inputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import torch

MASK_KINDS = ("none", "causal", "padding", "additive", "bias")   # bias: finite, ALiBi's (not a mask: issue 39)
EXPLICIT_SCALES = (None, 1.0, 0.05, 0.3, 2.0)   # None first: Hypothesis shrinks toward it (None must mean 1/sqrt(d_k))
TILE_EDGES = (63, 64, 65, 127, 128, 129, 255, 256, 257)   # one key short of, at and past 64- and 128-key tiles
KV_GROUPS = (1, 2, 4)   # query heads per key/value head, drawn for a kernel that takes GQA (1: MHA; 1 kv head: MQA)
D_V = ("d_k", "d_k / 2", "2 d_k")   # the value head dim, drawn for a kernel that takes d_v != d_k (MLA: 128 for 192)
WINDOWS = (0, 1, 2, 3, 5, 8, 64, 127, 128)   # sliding windows drawn (0: none), short and at a 64- or 128-key tile
SOFTCAPS = (0.0, 1.0, 5.0, 50.0)       # logit soft-caps drawn (0: none; 50: Gemma 2's attention cap)


@dataclass(frozen=True)
class Case:
    """One drawn probe case; ``text()`` is how a counterexample reads in the report."""
    B: int
    H: int
    L: int
    S: int
    d_k: int
    mask: str
    scale: float | None
    seed: int
    kv_groups: int = 1                  # query heads per key/value head (GQA; H_kv = H / kv_groups)
    d_v: int = 0                        # the value head dim; 0: d_k
    window: int = 0                     # a sliding window of W keys (causal cases of a kernel that takes one); 0: none
    softcap: float = 0.0                # logits capped at c tanh(logits / c) (a kernel that takes it); 0: none

    @property
    def value_dim(self) -> int:
        return self.d_v or self.d_k

    @property
    def kv_heads(self) -> int:
        return self.H // self.kv_groups

    def property(self, max_len: int) -> str:
        """What a shrunk counterexample needs beyond the smallest case (Hypothesis keeps only what the failure
        needs): a mask, grouped or several heads, rows longer than the short draws (tiles), an explicit scale; ""
        when it needs nothing (the formula itself: scale or precision, which the caller tells apart)."""
        if self.softcap:
            return "softcap"
        if self.window:
            return "masks (sliding window)"
        if self.mask != "none":
            return f"masks ({self.mask})"
        if self.kv_groups > 1:
            return "head layout (GQA)"
        if self.H > 1:
            return "head layout"
        if self.d_v:
            return "head dims (d_v != d_k)"
        if max(self.L, self.S) > max_len:
            return "tiling (long rows)"
        return "scale" if self.scale is not None else ""

    def text(self) -> str:
        gqa = f", H_kv={self.kv_heads}" if self.kv_groups > 1 else ""
        dv = f", d_v={self.d_v}" if self.d_v else ""
        window = f", sliding window {self.window}" if self.window else ""
        softcap = f", softcap={self.softcap:g}" if self.softcap else ""
        return (f"B={self.B}, H={self.H}{gqa}, L={self.L}, S={self.S}, d_k={self.d_k}{dv}, "
                f"{'no mask' if self.mask == 'none' else self.mask}{window}{softcap}, scale={self.scale}")


def length_strategy(max_len: int, long_len: int | None = None):
    """A query or key count, one of three as often: short (1..``max_len``), at a tile's edge (``TILE_EDGES``), or long
    and ragged (``max_len``+1..``long_len``), so that a tiled kernel runs several tiles and a last partial one (a
    tile is 64 or 128 keys in flash-attn's kernels; ``long_len`` above 2 x 128 crosses two tile boundaries).
    Hypothesis shrinks toward the short branch, so a bug that needs a second tile is shrunk to the shortest length
    that still shows it."""
    from hypothesis import strategies as st

    short = st.integers(1, max_len)
    if not long_len or long_len <= max_len:
        return short
    edges = [n for n in TILE_EDGES if max_len < n <= long_len]
    return st.one_of(short, *([st.sampled_from(edges)] if edges else []), st.sampled_from(range(max_len + 1,
                                                                                               long_len + 1)))


def case_strategy(d_ks: list[int], max_len: int, long_len: int | None = None, gqa: bool = False, dv: bool = False,
                  window: bool = False, softcap: bool = False, hf_is_causal: bool = False):
    """Hypothesis strategy of cases: shapes (lengths by ``length_strategy``; with ``gqa``, 1 to 3 key/value heads
    each serving ``KV_GROUPS`` query heads; with ``dv``, a value head dim of ``D_V``), one of ``MASK_KINDS`` and a
    scale. Causal cases take L > S too (a bottom-right mask then leaves the first L - S rows no key: not compared),
    and half of them are decode, L = 1 against S keys; every other mask leaves key 0 visible. With ``window``, causal
    cases are drawn twice as often and draw a sliding window (``WINDOWS``, 0: none); with ``softcap``, a cap
    (``SOFTCAPS``); with ``hf_is_causal`` (an hf kernel that reads ``module.is_causal``), a causal case may go through
    transformers' is_causal path, no mask built (mask "is_causal")."""
    from hypothesis import strategies as st

    def shaped(c: Case, decode: bool, w: int, no_mask: bool) -> Case:
        c = replace(c, H=c.H * c.kv_groups,               # H drawn as the key/value heads, d_v as D_V's index
                    d_v=(0, c.d_k // 2, 2 * c.d_k)[c.d_v])
        if c.mask != "causal":
            return c
        return replace(c, L=1 if decode else c.L, window=0 if no_mask else w,   # a window: transformers builds a mask
                       mask="is_causal" if no_mask else c.mask)
    length = length_strategy(max_len, long_len)
    cases = st.builds(Case, B=st.integers(1, 2), H=st.integers(1, 3), L=length, S=length,
                      d_k=st.sampled_from(sorted(d_ks)),
                      mask=st.sampled_from(MASK_KINDS + (("causal",) if window or hf_is_causal else ())),
                      scale=st.sampled_from(EXPLICIT_SCALES), seed=st.integers(0, 2**16),
                      kv_groups=st.sampled_from(KV_GROUPS) if gqa else st.just(1),
                      d_v=st.sampled_from(range(len(D_V))) if dv else st.just(0),
                      softcap=st.sampled_from(SOFTCAPS) if softcap else st.just(0.0))
    return st.builds(shaped, cases, st.booleans(),
                     st.sampled_from(WINDOWS) if window else st.just(0),
                     st.booleans() if hf_is_causal else st.just(False))


def case_inputs(case: Case, dtype: torch.dtype, device: torch.device | str = "cpu") -> dict[str, Any]:
    """q, k, v (unit normal, rounded to ``dtype``), the mask and the output gradient of one case."""
    g = torch.Generator().manual_seed(case.seed)
    q, k, v, grad = (torch.randn(case.B, h, n, d, generator=g, dtype=torch.float64).to(device=device, dtype=dtype)
                     for h, n, d in ((case.H, case.L, case.d_k), (case.kv_heads, case.S, case.d_k),
                                     (case.kv_heads, case.S, case.value_dim), (case.H, case.L, case.value_dim)))
    mask = None
    if case.mask == "padding":                                 # a padded tail per batch row, key 0 always visible
        lengths = torch.randint(1, case.S + 1, (case.B,), generator=g)
        mask = (torch.arange(case.S)[None, :] < lengths[:, None])[:, None, None, :].to(device)
    elif case.mask == "additive":                              # 0 / -inf, random, key 0 always visible
        blocked = torch.rand(1, 1, case.L, case.S, generator=g) < 0.3
        blocked[..., 0] = False
        mask = torch.zeros(1, 1, case.L, case.S, dtype=dtype).masked_fill(blocked, -math.inf).to(device)
    elif case.mask == "bias":                # ALiBi's, as for 8 heads: -2^-(h+1) x distance, finite everywhere
        slopes = 2.0 ** -torch.arange(1, case.H + 1, dtype=torch.float64)
        distance = (torch.arange(case.L)[:, None] + (case.S - case.L) - torch.arange(case.S)[None, :]).abs()
        mask = (-slopes[:, None, None] * distance)[None].to(device=device, dtype=dtype)
    return {"q": q, "k": k, "v": v, "grad": grad, "mask": mask, "is_causal": case.mask in ("causal", "is_causal")}
