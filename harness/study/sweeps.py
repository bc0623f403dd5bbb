"""The shared training sweep of issue 5: small attention models on one task over attention arms x d_k x seeds.

C3 (b)(c) (gradients during training, quality), R1 (b) (the default is never worse) and C4 (c) (the alpha sweep)
all train the same kind of model and differ only in the arms they compare, so they share
``attention_sweep``. It returns one row per (arm, d_k, seed) with the final held-out accuracy, steps
to the target accuracy, the learning curve, the logit std (C3's mediator, recorded beside every result) at init
and after training, and mean |dL/dlogits| over the first K training steps (read from the ``*.logits`` taps).

Runs are memoised in-process on what they actually compute: the model config with the attention scale *resolved*
(the scale each attention module uses in forward, after any active fault), the task, the training config, the
seed, the device and the active fault. So C3's explicit ``scale_exponent=0.5``, R1's ``scale="default"`` and C4's
alpha = 0.5 are one training run when no fault is active (bit-identical computations), and a fault never reuses
a clean run. Under pytest-xdist each worker has its own cache (recomputation, not wrong results); the modules
that share the sweep carry ``pytest.mark.xdist_group(XDIST_GROUP)``, so ``-n 2 --dist loadgroup`` runs them on one
worker and trains each run once.

Pairing: the runs of one seed share that seed's streams. ``train`` draws every training batch from
``torch.Generator(seed)``, ``build_for_task`` initialises after ``set_seed(seed)`` (scale arms get identical
weights: the scale is not a parameter), and the held-out set is the same for every seed. So two arms over the
same seeds compare seed by seed (``per_seed`` returns a cell in seed order): the paired test.

Budget (a profile block, ``block`` below), every key optional except ``train``::

    {"task": {"name": "kv_lookup", "n_pairs": 16},      # harness.data.make_task
     "model": {"d_model": 64, "n_heads": 1, ...},        # ModelConfig fields shared by every arm
     "model_name": "encoder_tagger",                     # model.registry name (a tagger)
     "train": {"steps": 300, "batch_size": 64, ...},     # TrainConfig fields
     "grad_steps": 50,                                   # K: steps whose dL/dlogits are recorded
     "target_accuracy": 0.9,                             # steps_to_target threshold on held-out accuracy
     "probe_size": 256,                                  # held-out examples for the init/final probes
     "test_size": 512,                                   # test part of the held-out split (default eval_size)
     "stack": 1}                                         # seeds per training step (harness.train.stacked; 1: loop)

``stack`` k > 1 trains each (arm, d_k)'s seeds k at a time, each with its own init, data and Adam state; the
rows equal the loop's within float32 rounding (tests/train/test_stacked.py). It is part of the memo key, so a
stacked run never stands in for a loop run.

Held-out split (issue 26): the training loop's evaluations (and ``val_loss``, which tuning chooses by) read a
validation part of ``train.eval_size`` held-out examples; ``final_loss`` and ``final_accuracy``, what the claims
compare, are measured once at the end on a disjoint test part (``harness.data.tasks.validation_test_split``).
"""
from __future__ import annotations

import json
import math
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from model import MultiHeadAttention, ModelConfig, active_fault
from model.kernels import active_kernel

from harness.measure import probes
from harness.trial.kernel import identity as kernel_identity
from harness.data import make_task
from harness.data.tasks import Task, validation_test_split
from harness.train.loop import TrainConfig, build_for_task, evaluate, train
from harness.train.stacked import train_stacked

BLOCK_KEYS = ("task", "model", "model_name", "train", "grad_steps", "target_accuracy", "probe_size", "test_size",
               "stack")
DEFAULT_TASK = {"name": "kv_lookup", "n_pairs": 16}
LOGIT_TAPS = "*.logits"
SOFTMAX_TAPS = ("*.logits", "*.weights", "*.q", "*.k")

# (effective config, task, train, K, target, probe, seed, device, fault) -> row dict
_RUN_CACHE: dict[str, dict[str, Any]] = {}

#: the pytest-xdist group of the claim modules that share this in-process cache (C3, C4, R1; Q1 calls the sweep
#: with its own task and model, shares no run, and so balances the other worker)
XDIST_GROUP = "attention_sweep"
#: issue 63, item 7: the note each of C3, C4 and R1 shows in its section (and docs/claims.md says): one experiment,
#: counted three times
SHARED_RUNS = ("One experiment, counted three times: C3 (1/√d_k ahead of no scaling at large d_k), C4 (no scaling "
               "behind 1/√d_k at large d_k) and R1 (1/√d_k never worse than no scaling) count the same runs of this "
               "sweep, so the same difference and interval stand in all three. Their agreement is one experiment read "
               "three ways, not three replications.")


def clear_sweep_cache() -> None:
    """Forget memoised runs (tests; or to force retraining in one process)."""
    _RUN_CACHE.clear()


# ------------------------------------------------------------------------------------------ probing
def probe_softmax_state(model: nn.Module, batch, n_classes: int, patterns: Sequence[str] = SOFTMAX_TAPS
                        ) -> dict[str, float]:
    """The state of every attention softmax in ``model`` on ``batch`` (eval mode, task loss back-propagated):
    logit std (the mediator: d_k * var_q * var_k before scaling), entropy, fraction of saturated rows (max weight
    > 0.99), mean |dL/dlogits| over all logits, and the per-component variance of q and k. Averaged over the
    attention modules (layers) and heads. NaN throughout when the attention runs through a kernel (issue 27): it
    exposes q and k but no logits, and the softmax state is read off the logits."""
    cache, _ = probes.run_with_taps(model, batch, patterns, n_classes=n_classes, backward=True)
    names = cache.names("*.logits")
    out = {"logit_std": [], "entropy": [], "saturated_fraction": [], "grad_abs_mean": [], "q_var": [], "k_var": []}
    if not names and cache.names("*.q"):
        return {k: math.nan for k in out}
    if not names:
        raise ValueError("probe_softmax_state: the model has no attention logits tap")
    for name in names:
        base = name[: -len("logits")]
        out["logit_std"].append(probes.logit_std(cache[name]))
        out["entropy"].append(float(np.mean(probes.attention_entropy(cache[base + "weights"]))))
        out["saturated_fraction"].append(float(np.mean(probes.saturated_fraction(cache[base + "weights"]))))
        out["grad_abs_mean"].append(_grad_abs_mean(cache, name))
        out["q_var"].append(probes.component_variance(cache[base + "q"]))
        out["k_var"].append(probes.component_variance(cache[base + "k"]))
    return {k: float(np.mean(v)) for k, v in out.items()}


def _grad_abs_mean(cache, name: str) -> float:
    """Mean |dL/dlogits| of tap ``name``; exactly 0 when no gradient reached the logits (weights that ignore
    them, e.g. the ``uniform_attention`` fault), rather than an error."""
    if name not in cache.grads:
        return 0.0
    return probes.softmax_grad_magnitude(cache.grad(name))


def effective_scales(model: nn.Module) -> list[float]:
    """The scale each attention module of ``model`` uses in a forward now (after any active fault)."""
    return [m.effective_scale() for m in model.modules() if isinstance(m, MultiHeadAttention)]


# -------------------------------------------------------------------------------------------- budget
def _check_block(block: Mapping[str, Any]) -> None:
    unknown = sorted(set(block) - set(BLOCK_KEYS))
    if unknown:
        raise ValueError(f"attention_sweep block has unknown key(s) {unknown}; valid: {list(BLOCK_KEYS)}")
    if "train" not in block:
        raise ValueError("attention_sweep block needs 'train' (TrainConfig fields: steps, batch_size, ...)")
    k = block.get("grad_steps", 0)
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise ValueError(f"attention_sweep block 'grad_steps' must be an integer >= 0, got {k!r}")
    stack = block.get("stack", 1)
    if not isinstance(stack, int) or isinstance(stack, bool) or stack < 1:
        raise ValueError(f"attention_sweep block 'stack' must be a positive integer, got {stack!r}")
    t = block.get("target_accuracy", 0.9)
    if not isinstance(t, (int, float)) or not 0.0 < t <= 1.0:
        raise ValueError(f"attention_sweep block 'target_accuracy' must be in (0, 1], got {t!r}")


def sweep_task(block: Mapping[str, Any]) -> Task:
    """The task a sweep budget trains on (``block["task"]``, default 16-pair key-value lookup)."""
    spec = dict(block.get("task", DEFAULT_TASK))
    name = spec.pop("name", None)
    if name is None:
        raise ValueError(f"attention_sweep block 'task' needs a 'name', got {spec!r}")
    return make_task(name, **spec)


def sweep_model_config(block: Mapping[str, Any], d_k: int, overrides: Mapping[str, Any] | None = None,
                       arm: str = "") -> ModelConfig:
    """The ModelConfig of one sweep point: one encoder layer, ``block["model"]``, then d_k and the arm's
    overrides (probes at init, e.g. C3 (a), build the same models the sweep trains)."""
    try:
        base = ModelConfig(**{"n_encoder_layers": 1, "n_decoder_layers": 0, **block.get("model", {})})
    except TypeError as e:
        raise ValueError(f"attention_sweep block 'model': {e}") from None
    try:
        return base.replace(d_k=int(d_k), **dict(overrides or {}))
    except TypeError as e:
        raise ValueError(f"arm {arm!r}: {e}") from None


def build_sweep_model(block: Mapping[str, Any], task: Task, d_k: int, overrides: Mapping[str, Any] | None,
                      seed: int, arm: str = "") -> nn.Module:
    """``build_for_task`` of one sweep point (seeded: same seed, same initial weights across scale arms)."""
    cfg = sweep_model_config(block, d_k, overrides, arm)
    return build_for_task(block.get("model_name", "encoder_tagger"), task, cfg, seed)


def _run_key(model: nn.Module, cfg: ModelConfig, block: Mapping[str, Any], seed: int, device: str) -> str:
    resolved = cfg.to_dict()
    resolved.pop("scale"), resolved.pop("scale_exponent")
    resolved["effective_scales"] = effective_scales(model)
    # the config names a model's own kernel (cfg.kernel: its identity, source hash included); the session's kernel
    # (--attention, model.kernels.set_kernel) runs in every model without one, so it is keyed too
    return json.dumps({"cfg": resolved, "block": block, "seed": seed, "device": device,
                       "fault": active_fault(), "session_kernel": kernel_identity(active_kernel())},
                      sort_keys=True, default=str)


# --------------------------------------------------------------------------------------------- sweep
def _runs(arm: str, overrides: Mapping[str, Any], d_k: int, seeds: Sequence[int], block: Mapping[str, Any],
          task: Task, device: str, progress: Callable[[str], Any] | None) -> list[dict[str, Any]]:
    # subnormal floats flushed to zero: a saturated softmax (unscaled attention at large d_k) fills exp() with
    # subnormals, which the CPU computes ~3x slower; the results move below 1e-38 only (issue 17's budget)
    torch.set_flush_denormal(True)
    try:
        return _runs_flushed(arm, overrides, d_k, seeds, block, task, device, progress)
    finally:
        torch.set_flush_denormal(False)


def _runs_flushed(arm: str, overrides: Mapping[str, Any], d_k: int, seeds: Sequence[int], block: Mapping[str, Any],
                  task: Task, device: str, progress: Callable[[str], Any] | None) -> list[dict[str, Any]]:
    """One row per seed of one (arm, d_k): memoised rows as they are, the others trained ``block["stack"]`` seeds
    at a time (``harness.train.stacked``; one at a time in the loop when it is 1, or under a kernel)."""
    cfg = sweep_model_config(block, d_k, overrides, arm)
    tcfg = TrainConfig.from_dict({**block["train"], "device": device}).replace(
        target_metric="accuracy", target_value=float(block.get("target_accuracy", 0.9)), stop_at_target=False)
    rows, pending = {}, []
    for seed in seeds:
        model = build_for_task(block.get("model_name", "encoder_tagger"), task, cfg, seed)
        key = _run_key(model, cfg, block, seed, device)
        if key in _RUN_CACHE:
            rows[seed] = {**_RUN_CACHE[key], "arm": arm, "cached": True}
        else:
            pending.append(_Run(arm, int(d_k), int(seed), key, model, cfg, block, task, device))
    k = _stack(block, cfg)
    for group in (pending[i: i + k] for i in range(0, len(pending), k)):
        t0 = time.perf_counter()
        val, test = validation_test_split(task, tcfg.eval_size, int(block.get("test_size", tcfg.eval_size)))
        kw = dict(taps=[LOGIT_TAPS], tap_steps=group[0].K) if group[0].K else {}
        if len(group) == 1:
            r = group[0]
            results = [train(r.model, task, tcfg, r.seed, on_step=r.on_step if r.K else None, progress=progress,
                             heldout=val, retain_grad=bool(r.K), **kw)]
        else:
            results = train_stacked([r.model for r in group], task, tcfg, [r.seed for r in group],
                                    on_step=[r.on_step if r.K else None for r in group], progress=progress,
                                    heldout=val, **kw)
        done = [r.row(res, test, tcfg) for r, res in zip(group, results)]
        wall = (time.perf_counter() - t0) / len(group)            # a stacked run's share of its group's time
        for r, row in zip(group, done):
            rows[r.seed] = _RUN_CACHE[r.key] = {**row, "wall_time_s": wall}
    return [rows[seed] for seed in seeds]


def _stack(block: Mapping[str, Any], cfg: ModelConfig) -> int:
    """Seeds per training step: the budget's ``stack`` (default 1, the loop); 1 under a kernel on trial, which
    need not run under ``vmap``."""
    if cfg.kernel is not None or active_kernel() is not None:
        return 1
    return int(block.get("stack", 1))


class _Run:
    """One (arm, d_k, seed) of the sweep: its model, the softmax state at init, and what ``on_step`` records over
    the first K steps (read from the ``*.logits`` taps); ``row`` turns its training result into the sweep's row."""

    def __init__(self, arm: str, d_k: int, seed: int, key: str, model: nn.Module, cfg: ModelConfig,
                 block: Mapping[str, Any], task: Task, device: str) -> None:
        self.arm, self.d_k, self.seed, self.key = arm, d_k, seed, key
        self.model, self.cfg, self.task, self.device = model, cfg, task, device
        self.K = int(block.get("grad_steps", 0))
        self.probe_batch = task.heldout(int(block.get("probe_size", 256))).to(device)
        model.to(device)
        self.init = probe_softmax_state(model, self.probe_batch, task.tgt_vocab)
        self.grads: list[float] = []
        self.stds: list[float] = []
        self.absmax: list[float] = []

    def on_step(self, step, model, batch, loss, cache=None) -> None:
        names = cache.names(LOGIT_TAPS) if cache is not None else []
        if not names:               # no taps this step, or a kernel that exposes no logits (the columns stay NaN)
            return
        self.grads.append(float(np.mean([_grad_abs_mean(cache, n) for n in names])))
        self.stds.append(float(np.mean([probes.logit_std(cache[n]) for n in names])))
        self.absmax.append(max(float(cache[n].abs().max()) for n in names))      # Q1: logit growth

    def row(self, res, test, tcfg: TrainConfig) -> dict[str, Any]:
        model, task, grads, stds, absmax = self.model, self.task, self.grads, self.stds, self.absmax
        tested = evaluate(model, task, batch=test, batch_size=tcfg.eval_batch_size, device=self.device)
        final = probe_softmax_state(model, self.probe_batch, task.tgt_vocab)
        steps = [int(c["step"]) for c in res.curve]
        return {
            "arm": self.arm, "d_k": self.d_k, "seed": self.seed,
            "score": self.cfg.score, "scale": float(np.mean(effective_scales(model))),
            "final_accuracy": float(tested.get("accuracy", math.nan)),
            "final_loss": float(tested.get("loss", math.nan)),
            "val_loss": float(res.final.get("loss", math.nan)),
            "val_accuracy": float(res.final.get("accuracy", math.nan)),
            "test_size": len(test),
            "steps_to_target": float(res.steps_to_target) if res.steps_to_target is not None else math.nan,
            # unreached -> the budget: conservative for "X reaches the target sooner than Y" when Y misses it
            "steps_to_target_censored": float(res.steps_to_target if res.steps_to_target is not None
                                              else res.steps_run),
            "reached_target": res.steps_to_target is not None,
            "diverged": bool(res.diverged),
            **{f"{k}_init": v for k, v in self.init.items()},
            **{f"{k}_final": v for k, v in final.items()},
            "grad_abs_mean_first_k": float(np.mean(grads)) if grads else math.nan,
            "logit_std_first_k": float(np.mean(stds)) if stds else math.nan,
            "logit_absmax_first_k": float(np.max(absmax)) if absmax else math.nan,
            "grad_steps": len(grads),
            "curve_step": steps,
            "curve_accuracy": [float(c.get("accuracy", math.nan)) for c in res.curve],
            "grad_curve": grads,
            "train_time_s": float(res.train_time_s),
            "cached": False,
        }


def attention_sweep(arms: Mapping[str, Mapping[str, Any]], d_ks: Sequence[int],
                            block: Mapping[str, Any], seeds: Sequence[int], device: str | torch.device = "cpu",
                            progress: Callable[[str], Any] | None = None) -> pd.DataFrame:
    """Train one model per (arm, d_k, seed) and return one row per run (see the module docstring).

    ``arms``: name -> ModelConfig overrides on top of ``block["model"]`` (e.g. ``{"scaled":
    {"scale_exponent": 0.5}, "unscaled": {"scale": "none"}, "additive": {"score": "additive"}}``).
    Columns: arm, d_k, seed, score, scale (resolved), final_accuracy and final_loss (on the test part),
    val_loss and val_accuracy (the validation part, which tuning reads), test_size, steps_to_target (NaN if
    not reached), steps_to_target_censored, reached_target, diverged, {logit_std, entropy, saturated_fraction,
    grad_abs_mean, q_var, k_var}_{init,final}, grad_abs_mean_first_k and logit_std_first_k (mean over the first
    K = ``grad_steps`` steps), logit_absmax_first_k (the largest |logit| of any layer over those K training batches:
    Q1's max attention logit over training when K = steps), grad_steps, curve_step / curve_accuracy / grad_curve (lists), train_time_s,
    wall_time_s, cached (True when the run came from the in-process memo)."""
    if not arms:
        raise ValueError("attention_sweep needs at least one arm")
    if not d_ks or not seeds:
        raise ValueError(f"attention_sweep needs d_ks and seeds, got d_ks={list(d_ks)} seeds={list(seeds)}")
    _check_block(block)
    block = json.loads(json.dumps(block))             # a plain copy (and it must be JSON: it is the memo key)
    task = sweep_task(block)
    device = str(torch.device(device))
    rows, n, i = [], len(arms) * len(d_ks) * len(seeds), 0
    for d_k in d_ks:
        for arm, overrides in arms.items():
            for seed in seeds:          # announced per run as the cell starts (its seeds may train together)
                i += 1
                if progress is not None:
                    _announce(progress, f"sweep {i}/{n}: {arm} d_k={d_k} seed {seed}")
            rows += _runs(arm, overrides, int(d_k), [int(s) for s in seeds], block, task, device, progress)
    return pd.DataFrame(rows)


def _announce(progress: Callable[..., Any], msg: str) -> None:
    """A line per run, past the plugin's rate limit (``force=True``) when the callable takes it."""
    try:
        progress(msg, force=True)
    except TypeError:
        progress(msg)


def per_seed(sweep: pd.DataFrame, arm: str, d_k: int, column: str) -> np.ndarray:
    """``column`` of one (arm, d_k) cell in seed order, for a paired comparison with another cell over the
    same seeds (see "Pairing" above)."""
    cell = sweep[(sweep.arm == arm) & (sweep.d_k == d_k)].sort_values("seed")
    if cell.empty:
        raise ValueError(f"the sweep has no runs of arm {arm!r} at d_k={d_k}")
    return cell[column].to_numpy(float)


def curves_frame(sweep: pd.DataFrame) -> pd.DataFrame:
    """Long format of the learning curves: one row per (arm, d_k, seed, step) with held-out accuracy."""
    rows = [{"arm": r.arm, "d_k": r.d_k, "seed": r.seed, "step": s, "accuracy": a}
            for r in sweep.itertuples() for s, a in zip(r.curve_step, r.curve_accuracy)]
    return pd.DataFrame(rows, columns=["arm", "d_k", "seed", "step", "accuracy"])


def summary_table(sweep: pd.DataFrame) -> pd.DataFrame:
    """The per-run table without list columns (for ``ev.table``)."""
    return sweep.drop(columns=[c for c in ("curve_step", "curve_accuracy", "grad_curve") if c in sweep.columns])
