"""R2: when a compatibility function's magnitude grows with a dimension, check what that does to the softmax's
gradients (NOTE-011, recommendation R2, strength moderate; the general form of C3).

The recommendation is a procedure, so the module builds it once, in the harness (``harness.measure.probes
.saturation_check``: logit std, softmax gradient and entropy against a growing dimension, with log-log slope
tests) and applies it to the model's own compatibility functions (``probes.attention_score``: a one-head
``MultiHeadAttention`` with identity W^Q, W^K, so q and k are iid N(0, 1) as in the footnote and every switch
and fault of the module acts). The verdict is whether the check flags exactly what the variance argument
predicts (issue 5):

=================================================  ===========================================================
score function                                      variance argument predicts
=================================================  ===========================================================
unscaled dot                                        Var = d: logits grow, softmax saturates -> flagged
scaled dot (the model's DEFAULT)                    Var = 1: not flagged (fast criterion; scale faults flip it)
additive, default init                              reported (v_a ~ U(+-1/sqrt d) already divides the sum)
QK-norm (layernorm, learnable gain) + 1/sqrt(d_k)   components forced to unit variance: not flagged
dot scaled by 1/d_k                                 Var = 1/d: flagged the other way, entropy -> ln n
QK-norm (l2, learnable gain at 1) + 1/sqrt(d_k)     reported: cos(q, k) has variance 1/d, so it shrinks
=================================================  ===========================================================

Criteria (declared before measuring, one per predicted row; ``CRITERIA`` below): the check's flag is driven by
the log-log slope of the logit std against d (``saturation_check``'s regression over (dim, seed) points, each
point drawn afresh, so the points are independent). ``min_slope`` (0.1, the profile's) is what "grows" and
"shrinks" mean: the std changes by more than 7% per doubling of d. Each criterion is a ``band`` on that slope:

* flagged, saturates: slope > +min_slope, and the mean |dL/dlogits| slope < -min_slope (handed over as minus
  that slope, so both parts share the band; both must hold);
* not flagged: slope within [-min_slope, +min_slope] (an equivalence band: a flat trend must be shown, not
  merely not rejected);
* flagged, goes uniform: slope < -min_slope. That the entropy at the largest dim reaches ``UNIFORM_ENTROPY_RATIO``
  ln n is reported beside it (``inverse_dk_entropy_at_max_dim``, per seed), not counted: it is what the flag's
  name says, but with logits shrinking as 1/sqrt(d) it follows from the slope (entropy ~ ln n - Var/2).

**Roles** (issue 38): every row is a slope on iid N(0, 1) inputs, an identity of the variance argument's
mathematics (Var(q.k) = d for the unscaled dot, 1 for the scaled, 1/d for 1/d_k), so none is counted evidence for
a recommendation whose worth is about training: whether the check's flag foretells a softmax that trains badly.
R2 trains nothing. C3 and C4 train two of the scores it flags, each arm at its own tuned rate: the unscaled dot
(flagged "saturates"; C3's ``c_large_dk_*`` arms, C4's alpha = 0) and the dot scaled by 1/d_k (flagged "goes
uniform"; C4's alpha = 1), and judge them by their own criteria. Their runs do not make the flag a forecast of bad
training: in reports/standard.json (c24aa78, master seed 675646) the unscaled dot trails at d_k 512, while 1/d_k
trains best on key-value lookup at d_k 512 (C4's best alpha on its tuning seeds, and ahead of 1/sqrt(d_k) on its
evaluation seeds). R2 declares no criterion over their runs (the flag predicting their trained ordering would be
one), so it counts nothing and reads not tested here (the reason is in its record); its rows say whether the check
is an instrument that works.

* ``unscaled_flagged``, ``inverse_dk_flagged_uniform``, ``qk_norm_not_flagged``: **premises**. They are the
  instrument's calibration: the check must flag a score that grows (and the gradient it starves), flag one that
  shrinks, and stay quiet on one held at unit variance. A test of the recommendation needs that; if one fails,
  the check itself is broken and R2 is not testable here, whatever it would count.
* ``default_not_flagged`` (fast): **reported**. It reads the model's DEFAULT scale through the check, not the
  check: under a scale fault (``no_scale``: slope +0.5, ``scale_by_dk``: -0.5) the check is right to flag it, so
  the fault refutes this criterion without saying anything against the recommendation. Whether the default scale
  is 1/sqrt(d_k) is R1's claim (``default_is_sdpa_scale``), which counts it. A --fast run (this row only)
  decides nothing for R2.
* ``inverse_dk_entropy_at_max_dim``: **reported** (as before).

A premise whose slope CI lies wholly on the wrong side of its band (the check misflags a calibration row) makes
R2 not testable here; nothing here can refute it. The classification (``classify``) stays the check's own
output, reported per row and in the metric ``saturation_flags_matched``.

**A kernel on trial** (``--attention``, issue 27): the same check through the user's kernel, a black box
(``harness.trial.kernel_probes.saturation``: unit-variance q and k at each d_k, the weights read out with v = identity
over keys, dL/dlogits by autograd through the softmax of the recovered logits), with the same bands:
``kernel_default_not_flagged`` (fast): at ``scale=None`` the logit std is flat in d_k; ``kernel_unscaled_flagged``
(fast): at ``scale=1`` the logits grow and the softmax gradient shrinks (a kernel that ignores the scale it is given
fails one of the two). The entropy per (arm, d_k) is reported (C3 a on the kernel). These two stay counted: on
trial is the kernel, a black box, and whether it applies the scale it is given is an empirical fact about it, not
an identity (the same inputs through a correct kernel are the mathematics; through this one, the evidence).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

from harness.record import decision
from harness.measure import probes, stats
from harness.trial import kernel_probes
from harness.trial.kernel import DTYPES
from harness.report.plots import plt
from model import ModelConfig

pytestmark = pytest.mark.claim("R2")

CLAIM_ID = "R2"
UNIFORM_ENTROPY_RATIO = 0.99     # entropy / ln n at the largest dim for "attention goes uniform"
NOT_FLAGGED = "not flagged"
SATURATES = "flagged: saturates"
UNIFORM = "flagged: goes uniform"

# key -> (label, ModelConfig overrides, prediction or None for "report what it finds", criterion name); the
# criterion's role is ROLES' (the module docstring says why)
SCORE_FUNCTIONS: dict[str, tuple[str, dict, str | None, str | None]] = {
    "unscaled": ("unscaled dot", {"scale": "none"}, SATURATES, "unscaled_flagged"),
    "default": ("scaled dot (model default)", {}, NOT_FLAGGED, "default_not_flagged"),
    "additive": ("additive, default init", {"score": "additive"}, None, None),
    "qk_norm": ("QK-norm (layernorm, gain) + 1/sqrt(d_k)", {"qk_norm": "layernorm"}, NOT_FLAGGED,
                "qk_norm_not_flagged"),
    "inverse_dk": ("dot scaled by 1/d_k", {"scale_exponent": 1.0}, UNIFORM, "inverse_dk_flagged_uniform"),
    "qk_norm_l2": ("QK-norm (l2, gain 1) + 1/sqrt(d_k)", {"qk_norm": "l2"}, None, None),
}
FAST_ROWS = ("default",)
#: criterion -> its role (issue 38): the check's calibration rows are premises; the model default's row is reported
ROLES = {"unscaled_flagged": "premise", "default_not_flagged": "reported", "qk_norm_not_flagged": "premise",
         "inverse_dk_flagged_uniform": "premise"}
#: the note's words each flag's criterion tests (issue 47; docs/NOTE-011.txt), the kernel's rows included
QUOTES = {"unscaled_flagged": "an unscaled score grows with the dimension and saturates the softmax",
          "default_not_flagged": "Scaling by 1/√d_k returns it to unit variance.",
          "qk_norm_not_flagged": "Modern models normalise queries and keys explicitly (QK-norm)",
          "inverse_dk_flagged_uniform": "designing any scoring function feeding a softmax",
          "kernel_default_not_flagged": "Scaling by 1/√d_k returns it to unit variance.",
          "kernel_unscaled_flagged": "an unscaled score grows with the dimension and saturates the softmax"}


#: a reviewer's first objections (harness.record.objections.OBJECTIONS) and how this module meets each; firmness is
#: the harness's
OBJECTIONS = {
    "tuned_lr": ("not applicable", "nothing is trained: the check probes score functions at init"),
    "ceiling": ("not applicable", "slopes of logit scale against the dimension; no bounded metric decides"),
    "selection": ("not applicable", "no best arm or setting is chosen"),
    "second_task": ("not applicable", "the check is task-free: random q and k over a dimension grid"),
}


def score_config(overrides: dict) -> Callable[[int], ModelConfig]:
    """The one-head attention at dimension d with the row's switches (d_model = d_k = d_v = d)."""
    return lambda d: ModelConfig(d_model=d, n_heads=1, d_k=d, d_v=d, src_vocab=8, **overrides)


def classify(report: probes.SaturationReport, uniform_ratio: float = UNIFORM_ENTROPY_RATIO) -> str:
    """The check's flag for one score function (see the module docstring)."""
    logit, grad = report.trends.get("logit_std", "flat"), report.trends.get("grad_mean_abs", "flat")
    if logit == "grows":
        return SATURATES if grad == "shrinks" else "flagged: logits grow, gradient holds"
    if logit == "shrinks":
        m = report.measurements
        top = float(m[m["dim"] == m["dim"].max()]["entropy_ratio"].mean())
        return UNIFORM if top >= uniform_ratio else "flagged: logits shrink, entropy below ln n"
    return NOT_FLAGGED


def rule(flag: str, min_slope: float) -> decision.Rule:
    """The band a predicted flag puts on the logit-std slope (and, for saturation, on minus the gradient slope)."""
    why = (f"{min_slope:g} in the log-log slope: the std changes by more than 7% per doubling of d (the profile's "
           "min_slope)")
    return {SATURATES: decision.band(min_slope, None, level=True, reason=why),
            NOT_FLAGGED: decision.band(-min_slope, min_slope, reason=why + "; inside it: flat"),
            UNIFORM: decision.band(None, -min_slope, level=True, reason=why)}[flag]


def flag_criterion(what: str, flag: str, std: str = "the logit std against d", **spec: Any) -> dict[str, Any]:
    """A predicted flag's criterion: the band ``rule(flag, min_slope)`` on the log-log slope of ``std``
    (``min_slope``: the profile's, filled in by ``ev.declare``), predicting that the check says ``flag`` of
    ``what``."""
    return dict(rule=lambda min_slope: rule(flag, min_slope), prediction=f"{what}: the check says '{flag}'",
                metric=f"log-log slope of {std}" + (" (and minus that of mean |dL/dlogits|)" if flag == SATURATES
                                                    else ""), **spec)


#: name -> the criterion's declaration, one per predicted row of ``SCORE_FUNCTIONS`` (the default's is fast) with
#: its role from ``ROLES``, and the entropy beside the uniform flag (reported)
CRITERIA = {
    **{name: flag_criterion(label, flag, fast=key in FAST_ROWS, role=ROLES[name], quote=QUOTES[name])
       for key, (label, _, flag, name) in SCORE_FUNCTIONS.items() if name is not None},
    "inverse_dk_entropy_at_max_dim": dict(
        role="reported", rule=decision.band(UNIFORM_ENTROPY_RATIO, None, level=True,
                                         reason="within 1% of ln n: attention indistinguishable from uniform"),
        prediction="dot scaled by 1/d_k: attention entropy at the largest dim is near ln n (goes uniform)",
        metric="entropy / ln n at the largest dim, per seed"),
}


def slope_parts(fits: dict[str, stats.SlopeFit], flag: str, n_seeds: int) -> list[dict]:
    """The measurements a flag's criterion is decided on: the logit-std slope, and for saturation minus the mean
    |dL/dlogits| slope (so one band, > +min_slope, states both)."""
    parts = [decision.from_fit(fits["logit_std"], label="logit-std slope", n=n_seeds)]
    if flag == SATURATES:
        g = fits["grad_mean_abs"]
        parts.append(decision.estimate(-g.slope, g.stderr, g.n - 2, n_seeds, label="-(mean |dL/dlogits| slope)",
                                       method="minus the slope (loglog)"))
    return parts


def measure_saturation(dims: list[int], seeds: list[int], rows: tuple[str, ...] | None = None,
                       min_slope: float = 0.1, n_keys: int = 64, n_queries: int = 32, batch: int = 8,
                       progress: Callable[[str], None] | None = None
                       ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, stats.SlopeFit]]]:
    """Run the check on each score function: (per (function, dim, seed) measurements, one summary row per
    function with its slopes, CIs, trends and classification, the slope fits per function)."""
    rows = tuple(SCORE_FUNCTIONS) if rows is None else rows
    per, summary, fits = [], [], {}
    for key in rows:
        label, overrides, expected, _ = SCORE_FUNCTIONS[key]
        if progress:
            progress(f"R2 saturation check: {label}, dims {dims}")
        rep = probes.saturation_check(probes.attention_score(score_config(overrides)), dims, n_keys=n_keys,
                                      n_queries=n_queries, batch=batch, seeds=seeds, min_slope=min_slope)
        m = rep.measurements.assign(function=key)
        per.append(m)
        fits[key] = rep.slopes
        top = m[m["dim"] == m["dim"].max()]
        rec = {"function": key, "label": label, "expected": expected or "report", "flag": classify(rep),
               "entropy_ratio_at_max_dim": float(top["entropy_ratio"].mean())}
        for col, fit in rep.slopes.items():
            rec.update({f"{col}_slope": fit.slope, f"{col}_lo": fit.lo, f"{col}_hi": fit.hi,
                        f"{col}_trend": rep.trends[col]})
        summary.append(rec)
    return pd.concat(per, ignore_index=True), pd.DataFrame(summary), fits


def describe(r) -> str:
    """One row of the summary, as a criterion's detail."""
    return (f"{r.label}: logit-std slope {r.logit_std_slope:.3f} [{r.logit_std_lo:.3f}, {r.logit_std_hi:.3f}], "
            f"|dL/dlogits| slope {r.grad_mean_abs_slope:.3f} [{r.grad_mean_abs_lo:.3f}, {r.grad_mean_abs_hi:.3f}], "
            f"entropy/ln n at the largest dim {r.entropy_ratio_at_max_dim:.3f} (95% CIs) -> the check says "
            f"'{r.flag}' (predicted: {r.expected})")


def heatmap(per: pd.DataFrame, summary: pd.DataFrame):
    """R2's table as a heatmap: logit std and mean |dL/dlogits| (relative to the smallest dim) per function x dim."""
    means = per.groupby(["function", "dim"], sort=False)[["logit_std", "grad_mean_abs", "entropy_ratio"]].mean()
    keys = list(summary["function"])
    dims = sorted(per["dim"].unique())
    std = np.array([[means.loc[(k, d), "logit_std"] for d in dims] for k in keys])
    grad = np.array([[means.loc[(k, d), "grad_mean_abs"] for d in dims] for k in keys])
    grad = grad / grad[:, :1]
    ent = np.array([[means.loc[(k, d), "entropy_ratio"] for d in dims] for k in keys])
    labels = [f"{r.label}\n-> {r.flag} (pred.: {r.expected})" for r in summary.itertuples()]
    fig, axes = plt.subplots(1, 3, figsize=(17, 0.75 * len(keys) + 2.2), sharey=True)
    panels = ((np.log10(std), std, "logit std (color: log10)", "coolwarm", (-1.5, 1.5)),
              (np.log2(grad), grad, "mean |dL/dlogits| / value at smallest dim (color: log2)", "coolwarm_r", (-3, 3)),
              (ent, ent, "entropy / ln n", "viridis", (0, 1)))
    for ax, (color, values, title, cmap, (lo, hi)) in zip(axes, panels):
        im = ax.imshow(color, cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        for i in range(len(keys)):
            for j in range(len(dims)):
                ax.text(j, i, f"{values[i, j]:.2g}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(dims)), [str(d) for d in dims])
        ax.set_xlabel("dimension d_k")
        ax.set_title(title, fontsize=9)
        fig.colorbar(im, ax=ax, fraction=0.046)
    axes[0].set_yticks(range(len(keys)), labels, fontsize=8)
    fig.suptitle("R2: saturation check on the model's compatibility functions (q, k iid N(0,1))")
    fig.tight_layout()
    return fig


# arm of harness.trial.kernel_probes.saturation -> (criterion, predicted flag)
KERNEL_ARMS = {"scale=None": ("kernel_default_not_flagged", NOT_FLAGGED), "scale=1": ("kernel_unscaled_flagged",
                                                                                       SATURATES)}
#: a kernel on trial's criteria: the check's band per arm, through the kernel
KERNEL_CRITERIA = {name: flag_criterion(f"the kernel at {arm}", flag, "the recovered logit std against d_k", fast=True,
                                        quote=QUOTES[name])
                   for arm, (name, flag) in KERNEL_ARMS.items()}


def kernel_trial(ev, kernel, trial: dict, min_slope: float, seeds, device,
                 progress=lambda msg, force=False: None) -> None:
    """R2 on a kernel under trial: the check's bands declared per arm, measured through the kernel, recorded."""
    how = (f"harness.trial.kernel_probes.saturation over d_k {trial['d_ks']} x {len(seeds)} seeds, unit-variance q and k, "
           "weights read out of the kernel")
    declared = ev.declare(KERNEL_CRITERIA, how=how, min_slope=min_slope)
    crits = {arm: declared[name] for arm, (name, _) in KERNEL_ARMS.items()}
    progress(f"kernel {kernel.name}: saturation check over d_k {trial['d_ks']}", force=True)
    sat = kernel_probes.saturation(kernel, trial["d_ks"], seeds, n_queries=trial["n_queries"],
                                   n_keys=trial["n_keys"], dtype=DTYPES[kernel.dtypes[0]], device=device)
    for arm, crit in crits.items():
        if sat.rejected:
            crit.unmeasured(sat.rejected)
            continue
        f = sat.fits[arm]
        crit.about("scale (saturation)")
        crit.measure(slope_parts(f, KERNEL_ARMS[arm][1], len(seeds)),
                     detail=f"logit std: {f['logit_std']}; mean |dL/dlogits|: {f['grad_mean_abs']}")
        ev.metric(f"saturation_kernel_logit_std_slope_{arm}", f["logit_std"].slope)
    if len(sat.table):
        ev.table("kernel_saturation", sat.table)
        ent = sat.table.groupby(["arm", "d_k"]).entropy_ratio.mean()
        ev.note("Entropy / ln S through the kernel (C3 a): " + "; ".join(
            f"{arm} d_k={d}: {v:.3f}" for (arm, d), v in ent.items()))
    ev.note("The model-level criteria of this claim judge this project's MultiHeadAttention and are not run on a kernel.")
    ev.headline("saturation_kernel_logit_std_slope_scale=None")


#: a model on trial's criterion (issue 40): R2's check along the model's width, through its own init and attention.
#: Reported (issue 55): it reads the model's init through the check, as ``default_not_flagged`` reads the suite's
#: own default, so a growth it flags is the check working, not evidence against the recommendation (``MODEL_RULE``)
MODEL_CRITERIA = {
    "model_width_not_flagged": dict(
        role="reported",
        quote=("When a compatibility function’s magnitude grows with a dimension, check what that does to the "
               "softmax’s gradients."),
        rule=lambda min_slope: decision.band(-min_slope, min_slope, reason="the check's own band: flat is under 7% "
                                             "a doubling (min_slope)"),
        metric="log-log slope of the model-wide logit std against width (seeds as replicates)",
        prediction="at random init the model's compatibility function does not grow with its width over {widths} "
                   "(head dim held): the check says 'not flagged' (log-log slope within +-{min_slope:g})"),
}
#: the rule for a model on trial (issue 55), written into its record: why the width criterion counts nothing
MODEL_RULE = ("R2 recommends a check: when a compatibility function's magnitude grows with a dimension, check what that "
              "does to the softmax's gradients. On a model on trial the check is run along its width "
              "(model_width_not_flagged, reported): it reads the model's init through the check, not the check, so a "
              "growth it flags is the check doing its work and says nothing against the recommendation, however near "
              "or far from saturation the config's own width is (the rule of default_not_flagged on the suite's own "
              "model). Whether the flag foretells a softmax that trains badly would need training at the widths the "
              "growth reaches, which is not done here")
#: the scaled logit std the growth is extrapolated to: the top of the footnote's factor-2 band on the logits the
#: softmax sees (Q3's scale half, log2 std <= 1: the band ``checkpoint_scale_layer<i>`` counts)
SATURATING_STD = 2.0


def saturating_width(fam: pd.DataFrame, slope: float, std: float = SATURATING_STD) -> float | None:
    """The width at which the logit std reaches ``std`` along the fitted power law (``slope``, through the
    geometric mean of the family's points), or None where it does not grow (a slope of at most 0)."""
    if not slope > 0:
        return None
    lx, ly = np.log(fam.width.to_numpy(float)), np.log(fam.logit_std.to_numpy(float))
    return float(np.exp(lx.mean() + (np.log(std) - ly.mean()) / slope))


def growth_words(fam: pd.DataFrame, fit, grad, widths: list, min_slope: float, own: int | None) -> str:
    """What the check found along width, in words: the exponent, what it does to the entropy and the softmax's
    gradient at the largest width, and (where the logits grow) the width at which the growth reaches
    ``SATURATING_STD``, against the config's own width ``own``."""
    top = fam[fam.width == max(widths)]
    at_top = (f"at width {max(widths)} the logit std is {top.logit_std.mean():.3g}, entropy / ln n "
              f"{top.entropy_ratio.mean():.3f}, and mean |dL/dlogits| goes as width^{grad.slope:.3f} "
              f"[{grad.lo:.3f}, {grad.hi:.3f}]")
    found = f"width^{fit.slope:.3f} [{fit.lo:.3f}, {fit.hi:.3f}] over {widths} at random init (head dim held)"
    if abs(fit.slope) <= min_slope:
        return f"the check does not flag the model: its logit std goes as {found}, within +-{min_slope:g}; {at_top}"
    if fit.slope < 0:
        return (f"the check flags the model the other way: its logit std shrinks as {found}, so along the power law "
                f"it never reaches saturation and attention goes towards uniform; {at_top}")
    w = saturating_width(fam, fit.slope)
    lx, ly = np.log(fam.width.to_numpy(float)), np.log(fam.logit_std.to_numpy(float))
    where = ""
    if own:
        std_own = float(np.exp(ly.mean() + fit.slope * (np.log(own) - lx.mean())))
        where = (f"; the config's own width {own} is {w / own:.3g} times below it (logit std {std_own:.3g} there, "
                 "extrapolated)" if own < w else f"; the config's own width {own} is past it (logit std "
                 f"{std_own:.3g} there, extrapolated)")
    at = f"{w:.0f}" if w < 1e6 else f"{w:.3g}"
    return (f"the check flags the model: its logit std grows as {found}; {at_top}. Along the fitted power law the "
            f"logit std reaches {SATURATING_STD:g} (the top of the footnote's factor-2 band, which Q3 counts "
            f"on a checkpoint's scaled logits) at width {at}{where}")


def model_trial(ev, trial, block: dict, seeds, progress=lambda msg, force=False: None) -> None:
    """R2 on a user's model (``--model``): the check along width, reported, with what the growth does to the
    softmax's gradient and where it would reach saturation (``growth_words``); R2 counts nothing (``MODEL_RULE``)."""
    from harness.trial import model_reads as trials

    crit = ev.declare(MODEL_CRITERIA, widths=block["widths"], min_slope=block["min_slope"])["model_width_not_flagged"]
    ev.counts_nothing(MODEL_RULE)
    progress = trials.at_init(ev, trial, seeds, "R2's check along width", progress)
    progress(f"model {trial.spec}: logit std over width {block['widths']}", force=True)
    fam, why = trials.sweep(trial, "width", block["widths"], seeds, block["batch"], block["length"])
    if fam is None:
        crit.unmeasured(f"the width family cannot be built: {why}")
        return
    ev.table("model_logit_std_vs_width", fam)
    fit = stats.replicate_slope(fam.width, fam.logit_std, fam.seed)
    grad = stats.replicate_slope(fam.width, fam.grad_mean_abs, fam.seed)
    words = growth_words(fam, fit, grad, block["widths"], block["min_slope"], trial.width)
    crit.about("init scale", "" if abs(fit.slope) <= block["min_slope"] else
               f"logit std ~ width^{fit.slope:.2f} over {block['widths']}")
    crit.fit(fit, detail=words)
    ev.metric("model_logit_std_slope/width", fit.slope)
    ev.metric("model_grad_slope/width", grad.slope)
    if abs(fit.slope) > block["min_slope"] and fit.slope > 0:
        ev.metric("model_saturating_width", saturating_width(fam, fit.slope))
    ev.note(f"What the check found (R2's question, reported): {words}.")
    progress(f"R2 on the model: {words}", force=True)
    ev.headline("model_logit_std_slope/width")


# ================================================================================================ the test
def test_r2_saturation_check(evidence, profile, device, seeds, progress, fast, attention, model_on_trial):
    block = profile.claim(CLAIM_ID)
    ev = evidence
    ev.claim(CLAIM_ID, title="Check what a growing compatibility function does to the softmax",
             statement=("When a compatibility function's magnitude grows with a dimension, check what that does "
                        "to the softmax's gradients."),
             strength="moderate", kind="recommendation",
             limitation=("The variance argument holds at initialization, where components are plausibly "
                         "independent with unit variance; whether it holds after training is not addressed. "
                         + ("The check here is at init, on the model's own q and k over its width family."
                            if model_on_trial is not None else "The check here is at init, on iid N(0,1) q and k.")))
    if model_on_trial is not None:
        from harness.trial.model_reads import AT_INIT_OBJECTIONS

        ev.answer_objections(AT_INIT_OBJECTIONS)
    else:
        ev.answer_objections(OBJECTIONS)
    min_slope = float(block["min_slope"])
    if model_on_trial is not None:
        return model_trial(ev, model_on_trial, profile.claim("model_trial"), seeds, progress)
    if attention is not None:
        return kernel_trial(ev, attention, profile.claim("kernel_trial"), min_slope, seeds, device, progress)
    if fast:
        pytest.skip("R2 counts no fast criterion on the project's model: its iid slopes are premises and "
                    "default_not_flagged is reported (R1 counts the default scale)")
    rows = FAST_ROWS if fast else tuple(SCORE_FUNCTIONS)
    how = f"harness.measure.probes.saturation_check over dims {block['dims']} x {len(seeds)} seeds, iid N(0, 1) q and k"
    declared = ev.declare(CRITERIA, fast=fast, how=how, min_slope=min_slope)
    ev.counts_nothing("R2 checks the saturation check on iid inputs: its rows are slopes, identities of the "
                      "variance argument that calibrate the check (premises) or read the model's default scale "
                      "(reported, R1 counts it). How a flagged score trains is measured in C3 and C4, which train "
                      "two of the scores it "
                      "flags (the unscaled dot, flagged 'saturates', in both; 1/d_k, flagged 'goes uniform', as "
                      "C4's alpha = 1) and count their own criteria; R2 declares none over their runs, so whether "
                      "its flag foretells how a score trains is not tested here")
    # score function -> its flag's criterion (the rows this run checks)
    crits = {key: declared[name] for key in rows if (name := SCORE_FUNCTIONS[key][3]) is not None}
    if not fast:
        ev.gate("saturation_flags_matched", direction="higher", tolerance=0.0)
    ev.gate("saturation_logit_std_slope_default", direction="both", tolerance=0.1)

    per, summary, fits = measure_saturation(block["dims"], seeds, rows, min_slope=min_slope,
                                            n_keys=block["n_keys"], n_queries=block["n_queries"],
                                            batch=block["batch"], progress=progress)
    s = summary.set_index("function")
    for key, crit in crits.items():
        crit.measure(slope_parts(fits[key], SCORE_FUNCTIONS[key][2], len(seeds)),
                     detail=describe(next(summary[summary["function"] == key].itertuples())))
    if "inverse_dk_entropy_at_max_dim" in declared:
        top = per[(per["function"] == "inverse_dk") & (per["dim"] == per["dim"].max())]
        declared["inverse_dk_entropy_at_max_dim"].sample(
            top["entropy_ratio"], detail=f"dim {int(top['dim'].iloc[0])}, n = {block['n_keys']} keys")

    predicted = summary[summary["function"].isin(list(crits))]
    ev.metric("saturation_flags_matched", float((predicted["flag"] == predicted["expected"]).mean()))
    for r in summary.itertuples():
        ev.metric(f"saturation_logit_std_slope_{r.function}", r.logit_std_slope)
        ev.metric(f"saturation_grad_slope_{r.function}", r.grad_mean_abs_slope)
    ev.table("saturation_summary", summary)
    ev.table("saturation_per_seed", per)
    ev.figure("saturation_heatmap", heatmap(per, summary))
    if "additive" in s.index:
        a = s.loc["additive"]
        ev.note(f"Additive attention with the default init (v_a ~ U(+-1/sqrt d_k), one tanh layer): the check "
                f"finds '{a['flag']}' (logit-std slope {a['logit_std_slope']:.3f} [{a['logit_std_lo']:.3f}, "
                f"{a['logit_std_hi']:.3f}]): the sum over d_k bounded tanh terms is divided by the init of v_a, "
                f"so the growth the paper attributes to d_k does not appear at init.")
    if "qk_norm_l2" in s.index:
        b = s.loc["qk_norm_l2"]
        ev.note(f"L2 QK-norm with its gain at 1 and the 1/sqrt(d_k) scale: '{b['flag']}' (logit-std slope "
                f"{b['logit_std_slope']:.3f}). cos(q, k) of iid vectors has variance 1/d_k, so the L2 form needs its "
                "learnable gain (Henry et al. 2020 initialise it from the sequence length) to undo the shrinkage; "
                "the layernorm form keeps unit-variance components and is not flagged.")
    ev.note("Inputs: q, k iid N(0, 1) fed to the model's MultiHeadAttention with W^Q = W^K = I (the footnote's "
            "premise), softmax gradient from a random linear loss on the attention output, so dL/dlogits passes "
            "through the softmax Jacobian. Flags are per score function over all (dim, seed) points.")
    ev.headline("saturation_flags_matched")
