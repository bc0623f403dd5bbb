"""C3: unscaled dot products saturate the softmax at large d_k (NOTE-011, claim C3, strength moderate).

The paper only "suspects" it ("we suspect that for large values of d_k, the dot products grow large in magnitude,
pushing the softmax function into regions where it has extremely small gradients") and never measured a softmax
gradient. We measure it three ways on one-layer attention models on 16-pair key-value lookup (issue 5):

(a) probe at init over a d_k grid: attention entropy, mean |dL/dlogits| and the fraction of saturated rows
    (max weight > 0.99), unscaled (scale 1) against scaled (d_k^-0.5);
(b) the same gradient magnitude through the first K training steps, at a small and a large d_k;
(c) quality: additive, unscaled dot and scaled dot attention trained at a small and a large d_k.

The mediator is the logit variance d_k * var_q * var_k, not d_k itself, so the logit std is recorded and plotted
beside every result; the probe also runs xavier-initialised unscaled attention at the same fixed d_model, where
var_q shrinks as d_k grows and the d_k trend goes away (reported, not counted).

Scaled and unscaled are set explicitly (``scale_exponent=0.5``, ``scale="none"``), never through the model's
default scale: this module tests the softmax, not the default (R1 does), so a scale fault leaves it unchanged.
"""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from harness import stats, sweeps  # noqa: E402
from harness.training import torch_threads  # noqa: E402
from harness.sweeps import (attention_variant_sweep, build_sweep_model, curves_frame,  # noqa: E402
                            probe_softmax_state, summary_table, sweep_task)

# one xdist worker for every module of the shared sweep (harness.sweeps): its runs train once
pytestmark = [pytest.mark.claim("C3"), pytest.mark.xdist_group(sweeps.XDIST_GROUP)]

UNSCALED = {"scale": "none"}
SCALED = {"scale_exponent": 0.5}
PROBE_VARIANTS = {"unscaled": UNSCALED, "scaled": SCALED}
XAVIER_UNSCALED = {"scale": "none", "init": "xavier"}
SWEEP_VARIANTS = {"additive": {"score": "additive"}, "unscaled": UNSCALED, "scaled": SCALED}
ALPHA = 0.05
# "flat" for the scaled slopes: CI contains 0. A CI that excludes 0 refutes only when the slope is also
# practically large (a log-log slope above this in magnitude: > 7% change per doubling of d_k), the same
# minimum R2's saturation_check uses; a significant but negligible slope leaves the criterion inconclusive.
MIN_PRACTICAL_SLOPE = 0.1
SATURATION_THRESHOLD = 0.99
COLORS = {"additive": "tab:blue", "unscaled": "tab:orange", "scaled": "tab:green", "unscaled_xavier": "tab:red"}


# ----------------------------------------------------------------------------------------------- (a) probe
def measure_saturation_at_init(d_ks, seeds, sweep_budget, probe_size: int, device="cpu",
                               variants=None, progress=None) -> pd.DataFrame:
    """One row per (variant, d_k, seed): the softmax state of a freshly initialised sweep model on held-out
    examples (``harness.sweeps.probe_softmax_state``): logit_std, entropy, saturated_fraction, grad_abs_mean,
    q_var, k_var. Same seed, same weights for every scale variant (the scale is not a parameter)."""
    variants = PROBE_VARIANTS if variants is None else variants
    task = sweep_task(sweep_budget)
    batch = task.heldout(probe_size).to(device)
    rows = []
    for name, overrides in variants.items():
        if progress is not None:
            progress(f"probe at init: {name}, d_k {list(d_ks)}")
        for d_k in d_ks:
            for seed in seeds:
                model = build_sweep_model(sweep_budget, task, d_k, overrides, seed, name).to(device)
                rows.append({"variant": name, "d_k": int(d_k), "seed": int(seed),
                             **probe_softmax_state(model, batch, task.tgt_vocab)})
    return pd.DataFrame(rows)


def probe_slopes(df: pd.DataFrame, variant: str) -> dict[str, stats.SlopeFit]:
    """Slopes against d_k with the seed as the unit (``stats.replicate_slope``: one fit per seed over the d_k grid,
    mean and t interval across seeds; a seed's embeddings are shared by all its d_k points, so pooling them would
    overstate the precision): log-log for entropy and mean |dL/dlogits|, saturated fraction against ln d_k (it
    can be 0)."""
    d = df[df.variant == variant]
    ln_dk = np.log(d.d_k.to_numpy(float))

    def loglog(y: pd.Series) -> stats.SlopeFit:
        # a zero (e.g. dL/dlogits when the weights ignore the logits) has no log: fall back to y against ln d_k,
        # which keeps the sign the criteria read
        if (y > 0).all():
            return stats.replicate_slope(d.d_k, y, d.seed, "loglog")
        return stats.replicate_slope(ln_dk, y, d.seed, "linear")

    return {"entropy": loglog(d.entropy), "grad": loglog(d.grad_abs_mean),
            "saturated": stats.replicate_slope(ln_dk, d.saturated_fraction, d.seed, "linear"),
            "logit_std": loglog(d.logit_std)}


def evaluate_probe(df: pd.DataFrame) -> dict[str, dict]:
    """(a)'s three counted criteria from the probe table."""
    un, sc = probe_slopes(df, "unscaled"), probe_slopes(df, "scaled")
    out = {}
    fall = un["entropy"].hi < 0 and un["grad"].hi < 0
    out["a_unscaled_entropy_and_grad_fall"] = {
        "measured": {"entropy_slope": un["entropy"].slope, "grad_slope": un["grad"].slope},
        "passed": fall, "refuted": un["entropy"].lo > 0 or un["grad"].lo > 0,
        "ci": un["grad"].ci,
        "detail": f"unscaled, log-log against d_k: entropy {un['entropy']}, mean |dL/dlogits| {un['grad']}; "
                  f"logit std {un['logit_std']} (the mediator; 0.5 if var_q, var_k do not depend on d_k)"}
    out["a_unscaled_saturated_rows_rise"] = {
        "measured": un["saturated"].slope, "passed": un["saturated"].lo > 0, "refuted": un["saturated"].hi < 0,
        "ci": un["saturated"].ci,
        "detail": f"fraction of rows with max weight > {SATURATION_THRESHOLD} against ln d_k: {un['saturated']}"}
    flat = {k: fit for k, fit in sc.items() if k in ("entropy", "grad", "saturated")}
    contains = all(fit.contains(0.0) for fit in flat.values())
    big = any(not fit.contains(0.0) and abs(fit.slope) > MIN_PRACTICAL_SLOPE for fit in flat.values())
    out["a_scaled_flat"] = {
        "measured": {k: fit.slope for k, fit in flat.items()}, "passed": contains, "refuted": big,
        "detail": "scaled: " + "; ".join(f"{k} {fit}" for k, fit in flat.items())
                  + f"; logit std {sc['logit_std']}"}
    return out


# ----------------------------------------------------------------------------------- (b) and (c): training
def evaluate_training_grads(sweep: pd.DataFrame, large_dk: int) -> dict:
    """(b): at the large d_k unscaled has smaller mean |dL/dlogits| over the first K steps (one-sided Welch)."""
    at = sweep[sweep.d_k == large_dk]
    un = at[at.variant == "unscaled"].grad_abs_mean_first_k
    sc = at[at.variant == "scaled"].grad_abs_mean_first_k
    t = stats.welch_t(un, sc, alternative="less")
    opposite = stats.welch_t(un, sc, alternative="greater")
    ratio = float(un.mean() / sc.mean())
    return {"measured": ratio, "passed": t.significant(ALPHA), "refuted": opposite.significant(ALPHA),
            "p_value": t.p_value,
            "detail": f"d_k={large_dk}, first {int(at.grad_steps.max())} steps: unscaled {un.mean():.3g} vs scaled "
                      f"{sc.mean():.3g} (ratio {ratio:.3g}); {t}; logit std over those steps: unscaled "
                      f"{at[at.variant == 'unscaled'].logit_std_first_k.mean():.3g}, scaled "
                      f"{at[at.variant == 'scaled'].logit_std_first_k.mean():.3g}"}


def _two_metric_win(at: pd.DataFrame, winner: str, loser: str) -> tuple[bool, bool, float, str, float]:
    """``winner`` beats ``loser`` on final accuracy (higher) AND steps to target (fewer), one-sided Welch each."""
    a = lambda v, col: at[at.variant == v][col]  # noqa: E731
    acc = stats.welch_t(a(winner, "final_accuracy"), a(loser, "final_accuracy"), alternative="greater")
    steps = stats.welch_t(a(winner, "steps_to_target_censored"), a(loser, "steps_to_target_censored"),
                          alternative="less")
    acc_rev = stats.welch_t(a(winner, "final_accuracy"), a(loser, "final_accuracy"), alternative="less")
    passed = acc.significant(ALPHA) and steps.significant(ALPHA)
    reached = {v: int(a(v, "reached_target").sum()) for v in (winner, loser)}
    detail = (f"accuracy {acc.mean_a:.3f} vs {acc.mean_b:.3f}: {acc}; steps to target (censored at the budget; "
              f"reached {reached[winner]}/{reached[loser]} seeds) {steps.mean_a:.0f} vs {steps.mean_b:.0f}: {steps}; "
              f"logit std at init {a(winner, 'logit_std_init').mean():.3g} vs {a(loser, 'logit_std_init').mean():.3g}")
    return passed, acc_rev.significant(ALPHA), acc.diff, detail, max(acc.p_value, steps.p_value)


def evaluate_quality(sweep: pd.DataFrame, small_dk: int, large_dk: int) -> dict[str, dict]:
    """(c): at the small d_k additive ~ unscaled (two-sided Welch not significant; size reported); at the large
    d_k additive and scaled each beat unscaled on accuracy and on steps to target."""
    small = sweep[sweep.d_k == small_dk]
    ad, un = (small[small.variant == v].final_accuracy for v in ("additive", "unscaled"))
    t = stats.welch_t(ad, un, alternative="two-sided")
    out = {"c_small_dk_additive_similar_to_unscaled": {
        "measured": t.diff, "passed": not t.significant(ALPHA), "refuted": t.significant(ALPHA),
        "p_value": None if math.isnan(t.p_value) else t.p_value, "ci": t.ci,
        "detail": f"d_k={small_dk}: additive {t.mean_a:.3f} vs unscaled {t.mean_b:.3f}, difference {t.diff:+.3f} "
                  f"(95% CI {t.ci[0]:+.3f}..{t.ci[1]:+.3f}, Cohen's d {t.effect_size:.2f}); {t}. Not significant "
                  f"with n={t.n_a} per arm is weak evidence of similarity: read the CI"}}
    large = sweep[sweep.d_k == large_dk]
    for winner in ("additive", "scaled"):
        passed, rev, diff, detail, p = _two_metric_win(large, winner, "unscaled")
        out[f"c_large_dk_{winner}_beats_unscaled"] = {"measured": diff, "passed": passed, "refuted": rev,
                                                      "p_value": p, "detail": f"d_k={large_dk}: {detail}"}
    return out


def quality_by_dk(sweep: pd.DataFrame) -> pd.DataFrame:
    """Per d_k: additive and scaled minus unscaled (final accuracy), with two-sided Welch p and the mean logit
    std at init of each arm: the table behind (c), including any d_k between the small and the large one."""
    rows = []
    for d_k in sorted(sweep.d_k.unique()):
        at = sweep[sweep.d_k == d_k]
        un = at[at.variant == "unscaled"]
        for other in ("additive", "scaled"):
            o = at[at.variant == other]
            t = stats.welch_t(o.final_accuracy, un.final_accuracy)
            rows.append({"d_k": int(d_k), "comparison": f"{other} - unscaled", "accuracy_diff": t.diff,
                         "p_two_sided": t.p_value, "cohens_d": t.effect_size,
                         "steps_to_target_diff": float(o.steps_to_target_censored.mean()
                                                       - un.steps_to_target_censored.mean()),
                         "logit_std_init_other": float(o.logit_std_init.mean()),
                         "logit_std_init_unscaled": float(un.logit_std_init.mean())})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------- figures
def _band(ax, x, groups, label, **kw):
    m = groups.mean()
    ax.plot(x, m.values, marker="o", label=label, **kw)
    if len(groups.size()) and groups.size().min() > 1:
        sd = groups.std()
        color = kw.get("color") or ax.lines[-1].get_color()
        ax.fill_between(x, (m - sd).values, (m + sd).values, alpha=0.2, color=color)


def figure_probe(probe: pd.DataFrame):
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8))
    for variant, style in (("unscaled", "-"), ("scaled", "-"), ("unscaled_xavier", "--")):
        d = probe[probe.variant == variant]
        if d.empty:
            continue
        g = d.groupby("d_k")
        x = sorted(d.d_k.unique())
        for ax, col in zip(axes[:3], ("logit_std", "entropy", "grad_abs_mean")):
            _band(ax, x, g[col], variant, linestyle=style, color=COLORS[variant])
        axes[3].scatter(d.logit_std, d.entropy, s=12, label=variant, color=COLORS[variant])
    for ax, title in zip(axes, ("logit std (the mediator)", "attention entropy (nats)", "mean |dL/dlogits|")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d_k")
        ax.set_title(title)
    axes[0].set_yscale("log")
    axes[2].set_yscale("log")
    axes[3].set_xscale("log")
    axes[3].set_xlabel("logit std")
    axes[3].set_title("entropy against logit std (all d_k)")
    axes[0].legend(fontsize=8)
    fig.suptitle("C3 (a): the softmax at init, unscaled vs scaled, against d_k (d_model fixed)")
    fig.tight_layout()
    return fig


def figure_accuracy_curves(sweep: pd.DataFrame, d_ks):
    curves = curves_frame(sweep)
    fig, axes = plt.subplots(1, len(d_ks), figsize=(5.5 * len(d_ks), 3.8), squeeze=False)
    for ax, d_k in zip(axes[0], d_ks):
        for variant in SWEEP_VARIANTS:
            c = curves[(curves.d_k == d_k) & (curves.variant == variant)]
            std = sweep[(sweep.d_k == d_k) & (sweep.variant == variant)].logit_std_init.mean()
            _band(ax, sorted(c.step.unique()), c.groupby("step").accuracy, f"{variant} (logit std {std:.2g})",
                  color=COLORS[variant])
        ax.axhline(0.9, color="grey", lw=0.8, ls=":")
        ax.set_title(f"d_k = {d_k}")
        ax.set_xlabel("step")
        ax.set_ylabel("held-out accuracy")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=8)
    fig.suptitle("C3 (c): key-value lookup accuracy per variant (mean +/- sd over seeds)")
    fig.tight_layout()
    return fig


def figure_training_grads(sweep: pd.DataFrame, d_ks):
    fig, axes = plt.subplots(1, len(d_ks), figsize=(5.5 * len(d_ks), 3.8), squeeze=False)
    for ax, d_k in zip(axes[0], d_ks):
        for variant in SWEEP_VARIANTS:
            d = sweep[(sweep.d_k == d_k) & (sweep.variant == variant)]
            g = np.array(d.grad_curve.tolist(), dtype=float)
            if g.size == 0:
                continue
            m = g.mean(0)
            ax.plot(np.arange(1, len(m) + 1), m, label=f"{variant} (logit std {d.logit_std_first_k.mean():.2g})",
                    color=COLORS[variant])
        ax.set_yscale("log")
        ax.set_title(f"d_k = {d_k}")
        ax.set_xlabel("training step")
        ax.set_ylabel("mean |dL/dlogits|")
        ax.legend(fontsize=8)
    fig.suptitle("C3 (b): softmax gradient through the first K training steps (mean over seeds)")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------- test
def test_c3_softmax_saturation(evidence, profile, device, seeds, progress, fast):
    budget = profile.claim("C3")
    with torch_threads(budget.get("threads", 1)):     # tiny models: a second thread only contends
        _run(evidence, profile, budget, device, seeds, progress, fast)


def _run(ev, profile, budget, device, seeds, progress, fast):
    ev.claim("C3", title="Unscaled dot products saturate the softmax at large d_k",
             statement="Unscaled dot products saturate the softmax at large d_k (\u201cwe suspect that for large "
                       "values of d_k, the dot products grow large in magnitude, pushing the softmax function into "
                       "regions where it has extremely small gradients\u201d)",
             strength="moderate", kind="claim",
             limitation="C3 is stated as a suspicion with a supporting argument, not a measurement of softmax "
                        "gradient magnitudes. The variance argument holds at initialization; whether it holds "
                        "after training is not addressed.")
    probe_dks, sweep_dks = budget["probe_d_ks"], budget["sweep_d_ks"]
    small_dk, large_dk = min(sweep_dks), max(sweep_dks)
    crit = {
        "a_unscaled_entropy_and_grad_fall": ev.criterion(
            "a_unscaled_entropy_and_grad_fall", fast=True,
            prediction=f"unscaled, at init: attention entropy and mean |dL/dlogits| fall with d_k "
                       f"(d_k in {probe_dks})",
            threshold="both log-log slopes' 95% CI below 0",
            test="stats.replicate_slope: log-log slope per seed over the d_k grid, t interval across seeds"),
        "a_unscaled_saturated_rows_rise": ev.criterion(
            "a_unscaled_saturated_rows_rise", fast=True,
            prediction=f"unscaled, at init: the fraction of rows with max weight > {SATURATION_THRESHOLD} rises "
                       f"with d_k",
            threshold="slope against ln d_k: 95% CI above 0",
            test="stats.replicate_slope: slope on ln d_k per seed, t interval across seeds"),
        "a_scaled_flat": ev.criterion(
            "a_scaled_flat", fast=True,
            prediction="scaled (d_k^-0.5), at init: entropy, mean |dL/dlogits| and saturated fraction do not "
                       "change with d_k",
            threshold=f"each slope's 95% CI contains 0 (refuted only if a CI excludes 0 with |slope| > "
                      f"{MIN_PRACTICAL_SLOPE})",
            test="same slope fits as the unscaled criteria"),
    }
    if not fast:
        crit["b_train_grad_smaller_unscaled_large_dk"] = ev.criterion(
            "b_train_grad_smaller_unscaled_large_dk",
            prediction=f"during training (first {budget['sweep']['grad_steps']} steps) at d_k={large_dk}, "
                       f"unscaled has smaller mean |dL/dlogits| than scaled",
            threshold=f"one-sided p < {ALPHA}", test="Welch t over seeds (alternative: unscaled < scaled)")
        crit["c_small_dk_additive_similar_to_unscaled"] = ev.criterion(
            "c_small_dk_additive_similar_to_unscaled",
            prediction=f"at d_k={small_dk} additive and unscaled dot \u201cperform similarly\u201d (final accuracy)",
            threshold=f"two-sided p >= {ALPHA} (the difference and its CI are reported)",
            test="Welch t over seeds, two-sided")
        for winner in ("additive", "scaled"):
            name = f"c_large_dk_{winner}_beats_unscaled"
            crit[name] = ev.criterion(
                name, prediction=f"at d_k={large_dk} {winner} beats unscaled dot on final accuracy at a fixed "
                                 f"budget AND on steps to {budget['sweep'].get('target_accuracy', 0.9):.0%}",
                threshold=f"both one-sided p < {ALPHA}",
                test="Welch t over seeds, one-sided (steps censored at the budget when the target is not reached)")
    ev.gate("grad_slope_unscaled", direction="both", tolerance=0.15)
    ev.gate("entropy_unscaled_max_dk", direction="both", tolerance=0.15)
    if not fast:
        ev.gate("acc_scaled_minus_unscaled_large_dk", direction="higher", tolerance=0.2)
        ev.gate("acc_additive_minus_unscaled_large_dk", direction="higher", tolerance=0.25)

    # ---- (a) probe at init
    probe_variants = dict(PROBE_VARIANTS)
    if budget.get("probe_xavier", True):
        probe_variants["unscaled_xavier"] = XAVIER_UNSCALED
    probe = measure_saturation_at_init(probe_dks, seeds, budget["sweep"], budget["probe_size"], device,
                                       probe_variants, progress)
    for name, result in evaluate_probe(probe).items():
        crit[name].record_outcome(result)
    un, sc = probe_slopes(probe, "unscaled"), probe_slopes(probe, "scaled")
    ev.metric("grad_slope_unscaled", un["grad"].slope)
    ev.metric("grad_slope_scaled", sc["grad"].slope)
    top = probe[(probe.variant == "unscaled") & (probe.d_k == max(probe_dks))]
    ev.metric("entropy_unscaled_max_dk", float(top.entropy.mean()))
    ev.table("probe_at_init_per_seed", probe)
    ev.figure("entropy_grad_logit_std_vs_dk", figure_probe(probe))
    ev.note(f"(a) At init with PyTorch's default init and d_model={budget['sweep']['model']['d_model']} fixed, "
            f"q and k components have variance ~{probe[probe.variant == 'unscaled'].q_var.mean():.2f} (not 1), so "
            f"the unscaled logit std is ~sqrt(d_k * var_q * var_k): log-log slope {un['logit_std'].slope:.2f} "
            f"(0.5 predicted). Entropy at d_k={max(probe_dks)}: unscaled {top.entropy.mean():.2f} nats vs scaled "
            f"{probe[(probe.variant == 'scaled') & (probe.d_k == max(probe_dks))].entropy.mean():.2f} "
            f"(uniform: ln {sweep_task(budget['sweep']).max_src_len} = "
            f"{math.log(sweep_task(budget['sweep']).max_src_len):.2f}).")
    if "unscaled_xavier" in probe_variants:
        xv = probe_slopes(probe, "unscaled_xavier")
        xv_small = probe[(probe.variant == "unscaled_xavier") & (probe.d_k == min(probe_dks))].entropy.mean()
        corr = stats.correlation(np.log(probe.logit_std), probe.entropy, method="spearman")
        ev.note(f"Mediator: with xavier init at the same fixed d_model, var_q ~ 2/(d_model + d_k) shrinks as d_k "
                f"grows, so the unscaled logit std slope is {xv['logit_std'].slope:.2f} (vs "
                f"{un['logit_std'].slope:.2f} with the default init) and the entropy slope "
                f"{xv['entropy'].slope:.2f} (vs {un['entropy'].slope:.2f}): at small d_k it is already saturated "
                f"(entropy {xv_small:.2f} at d_k={min(probe_dks)}). Across every variant and d_k, entropy follows "
                f"the logit std (Spearman of entropy on ln logit std {corr.r:.3f} [{corr.lo:.3f}, {corr.hi:.3f}], "
                f"n={corr.n}): the logit variance, not d_k, is what saturates the softmax.")
    if fast:
        ev.headline("grad_slope_unscaled")
        return

    # ---- (b), (c): the shared training sweep (memoised: R1 (b) reuses it in the same process)
    sweep = attention_variant_sweep(SWEEP_VARIANTS, sweep_dks, budget["sweep"], seeds, device, progress)
    crit["b_train_grad_smaller_unscaled_large_dk"].record_outcome(evaluate_training_grads(sweep, large_dk))
    for name, result in evaluate_quality(sweep, small_dk, large_dk).items():
        crit[name].record_outcome(result)
    large = sweep[sweep.d_k == large_dk].groupby("variant").final_accuracy.mean()
    ev.metric("acc_scaled_minus_unscaled_large_dk", float(large["scaled"] - large["unscaled"]))
    ev.metric("acc_additive_minus_unscaled_large_dk", float(large["additive"] - large["unscaled"]))
    by_dk = quality_by_dk(sweep)
    ev.table("quality_by_dk", by_dk)
    ev.table("sweep_per_seed", summary_table(sweep))
    ev.table("accuracy_curves", curves_frame(sweep))
    ev.figure("accuracy_curves_per_variant", figure_accuracy_curves(sweep, sweep_dks))
    ev.figure("train_grad_first_k", figure_training_grads(sweep, sweep_dks))
    means = sweep.groupby(["d_k", "variant"])[["final_accuracy", "logit_std_init", "logit_std_final",
                                                "grad_abs_mean_first_k"]].mean()
    ev.note("Per d_k and variant (means over seeds): " + "; ".join(
        f"d_k={d} {v}: acc {r.final_accuracy:.3f}, logit std {r.logit_std_init:.2g} at init -> "
        f"{r.logit_std_final:.2g} trained, |dL/dlogits| first K {r.grad_abs_mean_first_k:.2g}"
        for (d, v), r in means.iterrows()))
    ev.note("Accuracy differences by d_k (Welch two-sided; logit std at init other/unscaled): " + "; ".join(
        f"d_k={r.d_k} {r.comparison}: {r.accuracy_diff:+.3f} (p={r.p_two_sided:.3g}; {r.logit_std_init_other:.2g}/"
        f"{r.logit_std_init_unscaled:.2g})" for r in by_dk.itertuples()))
    gap = by_dk.set_index(["d_k", "comparison"])
    add_small, add_large = (gap.loc[(d, "additive - unscaled")] for d in (small_dk, large_dk))
    sc_add = stats.welch_t(sweep[(sweep.d_k == large_dk) & (sweep.variant == "scaled")].final_accuracy,
                           sweep[(sweep.d_k == large_dk) & (sweep.variant == "additive")].final_accuracy)
    ev.note(f"Reading (c): the additive - unscaled accuracy gap is {add_small.accuracy_diff:+.3f} at d_k={small_dk} "
            f"(p={add_small.p_two_sided:.3g}; unscaled logit std at init {add_small.logit_std_init_unscaled:.2g}) and "
            f"{add_large.accuracy_diff:+.3f} at d_k={large_dk} (p={add_large.p_two_sided:.3g}; logit std "
            f"{add_large.logit_std_init_unscaled:.2g}). The growth of the gap with the logit std is the saturation "
            f"signal; the small-d_k criterion tests the paper's other half (\u201cperform similarly\u201d), which "
            f"fails whenever additive attention is simply better at this task and budget: at d_k={large_dk} additive "
            f"vs scaled dot {sc_add.diff:+.3f} (p={sc_add.p_value:.3g}).")
    ev.headline("acc_scaled_minus_unscaled_large_dk")
