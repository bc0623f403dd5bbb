"""Probes of a black-box attention kernel (issue 27): numbers only, one measuring function per quantity.

Every probe calls the kernel through ``harness.kernel.Kernel`` (``kernel(q, k, v, *, mask, is_causal, scale)`` ->
``(out, weights or None)``, (B, H, L, D)) and returns plain data (dataclasses, DataFrames) that a claim module turns
into criteria. A probe cell the kernel rejects (it raises, or returns NaN where the reference is finite) is recorded
on that cell with the kernel's own message, and the other cells go on.

* ``exactness`` (R1): flash-attn's own test rule, in every dtype. The reference is softmax(QK^T s)V computed from
  upcast inputs (float64 here) and rounded to the dtype; the yardstick is the same formula written in plain PyTorch
  *in the dtype itself* (flash-attn's ``upcast=False, reorder_ops=True``: the scale on k). The kernel's error is
  at most ``ERROR_FACTOR`` x the yardstick's error, plus the rounding of the reference in the dtype
  (``2 max|(ref + 0.3) - 0.3 - ref|``; in float32, where flash-attn has no rule, at least ``ATOL_FLOOR``); for
  the output and for dq, dk, dv each. Three yardsticks (``YARDSTICKS``), the largest counting: flash-attn's
  (scale on k); the paper's order (scale on the scores), which transformers' eager path follows and which rounds
  the logits twice in bfloat16 (with flash-attn's alone it fails 1 draw in 200, error 0.053 against 0.016 at
  L = S = 115); and SDPA, whose bfloat16 backward is 2 ulps off where the plain graph rounds exactly (one key:
  dv 0.125 at L = 63, S = 1; 17 draws in 200 without it). PyTorch's own kernels are not bugs. Cases (shapes, masks, scales) are
  drawn by Hypothesis, derandomised, and a failing case is shrunk to the smallest one.
* ``dropout`` (R1, a kernel that takes dropout): at p = 0 deterministic, at p > 0 the mean over many calls is the
  reference (inverted dropout keeps the expectation).
* ``read_weights``: the attention weights out of a black box. With v the identity over keys each output row *is*
  the query's weights (d_v = S, or one-hot blocks of d_v = d_k for kernels that need d_v = d_k).
* ``scale_law`` (C4 a, R1): the logits recovered up to a per-row constant (log weights, centred), the effective
  scale at each d_k against q.k, and the scaled logits' variance, from unit-variance q, k.
* ``masks`` (M0): weight on masked keys (causal, bool padding, additive -inf), the causal alignment when L != S,
  and what a fully masked row returns.
* ``heads_independent`` (M0): changing one head's q, k, v changes only that head's output.
* ``saturation`` (C3 a, R2): logit std, attention entropy and mean |dL/dlogits| against d_k, scale=1 against
  scale=None; dL/dlogits by autograd through the softmax of the recovered logits.
* ``speed`` (R3): forward+backward time and peak memory against PyTorch's SDPA at the same sizes: ratios, from
  rounds that interleave the two and keep each side's fastest call.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from harness.kernel import causal_allowed
from harness.measure import stats

MASK_KINDS = ("none", "causal", "padding", "additive", "bias")   # bias: finite, ALiBi's (not a mask: issue 39)
ERROR_FACTOR = 2.0                      # flash-attn's tests: kernel error <= 2 x PyTorch's own error in the dtype
ATOL_SHIFT = 0.3                        # flash-attn's atol: 2 max|(ref + 0.3) - 0.3 - ref|, the dtype's rounding
# flash-attn's rule is written for fp16/bf16, where its atol is a bf16 ulp. In float32 that atol is 1e-7, and a
# correct kernel that sums in another order than every yardstick misses it by an ulp or two (the tiled kernel's dk
# at L=1, S=64: 1.7e-7 against 7.5e-8): float32 keeps the suite's earlier absolute floor (outputs O(1); gradients
# sum over L or S products, x10)
ATOL_FLOOR = {torch.float32: 1e-5, torch.float64: 1e-10}
GRAD_ATOL_FLOOR_FACTOR = 10.0
EXPLICIT_SCALES = (None, 1.0, 0.05, 0.3, 2.0)   # None first: Hypothesis shrinks toward it (None must mean 1/sqrt(d_k))
MASKED_WEIGHT_MAX = 1e-6                # a masked key's weight; -inf (or finfo.min) masks give exactly 0
TILE_EDGES = (63, 64, 65, 127, 128, 129, 255, 256, 257)   # one key short of, at and past 64- and 128-key tiles
KV_GROUPS = (1, 2, 4)   # query heads per key/value head, drawn for a kernel that takes GQA (1: MHA; 1 kv head: MQA)
D_V = ("d_k", "d_k / 2", "2 d_k")   # the value head dim, drawn for a kernel that takes d_v != d_k (MLA: 128 for 192)
HEAD_CHANGE_MIN = 1e-3                  # the perturbed head's output moves by O(1); others must not move at all
WINDOWS = (0, 1, 2, 3, 5, 8, 64, 127, 128)   # sliding windows drawn (0: none), short and at a 64- or 128-key tile
SOFTCAPS = (0.0, 1.0, 5.0, 50.0)       # logit soft-caps drawn (0: none; 50: Gemma 2's attention cap)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"[:300]


# ============================================================================================== the reference
def reference_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, mask: torch.Tensor | None = None,
                        is_causal: bool = False, scale: float | None = None, alignment: str = "top-left",
                        upcast: bool = True, scale_on: str = "q", window: int = 0, softcap: float = 0.0
                        ) -> torch.Tensor:
    """softmax(q k^T s + mask) v written out plainly, as flash-attn's tests' ``attention_ref``: ``upcast`` computes in
    float64 (the reference), else in the inputs' own dtype (a yardstick); ``scale_on`` q, k (flash-attn's
    ``reorder_ops``) or the scores (the paper's order) is the same math with other roundings. A bool mask is True
    where a query may attend; causal is
    top-left (SDPA: query i sees keys j <= i) or bottom-right (flash-attn: j <= i + S - L), and a sliding ``window``
    W > 0 keeps the W keys up to the query's position (``harness.kernel.causal_allowed``); ``softcap`` c > 0 caps
    the scaled logits at c tanh(logits / c) before any mask (Gemma 2's, flash-attn's). A row with no allowed key
    gives zeros. Fewer key/value heads than query heads (GQA) serve consecutive groups of query heads."""
    if upcast:
        q, k, v = q.double(), k.double(), v.double()
    if k.shape[-3] != q.shape[-3]:
        groups = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(groups, dim=-3), v.repeat_interleave(groups, dim=-3)
    L, S = q.shape[-2], k.shape[-2]
    s = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    logits = {"q": lambda: (q * s) @ k.transpose(-2, -1), "k": lambda: q @ (k * s).transpose(-2, -1),
              "scores": lambda: (q @ k.transpose(-2, -1)) * s}[scale_on]()
    if softcap:
        logits = softcap * torch.tanh(logits / softcap)
    if mask is not None:
        logits = logits.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool else logits + mask.to(logits.dtype)
    if is_causal:
        logits = logits.masked_fill(~causal_allowed(L, S, q.device, window, alignment), -math.inf)
    return torch.nan_to_num(torch.softmax(logits, -1), nan=0.0) @ v


# ============================================================================================== exactness (R1)
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


#: PyTorch's own ways of computing attention in the kernel's dtype, each a yardstick of the rounding a correct kernel
#: incurs there (module docstring): plain ops with the scale on k (flash-attn's ``upcast=False, reorder_ops=True``) or
#: on the scores (the paper's softmax(QK^T / sqrt(d_k))V as written, and transformers' eager path), and SDPA
YARDSTICKS = ("plain, scale on k", "plain, scale on the scores", "SDPA")


@dataclass(frozen=True)
class Bound:
    """One compared quantity (the output, or dq, dk, dv) under flash-attn's rule: the kernel's error against the
    upcast reference rounded to the dtype, each yardstick's error (``YARDSTICKS``), and the atol."""
    error: float
    yardsticks: dict[str, float]
    atol: float

    @property
    def pytorch_error(self) -> float:
        return max(self.yardsticks.values())

    @property
    def limit(self) -> float:
        return ERROR_FACTOR * self.pytorch_error + self.atol

    @property
    def holds(self) -> bool:
        return self.error <= self.limit

    @property
    def ratio(self) -> float:
        """error / limit (<= 1 holds); 0 for an exact answer where the limit is 0."""
        return self.error / self.limit if self.limit > 0 else (0.0 if self.error == 0 else math.inf)


@dataclass
class CaseResult:
    case: Case
    out: Bound | None = None            # the output's errors
    grads: dict[str, Bound] = field(default_factory=dict)    # "dq", "dk", "dv" -> their errors
    alignment: str = ""                 # the causal reference the kernel matched
    rejected: str = ""                  # the kernel's own message when it raised or returned NaN
    grad_rejected: str = ""             # its message when backward raised

    @property
    def error(self) -> float:
        return self.out.error if self.out else math.nan

    def bounds(self) -> dict[str, Bound]:
        return {**({"out": self.out} if self.out else {}), **self.grads}

    def ok(self) -> bool:
        return bool(self.rejected) or all(b.holds for b in self.bounds().values())

    def worst_ratio(self) -> float:
        return max((b.ratio for b in self.bounds().values()), default=math.nan)

    def failure(self) -> str:
        name, b = next((n, b) for n, b in self.bounds().items() if not b.holds)
        what = "max error" if name == "out" else f"max {name} error"
        return f"{what} {b.error:.3g} (PyTorch's own in the dtype {b.pytorch_error:.3g}, bound {b.limit:.3g})"


def _grads(out: torch.Tensor, grad: torch.Tensor, leaves) -> list[torch.Tensor]:
    return list(torch.autograd.grad(out, leaves, grad))


def _max_abs(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.detach().double() - b.detach().double()).abs().max()) if a.numel() else 0.0


def _atol(ref: torch.Tensor, gradient: bool = False) -> float:
    """flash-attn's atol, twice the rounding that any arithmetic on the reference in its dtype incurs, or the dtype's
    floor (``ATOL_FLOOR``; x ``GRAD_ATOL_FLOOR_FACTOR`` for a gradient) where that is larger."""
    ref = ref.detach()
    floor = ATOL_FLOOR.get(ref.dtype, 0.0) * (GRAD_ATOL_FLOOR_FACTOR if gradient else 1.0)
    return max(2 * _max_abs(ref + ATOL_SHIFT - ATOL_SHIFT, ref), floor)


def _bound(value: torch.Tensor, ref64: torch.Tensor, yardsticks: dict[str, torch.Tensor],
           gradient: bool = False) -> Bound:
    """The kernel's and each yardstick's error against the float64 reference rounded to the kernel's dtype."""
    ref = ref64.detach().to(value.dtype)
    return Bound(_max_abs(value, ref), {name: _max_abs(y, ref) for name, y in yardsticks.items()},
                 _atol(ref, gradient))


def measure_case(kernel: Callable, case: Case, dtype: torch.dtype = torch.float32,
                 device: torch.device | str = "cpu", gradients: bool = True) -> CaseResult:
    """The kernel's and the yardsticks' errors on one case (flash-attn's rule, module docstring), forward and
    backward. For a causal case with L != S the references take the alignment the kernel matched (M0 reports
    which)."""
    x = case_inputs(case, dtype, device)
    res = CaseResult(case)
    leaves64 = [t.double().requires_grad_() for t in (x["q"], x["k"], x["v"])]
    mask64 = x["mask"].double() if x["mask"] is not None and x["mask"].dtype != torch.bool else x["mask"]
    leaves = [t.clone().requires_grad_(gradients) for t in (x["q"], x["k"], x["v"])]
    features = {**({"window": case.window} if case.window else {}),        # only what the case draws
                **({"softcap": case.softcap} if case.softcap else {}),
                **({"build_mask": False} if case.mask == "is_causal" else {})}
    try:
        out, _ = kernel(*leaves, mask=x["mask"], is_causal=x["is_causal"], scale=case.scale, **features)
    except Exception as exc:                       # the kernel's own message, on this cell only
        if not gradients:
            res.rejected = _first_line(exc)
            return res
        res.grad_rejected = _first_line(exc)       # a kernel without a backward here may refuse grad inputs
        return _forward_only(kernel, case, dtype, device, res.grad_rejected)
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(x["grad"].shape):
        res.rejected = f"returned {tuple(getattr(out, 'shape', ()))}, expected {tuple(x['grad'].shape)}"
        return res
    if not torch.isfinite(out).all():
        res.rejected = "returned NaN or inf on inputs whose reference is finite"
        return res
    aligns = ("top-left", "bottom-right") if x["is_causal"] and case.L != case.S else ("top-left",)
    shape = dict(is_causal=x["is_causal"], scale=case.scale, window=case.window, softcap=case.softcap)
    empty = {a: _rows_without_a_key(case, a, device) for a in aligns}
    refs = {a: reference_attention(*leaves64, mask=mask64, alignment=a, **shape).masked_fill(empty[a], 0)
            for a in aligns}
    res.alignment = min(refs, key=lambda a: _max_abs(out.masked_fill(empty[a], 0), refs[a]))
    drop = empty[res.alignment]          # rows with no key under the kernel's alignment: a convention, not compared
    out, grad = out.masked_fill(drop, 0), x["grad"].masked_fill(drop, 0)
    kw = dict(mask=x["mask"], **shape)
    names = YARDSTICKS if not case.softcap and not drop.any() else YARDSTICKS[:2]   # SDPA: no soft-cap, NaN rows
    ys = {name: [t.clone().requires_grad_(gradients) for t in (x["q"], x["k"], x["v"])] for name in names}
    ys_out = {name: reference_attention(*ys[name], **kw, alignment=res.alignment, upcast=False,
                                        scale_on=on).masked_fill(drop, 0)
              for name, on in zip(YARDSTICKS[:2], ("k", "scores"))}
    if "SDPA" in names:      # SDPA's is_causal is top-left and has no window: the kernel's causal mask as a bool one
        ys_out["SDPA"] = F.scaled_dot_product_attention(
            *ys["SDPA"], scale=case.scale, enable_gqa=case.kv_groups > 1,
            attn_mask=causal_allowed(case.L, case.S, device, case.window, res.alignment) if x["is_causal"] else
            x["mask"])
    ref = refs[res.alignment]
    res.out = _bound(out, ref, ys_out)
    if not gradients:
        return res
    ref_g = _grads(ref, grad.double(), leaves64)
    ys_g = {name: _grads(ys_out[name], grad, ys[name]) for name in names}
    try:
        ker_g = _grads(out, grad, leaves)
    except Exception as exc:
        res.grad_rejected = _first_line(exc)
        return res
    res.grads = {name: _bound(ker_g[i], ref_g[i], {n: g[i] for n, g in ys_g.items()}, gradient=True)
                 for i, name in enumerate(("dq", "dk", "dv"))}
    return res


def _rows_without_a_key(case: Case, alignment: str, device) -> torch.Tensor:
    """(L, 1) bool: True on the query rows that have no allowed key under the case's causal mask in that alignment
    (bottom-right with L > S: the first L - S rows), whose output is a convention (M0 reports it), not compared."""
    if case.mask not in ("causal", "is_causal"):
        return torch.zeros(case.L, 1, dtype=torch.bool, device=device)
    return ~causal_allowed(case.L, case.S, device, case.window, alignment).any(-1, keepdim=True)


def _forward_only(kernel: Callable, case: Case, dtype, device, grad_message: str) -> CaseResult:
    res = measure_case(kernel, case, dtype, device, gradients=False)
    res.grad_rejected = res.grad_rejected or grad_message
    return res


@dataclass
class Exactness:
    """R1's exactness on one dtype: every case tried, the worst error ratio, and the shrunk counterexample."""
    dtype: str
    results: list[CaseResult] = field(default_factory=list)
    counterexample: str = ""            # "differs at B=1, ...: max error 0.41" (empty when none was found)
    worst: Case | None = None           # the shrunk case itself

    @property
    def measured(self) -> list[CaseResult]:
        return [r for r in self.results if not r.rejected]

    @property
    def holds(self) -> bool:
        return not self.counterexample

    @property
    def rejected(self) -> list[CaseResult]:
        return [r for r in self.results if r.rejected]

    def worst_error_over_bound(self) -> float:
        """max over measured cases and over the output and dq, dk, dv of the kernel's error / the rule's bound
        (2 x plain PyTorch's error in the dtype + atol): <= 1 holds."""
        ratios = [r.worst_ratio() for r in self.measured]
        return float(max(ratios)) if ratios else math.nan

    def table(self) -> pd.DataFrame:
        rows = []
        for r in self.results:
            row = {**vars(r.case), "alignment": r.alignment, "rejected": r.rejected, "grad_rejected": r.grad_rejected,
                   "ok": r.ok()}
            for name, b in r.bounds().items():
                row.update({f"{name}_error": b.error, f"{name}_pytorch_error": b.pytorch_error,
                            f"{name}_atol": b.atol})
            rows.append(row)
        return pd.DataFrame(rows)

    def detail(self) -> str:
        grads = [r for r in self.measured if r.grad_rejected]
        text = (f"{self.dtype}: {len(self.measured)} cases measured, {len(self.rejected)} not supported by this "
                f"kernel; "
                f"rule (flash-attn's): error <= {ERROR_FACTOR:g} x PyTorch's own error in {self.dtype} (the largest of "
                f"{', '.join(YARDSTICKS)}) + the reference's rounding there, for the output and dq, dk, dv")
        if self.counterexample:
            text += f"; {self.counterexample}"
        if self.rejected:
            text += f"; not supported e.g. at {self.rejected[0].case.text()}: {self.rejected[0].rejected}"
        if grads:
            text += f"; gradients not measured on {len(grads)} cases: {grads[0].grad_rejected}"
        return text


def exactness(kernel: Callable, dtype: torch.dtype = torch.float32, *, cases: int = 60, d_ks=(8, 16, 32, 64, 128, 256),
              max_len: int = 9, long_len: int | None = None, gqa: bool | None = None, dv: bool | None = None,
              device: torch.device | str = "cpu", **features: bool) -> Exactness:
    """Draw ``cases`` cases with Hypothesis (derandomised, no example database: a run is reproducible) and look for
    one where the kernel breaks flash-attn's rule; Hypothesis shrinks the first it finds to the smallest. GQA cases
    are drawn where ``gqa``, value head dims other than d_k where ``dv`` (default: what the kernel took at
    pre-flight, ``Kernel.gqa``, ``Kernel.dv``), and so for ``features`` (``window``, ``softcap``, ``hf_is_causal``:
    ``harness.kernel.OPTIONAL_FEATURES``)."""
    gqa = bool(getattr(kernel, "gqa", False)) if gqa is None else gqa
    dv = bool(getattr(kernel, "dv", False)) if dv is None else dv
    features = {f: bool(features.get(f, getattr(kernel, f, False))) for f in ("window", "softcap", "hf_is_causal")}
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.errors import NoSuchExample

    report = Exactness(dtype=str(dtype).replace("torch.", ""))
    seen: dict[Case, CaseResult] = {}

    def breaks_rule(case: Case) -> bool:
        if case not in seen:
            seen[case] = measure_case(kernel, case, dtype, device)
        return not seen[case].ok()

    cfg = settings(derandomize=True, database=None, max_examples=cases, deadline=None,
                   phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    try:
        worst = shorten(find(case_strategy(list(d_ks), max_len, long_len, gqa, dv, **features), breaks_rule,
                             settings=cfg),
                        breaks_rule, max_len)
        report.counterexample = f"differs at {worst.text()}: {seen[worst].failure()}"
        report.worst = worst
    except NoSuchExample:
        pass
    report.results = list(seen.values())
    return report


def shorten(case: Case, breaks: Callable[[Case], bool], max_len: int) -> Case:
    """Hypothesis's shrunk case, its S then L made as short as still breaks the rule, trying the short lengths and
    the tile edges below it in ascending order: Hypothesis does not move a length from the tile-edge or long branch
    of ``length_strategy`` back to the short one (a causal off-by-one shrank to S = 63 where S = 3 shows it)."""
    for name in ("S", "L"):
        current = getattr(case, name)
        for n in sorted({*range(1, max_len + 1), *TILE_EDGES}):
            if n >= current:
                break
            shorter = replace(case, **{name: n})
            if breaks(shorter):
                case = shorter
                break
    return case


# ============================================================================================== weights out of a black box
def read_weights(kernel: Callable, q: torch.Tensor, k: torch.Tensor, *, mask: torch.Tensor | None = None,
                 is_causal: bool = False, scale: float | None = None) -> torch.Tensor:
    """The kernel's attention weights (B, H, L, S): with v the identity over keys, output row i is query i's
    weights. A kernel that rejects d_v = S is read in one-hot blocks of d_v = d_k keys (its first error raises)."""
    B, H, S, D = k.shape
    try:
        eye = torch.eye(S, dtype=q.dtype, device=q.device).expand(B, H, S, S)
        out, _ = kernel(q, k, eye, mask=mask, is_causal=is_causal, scale=scale)
        if tuple(out.shape[-2:]) == (q.shape[-2], S):
            return out
    except Exception:
        pass
    blocks = []
    for start in range(0, S, D):
        n = min(D, S - start)
        v = torch.zeros(B, H, S, D, dtype=q.dtype, device=q.device)
        v[:, :, torch.arange(start, start + n), torch.arange(n)] = 1.0
        out, _ = kernel(q, k, v, mask=mask, is_causal=is_causal, scale=scale)
        blocks.append(out[..., :n])
    return torch.cat(blocks, -1)


def readout_queries(kernel: Callable, n_queries: int, n_keys: int) -> int:
    """The queries a weight readout asks for: ``n_keys`` where the kernel takes self-attention only."""
    return n_keys if getattr(kernel, "self_attention_only", False) else n_queries


def recovered_logits(weights: torch.Tensor, floor: float = 1e-30) -> torch.Tensor:
    """log weights, centred per row over the keys whose weight is above ``floor`` (the others, underflowed or
    masked, are -inf): the logits up to the per-row constant the softmax removes (float64)."""
    w = weights.double()
    kept = w > floor
    log_w = torch.where(kept, w.clamp_min(floor).log(), torch.zeros_like(w))
    centre = log_w.sum(-1, keepdim=True) / kept.sum(-1, keepdim=True).clamp_min(1)
    return torch.where(kept, log_w - centre, torch.full_like(w, -math.inf))


def _unit_qk(seed: int, d_k: int, n_queries: int, n_keys: int, dtype, device, heads: int = 1):
    g = torch.Generator().manual_seed(seed * 1_000_003 + d_k)
    q = torch.randn(1, heads, n_queries, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(1, heads, n_keys, d_k, generator=g, dtype=torch.float64)
    return q.to(device=device, dtype=dtype), k.to(device=device, dtype=dtype)


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


# ============================================================================================== dropout (R1)
DROPOUT_P = 0.5                         # the dropout rate drawn: half the weights dropped, the rest doubled
DROPOUT_DRAWS = 400                     # calls averaged: the mean's standard error is ~5% of an output's spread
DROPOUT_Z = 6.0                         # |mean - reference| <= 6 standard errors (+ the dtype's rounding): over 256
#                                         outputs a correct kernel misses it with probability ~1e-6; a kernel that
#                                         drops the 1/(1-p) rescale is off by p x the output: 19 (bfloat16) to 52
#                                         (float32) standard errors


@dataclass
class DropoutReport:
    """Dropout against its definition: at p = 0 two calls give the same output bit for bit; at p > 0 the output's
    mean over ``draws`` calls is the reference (inverted dropout keeps the expectation: kept weights / (1 - p))."""
    deterministic: bool
    max_z: float                        # max over outputs of |mean - reference| / (standard error + rounding)
    p: float
    draws: int

    @property
    def holds(self) -> bool:
        return self.deterministic and self.max_z <= DROPOUT_Z

    def counterexample(self) -> str:
        if not self.deterministic:
            return "dropout_p = 0: two calls on the same input differ"
        return (f"dropout_p = {self.p:g}: the mean of {self.draws} calls is {self.max_z:.3g} standard errors from the "
                "reference" if self.max_z > DROPOUT_Z else "")

    def detail(self) -> str:
        return (f"dropout_p = 0 {'deterministic' if self.deterministic else 'NOT deterministic'}; dropout_p = "
                f"{self.p:g}: the mean of {self.draws} calls within {self.max_z:.3g} standard errors of the reference "
                f"(bound {DROPOUT_Z:g})")


def dropout(kernel: Callable, *, p: float = DROPOUT_P, draws: int = DROPOUT_DRAWS, dtype: torch.dtype = torch.float32,
            device: torch.device | str = "cpu", seed: int = 0) -> DropoutReport:
    """Two calls at p = 0, then ``draws`` calls at ``p`` on one input (B, H, L, S, d) = (1, 2, 16, 16, 16); torch's
    global RNG seeded with ``seed`` for the calls and restored after. The reference is softmax(QK^T/sqrt(d))V in
    float64; each output's mean over the draws is compared with it in units of its standard error over the draws,
    plus the reference's rounding in the dtype (``_atol``)."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 2, 16, 16, generator=g).to(device=device, dtype=dtype) for _ in range(3))
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        deterministic = torch.equal(kernel(q, k, v)[0], kernel(q, k, v)[0])
        outs = torch.stack([kernel(q, k, v, dropout_p=p)[0].double() for _ in range(draws)])
    ref = reference_attention(q, k, v)
    se = outs.std(0) / math.sqrt(draws)
    z = (outs.mean(0) - ref).abs() / (se + _atol(ref.to(dtype)))
    return DropoutReport(deterministic, float(z.max()), p, draws)


# ============================================================================================== masks (M0)
@dataclass
class MaskReport:
    """Per mask kind: the largest weight on a masked key and the smallest on an allowed one; the causal alignment
    when L != S; what a fully masked row returns. ``rejected``: kind -> the kernel's message."""
    table: pd.DataFrame
    alignment: str
    fully_masked_row: str
    rejected: dict[str, str] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        """Every measured kind holds (a kind the kernel rejects, e.g. a mask a flash backend does not take, is not
        measured: it says nothing either way)."""
        return bool(len(self.table)) and bool(
            (self.table.masked_max <= MASKED_WEIGHT_MAX).all() and (self.table.allowed_min > 0).all())

    def counterexample(self) -> str:
        """The first mask kind that fails, as a case: '' when every measured kind holds."""
        bad = self.table[(self.table.masked_max > MASKED_WEIGHT_MAX) | (self.table.allowed_min <= 0)] \
            if len(self.table) else self.table
        if not len(bad):
            return ""
        r = next(bad.itertuples())
        return (f"{r.kind} mask, L = S = 6: max weight on a masked key {r.masked_max:.3g}, min on an allowed one "
                f"{r.allowed_min:.3g}")

    def detail(self) -> str:
        parts = [f"{r.kind}: max weight on a masked key {r.masked_max:.3g}, min on an allowed one {r.allowed_min:.3g}"
                 for r in self.table.itertuples()]
        parts += [f"{kind}: not measured ({msg})" for kind, msg in self.rejected.items()]
        return "; ".join(parts) + (f"; causal alignment when L != S: {self.alignment}; a fully masked row returns "
                                   f"{self.fully_masked_row}")


def mask_cases(L: int = 6, S: int = 6, seed: int = 0) -> dict[str, tuple[torch.Tensor | None, bool, torch.Tensor]]:
    """kind -> (mask, is_causal, allowed (L, S) or (B, 1, L, S)): causal, bool padding, additive -inf."""
    g = torch.Generator().manual_seed(seed)
    causal = causal_allowed(L, S)
    pad = torch.arange(S)[None, :] < torch.tensor([S, S // 2])[:, None]                 # (B=2, S)
    blocked = torch.rand(1, 1, L, S, generator=g) < 0.4
    blocked[..., 0] = False
    return {"causal": (None, True, causal[None, None]),
            "padding": (pad[:, None, None, :], False, pad[:, None, None, :].expand(2, 1, L, S)),
            "additive": (torch.zeros(1, 1, L, S).masked_fill(blocked, -math.inf), False, ~blocked)}


def masks(kernel: Callable, *, dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu",
          d_k: int = 16) -> MaskReport:
    """Zero weight on every masked key, the causal alignment with L=2 < S=5, and a fully masked row's output."""
    rows, rejected = [], {}
    L = S = 6
    for kind, (mask, is_causal, allowed) in mask_cases(L, S).items():
        B = allowed.shape[0]
        q, k = (0.5 * torch.randn(B, 2, n, d_k, generator=torch.Generator().manual_seed(n)).to(device=device,
                                                                                                  dtype=dtype)
                for n in (L, S))     # std 0.5: moderate logits, so no allowed weight underflows under a scale bug
        m = None if mask is None else mask.to(device=device, dtype=dtype if mask.dtype != torch.bool else torch.bool)
        try:
            with torch.no_grad():
                w = read_weights(kernel, q, k, mask=m, is_causal=is_causal).double().cpu()
        except Exception as exc:
            rejected[kind] = _first_line(exc)
            continue
        allow = allowed.expand_as(w)
        rows.append({"kind": kind, "masked_max": float(w[~allow].abs().max()) if (~allow).any() else 0.0,
                     "allowed_min": float(w[allow].min())})
    return MaskReport(pd.DataFrame(rows), causal_alignment(kernel, dtype=dtype, device=device, d_k=d_k),
                      fully_masked_row(kernel, dtype=dtype, device=device, d_k=d_k), rejected)


def causal_alignment(kernel: Callable, *, L: int = 2, S: int = 5, dtype=torch.float32, device="cpu",
                     d_k: int = 16) -> str:
    """'top-left' (SDPA: query 0 sees key 0), 'bottom-right' (flash-attn: query 0 sees keys 0..S-L) or what it is;
    not applicable to a kernel that takes self-attention only."""
    if getattr(kernel, "self_attention_only", False):
        return "not applicable (the kernel takes self-attention only)"
    q, k = _unit_qk(0, d_k, L, S, dtype, device)
    try:
        with torch.no_grad():
            seen = (read_weights(kernel, q, k, is_causal=True)[0, 0, 0] > 0).cpu()
    except Exception as exc:
        return f"not measured ({_first_line(exc)})"
    n = int(seen.sum())
    if bool(seen[:n].all()) and n == 1:
        return "top-left (as PyTorch's SDPA)"
    if bool(seen[:n].all()) and n == S - L + 1:
        return "bottom-right (as flash-attn)"
    return f"neither: query 0 of L={L} sees keys {seen.nonzero().flatten().tolist()} of S={S}"


def fully_masked_row(kernel: Callable, *, dtype=torch.float32, device="cpu", d_k: int = 16) -> str:
    """What a query with no allowed key gets: 'zeros', 'NaN', 'the mean of v (uniform weights)' or 'other'."""
    q, k = _unit_qk(1, d_k, 4, 4, dtype, device)        # L = S: a self-attention-only kernel answers too
    v = torch.randn(1, 1, 4, d_k, generator=torch.Generator().manual_seed(2)).to(device=device, dtype=dtype)
    mask = torch.ones(1, 1, 4, 4, dtype=torch.bool, device=device)
    mask[..., 0, :] = False
    try:
        with torch.no_grad():
            row = kernel(q, k, v, mask=mask)[0][0, 0, 0].double().cpu()
    except Exception as exc:
        return f"an error ({_first_line(exc)})"
    if torch.isnan(row).any():
        return "NaN"
    if bool((row == 0).all()):
        return "zeros"
    if torch.allclose(row, v[0, 0].double().cpu().mean(0), atol=1e-3):
        return "the mean of v (uniform weights)"
    return "other values"


# ============================================================================================== heads (M0)
@dataclass
class HeadsReport:
    table: pd.DataFrame                 # per head: max |change| of its output when head ``changed`` is perturbed
    changed: int
    rejected: str = ""

    @property
    def holds(self) -> bool:
        if self.rejected:
            return False
        t = self.table.set_index("head")
        others = t.drop(index=self.changed).max_change
        return bool((others == 0).all() and t.loc[self.changed, "max_change"] > HEAD_CHANGE_MIN)

    def detail(self) -> str:
        if self.rejected:
            return f"not measured: {self.rejected}"
        t = self.table.set_index("head")
        return (f"head {self.changed}'s q, k, v redrawn: its output moves by {t.loc[self.changed, 'max_change']:.3g}, "
                f"the other heads' by at most {t.drop(index=self.changed).max_change.max():.3g} (must be exactly 0)")


def heads_independent(kernel: Callable, *, heads: int = 4, L: int = 6, d_k: int = 16, changed: int = 2,
                      dtype=torch.float32, device="cpu") -> HeadsReport:
    """Redraw head ``changed``'s q, k, v and read how far each head's output moves (a ``view`` written where a
    ``transpose`` was meant mixes heads and positions: the other heads move)."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, heads, L, d_k, generator=g).to(device=device, dtype=dtype) for _ in range(3))
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    for t in (q2, k2, v2):
        t[:, changed] = torch.randn(1, L, d_k, generator=g).to(device=device, dtype=dtype)
    try:
        with torch.no_grad():
            a, b = kernel(q, k, v)[0], kernel(q2, k2, v2)[0]
    except Exception as exc:
        return HeadsReport(pd.DataFrame(), changed, _first_line(exc))
    change = (a - b).abs().double().amax(dim=(0, 2, 3)).cpu()
    return HeadsReport(pd.DataFrame({"head": range(heads), "max_change": change.tolist()}), changed)


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


# ============================================================================================== speed (R3)
def _step(fn: Callable, q, k, v, backward: bool) -> Callable[[], None]:
    def run():
        leaves = [t.detach().requires_grad_(backward) for t in (q, k, v)]
        out = fn(*leaves)
        if backward:
            out.sum().backward()
    return run


def speed(kernel: Callable, sizes, *, reps: int = 3, calls: int = 1, dtype: torch.dtype = torch.float32,
          device: torch.device | str = "cpu") -> pd.DataFrame:
    """Per (B, H, L, D) size and round (``reps`` rounds): the kernel's and SDPA's forward+backward seconds and their
    ratio. In each round the two are called in turn, ``calls`` times each (kernel, SDPA, kernel, SDPA, ...; SDPA first
    in every other round), and each side's fastest call counts (timeit's rule: the minimum is the call least
    disturbed by other processes; a burst of load falls on both sides of a round alike). The clock is ``_now``'s (CPU
    seconds on a CPU, synchronised wall time on CUDA), after one warm-up call each; forward only where the kernel has
    no backward here, both sides alike. Peak memory of one call
    each from ``harness.measure.bench.peak_memory_bytes`` (CUDA: max allocated; CPU: the profiler's allocator
    events)."""
    from harness.measure.bench import peak_memory_bytes

    rows = []
    for B, H, L, D in sizes:
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(B, H, L, D, generator=g).to(device=device, dtype=dtype) for _ in range(3))
        ours = lambda a, b, c: kernel(a, b, c)[0]                                    # noqa: E731
        theirs = lambda a, b, c: F.scaled_dot_product_attention(a, b, c)             # noqa: E731
        backward, note = True, ""
        try:
            _step(ours, q, k, v, True)()
        except Exception as exc:
            backward, note = False, f"forward only: backward raised {_first_line(exc)}"
            try:
                _step(ours, q, k, v, False)()
            except Exception as exc2:
                rows.append({"B": B, "H": H, "L": L, "D": D, "rep": None, "rejected": _first_line(exc2)})
                continue
        steps = {"kernel": _step(ours, q, k, v, backward), "sdpa": _step(theirs, q, k, v, backward)}
        steps["sdpa"]()
        peak = {name: peak_memory_bytes(fn, device) for name, fn in steps.items()}
        for rep in range(reps):
            secs: dict[str, float] = {"kernel": math.inf, "sdpa": math.inf}
            for _ in range(calls):
                for name in (("kernel", "sdpa") if rep % 2 == 0 else ("sdpa", "kernel")):
                    t0 = _now(device)
                    steps[name]()
                    secs[name] = min(secs[name], _now(device) - t0)
            rows.append({"B": B, "H": H, "L": L, "D": D, "rep": rep, "calls": calls, "kernel_s": secs["kernel"],
                         "sdpa_s": secs["sdpa"], "time_ratio": secs["kernel"] / secs["sdpa"],
                         "kernel_peak_bytes": peak["kernel"], "sdpa_peak_bytes": peak["sdpa"],
                         "memory_ratio": peak["kernel"] / max(peak["sdpa"], 1), "backward": backward,
                         "rejected": "", "note": note})
    return pd.DataFrame(rows)


def _now(device) -> float:
    """The clock ``speed`` reads: on CUDA wall time after a synchronise; on a CPU the process's CPU seconds
    (``time.process_time``), which a process waiting for a core does not accrue (both sides run on one torch thread,
    so that is their compute time). Under 3 busy processes on 2 cores the SDPA wrapper's rounds read 0.57..1.17 by
    wall time and 0.94..1.04 by CPU time (8 rounds x 3 calls, 2026-12-03)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
        return time.perf_counter()
    return time.process_time()


def log_ratios(table: pd.DataFrame, column: str = "time_ratio") -> np.ndarray:
    """ln of a ratio column over the measured rows (the samples a reported criterion is decided on)."""
    t = table[table.get("rejected", "") == ""] if "rejected" in table else table
    return np.log(t[column].to_numpy(dtype=float)) if column in t else np.array([])
