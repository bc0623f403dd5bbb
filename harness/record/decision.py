"""One decision protocol for every criterion (issues 16, 26): a declared rule, a measured interval, a decision.

A criterion declares its **rule** before anything is measured: what it predicts about one quantity δ (mean(a - b)
for two arms, mean(x) for one), the margin (the smallest effect the claim cares about) and the reason for it. The
claim module hands over per-seed samples (the seed is the unit) or an estimate with its standard error; this
module computes the t interval and decides. A rule has two regions, and the gap between them is "not shown":

=================  ===========================  ==============================  ================================
kind               prediction (pass region)     refuted when δ lies wholly in   between: inconclusive
=================  ===========================  ==============================  ================================
superiority        δ > margin                   δ <= 0 (no advantage, or the    0 < δ <= margin: "smaller than
                                                opposite)                       the margin"
non_inferiority    δ > -margin                  δ < -margin                     (no gap)
equivalence        |δ| < margin (TOST)          |δ| > margin                    (no gap)
band               lo <= δ <= hi                outside [lo, hi], or beyond     between the band's edge and
                                                ``null`` when one is declared   ``null``: "smaller than the
                                                (a one-sided band predicting a  margin"
                                                direction with a margin)
exact              a deterministic check        the check fails                 (none)
=================  ===========================  ==============================  ================================

**Decision.** For each part (a sub-measurement: a d_k, a task) the one-sided p of "δ in the pass region" (the
larger TOST half) is ``p_support`` and that of "δ in the refutation region" is ``p_refute``. A criterion *passes*
when every part's p_support <= α = 0.05: its (1 - 2α) interval lies inside the pass region (intersection-union:
support needs every part, and needs no multiplicity correction). It is *refuted* when Holm's step-down over every
part of every counted criterion of the claim rejects one of its parts' p_refute: the claim's false-refutation
rate stays <= α. Otherwise it is *inconclusive*; when its interval lies outside the pass region but not in the
refutation region it is marked ``short_of_margin`` ("smaller than the margin": neither shown nor contradicted).
Non-significance never passes and never refutes. Reported (not counted) criteria are decided alone: each passes
at α, and is refuted by Holm over its own parts.

**Parts are replications** (the same comparison on two tasks, at several d_k): the claim is supported only where
every part supports it, refuted when any part is refuted (Holm across the parts), and ``scope`` names where.

**Degenerate and invalid measurements.** An arm whose seeds are all equal (a metric at its ceiling, or a
constant) has no spread to test with; a comparison marked ``invalid`` (an arm tuned to an edge of its grid) cannot
be trusted. Either is inconclusive and says so, never p = 0, and gets no firmness.

**A live foil** (issue 38). A comparison reads the claimed arm against a foil; a foil that learnt nothing, or
that sits at the metric's floor, cannot tell the claimed effect from a broken (or untestably easy) foil: beating
a model at chance shows only that the claimed arm learnt something. So a comparison whose foil arm is at chance on
every seed (within ``tol`` of it, or on its far side: no better than chance), or at the floor on every seed, and,
where its rate was tuned, at every rate the module tried, is *invalid*: inconclusive, firmness null, with the
reason. ``dead_foil(values, chance=, floor=, tol=, better=, tried=)`` states the rule and returns the reason ('' for
a live foil); ``samples(..., foil_dead=reason)`` carries it the way it carries ``invalid`` (a foil alive on one seed,
or at one rate tried, keeps the ordinary decision). The module names the foil and the metric's chance and floor;
the rule is this one for every module, with no waiver.

**Exact points.** The one exception is opt-in and stated by the caller: ``estimate(value, 0, ..., exact=why)``,
for a quantity that every replicate gave exactly, where the caller can say why the zero spread is a fact and not a
bound of the metric (C5: every seed's slope of resolution against log2 h is exactly 0 because the arms compute the
same function on that seed, while resolution itself varies across seeds, so no arm sits at a ceiling). Its
interval is the point, it passes or is refuted where the point lies strictly inside a region (on an edge: neither),
it takes part in Holm with p 0 or 1, and like an exact check it has no firmness of its own. A constant arm handed
over as samples, or an estimate with se 0 and no reason, stays degenerate.

**Firmness** (the replication probability of each outcome and of the verdict, and ``seeds_for_firm``) is
estimated in ``harness.record.firmness``, which ``judge`` calls on the family it decided (``firmness=True``).

**Why one file over ~600 lines.** Rules, their tests, their proportion (binomial) forms and the texts the record
shows for them are one vocabulary: a rule's threshold text and its test must change together, and claim modules
call all of them as ``decision.X``. Firmness, which only consumes decisions, lives in ``harness.record.firmness``.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from scipy import stats as sps

ALPHA = 0.05                        # per claim: support at alpha per criterion, refutation Holm at alpha
KINDS = ("superiority", "non_inferiority", "equivalence", "band", "exact")
PASSED, INCONCLUSIVE, REFUTED = "passed", "inconclusive", "refuted"
OUTCOME_RANK = {PASSED: 2, INCONCLUSIVE: 1, REFUTED: 0}
SHORT_OF_MARGIN = ("smaller than the margin: the interval lies outside the predicted region but not in the "
                   "refutation region, so the effect is neither shown nor contradicted")


#: the note on a criterion whose interval lies in its refutation region at alpha, but which the claim's Holm
#: step-down does not reject: inconclusive, and the findings and report must say why, or the interval reads as refuted
HOLM_NOT_REJECTED = ("its interval lies in the refutation region at alpha, but Holm's step-down over the claim's "
                     "counted criteria does not reject it")


class DecisionError(ValueError):
    """A rule or a measurement that cannot be decided as declared; the message says which."""


# =============================================================================================== rules
@dataclass(frozen=True)
class Rule:
    """What a criterion predicts, declared before measuring. Build with the constructors below.

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


def _check_margin(margin: float, kind: str) -> float:
    m = float(margin)
    if not math.isfinite(m) or m < 0 or (kind == "equivalence" and m == 0):
        raise DecisionError(f"{kind} margin must be a finite number >= 0 (> 0 for equivalence), got {margin!r}")
    return m


def superiority(margin: float, reason: str, paired: bool = False) -> Rule:
    """mean(a - b) > margin (b may be absent: mean(a) > margin); refuted only when δ <= 0 (no advantage at all,
    or the opposite): an advantage smaller than the margin is 'not shown', never 'refuted'."""
    m = _check_margin(margin, "superiority")
    return Rule("superiority", lo=m, hi=None, margin=m, reason=reason, paired=paired, refute_below=0.0)


def non_inferiority(margin: float, reason: str, paired: bool = False) -> Rule:
    """mean(a - b) > -margin: a is not worse than b by more than the margin; refuted when worse by more."""
    m = _check_margin(margin, "non_inferiority")
    return Rule("non_inferiority", lo=-m, hi=None, margin=m, reason=reason, paired=paired, refute_below=-m)


def equivalence(margin: float, reason: str, paired: bool = False) -> Rule:
    """|mean(a - b)| < margin (two one-sided tests); refuted when |δ| > margin."""
    m = _check_margin(margin, "equivalence")
    return Rule("equivalence", lo=-m, hi=m, margin=m, reason=reason, paired=paired, refute_below=-m, refute_above=m)


def band(lo: float | None, hi: float | None, reason: str, paired: bool = False, null: float | None = None,
         level: bool = False) -> Rule:
    """lo <= δ <= hi; a side given as None (or +-inf) is open: band(None, 0) predicts δ < 0. Refuted when δ lies
    wholly outside. A claim's one-sided band says which of two it is (issue 38.4; tests/claims/test_criteria.py
    scans every claim module for one that says neither):

    * ``null``: the band predicts a *direction with a margin* (a slope below -0.1: "falls"); ``null`` is the value
      that means no effect (0; 0 for a log ratio too). Only the far side of it refutes, and δ between the band's
      edge and ``null`` is "smaller than the margin", never "refuted";
    * ``level=True``: the band predicts a *level* (a held-out loss below 0.2 nats; a check's own threshold), so
      its edge is where the prediction turns false and the complement refutes."""
    lo = None if lo is None or lo == -math.inf else float(lo)
    hi = None if hi is None or hi == math.inf else float(hi)
    below, above = lo, hi
    if level and null is not None:
        raise DecisionError("band: give null= (a direction) or level=True (a level), not both")
    if level and (lo is None) == (hi is None):
        raise DecisionError("band(level=True) is for a one-sided band (one of lo, hi open)")
    if null is not None:
        if (lo is None) == (hi is None):
            raise DecisionError("band(null=...) is for a one-sided band (one of lo, hi open)")
        null = float(null)
        if lo is not None:
            if null > lo:
                raise DecisionError(f"band(lo={lo}, null={null}): the null must lie below the band")
            below = null
        else:
            if null < hi:
                raise DecisionError(f"band(hi={hi}, null={null}): the null must lie above the band")
            above = null
    kind_of = True if level else (False if null is not None else None)
    return Rule("band", lo=lo, hi=hi, margin=None, reason=reason, paired=paired, refute_below=below,
                refute_above=above, level=kind_of)


def exact(reason: str = "deterministic") -> Rule:
    """A deterministic check (structure, path length, float64 identity): it holds or it fails."""
    return Rule("exact", reason=reason)


def rule_from_dict(d: Mapping[str, Any]) -> Rule:
    """A rule back from its ``as_dict`` (a record of schema 2 before issue 26 has no refutation bounds: the
    complement of the pass region, as it was decided then)."""
    below, above = d.get("refute_below", d.get("lo")), d.get("refute_above", d.get("hi"))
    return Rule(d["kind"], lo=d.get("lo"), hi=d.get("hi"), margin=d.get("margin"), reason=d.get("reason", ""),
                paired=bool(d.get("paired", False)), refute_below=below if d["kind"] != "exact" else None,
                refute_above=above if d["kind"] != "exact" else None, level=d.get("level"))


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


#: how a dead foil's reason begins in a measurement's ``invalid`` (``samples(..., foil_dead=...)``)
DEAD_FOIL = "dead foil"


def dead_foil(values: Any, *, tol: float, chance: float | None = None, floor: float | None = None,
              better: str | None = None, tried: Iterable[float] = (), arm: str = "the foil") -> str:
    """Why a comparison's foil arm is dead, '' when it is live (the rule: "A live foil" in the module docstring).

    ``values``: the foil's per-seed values of a metric whose ``chance`` (what a model that learnt nothing scores:
    ln 2 nats on a balanced binary label, accuracy 0.5) and/or ``floor`` (the best the metric can reach: a loss of
    0) are known, e.g. its held-out loss; not necessarily the metric the comparison reads (steps to a target).
    ``tried``: where the foil's rate was tuned, the foil's mean of the same metric at each rate the module tried
    (``harness.study.tuning.Tuned.mean_loss``); the foil is dead only if every one of those is dead too (a foil that
    learnt at some rate was tuned badly, not dead). ``better``: "lower" (a loss) or "higher" (an accuracy): a value
    on the far side of chance is no better than chance and counts as at chance; None: within ``tol`` either side.
    A non-finite value (a diverged run) learnt nothing: it counts as at chance, never at the floor.
    Dead at chance if every value (and every rate tried) is at chance, or dead at the floor if every one is within
    ``tol`` of the floor."""
    if chance is None and floor is None:
        raise DecisionError("dead_foil needs the metric's chance or its floor (or both)")
    tol = float(tol)
    if not (math.isfinite(tol) and tol > 0):
        raise DecisionError(f"dead_foil: tol must be a finite number > 0, got {tol!r}")
    if better not in (None, "lower", "higher"):
        raise DecisionError(f"dead_foil: better must be 'lower', 'higher' or None, got {better!r}")
    seeds = [float(v) for v in np.asarray(values, dtype=float).ravel()]
    rates = [float(v) for v in np.asarray(list(tried), dtype=float).ravel()]
    if not seeds:
        raise DecisionError(f"dead_foil: {arm} has no values")

    def at_chance(v: float) -> bool:
        if not math.isfinite(v):
            return True
        return abs(v - chance) <= tol or (better == "lower" and v > chance) or (better == "higher" and v < chance)

    def at_floor(v: float) -> bool:
        return math.isfinite(v) and abs(v - floor) <= tol

    def span(vs: list[float]) -> str:
        return f"{min(vs):.4g}" if len(vs) == 1 or min(vs) == max(vs) else f"{min(vs):.4g} .. {max(vs):.4g}"

    for where, ref, test in (("at chance", chance, at_chance), ("at the floor", floor, at_floor)):
        if ref is None or not all(test(v) for v in seeds + rates):
            continue
        side = {"lower": " or above", "higher": " or below"}.get(better or "", "") if where == "at chance" else ""
        text = (f"{arm} is {where} ({ref:.4g} +- {tol:g}{side}) on every seed ({len(seeds)}: {span(seeds)})"
                + (f" and at every rate tried ({len(rates)}: {span(rates)})" if rates else ""))
        return (text + ": a comparison against it cannot tell the claimed effect from a foil that learnt nothing"
                if where == "at chance" else
                text + ": the metric has no room left to separate the arms")
    return ""


def samples(a: Any, b: Any = None, *, paired: bool = False, label: str = "", invalid: str = "",
            identical: str = "", foil_dead: str | None = "") -> dict[str, Any]:
    """A measurement from per-seed samples: arm a, optionally arm b (δ = mean(a - b), or mean(a)).

    ``invalid``: why this comparison cannot be trusted as measured (e.g. an arm's tuned learning rate sits at the
    edge of its grid, issue 17); the criterion is then inconclusive with that reason, whatever the numbers say.

    ``foil_dead``: ``dead_foil``'s reason for this comparison's foil ('' or None: live). A dead foil makes the
    comparison invalid like ``invalid`` does (its reason joins ``invalid``, after "dead foil: "), and the
    measurement keeps it as ``foil_dead``.

    ``identical`` (paired only): why two arms equal on every seed would be a fact, not a ceiling (they compute the
    same thing bit for bit: a kernel under trial that *is* the reference). Then, when every seed's a equals its b
    while the arms vary across seeds, the measurement is an exact point at δ = 0 (``estimate(..., exact=...)``,
    "Exact points" above); otherwise, and without it, the samples as given (equal arms stay degenerate)."""
    if foil_dead:
        invalid = "; ".join(r for r in (str(invalid or ""), f"{DEAD_FOIL}: {foil_dead}") if r)
    m = _samples(a, b, paired=paired, label=label, invalid=invalid, identical=identical)
    if foil_dead:
        m["foil_dead"] = str(foil_dead)
    return m


def _samples(a: Any, b: Any, *, paired: bool, label: str, invalid: str, identical: str) -> dict[str, Any]:
    """``samples`` once a dead foil's reason has joined ``invalid``."""
    if identical and paired and b is not None:
        x, y = np.asarray(a, float), np.asarray(b, float)
        if x.shape == y.shape and x.size >= 2 and np.array_equal(x, y) and np.all(np.isfinite(x)) \
                and not np.all(x == x[0]):
            m = estimate(0.0, 0.0, x.size - 1, x.size, label=label, method="paired arms identical on every seed",
                         exact=f"both arms gave exactly the same value on each of the {x.size} seeds, which vary "
                               f"across seeds (no arm at a ceiling): {identical}")
            return {**m, "invalid": str(invalid)} if invalid else m
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


def estimate(value: float, se: float, df: float, n: int, *, label: str = "", method: str = "",
             exact: str = "") -> dict[str, Any]:
    """A measurement given as an estimate with its standard error and t degrees of freedom (a regression slope
    over seeds x grid points, a variance over thousands of draws); ``n`` is its seed count, which the firmness
    simulation scales (se ~ 1/sqrt(n), df ~ n).

    ``exact``: se is 0 because every replicate gave exactly this value, and the caller says why that zero spread
    is exact rather than unknown (see "Exact points" in the module docstring). Without it, se 0 is degenerate."""
    value, se, df = float(value), float(se), float(df)
    if not (math.isfinite(value) and math.isfinite(se) and se >= 0 and df > 0):
        raise DecisionError(f"{label or 'estimate'}: needs a finite value, se >= 0 and df > 0, "
                            f"got {value}, {se}, {df}")
    if exact and se != 0:
        raise DecisionError(f"{label or 'estimate'}: an exact point has se 0, got {se}")
    m = {"label": label, "source": "estimate", "value": value, "se": se, "df": df, "n": int(n), "method": method}
    if exact:
        m["exact"] = str(exact)
    return m


def from_fit(fit: Any, *, label: str = "", n: int | None = None, exact: str = "") -> dict[str, Any]:
    """A measurement from a ``harness.measure.stats.SlopeFit`` (its slope, stderr and n - 2 df; or, for a
    ``replicate_slope``, n - 1 df over the replicates). ``exact``: as in ``estimate``."""
    replicate = "replicates" in getattr(fit, "transform", "")
    df = fit.n - 1 if replicate else fit.n - 2
    return estimate(fit.slope, fit.stderr, max(df, 1), n if n is not None else fit.n, label=label,
                    method=f"slope ({fit.transform})" + (", exact: every replicate identical" if exact else ""),
                    exact=exact)


def proportion(k: int, n: int, *, label: str = "") -> dict[str, Any]:
    """A measurement of the fraction of n seeds for which something holds (k of them), e.g. "on most seeds": the
    per-seed indicators are 0/1, and a t over them is degenerate exactly when every seed agrees (the expected
    case), so the fraction is handed over as the plus-four proportion (Agresti & Coull 1998) (k + 2) / (n + 4),
    se sqrt(p (1 - p) / (n + 4)), t with n - 1 df (the per-seed convention; at small n stricter than the normal).
    A normal approximation: ``binomial_p`` gives the exact test to state beside it."""
    if n < 2 or not 0 <= k <= n:
        raise DecisionError(f"proportion: needs 0 <= k <= n and n >= 2, got k={k}, n={n}")
    p = (k + 2) / (n + 4)
    return estimate(p, math.sqrt(p * (1 - p) / (n + 4)), n - 1, n, label=label,
                    method="plus-four proportion, t with n - 1 df (normal approximation)")


def binomial_p(k: int, n: int, pi: float = 0.5) -> tuple[float, float]:
    """The exact binomial test of k successes in n against ``pi``: (p of 'more than pi', p of 'fewer than pi')."""
    return (float(sps.binomtest(k, n, pi, alternative="greater").pvalue),
            float(sps.binomtest(k, n, pi, alternative="less").pvalue))


def binomial_outcome(k: int, n: int, pi: float = 0.5, alpha: float = ALPHA) -> str:
    """What the exact binomial test alone decides at ``alpha``: passed (more than pi), refuted (fewer), else
    inconclusive; to say when it and the plus-four ``proportion`` would decide differently."""
    p_more, p_fewer = binomial_p(k, n, pi)
    return PASSED if p_more <= alpha else REFUTED if p_fewer <= alpha else INCONCLUSIVE


def proportion_detail(rule: Rule, k: int, n: int) -> str:
    """A ``proportion`` measurement's detail beside its exact test (pi = 1/2): both exact binomial p values, and,
    where the exact test alone and the plus-four estimate under ``rule`` decide differently at ALPHA, what each
    says."""
    p_more, p_fewer = binomial_p(k, n)
    approx = decide_alone(rule, [proportion(k, n)])["outcome"]
    exact = binomial_outcome(k, n)
    text = f"exact binomial p (more than half) {p_more:.4g}, (fewer than half) {p_fewer:.4g}"
    if approx != exact:
        text += f"; at alpha = {ALPHA} alone the exact test would say {exact}, the plus-four estimate {approx}"
    return text


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


def criterion_p(rule: Rule, stats_: Sequence[Stat]) -> tuple[float, float]:
    """A criterion's p_support (its weakest part: intersection-union) and p_refute (its strongest part, Holm's
    first step over its parts: k x the smallest), unadjusted for the rest of the family."""
    if not stats_:
        return 1.0, 1.0
    ps = [_p_values(s.delta, s.se if not s.degenerate else 0.0, s.df, rule, s.exact and not s.degenerate)
          for s in stats_]
    return float(max(p[0] for p in ps)), float(min(1.0, len(ps) * min(p[1] for p in ps)))


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
    def untestable(self) -> str:
        """Why this criterion cannot be decided from its numbers (degenerate or invalid parts), '' if it can."""
        return "; ".join(f"{m.get('label') or 'measurement'}: {s.degenerate}"
                         for m, s in zip(self.measurements, self.stats) if s.degenerate)


def _decide_family(members: Sequence[_Member], p_sup: Sequence[np.ndarray], p_ref: Sequence[np.ndarray],
                   alpha: float = ALPHA) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Outcome codes (2 passed, 1 inconclusive, 0 refuted) per member and per part, and Holm's rejection per part,
    for p arrays of shape (n_sim, parts) per member: support at alpha on every part; refutation by Holm over the
    parts of the counted members (a reported member: Holm over its own parts)."""
    counted = [i for i, mem in enumerate(members) if mem.counts]
    rejected: list[np.ndarray | None] = [None] * len(members)
    if counted:
        widths = [p_ref[i].shape[1] for i in counted]
        joint = _holm_reject(np.concatenate([p_ref[i] for i in counted], 1), alpha)
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


_CODE = {PASSED: 2, INCONCLUSIVE: 1, REFUTED: 0}
_OUTCOME = {v: k for k, v in _CODE.items()}


# ============================================================================================ judging
@dataclass
class Judged:
    """The family's decision: per criterion (by index) and for the claim."""
    criteria: list[dict[str, Any]]
    verdict_code: int               # 2 supported, 1 inconclusive, 0 refuted
    firmness: float | None
    seeds_for_firm: int | None
    n_seeds: int | None
    firmness_reason: str = ""


def _observed_p(members: Sequence[_Member]) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    sup, ref, out = [], [], []
    for mem in members:
        ps = [_p_values(s.delta, s.se if not s.degenerate else 0.0, s.df, mem.rule, s.exact and not s.degenerate)
              for s in mem.stats]
        sup.append(np.array([[float(p[0]) for p in ps]]))
        ref.append(np.array([[float(p[1]) for p in ps]]))
        out.append(np.array([[float(p[2]) for p in ps]]))
    return sup, ref, out


def judge(criteria: Sequence[Mapping[str, Any]], counted_mask: Sequence[bool], *, alpha: float = ALPHA,
          seed: int = 0, n_sim: int | None = None, firmness: bool = True, predictive: bool = True,
          search_seeds: bool = True, shared: bool = True) -> Judged:
    """Decide every protocol criterion record (``rule`` + ``measurements`` / ``exact_holds``): support at alpha per
    criterion, refutation by Holm over the parts of the counted statistical ones; firmness per criterion and for
    the claim from one simulation of the whole family (``harness.record.firmness.judge_firmness``: ``seed``, ``n_sim``
    simulated seed sets, default ``firmness.N_SIM``; ``predictive=False``: the plug-in simulation; ``shared=False``:
    measurements on the same seeds drawn independently, the rule before issue 38).

    Returns, per criterion, a dict of the derived fields (outcome, level, refute_level, p_support, p_refute,
    p_value, ci, measured, deciding_part, parts, short_of_margin, firmness, firmness_reason, seeds_for_firm,
    decision_note)."""
    out: list[dict[str, Any]] = [{} for _ in criteria]
    members: list[_Member] = []
    exact_codes, n_unrecorded = [], 0
    for i, (c, cm) in enumerate(zip(criteria, counted_mask)):
        if "rule" not in c or not c.get("recorded", True):
            n_unrecorded += bool(cm)
            continue
        rule = rule_from_dict(c["rule"])
        if rule.kind == "exact" and c.get("exact_holds") is None and c.get("unmeasured"):
            why = c["unmeasured"]                    # an exact check not made: inconclusive, never refuted
            out[i] = {"outcome": INCONCLUSIVE, "firmness": None, "firmness_reason": f"not measured: {why}",
                      "seeds_for_firm": None, "level": None, "decision_note": f"not measured: {why}"}
            if cm:
                exact_codes.append(1)
            continue
        if rule.kind == "exact":
            o = PASSED if c.get("exact_holds") else REFUTED
            out[i] = {"outcome": o, "firmness": None, "firmness_reason": "deterministic check: nothing to simulate",
                      "seeds_for_firm": None, "level": None}
            if cm:
                exact_codes.append(_CODE[o])
            continue
        if not c.get("measurements"):                # Criterion.unmeasured(reason): inconclusive, said why
            why = c.get("unmeasured") or "no measurement"
            out[i] = {"outcome": INCONCLUSIVE, "firmness": None, "firmness_reason": f"not measured: {why}",
                      "seeds_for_firm": None, "level": None, "decision_note": f"not measured: {why}"}
            if cm:
                exact_codes.append(1)
            continue
        mem = _Member(i, rule, list(c["measurements"]), bool(cm))
        mem.stats = [stat(m) for m in mem.measurements]
        members.append(mem)

    p_sup, p_ref, p_out = _observed_p(members)
    codes, part_codes, rejected = _decide_family(members, p_sup, p_ref, alpha)
    joint = [float(p) for j, mem in enumerate(members) if mem.counts for p in p_ref[j][0]]
    ref_levels, _, ref_adjusted = holm_levels(joint, alpha)      # the claim's refutation family: every part
    offsets, k = {}, 0
    for j, mem in enumerate(members):
        if mem.counts:
            offsets[j] = k
            k += len(mem.stats)
    for j, mem in enumerate(members):
        outcome = _OUTCOME[int(codes[j][0])]
        ps, pr, po = p_sup[j][0], p_ref[j][0], p_out[j][0]
        if mem.counts:
            adj = [ref_adjusted[offsets[j] + q] for q in range(len(mem.stats))]
            lv = [ref_levels[offsets[j] + q] for q in range(len(mem.stats))]
        else:
            lv, _, adj = holm_levels(list(pr), alpha)
        if outcome == REFUTED:
            deciding = int(np.argmin(adj))
        else:                                        # the weakest link: the part furthest from passing
            deciding = int(np.argmax(ps))
        s = mem.stats[deciding]
        parts = [{"label": m.get("label") or "", "outcome": _OUTCOME[int(part_codes[j][0][q])],
                  "measured": st.delta, "ci": list(interval(st, alpha)),
                  **({"untestable": st.degenerate} if st.degenerate else {})}
                 for q, (m, st) in enumerate(zip(mem.measurements, mem.stats))]
        short = outcome == INCONCLUSIVE and mem.rule.has_gap and not mem.untestable and \
            bool(np.any(po <= alpha) and not np.any(pr <= alpha))
        note = [f"not testable ({mem.untestable})"] if mem.untestable else []
        if short:
            note.append(SHORT_OF_MARGIN)
        if outcome == INCONCLUSIVE and not mem.untestable and np.any(pr <= alpha):
            note.append(HOLM_NOT_REJECTED)
        p_adj_min = float(min(adj))
        out[mem.index] = {
            "outcome": outcome, "level": alpha, "refute_level": float(lv[deciding]),
            "p_support": float(max(ps)), "p_refute": p_adj_min,
            "p_value": float(max(ps)) if outcome == PASSED else p_adj_min if outcome == REFUTED
            else float(min(max(ps), p_adj_min)),
            "ci": interval(s, alpha), "measured": s.delta, "deciding_stat": s,
            "deciding_part": mem.measurements[deciding].get("label"), "parts": parts, "short_of_margin": short,
            "firmness": None, "firmness_reason": "", "seeds_for_firm": None, "decision_note": "; ".join(note)}

    counted_codes = [int(codes[j][0]) for j, mem in enumerate(members) if mem.counts] + exact_codes
    verdict = int(_verdict_codes(np.array([counted_codes]), n_unrecorded)[0])
    if not firmness:
        for j, mem in enumerate(members):
            out[mem.index]["firmness_reason"] = "not estimated"
        return Judged(out, verdict, None, None, None, "not estimated")
    from harness.record import firmness as firm  # it builds on this module, so it is imported here, not at the top
    return firm.judge_firmness(members, out, exact_codes, n_unrecorded, verdict, alpha, seed=seed, n_sim=n_sim,
                               predictive=predictive, search_seeds=search_seeds, shared=shared)


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


def test_text(rule: Rule, measurements: Iterable[Mapping[str, Any]] = ()) -> str:
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
    parts = (f"; passed only if every one of its {len(ms)} parts passes, refuted if any part is" if len(ms) > 1
             else "")
    return (f"{how}: passed when the two-sided (1 - 2 alpha) t interval (alpha = {ALPHA}) lies in "
            f"{rule.region_text()}; refuted when it lies in {rule.refutation_text()} at its Holm level over the "
            f"claim's counted criteria{parts}")


test_text.__test__ = False  # a helper, not a pytest test


def decide_alone(rule: Rule, measurements: Sequence[Mapping[str, Any]] | None = None, *,
                 holds: bool | None = None, firmness: bool = False) -> dict[str, Any]:
    """One criterion decided alone at ALPHA (a family of one): its outcome, ci, p_value, measured, and with
    ``firmness=True`` its firmness and seeds_for_firm. For tests and for reported figures; a claim's verdict
    always goes through ``judge`` over the whole family."""
    record = {"rule": rule.as_dict(), "measurements": list(measurements or []), "exact_holds": holds,
              "recorded": True, "counts": True}
    return judge([record], [True], firmness=firmness).criteria[0]
