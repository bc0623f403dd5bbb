"""One decision protocol for every criterion (issue 16): a declared rule, a measured interval, a decision.

A criterion declares its **rule** before anything is measured: what it predicts about a difference (or one
quantity), the margin and the reason for that margin. The claim module hands over per-seed samples (the seed is
the unit) or a precomputed estimate; this module turns them into a t interval and the family decides.

Every kind is an interval prediction on one quantity δ (mean(a - b) for two arms, mean(x) for one):

=================  ===========================  =============================================
kind               prediction                   δ must lie in
=================  ===========================  =============================================
superiority        mean(a - b) > margin         (margin, +inf)
non_inferiority    mean(a - b) > -margin        (-margin, +inf)
equivalence        |mean(a - b)| < margin       (-margin, margin)  (TOST)
band               lo <= δ <= hi                [lo, hi]  (either side may be open)
exact              a deterministic check        (no interval: it holds or it fails)
=================  ===========================  =============================================

**Decision.** With the criterion's level α_i, the two-sided (1 - 2 α_i) Student-t interval of δ is computed
(Welch's for two unpaired arms, the paired/one-sample t otherwise: one rule at every n, and exact for normal
seed-to-seed spread, which is what few seeds allow us to assume). The criterion is *passed* when that interval
lies inside the predicted region, *refuted* when it lies wholly outside it, and *inconclusive* otherwise:
non-significance never passes. Equivalently, p_support is the one-sided p of "δ inside" (the larger of its two
TOST halves) and p_refute that of "δ outside".

**Family.** Within one claim the counted statistical criteria form a family and share α = 0.05 by Holm's
step-down rule on p_decide = min(p_support, p_refute): the r-th smallest is tested at α / (m - r + 1), and
testing stops at the first that fails. A criterion that Holm does not reach is inconclusive. Reported (not
counted) criteria are decided alone at α.

**Several sub-measurements** ("at every d_k"): passed needs every one inside (an intersection-union test, no
adjustment: p_support is the largest); refuted needs one wholly outside (Bonferroni over the k parts).

**Degenerate samples.** An arm whose seeds are all equal (a metric at its ceiling, or a constant) has no
spread to test with; the criterion is inconclusive and says so, never p = 0. Use a metric without a ceiling.

**Firmness.** The probability that a fresh, equally sized set of seeds gives the same outcome, by simulation:
each arm's seeds are drawn afresh from a normal with the arm's measured mean and spread (paired: the per-seed
differences), the same test runs on each simulated set. ``seeds_for_firm`` is the smallest seed count at which
the outcome reaches probability 0.9 (for an inconclusive outcome: the outcome the point estimate points to), or
None when it is already there or no count up to ``MAX_SEEDS`` gets there.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from scipy import stats as sps

ALPHA = 0.05                        # per claim, shared by Holm over its counted statistical criteria
KINDS = ("superiority", "non_inferiority", "equivalence", "band", "exact")
PASSED, INCONCLUSIVE, REFUTED = "passed", "inconclusive", "refuted"
OUTCOME_RANK = {PASSED: 2, INCONCLUSIVE: 1, REFUTED: 0}
FRAGILE_BELOW = 0.8                 # firmness under this gets a visible mark in the report and terminal
FIRM_TARGET = 0.9                   # seeds_for_firm: the count at which the outcome reaches this probability
MAX_SEEDS = 200
N_SIM = 2000                        # simulated seed sets per firmness estimate (Monte Carlo s.e. <= 0.011)
_SEARCH_GRID = tuple(range(2, 13)) + (15, 20, 25, 30, 40, 50, 60, 80, 100, 130, 160, 200)


class DecisionError(ValueError):
    """A rule or a measurement that cannot be decided as declared; the message says which."""


# =============================================================================================== rules
@dataclass(frozen=True)
class Rule:
    """What a criterion predicts, declared before measuring. Build with the constructors below."""
    kind: str
    lo: float | None = None         # the predicted region of δ; None = open on that side
    hi: float | None = None
    margin: float | None = None     # the declared margin (superiority, non-inferiority, equivalence)
    reason: str = ""                # why this margin (one line: "0.03 accuracy = 8 of 256 held-out examples")
    paired: bool = False            # arms share each seed's data and init streams: the paired t on a - b

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

    def region_text(self) -> str:
        if self.kind == "exact":
            return "the check holds"
        lo = "-inf" if self.lo is None else f"{self.lo:g}"
        hi = "+inf" if self.hi is None else f"{self.hi:g}"
        return f"δ in ({lo}, {hi})" if self.kind != "band" else f"δ in [{lo}, {hi}]"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "lo": self.lo, "hi": self.hi, "margin": self.margin, "reason": self.reason,
                "paired": self.paired}


def _check_margin(margin: float, kind: str) -> float:
    m = float(margin)
    if not math.isfinite(m) or m < 0 or (kind == "equivalence" and m == 0):
        raise DecisionError(f"{kind} margin must be a finite number >= 0 (> 0 for equivalence), got {margin!r}")
    return m


def superiority(margin: float, reason: str, paired: bool = False) -> Rule:
    """mean(a - b) > margin (b may be absent: mean(a) > margin)."""
    m = _check_margin(margin, "superiority")
    return Rule("superiority", lo=m, hi=None, margin=m, reason=reason, paired=paired)


def non_inferiority(margin: float, reason: str, paired: bool = False) -> Rule:
    """mean(a - b) > -margin: a is not worse than b by more than the margin."""
    m = _check_margin(margin, "non_inferiority")
    return Rule("non_inferiority", lo=-m, hi=None, margin=m, reason=reason, paired=paired)


def equivalence(margin: float, reason: str, paired: bool = False) -> Rule:
    """|mean(a - b)| < margin (two one-sided tests)."""
    m = _check_margin(margin, "equivalence")
    return Rule("equivalence", lo=-m, hi=m, margin=m, reason=reason, paired=paired)


def band(lo: float | None, hi: float | None, reason: str, paired: bool = False) -> Rule:
    """lo <= δ <= hi; a side given as None (or +-inf) is open: band(None, 0) predicts δ < 0."""
    lo = None if lo is None or lo == -math.inf else float(lo)
    hi = None if hi is None or hi == math.inf else float(hi)
    return Rule("band", lo=lo, hi=hi, margin=None, reason=reason, paired=paired)


def exact(reason: str = "deterministic") -> Rule:
    """A deterministic check (structure, path length, float64 identity): it holds or it fails."""
    return Rule("exact", reason=reason)


def rule_from_dict(d: Mapping[str, Any]) -> Rule:
    return Rule(d["kind"], lo=d.get("lo"), hi=d.get("hi"), margin=d.get("margin"), reason=d.get("reason", ""),
                paired=bool(d.get("paired", False)))


def fingerprint(definition: Mapping[str, Any]) -> str:
    """A short hash of a criterion's definition (kind, metric, arms, bounds, margin, α, counts, fast, paired)."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# ======================================================================================== measurements
def _clean(values: Any, what: str) -> list[float]:
    a = np.asarray(values, dtype=float).ravel()
    if a.size < 2:
        raise DecisionError(f"{what} needs at least 2 seeds, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise DecisionError(f"{what} holds NaN or inf: {a.tolist()}")
    return a.tolist()


def samples(a: Any, b: Any = None, *, paired: bool = False, label: str = "", invalid: str = "") -> dict[str, Any]:
    """A measurement from per-seed samples: arm a, optionally arm b (δ = mean(a - b), or mean(a)).

    ``invalid``: why this comparison cannot be trusted as measured (e.g. an arm's tuned learning rate sits at the
    edge of its grid, issue 17); the criterion is then inconclusive with that reason, whatever the numbers say."""
    m: dict[str, Any] = {"label": label, "source": "samples", "a": _clean(a, f"{label or 'measurement'}: arm a")}
    if invalid:
        m["invalid"] = str(invalid)
    if b is not None:
        m["b"] = _clean(b, f"{label or 'measurement'}: arm b")
        if paired and len(m["a"]) != len(m["b"]):
            raise DecisionError(f"{label or 'measurement'}: paired arms differ in seeds ({len(m['a'])} vs "
                                f"{len(m['b'])})")
    m["paired"] = bool(paired and b is not None)
    return m


def estimate(value: float, se: float, df: float, n: int, *, label: str = "", method: str = "") -> dict[str, Any]:
    """A measurement given as an estimate with its standard error and t degrees of freedom (a regression slope
    over seeds x grid points, a variance over thousands of draws); ``n`` is its seed count, which the firmness
    simulation scales (se ~ 1/sqrt(n), df ~ n)."""
    value, se, df = float(value), float(se), float(df)
    if not (math.isfinite(value) and math.isfinite(se) and se >= 0 and df > 0):
        raise DecisionError(f"{label or 'estimate'}: needs a finite value, se >= 0 and df > 0, "
                            f"got {value}, {se}, {df}")
    return {"label": label, "source": "estimate", "value": value, "se": se, "df": df, "n": int(n),
            "method": method}


def from_fit(fit: Any, *, label: str = "", n: int | None = None) -> dict[str, Any]:
    """A measurement from a ``harness.stats.SlopeFit`` (its slope, stderr and n - 2 df; or, for a
    ``replicate_slope``, n - 1 df over the replicates)."""
    replicate = "replicates" in getattr(fit, "transform", "")
    df = fit.n - 1 if replicate else fit.n - 2
    return estimate(fit.slope, fit.stderr, max(df, 1), n if n is not None else fit.n, label=label,
                    method=f"slope ({fit.transform})")


#: why a measurement with an arm constant across seeds cannot be tested (a ceiling, or a constant); harness.verdict
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


def stat(m: Mapping[str, Any]) -> Stat:
    s = _stat(m)
    if m.get("invalid"):
        return Stat(s.delta, s.se, s.df, s.n, m["invalid"])
    return s


def _stat(m: Mapping[str, Any]) -> Stat:
    if m["source"] == "estimate":
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


def _p_values(delta, se, df, lo: float | None, hi: float | None):
    """One-sided p of 'δ inside [lo, hi]' (TOST: the larger half) and of 'δ wholly outside' (the smaller),
    vectorised over arrays of (delta, se, df)."""
    delta, se, df = np.asarray(delta, float), np.asarray(se, float), np.asarray(df, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        above_lo = sps.t.sf((delta - lo) / se, df) if lo is not None else np.zeros_like(delta)   # H1: δ > lo
        below_hi = sps.t.cdf((delta - hi) / se, df) if hi is not None else np.zeros_like(delta)  # H1: δ < hi
        out_low = sps.t.cdf((delta - lo) / se, df) if lo is not None else np.ones_like(delta)    # H1: δ < lo
        out_high = sps.t.sf((delta - hi) / se, df) if hi is not None else np.ones_like(delta)    # H1: δ > hi
    p_support = np.maximum(above_lo, below_hi)
    p_refute = np.minimum(out_low, out_high)
    bad = ~(se > 0)
    return np.where(bad, 1.0, p_support), np.where(bad, 1.0, p_refute)


def interval(s: Stat, level: float) -> tuple[float, float]:
    """The two-sided (1 - 2 level) t interval: its bounds are the one-sided bounds at ``level``."""
    if s.degenerate or not s.se > 0:
        return (math.nan, math.nan)
    q = float(sps.t.isf(level, s.df))
    return (s.delta - q * s.se, s.delta + q * s.se)


def _combine(p_support, p_refute, parts_agree: bool):
    """Parts -> one criterion. Passed needs every part (intersection-union: the largest p_support). Refuted needs
    one part (Bonferroni: k x the smallest p_refute), or with ``parts_agree`` every part (the largest): parts that
    are replications (two tasks) must agree, and a disagreement is inconclusive (issue 17)."""
    k = len(p_support)
    refute = np.max(p_refute, axis=0) if parts_agree else np.minimum(1.0, k * np.min(p_refute, axis=0))
    return np.max(p_support, axis=0), refute


def criterion_p(rule: Rule, stats_: Sequence[Stat], parts_agree: bool = False) -> tuple[float, float]:
    """p_support and p_refute of a criterion over its parts (``_combine``)."""
    if not stats_:
        return 1.0, 1.0
    ps = [_p_values(s.delta, s.se if not s.degenerate else 0.0, s.df, rule.lo, rule.hi) for s in stats_]
    sup, ref = _combine([p[0] for p in ps], [p[1] for p in ps], parts_agree)
    return float(sup), float(ref)


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


def outcome_of(p_support: float, p_refute: float, level: float, reached: bool = True) -> str:
    if reached and p_support <= level:
        return PASSED
    if reached and p_refute <= level:
        return REFUTED
    return INCONCLUSIVE


# ========================================================================================== firmness
class _Sim:
    """Simulated fresh seed sets for one measurement, with common random numbers across seed counts."""

    def __init__(self, m: Mapping[str, Any], rng: np.random.Generator, n_sim: int = N_SIM) -> None:
        self.m = m
        self.base = stat(m)
        if m["source"] == "estimate":
            self.z = rng.standard_normal(n_sim)
            self.u = rng.random(n_sim)
        else:
            width = MAX_SEEDS
            self.za = rng.standard_normal((n_sim, width))
            self.zb = rng.standard_normal((n_sim, width)) if m.get("b") is not None and not m.get("paired") else None

    def at(self, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(delta, se, df) arrays for seed counts ``scale`` x the measured ones."""
        m, s = self.m, self.base
        if s.degenerate:
            n = np.zeros(len(self.za if m["source"] != "estimate" else self.z))
            return n + s.delta, n, n + 1.0
        if m["source"] == "estimate":
            df = max(s.df * scale, 1.0)
            se = s.se / math.sqrt(scale)
            chi = sps.chi2.ppf(self.u, df) / df
            return s.delta + s.se / math.sqrt(scale) * self.z, se * np.sqrt(chi), np.full_like(self.z, df)
        a = np.asarray(m["a"], float)
        if m.get("b") is None or m.get("paired"):
            x = a if m.get("b") is None else a - np.asarray(m["b"], float)
            n = _scaled(x.size, scale)
            draws = x.mean() + x.std(ddof=1) * self.za[:, :n]
            return draws.mean(1), draws.std(1, ddof=1) / math.sqrt(n), np.full(len(draws), n - 1.0)
        b = np.asarray(m["b"], float)
        na, nb = _scaled(a.size, scale), _scaled(b.size, scale)
        da = a.mean() + a.std(ddof=1) * self.za[:, :na]
        db = b.mean() + b.std(ddof=1) * self.zb[:, :nb]
        va, vb = da.var(1, ddof=1) / na, db.var(1, ddof=1) / nb
        df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
        return da.mean(1) - db.mean(1), np.sqrt(va + vb), df


def _scaled(n: int, scale: float) -> int:
    return int(min(MAX_SEEDS, max(2, round(n * scale))))


@dataclass
class _Member:
    """One criterion as the family sees it."""
    rule: Rule
    measurements: list[Mapping[str, Any]]
    counts: bool
    exact_holds: bool | None = None
    parts_agree: bool = False
    sims: list[_Sim] = field(default_factory=list)

    def simulated_p(self, scale: float) -> tuple[np.ndarray, np.ndarray]:
        ps = [_p_values(*sim.at(scale), self.rule.lo, self.rule.hi) for sim in self.sims]
        return _combine([p[0] for p in ps], [p[1] for p in ps], self.parts_agree)


def _family_outcomes(p_sup: np.ndarray, p_ref: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Vectorised Holm over simulations: p arrays (n_sim, m) -> outcome codes (2 passed, 1 inconclusive, 0 refuted)."""
    n_sim, m = p_sup.shape
    if m == 0:
        return np.zeros((n_sim, 0), int)
    p_dec = np.minimum(p_sup, p_ref)
    order = np.argsort(p_dec, axis=1, kind="stable")
    sorted_p = np.take_along_axis(p_dec, order, 1)
    levels = alpha / (m - np.arange(m))
    ok = np.cumprod(sorted_p <= levels, axis=1).astype(bool)
    rejected = np.zeros_like(ok)
    np.put_along_axis(rejected, order, ok, 1)
    lv = np.empty_like(p_dec)
    np.put_along_axis(lv, order, np.broadcast_to(levels, (n_sim, m)).copy(), 1)
    passed = rejected & (p_sup <= lv)
    refuted = rejected & ~passed & (p_ref <= lv)
    return np.where(passed, 2, np.where(refuted, 0, 1))


_CODE = {PASSED: 2, INCONCLUSIVE: 1, REFUTED: 0}


def _verdict_codes(outcomes: np.ndarray, n_unrecorded: int) -> np.ndarray:
    """Outcome codes (n_sim, m) -> verdict codes: 0 refuted if any refuted, 2 supported if all passed, else 1."""
    if outcomes.shape[1] == 0:
        return np.ones(outcomes.shape[0], int)
    any_ref = (outcomes == 0).any(1)
    all_pass = (outcomes == 2).all(1) & (n_unrecorded == 0)
    return np.where(any_ref, 0, np.where(all_pass, 2, 1))


# ============================================================================================ judging
@dataclass
class Judged:
    """The family's decision: per criterion (by index) and for the claim."""
    criteria: list[dict[str, Any]]
    verdict_code: int               # 2 supported, 1 inconclusive, 0 refuted
    firmness: float | None
    seeds_for_firm: int | None
    n_seeds: int | None


def judge(criteria: Sequence[Mapping[str, Any]], counted_mask: Sequence[bool], *, alpha: float = ALPHA,
          seed: int = 0, n_sim: int = N_SIM, firmness: bool = True) -> Judged:
    """Decide every protocol criterion record (``rule`` + ``measurements`` / ``exact_holds``), Holm over the
    counted statistical ones, with firmness per criterion and for the claim.

    Returns, per criterion, a dict of the derived fields (outcome, passed, refuted, level, p_support, p_refute,
    p_value, ci, measured, firmness, seeds_for_firm, detail_decision)."""
    rng = np.random.default_rng(seed)
    members: list[_Member | None] = []
    for c in criteria:
        if "rule" not in c or not c.get("recorded", True):
            members.append(None)
            continue
        rule = rule_from_dict(c["rule"])
        mem = _Member(rule, list(c.get("measurements") or []), bool(c.get("counts", True)),
                      c.get("exact_holds") if rule.kind == "exact" else None, bool(c.get("parts_agree")))
        if rule.kind != "exact" and firmness:
            mem.sims = [_Sim(m, rng, n_sim) for m in mem.measurements]
        members.append(mem)

    stats_ = [[stat(m) for m in mem.measurements] if mem and mem.rule.kind != "exact" else [] for mem in members]
    ps = [criterion_p(mem.rule, st, mem.parts_agree) if mem and mem.rule.kind != "exact" else (1.0, 1.0)
          for mem, st in zip(members, stats_)]
    family = [i for i, (mem, cm) in enumerate(zip(members, counted_mask))
              if mem is not None and cm and mem.rule.kind != "exact"]
    levels, reached, adjusted = holm_levels([min(ps[i]) for i in family], alpha)
    holm = {i: (lv, r, adj) for i, lv, r, adj in zip(family, levels, reached, adjusted)}

    out: list[dict[str, Any]] = []
    for i, (c, mem) in enumerate(zip(criteria, members)):
        if mem is None:
            out.append({})
            continue
        if mem.rule.kind == "exact":
            out.append({"outcome": PASSED if mem.exact_holds else REFUTED, "firmness": 1.0,
                        "seeds_for_firm": None, "level": None})
            continue
        if not mem.measurements:                       # Criterion.unmeasured(reason): inconclusive, said why
            out.append({"outcome": INCONCLUSIVE, "firmness": None, "seeds_for_firm": None, "level": None,
                        "decision_note": f"not measured: {c.get('unmeasured') or 'no measurement'}"})
            continue
        p_sup, p_ref = ps[i]
        # a reported (not counted) criterion is decided alone at alpha
        level, was_reached, p_adj = holm.get(i, (alpha, min(p_sup, p_ref) <= alpha, min(p_sup, p_ref)))
        outcome = outcome_of(p_sup, p_ref, level, reached=was_reached)
        deciding = _deciding_part(mem.rule, stats_[i], level)
        s = stats_[i][deciding] if stats_[i] else None
        firm, need = _member_firmness(mem, outcome, level, s)
        note = [f"{m.get('label') or 'measurement'}: {st.degenerate}"
                for m, st in zip(mem.measurements, stats_[i]) if st.degenerate]
        note = ["not testable (" + "; ".join(note) + ")"] if note else []
        if not was_reached and min(p_sup, p_ref) <= level:
            note.append("its interval clears the rule, but Holm's step-down stopped at a criterion with a "
                        "smaller p before reaching it")
        out.append({"outcome": outcome, "level": level, "p_support": p_sup, "p_refute": p_ref, "p_value": p_adj,
                    "ci": interval(s, level) if s is not None else (math.nan, math.nan),
                    "measured": s.delta if s is not None else None, "deciding_stat": s,
                    "deciding_part": mem.measurements[deciding].get("label") if mem.measurements else None,
                    "firmness": firm, "seeds_for_firm": need, "decision_note": "; ".join(note)})

    if not firmness:
        for o in out:
            if o:
                o["firmness"] = o["seeds_for_firm"] = None
    verdict_code, firm, need, n_claim = _claim_firmness(members, out, counted_mask, alpha, firmness)
    return Judged(out, verdict_code, firm, need, n_claim)


def _deciding_part(rule: Rule, st: Sequence[Stat], level: float) -> int:
    """The sub-measurement that decides: the one with the largest p_support (the weakest link)."""
    if not st:
        return 0
    p = [float(_p_values(s.delta, s.se if not s.degenerate else 0.0, s.df, rule.lo, rule.hi)[0]) for s in st]
    return int(np.argmax(p))


def _target(outcome: str, rule: Rule, s: Stat | None) -> str:
    """The outcome a criterion aims at with more seeds: its own if decisive, else where the estimate points."""
    if outcome != INCONCLUSIVE or s is None:
        return outcome
    inside = (rule.lo is None or s.delta > rule.lo) and (rule.hi is None or s.delta < rule.hi)
    return PASSED if inside else REFUTED


def _member_firmness(mem: _Member, outcome: str, level: float, s: Stat | None) -> tuple[float, int | None]:
    if not mem.sims:
        return 1.0, None

    def prob(scale: float, want: str) -> float:
        p_sup, p_ref = mem.simulated_p(scale)
        code = np.where(p_sup <= level, 2, np.where(p_ref <= level, 0, 1))
        return float(np.mean(code == _CODE[want]))

    firm = prob(1.0, outcome)
    if firm >= FIRM_TARGET and outcome != INCONCLUSIVE:
        return firm, None
    target = _target(outcome, mem.rule, s)
    if s is not None and s.degenerate:
        return firm, None
    n0 = max(st.n for st in (stat(m) for m in mem.measurements))
    for n in _SEARCH_GRID:
        if n > n0 and prob(n / n0, target) >= FIRM_TARGET:
            return firm, n
    return firm, None


def _claim_firmness(members, out, counted_mask, alpha, firmness=True) -> tuple[int, float | None, int | None, int | None]:
    """Verdict code of the observed run, its firmness (full Holm + verdict rule in every simulated run) and the
    seed count at which the verdict it aims at reaches FIRM_TARGET."""
    fam = [i for i, (mem, cm) in enumerate(zip(members, counted_mask)) if cm]
    n_unrecorded = sum(1 for i in fam if members[i] is None)
    stat_idx = [i for i in fam if members[i] is not None and members[i].rule.kind != "exact"
                and members[i].measurements]
    # exact checks and unmeasured criteria keep their outcome in every simulated run
    exact_codes = [_CODE[out[i]["outcome"]] for i in fam if members[i] is not None and i not in stat_idx]
    observed = np.array([[_CODE[out[i]["outcome"]] for i in stat_idx] + exact_codes])
    verdict = int(_verdict_codes(observed, n_unrecorded)[0])
    if not firmness:
        return verdict, None, None, None
    if not stat_idx:
        return verdict, (1.0 if fam else None), None, None
    # the claim's seed count is its smallest arm's (the profile's base count); arms run with more scale with it
    n0 = min(stat(m).n for i in stat_idx for m in members[i].measurements)

    def prob(scale: float, want: int) -> float:
        pairs = [members[i].simulated_p(scale) for i in stat_idx]
        p_sup = np.stack([p[0] for p in pairs], 1)
        p_ref = np.stack([p[1] for p in pairs], 1)
        codes = _family_outcomes(p_sup, p_ref, alpha)
        if exact_codes:
            codes = np.concatenate([codes, np.broadcast_to(exact_codes, (codes.shape[0], len(exact_codes)))], 1)
        return float(np.mean(_verdict_codes(codes, n_unrecorded) == want))

    firm = prob(1.0, verdict)
    if firm >= FIRM_TARGET and verdict != 1:
        return verdict, firm, None, n0
    targets = [_CODE[_target(out[i]["outcome"], members[i].rule, out[i]["deciding_stat"])] for i in stat_idx]
    want = int(_verdict_codes(np.array([targets + exact_codes]), n_unrecorded)[0])
    for n in _SEARCH_GRID:
        if n > n0 and prob(n / n0, want) >= FIRM_TARGET:
            return verdict, firm, n, n0
    return verdict, firm, None, n0


# ========================================================================================== texts
def threshold_text(rule: Rule) -> str:
    """The criterion's threshold as the report shows it, derived from the rule (never written twice)."""
    if rule.kind == "exact":
        return "holds (deterministic)"
    if rule.kind == "superiority":
        return f"mean(a - b) > {rule.margin:g}"
    if rule.kind == "non_inferiority":
        return f"mean(a - b) > -{rule.margin:g}"
    if rule.kind == "equivalence":
        return f"|mean(a - b)| < {rule.margin:g}"
    lo = "-inf" if rule.lo is None else f"{rule.lo:g}"
    hi = "+inf" if rule.hi is None else f"{rule.hi:g}"
    return f"in [{lo}, {hi}]"


def test_text(rule: Rule, measurements: Iterable[Mapping[str, Any]] = (), parts_agree: bool = False) -> str:
    """How the criterion is tested, derived from the rule and what was handed over."""
    if rule.kind == "exact":
        return "deterministic check"
    ms = list(measurements)
    kinds = set()
    for m in ms:
        if m["source"] == "estimate":
            kinds.add(m.get("method") or "estimate with its t interval")
        elif m.get("b") is None:
            kinds.add("one-sample t over seeds")
        else:
            kinds.add("paired t over seeds" if m.get("paired") else "Welch t over seeds")
    how = ", ".join(sorted(kinds)) or ("paired t over seeds" if rule.paired else "t over seeds")
    parts = f"; every one of {len(ms)} parts (intersection-union), refuted by any (Bonferroni)" if len(ms) > 1 else ""
    if len(ms) > 1 and parts_agree:
        parts = f"; passed or refuted only when all {len(ms)} parts agree (intersection-union both ways)"
    return (f"{how}: the two-sided (1 - 2 alpha_i) t interval of δ against {rule.region_text()}, alpha_i from "
            f"Holm over the claim's counted criteria (alpha = {ALPHA}){parts}")


test_text.__test__ = False  # a helper, not a pytest test


def decide_alone(rule: Rule, measurements: Sequence[Mapping[str, Any]] | None = None, *,
                 holds: bool | None = None, firmness: bool = False) -> dict[str, Any]:
    """One criterion decided alone at ALPHA (a family of one): its outcome, ci, p_value, measured, and with
    ``firmness=True`` its firmness and seeds_for_firm. For tests and for reported figures; a claim's verdict
    always goes through ``judge`` over the whole family."""
    record = {"rule": rule.as_dict(), "measurements": list(measurements or []), "exact_holds": holds,
              "recorded": True, "counts": True}
    return judge([record], [True], firmness=firmness).criteria[0]
