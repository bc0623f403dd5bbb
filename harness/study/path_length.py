"""C2's measurement procedure: path lengths, gradients at init, and learning the long-range match across distance.

Five architectures (``ARCHS``: self-attention, two contiguous convs, a dilated conv, an LSTM) built from one profile
``model`` block, every baseline at the width whose parameter count matches self-attention's (``matched_width``).
(a) ``measure_path_lengths``: the smallest depth at which output i depends on input i-d, from float64 Jacobians,
beside Table 1's formula (``expected_path_length``); (b) ``measure_gradient_vs_distance`` and its log-log slope per
seed (``gradient_slope``); (c) ``measure_learning``: every (arch, d, seed) trained on ``FirstEqualsLast`` and scored on
its own disjoint, label-balanced held-out slice (``heldout_slices``); (d), (e), (f) ``tune_and_measure`` (each cell
tuned on seeds disjoint from the evaluation seeds, ``harness.study.tuning.choose_rates``) and ``at_rates`` (cells at
given rates). Returns frames, one row per run, and the parts each comparison reads from them (``helps_measurements``,
``interaction_measurements``, ``deep_measurements``, ``deep_interaction_measurements``: paired per-seed samples with
the live-foil rule and the rate choices) to the claim module, claims/test_c2_path_length.py. Writes no evidence
and draws no figure.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from model import ModelConfig
from model.registry import build, param_count

from harness.record import decision
from harness.measure import stats
from harness.measure.probes import input_grad_vs_distance, path_length
from harness.data.tasks import Batch, FirstEqualsLast, Task
from harness.train.loop import TrainConfig, build_for_task, evaluate, train, width_for_params
from harness.study.tuning import TUNING_SCORE, Tuned, choose_rates, edge_reasons, rate_choice_of, tuning_seeds

ARCHS = ("self_attention", "conv_k3", "conv_k5", "dilated_conv_k2", "recurrent")
CONVS = ("conv_k3", "conv_k5", "dilated_conv_k2")
# registry name and constructor keywords per architecture
_BUILD: dict[str, tuple[str, dict[str, Any]]] = {
    "self_attention": ("encoder_tagger", {"causal": False}),
    "conv_k3": ("conv", {"kernel_size": 3}),
    "conv_k5": ("conv", {"kernel_size": 5}),
    "dilated_conv_k2": ("dilated_conv", {}),
    "recurrent": ("lstm_tagger", {}),
}
FORMULAS = {"self_attention": "1", "conv_k3": "ceil(d/2)", "conv_k5": "ceil(d/4)",
            "dilated_conv_k2": "floor(log2 d)+1", "recurrent": "d"}
PARAM_TOLERANCE = 0.20              # (c), (d) parameter counts within 20% of self-attention's
DEEP_TARGET = 0.95                  # (d) steps to this validation accuracy
#: the live-foil rule's tolerance (``decision.dead_foil``): a foil whose held-out loss is within this of ln 2 (or
#: above it) on every seed and at every rate tried learnt nothing; a calibrated classifier 0.01 nats below ln 2 is
#: at 0.57 accuracy. The same 0.01 is the loss floor's tolerance for (e)
AT_CHANCE_TOL = 0.01
CHANCE_LOSS = math.log(2)           # nats: held-out cross-entropy of a model that learnt nothing (balanced labels)
LOSS_FLOOR = 0.0                    # nats: the label is a function of the input, so the loss can reach 0
#: (d)'s tuning score: steps to ``DEEP_TARGET`` validation accuracy on the tuning seed (unreached: the budget + 1)
STEPS_SCORE = "steps to target"
#: (d)'s tuning rule (issue 63, C2's rule b, fixed before the replication): a cell's rate is the one with the
#: fewest mean steps to ``DEEP_TARGET`` on its tuning seeds, and a tie goes to the lower rate. The validation loss
#: at the stop no longer breaks ties: every run stops at the same accuracy, so it reads noise, and it picked 0.03
#: over 0.01 next to a diverging 0.09 at lock 157b2b70e7a6
DEEP_BY, DEEP_TIE = (STEPS_SCORE,), "fewest steps, a tie to the lower rate"


# ==================================================================================== architectures
def expected_path_length(arch: str, d: int) -> int:
    """Table 1 made exact for our stacks: layers (recurrent: sequential steps) to relate positions d apart."""
    if arch == "self_attention":
        return 1
    if arch == "conv_k3":
        return math.ceil(d / 2)
    if arch == "conv_k5":
        return math.ceil(d / 4)
    if arch == "dilated_conv_k2":
        return int(math.floor(math.log2(d))) + 1
    if arch == "recurrent":
        return d
    raise ValueError(f"unknown architecture {arch!r}; valid: {', '.join(ARCHS)}")


def reach(arch: str, n_layers: int) -> float:
    """The largest distance the last position can relate through ``n_layers`` layers (inf: unbounded)."""
    if arch in ("self_attention", "recurrent"):
        return math.inf
    if arch == "conv_k3":
        return 2 * n_layers
    if arch == "conv_k5":
        return 4 * n_layers
    if arch == "dilated_conv_k2":
        return 2 ** n_layers - 1
    raise ValueError(f"unknown architecture {arch!r}; valid: {', '.join(ARCHS)}")


def base_config(model: dict, **over: Any) -> ModelConfig:
    """The self-attention config of a profile's ``model`` block (vocab: the task's content tokens)."""
    return ModelConfig(src_vocab=model["vocab"] + 3, d_model=model["d_model"], n_heads=model["n_heads"],
                       d_ff=model["d_ff"], n_encoder_layers=model.get("n_layers", 2), dropout=0.0, **over)


def arch_config(base: ModelConfig, n_layers: int, d_model: int | None = None, arch: str = "self_attention"
                ) -> ModelConfig:
    """``base`` with ``n_layers`` layers and width ``d_model``; the baselines have no heads (n_heads=1 lets
    their width be any integer)."""
    over = {} if d_model is None else {"d_model": d_model}
    if arch != "self_attention":
        over["n_heads"] = 1
    return base.replace(n_encoder_layers=n_layers, **over)


def build_arch(arch: str, cfg: ModelConfig, n_classes: int = 2) -> torch.nn.Module:
    """The architecture ``arch`` from ``cfg`` (its layer count: ``cfg.n_encoder_layers``)."""
    if arch not in _BUILD:
        raise ValueError(f"unknown architecture {arch!r}; valid: {', '.join(ARCHS)}")
    name, kw = _BUILD[arch]
    return build(name, cfg, n_classes=n_classes, **kw)


def matched_width(arch: str, task: Task, base: ModelConfig, n_layers: int, target_params: int,
                  tolerance: float = PARAM_TOLERANCE) -> tuple[ModelConfig, int]:
    """(config, params): ``arch`` with ``n_layers`` layers at the width (``harness.train.loop.width_for_params``,
    up to 2 x base.d_model) whose parameter count is closest to ``target_params`` (the count grows with the
    width, so a coarse scan and a fine one around its best find it). ValueError when even the closest is off by
    more than ``tolerance``: the comparison would not be at equal parameters."""
    name, kw = _BUILD[arch]
    start = arch_config(base, n_layers, arch=arch)
    coarse, _ = width_for_params(name, task, start, target_params, range(4, 2 * base.d_model + 1, 4), **kw)
    cfg, p = width_for_params(name, task, start, target_params,
                              range(max(1, coarse.d_model - 3), coarse.d_model + 4), **kw)
    if abs(p / target_params - 1) > tolerance:
        raise ValueError(f"{arch} with {n_layers} layers: closest parameter count {p} (d_model={cfg.d_model}) is not "
                         f"within {tolerance:.0%} of {target_params}")
    return cfg, p


# ================================================================================= (a) path length
def measure_path_lengths(distances: Sequence[int], seeds: Sequence[int], base: ModelConfig,
                         archs: Sequence[str] = ARCHS, build_fn: Callable[[str, ModelConfig], Any] | None = None,
                         progress: Callable[[str], Any] | None = None) -> pd.DataFrame:
    """One row per (arch, seed, d): the measured path length (None: no path within the model) and the formula.
    Each model gets exactly the depth the formula needs at the largest d (at least 2 layers); the recurrent
    model is one LSTM layer, its path length is found over truncated recurrence windows."""
    build_fn = build_fn or build_arch
    cfg = base.replace(max_len=max(base.max_len, max(distances) + 1))
    rows = []
    for arch in archs:
        depth = 1 if arch == "recurrent" else max(2, max(expected_path_length(arch, d) for d in distances))
        if progress:
            progress(f"C2(a) path length: {arch} ({depth} layer(s)), d up to {max(distances)}")
        for seed in seeds:
            torch.manual_seed(int(seed))
            model = build_fn(arch, arch_config(cfg, depth, arch=arch))
            for d in distances:
                measured = path_length(model, int(d))
                rows.append({"arch": arch, "seed": int(seed), "d": int(d), "layers_built": depth,
                             "measured": measured, "expected": expected_path_length(arch, int(d))})
    return pd.DataFrame(rows)



# ============================================================================== (b) gradient vs d
def measure_gradient_vs_distance(configs: dict[str, ModelConfig], distances: Sequence[int], seeds: Sequence[int],
                                 batch: int = 8, build_fn: Callable[[str, ModelConfig], Any] | None = None
                                 ) -> pd.DataFrame:
    """One row per (arch, seed, d): |dy_t/dx_{t-d}| of the full model at init (float64), t = the last position."""
    build_fn = build_fn or build_arch
    rows = []
    for arch, cfg in configs.items():
        cfg = cfg.replace(max_len=max(cfg.max_len, max(distances) + 1))
        for seed in seeds:
            torch.manual_seed(int(seed))
            g = input_grad_vs_distance(build_fn(arch, cfg), distances, batch=batch, seed=int(seed))
            rows += [{"arch": arch, "seed": int(seed), "d": d, "grad": v} for d, v in g.items()]
    return pd.DataFrame(rows)


def gradient_slope(df: pd.DataFrame, arch: str) -> tuple[stats.SlopeFit, list[int]]:
    """The log-log slope of |dy_t/dx_{t-d}| against d with the seed as the unit (``stats.replicate_slope``: one
    fit per seed, a t interval across seeds) and the distances where the gradient is exactly 0 (no path, or
    underflow): those enter as the smallest positive float64, so the slope is a bound on the decay there."""
    sub = df[df["arch"] == arch]
    zero = sorted(int(d) for d in sub.loc[sub["grad"] <= 0, "d"].unique())
    grad = sub["grad"].clip(lower=np.finfo(float).tiny)
    return stats.replicate_slope(sub["d"], grad, sub["seed"], transform="loglog"), zero


# ================================================================================ (c), (d) learning
def match_task(d: int, vocab: int) -> FirstEqualsLast:
    """The long-range match at distance d, predicted at the last position (the one every model can see all from)."""
    return FirstEqualsLast(d=d, vocab=vocab, kind="tagging")


def _first_occurrences(x: torch.Tensor) -> torch.Tensor:
    """Indices of the first occurrence of each distinct row of x, in order."""
    _, inv = torch.unique(x, dim=0, return_inverse=True)
    first = torch.full((int(inv.max()) + 1,), len(x), dtype=torch.long)
    first = first.scatter_reduce(0, inv, torch.arange(len(x)), reduce="amin")
    return first.sort().values


def heldout_slices(task: FirstEqualsLast, n_val: int, n_test: int, n_slices: int, min_test: int = 100
                   ) -> list[Batch]:
    """``n_slices`` disjoint held-out batches of distinct examples, none in the training loop's validation set
    (``task.heldout(n_val)``), each with as many "equal" as "not equal" labels, so each seed is scored on its own
    examples and a model blind to x_0 is at exactly 0.5 in expectation (variance at most binomial). Why balance:
    "equal" sequences are vocab^d of the space (x_d is fixed by x_0), so at d=4 they repeat in a held-out draw,
    and keeping distinct rows alone left 46% of labels "equal".
    Small example spaces give fewer than ``n_test`` per slice (never fewer than ``min_test``)."""
    val = task.heldout(n_val)
    pool = task.heldout(3 * (n_val + n_slices * n_test))
    keep = _first_occurrences(torch.cat([val.x, pool.x]))
    keep = keep[keep >= len(val)] - len(val)
    label = pool.y[keep, -1]
    by_label = [keep[label == v] for v in (0, 1)]
    half = min(n_test // 2, *(len(k) // n_slices for k in by_label))
    if 2 * half < min_test:
        raise ValueError(f"{task!r}: only {[len(k) for k in by_label]} distinct held-out examples per label outside "
                         f"validation; need {n_slices} x {min_test // 2} of each")
    return [pool[torch.cat([k[i * half:(i + 1) * half] for k in by_label])] for i in range(n_slices)]


def _steps_to(curve: list[dict], value: float) -> int | None:
    return next((int(r["step"]) for r in curve if r["accuracy"] >= value), None)


def measure_learning(archs: Sequence[str], distances: Sequence[int], seeds: Sequence[int], model: dict,
                     train_cfg: dict, n_test: int, device: str | torch.device = "cpu",
                     layers: Callable[[str, int], int] | None = None,
                     progress: Callable[[str], Any] | None = None, curve_on_test: bool = False) -> pd.DataFrame:
    """Train every (arch, d, seed) on the long-range match and score it on its own held-out slice.

    ``model``: d_model, n_heads, d_ff, n_layers (self-attention's depth), vocab. Other architectures get the
    width whose parameter count matches self-attention's (within 20%). ``layers(arch, d)``: their depth
    (default ``model["n_layers"]``: equal depth, (c)); (d) passes the depth that covers d.
    One row per run: held-out test accuracy and counts, reach, steps to ``DEEP_TARGET`` (from the learning
    curve; None if never reached). ``curve_on_test``: the learning curve (and so the steps, the early stop and
    the ``val_*`` columns) is evaluated on the seed's test slice instead of the validation set, so that a rate
    chosen on validation never saw what the steps are read on ((d))."""
    base = base_config(model, max_len=max(distances) + 1)
    layers = layers or (lambda arch, d: model["n_layers"])
    target_params = param_count(build_arch("self_attention", base))
    cfg = TrainConfig.from_dict({**train_cfg, "device": str(device)})
    rows, widths = [], {}
    for d in distances:
        task = match_task(int(d), model["vocab"])
        slices = heldout_slices(task, cfg.eval_size, n_test, len(seeds))
        for arch in archs:
            n_layers = layers(arch, int(d))
            if arch == "self_attention" and n_layers == model["n_layers"]:
                mcfg, params = base, target_params
            else:   # the count does not depend on d (sinusoidal positions have no parameters)
                if (arch, n_layers) not in widths:
                    widths[arch, n_layers] = matched_width(arch, task, base, n_layers, target_params)
                mcfg, params = widths[arch, n_layers]
            width = mcfg.d_model
            name, kw = _BUILD[arch]
            for k, seed in enumerate(seeds):
                def log(msg: str, _a=arch, _d=d, _n=n_layers) -> None:
                    if progress:
                        progress(f"C2 {_a} ({_n} layers) d={_d}: {msg}")
                net = build_for_task(name, task, mcfg, int(seed), **kw)
                run = train(net, task, cfg, int(seed), progress=log, heldout=slices[k] if curve_on_test else None)
                test = evaluate(net, task, batch=slices[k], device=device)
                n = len(slices[k])
                rows.append({
                    "arch": arch, "d": int(d), "seed": int(seed), "n_layers": n_layers, "d_model": width,
                    "params": params, "params_ratio": params / target_params, "reach": reach(arch, n_layers),
                    "beyond_reach": int(d) > reach(arch, n_layers), "test_accuracy": test["accuracy"],
                    "test_loss": test["loss"],
                    "n_test": n, "n_correct": int(round(test["accuracy"] * n)),
                    "val_accuracy": run.final.get("accuracy"), "val_loss": run.final.get("loss"),
                    "steps_run": run.steps_run,
                    "steps_to_target": _steps_to(run.curve, DEEP_TARGET), "diverged": run.diverged,
                    "train_time_s": run.train_time_s})
    return pd.DataFrame(rows)


def tune_and_measure(archs: Sequence[str], distances: Sequence[int], seeds: Sequence[int], model: dict,
                     train_cfg: dict, n_test: int, block: dict, device: str | torch.device = "cpu",
                     progress: Callable[[str], Any] | None = None, *,
                     layers: Callable[[str, int], int] | None = None, by: Sequence[str] = (TUNING_SCORE,),
                     curve_on_test: bool = False, stop_at_target: bool = False,
                     cells: Sequence[tuple[str, int]] | None = None
                     ) -> tuple[pd.DataFrame, dict[tuple[str, int], Tuned], pd.DataFrame]:
    """(d), (e), (f): every (arch, d) tuned on its own (``harness.study.tuning.choose_rates`` over
    ``block["lr_grid"]`` on tuning seeds disjoint from ``seeds``, extended ``block["extend"]`` times past an end),
    chosen by ``by``: the validation loss (``TUNING_SCORE``, a diverged run never wins) or ``STEPS_SCORE`` (steps
    to ``DEEP_TARGET`` validation accuracy, unreached or diverged: the budget + 1), then trained at its rate on
    ``seeds`` for ``block["steps"]`` steps with no early stop and scored on (c)'s test slices. ``layers``,
    ``curve_on_test``: as in ``measure_learning``. ``stop_at_target`` ((d), which reads only the steps): every run,
    tuning and evaluation, stops at the first evaluation reaching ``DEEP_TARGET`` accuracy (at most
    ``block["steps"]``). ``cells``: the (arch, d) cells to run instead of every arch at every d. Returns (the
    evaluation runs, with ``lr``; the choice per (arch, d); the tuning runs: arm, d, lr, seed and both scores)."""
    cfg = {**train_cfg, "steps": int(block["steps"]), "stop_at_target": False}
    if stop_at_target:
        cfg.update(target_metric="accuracy", target_value=DEEP_TARGET, stop_at_target=True)
    censored = float(int(block["steps"]) + 1)

    def score(arm: tuple[str, int], lr: float, seed: int) -> dict[str, float]:
        row = measure_learning([arm[0]], [arm[1]], [seed], model, {**cfg, "lr": lr}, 100, device, layers=layers,
                               progress=progress).iloc[0]
        loss = float(row["val_loss"]) if not row["diverged"] and row["val_loss"] is not None else math.nan
        steps = row["steps_to_target"]
        reached = not row["diverged"] and steps is not None and not pd.isna(steps)
        return {TUNING_SCORE: loss if math.isfinite(loss) else math.inf,
                STEPS_SCORE: float(steps) if reached else censored}

    cells = [(a, int(d)) for d in distances for a in archs] if cells is None else cells
    table, chosen = choose_rates(cells, lambda arm: block["lr_grid"],
                                 tuning_seeds(seeds, int(block.get("tuning_seeds", 1))), score, by=tuple(by),
                                 extend=int(block.get("extend", 0)), name=lambda arm: arm[0], d_k=lambda arm: arm[1],
                                 columns=lambda arm: {"d": arm[1]})
    tuned = {arm: dataclasses.replace(t, setting="d") for arm, t in chosen.items()}
    runs = [measure_learning([a], [d], seeds, model, {**cfg, "lr": t.lr}, n_test, device, layers=layers,
                             progress=progress, curve_on_test=curve_on_test).assign(lr=t.lr)
            for (a, d), t in tuned.items()]
    return pd.concat(runs, ignore_index=True), tuned, table


def at_rates(rates: dict[str, float], distances: Sequence[int], seeds: Sequence[int], model: dict,
             train_cfg: dict, n_test: int, block: dict, device: str | torch.device = "cpu",
             progress: Callable[[str], Any] | None = None, known: pd.DataFrame | None = None) -> pd.DataFrame:
    """(f)'s long-d cells: each arch at its given rate at every d of ``distances``, trained as in
    ``tune_and_measure`` (``block["steps"]``, no early stop). A cell of ``known`` (``tune_and_measure``'s runs) at
    the same arch, d and rate on the same seeds is the same computation and is reused, not trained again."""
    cfg = {**train_cfg, "steps": int(block["steps"]), "stop_at_target": False}
    parts = []
    for arch, lr in rates.items():
        for d in distances:
            hit = None if known is None else known[(known["arch"] == arch) & (known["d"] == int(d))
                                                   & np.isclose(known["lr"], lr)]
            if hit is not None and sorted(hit["seed"]) == sorted(int(s) for s in seeds):
                parts.append(hit)
            else:
                parts.append(measure_learning([arch], [d], seeds, model, {**cfg, "lr": lr}, n_test, device,
                                              progress=progress).assign(lr=lr))
    return pd.concat(parts, ignore_index=True)


def seed_values(runs: pd.DataFrame, arch: str, d: int, column: str = "test_loss") -> np.ndarray:
    """``column`` of (arch, d) in ``runs``, in seed order (pairs with any other cell of the same seeds)."""
    cell = runs[(runs["arch"] == arch) & (runs["d"] == int(d))].sort_values("seed")
    if cell.empty:
        raise ValueError(f"no runs of {arch!r} at d={d}")
    return cell[column].to_numpy(float)


def lstm_foil(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], d: int, floor: bool) -> str:
    """``decision.dead_foil`` for the LSTM at ``d``: its held-out loss on every seed, and its tuning seeds' mean
    validation loss at every rate tried there; ``floor``: the loss floor counts too ((e) only)."""
    return decision.dead_foil(seed_values(runs, "recurrent", d), chance=CHANCE_LOSS, tol=AT_CHANCE_TOL,
                              floor=LOSS_FLOOR if floor else None, better="lower",
                              tried=tuned[("recurrent", int(d))].mean_loss, arm=f"recurrent at d={d}")


def helps_measurements(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], distances: Sequence[int]
                       ) -> list[dict[str, Any]]:
    """(e)'s parts, one per d: the LSTM's held-out loss minus attention's, paired by seed; invalid where an arm's
    tuned rate is at its grid's edge, or where the LSTM is a dead foil (at chance, or at the loss floor, on every
    seed and at every rate tried)."""
    return [decision.samples(seed_values(runs, "recurrent", d), seed_values(runs, "self_attention", d), paired=True,
                             label=f"d={d}", invalid=edge_reasons(t for (_, dd), t in tuned.items() if dd == d),
                             foil_dead=lstm_foil(runs, tuned, d, floor=True))
            for d in distances]


def advantage(runs: pd.DataFrame, d: int) -> np.ndarray:
    """Attention's advantage over the LSTM at d, per seed: the LSTM's held-out loss minus attention's (nats)."""
    return seed_values(runs, "recurrent", d) - seed_values(runs, "self_attention", d)


def helps_rate(rows: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], tuning: pd.DataFrame, arch: str, d: int
               ) -> dict[str, Any]:
    """(e)'s rate choice for (arch, d) (``tuning.rate_choice_of``), for a measurement that reads its held-out loss
    (``rows``: its evaluation runs): chosen by the tuning runs' validation loss, which also stands for that loss."""
    at = tuning[(tuning["arm"] == arch) & (tuning["d"] == int(d))]
    return rate_choice_of(f"C2/helps/{arch}/d={int(d)}", tuned[(arch, int(d))], at,
                          rows.assign(**{TUNING_SCORE: rows["val_loss"]}), "test_loss", choice=TUNING_SCORE,
                          tuning_column=TUNING_SCORE)


def interaction_rates(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], tuning: pd.DataFrame,
                      long_tuning: pd.DataFrame, d: int, short: int) -> list[dict[str, Any]]:
    """(f)'s rate choices for the part at long ``d`` (``tuning.rate_choice_of``): each arm's rate was chosen at
    ``short`` (``tuning``: those tuning runs) and kept at ``d``, so a fresh choice moves the arm's held-out loss at
    both, and the part by its move at ``d`` less its move at ``short``: per rate, the tuning seeds' validation loss
    at ``d`` ((e)'s tuning runs, ``long_tuning``, the same seeds and grid) minus at ``short``; NaN (no move) at a
    rate that only one of the two grids was extended to."""
    out = []
    for arch, sign in (("recurrent", 1.0), ("self_attention", -1.0)):
        at_short = tuning[(tuning["arm"] == arch) & (tuning["d"] == int(short))]
        at_long = long_tuning[(long_tuning["arm"] == arch) & (long_tuning["d"] == int(d))]
        both = at_short.merge(at_long[["lr", "seed", TUNING_SCORE]], on=["lr", "seed"], how="left",
                              suffixes=("", " at d"))
        both["moved"] = both[f"{TUNING_SCORE} at d"] - both[TUNING_SCORE]
        cell = runs[(runs["arch"] == arch) & (runs["d"] == int(short))].sort_values("seed")
        evaluation = pd.DataFrame({TUNING_SCORE: cell["val_loss"].to_numpy(float),
                                   "moved": seed_values(runs, arch, d) - seed_values(runs, arch, short)})
        out.append(rate_choice_of(f"C2/helps/{arch}/d={int(short)}", tuned[(arch, int(short))], both, evaluation,
                                  "moved", sign, choice=TUNING_SCORE))
    return out


def interaction_measurements(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], long_ds: Sequence[int],
                             short: int, long_tuned: dict[tuple[str, int], Tuned] | None = None,
                             tuning: pd.DataFrame | None = None, long_tuning: pd.DataFrame | None = None
                             ) -> list[dict[str, Any]]:
    """(f)'s parts, one per long d: the advantage at the long d minus the advantage at ``short``, paired by seed.
    ``tuned``: the choices at ``short`` (the rates every cell ran at); any at its grid's edge makes every part
    invalid, and so does an LSTM at chance at ``short`` on every seed and at every rate tried (a dead foil: the
    control that the LSTM can learn at all is missing), and it holds no slot in Holm's family. An LSTM alive at
    ``short`` and at chance at a long d (on every seed, at every rate ``long_tuned``, (e)'s choice there, tried) is
    a live comparison (issue 63, rule a: what the claim predicts; until then it made the part not testable). ``tuning``, ``long_tuning``: the tuning runs at ``short`` and (e)'s
    at the long d; with both, each part carries its arms' rate choices (``interaction_rates``)."""
    invalid = edge_reasons(tuned.values())
    foil = lstm_foil(runs, tuned, short, floor=False)
    out = []
    for d in long_ds:
        tried = () if long_tuned is None or ("recurrent", int(d)) not in long_tuned else \
            long_tuned[("recurrent", int(d))].mean_loss
        dead_long = decision.dead_foil(seed_values(runs, "recurrent", d), chance=CHANCE_LOSS, tol=AT_CHANCE_TOL,
                                       better="lower", tried=tried, arm=f"recurrent at d={d}")
        # issue 63, C2's rule a: a foil dead at the short d (the control that it learns at all) is never testable,
        # whatever it does at the long d; one alive at the short d and at chance at the long d is a live comparison:
        # that is what the claim predicts
        out.append(decision.samples(advantage(runs, d), advantage(runs, short), paired=True,
                                    label=f"d={d} vs d={short}", invalid=invalid,
                                    foil_dead="; ".join(r for r in (foil, dead_long) if r) if foil else "",
                                    rates=None if tuning is None or long_tuning is None else
                                    interaction_rates(runs, tuned, tuning, long_tuning, d, short)))
    return out


def steps_of(runs: pd.DataFrame, arch: str, d: int, steps: int) -> np.ndarray:
    """Steps to ``DEEP_TARGET`` of (arch, d) in seed order; unreached: ``steps`` + 1 (censored)."""
    cell = runs[(runs["arch"] == arch) & (runs["d"] == int(d))].sort_values("seed")
    if cell.empty:
        raise ValueError(f"no runs of {arch!r} at d={d}")
    return pd.to_numeric(cell["steps_to_target"], errors="coerce").fillna(steps + 1).to_numpy(float)


def conv_foil(runs: pd.DataFrame, tuning: pd.DataFrame, arch: str, d: int) -> str:
    """``decision.dead_foil`` for a deep conv at ``d``: its held-out loss on every seed and its tuning seeds' mean
    validation loss at every rate tried (the floor does not apply: steps keep their meaning when both arms end at
    the floor)."""
    layers = int(runs[(runs["arch"] == arch) & (runs["d"] == int(d))]["n_layers"].iloc[0])
    at = tuning[(tuning["arm"] == arch) & (tuning["d"] == int(d))]
    tried = at.groupby("lr")[TUNING_SCORE].mean().to_numpy(float)
    return decision.dead_foil(seed_values(runs, arch, d), chance=CHANCE_LOSS, tol=AT_CHANCE_TOL, better="lower",
                              tried=tried, arm=f"{arch} ({layers} layers) at d={d}")


def _deep_label(runs: pd.DataFrame, arch: str, d: int) -> str:
    layers = int(runs[(runs["arch"] == arch) & (runs["d"] == int(d))]["n_layers"].iloc[0])
    return f"{arch} ({layers} layers) d={d}"


def deep_rates(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], tuning: pd.DataFrame, steps: int,
               signs: Mapping[tuple[str, int], float]) -> list[dict[str, Any]]:
    """The rate choices of the (arch, d) cells a (d) or (d') part reads with these signs (``tuning.rate_choice_of``):
    each cell was chosen by steps to ``DEEP_TARGET`` on its tuning seeds, the quantity the part reads, so the
    firmness simulates a fresh choice of each cell's rate (issue 47)."""
    out = []
    for (arch, d), sign in signs.items():
        rows = runs[(runs["arch"] == arch) & (runs["d"] == int(d))].sort_values("seed")
        at = tuning[(tuning["arm"] == arch) & (tuning["d"] == int(d))]
        out.append(rate_choice_of(f"C2/deep/{arch}/d={int(d)}", tuned[(arch, int(d))], at,
                                  rows.assign(**{STEPS_SCORE: steps_of(runs, arch, d, steps)}), STEPS_SCORE, sign,
                                  choice=STEPS_SCORE))
    return out


def deep_measurements(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], tuning: pd.DataFrame,
                      steps: int) -> list[dict[str, Any]]:
    """(d)'s parts, one per (deep conv, d): its steps to ``DEEP_TARGET`` minus attention's at that d, paired by
    seed (unreached: ``steps`` + 1); invalid where either arm's rate is at its grid's edge, or where the conv is a
    dead foil (``conv_foil``)."""
    return [censored_part(
        decision.samples(steps_of(runs, arch, d, steps), steps_of(runs, "self_attention", d, steps), paired=True,
                         label=_deep_label(runs, arch, d), invalid=edge_reasons([t, tuned[("self_attention", d)]]),
                         foil_dead=conv_foil(runs, tuning, arch, d),
                         rates=deep_rates(runs, tuned, tuning, steps, {(arch, d): 1.0, ("self_attention", d): -1.0})),
        runs, {(arch, d): 1.0, ("self_attention", d): -1.0}, steps)
        for (arch, d), t in tuned.items() if arch != "self_attention"]


def lag(runs: pd.DataFrame, arch: str, d: int, steps: int) -> np.ndarray:
    """Attention's advantage over a deep conv at d in (d)'s quantity, per seed: the conv's steps to
    ``DEEP_TARGET`` minus attention's (unreached: ``steps`` + 1)."""
    return steps_of(runs, arch, d, steps) - steps_of(runs, "self_attention", d, steps)


def lag_means_text(lags: dict[tuple[str, int], np.ndarray]) -> str:
    """'lag (conv minus self-attention steps), seed mean: dilated_conv_k2 d=4 336, ...' (``lags``: ``lag`` per cell)."""
    return "lag (conv minus self-attention steps), seed mean: " + ", ".join(
        f"{a} d={d} {v.mean():.0f}" for (a, d), v in lags.items())


def censoring_text(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], steps: int, short: int) -> str:
    """Which (d) cells had runs that never reached ``DEEP_TARGET`` (censored at ``steps`` + 1), and each (d') part's
    mean on the seeds where none of its four cells is censored: a refutation that rests on censored cells says how
    it reads without them (issue 54: C2's d = 4 conv cell, 3 of 6 seeds unreached at 675646)."""
    censored = {k: steps_of(runs, *k, steps) > steps for k in tuned}
    cells = ", ".join(f"{a} d={d} {int(c.sum())}/{len(c)}" for (a, d), c in censored.items() if c.any())
    text = f"unreached within the budget (censored at {steps + 1}): {cells or 'none'}"
    parts = []
    for (arch, d) in tuned:
        if arch == "self_attention" or d <= short or not cells:
            continue
        keep = ~(censored[(arch, d)] | censored[("self_attention", d)] | censored[(arch, short)]
                 | censored[("self_attention", short)])
        diff = (lag(runs, arch, d, steps) - lag(runs, arch, short, steps))[keep]
        n = int(keep.sum())
        parts.append(f"{_deep_label(runs, arch, d)} vs d={short} "
                     + (f"{diff.mean():.0f} ({n} seed{'s' if n > 1 else ''})" if n else "no seed"))
    return text + ("; long minus short lag on the seeds with no censored cell: " + ", ".join(parts) if parts else "")


def deep_interaction_measurements(runs: pd.DataFrame, tuned: dict[tuple[str, int], Tuned], tuning: pd.DataFrame,
                                  steps: int, short: int) -> list[dict[str, Any]]:
    """(d')'s parts, one per (deep conv, long d > ``short``): the conv's lag at the long d minus its lag at
    ``short``, paired by seed. Invalid where any of the four cells' tuned rates is at its grid's edge, or where the
    conv is a dead foil at either d (``conv_foil``: the live-foil rule at every d the part reads)."""
    out = []
    for (arch, d), _ in tuned.items():
        if arch == "self_attention" or d <= short:
            continue
        cells = [tuned[(a, dd)] for a in (arch, "self_attention") for dd in (short, d)]
        foil = "; ".join(r for r in (conv_foil(runs, tuning, arch, short), conv_foil(runs, tuning, arch, d)) if r)
        signs = {(arch, d): 1.0, ("self_attention", d): -1.0, (arch, short): -1.0, ("self_attention", short): 1.0}
        label = f"{_deep_label(runs, arch, d)} vs d={short}"
        m = decision.samples(lag(runs, arch, d, steps), lag(runs, arch, short, steps), paired=True, label=label,
                             invalid=edge_reasons(cells), foil_dead=foil,
                             rates=deep_rates(runs, tuned, tuning, steps, signs))
        out.append(censored_part(m, runs, signs, steps))
    return out


def censored_part(m: dict[str, Any], runs: pd.DataFrame, signs: Mapping[tuple[str, int], float],
                  steps: int) -> dict[str, Any]:
    """Issue 63, C2's rule b: a (d') part whose cells hold runs that never reached ``DEEP_TARGET`` reads their
    steps (the budget + 1) as bounds, not values (``decision.censor_bound``): a censored cell entering the lag's
    growth with + makes each value a lower bound, one entering with − an upper bound."""
    hit = {k: steps_of(runs, *k, steps) > steps for k in signs}
    plus = np.any([hit[k] for k, sg in signs.items() if sg > 0], axis=0)
    minus = np.any([hit[k] for k, sg in signs.items() if sg < 0], axis=0)
    cells = ", ".join(f"{a} d={d} {int(c.sum())}/{len(c)}" for (a, d), c in hit.items() if c.any())
    return decision.censor_bound(m, plus, minus, f"runs unreached within {steps} steps ({cells})")


def by_cell(df: pd.DataFrame, column: str, shift: float = 0.0) -> dict[str, np.ndarray]:
    """{"<arch> d=<d>": per-seed values of ``column`` - ``shift``} for each (arch, d) of ``df``, seeds in order."""
    return {f"{a} d={d}": g.sort_values("seed")[column].to_numpy(float) - shift
            for (a, d), g in df.groupby(["arch", "d"], sort=False)}


def deep_short_distance(block: dict) -> int:
    """(d')'s short d: the deep block's ``short_distance``, one of its ``distances`` and below at least one other
    (ValueError otherwise: the interaction would read no pair)."""
    short, ds = block.get("short_distance"), [int(d) for d in block["distances"]]
    if short is None or int(short) not in ds or not any(d > int(short) for d in ds):
        raise ValueError(f"C2 profile: deep.short_distance {short!r} must be one of deep.distances {ds} and below "
                         "another of them")
    return int(short)


def deep_cells(block: dict, distances: Sequence[int]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """The deep block's (arch, d) cells: (d)'s (self-attention and every conv of ``archs`` at each d of
    ``distances``) and its positive control's (``control``: self-attention and a contiguous conv at each of its
    distances; none without one). ValueError where the control's conv is not contiguous or its distances give no
    pair against ``short_distance`` (``deep_short_distance``)."""
    cells = [(a, int(d)) for d in distances for a in ("self_attention", *block["archs"])]
    control = block.get("control")
    if not control:
        return cells, []
    if control["arch"] not in ("conv_k3", "conv_k5"):
        raise ValueError(f"C2 profile: deep.control.arch {control['arch']!r} must be a contiguous conv (conv_k3, "
                         "conv_k5)")
    deep_short_distance({**block, "distances": control["distances"]})
    return cells, [(a, int(d)) for d in control["distances"] for a in ("self_attention", control["arch"])]


def learning_train(block: dict, fast: bool) -> dict:
    """(c)'s training block; a --fast run trains its fixed ``fast_train`` budget (no early stop: issue 25)."""
    return {**block["learning"]["train"], **(block.get("fast_train", {}) if fast else {})}
