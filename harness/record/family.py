"""A claim's family of criteria and its decision: the vocabulary ``decision`` and ``firmness`` share (issue 46).

What a rule predicts (``Rule``: its pass and refutation regions), one measurement's statistic (``Stat``: δ, its
standard error and t df, or why it cannot be tested), its interval and one-sided p values, and the family's
decision over them: support at ``ALPHA`` on every part, refutation by Holm's step-down over the parts of the
counted criteria, and the verdict rule, vectorised over simulated runs (``_decide_family``, ``_verdict_codes``).
The rules and their meaning are ``harness.record.decision``'s docstring; ``decision.judge`` decides the observed
family with these, ``harness.record.firmness`` every simulated one with the very same functions. Both import this
module, which imports neither, so the two cannot cycle (a contract in pyproject.toml's [tool.importlinter]).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats as sps

ALPHA = 0.05                        # per claim: support at alpha per criterion, refutation Holm at alpha
KINDS = ("superiority", "non_inferiority", "equivalence", "band", "exact")
PASSED, INCONCLUSIVE, REFUTED = "passed", "inconclusive", "refuted"
OUTCOME_RANK = {PASSED: 2, INCONCLUSIVE: 1, REFUTED: 0}


class DecisionError(ValueError):
    """A rule or a measurement that cannot be decided as declared; the message says which."""


# =============================================================================================== rules
@dataclass(frozen=True)
class Rule:
    """What a criterion predicts, declared before measuring. Build with ``harness.record.decision``'s constructors.

    ``lo``/``hi``: the pass region of δ (None = open on that side). ``refute_below``/``refute_above``: the
    refutation region, δ <= refute_below or δ >= refute_above (None: that side cannot refute); by default the
    complement of the pass region, for superiority δ <= 0, for a band with ``null`` the far side of it."""
    kind: str
    lo: float | None = None
    hi: float | None = None
    margin: float | None = None     # the declared margin (superiority, non-inferiority, equivalence)
    reason: str = ""                # why this margin (one line: "0.03 accuracy = 8 of 256 held-out examples")
    paired: bool = False            # arms share each seed's data and init streams: the paired t on a - b
    refute_below: float | None = None
    refute_above: float | None = None
    #: a one-sided band's kind (issue 38.4): True a *level* (reaching it is the prediction: a loss below 0.2
    #: nats, a check's own threshold), False a *direction* with a margin (``null`` given: "falls"); None otherwise
    level: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise DecisionError(f"rule kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.kind != "exact":
            if self.lo is None and self.hi is None:
                raise DecisionError(f"a {self.kind} rule needs a bound")
            if self.lo is not None and self.hi is not None and not self.lo < self.hi:
                raise DecisionError(f"a {self.kind} rule needs lo < hi, got [{self.lo}, {self.hi}]")
            if not self.reason.strip():
                raise DecisionError(f"a {self.kind} rule needs the reason for its margin or band (reason=...)")
            if (self.refute_below is not None and (self.lo is None or self.refute_below > self.lo)) or \
                    (self.refute_above is not None and (self.hi is None or self.refute_above < self.hi)):
                raise DecisionError(f"a {self.kind} rule's refutation region must lie outside its pass region, got "
                                    f"pass {self.region_text()}, refute <= {self.refute_below} / >= {self.refute_above}")

    def region_text(self) -> str:
        if self.kind == "exact":
            return "the check holds"
        lo = "-inf" if self.lo is None else f"{self.lo:g}"
        hi = "+inf" if self.hi is None else f"{self.hi:g}"
        return f"δ in ({lo}, {hi})" if self.kind != "band" else f"δ in [{lo}, {hi}]"

    def refutation_text(self) -> str:
        """The refutation region in words, e.g. 'δ <= 0' or 'δ < -0.05 or δ > 0.05'."""
        if self.kind == "exact":
            return "the check fails"
        sides = ([f"δ <= {self.refute_below:g}"] if self.refute_below is not None else []) + \
                ([f"δ >= {self.refute_above:g}"] if self.refute_above is not None else [])
        return " or ".join(sides)

    @property
    def has_gap(self) -> bool:
        """True when the pass and refutation regions leave a gap ('smaller than the margin')."""
        return (self.lo is not None and self.refute_below is not None and self.refute_below < self.lo) or \
               (self.hi is not None and self.refute_above is not None and self.refute_above > self.hi)

    def as_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, "lo": self.lo, "hi": self.hi, "margin": self.margin, "reason": self.reason,
               "paired": self.paired, "refute_below": self.refute_below, "refute_above": self.refute_above}
        if self.level is not None:
            out["level"] = self.level
        return out

    @property
    def one_sided_band(self) -> bool:
        return self.kind == "band" and (self.lo is None) != (self.hi is None)


# ======================================================================================== statistics
#: why a measurement with an arm constant across seeds cannot be tested (a ceiling, or a constant); harness.record.verdict
#: re-opens a claim's 'ceiling' objection when a counted criterion carries it
CONSTANT_ARM = "an arm is constant across seeds (a ceiling? use a metric without one)"


@dataclass(frozen=True)
class Stat:
    """δ, its standard error and t df for one measurement; ``degenerate`` names why it cannot be tested."""
    delta: float
    se: float
    df: float
    n: int
    degenerate: str = ""
    exact: bool = False             # an exact point (``estimate(..., exact=why)``): se 0, and that is known


def stat(m: Mapping[str, Any]) -> Stat:
    s = _stat(m)
    if m.get("invalid"):
        return Stat(s.delta, s.se, s.df, s.n, m["invalid"])
    return s


def _stat(m: Mapping[str, Any]) -> Stat:
    if m["source"] == "estimate":
        if m.get("exact") and m["se"] == 0:
            return Stat(m["value"], 0.0, m["df"], m["n"], "", exact=True)
        return Stat(m["value"], m["se"], m["df"], m["n"], "" if m["se"] > 0 else "zero standard error")
    a = np.asarray(m["a"], float)
    b = None if m.get("b") is None else np.asarray(m["b"], float)
    if b is None or m.get("paired"):
        x = a if b is None else a - b
        sd = float(x.std(ddof=1))
        why = ""
        if np.all(a == a[0]) or (b is not None and np.all(b == b[0])):
            why = CONSTANT_ARM
        elif sd == 0:
            why = "the paired differences are constant"
        return Stat(float(x.mean()), sd / math.sqrt(x.size), x.size - 1, int(x.size), why)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    why = (CONSTANT_ARM
           if np.all(a == a[0]) or np.all(b == b[0]) else "")
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if se > 0 else 1.0
    return Stat(float(a.mean() - b.mean()), se, float(df), int(max(a.size, b.size)), why)


def interval(s: Stat, level: float) -> tuple[float, float]:
    """The two-sided (1 - 2 level) t interval: its bounds are the one-sided bounds at ``level``."""
    if s.exact and not s.degenerate:
        return (s.delta, s.delta)
    if s.degenerate or not s.se > 0:
        return (math.nan, math.nan)
    q = float(sps.t.isf(level, s.df))
    return (s.delta - q * s.se, s.delta + q * s.se)


def _p_values(delta, se, df, rule: Rule, exact: bool = False):
    """One-sided p of 'δ in the pass region' (TOST: the larger half), of 'δ in the refutation region' (the smaller
    of its sides) and of 'δ outside the pass region' (for 'smaller than the margin'), vectorised over arrays.
    ``exact``: se 0 is an exact point, whose p's are their limits as se -> 0 (0 or 1; 1 on a region's edge)."""
    delta, se, df = np.asarray(delta, float), np.asarray(se, float), np.asarray(df, float)
    if exact:
        return _point_p(delta, rule)
    lo, hi, rb, ra = rule.lo, rule.hi, rule.refute_below, rule.refute_above
    zeros, ones = np.zeros_like(delta), np.ones_like(delta)
    with np.errstate(divide="ignore", invalid="ignore"):
        above_lo = sps.t.sf((delta - lo) / se, df) if lo is not None else zeros      # H1: δ > lo
        below_hi = sps.t.cdf((delta - hi) / se, df) if hi is not None else zeros     # H1: δ < hi
        out_low = sps.t.cdf((delta - rb) / se, df) if rb is not None else ones       # H1: δ < refute_below
        out_high = sps.t.sf((delta - ra) / se, df) if ra is not None else ones       # H1: δ > refute_above
        past_lo = sps.t.cdf((delta - lo) / se, df) if lo is not None else ones       # H1: δ < lo
        past_hi = sps.t.sf((delta - hi) / se, df) if hi is not None else ones        # H1: δ > hi
    bad = ~(se > 0)
    p_support = np.where(bad, 1.0, np.maximum(above_lo, below_hi))
    p_refute = np.where(bad, 1.0, np.minimum(out_low, out_high))
    p_outside = np.where(bad, 1.0, np.minimum(past_lo, past_hi))
    return p_support, p_refute, p_outside


def _point_p(delta: np.ndarray, rule: Rule) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The p's of an exact point (the limits as se -> 0): 0 where δ lies strictly inside the pass region, else 1;
    the refutation region is closed, as ``Rule.refutation_text`` states it (δ <= 0 for superiority): a
    deterministic δ exactly at no effect (every seed's slope exactly 0) contradicts a predicted direction."""
    inside, refuted, outside = (np.ones_like(delta, bool), np.zeros_like(delta, bool), np.zeros_like(delta, bool))
    if rule.lo is not None:
        inside &= delta > rule.lo
        outside |= delta < rule.lo
    if rule.hi is not None:
        inside &= delta < rule.hi
        outside |= delta > rule.hi
    if rule.refute_below is not None:
        refuted |= delta <= rule.refute_below
    if rule.refute_above is not None:
        refuted |= delta >= rule.refute_above
    return tuple(np.where(x, 0.0, 1.0) for x in (inside, refuted, outside))


# ========================================================================================= censoring
#: a measurement's ``bound`` (issue 63, C2's rule b): its per-seed values are bounds of δ, not values, because a
#: run that never reached its target within the budget is censored (its true steps lie above the budget + 1).
#: "upper": every value is at least its seed's true δ (a censored cell enters δ with a minus sign), so the values
#: can show δ is small (refute a predicted advantage) and never that it is large (support it); "lower": the mirror.
#: A superiority or non-inferiority rule only (pass region above, refutation below); censoring on both sides makes
#: the measurement invalid (``censor_bound``).
BOUND_UPPER, BOUND_LOWER = "upper", "lower"
CENSORED_BOTH = "runs censored on both sides of δ: its values bound it neither above nor below"


def censor_bound(m: dict[str, Any], plus: Any, minus: Any, why: str) -> dict[str, Any]:
    """Mark measurement ``m`` (``decision.samples``) by which of its cells were censored on which seed: ``plus``
    (cells entering δ with +, censored there: the true δ is larger) and ``minus`` (with −: the true δ is smaller),
    each a per-seed bool array. Nothing censored: ``m`` unchanged; one side: ``bound`` "lower" or "upper" and
    ``censored`` = ``why``; both: invalid (``CENSORED_BOTH``)."""
    up, down = bool(np.any(plus)), bool(np.any(minus))
    if not (up or down):
        return m
    m["censored"] = str(why)
    if up and down:
        m["invalid"] = "; ".join(r for r in (m.get("invalid", ""), CENSORED_BOTH) if r)
    else:
        m["bound"] = BOUND_LOWER if up else BOUND_UPPER
    return m


def bound_notes(measurements: Sequence[Mapping[str, Any]]) -> list[str]:
    """One note per censored part: 'd=64 vs d=4: censored runs (...): its values are upper bounds of δ, so it can
    refute and never support'."""
    side = {BOUND_UPPER: "upper bounds of δ, so it can refute and never support",
            BOUND_LOWER: "lower bounds of δ, so it can support and never refute"}
    return [f"{m.get('label') or 'measurement'}: {m['censored']}: its values are {side[m['bound']]}"
            for m in measurements if m.get("bound") in side]


def bounded_p(members: Sequence["_Member"], p_sup: Sequence[np.ndarray], p_ref: Sequence[np.ndarray]
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The p arrays (n_sim, parts) with each censored part's blocked side set to 1: an "upper" bound cannot
    support, a "lower" one cannot refute (``BOUND_UPPER``)."""
    sup, ref = [np.array(p, float, copy=True) for p in p_sup], [np.array(p, float, copy=True) for p in p_ref]
    for i, mem in enumerate(members):
        for q, m in enumerate(mem.measurements):
            side = m.get("bound")
            if side and (mem.rule.kind not in ("superiority", "non_inferiority")):
                raise DecisionError(f"{m.get('label') or 'measurement'}: a censored bound needs a superiority or "
                                    f"non-inferiority rule, not {mem.rule.kind}")
            if side == BOUND_UPPER:
                sup[i][:, q] = 1.0
            elif side == BOUND_LOWER:
                ref[i][:, q] = 1.0
    return sup, ref


# ============================================================================================= family
def holm_levels(p_decide: Sequence[float], alpha: float = ALPHA) -> tuple[list[float], list[bool], list[float]]:
    """Holm's step-down over a family: each member's level α/(m - r + 1), whether it is rejected, and its
    Holm-adjusted p (monotone). Hand-written (a few lines) rather than a statsmodels dependency for this alone."""
    m = len(p_decide)
    order = sorted(range(m), key=lambda i: p_decide[i])
    levels, rejected, adjusted = [alpha] * m, [False] * m, [1.0] * m
    going, running = True, 0.0
    for r, i in enumerate(order):
        levels[i] = alpha / (m - r)
        going = going and p_decide[i] <= levels[i]
        rejected[i] = going
        running = max(running, min(1.0, (m - r) * p_decide[i]))
        adjusted[i] = running
    return levels, rejected, adjusted


def _holm_reject(p: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Vectorised Holm over the last axis: p (n_sim, m) -> rejected (n_sim, m)."""
    n_sim, m = p.shape
    if m == 0:
        return np.zeros((n_sim, 0), bool)
    order = np.argsort(p, axis=1, kind="stable")
    sorted_p = np.take_along_axis(p, order, 1)
    ok = np.cumprod(sorted_p <= alpha / (m - np.arange(m)), axis=1).astype(bool)
    rejected = np.zeros_like(ok)
    np.put_along_axis(rejected, order, ok, 1)
    return rejected


@dataclass
class _Member:
    """One criterion as the family sees it."""
    index: int
    rule: Rule
    measurements: list[Mapping[str, Any]]
    counts: bool
    exact_holds: bool | None = None
    stats: list[Stat] = field(default_factory=list)

    @property
    def exact_point(self) -> bool:
        """Every part an exact point (``estimate(..., exact=why)``): decided, but nothing to simulate."""
        return bool(self.stats) and not self.untestable and all(s.exact for s in self.stats)

    @property
    def slotless(self) -> list[bool]:
        """Per part: whether it holds no slot in the claim's Holm family. A part whose foil is dead on every seed and
        at every rate tried (``decision.dead_foil``, carried as the measurement's ``foil_dead``) can never be tested
        on this design: it is not testable (inconclusive, so it still keeps the claim from "supported"), and it
        does not take a slot of Holm's m from the criteria that can be tested (docs/verdicts.md, "Never testable")."""
        return [bool(m.get("foil_dead")) for m in self.measurements]

    @property
    def untestable(self) -> str:
        """Why this criterion cannot be decided from its numbers (degenerate or invalid parts), '' if it can."""
        return "; ".join(f"{m.get('label') or 'measurement'}: {s.degenerate}"
                         for m, s in zip(self.measurements, self.stats) if s.degenerate)


def _decide_family(members: Sequence[_Member], p_sup: Sequence[np.ndarray], p_ref: Sequence[np.ndarray],
                   alpha: float = ALPHA) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Outcome codes (2 passed, 1 inconclusive, 0 refuted) per member and per part, and Holm's rejection per part,
    for p arrays of shape (n_sim, parts) per member: support at alpha on every part; refutation by Holm over the
    parts of the counted members (a reported member: Holm over its own parts)."""
    p_sup, p_ref = bounded_p(members, p_sup, p_ref)      # censored parts: the side their bounds cannot show
    counted = [i for i, mem in enumerate(members) if mem.counts]
    rejected: list[np.ndarray | None] = [None] * len(members)
    if counted:
        widths = [p_ref[i].shape[1] for i in counted]
        both = np.concatenate([p_ref[i] for i in counted], 1)
        keep = ~np.array([s for i in counted for s in members[i].slotless], bool)   # never-testable parts: no slot
        joint = np.zeros_like(both, bool)
        joint[:, keep] = _holm_reject(both[:, keep], alpha)
        for i, part in zip(counted, np.split(joint, np.cumsum(widths)[:-1], axis=1)):
            rejected[i] = part
    for i, mem in enumerate(members):
        if rejected[i] is None:
            rejected[i] = _holm_reject(p_ref[i], alpha)
    part_codes, codes = [], []
    for i in range(len(members)):
        passed = p_sup[i] <= alpha
        part_codes.append(np.where(passed, 2, np.where(rejected[i], 0, 1)))
        codes.append(np.where(passed.all(1), 2, np.where(rejected[i].any(1), 0, 1)))
    return codes, part_codes, rejected


def _verdict_codes(codes: np.ndarray, n_unrecorded: int) -> np.ndarray:
    """Outcome codes (n_sim, m) of the counted criteria -> verdict codes: 0 refuted if any refuted, 2 supported if
    all passed (and none unrecorded), else 1."""
    if codes.shape[1] == 0:
        return np.ones(codes.shape[0], int)
    any_ref = (codes == 0).any(1)
    all_pass = (codes == 2).all(1) & (n_unrecorded == 0)
    return np.where(any_ref, 0, np.where(all_pass, 2, 1))


def verdict_code(codes: Sequence[int], n_unrecorded: int = 0) -> int:
    """The verdict rule for one run (``_verdict_codes``): the counted criteria's outcome codes and how many
    counted criteria were never recorded -> 0 refuted, 2 supported, 1 inconclusive."""
    return int(_verdict_codes(np.array(list(codes), dtype=int).reshape(1, -1), n_unrecorded)[0])


_CODE = {PASSED: 2, INCONCLUSIVE: 1, REFUTED: 0}
_OUTCOME = {v: k for k, v in _CODE.items()}


@dataclass
class Judged:
    """The family's decision: per criterion (by index) and for the claim."""
    criteria: list[dict[str, Any]]
    verdict_code: int               # 2 supported, 1 inconclusive, 0 refuted
    firmness: float | None
    seeds_for_firm: int | None
    n_seeds: int | None
    firmness_reason: str = ""
