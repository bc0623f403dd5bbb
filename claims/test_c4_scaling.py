"""C4: 1/sqrt(d_k) is the right scale (NOTE-011, claim C4, strength strong).

The note's support is the footnote's arithmetic: with q and k components independent, mean 0 and variance 1,
q.k = sum_i q_i k_i has variance d_k, and 1/sqrt(d_k) brings it back to 1. Three measurements (issue 5):

(a) ``iid_*``: the arithmetic itself, on iid components from three distributions (normal, uniform, Rademacher)
    over d_k in {8 .. 1024}: log-log slope of Var(q.k) against d_k, and Var(q.k / sqrt(d_k)) at every d_k.
(b) ``model_*``: the real model at init, read through the taps (``*.self_attn.q``, ``.k``, ``.logits``), with
    both inits (torch_default, xavier) and both geometries (d_model = h*d_k, and a fixed d_model). The scaled
    slope is that of the DEFAULT-configured model's logits tap, so a change of the default scale (faults
    ``no_scale``, ``scale_by_dk``) moves it to +1 / -1: ``model_scaled_slope`` is the fast criterion (issue 10).
    Per-component Var(q), Var(k) are reported: with PyTorch's default Linear init they are 1/3 of the input's
    variance (kaiming_uniform(a=sqrt 5) gives Var(w) = 1/(3 fan_in)), not 1, so the footnote's premise fails
    while its scaling law holds.
    Pre-registered exception: xavier init at a FIXED d_model has Var(w) = 2/(d_model + h*d_k), so Var(q_i)
    itself shrinks as d_k grows and Var(q.k) = d_k Var(q_i) Var(k_i) is no longer proportional to d_k. Its raw
    slopes are reported as a criterion that does not count (the premise that component variance is independent
    of d_k is broken by the init there, not by attention), beside the footnote's law itself, counted in every
    configuration (``model_variance_law``: slope of Var(q.k) / (Var q_i Var k_i) is 1).
(c) ``alpha_*``: train with scale d_k^-alpha, alpha in {0, .25, .5, .75, 1}, at a small and a large d_k, on
    key-value lookup; alpha = 0.5 should be among the best, 0 and 1 should fall behind at the large d_k.
"""
from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import pytest
import torch

from harness import probes, stats, sweeps
from harness.sweeps import attention_variant_sweep, summary_table
from model import EncoderTagger, ModelConfig, capture

# one xdist worker for every module of the shared sweep (harness.sweeps): its runs train once
pytestmark = [pytest.mark.claim("C4"), pytest.mark.xdist_group(sweeps.XDIST_GROUP)]

CLAIM_ID = "C4"

# (a) thresholds (issue 5)
IID_SLOPE_BAND = (0.95, 1.05)
IID_SCALED_BAND = (0.95, 1.05)
# (b) thresholds (issue 5)
MODEL_SLOPE_BAND = (0.9, 1.1)
MODEL_SCALED_MAX = 0.1

INITS = ("torch_default", "xavier")
GEOMETRIES = ("d_model=h*d_k", "fixed d_model")
# Configurations whose init keeps Var(q_i) independent of d_k: PyTorch's default scales Linear weights by fan_in
# only (d_model, which grows with d_k or is fixed), xavier by fan_in + fan_out = 2 h d_k when d_model = h d_k.
# Xavier at a fixed d_model has Var(w) = 2 / (d_model + h d_k): the footnote's premise breaks with d_k.
PREMISE_HOLDS = {("torch_default", "d_model=h*d_k"), ("torch_default", "fixed d_model"),
                 ("xavier", "d_model=h*d_k")}


# ============================================================================== (a) iid components
def _normal(g: torch.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    return torch.randn(shape, generator=g)


def _uniform(g: torch.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    return (torch.rand(shape, generator=g) * 2.0 - 1.0) * math.sqrt(3.0)      # U(-sqrt 3, sqrt 3): variance 1


def _rademacher(g: torch.Generator, shape: tuple[int, ...]) -> torch.Tensor:
    return torch.randint(0, 2, shape, generator=g).to(torch.float32) * 2.0 - 1.0


# mean 0, variance 1, independent components: the footnote's premise, three ways
IID_DISTRIBUTIONS: dict[str, Callable[[torch.Generator, tuple[int, ...]], torch.Tensor]] = {
    "normal": _normal, "uniform": _uniform, "rademacher": _rademacher}

_CHUNK_ELEMENTS = 1 << 21


@dataclass
class IidMeasurement:
    """``per_seed``: one row per (distribution, seed, d_k) with Var(q.k); ``per_dk``: one row per
    (distribution, d_k) with Var(q.k / sqrt(d_k)) over all seeds' draws and its 95% CI (stats.variance_ci)."""
    per_seed: pd.DataFrame
    per_dk: pd.DataFrame


def measure_iid_variance(dims: list[int], n_samples: int, seeds: list[int],
                         distributions: dict[str, Callable] | None = None) -> IidMeasurement:
    """Draw ``n_samples`` independent (q, k) pairs per (distribution, seed, d_k) (fresh draws for every d_k, so
    the regression's points are independent); q.k is summed in float32."""
    distributions = IID_DISTRIBUTIONS if distributions is None else distributions
    rows, pooled = [], {}
    for di, (name, draw) in enumerate(distributions.items()):
        for seed in seeds:
            g = torch.Generator().manual_seed(int(seed) * 7919 + di)
            for d_k in dims:
                chunk = max(1, _CHUNK_ELEMENTS // d_k)
                dots = [(draw(g, (n, d_k)) * draw(g, (n, d_k))).sum(1)       # float32: rel. error ~1e-6
                        for n in (min(chunk, n_samples - s) for s in range(0, n_samples, chunk))]
                qk = torch.cat(dots).double().numpy()
                rows.append({"distribution": name, "seed": seed, "d_k": d_k, "n": n_samples,
                             "var_qk": float(qk.var(ddof=1)), "var_qk_scaled": float(qk.var(ddof=1)) / d_k})
                pooled.setdefault((name, d_k), []).append(qk / math.sqrt(d_k))
    per_dk = []
    for (name, d_k), parts in pooled.items():
        ci = stats.variance_ci(np.concatenate(parts))
        per_dk.append({"distribution": name, "d_k": d_k, "n": ci.n, "var_scaled": ci.mean,
                       "ci_lo": ci.lo, "ci_hi": ci.hi})
    return IidMeasurement(pd.DataFrame(rows), pd.DataFrame(per_dk))


def _slopes(df: pd.DataFrame, by: list[str], y: str) -> dict[tuple, stats.SlopeFit]:
    """log-log slope of ``y`` against d_k, per group, over every (seed, d_k) point of the group."""
    return {key if isinstance(key, tuple) else (key,): stats.loglog_slope(g["d_k"], g[y])
            for key, g in df.groupby(by, sort=False)}


def evaluate_iid(m: IidMeasurement, slope_band=IID_SLOPE_BAND, scaled_band=IID_SCALED_BAND) -> dict:
    """Both (a) criteria. Slope: every distribution's 95% CI within ``slope_band`` (refuted when one CI lies
    wholly outside it). Scaled: every (distribution, d_k) CI of Var(q.k/sqrt d_k) within ``scaled_band``."""
    un = _slopes(m.per_seed, ["distribution"], "var_qk")
    sc = _slopes(m.per_seed, ["distribution"], "var_qk_scaled")
    lo, hi = slope_band
    slope_ok = all(f.within(lo, hi) for f in un.values())
    slope_refuted = any(f.hi < lo or f.lo > hi for f in un.values())
    worst = max(un.values(), key=lambda f: max(abs(f.lo - 1.0), abs(f.hi - 1.0)))
    pd_ = m.per_dk
    slo, shi = scaled_band
    inside = (pd_["ci_lo"] >= slo) & (pd_["ci_hi"] <= shi)
    outside = (pd_["ci_hi"] < slo) | (pd_["ci_lo"] > shi)
    bad = pd_[~inside]
    far = pd_.loc[(pd_["var_scaled"] - 1.0).abs().idxmax()]
    return {
        "slope": {"measured": float(np.mean([f.slope for f in un.values()])), "ci": worst.ci,
                  "passed": slope_ok, "refuted": slope_refuted,
                  "detail": "; ".join(f"{k[0]} {f}" for k, f in un.items())},
        "scaled": {"measured": float(far["var_scaled"]), "ci": (float(far["ci_lo"]), float(far["ci_hi"])),
                   "passed": bool(inside.all()), "refuted": bool(outside.any()),
                   "detail": (f"{int(inside.sum())}/{len(pd_)} (distribution, d_k) CIs within [{slo}, {shi}]; "
                              f"farthest from 1: {far['distribution']} d_k={int(far['d_k'])} "
                              f"{far['var_scaled']:.4f} [{far['ci_lo']:.4f}, {far['ci_hi']:.4f}]"
                              + ("" if bad.empty else "; outside: " + ", ".join(
                                  f"{r.distribution}@{int(r.d_k)}" for r in bad.itertuples())))},
        "slope_unscaled": float(np.mean([f.slope for f in un.values()])),
        "slope_scaled": float(np.mean([f.slope for f in sc.values()])),
        "fits_unscaled": un, "fits_scaled": sc,
    }


# ============================================================================== (b) the model at init
def model_config(init: str, geometry: str, d_k: int, heads: int, fixed_d_model: int, n_layers: int,
                 vocab: int, max_len: int) -> ModelConfig:
    """The default Transformer encoder (default scale, post-LN, sinusoidal) with d_k set; only the attention
    matters here, so the FFN is kept narrow (d_ff = 64) to make d_model = h*d_k = 4096 affordable."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {GEOMETRIES}, got {geometry!r}")
    d_model = heads * d_k if geometry == "d_model=h*d_k" else fixed_d_model
    return ModelConfig(src_vocab=vocab, d_model=d_model, n_heads=heads, d_k=d_k, d_v=max(d_model // heads, 1),
                       d_ff=64, n_encoder_layers=n_layers, init=init, max_len=max_len)


def measure_model_init(dims: list[int], seeds: list[int], heads: int, fixed_d_model: int, n_layers: int = 2,
                       batch: int = 8, seq_len: int = 32, vocab: int = 32, draws: int = 1,
                       configs: list[tuple[str, str]] | None = None, device: str | torch.device = "cpu",
                       progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """One row per (init, geometry, seed, d_k, layer): the component variance of q and k, the unscaled Var(q.k)
    read from the ``q``/``k`` taps, and Var(logits) from the ``logits`` tap, i.e. as the model's DEFAULT path scales
    them now (a scale fault acts there). Inputs are random tokens; model and tokens are drawn afresh per
    (seed, d_k, draw), so the slope's points are independent; ``draws`` models per (seed, d_k) each give a point
    (one init's Var(q.k) scatters by ~10% at small d_k, where a head has few weights).

    Component variance here is over every (token, component) entry (``q.var()``), the footnote's random variable:
    a component drawn with the weights, whose mean is 0 over inits. ``probes.component_variance`` centres each
    component on its own mean over tokens, which drops the bias and input-mean offsets that Var(q.k) still sees."""
    configs = [(i, g) for i in INITS for g in GEOMETRIES] if configs is None else configs
    rows = []
    for init, geometry in configs:
        if progress:
            progress(f"C4(b) model at init: {init}, {geometry}, d_k {dims}")
        for seed, d_k, draw in itertools.product(seeds, dims, range(draws)):
            stream = int(seed) * 1009 + d_k + 100_003 * draw
            torch.manual_seed(stream)
            cfg = model_config(init, geometry, d_k, heads, fixed_d_model, n_layers, vocab, seq_len)
            model = EncoderTagger(cfg, n_classes=2).to(device).eval()
            x = torch.randint(0, vocab, (batch, seq_len), generator=torch.Generator().manual_seed(stream)).to(device)
            with torch.no_grad(), capture(model, "*.self_attn.q", "*.self_attn.k", "*.self_attn.logits") as c:
                model(x)
            for layer in range(n_layers):
                p = f"encoder.layers.{layer}.self_attn."
                q, k, logits = c[p + "q"], c[p + "k"], c[p + "logits"]
                var_qk = probes.qk_logit_variance(q, k)
                rows.append({"init": init, "geometry": geometry, "layer": layer, "seed": seed, "draw": draw,
                             "d_k": d_k, "d_model": cfg.d_model, "heads": heads,
                             "var_q": float(q.double().var()), "var_k": float(k.double().var()),
                             "var_qk": var_qk, "var_logits": probes.logit_std(logits) ** 2,
                             "scale_x_sqrt_dk": math.sqrt(probes.logit_std(logits) ** 2 / var_qk * d_k)})
    df = pd.DataFrame(rows)
    df["var_qk_normalised"] = df["var_qk"] / (df["var_q"] * df["var_k"])
    return df


def evaluate_model(df: pd.DataFrame, band=MODEL_SLOPE_BAND, scaled_max=MODEL_SCALED_MAX) -> dict:
    """Slopes per (init, geometry, layer) and the three counted (b) criteria plus the reported exception:

    * ``scaled``: |slope of Var(logits)| < ``scaled_max`` in every premise-holding configuration and layer
      (refuted when a CI lies wholly beyond it);
    * ``unscaled``: slope of Var(q.k) with its CI within ``band``, same configurations;
    * ``law``: slope of Var(q.k) / (Var q_i Var k_i) within ``band`` in EVERY configuration;
    * ``xavier_fixed``: the issue's raw criteria for xavier at a fixed d_model (reported, does not count).
    """
    keys = ["init", "geometry", "layer"]
    fits = {name: _slopes(df, keys, col) for name, col in
            (("unscaled", "var_qk"), ("scaled", "var_logits"), ("law", "var_qk_normalised"))}
    table = pd.DataFrame([{"init": k[0], "geometry": k[1], "layer": k[2], "quantity": q, "slope": f.slope,
                           "ci_lo": f.lo, "ci_hi": f.hi, "n_points": f.n,
                           "premise_holds": (k[0], k[1]) in PREMISE_HOLDS}
                          for q, per in fits.items() for k, f in per.items()])
    lo, hi = band

    def verdict(quantity: str, premise: bool | None, kind: str) -> dict:
        t = table[table["quantity"] == quantity]
        if premise is not None:
            t = t[t["premise_holds"] == premise]
        if t.empty:
            return {"measured": None, "passed": False, "refuted": False, "detail": "not measured"}
        if kind == "band":
            ok = (t["ci_lo"] >= lo) & (t["ci_hi"] <= hi)
            out = (t["ci_hi"] < lo) | (t["ci_lo"] > hi)
            worst = t.loc[(t["slope"] - 1.0).abs().idxmax()]
        else:
            ok = t["slope"].abs() < scaled_max
            out = (t["ci_lo"] > scaled_max) | (t["ci_hi"] < -scaled_max)
            worst = t.loc[t["slope"].abs().idxmax()]
        detail = "; ".join(f"{r.init}/{r.geometry}/L{r.layer} {r.slope:.3f} [{r.ci_lo:.3f}, {r.ci_hi:.3f}]"
                           for r in t.itertuples())
        return {"measured": float(worst["slope"]), "ci": (float(worst["ci_lo"]), float(worst["ci_hi"])),
                "passed": bool(ok.all()), "refuted": bool(out.any()), "detail": detail}

    default = table[(table["init"] == "torch_default") & (table["geometry"] == "d_model=h*d_k")]
    comp = df[df["init"] == "torch_default"]
    return {
        "table": table,
        "scaled": verdict("scaled", True, "max"),
        "unscaled": verdict("unscaled", True, "band"),
        "law": verdict("law", None, "band"),
        "xavier_fixed_unscaled": verdict("unscaled", False, "band"),
        "xavier_fixed_scaled": verdict("scaled", False, "max"),
        "slope_unscaled": float(default[default["quantity"] == "unscaled"]["slope"].mean())
        if not default.empty else math.nan,
        "slope_scaled": float(default[default["quantity"] == "scaled"]["slope"].mean())
        if not default.empty else math.nan,
        # layers >= 1 read a LayerNorm output (unit variance): Var(q_i) there is what the Linear init alone does
        "component_var_default_init": float(((comp["var_q"] + comp["var_k"]) / 2)[comp["layer"] >= 1].mean())
        if not comp.empty and (comp["layer"] >= 1).any() else math.nan,
        "component_var_default_init_layer0": float(((comp["var_q"] + comp["var_k"]) / 2)[comp["layer"] == 0].mean())
        if not comp.empty else math.nan,
    }


# ============================================================================== (c) scale-exponent sweep
def alpha_variants(alphas: list[float]) -> dict[str, dict]:
    """Sweep variants: scale = d_k^-alpha through ``ModelConfig.scale_exponent`` (explicit, so a scale fault
    leaves them alone; alpha = 0.5 and 0 are the same runs as C3's scaled and unscaled in harness.sweeps' memo)."""
    return {f"alpha={float(a):g}": {"scale_exponent": float(a)} for a in alphas}


def measure_alpha_sweep(sweep_budget: dict, d_ks: list[int], alphas: list[float], seeds: list[int],
                        lr_factors: list[float] = (1.0,), device: str | torch.device = "cpu",
                        progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Train the sweep's one-layer key-value model with scale d_k^-alpha for every (d_k, alpha, lr, seed) through
    the shared ``harness.sweeps.attention_variant_sweep`` (``sweep_budget``: its budget block; each lr factor
    multiplies the block's ``train.lr``, factor 1 being the very runs C3 and R1 use); one row per run with the
    held-out accuracy and loss at the fixed budget."""
    variants = alpha_variants(alphas)
    alpha_of = {name: spec["scale_exponent"] for name, spec in variants.items()}
    frames = []
    for factor in lr_factors:
        budget = copy.deepcopy(sweep_budget)
        budget["train"]["lr"] = float(budget["train"].get("lr", 1e-3)) * float(factor)
        df = summary_table(attention_variant_sweep(variants, d_ks, budget, seeds, device=device, progress=progress))
        df = df.rename(columns={"final_accuracy": "accuracy", "final_loss": "loss"})
        df.insert(0, "lr", budget["train"]["lr"])
        df.insert(0, "alpha", df["variant"].map(alpha_of))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def at_best_lr(df: pd.DataFrame) -> pd.DataFrame:
    """Each (d_k, alpha) at its own best learning rate (highest mean accuracy, then lowest mean loss): the
    comparison of scales is fair only when no scale is handicapped by a rate tuned for another."""
    keep = []
    for (d_k, alpha), g in df.groupby(["d_k", "alpha"]):
        means = g.groupby("lr")[["accuracy", "loss"]].mean().sort_values(["accuracy", "loss"], ascending=[False, True])
        keep.append(g[g["lr"] == means.index[0]])
    return pd.concat(keep, ignore_index=True)


def _best_alpha(g: pd.DataFrame) -> float:
    """Highest mean held-out accuracy; ties (e.g. several alphas at 1.000) broken by the lower mean loss."""
    means = g.groupby("alpha")[["accuracy", "loss"]].mean()
    return float(means.sort_values(["accuracy", "loss"], ascending=[False, True]).index[0])


def evaluate_alpha(df: pd.DataFrame, alpha_level: float = 0.05) -> dict:
    """The three (c) criteria. The 'CI of the best alpha' is the set of alphas whose accuracy is not
    significantly below the best alpha's (one-sided Welch, p >= alpha_level); 'falls behind' is a one-sided
    Welch test best > alpha at p < alpha_level (refuted when alpha is significantly better than 0.5)."""
    d_small, d_large = min(df["d_k"]), max(df["d_k"])
    out: dict = {"best": {}, "best_set": {}, "tests": []}
    for d_k, g in df.groupby("d_k"):
        best = _best_alpha(g)
        acc = {a: gg["accuracy"].to_numpy() for a, gg in g.groupby("alpha")}
        members = []
        for a in sorted(acc):
            t = stats.welch_t(acc[best], acc[a], alternative="greater") if a != best else None
            worse = t is not None and t.significant(alpha_level)
            if not worse:
                members.append(a)
            out["tests"].append({"d_k": d_k, "alpha": a, "best_alpha": best, "mean_accuracy": float(acc[a].mean()),
                                 "best_minus_alpha": float(acc[best].mean() - acc[a].mean()),
                                 "p_best_greater": None if t is None else t.p_value, "in_best_set": not worse})
        out["best"][d_k], out["best_set"][d_k] = best, members
    tests = pd.DataFrame(out["tests"])
    out["tests"] = tests

    def row(d_k, a):
        return tests[(tests["d_k"] == d_k) & (tests["alpha"] == a)].iloc[0]

    half_in = [0.5 in out["best_set"][d] for d in (d_small, d_large)]
    out["alpha_half"] = {"measured": [out["best"][d_small], out["best"][d_large]], "passed": all(half_in),
                   "refuted": not all(half_in),
                   "detail": "; ".join(f"d_k={d}: best alpha {out['best'][d]}, not significantly worse than it: "
                                       f"{out['best_set'][d]}" for d in (d_small, d_large))}
    acc_large = {a: gg["accuracy"].to_numpy() for a, gg in df[df["d_k"] == d_large].groupby("alpha")}
    for a, key in ((0.0, "alpha0"), (1.0, "alpha1")):
        if a not in acc_large or 0.5 not in acc_large:
            out[key] = {"measured": None, "passed": False, "refuted": False, "detail": f"alpha {a} not in the sweep"}
            continue
        best = out["best"][d_large]
        r = row(d_large, a)
        p = r["p_best_greater"]
        p = None if p is None or not math.isfinite(p) else float(p)      # None: a is the best, or a tie
        behind = best != a and p is not None and p < alpha_level
        ahead = stats.welch_t(acc_large[a], acc_large[0.5], alternative="greater")
        out[key] = {"measured": float(r["mean_accuracy"]), "p_value": p,
                    "passed": bool(behind), "refuted": bool(ahead.significant(alpha_level)),
                    "detail": (f"d_k={d_large}: alpha={a} accuracy {r['mean_accuracy']:.3f} vs best alpha {best} "
                               f"{acc_large[best].mean():.3f} (one-sided Welch p="
                               f"{'n/a' if p is None else format(p, '.3g')}); alpha=0.5 {acc_large[0.5].mean():.3f}, "
                               f"one-sided Welch p that alpha {a} beats it: {ahead.p_value:.3g}")}
    out["best_alpha_small_dk"], out["best_alpha_large_dk"] = out["best"][d_small], out["best"][d_large]
    return out


# ============================================================================== figures
def figure_variance(iid: IidMeasurement | None, iid_eval: dict | None, model_df: pd.DataFrame,
                    model_eval: dict):
    """Var(q.k) against d_k, log-log, with the fitted slopes: (a) iid, (b) the model per init x geometry."""
    import matplotlib.pyplot as plt

    panels = (["iid"] if iid is not None else []) + ["model_unscaled", "model_scaled"]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.5))
    axes = np.atleast_1d(axes)
    i = 0
    if iid is not None:
        ax = axes[0]
        for (name,), fit in iid_eval["fits_unscaled"].items():
            g = iid.per_seed[iid.per_seed["distribution"] == name].groupby("d_k")["var_qk"].mean()
            ax.loglog(g.index, g.values, "o", label=f"{name}: slope {fit.slope:.3f} [{fit.lo:.3f}, {fit.hi:.3f}]")
            ax.loglog(g.index, np.exp(fit.intercept) * g.index.to_numpy(float) ** fit.slope, "-", alpha=0.5)
        for (name,), fit in iid_eval["fits_scaled"].items():
            g = iid.per_seed[iid.per_seed["distribution"] == name].groupby("d_k")["var_qk_scaled"].mean()
            ax.loglog(g.index, g.values, "x--", label=f"{name} / sqrt(d_k): slope {fit.slope:.3f}")
        ax.set_title("(a) iid components, mean 0, variance 1")
        i = 1
    table = model_eval["table"]
    for ax, (quantity, col, title) in zip(axes[i:], (("unscaled", "var_qk", "(b) model at init: Var(q.k)"),
                                                     ("scaled", "var_logits",
                                                      "(b) model at init: Var(logits tap), default scale"))):
        for (init, geom, layer), g in model_df.groupby(["init", "geometry", "layer"]):
            m = g.groupby("d_k")[col].mean()
            fit = table[(table["init"] == init) & (table["geometry"] == geom) & (table["layer"] == layer)
                        & (table["quantity"] == quantity)].iloc[0]
            ax.loglog(m.index, m.values, "o-" if layer == 0 else "s--", alpha=0.8,
                      label=f"{init}, {geom}, L{layer}: {fit.slope:.2f}")
        ax.set_title(title)
    for ax in axes:
        ax.set_xlabel("d_k")
        ax.set_ylabel("variance")
        ax.legend(fontsize=6.5)
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def figure_components(model_df: pd.DataFrame):
    """Per-component Var(q_i), Var(k_i) at init against d_k: the footnote assumes 1."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for (init, geom, layer), g in model_df.groupby(["init", "geometry", "layer"]):
        m = g.groupby("d_k")[["var_q", "var_k"]].mean().mean(axis=1)
        ax.semilogx(m.index, m.values, "o-" if layer == 0 else "s--", label=f"{init}, {geom}, L{layer}")
    ax.axhline(1.0, color="k", lw=0.8, label="footnote's premise (1)")
    ax.axhline(1 / 3, color="gray", lw=0.8, ls=":", label="1/3")
    ax.set_yscale("log")
    return _finish(fig, ax, "d_k", "per-component variance of q, k (mean)", "(b) component variance at init", 6.5)


def figure_alpha(df: pd.DataFrame, ev_alpha: dict):
    """The alpha sweep: held-out accuracy against alpha at each d_k (mean with t 95% CI, and every seed)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for d_k, g in df.groupby("d_k"):
        alphas = sorted(g["alpha"].unique())
        cis = [stats.t_ci(g[g["alpha"] == a]["accuracy"]) for a in alphas]
        mean = [c.mean for c in cis]
        err = np.array([[c.mean - c.lo if np.isfinite(c.lo) else 0 for c in cis],
                        [c.hi - c.mean if np.isfinite(c.hi) else 0 for c in cis]])
        line = ax.errorbar(alphas, mean, yerr=err, marker="o", capsize=3,
                           label=f"d_k={d_k} (best alpha {ev_alpha['best'][d_k]})")
        ax.plot(g["alpha"], g["accuracy"], ".", color=line[0].get_color(), alpha=0.4)
    ax.axvline(0.5, color="k", lw=0.8, ls=":", label="alpha = 0.5 (1/sqrt(d_k))")
    return _finish(fig, ax, "alpha (scale = d_k^-alpha)", "held-out accuracy at the fixed budget",
                   "(c) scale-exponent sweep, key-value lookup", 8)


def _finish(fig, ax, xlabel: str, ylabel: str, title: str, legend_size: float):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend_size)
    fig.tight_layout()
    return fig


# ============================================================================== the test
def test_c4_scaling(evidence, profile, device, seeds, progress, fast):
    budget = profile.claim(CLAIM_ID)
    ev = evidence
    ev.claim(CLAIM_ID, title="1/sqrt(d_k) is the right scale", statement="1/√d_k is the right scale",
             strength="strong", kind="claim",
             limitation=("The variance argument holds at initialization, where components are plausibly independent "
                         "with unit variance. Whether it holds after training is not addressed, and is the "
                         "assumption everything downstream inherits."))
    iid_b, model_b, alpha_b = budget["iid"], budget["model"], budget["alpha"]
    # (c) trains through the sweep C3 and R1 share (same budget block, same memoised runs in one process)
    sweep_src = profile.claim(alpha_b["sweep_from"])
    sweep_budget, sweep_d_ks = sweep_src["sweep"], [min(sweep_src["sweep_d_ks"]), max(sweep_src["sweep_d_ks"])]
    lo, hi = MODEL_SLOPE_BAND
    # ---- criteria first (issue 5); the fast run keeps the one that catches a changed default scale
    c = {}
    if not fast:
        c["iid_slope"] = ev.criterion(
            "iid_unscaled_slope",
            prediction="Var(q.k) grows as d_k for iid components (normal, uniform, Rademacher): log-log slope CI "
                       f"within {list(IID_SLOPE_BAND)} for each distribution",
            threshold=list(IID_SLOPE_BAND),
            test=f"scipy.stats.linregress of ln Var(q.k) on ln d_k over d_k {iid_b['dims']} x seeds, 95% CI")
        c["iid_scaled"] = ev.criterion(
            "iid_scaled_unit_variance",
            prediction=f"Var(q.k / sqrt(d_k)) has its 95% CI within {list(IID_SCALED_BAND)} at every d_k",
            threshold=list(IID_SCALED_BAND),
            test="harness.stats.variance_ci (large-sample, 4th moment) over all seeds' draws, per (distribution, d_k)")
    c["model_scaled"] = ev.criterion(
        "model_scaled_slope",
        prediction=("The DEFAULT-configured model at init (its default scale, as the logits tap sees it) keeps "
                    f"Var(logits) flat in d_k: |log-log slope| < {MODEL_SCALED_MAX} in every layer, for "
                    "torch_default (both geometries) and xavier with d_model = h*d_k"),
        threshold=f"|slope| < {MODEL_SCALED_MAX}",
        test="scipy.stats.linregress of ln Var(logits) on ln d_k over (seed, d_k) points, 95% CI; refuted if the CI "
             f"lies beyond +-{MODEL_SCALED_MAX}", fast=True)
    if not fast:
        c["model_unscaled"] = ev.criterion(
            "model_unscaled_slope",
            prediction=f"Var(q.k) (taps q, k) grows as d_k: slope CI within [{lo}, {hi}] in every layer, same "
                       "configurations", threshold=list(MODEL_SLOPE_BAND),
            test="scipy.stats.linregress of ln Var(q.k) on ln d_k, 95% CI")
        c["model_law"] = ev.criterion(
            "model_variance_law",
            prediction=f"The footnote's law Var(q.k) = d_k Var(q_i) Var(k_i) holds in the model in EVERY "
                       f"configuration and layer: slope of Var(q.k) / (Var q_i Var k_i) CI within [{lo}, {hi}]",
            threshold=list(MODEL_SLOPE_BAND), test="scipy.stats.linregress, 95% CI")
        c["xavier_fixed"] = ev.criterion(
            "model_unscaled_slope_xavier_fixed_d_model",
            prediction=f"Issue 5's unscaled-slope criterion [{lo}, {hi}] for xavier init at a fixed d_model. "
                       "Pre-registered as not counting: xavier's Var(w) = 2/(d_model + h d_k) makes Var(q_i) shrink "
                       "with d_k, so the variance argument itself predicts a slope below 1 there",
            threshold=list(MODEL_SLOPE_BAND), test="scipy.stats.linregress, 95% CI", counts=False)
        c["alpha_half"] = ev.criterion(
            "alpha_half_among_best",
            prediction="alpha = 0.5 lies within the CI of the best alpha at both d_k: its accuracy is not "
                       "significantly below the best alpha's", threshold="one-sided Welch p >= 0.05",
            test=f"one-sided Welch t (best > 0.5) on held-out accuracy, {len(seeds)} seeds per arm, each alpha at "
                 f"its best lr over {alpha_b['lr_factors']} x the sweep's lr")
        c["alpha0"] = ev.criterion(
            "alpha0_behind_at_large_dk",
            prediction=f"alpha = 0 (unscaled) falls behind the best alpha at d_k = {sweep_d_ks[1]}",
            threshold="one-sided Welch p < 0.05", test="one-sided Welch t (best > alpha 0) on held-out accuracy")
        c["alpha1"] = ev.criterion(
            "alpha1_behind_at_large_dk",
            prediction=f"alpha = 1 falls behind the best alpha at d_k = {sweep_d_ks[1]} (attention too "
                       "uniform)", threshold="one-sided Welch p < 0.05",
            test="one-sided Welch t (best > alpha 1) on held-out accuracy")
        ev.gate("qk_var_slope_iid_unscaled", direction="both", tolerance=0.02)
        ev.gate("qk_var_slope_iid_scaled", direction="both", tolerance=0.02)
        ev.gate("qk_var_slope_model_unscaled", direction="both", tolerance=0.1)
        ev.gate("qk_component_var_model_default_init", direction="both", tolerance=0.03)
        ev.gate("best_alpha_large_dk", direction="both", tolerance=0.25)
    ev.gate("qk_var_slope_model_scaled", direction="both", tolerance=0.1)

    # ---- (a) iid
    if not fast:
        progress(f"C4(a) iid: d_k {iid_b['dims']}, {iid_b['n_samples']} draws x {len(seeds)} seeds x 3 distributions")
        iid = measure_iid_variance(iid_b["dims"], iid_b["n_samples"], seeds)
        iid_eval = evaluate_iid(iid)
        c["iid_slope"].record_outcome(iid_eval["slope"])
        c["iid_scaled"].record_outcome(iid_eval["scaled"])
        ev.metric("qk_var_slope_iid_unscaled", iid_eval["slope_unscaled"])
        ev.metric("qk_var_slope_iid_scaled", iid_eval["slope_scaled"])
    else:
        iid = iid_eval = None

    # ---- (b) the model at init
    configs = sorted(PREMISE_HOLDS) if fast else [(i, g) for i in INITS for g in GEOMETRIES]
    model_df = measure_model_init(model_b["dims"], seeds, heads=model_b["heads"],
                                  fixed_d_model=model_b["fixed_d_model"], n_layers=model_b["n_layers"],
                                  batch=model_b["batch"], seq_len=model_b["seq_len"], draws=model_b["draws"],
                                  configs=configs,
                                  device=device, progress=progress)
    me = evaluate_model(model_df)
    c["model_scaled"].record_outcome(me["scaled"])
    if not fast:
        c["model_unscaled"].record_outcome(me["unscaled"])
        c["model_law"].record_outcome(me["law"])
        c["xavier_fixed"].record_outcome(me["xavier_fixed_unscaled"])
    ev.metric("qk_var_slope_model_unscaled", me["slope_unscaled"])
    ev.metric("qk_var_slope_model_scaled", me["slope_scaled"])
    ev.metric("qk_component_var_model_default_init", me["component_var_default_init"])

    # ---- (c) scale-exponent sweep
    alpha_df = alpha_eval = None
    if not fast:
        alpha_all = measure_alpha_sweep(sweep_budget, sweep_d_ks, alpha_b["alphas"], seeds,
                                        lr_factors=alpha_b["lr_factors"], device=device, progress=progress)
        alpha_df = at_best_lr(alpha_all)
        alpha_eval = evaluate_alpha(alpha_df)
        for key in ("alpha_half", "alpha0", "alpha1"):
            c[key].record_outcome(alpha_eval[key])
        ev.metric("best_alpha_small_dk", alpha_eval["best_alpha_small_dk"])
        ev.metric("best_alpha_large_dk", alpha_eval["best_alpha_large_dk"])

    # ---- tables, figures, notes
    if iid is not None:
        ev.table("iid_per_seed", iid.per_seed)
        ev.table("iid_scaled_variance_per_dk", iid.per_dk)
    ev.table("model_at_init_per_seed", model_df)
    ev.table("model_at_init_slopes", me["table"])
    ev.figure("qk_var_vs_dk", figure_variance(iid, iid_eval, model_df, me))
    ev.figure("component_variance_at_init", figure_components(model_df))
    if alpha_df is not None:
        ev.table("alpha_sweep_per_seed", alpha_all)
        ev.table("alpha_sweep_tests", alpha_eval["tests"])
        ev.figure("alpha_sweep", figure_alpha(alpha_df, alpha_eval))
    ev.note(f"The footnote's premise fails in the real model while its scaling law holds: with PyTorch's default "
            f"Linear init the per-component variance of q and k is {me['component_var_default_init']:.3f} at layers "
            f"whose input is a LayerNorm output (Var(w) = 1/(3 fan_in), so 1/3 of the input's variance, not 1), and "
            f"{me['component_var_default_init_layer0']:.3f} at layer 0 (embedding + sinusoid, variance ~1.5). "
            f"Yet Var(q.k) still grows as d_k (slope {me['slope_unscaled']:.3f}) and the default 1/sqrt(d_k) keeps "
            f"the logits' variance flat (slope {me['slope_scaled']:.3f}), at Var(q_i) Var(k_i) ~ "
            f"{me['component_var_default_init'] ** 2:.3f} rather than 1 past layer 0: the scale is right in its "
            f"exponent, not in its constant.")
    if not fast:
        xf = me["xavier_fixed_unscaled"]
        law = me["table"][(me["table"]["quantity"] == "law") & ~me["table"]["premise_holds"]]
        ev.note(f"Xavier init at a fixed d_model (h*d_k != d_model): unscaled slope {xf['measured']:.3f}, scaled "
                f"{me['xavier_fixed_scaled']['measured']:.3f} (worst layer). Xavier's Var(w) = 2/(d_model + h d_k) "
                f"shrinks the components as d_k grows, so 1/sqrt(d_k) over-corrects there, while the slope of "
                f"Var(q.k) / (Var q_i Var k_i) is {', '.join(f'{v:.3f}' for v in law['slope'])} (layers): the "
                f"footnote's arithmetic holds, its premise that component variance does not depend on d_k is a "
                f"property of the init, not of attention.")
    if alpha_eval is not None:
        t = alpha_eval["tests"]
        lines = []
        for d_k in sorted(t["d_k"].unique()):
            tt = t[t["d_k"] == d_k]
            lines.append(f"d_k={d_k}: " + ", ".join(f"alpha {r.alpha:g} {r.mean_accuracy:.3f}" for r in tt.itertuples())
                         + f" (best {alpha_eval['best'][d_k]:g})")
        ev.note("(c) held-out accuracy at the fixed budget, each alpha at its best of "
                f"{sorted(alpha_all['lr'].unique().tolist())} learning rate(s): " + "; ".join(lines) + ". "
                "Adam's update does not shrink with the gradient, so a small scale (alpha = 1: near-uniform "
                "attention at init) is not held back by its small logit gradients the way it would be under SGD; "
                "how fast W^Q, W^K grow to compensate depends on the learning rate, which is why standard/full "
                "compare every alpha at its own best rate.")
    ev.headline("qk_var_slope_model_scaled")
