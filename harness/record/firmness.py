"""Firmness: how likely a fresh run repeats each outcome and the verdict (issue 26), and ``seeds_for_firm``.

**Firmness: the replication probability, estimated from this run's seeds (and, for an arm whose rate was tuned
and recorded, from its tuning runs: "A fresh rate choice" below).** The
share of simulated fresh, equally sized seed sets that repeat the outcome (a criterion's, and the claim's verdict,
with Holm and the verdict rule applied in every simulated run). Each simulated set is drawn from the predictive
distribution: each arm's (or the paired differences') mean and SD are first drawn from their posterior under the
t / scaled-χ² rule at the observed n (flat prior), then the fresh seeds from a normal with those; so a 2-df SD's
uncertainty widens the spread of outcomes rather than being taken as the truth. It is null (with the reason) for
an exact check (deterministic: nothing to simulate), a degenerate, invalid or unmeasured criterion, and for an
inconclusive verdict that rests on one. ``seeds_for_firm`` is a planning number, the usual power calculation:
the smallest seed count at which the outcome aimed at (an inconclusive criterion's: where its point estimate
points) would reach 0.9 *if the observed means and spreads were the truth* (the plug-in simulation), or None.
(The predictive probability cannot plan: its uncertainty about the true mean comes from this run's seeds, and no
number of fresh seeds removes it.) Its calibration is
checked in tests/record/test_decision.py on synthetic claims and, on this suite's own criteria, by
``python -m harness.suite.calibration``.

**Criteria that share runs share their draws** (issue 38, finding 10). A claim's criteria often read the same
runs: C3's ``c_large_dk_additive_beats_unscaled`` and ``c_large_dk_scaled_beats_unscaled`` both subtract from the
very same unscaled runs at d_k 256, whose spread is nearly all of theirs. Drawn independently, a fresh seed set
that is unlucky for one is lucky for the other, and the claim's simulated verdict (every criterion must pass)
came out near the *product* of its criteria's firmness, where the truth is near their *minimum* (at smoke on an
AVX-512 box C3 was predicted 0.20, the product of three criteria's 0.57-0.62, and repeated 3 of 3). The rule:

* a **cell** is a claim's seed set: every measurement handed over as per-seed samples (one arm, or paired arms'
  differences) with the same number of seeds is on the same seeds, in the same order (seed i is
  ``M*1000 + i``, docs/profiles.md), whether it reads the same runs, other arms of the same seeds or another
  metric of them. The records need no key for it: the per-seed values are the cell's evidence;
* within a cell, the simulated draws are correlated by the **observed correlation of the per-seed values**
  (Pearson, over the seeds): the normals that draw each measurement's posterior mean and its fresh mean by that
  correlation ρ, the uniforms that draw the chi-squares (its posterior SD and its fresh sample SD) through a
  Gaussian copula by ρ², the correlation of two sample variances of a bivariate normal. Every measurement keeps
  its marginal distribution, so a criterion of one part is simulated as before (up to Monte Carlo error); what
  changes is what is decided jointly: the claim's verdict, Holm over the counted parts, and a criterion whose
  parts (two tasks, several d_k) are on the same seeds;
* measurements with no per-seed values (estimates: slopes, proportions), a degenerate or invalid one, an
  unpaired comparison (its arms are declared not aligned by seed) and samples over two seeds (where ρ is ±1
  whatever the truth) stay independent, as before.

Why the observed correlation and not "the same cell, the same draw" (perfect correlation): two criteria that share
an arm with opposite signs (a − b and b − c) are negatively correlated, and a criterion on the same seeds but
another task or metric may barely be correlated at all; a common draw would get both wrong, while ρ measured on the
same seeds gets the sign and the size. It is one more plug-in, from as few as three seeds; on synthetic claims
(``tests/record/test_decision.py``) it is calibrated where independent draws are not (three criteria sharing an
arm), and where the truth is independent runs on the same seeds the spurious ρ of three seeds costs nothing
overall (Brier score 0.091 against 0.096 with independent draws; 0.081 against 0.081 at five seeds).

**A fresh rate choice** (issue 47, mechanism 3). A tuned arm's rate was chosen on tuning seeds, and a fresh run
tunes again: with one or two tuning seeds it may choose another rate of the grid, and the arm's evaluation then
moves by what that rate gives. A measurement that carries ``rates`` (``decision.rate_choice``: per tuned arm, the
grid's tuning means of the choosing quantity and of the measured one, the seed-to-seed SDs) has the choice
simulated with its seeds: each grid rate's true mean is drawn from its posterior (the tuning mean, SD from the
evaluation and tuning seeds pooled, scaled-χ² as above), a fresh tuning mean from that, and the fresh choice is
the lowest; the arm's mean then shifts by the chosen rate's value less the observed choice's (the same normals
drawing the measured quantity's means, so a rate that was lucky on the tuning seeds is not assumed better). One
draw per arm (its ``key``), shared by every measurement that reads it, from a generator of its own, so a claim
without ``rates`` is simulated exactly as before. Approximations: a fresh choice at a grid's end is not extended
past it (the tuning rule would, or mark the arm invalid), and the tuning runs' rates are the grid.

API: ``judge_firmness(...)``, which ``harness.record.decision.judge`` calls (``firmness=True``) on the family it has
just decided, and fills in each criterion's ``firmness``, ``firmness_reason`` and ``seeds_for_firm`` and the claim's
(``Judged.firmness``, ``seeds_for_firm``, ``n_seeds``); ``FRAGILE_BELOW`` (a firmness under it is marked fragile in
the report and the terminal, ``harness.record.verdict.fragile``), ``FIRM_TARGET`` (what ``seeds_for_firm`` aims at),
``N_SIM`` (simulated seed sets per estimate) and ``MAX_SEEDS`` (the largest seed count simulated). Every decision
in a simulated run is the observed one's own (``harness.record.family``: its p values, Holm over the family, the
verdict rule).
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats as sps

from harness.record.family import (_CODE, INCONCLUSIVE, Judged, Rule, Stat, _decide_family, _Member, _p_values,
                                   _verdict_codes, stat)

FRAGILE_BELOW = 0.8                 # firmness under this gets a visible mark in the report and terminal
FIRM_TARGET = 0.9                   # seeds_for_firm: the count at which the outcome reaches this probability
MAX_SEEDS = 200
N_SIM = 2000                        # simulated seed sets per firmness estimate (Monte Carlo s.e. <= 0.011)
_SEARCH_GRID = tuple(range(2, 13)) + (15, 20, 25, 30, 40, 50, 60, 80, 100, 130, 160, 200)


class _Sim:
    """Simulated fresh seed sets for one measurement (common random numbers across seed counts): (delta, se, df)
    of the same test on each. ``predictive``: draw the arm's mean and SD from their posterior first (issue 26);
    False: take the observed mean and SD as the truth (the plug-in estimate, kept to show what it overstates)."""

    def __init__(self, m: Mapping[str, Any], rng: np.random.Generator, n_sim: int = N_SIM,
                 predictive: bool = True) -> None:
        self.m, self.n_sim, self.predictive = m, n_sim, predictive
        self.base = stat(m)
        arms = 1 if m["source"] == "estimate" or m.get("b") is None or m.get("paired") else 2
        # per arm: standard normals for the posterior mean and the fresh mean, uniforms for the two chi-squares
        self.z = rng.standard_normal((arms, 2, n_sim))
        self.u = rng.random((arms, 2, n_sim))
        self.shift: np.ndarray | float = 0.0      # δ's move under a fresh rate choice (``rate_shifts``)

    def per_seed(self) -> list[np.ndarray | None]:
        """Per simulated arm (each row of ``z``), the per-seed values it is drawn for, in seed order: the one
        sample or the paired differences, or each arm of an unpaired comparison; None for an estimate (no
        per-seed values) and for a degenerate or invalid measurement (nothing simulated from it)."""
        m = self.m
        if m["source"] == "estimate" or self.base.degenerate:
            return [None] * self.z.shape[0]
        a = np.asarray(m["a"], float)
        if m.get("b") is None:
            return [a]
        # unpaired arms are, as the module declared them, not aligned by seed: neither is shared with anything
        return [a - np.asarray(m["b"], float)] if m.get("paired") else [None, None]

    def _arm(self, k: int, mean: float, sd: float, n: int, scale: float, predictive: bool
             ) -> tuple[np.ndarray, np.ndarray, int]:
        """(fresh means, fresh sample variances, fresh n) of one arm observed as (mean, sd) over n seeds."""
        n_new = _scaled(n, scale)
        if predictive:
            sigma2 = (n - 1) * sd ** 2 / np.maximum(sps.chi2.ppf(self.u[k, 0], n - 1), 1e-300)
            mu = mean + np.sqrt(sigma2 / n) * self.z[k, 0]
        else:
            sigma2, mu = np.full(self.n_sim, sd ** 2), np.full(self.n_sim, mean)
        fresh_mean = mu + np.sqrt(sigma2 / n_new) * self.z[k, 1]
        fresh_var = sigma2 * sps.chi2.ppf(self.u[k, 1], n_new - 1) / (n_new - 1)
        return fresh_mean, fresh_var, n_new

    def at(self, scale: float, predictive: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(delta, se, df) arrays for seed counts ``scale`` x the measured ones (``predictive`` None: the sim's)."""
        m, s = self.m, self.base
        predictive = self.predictive if predictive is None else predictive
        if m["source"] == "estimate":
            df_new = max(s.df * scale, 1.0)
            if predictive:
                se_true = s.se * np.sqrt(s.df / np.maximum(sps.chi2.ppf(self.u[0, 0], s.df), 1e-300))
                truth = s.delta + se_true * self.z[0, 0]
            else:
                se_true, truth = np.full(self.n_sim, s.se), np.full(self.n_sim, s.delta)
            se_new = se_true / math.sqrt(scale)
            est = truth + se_new * self.z[0, 1]
            return est, se_new * np.sqrt(sps.chi2.ppf(self.u[0, 1], df_new) / df_new), np.full(self.n_sim, df_new)
        a = np.asarray(m["a"], float)
        if m.get("b") is None or m.get("paired"):
            x = a if m.get("b") is None else a - np.asarray(m["b"], float)
            mean, var, n = self._arm(0, float(x.mean()), float(x.std(ddof=1)), x.size, scale, predictive)
            return mean + self.shift, np.sqrt(var / n), np.full(self.n_sim, n - 1.0)
        b = np.asarray(m["b"], float)
        ma, va, na = self._arm(0, float(a.mean()), float(a.std(ddof=1)), a.size, scale, predictive)
        mb, vb, nb = self._arm(1, float(b.mean()), float(b.std(ddof=1)), b.size, scale, predictive)
        sa, sb = va / na, vb / nb
        df = (sa + sb) ** 2 / (sa ** 2 / (na - 1) + sb ** 2 / (nb - 1))
        return ma - mb + self.shift, np.sqrt(sa + sb), df


def share_draws(sims: Sequence[_Sim]) -> list[list[int]]:
    """Correlate the simulated draws of measurements taken on the same seeds (see the module docstring, "Criteria
    that share runs"), in place; returns the cells (lists of indices into the flat list of simulated arms) that
    were correlated. Every arm's draws keep their marginal distribution, so a criterion alone is simulated as
    before; the first arm of each cell keeps its very draws."""
    slots = [(sim, k, v) for sim in sims for k, v in enumerate(sim.per_seed())]
    by_n: dict[int, list[int]] = {}
    for i, (_, _, v) in enumerate(slots):
        if v is not None and v.size >= 3 and float(v.std()) > 0:
            by_n.setdefault(v.size, []).append(i)
    cells = [idx for idx in by_n.values() if len(idx) > 1]
    for idx in cells:
        r = np.corrcoef(np.stack([slots[i][2] for i in idx]))
        for which, corr in ((0, r), (1, r * r)):          # normals: rho; the chi-square draws: rho^2 (see docstring)
            mix = _mixing(corr)
            for j in range(2):
                if which == 0:
                    e = np.stack([slots[i][0].z[slots[i][1], j] for i in idx])
                    for row, i in zip(mix @ e, idx):
                        slots[i][0].z[slots[i][1], j] = row
                else:
                    e = sps.norm.ppf(np.stack([slots[i][0].u[slots[i][1], j] for i in idx]))
                    for row, i in zip(sps.norm.cdf(mix @ e), idx):
                        slots[i][0].u[slots[i][1], j] = row
    return cells


def rate_shifts(sims: Sequence[_Sim], seed: int, n_sim: int) -> None:
    """Set each simulated measurement's ``shift``: δ's move under a fresh rate choice of every tuned arm it carries
    in ``rates`` (see "A fresh rate choice" in the module docstring)."""
    entries: dict[str, Mapping[str, Any]] = {}
    for sim in sims:
        for e in sim.m.get("rates") or ():
            entries.setdefault(str(e["key"]), e)
    if not entries:
        return
    rng = np.random.default_rng((int(seed), 3))
    draws: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
    for key in sorted(entries):
        e = entries[key]
        choice = np.asarray(e["choice"], float)
        R, n_t, sd, df = choice.size, max(int(e["n_tuning"]), 1), float(e["sd"]), float(e["df"])
        z, z_fresh, u = rng.standard_normal((R, n_sim)), rng.standard_normal((R, n_sim)), rng.random(n_sim)
        live = np.isfinite(choice)
        sigma = sd * np.sqrt(df / np.maximum(sps.chi2.ppf(u, df), 1e-300)) if df > 0 and sd > 0 else np.zeros(n_sim)
        mu = np.where(live[:, None], np.nan_to_num(choice, posinf=0.0)[:, None] + sigma * z / math.sqrt(n_t), np.inf)
        fresh = mu + sigma * z_fresh / math.sqrt(n_t)
        # the lowest fresh mean wins; a tie goes to the lower rate, as ``choose_rate`` breaks it
        pick = np.argmin(fresh, axis=0)
        draws[key] = (pick, z, int(np.argmin(np.abs(np.asarray(e["lrs"], float) - float(e["chosen"])))))
    cols = np.arange(n_sim)
    for sim in sims:
        shift = np.zeros(n_sim)
        for e in sim.m.get("rates") or ():
            pick, z, at = draws[str(e["key"])]
            value = np.asarray(e["value"], float)
            n_t = max(int(e["n_tuning"]), 1)
            moved = (value[pick] - value[at]) + float(e["value_sd"]) * (z[pick, cols] - z[at, cols]) / math.sqrt(n_t)
            shift += float(e["sign"]) * np.where(np.isfinite(moved), moved, 0.0)
        if sim.m.get("rates"):
            sim.shift = shift


def _mixing(corr: np.ndarray) -> np.ndarray:
    """A lower-triangular L with L L^T = corr (a correlation matrix, possibly singular: more arms than seeds) and
    unit rows, so that L e has unit variances and the first row of L e is e's first row."""
    k = corr.shape[0]
    chol = np.linalg.cholesky(corr + 1e-9 * np.eye(k))
    return chol / np.linalg.norm(chol, axis=1, keepdims=True)


def _scaled(n: int, scale: float) -> int:
    return int(min(MAX_SEEDS, max(2, round(n * scale))))


def _simulated_p(members: Sequence[_Member], sims: Sequence[Sequence[_Sim]], scale: float,
                 predictive: bool | None = None) -> tuple[list[np.ndarray], list[np.ndarray]]:
    sup, ref = [], []
    for mem, mem_sims in zip(members, sims):
        if mem.untestable:            # an untestable criterion stays inconclusive in every simulated run
            n = mem_sims[0].n_sim if mem_sims else N_SIM
            sup.append(np.ones((n, len(mem.stats))))
            ref.append(np.ones((n, len(mem.stats))))
            continue
        ps = [_p_values(*sim.at(scale, predictive), mem.rule, st.exact) for sim, st in zip(mem_sims, mem.stats)]
        sup.append(np.stack([p[0] for p in ps], 1))
        ref.append(np.stack([p[1] for p in ps], 1))
    return sup, ref


def _target_code(outcome: str, rule: Rule, s: Stat) -> int:
    """The outcome a criterion aims at with more seeds: its own if decisive, else where the estimate points."""
    if outcome != INCONCLUSIVE:
        return _CODE[outcome]
    inside = (rule.lo is None or s.delta > rule.lo) and (rule.hi is None or s.delta < rule.hi)
    return 2 if inside else 0


def judge_firmness(members: Sequence[_Member], out: list[dict[str, Any]], exact_codes: list[int], n_unrecorded: int,
                   verdict: int, alpha: float, *, seed: int = 0, n_sim: int | None = None, predictive: bool = True,
                   search_seeds: bool = True, shared: bool = True) -> Judged:
    """Firmness of every statistical criterion and of the claim, from one family simulation per seed count.

    ``decision.judge`` calls it on the family it decided: its members (in criterion order), the derived fields
    ``out`` (filled in here: firmness, firmness_reason, seeds_for_firm), the codes of the counted exact and
    unmeasured criteria, the count of counted criteria never recorded and the verdict code. The simulated seed
    sets (``n_sim``, default ``N_SIM``) are drawn from ``numpy.random.default_rng(seed)``, member by member, and
    measurements on the same seeds share them (``share_draws``; ``shared=False``: every measurement independent,
    the rule before issue 38, kept to show what it misses)."""
    rng = np.random.default_rng(seed)
    n_sim = N_SIM if n_sim is None else n_sim
    sims = [[_Sim(m, rng, n_sim, predictive) for m in mem.measurements] for mem in members]
    if shared:
        share_draws([sim for mem_sims in sims for sim in mem_sims])
    rate_shifts([sim for mem_sims in sims for sim in mem_sims], seed, n_sim)
    for mem in members:
        if mem.untestable:
            out[mem.index]["firmness_reason"] = f"not simulated: {mem.untestable}"
        elif mem.exact_point:
            out[mem.index]["firmness_reason"] = "an exact point (every replicate identical): nothing to simulate"
    live = [mem for mem in members if not mem.untestable and not mem.exact_point]
    counted = [j for j, mem in enumerate(members) if mem.counts]
    statistical = [j for j in counted if not members[j].exact_point]
    n0 = min((s.n for mem in members if mem.counts for s in mem.stats), default=None)
    n0_all = {mem.index: max(s.n for s in mem.stats) for mem in members}

    def simulate(scale: float, predictive: bool | None = None):
        sup, ref = _simulated_p(members, sims, scale, predictive)
        codes, _, _ = _decide_family(members, sup, ref, alpha)
        counted_codes = [codes[j] for j in counted]
        if exact_codes:
            counted_codes += [np.full(len(codes[0]), c) for c in exact_codes]
        v = _verdict_codes(np.stack(counted_codes, 1) if counted_codes else np.zeros((len(codes[0]) if codes else 0, 0)),
                           n_unrecorded) if codes else np.array([verdict])
        return codes, v

    if members:
        codes, v = simulate(1.0)
        for j, mem in enumerate(members):
            if mem in live:
                out[mem.index]["firmness"] = float(np.mean(codes[j] == _CODE[out[mem.index]["outcome"]]))
    # seeds for firm, per criterion and for the claim, over one search of seed counts
    wants = {mem.index: _target_code(out[mem.index]["outcome"], mem.rule, out[mem.index]["deciding_stat"])
             for mem in live}
    need: dict[int, int | None] = {i: None for i in wants}
    pending = {mem.index for mem in live if out[mem.index]["firmness"] < FIRM_TARGET
               or out[mem.index]["outcome"] == INCONCLUSIVE}
    wants_or_own = {**{mem.index: _CODE[out[mem.index]["outcome"]] for mem in members if mem.exact_point}, **wants}
    claim_target = int(_verdict_codes(np.array([[wants_or_own.get(mem.index, 1) for mem in members if mem.counts]
                                                 + exact_codes]), n_unrecorded)[0]) if (counted or exact_codes) else 1
    untestable_counted = [mem for mem in members if mem.counts and mem.untestable]
    claim_firm: float | None = None
    reason = ""
    if not counted and not exact_codes and not n_unrecorded:
        reason = "nothing counted"
    elif not statistical:
        reason = ((("deterministic checks and exact points only" if len(statistical) < len(counted) else
                    "deterministic checks only") + ": nothing to simulate") if not n_unrecorded
                  else "a criterion never recorded")
    elif verdict == 1 and (untestable_counted or n_unrecorded or 1 in exact_codes):
        reason = ("the verdict rests on a criterion that cannot be decided from its numbers ("
                  + "; ".join(mem.untestable for mem in untestable_counted) + ")" if untestable_counted
                  else "the verdict rests on a criterion that was not measured or never recorded")
    else:
        claim_firm = float(np.mean(v == verdict))
    claim_need = None
    claim_pending = claim_firm is not None and (claim_firm < FIRM_TARGET or verdict == 1)
    if search_seeds and (pending or claim_pending):
        for n in _SEARCH_GRID:
            if not pending and not claim_pending:
                break
            scale_claim = n / n0 if n0 else None
            # one simulation per seed count, scaled on the claim's base count
            if scale_claim is None or n <= n0:
                continue
            codes, v = simulate(scale_claim, predictive=False)     # planning: the observed effect as the truth
            for j, mem in enumerate(members):
                i = mem.index
                if i in pending and n > n0_all[i] and np.mean(codes[j] == wants[i]) >= FIRM_TARGET:
                    need[i] = int(round(n0_all[i] * scale_claim))
                    pending.discard(i)
            if claim_pending and np.mean(v == claim_target) >= FIRM_TARGET:
                claim_need, claim_pending = n, False
    for i, n in need.items():
        out[i]["seeds_for_firm"] = n
    return Judged(out, verdict, claim_firm, claim_need, n0, reason)
