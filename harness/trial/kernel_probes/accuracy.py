"""The kernel against the formula (R1): ``exactness`` under flash-attn's own test rule, in every dtype, and
``dropout`` against its definition. The rule and the yardsticks are told in ``harness.trial.kernel_probes``'s
docstring; the drawn cases are ``harness.trial.kernel_probes.cases``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import pandas as pd
import torch
import torch.nn.functional as F

from harness.trial.kernel import causal_allowed
from harness.trial.kernel_probes.cases import TILE_EDGES, Case, case_inputs, case_strategy
from harness.trial.kernel_probes.reference import _atol, _first_line, _max_abs, reference_attention

ERROR_FACTOR = 2.0                      # flash-attn's tests: kernel error <= 2 x PyTorch's own error in the dtype


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
    ``harness.trial.kernel.OPTIONAL_FEATURES``)."""
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
