"""Q1: QK-norm against 1/sqrt(d_k). Does QK-norm fix the problem the scaling fixes, and does the scaling still
earn its place beside it? (NOTE-011, open questions; issue 11.)

Five arms, all switches of ``ModelConfig`` (``score``, ``scale``, ``qk_norm``, ``qk_norm_gain_init``):

* ``scaled``: the paper's softmax(q.k / sqrt(d_k));
* ``unscaled``: softmax(q.k);
* ``qk_layernorm_scaled``: LayerNorm on q and k (no affine), a learnable per-head gain g (init 1), then the scale;
* ``qk_layernorm_unscaled``: the same without the scale. Gain initialised to 1, not as in Henry et al. 2020:
  their g0 = log2(L^2 - L) is calibrated for cosine logits in [-1, 1], and a LayerNorm'd q.k already has
  variance d_k, so g0 would widen the logits further;
* ``qk_l2_gain``: Henry et al. 2020's QKNorm, l2-normalised q and k (cosine similarity), no scale, a learnable
  gain initialised as they do, g0 = log2(L^2 - L) with L the task's sequence length.

Each arm is trained at a small and a large d_k (d_model fixed) over a learning-rate sweep (Wortsman et al. 2023
reproduce attention-logit growth at small scale by raising the learning rate), through the shared sweep
``harness.sweeps.attention_variant_sweep`` (one call per rate; taps on every step, so the max |logit| over
training is read on every training batch). Per (arm, d_k, seed), with l0 = ln(n_classes) the chance loss and a
diverged or worse-than-chance run counted as l0 (Wortsman et al.):

* ``best_loss`` = min over the rates of the final held-out loss;
* ``lr_sensitivity`` = mean over the rates of (min(loss, l0) - best_loss)   [issue 11, Wortsman et al.];
* ``lr_mean_loss`` = mean over the rates of min(loss, l0) = best_loss + lr_sensitivity.

Sensitivity alone is blind to an arm that is uniformly worse (it is measured from the arm's own best), so the
question is decided on ``lr_mean_loss``, which carries both.

The verdict answers "does the 1/sqrt(d_k) scale still earn its place once QK-norm is there?" from one counted
criterion, written before the run: at the large d_k, LayerNorm QK-norm without the scale has a higher
``lr_mean_loss`` than with it by more than a margin (one-sided Welch on per-seed values, against the margin):
'answered yes' if so, 'answered no' if it is significantly less than the margin, inconclusive otherwise.
Reported beside it (not counted), each with its prediction: the same comparison at the small d_k; whether
QK-norm bounds the logit growth at the highest rate (Wortsman's mechanism); whether it lowers the LR
sensitivity; and whether QK-norm alone removes the d_k growth at init that the scale removes (by construction
it cannot: a LayerNorm'd q.k has variance d_k).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
import torch

from harness import stats, sweeps
from harness.sweeps import attention_variant_sweep, summary_table, sweep_task
from harness.training import torch_threads

# one xdist worker for every module of the shared sweep (harness.sweeps): its runs train once
pytestmark = [pytest.mark.claim("Q1"), pytest.mark.xdist_group(sweeps.XDIST_GROUP)]

CLAIM_ID = "Q1"
ALPHA = 0.05
# The scale "matters" when dropping it costs more than this much held-out loss (nats, mean over the LR range):
# 0.05 nats is 2.4% of the chance loss ln 8 of the task.
MARGIN = 0.05
# init logit std ~ d_k^slope: the scale's problem is slope 0.5; QK-norm alone leaves it there.
INIT_SLOPE_BAND = (0.4, 0.6)
ARM_ORDER = ("scaled", "unscaled", "qk_layernorm_scaled", "qk_layernorm_unscaled", "qk_l2_gain")


def henry_gain_init(seq_len: int) -> float:
    """Henry et al. 2020's initial QKNorm gain, g0 = log2(L^2 - L), L = the (97.5th percentile) sequence length."""
    if seq_len < 2:
        raise ValueError(f"seq_len must be >= 2 for log2(L^2 - L), got {seq_len}")
    return math.log2(seq_len * seq_len - seq_len)


def arms(seq_len: int) -> dict[str, dict[str, Any]]:
    """The five arms as ModelConfig overrides (module docstring)."""
    return {"scaled": {},
            "unscaled": {"scale": "none"},
            "qk_layernorm_scaled": {"qk_norm": "layernorm", "qk_norm_gain_init": 1.0},
            "qk_layernorm_unscaled": {"qk_norm": "layernorm", "scale": "none", "qk_norm_gain_init": 1.0},
            "qk_l2_gain": {"qk_norm": "l2", "scale": "none", "qk_norm_gain_init": henry_gain_init(seq_len)}}


# ================================================================================================ measure
def sweep_budget(budget: dict[str, Any], lr: float) -> dict[str, Any]:
    """The shared sweep's budget for one learning rate (taps on every step: the max |logit| over training)."""
    train = {**budget["train"], "lr": float(lr)}
    return {"task": budget["task"], "model": budget["model"], "train": train,
            "grad_steps": int(train["steps"]), "probe_size": int(budget["probe_size"])}


def measure_lr_sweep(budget: dict[str, Any], seeds: list[int], device: str | torch.device = "cpu",
                     progress: Callable[..., Any] | None = None, only: list[str] | None = None) -> pd.DataFrame:
    """One row per (arm, d_k, lr, seed): the sweep's columns plus ``lr``. ``only``: a subset of the arms."""
    task = sweep_task(budget)
    variants = arms(task.max_len)
    if only is not None:
        variants = {k: variants[k] for k in only}
    frames = []
    for i, lr in enumerate(budget["lrs"], 1):
        if progress is not None:
            progress(f"Q1 learning rate {lr:g} ({i}/{len(budget['lrs'])})", force=True)
        df = attention_variant_sweep(variants, budget["d_ks"], sweep_budget(budget, lr), seeds, device, progress)
        frames.append(df.assign(lr=float(lr)))
    out = pd.concat(frames, ignore_index=True)
    out["chance_loss"] = -math.log(task.chance)
    return out


# ================================================================================================ decide
def lr_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, d_k, seed): best_loss, lr_sensitivity, lr_mean_loss (module docstring), the max |logit| over
    training at the highest rate and over all rates, the init logit std, and how many rates diverged."""
    d = df.copy()
    l0 = d["chance_loss"]
    d["capped_loss"] = np.where(d["final_loss"].notna() & (d["final_loss"] < l0), d["final_loss"], l0)
    top = d["lr"].max()
    rows = []
    for (arm, d_k, seed), g in d.groupby(["variant", "d_k", "seed"], sort=False):
        best = float(g["capped_loss"].min())
        mean = float(g["capped_loss"].mean())
        rows.append({"arm": arm, "d_k": int(d_k), "seed": int(seed), "best_loss": best,
                     "best_lr": float(g["lr"].to_numpy()[np.argmin(g["capped_loss"].to_numpy())]),
                     "lr_sensitivity": mean - best, "lr_mean_loss": mean,
                     "max_logit_top_lr": float(g[g["lr"] == top]["logit_absmax_first_k"].max()),
                     "max_logit_any_lr": float(g["logit_absmax_first_k"].max()),
                     "logit_std_init": float(g["logit_std_init"].iloc[0]),
                     "n_diverged": int(g["diverged"].sum()), "n_lrs": int(len(g))})
    return pd.DataFrame(rows)


def _values(t: pd.DataFrame, arm: str, d_k: int, col: str) -> np.ndarray:
    return t[(t["arm"] == arm) & (t["d_k"] == d_k)][col].to_numpy(dtype=float)


def evaluate_scale_matters(t: pd.DataFrame, d_k: int, margin: float = MARGIN, alpha: float = ALPHA) -> dict:
    """Does dropping the scale from LayerNorm QK-norm cost more than ``margin`` of lr_mean_loss at ``d_k``?
    Passed: one-sided Welch of (unscaled - margin) > scaled at p < alpha; refuted: (unscaled - margin) < scaled at
    p < alpha (the cost is significantly below the margin); otherwise inconclusive."""
    a = _values(t, "qk_layernorm_unscaled", d_k, "lr_mean_loss")
    b = _values(t, "qk_layernorm_scaled", d_k, "lr_mean_loss")
    more = stats.welch_t(a - margin, b, alternative="greater")
    less = stats.welch_t(a - margin, b, alternative="less")
    two = stats.welch_t(a, b)
    sens = {arm: _values(t, arm, d_k, "lr_sensitivity").mean() for arm in ("qk_layernorm_unscaled", "qk_layernorm_scaled")}
    best = {arm: _values(t, arm, d_k, "best_loss").mean() for arm in ("qk_layernorm_unscaled", "qk_layernorm_scaled")}
    return {"measured": two.diff, "ci": two.ci, "p_value": more.p_value,
            "passed": more.significant(alpha), "refuted": less.significant(alpha),
            "detail": (f"d_k={d_k}: lr_mean_loss QK-LN unscaled {a.mean():.3f} vs scaled {b.mean():.3f} "
                       f"(diff {two.diff:.3f}, 95% CI [{two.ci[0]:.3f}, {two.ci[1]:.3f}]); "
                       f"diff > {margin}: p={more.p_value:.3g}; diff < {margin}: p={less.p_value:.3g}. "
                       f"Parts: best loss {best['qk_layernorm_unscaled']:.3f} vs {best['qk_layernorm_scaled']:.3f}, "
                       f"LR sensitivity {sens['qk_layernorm_unscaled']:.3f} vs {sens['qk_layernorm_scaled']:.3f}")}


def evaluate_logit_growth(t: pd.DataFrame, d_k: int, alpha: float = ALPHA) -> dict:
    """Wortsman's mechanism at the highest rate: the max |logit| over training of QK-LN (scaled) below that of the
    plain scaled arm. One-sided Welch on log10 of the per-seed maxima; refuted if significantly above."""
    a = np.log10(_values(t, "qk_layernorm_scaled", d_k, "max_logit_top_lr"))
    b = np.log10(_values(t, "scaled", d_k, "max_logit_top_lr"))
    lower = stats.welch_t(a, b, alternative="less")
    higher = stats.welch_t(a, b, alternative="greater")
    return {"measured": float(10 ** a.mean()), "p_value": lower.p_value,
            "passed": lower.significant(alpha), "refuted": higher.significant(alpha),
            "detail": f"d_k={d_k}, highest rate: max |logit| over training, geometric mean over seeds: QK-LN scaled "
                      f"{10 ** a.mean():.3g} vs scaled {10 ** b.mean():.3g}; {lower}"}


def evaluate_sensitivity_reduced(t: pd.DataFrame, d_k: int, alpha: float = ALPHA) -> dict:
    """Wortsman's headline: QK-LN (scaled) has a lower LR sensitivity than the plain scaled arm. One-sided Welch."""
    a = _values(t, "qk_layernorm_scaled", d_k, "lr_sensitivity")
    b = _values(t, "scaled", d_k, "lr_sensitivity")
    lower = stats.welch_t(a, b, alternative="less")
    higher = stats.welch_t(a, b, alternative="greater")
    return {"measured": lower.diff, "ci": lower.ci, "p_value": lower.p_value,
            "passed": lower.significant(alpha), "refuted": higher.significant(alpha),
            "detail": f"d_k={d_k}: LR sensitivity QK-LN scaled {a.mean():.3f} vs scaled {b.mean():.3f}; {lower}"}


def evaluate_init_dk_growth(t: pd.DataFrame, arm: str = "qk_layernorm_unscaled",
                            band: tuple[float, float] = INIT_SLOPE_BAND) -> dict:
    """What the scale fixes, with QK-norm and no scale: the init logit std grows as d_k^0.5. Log-log slope of
    logit_std_init against d_k over per-seed points; passes if the CI lies within ``band``."""
    sel = t[t["arm"] == arm]
    fit = stats.loglog_slope(sel["d_k"], sel["logit_std_init"])
    return {"measured": fit.slope, "ci": fit.ci, "passed": fit.within(*band),
            "refuted": bool(fit.hi < band[0] or fit.lo > band[1]),
            "detail": f"{arm}: init logit std ~ d_k^slope, {fit}"}


# ================================================================================================ render
def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure_max_logit_vs_lr(df: pd.DataFrame):
    """Max |logit| over training against the learning rate, per arm, one panel per d_k (seeds: points)."""
    plt = _plt()
    d_ks = sorted(df["d_k"].unique())
    fig, axes = plt.subplots(1, len(d_ks), figsize=(5.5 * len(d_ks), 4.2), squeeze=False)
    for ax, d_k in zip(axes[0], d_ks):
        for arm in ARM_ORDER:
            g = df[(df["variant"] == arm) & (df["d_k"] == d_k)]
            if g.empty:
                continue
            m = g.groupby("lr")["logit_absmax_first_k"].apply(lambda v: 10 ** np.log10(v).mean())
            line, = ax.plot(m.index, m.values, marker="o", label=arm)
            ax.scatter(g["lr"], g["logit_absmax_first_k"], s=10, color=line.get_color(), alpha=0.5)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("learning rate")
        ax.set_ylabel("max |attention logit| over training")
        ax.set_title(f"d_k = {d_k}")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def figure_lr_sensitivity(t: pd.DataFrame):
    """LR sensitivity (and best loss, stacked: together the mean loss over the LR range) per arm and d_k."""
    plt = _plt()
    d_ks = sorted(t["d_k"].unique())
    present = [a for a in ARM_ORDER if a in set(t["arm"])]
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.8 / len(d_ks)
    x = np.arange(len(present))
    for j, d_k in enumerate(d_ks):
        g = t[t["d_k"] == d_k].groupby("arm")
        best = g["best_loss"].mean().reindex(present)
        sens = g["lr_sensitivity"].mean().reindex(present)
        pos = x + (j - (len(d_ks) - 1) / 2) * width
        ax.bar(pos, best, width, color=f"C{j}", alpha=0.35, label=f"best loss, d_k={d_k}")
        ax.bar(pos, sens, width, bottom=best, color=f"C{j}", label=f"LR sensitivity, d_k={d_k}")
        for k, arm in enumerate(present):
            vals = t[(t["d_k"] == d_k) & (t["arm"] == arm)]["lr_mean_loss"]
            ax.scatter(np.full(len(vals), pos[k]), vals, s=10, color="k", zorder=3)
    ax.set_xticks(x, present, rotation=15, fontsize=8)
    ax.set_ylabel("held-out loss (nats)")
    ax.set_title("best loss (light) + LR sensitivity (dark) = mean loss over the LR range; dots: seeds", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def figure_loss_vs_lr(df: pd.DataFrame):
    """Final held-out loss (capped at chance) against the learning rate: Wortsman's LR-sensitivity curves."""
    plt = _plt()
    d_ks = sorted(df["d_k"].unique())
    fig, axes = plt.subplots(1, len(d_ks), figsize=(5.5 * len(d_ks), 4.2), squeeze=False, sharey=True)
    capped = df.assign(loss=np.minimum(df["final_loss"].fillna(np.inf), df["chance_loss"]))
    for ax, d_k in zip(axes[0], d_ks):
        for arm in ARM_ORDER:
            g = capped[(capped["variant"] == arm) & (capped["d_k"] == d_k)]
            if not g.empty:
                m = g.groupby("lr")["loss"].mean()
                ax.plot(m.index, m.values, marker="o", label=arm)
        ax.axhline(float(df["chance_loss"].iloc[0]), color="k", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("learning rate")
        ax.set_title(f"d_k = {d_k}")
    axes[0][0].set_ylabel("final held-out loss (capped at chance)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


# ================================================================================================ the test
def test_q1_qk_norm(evidence, profile, device, seeds, progress, fast):
    if fast:
        pytest.skip("Q1 has no fast criteria: no fault of model.faults is Q1's to catch (issue 10)")
    budget = profile.claim(CLAIM_ID)
    ev = evidence
    ev.claim(CLAIM_ID, title="QK-norm against 1/sqrt(d_k): does the scaling still earn its place?",
             statement="Modern models normalise queries and keys explicitly (QK-norm) \u2014 is that fixing the "
                       "same problem the scaling was fixing, and does the scaling still earn its place alongside it?",
             strength="open question", kind="question",
             limitation="The 1/\u221ad_k scaling assumes unit-variance, independent components. Here: a one-layer "
                        f"encoder (d_model {budget['model']['d_model']}) on key-value lookup, d_k {budget['d_ks']}, "
                        f"{budget['train']['steps']} Adam steps per rate, rates {budget['lrs']}: logit growth is "
                        "provoked by the learning rate, not by scale as in Wortsman et al. 2023.")
    small, big = min(budget["d_ks"]), max(budget["d_ks"])
    c_matters = ev.criterion(
        "scale_matters_with_qk_norm",
        prediction=f"yes-condition: at d_k={big}, LayerNorm QK-norm without the 1/sqrt(d_k) scale has a higher "
                   f"mean held-out loss over the LR range (best loss + LR sensitivity) than with it, by more than "
                   f"{MARGIN} nats. Expected: yes (a LayerNorm'd q.k still has variance d_k; the gain must learn "
                   "the scale)",
        threshold=f"diff > {MARGIN} nats at p < {ALPHA} (yes); diff < {MARGIN} at p < {ALPHA} (no)",
        test=f"one-sided Welch t-tests of (unscaled - {MARGIN}) vs scaled over {len(seeds)} seeds per arm")
    c_matters_small = ev.criterion(
        "scale_matters_with_qk_norm_small_dk", counts=False,
        prediction=f"the same at d_k={small}; expected smaller (the scale is only 1/{math.sqrt(small):.3g} there)",
        threshold=f"diff > {MARGIN} nats at p < {ALPHA}", test="one-sided Welch t-tests, as above")
    c_growth = ev.criterion(
        "qk_norm_bounds_logit_growth", counts=False,
        prediction=f"Wortsman et al.: at the highest rate and d_k={big}, QK-norm (LayerNorm, scaled) keeps the max "
                   "|attention logit| over training below the plain scaled model's",
        threshold=f"one-sided p < {ALPHA}", test="one-sided Welch t-test on log10 of per-seed maxima")
    c_sens = ev.criterion(
        "qk_norm_reduces_lr_sensitivity", counts=False,
        prediction=f"Wortsman et al.: at d_k={big}, QK-norm (LayerNorm, scaled) has a lower LR sensitivity than "
                   "the plain scaled model",
        threshold=f"one-sided p < {ALPHA}", test="one-sided Welch t-test on per-seed LR sensitivity")
    c_init = ev.criterion(
        "qk_norm_alone_keeps_dk_growth", counts=False,
        prediction="QK-norm is not the scale's fix: without the scale, a LayerNorm'd model's init logit std still "
                   "grows as sqrt(d_k) (what 1/sqrt(d_k) removes)",
        threshold=f"log-log slope of init logit std vs d_k: 95% CI within {list(INIT_SLOPE_BAND)}",
        test="stats.loglog_slope over per-seed points")
    ev.gate("q1_scale_effect_with_qk_norm", direction="both", tolerance=0.4)
    ev.gate("q1_max_logit/qk_layernorm_scaled", direction="lower", tolerance=1.0, relative=True)

    # ---- measure
    with torch_threads(budget.get("threads", 1)):           # tiny models: a second thread only contends
        df = measure_lr_sweep(budget, seeds, device, progress)
    t = lr_table(df)

    # ---- test and record
    c_matters.record_outcome(evaluate_scale_matters(t, big))
    c_matters_small.record_outcome(evaluate_scale_matters(t, small))
    c_growth.record_outcome(evaluate_logit_growth(t, big))
    c_sens.record_outcome(evaluate_sensitivity_reduced(t, big))
    c_init.record_outcome(evaluate_init_dk_growth(t))

    at_big = t[t["d_k"] == big].groupby("arm")
    for arm in ARM_ORDER:
        ev.metric(f"q1_lr_sensitivity/{arm}", float(at_big["lr_sensitivity"].mean()[arm]))
        ev.metric(f"q1_max_logit/{arm}", float(at_big["max_logit_top_lr"].mean()[arm]))
        ev.metric(f"q1_best_loss/{arm}", float(at_big["best_loss"].mean()[arm]))
    effect = at_big["lr_mean_loss"].mean()
    ev.metric("q1_scale_effect_with_qk_norm", float(effect["qk_layernorm_unscaled"] - effect["qk_layernorm_scaled"]))
    ev.headline("q1_scale_effect_with_qk_norm")
    ev.table("per_seed", t)
    ev.table("runs", summary_table(df))
    summary = (t.groupby(["arm", "d_k"], as_index=False)
               [["best_loss", "lr_sensitivity", "lr_mean_loss", "max_logit_top_lr", "logit_std_init", "n_diverged"]]
               .mean())
    ev.table("summary", summary)
    ev.figure("max_logit_vs_lr", figure_max_logit_vs_lr(df))
    ev.figure("lr_sensitivity", figure_lr_sensitivity(t))
    ev.figure("loss_vs_lr", figure_loss_vs_lr(df))
    seq_len = sweep_task(budget).max_len
    ev.note(f"Metrics q1_lr_sensitivity/<arm>, q1_max_logit/<arm> (max |logit| over training at the highest rate "
            f"{max(budget['lrs']):g}) and q1_best_loss/<arm> are at d_k={big}, means over seeds; the per_seed and "
            f"summary tables hold both d_k. Gains: LayerNorm arms start at 1; qk_l2_gain at Henry et al.'s "
            f"log2(L^2 - L) = {henry_gain_init(seq_len):.3g} (L = {seq_len}). Loss is the final held-out "
            "cross-entropy, capped at chance (ln n_classes) for diverged or worse-than-chance runs.")
    ev.note("What each fixes: 1/sqrt(d_k) removes the d_k growth of the logits at init (a width effect); QK-norm "
            "bounds |logit| by gain x scale x d_k (LayerNorm) or by the gain (l2), so the logits can only grow "
            "through the gain during training (Wortsman et al.'s instability). They are different problems: "
            "qk_norm_alone_keeps_dk_growth measures the first, qk_norm_bounds_logit_growth the second.")
    mean_loss = at_big["lr_mean_loss"].mean()
    ev.note(f"Where the scale goes (d_k={big}, mean loss over the LR range): LayerNorm QK-norm with the scale "
            f"{mean_loss['qk_layernorm_scaled']:.3f}, without it {mean_loss['qk_layernorm_unscaled']:.3f}; l2 "
            f"QK-norm with Henry's gain and no scale {mean_loss['qk_l2_gain']:.3f}; plain scaled "
            f"{mean_loss['scaled']:.3f}, unscaled {mean_loss['unscaled']:.3f}. A d_k-dependent factor can live "
            "in the gain's initial value instead (a LayerNorm gain started at d_k^-0.5 gives the scaled arm's logits "
            "at init, though Adam then moves it on a different relative scale), and l2 QK-norm has none to need: a "
            "cosine is in [-1, 1] whatever d_k, and Henry's gain is set by the sequence length. So 'the scale still "
            "earns its place' reads: with LayerNorm QK-norm and a gain started at 1, removing 1/sqrt(d_k) is not free.")
