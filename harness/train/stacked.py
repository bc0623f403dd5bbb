"""k seeds of one model trained in one step (issue 57): ``train_stacked(models, task, cfg, seeds)`` returns the
``RunResult`` that ``train(model, task, cfg, seed)`` returns for each seed, equal within floating-point rounding.

A small model is bound by per-operation overhead, not by arithmetic, on a GPU and on one CPU thread alike; one
step of k stacked seeds pays that overhead once. The k models' parameters are stacked on a leading dimension
(``torch.func.stack_module_state``) and the model's own forward runs over them under ``torch.func.vmap`` of
``functional_call``, as in PyTorch's model-ensembling tutorial. Why that and not hand-stacked weights with batched
matmuls: the forward stays the one in ``model/``, so every arm, fault, kernel switch and tap the loop trains is
trained here with no second copy of the model to drift. The loss is the sum of the k per-seed losses and one
ordinary ``backward()`` runs on the batched operations (no vmap in backward): seed i's gradient is
d loss_i / d theta_i, since no operation mixes seeds.

Per seed, as in the loop:

* the init: each model is built with its own seed (``build_for_task``), then stacked;
* the data: seed i's batches come from its own ``torch.Generator(seed)``, in the loop's order;
* the optimiser: one Adam over the stacked tensors. Adam is elementwise, so its state and update for seed i's slice
  is the loop's arithmetic; the learning-rate schedule counts the same steps for every seed. Gradient clipping by
  norm takes each seed's own norm (``clip_per_seed``);
* divergence and the early stop: a seed whose loss is not finite is recorded as diverged at that step with the
  parameters before it, and a seed that stops at its target keeps the parameters of that evaluation; either leaves
  the sum of losses and rides along until the others finish;
* taps (C3's dL/dlogits): during tapped steps each tapped tensor gets a zero tensor added by a forward hook, and
  the gradient of that zero is dL/d(tap) per seed; ``on_step`` gets a ``TapCache`` holding seed i's slice.

Evaluations load seed i's slice into its own model and run the loop's ``record_evaluation``, so held-out metrics
are computed by the same code on the same weights. Differences from the loop are rounding only: a batched matmul
adds in another order than k single ones, and over a run Adam carries those last bits forward. Randomness inside
the forward (dropout) is refused (vmap's ``randomness="error"``): there is no per-seed global RNG to draw from.
A seed's ``train_time_s`` is its share of the stacked steps' time.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import math
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from model import capture
from model.taps import TapCache

from harness.data.tasks import Batch, Task
from harness.train.loop import (RunResult, TrainConfig, finish_evaluation, make_optimizer, model_inputs,
                                record_evaluation, task_loss, torch_threads)

#: ``clip_grad_norm_``'s epsilon in the clipping coefficient max_norm / (norm + eps)
CLIP_EPS = 1e-6


class _Stacked:
    """The stacked parameters as ``make_optimizer`` reads a model: ``parameters()`` and ``named_parameters()``
    (names as in each model, so the q/k rate multiplier finds its projections)."""

    def __init__(self, params: Mapping[str, torch.Tensor]) -> None:
        self._params = params

    def parameters(self) -> Iterable[torch.Tensor]:
        return iter(self._params.values())

    def named_parameters(self) -> Iterable[tuple[str, torch.Tensor]]:
        return iter(self._params.items())


def stack_batches(batches: Sequence[Batch]) -> dict[str, torch.Tensor]:
    """The seeds' batches as one dict of (k, ...) tensors, per field of ``Batch`` that holds a tensor."""
    first = batches[0]
    fields = [n for n in ("src", "tgt_in", "tgt_out", "src_pad_mask", "x", "y", "pad_mask")
              if isinstance(getattr(first, n), torch.Tensor)]
    out = {}
    for name in fields:
        parts = [getattr(b, name) for b in batches]
        if any(p is None or p.shape != parts[0].shape for p in parts):
            raise ValueError(f"train_stacked needs every seed's batch the same shape; field {name!r} has "
                             f"{[None if p is None else tuple(p.shape) for p in parts]} (a task whose batches vary "
                             "in width trains in the loop: stack 1)")
        out[name] = torch.stack(parts)
    return out


def clip_per_seed(params: Iterable[torch.Tensor], max_norm: float) -> torch.Tensor:
    """``clip_grad_norm_`` for each seed of stacked parameters: seed i's gradients scaled by
    min(1, max_norm / (||g_i|| + 1e-6)), ||g_i|| the norm over all of seed i's gradients. Returns the k norms."""
    grads = [p.grad for p in params if p.grad is not None]
    norms = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads]),
                                     dim=0)
    coef = (max_norm / (norms + CLIP_EPS)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *[1] * (g.dim() - 1)).to(g.dtype))
    return norms


def load_seed(model: nn.Module, params: Mapping[str, torch.Tensor], buffers: Mapping[str, torch.Tensor],
              i: int) -> nn.Module:
    """Copy seed ``i``'s slice of the stacked parameters and buffers into ``model``; returns it."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(params[name][i])
        for name, b in model.named_buffers():
            b.copy_(buffers[name][i])
    return model


def _tap_shapes(model: nn.Module, batch: Batch, taps: Sequence[str]) -> dict[str, torch.Size]:
    """The shape of every tapped tensor of one seed's forward on ``batch`` (no gradient)."""
    args, kwargs = model_inputs(batch)
    with torch.no_grad(), capture(model, *taps) as cache:
        model(*args, **kwargs)
    return {name: t.shape for name, t in cache.items()}


def _perturb(seen: dict, deltas: Mapping[str, torch.Tensor], name: str, module: nn.Module, inputs: Any,
             output: torch.Tensor) -> torch.Tensor:
    """Forward hook on tap ``name``: remember its output and add the zero whose gradient is dL/d(tap)."""
    seen[name] = output
    return output + deltas[name]


def _seed_loss(base: nn.Module, task: Task, cfg: TrainConfig, taps: Sequence[str]) -> Callable:
    """One seed's loss as a function of (params, buffers, batch fields, tap deltas), for ``vmap``: the loop's
    forward (autocast as ``optimizer_step``) and ``task_loss``; returns (loss, {tap: tensor})."""
    autocast = functools.partial(torch.autocast, device_type=torch.device(cfg.device).type, dtype=torch.bfloat16)

    def loss(params, buffers, fields, deltas):
        batch = Batch(kind=task.kind, **fields)
        args, kwargs = model_inputs(batch)
        seen: dict[str, torch.Tensor] = {}
        hooks = [base.get_submodule(name).register_forward_hook(functools.partial(_perturb, seen, deltas, name))
                 for name in deltas]
        try:
            with (capture(base, *taps) if deltas else contextlib.nullcontext()), \
                    (autocast() if cfg.bf16 else contextlib.nullcontext()):
                logits = functional_call(base, (params, buffers), args, kwargs)
        finally:
            for h in hooks:
                h.remove()
        return task_loss(logits, batch.targets, task.tgt_vocab, cfg.label_smoothing), seen

    return loss


def train_stacked(models: Sequence[nn.Module], task: Task, cfg: TrainConfig, seeds: Sequence[int],
                  on_step: Sequence[Callable[..., Any] | None] | None = None,
                  progress: Callable[[str], Any] | None = None, taps: Iterable[str] | None = None,
                  tap_steps: int | None = None, heldout: Batch | None = None) -> list[RunResult]:
    """``train(models[i], task, cfg, seeds[i])`` for every i, the k seeds in one step (see the module docstring).

    ``models``: k models of one architecture, each built with its own seed (``build_for_task``); after the call
    each holds its seed's final weights. ``on_step``: one callable (or None) per seed, called as the loop calls it,
    with that seed's model (its weights loaded for the call); with ``taps``, on the tapped steps only, with a
    ``TapCache`` holding that seed's tapped tensors and dL/d(tap) (the loop's ``retain_grad=True``)."""
    k = len(models)
    if k < 1 or len(seeds) != k:
        raise ValueError(f"train_stacked needs one seed per model, got {k} models and {len(seeds)} seeds")
    if task.kind not in ("seq2seq", "tagging", "classify"):
        raise ValueError(f"task.kind must be seq2seq, tagging or classify, got {task.kind!r}")
    on_step = list(on_step) if on_step is not None else [None] * k
    if len(on_step) != k:
        raise ValueError(f"train_stacked: on_step needs one entry per seed ({k}), got {len(on_step)}")
    taps = tuple(taps) if taps else ()
    if tap_steps is not None and not taps:
        raise ValueError("tap_steps needs taps (the patterns to capture)")
    t_start = time.perf_counter()
    device = torch.device(cfg.device)
    gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
    results = [RunResult(seed=int(s), task=task.name, steps_run=0, final={},
                         config={"train": cfg.to_dict(), "task": task.params()}) for s in seeds]
    with torch_threads(cfg.num_threads):
        for m in models:
            m.to(device).train()
        params, buffers = stack_module_state(list(models))
        base = copy.deepcopy(models[0]).to("meta")
        d_model = getattr(getattr(models[0], "cfg", None), "d_model", None)
        opt, sched = make_optimizer(_Stacked(params), cfg, d_model)
        step_fn = vmap(_seed_loss(base, task, cfg, taps))
        eval_every = cfg.eval_every or cfg.steps
        log_every = cfg.log_every or max(cfg.steps // 10, 1)
        active = [True] * k
        since_eval: list[list[float]] = [[] for _ in range(k)]
        train_time = [0.0] * k
        shapes: dict[tuple, dict[str, torch.Size]] = {}

        def log(i: int, msg: str) -> None:
            if progress is not None:
                progress(f"{task.name} seed {seeds[i]}: {msg}")

        for step in range(1, cfg.steps + 1):
            t0 = time.perf_counter()
            batches = [task.train_batch(g, cfg.batch_size).to(device) for g in gens]
            fields = stack_batches(batches)
            tapping = bool(taps) and (tap_steps is None or step <= tap_steps)
            deltas = {}
            if tapping:
                key = tuple(tuple(t.shape) for t in fields.values())
                if key not in shapes:
                    shapes[key] = _tap_shapes(models[0], batches[0], taps)
                deltas = {n: torch.zeros(k, *s, device=device, requires_grad=True) for n, s in shapes[key].items()}
            losses, seen = step_fn(params, buffers, fields, deltas)
            values = losses.detach().tolist()
            ended = [i for i in range(k) if active[i] and not math.isfinite(values[i])]
            for i in ended:                       # the loop: no update at a non-finite loss; the run ends there
                load_seed(models[i], params, buffers, i)
                results[i].diverged, results[i].diverged_step = True, step
                active[i] = False
            live = torch.tensor(active, device=losses.device)
            if live.any():
                opt.zero_grad(set_to_none=True)
                torch.where(live, losses, torch.zeros_like(losses)).sum().backward()
                if cfg.grad_clip is not None:
                    clip_per_seed(params.values(), cfg.grad_clip)
                opt.step()
                sched.step()
            share = (time.perf_counter() - t0) / max(sum(active) + len(ended), 1)
            for i in range(k):
                if not active[i] and i not in ended:
                    continue
                train_time[i] += share
                results[i].losses.append(values[i])
                results[i].steps_run = step
                if i in ended:
                    log(i, f"diverged at step {step} (loss {values[i]})")
                    continue
                since_eval[i].append(values[i])
                if on_step[i] is not None and (tapping or not taps):
                    extra = (_seed_cache(seen, deltas, i),) if tapping else ()
                    on_step[i](step, load_seed(models[i], params, buffers, i), batches[i], values[i], *extra)
                if step % eval_every == 0 or step == cfg.steps:
                    load_seed(models[i], params, buffers, i)
                    stop = record_evaluation(results[i], models[i], task, cfg, heldout, step, since_eval[i],
                                             train_time[i], d_model, functools.partial(log, i))
                    since_eval[i] = []
                    active[i] = not stop
                elif step % log_every == 0:
                    log(i, f"step {step}/{cfg.steps} loss {values[i]:.4g}")
            if not any(active):
                break
        for i in range(k):
            if active[i]:
                load_seed(models[i], params, buffers, i)
            finish_evaluation(results[i], models[i], task, cfg, heldout)
    wall = time.perf_counter() - t_start
    for r, t in zip(results, train_time):
        r.train_time_s, r.wall_time_s = t, wall / k
    return results


def _seed_cache(seen: Mapping[str, torch.Tensor], deltas: Mapping[str, torch.Tensor], i: int) -> TapCache:
    """Seed ``i``'s slice of the tapped tensors and of dL/d(tap), as the loop's ``capture(retain_grad=True)``."""
    cache = TapCache(retain_grad=True)
    for name, t in seen.items():
        cache[name] = t[i].detach()
        if deltas[name].grad is not None:
            cache.grads[name] = deltas[name].grad[i]
    return cache
