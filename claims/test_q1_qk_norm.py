"""Q1: QK-norm against 1/sqrt(d_k). Does QK-norm fix the problem the scaling fixes, and does the scaling still
earn its place beside it? (NOTE-011, open questions; issues 11, 38.5.)

**What is compared.** The QK-norm variants modern models use, each with and without the 1/sqrt(d_k) scale, every
other switch of ``ModelConfig`` equal (one encoder layer on key-value lookup, ``harness.study.sweeps``):

* ``l2``: Henry et al. 2020's QKNorm (``qk_norm="l2"``): q and k l2-normalised, the cosine logit multiplied by a
  learned per-head gain g, started at their g0 = log2(L^2 - L) (``model.henry_gain_init``, L the task's sequence
  length), learnt as log g (below). The scaled arm keeps that g0, so the two arms differ in the scale alone: at
  init its logits are g0 cos / sqrt(d_k), and the gain must grow to undo the scale;
* ``rmsnorm``: RMSNorm over the head dimension of q and of k with learned per-dimension gains started at 1
  (``qk_norm="rmsnorm"``; Gemma 3, Qwen3, OLMo 2 over the whole projection), which all three use *with* the scale.

**Why LayerNorm with gain 1 no longer counts.** Issue 38 (finding 5): the previous counted arm, LayerNorm on q and
k with a per-head gain started at 1, has Var(q.k) = d_k at init by construction, so its logits without the scale
are sqrt(d_k) times those with it, and "dropping the scale hurts" was built into the design; no model we know of
uses that recipe. It stays as a *reported* comparison, decided alone. RMSNorm at gain 1 has the same Var(q.k) ~ d_k
at init (``tests/model``): its counted criterion asks whether learned per-dimension gains at each arm's own tuned
rate recover what the missing scale costs. l2 is the opposite case: Var(cos) ~ 1/d_k, so the scale shrinks logits
that are already small. Whether each variant leaves the d_k growth the scale removes (the first half of the
question: "is it fixing the same problem?") is measured at init and reported: the per-seed log-log slope of the
unscaled arm's logit std against d_k, predicted 0.5 for rmsnorm and layernorm, -0.5 for l2 (identities, never
counted: issue 38's mechanism 1).

**The l2 gain, learnt as log g** (issue 47, finding 4). Learnt as g itself, Adam moves g by about the rate per step
whatever its size, so the scaled arm, which needs g to grow sqrt(d_k) = 8 times (from 6.2 to ~49) to reach the
unscaled arm's logits, could not (its max |logit| over training stayed near 1.5, against 6-7 without the scale), and
a "no" would measure how fast Adam grows a scalar, not the scale. Learnt as log g
(``ModelConfig.qk_norm_gain_param="log"``), a step changes g by a factor, so g can grow 8 times in ln 8 / rate steps
(~70-210 at the rates tuned), and the scale becomes exactly a shift of log g's start: with the scale, started at g,
is without it, started at g / sqrt(d_k), in logits and in every gradient (``tests/model/test_attention.py``). The l2
comparison then asks whether l2 QK-norm's logits are better started at g0 / sqrt(d_k) or at g0 — which is what "does
the scaling earn its place alongside it" means for a gain that learns its own scale. Only l2's gain changes; rmsnorm
and layernorm, and the default model of every other claim, keep the default parametrisation (their numbers do not
move).

**The l2 control** (``l2_control_scale_earns_place``, reported). A comparison that can only say "no" shows nothing.
The control asks the same question of l2 started at g0 * sqrt(d_k) (without the scale its logits start sqrt(d_k)
times Henry's range; with it, they start at Henry's): its arm with the scale *is* the l2 arm without it (the shift
above; up to floating-point rounding, which training amplifies a little), so it costs one arm (``CONTROL_ARM``), and
it is expected to answer yes. It is also the mirror of ``scale_earns_place_l2``'s falsifier: under
``scale_inverted`` the l2 arm "with the scale" multiplies by sqrt(d_k), which is the control's arm, so the
falsifier's δ is minus the control's: a control that passes (its interval above the margin) puts the falsifier's
interval below 0, refuted. A "no" for l2 beside a passing control is an answer about Henry's g0, not a comparison
that cannot say yes.

**Tuning.** Each (arm, d_k) trains at its own learning rate (``harness.study.tuning.tuned_sweep``): a grid centred
on the profile's rate, trained on tuning seeds disjoint from the evaluation seeds, the rate with the lowest mean
*validation* loss chosen (the grid extended past an end on the tuning seeds alone, up to the profile's
``extend``); the evaluation seeds then train at that rate and are scored on the test part of the held-out split,
which the choice never read. A rate still at its grid's edge makes its comparison inconclusive (``edge_reason``).

**Criteria** (``CRITERIA``; written before the run; the harness decides, Holm across the counted ones). Per
variant, δ = held-out loss without the scale - with it, at the profile's d_k, paired by seed (the arms of one seed
share its data and initial weights: the scale is not a parameter), each arm at its tuned rate. A diverged run, or
one worse than chance, counts as the chance loss ln(n_values) (Wortsman et al. 2023).

* ``scale_earns_place_l2``, ``scale_earns_place_rmsnorm`` (counted, superiority): δ > the suite's held-out-loss
  margin (``harness.record.margins.HELD_OUT_LOSS``, 0.05 nats: no margin of Q1's own). Each answers for its
  variant (``answers=``): the record gives one answer per variant, each with its firmness (``answers``: 'answered
  yes for rmsnorm (firmness F); answered no for l2 (firmness F)'), and, where they differ, the scope names them. The
  pooled verdict: both passed, 'answered yes' (the scale still earns its place beside QK-norm); either refuted
  (``ANSWER_RULE``: the interval wholly below the margin, so dropping the scale costs less than the smallest gap
  the suite calls one, or nothing, or helps), 'answered no'; otherwise inconclusive at this scale.
* A live foil (issue 38, mechanism 3; ``decision.dead_foil``): the arm without the scale is the foil. If it sits
  at chance, or at the loss floor 0, on every seed and at every rate tuned, the comparison is invalid.

**Answered no by**: at the d_k of the profile, a QK-norm variant whose arm without 1/sqrt(d_k) is, at its own
tuned rate, shown to be worse in held-out loss than the arm with it by less than the margin, or not worse at all.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
import torch

from harness.record import decision, margins
from harness.report.plots import figure_loss_vs_lr, plt
from harness.study import tuning
from harness.study.sweeps import build_sweep_model, probe_softmax_state, summary_table, sweep_task
from model import henry_gain_init

pytestmark = pytest.mark.claim("Q1")   # its runs (d_model 32, its own task) share none of the sweep group's

CLAIM_ID = "Q1"
#: the QK-norm variants, counted first (module docstring); layernorm (gain 1) is reported
VARIANTS = ("l2", "rmsnorm", "layernorm")
#: the live-foil rule's tolerance (``decision.dead_foil``): an arm whose held-out loss is within 0.01 nats of the
#: chance loss (or above it), or of 0, on every seed and at every rate tuned learnt nothing, or has no room left
AT_CHANCE_TOL = 0.01
LOSS_FLOOR = 0.0            # nats: the value is a function of the key and the pairs, so the loss can reach 0
LOSS_COST = decision.superiority(margins.HELD_OUT_LOSS.value, paired=True, reason=margins.HELD_OUT_LOSS.reason)
#: the counted criteria's rule (issue 63, item 6, fixed before the replication): a question answers no as well as
#: yes. "Yes" where the interval lies above the margin; "no" where it lies wholly below it (the scale is shown to
#: earn less than the smallest gap the suite calls one: equivalent within the margin, or worse without it). No gap
#: is left between the two: until then "no" needed δ <= 0, and an interval inside ±0.05 read "inconclusive"
ANSWER_RULE = dataclasses.replace(LOSS_COST, refute_below=LOSS_COST.margin)
_SLOPE = "+-0.1 around the exponent the variance law predicts: a fifth of sqrt(d_k)'s 0.5"


#: l2's per-head gain is learnt as log g (``ModelConfig.qk_norm_gain_param``), so that Adam can grow it by a factor
#: (module docstring, "The l2 gain"); the other variants keep the default parametrisation
L2_GAIN = {"l2": {"qk_norm_gain_param": "log"}}


def arm(variant: str, scaled: bool) -> str:
    """An arm's name: '<variant>_scaled' or '<variant>_unscaled'."""
    return f"{variant}_{'scaled' if scaled else 'unscaled'}"


ARM_ORDER = tuple(arm(v, s) for v in VARIANTS for s in (True, False))
#: the l2 control (module docstring, "The l2 control"): l2 without the scale, its gain started at g0 * sqrt(d_k).
#: With log g learnt, the arm *with* the scale started there is the l2 arm without the scale started at g0 (the
#: scale is a constant shift of log g: ``tests/model``), so the control's comparison is this arm against
#: ``arm("l2", False)``
CONTROL = "l2_gain_sqrt_dk"
CONTROL_ARM = arm(CONTROL, False)


def arms(seq_len: int, d_k: int | None = None) -> dict[str, dict[str, Any]]:
    """The six arms as ModelConfig overrides (module docstring): the scale is 1/sqrt(d_k) set explicitly (a scale
    fault of ``model.faults`` acts on the default only) or none; l2's gain starts at Henry's g0 in both arms. With
    ``d_k``: the l2 control's arm too, its gain started at g0 * sqrt(d_k), without the scale."""
    gain = {"l2": henry_gain_init(seq_len), "rmsnorm": 1.0, "layernorm": 1.0}
    out = {arm(v, s): {"qk_norm": v, "qk_norm_gain_init": gain[v], **L2_GAIN.get(v, {}),
                       **({"scale_exponent": 0.5} if s else {"scale": "none"})}
           for v in VARIANTS for s in (True, False)}
    if d_k is not None:
        out[CONTROL_ARM] = {**out[arm("l2", False)], "qk_norm_gain_init": gain["l2"] * math.sqrt(d_k)}
    return out


#: a reviewer's first objections (harness.record.objections.OBJECTIONS) and how this module meets each; firmness is
#: the harness's
OBJECTIONS = {
    "tuned_lr": ("answered", "each arm at its own rate, chosen by validation loss on tuning seeds disjoint from the "
                 "evaluation seeds (harness.study.tuning); an arm left at its grid's edge makes its comparison "
                 "inconclusive"),
    "ceiling": ("answered", "held-out loss capped at chance, not accuracy; a foil at chance or at the loss floor on "
                "every seed and rate makes its comparison invalid"),
    "selection": ("not applicable", "the arms are fixed by the question (each variant with and without the scale)"),
    "second_task": ("open", "key-value lookup only"),
}

_METRIC = "held-out loss (nats) at each arm's tuned rate, capped at chance"
_INIT_METRIC = "log-log slope of the init logit std (no scale) against d_k"
#: name -> the criterion's declaration (rule, prediction, metric, arms (a, b): δ = mean(a - b), role); what each
#: reads is ``READS``
CRITERIA = {
    "scale_earns_place_l2": dict(
        quote="does the scaling still earn its place alongside it?",
        answers="l2",
        falsified_by=("scale_inverted",),
        rule=ANSWER_RULE, role="counted", arms=(arm("l2", False), arm("l2", True)), metric=_METRIC, better="lower",
        prediction="yes-condition: at d_k={d_k}, l2 QK-norm with a learned gain (Henry et al. 2020) has a higher "
                   "held-out loss without 1/sqrt(d_k) than with it, by more than the margin, each arm at its own "
                   "tuned rate"),
    "scale_earns_place_rmsnorm": dict(
        quote="does the scaling still earn its place alongside it?",
        answers="rmsnorm",
        falsified_by=("scale_inverted",),
        rule=ANSWER_RULE, role="counted", arms=(arm("rmsnorm", False), arm("rmsnorm", True)), metric=_METRIC, better="lower",
        prediction="yes-condition: at d_k={d_k}, RMSNorm QK-norm with learned per-dimension gains (OLMo 2, Gemma 3) "
                   "has a higher held-out loss without 1/sqrt(d_k) than with it, by more than the margin, each arm at "
                   "its own tuned rate"),
    "scale_earns_place_layernorm_gain1": dict(
        rule=LOSS_COST, role="reported", arms=(arm("layernorm", False), arm("layernorm", True)), metric=_METRIC, better="lower",
        prediction="the same for LayerNorm QK-norm with a per-head gain started at 1; expected yes by construction "
                   "(Var(q.k) = d_k at init), which is why it is not counted"),
    "rmsnorm_keeps_dk_growth": dict(
        rule=decision.band(0.4, 0.6, reason=_SLOPE), role="reported", arms=(arm("rmsnorm", False),),
        metric=_INIT_METRIC,
        prediction="RMSNorm at gain 1 leaves the d_k growth that 1/sqrt(d_k) removes: its unscaled init logit std "
                   "grows as d_k^0.5 (per-seed slope over d_k {probe_d_ks})"),
    "layernorm_keeps_dk_growth": dict(
        rule=decision.band(0.4, 0.6, reason=_SLOPE), role="reported", arms=(arm("layernorm", False),),
        metric=_INIT_METRIC,
        prediction="LayerNorm at gain 1 leaves it too: its unscaled init logit std grows as d_k^0.5"),
    "l2_control_scale_earns_place": dict(
        rule=LOSS_COST, role="reported", arms=(CONTROL_ARM, arm("l2", False)), metric=_METRIC, better="lower",
        prediction="the control of scale_earns_place_l2: at d_k={d_k}, l2 QK-norm with its learnt gain started at "
                   "g0*sqrt(d_k) has a higher held-out loss without 1/sqrt(d_k) than with it (the arm with it is "
                   "l2 without it started at g0), by more than the margin; expected yes, so that a 'no' for l2 is "
                   "not a comparison that cannot say yes"),
    "l2_removes_dk_growth": dict(
        rule=decision.band(-0.6, -0.4, reason=_SLOPE), role="reported", arms=(arm("l2", False),),
        metric=_INIT_METRIC,
        prediction="l2 QK-norm removes it, and more: a cosine's std falls as d_k^-0.5, so its unscaled init logit "
                   "std does too"),
}
#: name -> (what it reads: "loss" at the profile's d_k, or the "init" slope; the variant, or ``CONTROL``)
READS = {"scale_earns_place_l2": ("loss", "l2"), "scale_earns_place_rmsnorm": ("loss", "rmsnorm"),
         "l2_control_scale_earns_place": ("loss", CONTROL), "scale_earns_place_layernorm_gain1": ("loss", "layernorm"),
         "rmsnorm_keeps_dk_growth": ("init", "rmsnorm"), "layernorm_keeps_dk_growth": ("init", "layernorm"),
         "l2_removes_dk_growth": ("init", "l2")}


# ================================================================================================ measure
def run_sweep(block: dict[str, Any], seeds: list[int], device: str | torch.device = "cpu",
              progress: Callable[..., Any] | None = None) -> tuning.TunedSweep:
    """The six arms and the l2 control's at the profile's d_k, each at its own rate tuned on the tuning seeds
    (``tuning.tuned_sweep``)."""
    sweep = block["sweep"]
    return tuning.tuned_sweep(arms(sweep_task(sweep).max_len, int(block["d_k"])), [int(block["d_k"])], sweep,
                              seeds, block["tuning"], device, progress)


def measure_init(block: dict[str, Any], seeds: list[int], device: str | torch.device = "cpu") -> pd.DataFrame:
    """One row per (arm, d_k, seed) over ``probe_d_ks``: the logit std of a freshly initialised sweep model on
    ``probe_size`` held-out examples (``probe_softmax_state``; same seed, same weights in every arm)."""
    sweep = block["sweep"]
    task = sweep_task(sweep)
    batch = task.heldout(int(sweep.get("probe_size", 256))).to(device)
    rows = []
    for name, overrides in arms(task.max_len).items():
        for d_k in block["probe_d_ks"]:
            for seed in seeds:
                model = build_sweep_model(sweep, task, int(d_k), overrides, seed, name).to(device)
                state = probe_softmax_state(model, batch, task.tgt_vocab)
                rows.append({"arm": name, "d_k": int(d_k), "seed": int(seed), "logit_std": state["logit_std"],
                             "entropy": state["entropy"]})
    return pd.DataFrame(rows)


# ================================================================================================ decide
def chance_loss(block: dict[str, Any]) -> float:
    """ln(n_classes): the held-out loss of a model that learnt nothing."""
    return -math.log(sweep_task(block["sweep"]).chance)


def capped(s: tuning.TunedSweep, name: str, d_k: int, l0: float) -> np.ndarray:
    """``name``'s held-out loss per evaluation seed at its tuned rate, a diverged or worse-than-chance run at l0."""
    v = s.cell(name, d_k)
    return np.where(np.isfinite(v) & (v < l0), v, l0)


def foil(s: tuning.TunedSweep, variant: str, d_k: int, l0: float) -> str:
    """``decision.dead_foil`` for the arm without the scale: its capped loss on every seed and its tuning seeds'
    mean validation loss at every rate tried."""
    name = arm(variant, False)
    return decision.dead_foil(capped(s, name, d_k, l0), chance=l0, floor=LOSS_FLOOR, tol=AT_CHANCE_TOL,
                              better="lower", tried=s.tuned[(name, int(d_k))].mean_loss, arm=name)


def init_slopes(init: pd.DataFrame, name: str) -> np.ndarray:
    """Per seed: the log-log slope of ``name``'s init logit std against d_k (the seed is the unit)."""
    sel = init[init["arm"] == name]
    return np.array([np.polyfit(np.log(g["d_k"].to_numpy(float)), np.log(g["logit_std"].to_numpy(float)), 1)[0]
                     for _, g in sel.groupby("seed")])


def measurements(name: str, s: tuning.TunedSweep | None, init: pd.DataFrame | None, d_k: int = 0,
                 l0: float = math.inf) -> list[dict[str, Any]]:
    """Criterion ``name``'s measurement (see ``READS``): the paired loss comparison at ``d_k`` (invalid where an
    arm's rate sits at its grid's edge, or where the arm without the scale is a dead foil), or the init slopes."""
    what, variant = READS[name]
    if what == "init":
        return [decision.samples(init_slopes(init, arm(variant, False)), label="init slope")]
    un, sc = arm(variant, False), arm("l2", False) if variant == CONTROL else arm(variant, True)
    cap = lambda v: np.where(np.isfinite(v) & (v < l0), v, l0)  # noqa: E731
    return [decision.samples(capped(s, un, d_k, l0), capped(s, sc, d_k, l0), paired=True, label=f"d_k={d_k}",
                             invalid=s.invalid((un, d_k), (sc, d_k)), foil_dead=foil(s, variant, d_k, l0),
                             rates=[s.rates(un, d_k, transform=cap), s.rates(sc, d_k, -1.0, transform=cap)])]


# ================================================================================================ render
def figure_loss_at_tuned_rate(s: tuning.TunedSweep, d_k: int, l0: float):
    """Does dropping 1/sqrt(d_k) cost held-out loss under each QK-norm? Each arm at its tuned rate; dots: seeds."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, name in enumerate(ARM_ORDER):
        v = capped(s, name, d_k, l0)
        ax.bar(i, v.mean(), color="C0" if name.endswith("_scaled") else "C1", alpha=0.6)
        ax.scatter(np.full(len(v), i), v, s=12, color="k", zorder=3)
    ax.axhline(l0, color="k", lw=0.8, ls=":")
    ax.set_xticks(range(len(ARM_ORDER)), [f"{n}\nlr {s.tuned[(n, d_k)].lr:.2g}" for n in ARM_ORDER], fontsize=7)
    ax.set_ylabel("held-out loss (nats), capped at chance")
    ax.set_title(f"Does dropping 1/sqrt(d_k) cost held-out loss under each QK-norm? (d_k = {d_k}; dotted: chance)",
                 fontsize=9)
    fig.tight_layout()
    return fig


def figure_init_logit_std(init: pd.DataFrame):
    """Does QK-norm leave the d_k growth of the logits that 1/sqrt(d_k) removes? Init logit std against d_k."""
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for name in ARM_ORDER:
        m = init[init["arm"] == name].groupby("d_k")["logit_std"].mean()
        ax.plot(m.index, m.values, "o-" if name.endswith("_unscaled") else "s--", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("d_k")
    ax.set_ylabel("attention logit std at init")
    ax.set_title("Does QK-norm leave the d_k growth that 1/sqrt(d_k) removes?", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ================================================================================================ the test
# ========================================================================= a model on trial (issue 40)
#: attention-logit growth and entropy collapse after a short training at the rate and at rate_high x it (Wortsman
#: et al. 2023 and Zhai et al. 2023: what QK-norm is introduced to prevent)
COLLAPSED = 0.1
MODEL_CRITERIA = {
    "model_no_entropy_collapse": dict(
        role="reported", rule=decision.band(COLLAPSED, None, level=True, reason="a head whose mean entropy is under "
                                            "10% of ln(allowed keys) has collapsed onto single keys"),
        metric="the lowest entropy / ln(allowed keys) over every (call, head), per seed, after training at "
               "{rate_high:g}x the rate",
        prediction="after {steps} steps of next-token training at {rate_high:g}x the rate no head of the model "
                   "collapses: every head keeps a mean entropy above 10% of ln(allowed keys)"),
}


def model_trial(ev, trial, block: dict, seeds, progress=lambda msg, force=False: None) -> None:
    """Q1 on a user's model (``--model``): logit growth and entropy after a short training, at the rate and at
    ``rate_high`` x it (reported: the rates are not tuned)."""
    from harness.trial import model_reads as trials

    high = block["train"]["rate_high"]
    crit = ev.declare(MODEL_CRITERIA, steps=block["train"]["steps"], rate_high=high)["model_no_entropy_collapse"]
    ev.counts_nothing("on a model on trial Q1 reads entropy collapse after a short training at untuned rates: "
                      "reported, never counted")
    progress = trials.trained_from_init(ev, trial, seeds, "Q1's logit growth and entropy", progress)
    found = trials.read_trained(crit, trial, seeds, block, progress)
    if found is None:
        return
    (low, low_losses), (top, top_losses) = found, trials.read_trained(crit, trial, seeds, block, progress, high)
    worst = top.groupby("seed").entropy_ratio.min()
    crit.sample(worst.to_numpy(), detail=(
        f"lowest head entropy / ln n: {low.groupby('seed').entropy_ratio.min().mean():.3f} at 1x, "
        f"{worst.mean():.3f} at {high:g}x; largest logit std {low.logit_std.max():.3g} at 1x, "
        f"{top.logit_std.max():.3g} at {high:g}x"))
    ev.metric("model_entropy_min/high_rate", float(worst.mean()))
    ev.metric("model_logit_std_max/high_rate", float(top.logit_std.max()))
    ev.metric("model_logit_std_max/rate", float(low.logit_std.max()))
    ev.table("model_attention_after_training", pd.concat([low.assign(rate=1.0), top.assign(rate=high)]))
    ev.note(trials.loss_note(low_losses, 1.0, block, trial) + "; "
            + trials.loss_note(top_losses, high, block, trial))
    ev.headline("model_entropy_min/high_rate")

def test_q1_qk_norm(evidence, profile, device, seeds, progress, fast, claim_threads, model_on_trial):
    if fast:
        pytest.skip("Q1 has no fast criteria: no fault of model.faults is Q1's to catch (issue 10)")
    block = profile.claim(CLAIM_ID)
    sweep, d_k = block["sweep"], int(block["d_k"])
    ev = evidence
    ev.claim(CLAIM_ID, title="QK-norm against 1/sqrt(d_k): does the scaling still earn its place?",
             statement="Modern models normalise queries and keys explicitly (QK-norm) \u2014 is that fixing the "
                       "same problem the scaling was fixing, and does the scaling still earn its place alongside it?",
             strength="open question", kind="question",
             limitation="The 1/\u221ad_k scaling assumes unit-variance, independent components. Here: a one-layer "
                        f"encoder (d_model {sweep['model']['d_model']}) on key-value lookup at d_k {d_k}, "
                        f"{sweep['train']['steps']} Adam steps at each arm's tuned rate; two QK-norm variants "
                        "(l2 with Henry's gain, RMSNorm with per-dimension gains), not a language model at scale.")
    ev.answer_objections(OBJECTIONS)
    if model_on_trial is not None:
        return model_trial(ev, model_on_trial, profile.claim("model_trial"), seeds, progress)
    t = block["tuning"]
    how = (f"d_k {d_k}, {len(seeds)} evaluation seeds; each arm's rate chosen on {t['seeds']} tuning seeds from "
           f"{t['points']} rates over {t['span']:g}x round {sweep['train']['lr']:g} (extended up to {t['extend']} "
           "steps past an end); paired by seed")
    crits = ev.declare(CRITERIA, how={n: how if READS[n][0] == "loss" else
                                      f"init probes at d_k {block['probe_d_ks']}, {len(seeds)} seeds; one log-log "
                                      "slope per seed" for n in CRITERIA},
                       d_k=d_k, probe_d_ks=block["probe_d_ks"])
    for variant in ("l2", "rmsnorm"):
        ev.gate(f"q1_scale_cost/{variant}", direction="both", tolerance=0.4)

    # ---- measure
    init = measure_init(block, seeds, device)
    s = run_sweep(block, seeds, device, progress)
    l0 = chance_loss(block)

    # ---- record
    for name, crit in crits.items():
        ms = measurements(name, s, init, d_k, l0)
        if READS[name][0] == "init":
            detail = f"per seed: {np.round(ms[0]['a'], 3).tolist()}"
        else:
            detail = "; ".join(f"{n} {capped(s, n, d_k, l0).mean():.3g} (lr {s.tuned[(n, d_k)].lr:.3g})"
                               for n in crit.arms)
        crit.measure(ms, detail=detail)
    for variant in VARIANTS:
        cost = capped(s, arm(variant, False), d_k, l0) - capped(s, arm(variant, True), d_k, l0)
        ev.metric(f"q1_scale_cost/{variant}", float(cost.mean()))
    for key, value in tuning.tuned_metrics(CLAIM_ID, s).items():
        ev.metric(key, value)
    for name in (*ARM_ORDER, CONTROL_ARM):
        ev.metric(f"q1_max_logit/{name}", float(s.cell(name, d_k, "logit_absmax_first_k").mean()))
    ev.headline("q1_scale_cost/rmsnorm")
    ev.table("runs", summary_table(s.runs))
    ev.table("tuned_lr", tuning.tuned_table(s.tuned))
    ev.table("init_logit_std", init)
    ev.figure("loss_at_tuned_rate", figure_loss_at_tuned_rate(s, d_k, l0))
    ev.figure("loss_vs_lr_per_arm", figure_loss_vs_lr(s.tuned, "Q1: validation loss against learning rate per arm "
                                                       "(tuning seeds; circled: the chosen rate)"))
    ev.figure("init_logit_std_vs_dk", figure_init_logit_std(init))
    seq_len = sweep_task(sweep).max_len
    ev.note(f"Gains: l2 arms start at Henry et al.'s g0 = log2(L^2 - L) = {henry_gain_init(seq_len):.3g} (L = "
            f"{seq_len}), with or without the scale, learnt as log g; the l2 control ({CONTROL_ARM}) at g0 * "
            f"sqrt(d_k) = {henry_gain_init(seq_len) * math.sqrt(d_k):.3g} without it; rmsnorm's per-dimension gains "
            "and layernorm's per-head gain at 1, learnt as themselves. "
            f"Loss: the final held-out cross-entropy on the test part, capped at chance (ln {round(math.exp(l0))} = "
            f"{l0:.3f}) for diverged or worse-than-chance runs. q1_max_logit/<arm>: max |logit| over training at the "
            "tuned rate, mean over seeds.")
    ev.note("What each fixes: 1/sqrt(d_k) removes the d_k growth of the logits at init (a width effect). RMSNorm and "
            "LayerNorm at gain 1 leave it (Var(q.k) ~ d_k); l2 QK-norm reverses it (Var(cos) ~ 1/d_k) and bounds "
            "|logit| by its gain, so logits grow only through the gain (Wortsman et al.'s instability). The *_keeps_"
            "dk_growth and l2_removes_dk_growth criteria measure the first; the max-logit metrics the second.")
