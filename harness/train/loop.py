"""The one training loop every claim uses: seeded, deterministic on CPU, with the paper's optimiser.

* Adam(beta1=0.9, beta2=0.98, eps=1e-9) and lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (paper 5.3),
  beside a constant rate, a linear-warmup-then-constant rate and a linear warmup then cosine decay to 0 at the last
  step; label smoothing as an option (paper 5.4).
* held-out evaluation every ``eval_every`` steps (greedy decoding for seq2seq, or the teacher-forced argmax: the same
  exact match for one forward), a learning curve, early stop at a target metric with steps and training time to
  target.
* a NaN or infinite loss marks the run ``diverged`` (with its step) and ends it, instead of raising: for some
  arms (Q1's learning-rate sweep, unscaled attention at large d_k) divergence is the evidence.

``train(model, task, cfg, seed)`` seeds python/numpy/torch with ``seed`` (dropout) and draws training data from
its own ``torch.Generator(seed)``; build the model after ``set_seed(seed)`` (``build_for_task`` does) so that
one seed fixes the whole run. Metric names: ``loss`` (held-out cross-entropy, no smoothing), ``exact_match``
(every target of an example right), ``token_accuracy`` (fraction of targets right), and for tagging/classify
tasks ``accuracy`` (= token_accuracy).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from model import ModelConfig, build, capture, param_count
from model import greedy_decode as _model_greedy_decode
from model.registry import SEQ2SEQ_NAMES

from harness.data.tasks import BOS, EOS, IGNORE_INDEX, Batch, Task

SCHEDULES = ("warmup", "constant", "warmup_constant", "warmup_cosine")
EVAL_DECODES = ("greedy", "teacher_forced")
METRICS = ("loss", "exact_match", "token_accuracy", "accuracy")


@contextlib.contextmanager
def torch_threads(n: int | None):
    """``torch.set_num_threads(n)`` inside the block, the previous count afterwards (None: leave it). Tiny models
    on a shared 2-core box run faster on one thread: a second one only spins and contends."""
    if n is None:
        yield
        return
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"threads must be None or a positive integer, got {n!r}")
    prev = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(prev)


def set_seed(seed: int) -> None:
    """Seed python, numpy and torch (CPU and CUDA) global RNGs: model init and dropout."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


# ------------------------------------------------------------------------------------------- config
@dataclass
class TrainConfig:
    """Everything about a training run except model and task. Profiles hold these as dicts:
    ``TrainConfig.from_dict(profile.claim("C1")["train"])``."""
    steps: int = 1000
    batch_size: int = 64
    schedule: str = "warmup"          # "warmup" (paper) | "constant" | "warmup_constant" (linear ramp to lr) |
                                      # "warmup_cosine" (linear ramp to lr, then cosine decay to 0 at `steps`)
    lr: float = 1e-3                  # constant / warmup_constant: the rate; unused by "warmup"
    lr_factor: float = 1.0            # "warmup": multiplies the paper's rate
    warmup: int = 4000                # warmup steps ("warmup", "warmup_constant")
    d_model: int | None = None        # "warmup": None -> model.cfg.d_model
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-9
    weight_decay: float = 0.0
    qk_lr_multiplier: float = 1.0     # Adam's rate for the W_Q, W_K projections (q_proj, k_proj) x this: issue 17's
                                      # control for C4 (a scale on q.k is, under Adam, a rate on W_Q and W_K)
    label_smoothing: float = 0.0
    grad_clip: float | None = None    # max global grad norm; None = no clipping
    eval_every: int = 100             # steps between held-out evaluations (0: only at the end)
    eval_size: int = 512              # held-out examples per evaluation
    eval_batch_size: int = 512
    # seq2seq predictions of the in-loop evaluations: "greedy" decoding, or "teacher_forced" (the argmax of the
    # teacher-forced logits: one forward, ~5x cheaper). A row's exact match is the same either way: greedy decoding
    # reproduces the teacher-forced argmax for as long as its prefix is right, so it gets a row exactly right iff
    # teacher forcing does (up to float ties; with max_decode_len None or >= the target width). Token accuracy
    # differs (teacher forcing scores every position on the true prefix). C1 early-stops on exact match this way
    # and measures its test part greedily.
    eval_decode: str = "greedy"
    target_metric: str | None = None  # e.g. "exact_match"; with target_value: steps_to_target
    target_value: float | None = None
    stop_at_target: bool = True       # end the run at the first evaluation reaching the target
    max_decode_len: int | None = None  # greedy decoding length; None -> the held-out target width
    device: str = "cpu"
    bf16: bool = False                # bf16 autocast on the run's device (cuda; cpu too, so a CPU dry run of the
                                      # full profile runs the same autocast path as the GPU)
    num_threads: int | None = None    # torch.set_num_threads for the run (restored afterwards)
    foreach: bool | None = None       # Adam's foreach: None = torch's default (a per-tensor loop on CPU); True: one
                                      # multi-tensor call per op, the same numbers on CPU, ~1 ms less a step (C5)
    fused: bool = False               # Adam's fused kernel (CPU or CUDA): one call per step, the fastest (C1: ~7 of
                                      # ~60 ms a step saved); rounding may differ from the loop's; not with foreach
    log_every: int | None = None      # progress() between evaluations every this many steps; None -> steps // 10

    def __post_init__(self) -> None:
        def bad(name: str, msg: str) -> ValueError:
            return ValueError(f"TrainConfig.{name}: {msg}, got {getattr(self, name)!r}")

        for name in ("steps", "batch_size", "eval_size", "eval_batch_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise bad(name, "must be a positive integer")
        for name in ("eval_every", "warmup"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise bad(name, "must be an integer >= 0")
        if self.schedule not in SCHEDULES:
            raise bad("schedule", f"must be one of {SCHEDULES}")
        if self.eval_decode not in EVAL_DECODES:
            raise bad("eval_decode", f"must be one of {EVAL_DECODES}")
        if self.schedule != "constant" and self.warmup < 1:
            raise bad("warmup", f"must be >= 1 for schedule {self.schedule!r}")
        for name in ("lr", "lr_factor", "eps", "qk_lr_multiplier"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise bad(name, "must be a finite number > 0")
        if self.d_model is not None and (not isinstance(self.d_model, int) or self.d_model < 1):
            raise bad("d_model", "must be None or a positive integer")
        self.betas = tuple(self.betas)
        if len(self.betas) != 2 or not all(0.0 <= b < 1.0 for b in self.betas):
            raise bad("betas", "must be two numbers in [0, 1)")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise bad("label_smoothing", "must be in [0, 1)")
        if self.weight_decay < 0:
            raise bad("weight_decay", "must be >= 0")
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise bad("grad_clip", "must be None or > 0")
        if (self.target_metric is None) != (self.target_value is None):
            raise bad("target_value", "target_metric and target_value go together")
        if self.target_metric is not None and self.target_metric not in METRICS:
            raise bad("target_metric", f"must be one of {METRICS}")
        if self.num_threads is not None and (not isinstance(self.num_threads, int) or self.num_threads < 1):
            raise bad("num_threads", "must be None or a positive integer")
        if self.foreach is not None and not isinstance(self.foreach, bool):
            raise bad("foreach", "must be None, True or False")
        if not isinstance(self.fused, bool) or (self.fused and self.foreach):
            raise bad("fused", "must be True or False, and not True with foreach=True")
        if self.log_every is not None and (not isinstance(self.log_every, int) or self.log_every < 1):
            raise bad("log_every", "must be None or a positive integer")
        if self.max_decode_len is not None and (not isinstance(self.max_decode_len, int) or self.max_decode_len < 1):
            raise bad("max_decode_len", "must be None or a positive integer")
        try:
            dev = torch.device(self.device)
        except (RuntimeError, TypeError):
            raise bad("device", "is not a torch device") from None
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise bad("device", "asks for CUDA but torch.cuda.is_available() is False")
        if not isinstance(self.bf16, bool) or (self.bf16 and dev.type not in ("cuda", "cpu")):
            raise bad("bf16", f"must be True or False; bf16 autocast needs a cuda or cpu device (device="
                              f"{self.device!r})")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TrainConfig":
        """Build from a profile block; unknown keys are an error naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"TrainConfig has no field(s) {unknown}; valid: {sorted(known)}")
        return cls(**d)

    def replace(self, **changes: Any) -> "TrainConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def lr_at(self, step: int, d_model: int | None = None) -> float:
        """Learning rate at 1-based ``step``."""
        if self.schedule == "constant":
            return float(self.lr)
        if self.schedule == "warmup_constant":
            return float(self.lr) * min(1.0, step / self.warmup)
        if self.schedule == "warmup_cosine":
            if step <= self.warmup:
                return float(self.lr) * step / self.warmup
            done = min(1.0, (step - self.warmup) / max(self.steps - self.warmup, 1))
            return float(self.lr) * 0.5 * (1.0 + math.cos(math.pi * done))
        dm = self.d_model or d_model
        if dm is None:
            raise ValueError("TrainConfig.d_model: the 'warmup' schedule needs d_model (set it, or train a model "
                             "with cfg.d_model)")
        return self.lr_factor * dm ** -0.5 * min(step ** -0.5, step * self.warmup ** -1.5)


# ------------------------------------------------------------------------------------------- result
@dataclass
class RunResult:
    """One training run. ``curve`` rows: step, train_loss (mean since the previous row), lr, train_time_s and the
    held-out metrics. ``losses`` is the per-step training loss. Times exclude held-out evaluation
    (``train_time_s``), except ``wall_time_s`` which is the whole call."""
    seed: int
    task: str
    steps_run: int
    final: dict[str, float]
    curve: list[dict[str, float]] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    steps_to_target: int | None = None
    time_to_target_s: float | None = None
    train_time_s: float = 0.0
    wall_time_s: float = 0.0
    diverged: bool = False
    diverged_step: int | None = None
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def reached_target(self) -> bool:
        return self.steps_to_target is not None

    def metric(self, name: str) -> float:
        try:
            return self.final[name]
        except KeyError:
            raise KeyError(f"run has no final metric {name!r}; has {sorted(self.final)}") from None

    def curve_frame(self):
        import pandas as pd
        return pd.DataFrame(self.curve)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def first_reaching(curve: list[dict[str, float]], target: float, metric: str = "exact_match"
                   ) -> dict[str, float] | None:
    """The first evaluation row of ``curve`` whose ``metric`` reaches ``target`` (None if none did)."""
    return next((row for row in curve if row[metric] >= target), None)


def to_target(run: RunResult, target: float, metric: str = "exact_match") -> tuple[bool, int, float]:
    """(reached, steps, training seconds) to held-out ``metric`` ``target`` on ``run``'s curve; a run that never
    reached it is censored at its whole run (a lower bound on the true value, against the arm that missed)."""
    hit = first_reaching(run.curve, target, metric)
    last = run.curve[-1] if run.curve else {"step": run.steps_run, "train_time_s": run.train_time_s}
    return hit is not None, int((hit or last)["step"]), float((hit or last)["train_time_s"])


# ------------------------------------------------------------------------------------- model <-> task
def build_for_task(name: str, task: Task, cfg: ModelConfig, seed: int, **kw: Any) -> nn.Module:
    """``set_seed(seed)`` then ``model.build(name, cfg', **kw)`` with the task's vocabularies and length filled in
    (``cfg'`` = cfg with src_vocab, tgt_vocab, max_len >= task.max_len); taggers get ``n_classes=task.out_dim``
    and, for a classify task, ``pool="last"`` unless given."""
    seq2seq = name in SEQ2SEQ_NAMES
    if seq2seq != (task.kind == "seq2seq"):
        raise ValueError(f"model {name!r} is {'seq2seq' if seq2seq else 'a tagger'} but task {task.name!r} is "
                         f"{task.kind}")
    cfg = cfg.replace(src_vocab=task.src_vocab, tgt_vocab=task.out_dim, max_len=max(cfg.max_len, task.max_len))
    if not seq2seq:
        kw.setdefault("n_classes", task.out_dim)
        if task.kind == "classify":
            kw.setdefault("pool", "last")
    set_seed(seed)
    return build(name, cfg, **kw)


def width_for_params(name: str, task: Task, cfg: ModelConfig, target_params: int, widths: Iterable[int],
                     **kw: Any) -> tuple[ModelConfig, int]:
    """``cfg`` with the ``d_model`` from ``widths`` at which model ``name`` (built for ``task`` as
    ``build_for_task`` does) has the parameter count closest to ``target_params``: a baseline matched in size
    (C1's LSTM against the Transformer). Widths the config rejects (e.g. not divisible by n_heads) are skipped.
    Returns (cfg, its parameter count)."""
    widths = list(widths)
    best: tuple[int, ModelConfig, int] | None = None
    for w in widths:
        try:
            c = cfg.replace(d_model=int(w))
        except ValueError:
            continue
        n = param_count(build_for_task(name, task, c, 0, **kw))
        if best is None or abs(n - target_params) < best[0]:
            best = (abs(n - target_params), c, n)
    if best is None:
        raise ValueError(f"widths {widths!r}: no valid d_model for {name!r} with {cfg!r}")
    return best[1], best[2]


def model_inputs(batch: Batch) -> tuple[tuple[torch.Tensor, ...], dict[str, Any]]:
    """A batch as the model's (args, kwargs): seq2seq ``(src, tgt_in), {src_pad_mask}``, taggers
    ``(x,), {pad_mask}`` (``forward_batch`` calls the model with them; the stacked trainer, ``functional_call``)."""
    if batch.kind == "seq2seq":
        return (batch.src, batch.tgt_in), {"src_pad_mask": batch.src_pad_mask}
    return (batch.x,), {"pad_mask": batch.pad_mask}


def forward_batch(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Logits for a batch: seq2seq ``model(src, tgt_in, src_pad_mask)``, taggers ``model(x, pad_mask)``."""
    args, kwargs = model_inputs(batch)
    return model(*args, **kwargs)


def align_logits(logits: torch.Tensor, targets: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Reshape logits to ``targets.shape + (n_classes,)`` (n_targets predictions per position, C5)."""
    if logits.numel() != targets.numel() * n_classes:
        raise ValueError(f"model emits logits of shape {tuple(logits.shape)} but the targets {tuple(targets.shape)} "
                         f"need {n_classes} classes each (build the model with n_classes/tgt_vocab = task.out_dim)")
    return logits.reshape(*targets.shape, n_classes)


def task_loss(logits: torch.Tensor, targets: torch.Tensor, n_classes: int, label_smoothing: float = 0.0
              ) -> torch.Tensor:
    """Mean cross-entropy over targeted positions (IGNORE_INDEX skipped), in float32."""
    logits = align_logits(logits, targets, n_classes)
    return F.cross_entropy(logits.reshape(-1, n_classes).float(), targets.reshape(-1),
                           ignore_index=IGNORE_INDEX, label_smoothing=label_smoothing)


def score_predictions(pred: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per example: (all targets right (B,) bool, number right (B,)); IGNORE_INDEX positions don't count."""
    valid = targets != IGNORE_INDEX
    right = (pred == targets) & valid
    dims = tuple(range(1, targets.dim()))
    if not dims:
        return right, right.long()
    return (right | ~valid).all(dim=dims), right.sum(dim=dims)


def greedy_decode(model: nn.Module, src: torch.Tensor, src_pad_mask: torch.Tensor | None, max_len: int
                  ) -> torch.Tensor:
    """Greedy seq2seq decoding with the tasks' BOS/EOS: (B, L <= max_len) ids without BOS; EOS-filled after
    each row's EOS. (``model.greedy_decode`` does the work.)"""
    return _model_greedy_decode(model, src, BOS, max_len, src_pad_mask=src_pad_mask, eos_id=EOS)


def predict(model: nn.Module, batch: Batch, n_classes: int, max_decode_len: int | None = None) -> torch.Tensor:
    """Predictions shaped like ``batch.targets``: greedy decoding for seq2seq (cut or padded with -1 to the
    target width), argmax otherwise."""
    if batch.kind == "seq2seq":
        width = batch.tgt_out.shape[1]
        out = greedy_decode(model, batch.src, batch.src_pad_mask, max_decode_len or width)
        pred = out.new_full((out.shape[0], width), -1)
        n = min(width, out.shape[1])
        pred[:, :n] = out[:, :n]
        return pred
    return align_logits(forward_batch(model, batch), batch.y, n_classes).argmax(-1)


@contextlib.contextmanager
def eval_mode(model: nn.Module):
    """model.eval() and no_grad inside the block; the previous training flag afterwards."""
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield model
    finally:
        model.train(was)


def evaluate(model: nn.Module, task: Task, batch: Batch | None = None, n: int = 512, batch_size: int = 512,
             max_decode_len: int | None = None, device: str | torch.device | None = None,
             decode: str = "greedy") -> dict[str, float]:
    """Held-out metrics (``task.heldout(n)`` unless a batch is given), in chunks of ``batch_size``:
    ``loss`` (teacher-forced CE, no smoothing), ``exact_match``, ``token_accuracy`` (+ ``accuracy`` for
    tagging/classify). ``decode="teacher_forced"``: seq2seq predictions are the argmax of the teacher-forced
    logits instead of greedy decoding (the same exact match, one forward; see ``TrainConfig.eval_decode``)."""
    if decode not in EVAL_DECODES:
        raise ValueError(f"evaluate: decode must be one of {EVAL_DECODES}, got {decode!r}")
    batch = task.heldout(n) if batch is None else batch
    device = device or next(model.parameters()).device
    n_ex, loss_sum, n_tok, exact, right = len(batch), 0.0, 0, 0, 0
    with eval_mode(model):
        for i in range(0, n_ex, batch_size):
            b = batch[i: i + batch_size].to(device)
            tgt = b.targets
            k = int((tgt != IGNORE_INDEX).sum())
            logits = forward_batch(model, b)
            loss = task_loss(logits, tgt, task.tgt_vocab)
            loss_sum += float(loss) * k
            n_tok += k
            if b.kind == "seq2seq" and decode == "teacher_forced":
                pred = align_logits(logits, tgt, task.tgt_vocab).argmax(-1)
            else:
                pred = predict(model, b, task.tgt_vocab, max_decode_len)
            ex, r = score_predictions(pred, tgt)
            exact += int(ex.sum())
            right += int(r.sum())
    out = {"loss": loss_sum / max(n_tok, 1), "exact_match": exact / n_ex, "token_accuracy": right / max(n_tok, 1)}
    if task.kind != "seq2seq":
        out["accuracy"] = out["token_accuracy"]
    return out


# --------------------------------------------------------------------------------------------- loop
def make_optimizer(model: nn.Module, cfg: TrainConfig, d_model: int | None = None
                   ) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam(betas, eps, foreach, fused from cfg) with ``cfg.lr_at`` as a LambdaLR (base lr 1, so the lambda is the
    rate)."""
    cfg.lr_at(1, d_model)        # fail early (ValueError) if the schedule lacks d_model
    params: Any = model.parameters()
    if cfg.qk_lr_multiplier != 1.0:
        named = list(model.named_parameters())
        is_qk = [".q_proj." in f".{n}" or ".k_proj." in f".{n}" for n, _ in named]
        if not any(is_qk):
            raise ValueError("TrainConfig.qk_lr_multiplier: the model has no q_proj / k_proj parameters")
        params = [{"params": [p for (_, p), qk in zip(named, is_qk) if not qk]},
                  {"params": [p for (_, p), qk in zip(named, is_qk) if qk], "lr": float(cfg.qk_lr_multiplier)}]
    opt = torch.optim.Adam(params, lr=1.0, betas=cfg.betas, eps=cfg.eps,
                           weight_decay=cfg.weight_decay, foreach=cfg.foreach,
                           **({"fused": True} if cfg.fused else {}))
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda i: cfg.lr_at(i + 1, d_model))


def optimizer_step(model: nn.Module, batch: Batch, task: Task, opt: torch.optim.Optimizer,
                   sched: torch.optim.lr_scheduler.LRScheduler, cfg: TrainConfig) -> float:
    """One step: forward (bf16 autocast if cfg.bf16), loss, backward, clip, Adam, schedule. Returns the loss;
    a non-finite loss is returned without a backward or an update (the caller records the divergence)."""
    with (torch.autocast(device_type=torch.device(cfg.device).type, dtype=torch.bfloat16) if cfg.bf16
          else contextlib.nullcontext()):
        logits = forward_batch(model, batch)
    loss = task_loss(logits, batch.targets, task.tgt_vocab, cfg.label_smoothing)
    value = float(loss.detach())
    if not math.isfinite(value):
        return value
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if cfg.grad_clip is not None:
        nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    opt.step()
    sched.step()
    return value


def train(model: nn.Module, task: Task, cfg: TrainConfig, seed: int,
          on_step: Callable[..., Any] | None = None, progress: Callable[[str], Any] | None = None,
          taps: Iterable[str] | None = None, tap_steps: int | None = None, retain_grad: bool = False,
          heldout: Batch | None = None) -> RunResult:
    """Train ``model`` on ``task`` for ``cfg.steps`` steps (fewer if the target is reached or the loss diverges).

    ``on_step(step, model, batch, loss)`` runs after every optimiser step (``loss``: that step's float loss).
    With ``taps`` (fnmatch patterns, e.g. ``["*.logits"]``) the forward/backward of steps 1..``tap_steps`` (all
    steps when None) run inside ``model.capture(model, *taps, retain_grad=retain_grad)`` and ``on_step`` gets the
    step's cache as a fifth argument: ``on_step(step, model, batch, loss, cache)`` (``cache.grad(name)`` is
    dL/d(tap), e.g. dL/dlogits for C3). ``progress(msg)`` gets a line like "step 300/1000 loss 0.123 em 0.950".
    ``heldout``: the batch every evaluation (and so the early stop) uses instead of ``task.heldout(cfg.eval_size)``,
    e.g. a validation part of the held-out split, so that a test part the stop never saw measures the result (C1).
    """
    if task.kind not in ("seq2seq", "tagging", "classify"):
        raise ValueError(f"task.kind must be seq2seq, tagging or classify, got {task.kind!r}")
    taps = tuple(taps) if taps else ()
    if tap_steps is not None and not taps:
        raise ValueError("tap_steps needs taps (the patterns to capture)")
    t_start = time.perf_counter()
    set_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    device = torch.device(cfg.device)
    prev_threads = torch.get_num_threads()
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    model.to(device)
    model.train()
    d_model = getattr(getattr(model, "cfg", None), "d_model", None)
    opt, sched = make_optimizer(model, cfg, d_model)
    eval_every = cfg.eval_every or cfg.steps
    log_every = cfg.log_every or max(cfg.steps // 10, 1)
    result = RunResult(seed=seed, task=task.name, steps_run=0, final={},
                       config={"train": cfg.to_dict(), "task": task.params()})
    train_time, since_eval = 0.0, []

    def log(msg: str) -> None:
        if progress is not None:
            progress(f"{task.name} seed {seed}: {msg}")

    try:
        for step in range(1, cfg.steps + 1):
            t0 = time.perf_counter()
            batch = task.train_batch(gen, cfg.batch_size).to(device)
            tapping = bool(taps) and (tap_steps is None or step <= tap_steps)
            with (capture(model, *taps, retain_grad=retain_grad) if tapping else contextlib.nullcontext()) as cache:
                loss_value = optimizer_step(model, batch, task, opt, sched, cfg)
            train_time += time.perf_counter() - t0
            result.losses.append(loss_value)
            result.steps_run = step
            if not math.isfinite(loss_value):
                result.diverged, result.diverged_step = True, step
                log(f"diverged at step {step} (loss {loss_value})")
                break
            since_eval.append(loss_value)
            if on_step is not None:
                if tapping:
                    on_step(step, model, batch, loss_value, cache)
                elif not taps:
                    on_step(step, model, batch, loss_value)
            if step % eval_every == 0 or step == cfg.steps:
                stop = record_evaluation(result, model, task, cfg, heldout, step, since_eval, train_time, d_model, log)
                since_eval = []
                if stop:
                    break
            elif step % log_every == 0:
                log(f"step {step}/{cfg.steps} loss {loss_value:.4g}")
        finish_evaluation(result, model, task, cfg, heldout)
    finally:
        if cfg.num_threads:
            torch.set_num_threads(prev_threads)
    result.train_time_s = train_time
    result.wall_time_s = time.perf_counter() - t_start
    return result


def record_evaluation(result: RunResult, model: nn.Module, task: Task, cfg: TrainConfig, heldout: Batch | None,
                      step: int, since_eval: list[float], train_time: float, d_model: int | None,
                      log: Callable[[str], Any]) -> bool:
    """The held-out evaluation at ``step``: a curve row (training loss averaged over ``since_eval``), ``final``,
    steps and time to target. Returns True when the run stops here (target reached, ``stop_at_target``)."""
    metrics = evaluate(model, task, heldout, n=cfg.eval_size, batch_size=cfg.eval_batch_size,
                       max_decode_len=cfg.max_decode_len, device=torch.device(cfg.device), decode=cfg.eval_decode)
    result.curve.append({"step": step, "train_loss": float(np.mean(since_eval)), "lr": cfg.lr_at(step, d_model),
                         "train_time_s": train_time, **metrics})
    result.final = metrics
    hit = (cfg.target_metric is not None and result.steps_to_target is None
           and _reached(metrics[cfg.target_metric], cfg.target_metric, cfg.target_value))
    if hit:
        result.steps_to_target, result.time_to_target_s = step, train_time
    log(f"step {step}/{cfg.steps} loss {since_eval[-1]:.4g} em {metrics['exact_match']:.3f}"
        + (f" -> target {cfg.target_metric} {cfg.target_value} reached" if hit else ""))
    return hit and cfg.stop_at_target


def finish_evaluation(result: RunResult, model: nn.Module, task: Task, cfg: TrainConfig, heldout: Batch | None
                      ) -> None:
    """``final``: the last evaluation's metrics, or a fresh evaluation for a run that diverged or never evaluated."""
    if result.diverged or not result.final:
        result.final = evaluate(model, task, heldout, n=cfg.eval_size, batch_size=cfg.eval_batch_size,
                                max_decode_len=cfg.max_decode_len, device=torch.device(cfg.device),
                                decode=cfg.eval_decode)


def _reached(value: float, metric: str, target: float) -> bool:
    return value <= target if metric == "loss" else value >= target
