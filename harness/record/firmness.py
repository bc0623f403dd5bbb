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
checked in tests/record/test_firmness.py on synthetic claims and, on this suite's own criteria, by
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
(``tests/record/test_firmness.py``) it is calibrated where independent draws are not (three criteria sharing an
arm), and where the truth is independent runs on the same seeds the spurious ρ of three seeds costs nothing
overall (Brier score 0.091 against 0.096 with independent draws; 0.081 against 0.081 at five seeds).

**A fresh rate choice** (issue 47, mechanism 3; issue 54, item 5). A tuned arm's rate was chosen on tuning seeds,
and a fresh run tunes again: it may choose another rate of the grid, and the arm's evaluation then moves by what that
rate gives. A measurement that carries ``rates`` (``decision.rate_choice``, per tuned arm) has the choice simulated
(``rate_shifts``; one draw per arm ``key``, shared by every measurement that reads it, from a generator of its own,
so a claim without ``rates`` is simulated exactly as before). The model, per arm: a tuning mean at rate r is its
true mean + B + e_r, B the tuning seeds' effect shared by every rate (share ``rho`` of the seed-to-seed variance),
e_r its own; the evaluation seeds' mean at the chosen rate c is its true mean + noise over ``n_eval`` seeds.

* scale: the choosing quantity's log where the record carries ``log_sd`` (a loss: its spread scales with it, so one
  SD fits the grid there), else the raw scale with the pooled ``sd``. No per-rate SD: with one tuning seed only the
  chosen rate has a spread (its evaluation seeds), and with two a per-rate SD has 1 df; the pooled log SD stands;
* the shared effect B cancels from every difference of rates, so a fresh choice moves only by the rates' own noise
  ((1 - rho) of the variance). ``rho`` is estimated from two tuning seeds up (``tuning.rate_choice_of``); with one
  tuning seed the record cannot support it and it is 0 (independent rates: the cautious reading);
* the chosen rate's mean is its evaluation seeds' (``eval_choice`` / ``eval_log_choice``): the tuning seed's luck
  there (its mean less the evaluation's) is removed in the part that is that rate's own, not the shared B (a
  normal given that difference). A record without it (before issue 54) keeps the tuning means' difference;
* a fresh choice on an end of the recorded grid is read at that end's value. A real run would extend the grid
  past it while extensions are left, at rates the record lacks, so neither an invalid run nor a move past the end
  can be simulated honestly; the share of such runs is kept (``_Sim.edge``) but decides nothing;
* the measured quantity moves by its true difference between the fresh and the observed rate, under the same model
  with the same normals (a rate lucky in the choosing quantity is lucky in the measured one), on its raw scale with
  ``value_sd`` and ``eval_value``.

``seeds_for_firm`` plans over both seed sets: first evaluation seeds at this run's tuning seeds, then, where that
does not reach the target, more tuning seeds too (2 ... 16; the plug-in simulation, every unknown at its estimate,
the fresh choice over that many tuning seeds); each criterion gets ``tuning_seeds_for_firm`` (the tuning seeds at
which ``seeds_for_firm`` evaluation seeds reach the target; None where it carries no rates or nothing does) and
``firm_aims_at`` (the outcome the plan aims at: its own, or for an inconclusive one where its estimate points); the
claim's ``Judged`` carries both as attributes (its verdict: supported / refuted / inconclusive).

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

from harness.record.family import (_CODE, _OUTCOME, INCONCLUSIVE, Judged, Rule, Stat, _decide_family, _Member,
                                   _p_values, _verdict_codes, stat)

FRAGILE_BELOW = 0.8                 # firmness under this gets a visible mark in the report and terminal
FIRM_TARGET = 0.9                   # seeds_for_firm: the count at which the outcome reaches this probability
MAX_SEEDS = 200
N_SIM = 2000                        # simulated seed sets per firmness estimate (Monte Carlo s.e. <= 0.011)
_SEARCH_GRID = tuple(range(2, 13)) + (15, 20, 25, 30, 40, 50, 60, 80, 100, 130, 160, 200)
_TUNING_GRID = (2, 3, 4, 6, 8, 12, 16)   # tuning seeds tried by the plan once evaluation seeds alone do not firm it
_VERDICT_AIM = {2: "supported", 1: "inconclusive", 0: "refuted"}


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
        self.edge: np.ndarray | None = None       # runs whose fresh choice of an arm lands on its grid's end

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


def _rate_scale(e: Mapping[str, Any]) -> tuple[np.ndarray, float, float, float | None]:
    """(the grid's tuning means of the choosing quantity, its SD, df, the evaluation seeds' mean) on the scale the
    record supports: the log where it carries ``log_sd`` (a positive loss), else the raw scale it always carries.
    A diverged rate stays inf (never chosen)."""
    choice = np.asarray(e["choice"], float)
    if e.get("log_sd") is not None and np.all(choice[np.isfinite(choice)] > 0):
        with np.errstate(divide="ignore"):
            y = np.where(np.isfinite(choice), np.log(np.where(np.isfinite(choice), choice, 1.0)), np.inf)
        return y, float(e["log_sd"]), float(e.get("log_df", e["df"])), e.get("eval_log_choice")
    return choice, float(e["sd"]), float(e["df"]), e.get("eval_choice")


def _true_moves(y: np.ndarray, at: int, y_eval: float | None, sigma: np.ndarray, n_t: int, n_e: int, rho: float,
                z: np.ndarray, z_x: np.ndarray, predictive: bool) -> np.ndarray:
    """(rates, n_sim): each grid rate's true mean less the chosen rate's (0 at the chosen rate), given the tuning
    means ``y`` over ``n_t`` seeds, the evaluation seeds' mean ``y_eval`` over ``n_e`` at the chosen rate (None: not
    recorded), the seed-to-seed SD ``sigma`` (per simulated run) and the tuning seed's shared share ``rho``.

    The model: a tuning mean is true mean + B + e_r, B the tuning seeds' effect shared by every rate (variance
    rho sigma^2 / n_t), e_r its own (1 - rho) sigma^2 / n_t; the evaluation mean is the chosen rate's true mean + eta
    (sigma^2 / n_e). A difference of two rates' tuning means loses B. The chosen rate's tuning mean less its
    evaluation mean, d = B + e_c - eta, says how lucky the tuning seed was there; the part of that luck that is the
    chosen rate's own (and so is not in the other rates) is removed: B - eta given d is a normal with mean
    k d, k = (vB + v_eta) / (vB + vE + v_eta). ``predictive``: draw every unknown (``z``, ``z_x``); else (planning)
    take each at its mean."""
    v_e = (1.0 - rho) * sigma ** 2 / n_t
    eps = np.sqrt(v_e) * z if predictive else np.zeros_like(z)
    if y_eval is None:
        d = (y[:, None] - y[at]) - eps + eps[at]
    else:
        v_b, v_eta = rho * sigma ** 2 / n_t, sigma ** 2 / max(n_e, 1)
        total = np.maximum(v_b + v_e + v_eta, 1e-300)
        x = (v_b + v_eta) / total * (y[at] - float(y_eval))
        if predictive:
            x = x + np.sqrt((v_b + v_eta) * v_e / total) * z_x
        d = y[:, None] - float(y_eval) - x - eps
    d = np.where(np.isfinite(y)[:, None], d, np.inf)
    d[at] = 0.0
    return d


def rate_shifts(sims: Sequence[_Sim], seed: int, n_sim: int, *, n_tuning: int | None = None,
                predictive: bool = True) -> bool:
    """Set each simulated measurement's ``shift`` (δ's move under a fresh rate choice of every tuned arm it carries
    in ``rates``) and ``edge`` (the runs where a fresh choice of one of its arms lands on an end of that arm's grid:
    the comparison is invalid there, as a real run's would be). ``n_tuning``: the fresh run's tuning seeds (None: as
    many as this run's); ``predictive`` False: the plug-in (planning) simulation, every unknown at its estimate. The
    rule and what the record supports are in the module docstring ("A fresh rate choice"). Returns whether any
    measurement carries rates."""
    entries: dict[str, Mapping[str, Any]] = {}
    for sim in sims:
        for e in sim.m.get("rates") or ():
            entries.setdefault(str(e["key"]), e)
    if not entries:
        return False
    rng = np.random.default_rng((int(seed), 3))
    draws: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]] = {}
    for key in sorted(entries):
        e = entries[key]
        y, sd, df, y_eval = _rate_scale(e)
        R, n_t = y.size, max(int(e["n_tuning"]), 1)
        fresh_t = n_t if n_tuning is None else max(int(n_tuning), 1)
        rho = min(max(float(e.get("rho") or 0.0), 0.0), 1.0)
        n_e = int(e.get("n_eval") or (int(e["df"]) + 1 if n_t == 1 else 1))
        z, z_fresh, u, z_x = (rng.standard_normal((R, n_sim)), rng.standard_normal((R, n_sim)), rng.random(n_sim),
                              rng.standard_normal(n_sim))
        if df > 0 and sd > 0:
            ratio = np.sqrt(df / np.maximum(sps.chi2.ppf(u, df), 1e-300)) if predictive else np.ones(n_sim)
        else:
            ratio = np.zeros(n_sim)
        at = int(np.argmin(np.abs(np.asarray(e["lrs"], float) - float(e["chosen"]))))
        moves = _true_moves(y, at, y_eval, sd * ratio, n_t, n_e, rho, z, z_x, predictive)
        fresh = moves + np.sqrt((1.0 - rho) / fresh_t) * sd * ratio * z_fresh
        # the lowest fresh mean wins; a tie goes to the lower rate, as ``choose_rate`` breaks it
        pick = np.argmin(fresh, axis=0)
        draws[key] = (pick, (pick == 0) | (pick == R - 1), z, z_x, ratio, predictive)
    cols = np.arange(n_sim)
    for sim in sims:
        if not sim.m.get("rates"):
            continue
        shift, edge = np.zeros(n_sim), np.zeros(n_sim, bool)
        for e in sim.m["rates"]:
            pick, at_edge, z, z_x, ratio, pred = draws[str(e["key"])]
            value = np.asarray(e["value"], float)
            n_t = max(int(e["n_tuning"]), 1)
            rho = min(max(float(e.get("rho") or 0.0), 0.0), 1.0)
            n_e = int(e.get("n_eval") or (int(e["df"]) + 1 if n_t == 1 else 1))
            at = int(np.argmin(np.abs(np.asarray(e["lrs"], float) - float(e["chosen"]))))
            # the measured quantity's move, with the choice's very normals (a rate lucky in one is lucky in both)
            v = np.where(np.isfinite(value), value, np.nan)
            moves = _true_moves(np.nan_to_num(v), at, e.get("eval_value"), float(e["value_sd"]) * ratio, n_t, n_e,
                                rho, z, z_x, pred)
            moved = np.where(np.isfinite(v)[pick], moves[pick, cols], np.nan)
            shift += float(e["sign"]) * np.where(np.isfinite(moved), moved, 0.0)
            edge |= at_edge
        sim.shift, sim.edge = shift, edge
    return True


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
    # planning over both seed sets (issue 54): evaluation seeds at this run's tuning seeds first, then, where the
    # noise of a fresh rate choice is what keeps the outcome short of the target, more tuning seeds too
    flat = [sim for mem_sims in sims for sim in mem_sims]
    own_t = {mem.index: max((int(e["n_tuning"]) for m in mem.measurements for e in m.get("rates") or ()), default=None)
             for mem in members}
    n_t0 = max((t for t in own_t.values() if t is not None), default=None)
    tuning_need: dict[int, int | None] = {}
    claim_tuning = None
    if search_seeds and (pending or claim_pending):
        plans = [None] + ([t for t in _TUNING_GRID if t > n_t0] if n_t0 is not None else [])
        for t in plans:
            if not pending and not claim_pending:
                break
            if n_t0 is not None:
                rate_shifts(flat, seed, n_sim, n_tuning=t, predictive=False)
            grid = [n for n in _SEARCH_GRID if n > (n0 or 0)] if t is None else \
                sorted({n0 or 0} | {n for n in _SEARCH_GRID if n > (n0 or 0)})
            for n in grid:
                if not pending and not claim_pending:
                    break
                scale_claim = n / n0 if n0 else None
                # one simulation per seed count, scaled on the claim's base count
                if scale_claim is None:
                    continue
                codes, v = simulate(scale_claim, predictive=False)     # planning: the observed effect as the truth
                for j, mem in enumerate(members):
                    i = mem.index
                    if i in pending and (n > n0_all[i] or t is not None) and \
                            np.mean(codes[j] == wants[i]) >= FIRM_TARGET:
                        need[i] = int(round(n0_all[i] * scale_claim))
                        tuning_need[i] = t if t is not None else own_t[i]
                        pending.discard(i)
                if claim_pending and np.mean(v == claim_target) >= FIRM_TARGET:
                    claim_need, claim_tuning, claim_pending = n, (t if t is not None else n_t0), False
    for i, n in need.items():
        out[i]["seeds_for_firm"] = n
        out[i]["tuning_seeds_for_firm"] = tuning_need.get(i)
        out[i]["firm_aims_at"] = _OUTCOME[wants[i]]
    judged = Judged(out, verdict, claim_firm, claim_need, n0, reason)
    # the claim's plan beside ``seeds_for_firm`` (family.Judged has no field for them yet: plain attributes)
    judged.tuning_seeds_for_firm = claim_tuning if claim_need is not None else None
    judged.firm_aims_at = _VERDICT_AIM[claim_target]
    return judged
