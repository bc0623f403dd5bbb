"""C4's measurements of the 1/sqrt(d_k) scale: the variance of q.k against d_k, and the scale exponent trained.

(a) iid components (``measure_iid_variance``): q and k from three mean-0, variance-1 distributions, drawn afresh per
(distribution, seed, d_k); Var(q.k) per seed, and Var(q.k / sqrt d_k) pooled over the seeds' draws. (b) the model at
init (``measure_model_init``): a fresh default Transformer encoder per (init, geometry, seed, d_k, draw), read through
its ``q``, ``k`` and ``logits`` taps; ``model_slopes`` fits each quantity's log-log slope against d_k. (c) the scale
d_k^-alpha trained (``measure_alpha``): C3's sweep (``harness.study.sweeps``) at each task's smallest and largest d_k,
every alpha at its rate tuned on tuning seeds (``harness.study.tuning``); ``alpha_measurements`` pairs each other
alpha with alpha = 0.5 per seed (the best other one chosen on the tuning seeds), and ``measure_qk_control`` trains
alpha = 0.5 with W_Q, W_K's rate x a multiplier beside alpha = 1, each cell's equivalence to alpha = 1 decided alone
there (a reported reading). Returns frames, fits and paired measurements to the claim module
(``claims.test_c4_scaling``), which declares and records the criteria and draws the figures; the harness judges.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import torch

from harness.measure import probes, stats
from harness.record import decision, margins
from harness.study import sweeps, tuning
from harness.study.sweeps import summary_table
from model import EncoderTagger, ModelConfig, capture

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


def log_log_slopes(df: pd.DataFrame, by: list[str], y: str) -> dict[tuple, stats.SlopeFit]:
    """log-log slope of ``y`` against d_k, per group, over every (seed, d_k) point of the group."""
    return {key if isinstance(key, tuple) else (key,): stats.loglog_slope(g["d_k"], g[y])
            for key, g in df.groupby(by, sort=False)}


def iid_scaled_estimates(per_dk: pd.DataFrame, n_seeds: int) -> list[dict]:
    """Each (distribution, d_k)'s Var(q.k / sqrt d_k) as a decision estimate: its large-sample standard error
    (``stats.variance_ci``'s 95% half-width / 1.96) on n_draws - 1 df; ``n_seeds`` scales it for firmness."""
    return [decision.estimate(r.var_scaled, (r.ci_hi - r.ci_lo) / (2 * 1.959964), r.n - 1, n_seeds,
                              label=f"{r.distribution} d_k={int(r.d_k)}", method="variance, large-sample s.e.")
            for r in per_dk.itertuples()]


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


def model_slopes(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (quantity, init, geometry, layer): the log-log slope against d_k (``fit``: the SlopeFit)
    of Var(q.k) ("unscaled"), Var(logits tap) ("scaled") and Var(q.k) / (Var q_i Var k_i) ("law")."""
    rows = []
    for quantity, col in (("unscaled", "var_qk"), ("scaled", "var_logits"), ("law", "var_qk_normalised")):
        for (init, geom, layer), f in log_log_slopes(df, ["init", "geometry", "layer"], col).items():
            rows.append({"quantity": quantity, "init": init, "geometry": geom, "layer": layer, "slope": f.slope,
                         "ci_lo": f.lo, "ci_hi": f.hi, "n_points": f.n, "premise_holds": (init, geom) in PREMISE_HOLDS,
                         "fit": f})
    return pd.DataFrame(rows)


def slope_parts(table: pd.DataFrame, quantity: str, premise: bool | None = None) -> dict[str, stats.SlopeFit]:
    """The fits of one quantity, keyed 'init/geometry/L<layer>' (``premise``: only those configurations)."""
    t = table[table["quantity"] == quantity]
    if premise is not None:
        t = t[t["premise_holds"] == premise]
    return {f"{r.init}/{r.geometry}/L{r.layer}": r.fit for r in t.itertuples()}


def model_summary(df: pd.DataFrame, table: pd.DataFrame) -> dict[str, float]:
    """The default model's mean slopes (torch_default, d_model = h*d_k) and component variances, for metrics."""
    default = table[(table["init"] == "torch_default") & (table["geometry"] == "d_model=h*d_k")]
    comp = df[df["init"] == "torch_default"]
    var = (comp["var_q"] + comp["var_k"]) / 2
    mean = lambda s: float(s.mean()) if len(s) else math.nan  # noqa: E731
    return {"slope_unscaled": mean(default[default["quantity"] == "unscaled"]["slope"]),
            "slope_scaled": mean(default[default["quantity"] == "scaled"]["slope"]),
            # layers >= 1 read a LayerNorm output (unit variance): Var(q_i) there is what the Linear init alone does
            "component_var_default_init": mean(var[comp["layer"] >= 1]),
            "component_var_default_init_layer0": mean(var[comp["layer"] == 0])}


# ============================================================================== (c) scale-exponent sweep
def alpha_arm(alpha: float) -> str:
    """The sweep arm (and metric) name of an alpha: ``alpha0``, ``alpha0.5``, ``alpha1``."""
    return f"alpha{float(alpha):g}"


def alpha_name(alpha: float) -> str:
    """An alpha as a reader names it: 'alpha = 1 (1/d_k)', 'alpha = 0.75 (d_k^-0.75)', 'alpha = 0 (unscaled)'."""
    a = float(alpha)
    scale = {0.0: "unscaled", 0.5: "1/sqrt(d_k)", 1.0: "1/d_k"}.get(a, f"d_k^-{a:g}")
    return f"alpha = {a:g} ({scale})"


def alpha_arms(alphas: list[float]) -> dict[str, dict]:
    """Sweep arms: scale = d_k^-alpha through ``ModelConfig.scale_exponent`` (explicit, so a scale fault
    leaves them alone; alpha = 0.5 and 0 are the same runs as C3's scaled and unscaled in harness.study.sweeps' memo)."""
    return {alpha_arm(a): {"scale_exponent": float(a)} for a in alphas}


def measure_alpha(sweep_block: dict, alphas: list[float], seeds: list[int], device="cpu",
                  progress=None) -> dict[str, tuning.TunedSweep]:
    """Per task of C3's sweep: every alpha at the task's smallest and largest d_k, each at its tuned rate."""
    return {task: tuning.tuned_sweep(alpha_arms(alphas), [min(spec["d_ks"]), max(spec["d_ks"])],
                                     spec["block"], seeds, sweep_block["tuning"], device, progress)
            for task, spec in tuning.sweep_tasks(sweep_block).items()}


def best_other_alpha(sweep: tuning.TunedSweep, d_k: int, alphas: list[float], exclude=()) -> float | None:
    """On the tuning seeds only: the alpha other than 0.5 (and ``exclude``) with the lowest tuning loss at its
    own tuned rate."""
    cand = {a: min(sweep.tuned[(alpha_arm(a), d_k)].mean_loss) for a in alphas
            if a != 0.5 and a not in exclude}
    return float(min(cand, key=cand.get)) if cand else None


def alpha_measurements(sweeps_: dict[str, tuning.TunedSweep], alphas: list[float]) -> tuple[dict, dict]:
    """(c)'s criteria -> {part label -> [paired measurement]} (loss of the other alpha, then alpha 0.5's), and
    the best other alpha chosen per (task, d_k)."""
    out = {"alpha_half_among_best": {}, "alpha0_behind_at_large_dk": {}, "alpha1_behind_at_large_dk": {}}
    chosen = {}
    for task, s in sweeps_.items():
        d_ks = sorted(int(d) for d in s.runs.d_k.unique())
        half = lambda d: s.cell(alpha_arm(0.5), d)  # noqa: E731

        def pair(a, d, label):
            return [decision.samples(s.cell(alpha_arm(a), d), half(d), paired=True, label=label,
                                     invalid=s.invalid((alpha_arm(a), d), (alpha_arm(0.5), d)),
                                     rates=[s.rates(alpha_arm(a), d), s.rates(alpha_arm(0.5), d, -1.0)],
                                     arms=(alpha_name(a), alpha_name(0.5)))]

        for d in d_ks:
            other = best_other_alpha(s, d, alphas, exclude=(0.0,) if d == max(d_ks) else ())
            chosen[(task, d)] = other
            if other is not None:
                out["alpha_half_among_best"][f"{task} d_k={d} vs alpha {other:g}"] = pair(other, d, f"{task} d_k={d}")
        out["alpha0_behind_at_large_dk"][task] = pair(0.0, max(d_ks), task)
        out["alpha1_behind_at_large_dk"][task] = pair(1.0, max(d_ks), task)
    return out, chosen


def measure_qk_control(sweeps_: dict[str, tuning.TunedSweep], sweep_block: dict, control: dict, seeds: list[int],
                       device="cpu", progress=None) -> pd.DataFrame:
    """Alpha = 0.5 at its tuned rate with W_Q, W_K's Adam rate x each multiplier (``control``: "multipliers",
    "d_ks": "large" or "all", "seeds": how many evaluation seeds), beside alpha = 1 on the same seeds: one row per
    (task, d_k, multiplier) with the mean loss, alpha = 1's, and whether they are equivalent within the margin."""
    # the suite's held-out loss margin, the one C4's criteria use
    rule = decision.equivalence(margins.HELD_OUT_LOSS.value, paired=True, reason=margins.HELD_OUT_LOSS.reason)
    specs = tuning.sweep_tasks(sweep_block)
    use = list(seeds)[: int(control.get("seeds", len(seeds)))]
    rows = []
    for task, s in sweeps_.items():
        d_ks = sorted(int(d) for d in s.runs.d_k.unique())
        for d in (d_ks[-1:] if control.get("d_ks", "all") == "large" else d_ks):
            t = s.tuned[(alpha_arm(0.5), d)]
            a1 = s.runs[(s.runs.arm == alpha_arm(1.0)) & (s.runs.d_k == d) & s.runs.seed.isin(use)]
            a1 = a1.sort_values("seed").final_loss.to_numpy(float)
            for m in control["multipliers"]:
                block = {**specs[task]["block"], "train": {**specs[task]["block"]["train"], "lr": t.lr,
                                                             **({"qk_lr_multiplier": float(m)} if m != 1 else {})}}
                df = sweeps.attention_sweep({alpha_arm(0.5): {"scale_exponent": 0.5}}, [d], block, use,
                                                    device=device, progress=progress).sort_values("seed")
                loss = df.final_loss.to_numpy(float)
                out = decision.decide_alone(rule, [decision.samples(loss, a1, paired=True)])
                rows.append({"task": task, "d_k": d, "multiplier": float(m), "lr": t.lr, "loss": float(loss.mean()),
                             "alpha1_loss": float(a1.mean()), "diff_vs_alpha1": float((loss - a1).mean()),
                             "equivalent_to_alpha1": out["outcome"] == "passed", "outcome": out["outcome"],
                             "seeds": len(use)})
    return pd.DataFrame(rows)


def alpha_frame(sweeps_: dict[str, tuning.TunedSweep]) -> pd.DataFrame:
    """The evaluation runs at tuned rates as (task, d_k, alpha, lr, seed, loss, accuracy) rows."""
    return pd.concat([summary_table(s.runs).assign(task=t) for t, s in sweeps_.items()], ignore_index=True).rename(
        columns={"final_loss": "loss", "final_accuracy": "accuracy"}).assign(
        alpha=lambda d: d["arm"].str.slice(5).astype(float))


def best_alpha(g: pd.DataFrame) -> float:
    """Highest mean held-out accuracy, ties (several alphas at 1.000) broken by the lower mean loss: the metrics
    ``best_alpha_small_dk`` / ``best_alpha_large_dk`` (reported, as before issue 16)."""
    means = g.groupby("alpha")[["accuracy", "loss"]].mean()
    return float(means.sort_values(["accuracy", "loss"], ascending=[False, True]).index[0])
