"""Architectures compared on a sequence-transduction task at a fixed step budget, each at its own tuned rate (C1).

One task as every stage sees it (``Setup``): its validation and test parts of the held-out split (the validation
part scores tuning, the test part the comparison; neither is ever trained on) and each architecture's model config,
the LSTM's width matched to the Transformer's parameter count. ``measure`` first tunes every architecture on tuning
seeds disjoint from the evaluation seeds (``harness.study.tuning.choose_rates`` over ``tuning_run``), then trains each
on the evaluation seeds at its tuned rate, seeds outer and architectures inner so machine-load drift hits all
alike, and measures it on the test part (``train_and_test``). Budgets are the profile's C1 block.

What C1 reads of the runs, handed back as measurements for the claim module to record: the tuning tables
(``lr_tuning_table``, ``fixed_lr_table``), a leaking decoder (``leaking``, ``leak_reason``), the held-out loss per
seed (``generalisation``), an arm's rate choice (``arch_rate``), the loss floor (``floor_reason``, ``at_floor``),
the learning curve's area (``convergence_area``), wall time to 95% (``wall_time``) and the time per step against
length (``times_steps``, ``step_times``, ``step_time_parts``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from model import ModelConfig, param_count

from harness.record import decision
from harness.measure.bench import step_time_slopes, step_time_vs_length
from harness.measure.probes import FUTURE_LEAK_TOL, corpus_bleu, forbidden_modules, future_target_leak, greedy_texts
from harness.data import make_task
from harness.data.tasks import Batch, Task, rows_in_training_split, validation_test_split
from harness.train.loop import (TrainConfig, build_for_task, evaluate, to_target, torch_threads, train, width_for_params)
from harness.study.tuning import (Tuned, choose_rates, edge_reasons, fixed_rate_table, rate_choice_of, tuned_table,
                                   tuning_seeds)

#: an architecture's name in the comparison -> its name in the model registry
ARCH = {"transformer": "transformer", "lstm": "lstm_seq2seq"}
#: the loss floor (``decision.dead_foil``): the target is a function of the source, so the loss can reach 0; an arm
#: within FLOOR_TOL of it on every seed has every reference token at geometric-mean probability >= e^-0.01 = 0.99,
#: greedy decoding exact, and what is left of its loss is how confident a solved task became, not its quality
LOSS_FLOOR = 0.0
FLOOR_TOL = 0.01
#: the tuning table's per-rate columns beside the choosing score (pandas named aggregations of the tuning runs)
TUNING_TABLE = {"steps_to_95": ("steps_to_95", "mean"), "time_to_95_s": ("time_to_95_s", "mean"),
                "reached_95": ("reached_95", "sum"), "runs": ("seed", "size")}


def train_config(block: dict[str, Any], task_name: str, device: torch.device | str, arch: str = "transformer",
                 fast: bool = False, lr: float | None = None) -> TrainConfig:
    """The profile's training block, with the task's overrides, the LSTM's (``lstm.train``) and fast mode's
    (``fast.train``) on top; the stop target is the profile's ``stop_exact_match``; ``lr``: a tuned rate in place
    of the block's."""
    d = dict(block["train"])
    d.update(block["tasks"][task_name].get("train", {}))
    if arch == "lstm":
        d.update(block["lstm"].get("train", {}))
    if fast:
        d.update(block.get("fast", {}).get("train", {}))
    if lr is not None:
        d["lr"] = float(lr)
    # a fixed budget (issue 26): the target only records steps to it (the curve), it never stops a run
    d.update(target_metric="exact_match", target_value=float(block["target"]), stop_at_target=False,
             device=str(device))
    return TrainConfig.from_dict(d)


def one_budget(block: dict[str, Any], tasks: Sequence[str], archs: Sequence[str] = ("transformer", "lstm")
               ) -> tuple[int, int]:
    """(steps, eval_every) of the comparison's one budget rule (C1's docstring): every task in ``tasks`` and every
    arch trains the same number of steps and is evaluated at the same steps. A profile that breaks the rule is an
    error before anything trains, naming what differs."""
    seen = {(t, a): train_config(block, t, "cpu", a) for t in tasks for a in archs}
    budgets = {(c.steps, c.eval_every or c.steps) for c in seen.values()}
    if len(budgets) != 1:
        raise ValueError("C1's comparison needs one step budget and evaluation interval on every task and arch; the "
                         "profile gives " + ", ".join(f"{t}/{a} {c.steps} steps every {c.eval_every}"
                                                      for (t, a), c in seen.items()))
    return budgets.pop()


def build_task(block: dict[str, Any], task_name: str) -> Task:
    return make_task(task_name, **block["tasks"][task_name].get("task", {}))


# ------------------------------------------------------------------------------------------ measurement
def train_and_test(arch: str, task: Task, mcfg: ModelConfig, tcfg: TrainConfig, seed: int, val: Batch,
                   test: Batch, target: float, progress: Callable[[str], Any] | None = None,
                   bleu: bool = False) -> tuple[dict[str, Any], list[dict[str, float]]]:
    """Train ``arch`` ("transformer" | "lstm") on ``task`` (early stop on ``val``), then measure on ``test``.
    Returns (one row for the per-seed table, the validation learning curve)."""
    model = build_for_task(ARCH[arch], task, mcfg, seed)
    run = train(model, task, tcfg, seed, progress=progress, heldout=val)
    res = evaluate(model, task, test, batch_size=tcfg.eval_batch_size, max_decode_len=tcfg.max_decode_len,
                   device=tcfg.device)
    reached, steps, seconds = to_target(run, target)
    leak, leak_at = future_target_leak(model, test, seed=seed, device=tcfg.device)
    row = {"task": task.name, "arch": arch, "seed": seed, "lr": tcfg.lr, "d_model": mcfg.d_model,
           "params": param_count(model),
           "forbidden_modules": ", ".join(f"{n} ({t})" for n, t in forbidden_modules(model)),
           "future_leak": leak, "future_leak_at": -1 if leak_at is None else leak_at,
           "steps_run": run.steps_run, "diverged": run.diverged,
           "val_exact_match": run.final.get("exact_match", math.nan),
           "test_exact_match": res["exact_match"], "test_token_accuracy": res["token_accuracy"],
           "test_loss": res["loss"], "val_loss": run.final.get("loss", math.nan),
           "test_size": len(test), "test_rows_in_train_split": rows_in_training_split(task, test),
           "reached_95": reached, "steps_to_95": steps, "time_to_95_s": seconds,   # censored: the whole run
           "train_time_s": run.train_time_s, "s_per_step": run.train_time_s / max(run.steps_run, 1)}
    if bleu:
        hyps = greedy_texts(model, test, task.text_tokens, max_len=test.tgt_out.shape[1], device=tcfg.device)
        refs = [task.text_tokens(r) for r in test.tgt_out]
        row["bleu"] = corpus_bleu(hyps, refs, tokenize="none")
        row["example"] = f"{task.text_tokens(test.src[0], 'src')} -> {hyps[0]} (ref {refs[0]})"
    curve = [{"task": task.name, "arch": arch, "seed": seed, "step": c["step"], "exact_match": c["exact_match"],
              "loss": c.get("loss", math.nan), "train_time_s": c["train_time_s"]} for c in run.curve]
    return row, curve


@dataclass(frozen=True)
class Setup:
    """One task as both stages see it: the task, its validation and test parts, each arch's model config (the
    LSTM's width matched to the Transformer's parameter count)."""
    task: Task
    val: Batch
    test: Batch
    mcfg: dict[str, ModelConfig]


def setup_task(block: dict[str, Any], task_name: str, archs: tuple[str, ...]) -> Setup:
    task = build_task(block, task_name)
    val, test = validation_test_split(task, int(block["train"].get("eval_size", 256)), int(block["test_size"]))
    if rows_in_training_split(task, test):   # a harness bug, not a model property: stop rather than judge
        raise RuntimeError(f"{task_name}: {rows_in_training_split(task, test)} test rows lie in the training split")
    mcfg = {"transformer": ModelConfig.small(**block["model"])}   # the LSTM's width is then matched
    if "lstm" in archs:
        n_t = param_count(build_for_task(ARCH["transformer"], task, mcfg["transformer"], 0))
        lcfg = mcfg["transformer"].replace(n_heads=1)
        mcfg["lstm"], _ = width_for_params(ARCH["lstm"], task, lcfg, n_t, block["lstm"]["widths"])
    return Setup(task, val, test, mcfg)


def tuning_run(arch: str, setup: Setup, tcfg: TrainConfig, seed: int, target: float,
               progress: Callable[..., Any] | None = None) -> dict[str, Any]:
    """One tuning run: ``arch`` trained on a tuning seed for the fixed budget. Its validation loss at the end (the
    choice; inf when diverged), and, reported, its steps and training seconds to validation exact match ``target``
    (censored: the whole budget)."""
    model = build_for_task(ARCH[arch], setup.task, setup.mcfg[arch], seed)
    with torch_threads(tcfg.num_threads):
        run = train(model, setup.task, tcfg, seed, progress=progress, heldout=setup.val)
    reached, steps, seconds = to_target(run, target)
    loss = float(run.final.get("loss", math.nan))
    return {"steps_to_95": steps if reached else tcfg.steps, "val_loss": loss if math.isfinite(loss) else math.inf,
            "time_to_95_s": seconds, "reached_95": reached, "diverged": run.diverged}


def tune_task(block: dict[str, Any], task_name: str, setup: Setup, archs: tuple[str, ...], seeds, device,
              progress: Callable[..., Any] | None = None, *, by: Sequence[str]
              ) -> tuple[pd.DataFrame, dict[str, Tuned]]:
    """Issue 17's tuning stage for one comparison task (module docstring): ``harness.study.tuning.choose_rates`` over
    each arch's ``tuning.<arch>.lr_grid`` on ``tuning.seeds`` tuning seeds (disjoint from ``seeds``), each run a
    ``tuning_run``, chosen by the scores ``by`` (``tuning_run``'s names), the grid extended past an end at most ``tuning.extend`` times.
    Returns (one row per tuning run, the choice per arch)."""
    tune_block = block["tuning"]

    def score(arch: str, lr: float, seed: int) -> dict[str, Any]:
        if progress:
            progress(f"tuning {arch} {task_name} lr {lr:.3g} seed {seed}", force=True)
        tcfg = replace(train_config(block, task_name, device, arch), lr=lr)
        return tuning_run(arch, setup, tcfg, seed, float(block["target"]), progress)

    table, tuned = choose_rates(archs, lambda arch: tune_block[arch]["lr_grid"],
                                tuning_seeds(seeds, int(tune_block["seeds"])), score, by=by,
                                extend=int(tune_block.get("extend", 0)))
    return table.assign(task=task_name), tuned


def measure_task(block: dict[str, Any], task_name: str, archs: tuple[str, ...], seeds, device,
                 progress: Callable[[str], Any] | None = None, fast: bool = False,
                 lrs: dict[str, float] | None = None, setup: Setup | None = None
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every seed of every arch on one task, seeds outer and archs inner (so that machine-load drift hits both
    architectures alike), each arch at its rate in ``lrs`` (tuned) or else the profile's. The LSTM's d_model is
    matched to the Transformer's parameter count. Returns (per-seed rows, learning curves)."""
    setup = setup or setup_task(block, task_name, archs)
    task, val, test, mcfg = setup.task, setup.val, setup.test, setup.mcfg
    rows, curves = [], []
    for seed in seeds:
        for arch in archs:
            tcfg = train_config(block, task_name, device, arch, fast, (lrs or {}).get(arch))
            say = (lambda msg, a=arch: progress(f"{a} {msg}")) if progress else None
            # the profile's threads for the test measurement too, not only inside train() (which restores the
            # count when it returns): greedy decoding on torch's default 2 threads ran ~4x slower on a shared box
            with torch_threads(tcfg.num_threads):
                row, curve = train_and_test(arch, task, mcfg[arch], tcfg, seed, val, test, float(block["target"]),
                                            say, bleu=task_name == "number_words_de")
            rows.append(row)
            curves.extend(curve)
            if progress:
                progress(f"{arch} {task_name} seed {seed}: test exact match {row['test_exact_match']:.3f} after "
                         f"{row['steps_run']} steps", force=True)
    return pd.DataFrame(rows), pd.DataFrame(curves)


@dataclass
class Measured:
    """Every run of C1's measurement: evaluation runs (``runs``) and their validation curves, the tuning runs and the
    rate chosen per comparison task and arch (``tuned[task][arch]``)."""
    runs: pd.DataFrame
    curves: pd.DataFrame
    tuning: pd.DataFrame
    tuned: dict[str, dict[str, Tuned]]


def measure(block: dict[str, Any], tasks: tuple[str, ...], compare: tuple[str, ...], seeds, device,
            progress: Callable[..., Any] | None = None, fast: bool = False, *, by: Sequence[str]) -> Measured:
    """Each task's Transformer on the evaluation ``seeds``; on a comparison task first ``tune_task`` (both arms, on
    tuning seeds, choosing by ``by``), then both arms on the evaluation seeds, each at its tuned rate."""
    frames, curves, tuning, tuned = [], [], [], {}
    for name in tasks:
        archs = ("transformer", "lstm") if name in compare else ("transformer",)
        setup = setup_task(block, name, archs)
        if name in compare:
            table, tuned[name] = tune_task(block, name, setup, archs, seeds, device, progress, by=by)
            tuning.append(table)
        if progress:
            progress(f"{name}: {', '.join(archs)} x seeds {seeds}", force=True)
        df, cv = measure_task(block, name, archs, seeds, device, progress, fast,
                              {a: t.lr for a, t in tuned.get(name, {}).items()}, setup)
        frames.append(df)
        curves.append(cv)
    return Measured(pd.concat(frames, ignore_index=True), pd.concat(curves, ignore_index=True),
                    pd.concat(tuning, ignore_index=True) if tuning else pd.DataFrame(), tuned)


# ------------------------------------------------------------------------------------ what C1 reads of the runs
def lr_tuning_table(tuning: pd.DataFrame, tuned: Mapping[str, Mapping[str, Tuned]]) -> pd.DataFrame:
    """Per (task, arch, rate): ``harness.study.tuning.tuned_table`` (the tuning seeds' mean validation loss, the chosen
    rate and its edge) with their mean steps and seconds to 95% and how many reached it."""
    return pd.concat([tuned_table(by_arch, tuning[tuning.task == name], TUNING_TABLE).drop(columns="d_k")
                      .assign(task=name) for name, by_arch in tuned.items()], ignore_index=True)


def fixed_lr_table(tuning: pd.DataFrame, tuned: Mapping[str, Mapping[str, Tuned]]) -> pd.DataFrame:
    """Both arms at each rate their grids share (``harness.study.tuning.fixed_rate_table``): mean steps, seconds and ln
    seconds to 95% on the tuning seeds; ln(LSTM / Transformer) seconds is the difference of the ln columns."""
    tuning = tuning.assign(ln_time_to_95_s=np.log(tuning.time_to_95_s.to_numpy(float)))
    return pd.concat([fixed_rate_table(tuning[tuning.task == name], by_arch,
                                       ("steps_to_95", "time_to_95_s", "ln_time_to_95_s")).assign(task=name)
                      for name, by_arch in tuned.items()], ignore_index=True)


def leaking(rows: pd.DataFrame) -> pd.DataFrame:
    """The Transformer runs among ``rows`` whose decoder reads later target tokens (none without the probe's
    column)."""
    if "future_leak" not in rows:
        return rows.iloc[:0]
    return rows[(rows.get("arch", "transformer") == "transformer") & (rows.future_leak > FUTURE_LEAK_TOL)]


def leak_reason(rows: pd.DataFrame) -> str:
    """Why a loss measured on these rows is invalid: a Transformer among them reads later target tokens."""
    leaks = leaking(rows)
    return (f"the Transformer's decoder reads later target tokens (decoder_is_causal) on seeds {leaks.seed.tolist()}: "
            "its teacher-forced loss scores copying, not transduction") if len(leaks) else ""


def generalisation(rows: pd.DataFrame, rates: list[dict[str, Any]] | None = None) -> tuple[dict[str, Any], str]:
    """(b) on one task's Transformer rows: the per-seed test loss as a measurement (invalid where the decoder
    leaks), and the reported detail. ``rates``: the Transformer's rate choice on a comparison task
    (``arch_rate``), ``[]`` where it ran at the profile's rate."""
    rows = rows.sort_values("seed")
    detail = (f"exact match per seed {np.round(rows.test_exact_match.to_numpy(float), 4).tolist()}, token accuracy "
              f"{rows.test_token_accuracy.mean():.4f}; {int(rows.test_size.iloc[0])} test examples; steps "
              f"{rows.steps_run.tolist()}" + (f"; BLEU {rows.bleu.mean():.2f}" if "bleu" in rows and
                                               rows.bleu.notna().any() else ""))
    return decision.samples(rows.test_loss.to_numpy(float), label=str(rows.task.iloc[0]),
                            invalid=leak_reason(rows), rates=rates), detail



def arch_rate(tuning: pd.DataFrame, tuned: Mapping[str, Mapping[str, Tuned]], rows: pd.DataFrame, task_name: str,
              arch: str, sign: float = 1.0, log: bool = False) -> dict[str, Any]:
    """One architecture's rate choice on one comparison task (``tuning.rate_choice_of``), for a measurement that
    reads its test loss (``log``: its log) with ``sign``: the tuning runs' validation loss chose the rate and stands
    for the test loss (the same quantity on a disjoint split)."""
    return rate_choice_of(f"C1/{task_name}/{arch}", tuned[task_name][arch],
                          tuning[(tuning.task == task_name) & (tuning.arm == arch)], rows, "test_loss", sign,
                          np.log if log else None, tuning_column="val_loss")


def floor_reason(rows: pd.DataFrame, arch: str, tuned: Tuned | None = None) -> str:
    """``decision.dead_foil`` at the loss floor (``LOSS_FLOOR`` +- ``FLOOR_TOL``) for one arm of one task: its
    held-out test loss on every seed, and, with ``tuned``, its tuning seeds' mean validation loss at every rate tried
    (the live-foil rule); '' when it is off the floor."""
    loss = rows[rows.arch == arch].sort_values("seed").test_loss.to_numpy(float)
    return decision.dead_foil(loss, floor=LOSS_FLOOR, tol=FLOOR_TOL, arm=f"the {arch} ({rows.task.iloc[0]})",
                              tried=tuned.mean_loss if tuned is not None else ())


def convergence_area(curves: pd.DataFrame, runs: pd.DataFrame, steps: int, every: int,
                     tuned: Mapping[str, Mapping[str, Tuned]] | None = None) -> tuple[list[dict[str, Any]], str]:
    """``convergence_area_vs_lstm``: per comparison task, each run's mean validation loss over the evaluation points
    of the one budget (every ``every`` steps and the last, ``steps``), seed-paired (LSTM, Transformer), and the
    detail. A part is invalid where a Transformer leaks (``leak_reason``), an arm sits at an edge of its grid, or a
    run stopped short of the budget (diverged): its curve lacks points the others have."""
    points = sorted({*range(every, steps + 1, every), steps})
    parts, text = [], []
    for task_name, g in curves[curves.task.isin(runs.task.unique())].groupby("task", sort=False):
        area, short = {}, []
        for arch in ("lstm", "transformer"):
            by_seed = g[g.arch == arch].groupby("seed")
            short += [f"{arch} seed {seed}" for seed, c in by_seed if sorted(c.step) != points]
            area[arch] = by_seed.apply(lambda c: float(c.set_index("step").loss.reindex(points).mean()))
        at = runs[runs.task == task_name]
        invalid = "; ".join(r for r in (leak_reason(at) or edge_reasons((tuned or {}).get(task_name, {}).values()),
                                        f"stopped short of the budget: {', '.join(short)}" if short else "") if r)
        parts.append(decision.samples(area["lstm"].to_numpy(float), area["transformer"].to_numpy(float), paired=True,
                                      label=task_name, invalid=invalid))
        text.append(f"{task_name}: transformer {np.round(area['transformer'], 4).tolist()} vs lstm "
                    f"{np.round(area['lstm'], 4).tolist()}")
    return parts, (f"mean validation loss over steps {points[0]}..{points[-1]} ({len(points)} points, every {every}), "
                   "per seed: " + "; ".join(text))


def at_floor(df: pd.DataFrame) -> list[str]:
    """The comparison tasks where some arm's held-out loss sits at the floor on every seed (the ceiling objection)."""
    return [f"{name} ({', '.join(a for a in ('transformer', 'lstm') if floor_reason(g, a))})"
            for name, g in df.groupby("task", sort=False) if floor_reason(g, "transformer") or floor_reason(g, "lstm")]


def wall_time(df: pd.DataFrame, tuned: Mapping[str, Mapping[str, Tuned]] | None = None
              ) -> tuple[list[dict[str, Any]], str]:
    """(c): per comparison task, the seed-paired ln wall time to 95% (LSTM, Transformer), and the detail (rates,
    times, steps, censored runs). ``tuned``: task -> arch -> its tuned rate; an arm at an edge of its grid makes
    that task's part invalid (inconclusive, the reason naming the arm and the edge)."""
    parts, text = [], []
    for task_name, g in df.groupby("task", sort=False):
        t, lstm = (g[g.arch == a].sort_values("seed") for a in ("transformer", "lstm"))
        rates = (tuned or {}).get(task_name, {})
        parts.append(decision.samples(np.log(lstm.time_to_95_s.to_numpy(float)),
                                      np.log(t.time_to_95_s.to_numpy(float)), paired=True, label=task_name,
                                      invalid=edge_reasons(rates.values())))
        text.append(f"{task_name}: "
                    + (f"tuned rates transformer {rates['transformer'].lr:.3g}, lstm {rates['lstm'].lr:.3g}; "
                       if {"transformer", "lstm"} <= set(rates) else "")
                    + f"transformer {np.round(t.time_to_95_s, 1).tolist()} s vs lstm "
                    f"{np.round(lstm.time_to_95_s, 1).tolist()} s; steps to 95% {t.steps_to_95.tolist()} vs "
                    f"{lstm.steps_to_95.tolist()}")
    censored = df[~df.reached_95].groupby("arch").size().to_dict()
    return parts, "; ".join(text) + f"; runs that never reached 95% (censored): {censored or 'none'}"


def times_steps(block: dict[str, Any], device: torch.device | str) -> bool:
    """Whether ``step_time_vs_length`` is declared: a block with ``step_time`` (full) under --device cuda."""
    return bool(block.get("step_time")) and torch.device(device).type == "cuda"


def step_times(block: dict[str, Any], device: torch.device | str) -> pd.DataFrame:
    """``harness.measure.bench.step_time_vs_length`` of both architectures at the profile's model sizes (the LSTM's width
    matched on reverse), over ``step_time``'s lengths at its tokens per batch."""
    spec, setup = block["step_time"], setup_task(block, "reverse", ("transformer", "lstm"))
    return step_time_vs_length({a: (ARCH[a], setup.mcfg[a]) for a in ("transformer", "lstm")}, spec["lengths"],
                               int(spec["tokens_per_batch"]), int(spec["repeats"]), int(spec["steps"]),
                               device=device, warmup=int(spec["warmup_steps"]), train=block["train"])


def step_time_parts(times: pd.DataFrame) -> tuple[list[dict[str, Any]], str]:
    """``step_time_vs_length``'s measurement: the per-repeat log-log slopes (LSTM, Transformer), paired."""
    slopes = step_time_slopes(times)
    by = {a: slopes[slopes.arm == a].sort_values("repeat").slope.to_numpy(float) for a in ("transformer", "lstm")}
    med = times.groupby(["arm", "n"]).s_per_step.median().unstack("n")
    detail = (f"slopes per repeat transformer {np.round(by['transformer'], 3).tolist()}, lstm "
              f"{np.round(by['lstm'], 3).tolist()}; median ms per step at n = {list(med.columns)}: "
              + "; ".join(f"{a} {np.round(1e3 * med.loc[a].to_numpy(float), 2).tolist()}" for a in med.index))
    return [decision.samples(by["lstm"], by["transformer"], paired=True, label="reverse")], detail
