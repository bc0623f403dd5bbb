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

**Why one file over ~500 lines.** Rules, their tests, their proportion (binomial) forms and the texts the record
shows for them are one vocabulary: a rule's threshold text and its test must change together, and claim modules
call all of them as ``decision.X``. What ``judge`` and the firmness simulation both decide with (``Rule``, a
measurement's ``Stat`` and p values, Holm over the family, the verdict rule) is ``harness.record.family``, which
both import and this module re-exports; firmness lives in ``harness.record.firmness``.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from scipy import stats as sps

from harness.record import firmness as firm
# the family's vocabulary, shared with firmness; claim modules and the record read all of it as ``decision.X``
from harness.record.family import (_CODE, _OUTCOME, ALPHA, CONSTANT_ARM, INCONCLUSIVE, KINDS,  # noqa: F401
                                   OUTCOME_RANK, PASSED, REFUTED, DecisionError, Judged, Rule, Stat, _decide_family,
                                   _Member, _p_values, _verdict_codes, BOUND_LOWER, BOUND_UPPER, CENSORED_BOTH,
                                   bound_notes, bounded_p, censor_bound, holm_levels, interval, stat, verdict_code)

SHORT_OF_MARGIN = ("smaller than the margin: the interval lies outside the predicted region but not in the "
                   "refutation region, so the effect is neither shown nor contradicted")


#: the note on a criterion whose interval lies in its refutation region at alpha, but which the claim's Holm
#: step-down does not reject: inconclusive, and the findings and report must say why, or the interval reads as refuted
HOLM_NOT_REJECTED = ("its interval lies in the refutation region at alpha, but Holm's step-down over the claim's "
                     "counted criteria does not reject it")


#: the note on a counted criterion with a part whose foil is dead on every seed and at every rate tried: that part
#: can never be tested on this design, so it holds no slot in the claim's Holm family (docs/verdicts.md)
NO_SLOT = ("its foil is dead on every seed and at every rate tried, so the part can never be tested on this design: "
           "it holds no slot in Holm's family over the claim's counted criteria")


# =============================================================================================== rules
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
            identical: str = "", foil_dead: str | None = "",
            rates: Sequence[Mapping[str, Any]] | None = None, arms: Sequence[str] | None = None,
            over: str = "") -> dict[str, Any]:
    """A measurement from per-seed samples: arm a, optionally arm b (δ = mean(a - b), or mean(a)).

    ``invalid``: why this comparison cannot be trusted as measured (e.g. an arm's tuned learning rate sits at the
    edge of its grid, issue 17); the criterion is then inconclusive with that reason, whatever the numbers say.

    ``foil_dead``: ``dead_foil``'s reason for this comparison's foil ('' or None: live). A dead foil makes the
    comparison invalid like ``invalid`` does (its reason joins ``invalid``, after "dead foil: "), and the
    measurement keeps it as ``foil_dead``.

    ``identical`` (paired only): why two arms equal on every seed would be a fact, not a ceiling (they compute the
    same thing bit for bit: a kernel under trial that *is* the reference). Then, when every seed's a equals its b
    while the arms vary across seeds, the measurement is an exact point at δ = 0 (``estimate(..., exact=...)``,
    "Exact points" above); otherwise, and without it, the samples as given (equal arms stay degenerate).

    ``rates``: how each arm's learning rate was chosen (``rate_choice``, one entry per tuned arm, with the sign its
    mean enters δ with), so that firmness simulates a fresh rate choice too (``harness.record.firmness``); kept
    as the measurement's ``rates``. ``rates=[]`` says that no arm it reads had its rate tuned (each ran at the
    profile's rate): nothing to simulate, and no "given the tuned rates" (``harness.record.verdict.tuned``).

    ``arms``: this part's own names for arms a and b where the criterion's are generic (C4's "the other alpha" is
    alpha = 1 on one part and 0.75 on another), kept as the measurement's ``arms`` for the findings to name.

    ``over``: what one sample is where it is not a seed (a checkpoint read's "probe sequences"), kept as the
    measurement's ``over`` for ``test_text`` to name."""
    if arms is not None and (len(arms) != 2 or b is None):
        raise DecisionError(f"{label or 'measurement'}: arms names the two arms of a comparison, got {arms!r}")
    if foil_dead:
        invalid = "; ".join(r for r in (str(invalid or ""), f"{DEAD_FOIL}: {foil_dead}") if r)
    m = _samples(a, b, paired=paired, label=label, invalid=invalid, identical=identical)
    if foil_dead:
        m["foil_dead"] = str(foil_dead)
    if rates is not None and m["source"] == "samples":
        m["rates"] = [dict(r) for r in rates]
    if arms is not None:
        m["arms"] = [str(x) for x in arms]
    if over:
        m["over"] = str(over)
    return m


def rate_choice(key: str, sign: float, lrs: Sequence[float], choice: Sequence[float], value: Sequence[float],
                chosen: float, n_tuning: int, sd: float, df: float, value_sd: float, *,
                log_sd: float | None = None, log_df: float | None = None, rho: float | None = None,
                n_eval: int | None = None, eval_choice: float | None = None, eval_log_choice: float | None = None,
                eval_value: float | None = None) -> dict[str, Any]:
    """One tuned arm's rate choice, for ``samples(rates=...)``: ``key`` names the arm (the same arm in two
    measurements has the same key, and one simulated choice), ``sign`` how its mean enters δ (+1 arm a, -1 arm
    b); at each grid rate ``lrs``, ``choice`` the mean over the ``n_tuning`` tuning seeds of the quantity the rate
    was chosen by (lowest wins; a diverged mean is inf) and ``value`` of the quantity this measurement reads;
    ``chosen`` the rate chosen; ``sd`` (with ``df`` degrees of freedom) the seed-to-seed SD of the choosing
    quantity and ``value_sd`` of the measured one.

    Optional (issue 54, item 5; each kept only where given, and ``harness.record.firmness`` uses each where present):
    ``log_sd`` (``log_df``) the same SD of the choosing quantity's log, where it is positive (a loss: the scale on
    which one SD fits the whole grid); ``rho`` the share of the tuning runs' seed-to-seed variance that a tuning seed
    shares across the grid's rates (estimable from two tuning seeds up); ``n_eval`` the evaluation seeds at the
    chosen rate, and their means of the choosing quantity (``eval_choice``, its log ``eval_log_choice``) and of the
    measured one (``eval_value``)."""
    if chosen not in lrs:
        raise DecisionError(f"{key}: the chosen rate {chosen} is not on its grid {list(lrs)}")
    clean = lambda xs: [float(x) if math.isfinite(float(x)) else math.inf for x in xs]  # noqa: E731
    return {"key": str(key), "sign": float(sign), "lrs": [float(x) for x in lrs], "choice": clean(choice),
            "value": [float(x) for x in value], "chosen": float(chosen), "n_tuning": int(n_tuning),
            "sd": float(sd), "df": float(df), "value_sd": float(value_sd),
            **{k: (int(v) if k == "n_eval" else float(v)) for k, v in
               (("log_sd", log_sd), ("log_df", log_df), ("rho", rho), ("n_eval", n_eval), ("eval_choice", eval_choice),
                ("eval_log_choice", eval_log_choice), ("eval_value", eval_value))
               if v is not None and math.isfinite(float(v))}}


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


def criterion_p(rule: Rule, stats_: Sequence[Stat]) -> tuple[float, float]:
    """A criterion's p_support (its weakest part: intersection-union) and p_refute (its strongest part, Holm's
    first step over its parts: k x the smallest), unadjusted for the rest of the family."""
    if not stats_:
        return 1.0, 1.0
    ps = [_p_values(s.delta, s.se if not s.degenerate else 0.0, s.df, rule, s.exact and not s.degenerate)
          for s in stats_]
    return float(max(p[0] for p in ps)), float(min(1.0, len(ps) * min(p[1] for p in ps)))


# ============================================================================================ judging
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
    p_sup, p_ref = bounded_p(members, p_sup, p_ref)          # a censored part's blocked side reads p 1
    codes, part_codes, rejected = _decide_family(members, p_sup, p_ref, alpha)
    # the claim's refutation family: every part of every counted criterion, less the never-testable ones (dead
    # foil on every seed and rate tried: ``_Member.slotless``), which hold no slot and read level None, adjusted p 1
    slots = [(j, q) for j, mem in enumerate(members) if mem.counts
             for q, off in enumerate(mem.slotless) if not off]
    fam_levels, _, fam_adjusted = holm_levels([float(p_ref[j][0][q]) for j, q in slots], alpha)
    ref_levels = {jq: lv for jq, lv in zip(slots, fam_levels)}
    ref_adjusted = {jq: a for jq, a in zip(slots, fam_adjusted)}
    for j, mem in enumerate(members):
        outcome = _OUTCOME[int(codes[j][0])]
        ps, pr, po = p_sup[j][0], p_ref[j][0], p_out[j][0]
        if mem.counts:
            adj = [ref_adjusted.get((j, q), 1.0) for q in range(len(mem.stats))]
            lv = [ref_levels.get((j, q)) for q in range(len(mem.stats))]
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
        if mem.counts and any(mem.slotless):
            note.append(NO_SLOT)
        note += bound_notes(mem.measurements)
        if short:
            note.append(SHORT_OF_MARGIN)
        if outcome == INCONCLUSIVE and not mem.untestable and np.any(pr <= alpha):
            note.append(HOLM_NOT_REJECTED)
        p_adj_min = float(min(adj))
        out[mem.index] = {
            "outcome": outcome, "level": alpha,
            "refute_level": None if lv[deciding] is None else float(lv[deciding]),
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
    return firm.judge_firmness(members, out, exact_codes, n_unrecorded, verdict, alpha, seed=seed, n_sim=n_sim,
                               predictive=predictive, search_seeds=search_seeds, shared=shared)


def part_outcomes(rule: Rule, parts: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Each part's outcome alone (``decide_alone``, no family adjustment), one row per part label: the per-task
    rows (part, outcome, measured, ci) a report shows beside a criterion with one part per task."""
    rows = []
    for label, ms in parts.items():
        d = decide_alone(rule, ms)
        rows.append({"part": label, "outcome": d["outcome"], "measured": d.get("measured"), "ci": d.get("ci")})
    return rows


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
            kinds.add(f"one-sample t over {m.get('over', 'seeds')}")
        else:
            kinds.add(f"{'paired' if m.get('paired') else 'Welch'} t over {m.get('over', 'seeds')}")
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
