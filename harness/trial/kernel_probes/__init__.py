"""Probes of a black-box attention kernel (issue 27): numbers only, one measuring function per quantity.

Every probe calls the kernel through ``harness.trial.kernel.Kernel`` (``kernel(q, k, v, *, mask, is_causal, scale)`` ->
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

Where each lives (this package re-exports every public name, so ``kernel_probes.exactness`` reads as before):
``reference`` (the float64 reference, the rounding rules share), ``cases`` (the cases exactness draws), ``accuracy``
(``exactness`` and ``dropout``: the kernel against the formula, R1), ``weights`` (``read_weights``,
``recovered_logits``), ``scaling`` (``scale_law``, ``saturation``), ``masking`` (``masks``, M0), ``heads``
(``heads_independent``, M0) and ``timing`` (``speed``, R3).
"""
from __future__ import annotations

from harness.trial.kernel_probes.reference import (ATOL_FLOOR, ATOL_SHIFT, GRAD_ATOL_FLOOR_FACTOR,
                                                     reference_attention)
from harness.trial.kernel_probes.cases import (D_V, EXPLICIT_SCALES, KV_GROUPS, MASK_KINDS, SOFTCAPS, TILE_EDGES,
                                                 WINDOWS, Case, case_inputs, case_strategy, length_strategy)
from harness.trial.kernel_probes.accuracy import (DROPOUT_DRAWS, DROPOUT_P, DROPOUT_Z, ERROR_FACTOR, YARDSTICKS,
                                                    Bound, CaseResult, DropoutReport, Exactness, dropout, exactness,
                                                    measure_case, shorten)
from harness.trial.kernel_probes.weights import read_weights, readout_queries, recovered_logits
from harness.trial.kernel_probes.scaling import SATURATION_ARMS, Saturation, ScaleLaw, saturation, scale_law
from harness.trial.kernel_probes.masking import (MASKED_WEIGHT_MAX, MaskReport, causal_alignment, fully_masked_row,
                                                   mask_cases, masks)
from harness.trial.kernel_probes.heads import HEAD_CHANGE_MIN, HeadsReport, heads_independent
from harness.trial.kernel_probes.timing import log_ratios, speed

__all__ = [
    "ATOL_FLOOR", "ATOL_SHIFT", "GRAD_ATOL_FLOOR_FACTOR", "reference_attention",
    "D_V", "EXPLICIT_SCALES", "KV_GROUPS", "MASK_KINDS", "SOFTCAPS", "TILE_EDGES", "WINDOWS", "Case", "case_inputs",
    "case_strategy", "length_strategy",
    "DROPOUT_DRAWS", "DROPOUT_P", "DROPOUT_Z", "ERROR_FACTOR", "YARDSTICKS", "Bound", "CaseResult", "DropoutReport",
    "Exactness", "dropout", "exactness", "measure_case", "shorten",
    "read_weights", "readout_queries", "recovered_logits",
    "SATURATION_ARMS", "Saturation", "ScaleLaw", "saturation", "scale_law",
    "MASKED_WEIGHT_MAX", "MaskReport", "causal_alignment", "fully_masked_row", "mask_cases", "masks",
    "HEAD_CHANGE_MIN", "HeadsReport", "heads_independent",
    "log_ratios", "speed",
]
