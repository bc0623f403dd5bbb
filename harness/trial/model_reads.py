"""What the claims read of a user's model on trial (issue 40): its attention at random init, over a family, and
after a short training, each made once per process and shared (``ModelUnderTrial.cache``).

``frame`` and ``future_dependency``: ``model_probes.probe`` and ``model_probes.future_dependency`` at each seed's
random init (M0, R1, C3, C4, Q1, Q2 at init). ``sweep``: the family over ``head_dim`` or ``width``
(``ModelUnderTrial.build(seed, dim=value)``; C4, R2), or why it cannot be swept. ``train_lm`` and ``trained``: the
model after a short next-token training on ``MarkovLM``, probed on held-out sequences (Q1, Q2, Q3, C5), at a
reduced width where the block asks (``train_width``); ``read_trained`` and ``loss_note`` are what a claim's reading
after training starts and ends with. ``AT_INIT_OBJECTIONS``: the reviewer's objections answered for the claims that
read the model at init. The model itself is resolved, checked, built and pre-flighted in ``harness.trial.model``.
"""
from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import torch
from torch import nn

from harness.trial import model_probes
from harness.trial.model import TRAIN_COPIES, ModelError, ModelUnderTrial, _gb, free_memory

if TYPE_CHECKING:
    import pandas as pd

#: a reviewer's first objections (harness.record.objections.OBJECTIONS) answered for the claims that read a model's own
#: attention at random init (R1, C4, R2 on a model on trial): nothing of the note's own runs is done there
AT_INIT_OBJECTIONS = {
    "tuned_lr": ("not applicable", "nothing is trained: the model's own attention is read at random init"),
    "ceiling": ("not applicable", "no bounded metric decides: applied scalings, logit-std ratios and log-log slopes"),
    "selection": ("not applicable", "no arm or setting is chosen"),
    "second_task": ("not applicable", "task-free: the model's own attention on uniform random token ids"),
}



def at_init(ev: Any, trial: ModelUnderTrial, seeds: list[int], what: str,
            progress: Callable[..., None]) -> Callable[..., None]:
    """Where trained weights are on trial beside the model (``--model-weights``, issue 55): the claim's record says
    that it read ``what`` on the architecture at a random init of ``seeds``, not on those weights
    (``ev.read_at_init``: its verdict lines say "at init"), and its terminal lines start "at init"; the returned
    progress prefixes them. Without weights on trial, ``progress`` itself: every such claim reads at init, and its
    objections say so (``AT_INIT_OBJECTIONS``)."""
    ckpt = getattr(trial, "checkpoint", None)
    if ckpt is None:
        return progress
    ev.read_at_init(f"{what} read on the architecture of {trial.spec} at a random init (seed"
                    f"{'s' * (len(seeds) != 1)} {', '.join(map(str, seeds))}), not on the weights of "
                    f"--model-weights {ckpt.path.name}: Q3 alone reads the checkpoint")

    def labelled(msg: str, *args: Any, **kwargs: Any) -> None:
        progress(f"at init (not the checkpoint): {msg}", *args, **kwargs)
    return labelled


#: the label of a claim that trained the architecture here, from a random init, beside trained weights on trial
TRAINED_FROM_INIT = "trained from init"


def trained_from_init(ev: Any, trial: ModelUnderTrial, seeds: list[int], what: str,
                      progress: Callable[..., None]) -> Callable[..., None]:
    """``at_init``'s sibling for the claims that train the architecture briefly here (C5, Q1, Q2 under
    ``--model``): where trained weights are on trial (``--model-weights``), their record says that ``what`` was read
    after a short training from a random init of ``seeds``, not on those weights, and their verdict and terminal
    lines say "trained from init". Without weights on trial, ``progress`` itself."""
    ckpt = getattr(trial, "checkpoint", None)
    if ckpt is None:
        return progress
    ev.read_at_init(f"{what} read after a short training of the architecture of {trial.spec} from a random init "
                    f"(seed{'s' * (len(seeds) != 1)} {', '.join(map(str, seeds))}), not on the weights of "
                    f"--model-weights {ckpt.path.name}: Q3 alone reads the checkpoint", label=TRAINED_FROM_INIT)

    def labelled(msg: str, *args: Any, **kwargs: Any) -> None:
        progress(f"{TRAINED_FROM_INIT} (not the checkpoint): {msg}", *args, **kwargs)
    return labelled


#: why a model's causality is unknown, and how to declare it
UNDECLARED = ("nothing in the model says whether it is causal: no is_causal attribute, and no tapped attention call "
              "passes SDPA is_causal=True; set is_causal = True on the model (or on its attention modules) to have it "
              "checked as causal")


def frame(trial: ModelUnderTrial, seeds: list[int], batch: int, length: int,
          unscaled: bool = False) -> "pd.DataFrame":
    """``model_probes.probe`` at each seed's random init: one row per (seed, call, head) (``unscaled``: C3's arm)."""
    import pandas as pd

    frames = []
    for seed in seeds:
        key = ("frame", seed, batch, length, unscaled)
        if key not in trial.cache:
            _at_init(trial, seed, batch, length, unscaled)
        frames.append(trial.cache[key])
    return pd.concat(frames, ignore_index=True)


def future_dependency(trial: ModelUnderTrial, seeds: list[int], batch: int, length: int) -> dict[int, float]:
    """Seed -> ``model_probes.future_dependency`` of the untapped model (the mask seen from outside)."""
    out = {}
    for seed in seeds:
        key = ("future", seed, batch, length)
        if key not in trial.cache:
            _at_init(trial, seed, batch, length)
        out[seed] = trial.cache[key]
    return out


def _at_init(trial: ModelUnderTrial, seed: int, batch: int, length: int, unscaled: bool = False) -> None:
    """One build of the seed's model at init, read for everything the probe claims take from it (cached per seed:
    a claim that reads fewer seeds, R1's one, takes them from the others' reads): the frame (``unscaled``: C3's
    arm) and, for the scaled model, the future dependency (M0)."""
    model = trial.build(seed)
    inputs = model_probes.model_inputs(model, batch, length, seed)
    if not unscaled:
        trial.cache[("future", seed, batch, length)] = model_probes.future_dependency(model, inputs, seed)
    trial.cache[("frame", seed, batch, length, unscaled)] = model_probes.probe(
        model, trial.backend, inputs, seed=seed, unscaled=unscaled).assign(seed=seed)
    del model
    gc.collect()                        # freed before the next build, its reference cycles included


def sweep(trial: ModelUnderTrial, dim: str, values: list[int], seeds: list[int], batch: int,
          length: int) -> tuple["pd.DataFrame | None", str]:
    """(one row per (value, seed) of ``model_probes.family``, "") or (None, why the family cannot be swept)."""
    key = ("sweep", dim, tuple(values), tuple(seeds), batch, length)
    if key not in trial.cache:
        trial.cache[key] = _sweep(trial, dim, values, seeds, batch, length)
    df, why = trial.cache[key]
    return (None if df is None else df.copy()), why


def _sweep(trial: ModelUnderTrial, dim: str, values: list[int], seeds: list[int], batch: int,
           length: int) -> tuple["pd.DataFrame | None", str]:
    if dim in trial.sweep_reasons:
        return None, trial.sweep_reasons[dim]
    import pandas as pd

    try:
        rows = []
        for value in values:        # each member built once, whichever claim asks first (R1 reads one seed of C4's)
            for seed in seeds:
                member = ("member", dim, value, seed, batch, length)
                if member not in trial.cache:
                    trial.cache[member] = model_probes.family(lambda v, s: trial.build(s, **{dim: v}), [value],
                                                              [seed], trial.backend, batch, length, label=dim)
                rows.append(trial.cache[member])
        df = pd.concat(rows, ignore_index=True)
    except ModelError as exc:
        return None, str(exc)
    except model_probes.TapError as exc:
        return None, f"a family member could not be tapped: {exc}"
    moved = df.d_k if dim == "head_dim" else df.n_params
    if moved.nunique() < len(set(values)):
        return None, (f"the builder ignored {dim}= (family members at {values} came out with "
                      f"{'d_k' if dim == 'head_dim' else 'parameter counts'} {sorted(set(moved))})")
    if dim == "width" and df.d_k.nunique() > 1:
        return None, (f"the width family did not hold the head dim: d_k "
                      + ", ".join(f"{d:g} at width {w}" for w, d in df.groupby("width").d_k.first().items()))
    return df, ""


# ------------------------------------------------------------------------------------------- a short training
def train_width(trial: ModelUnderTrial, block: dict[str, Any]) -> int | None:
    """The width the short training builds the model at: the block's ``train.width`` where the model is wider and
    its width can be set (a transformers config: the hidden size and head count scaled down, the head dim, head
    groups, MLP ratio, layers and vocabulary kept, as the width sweep does; a builder that takes ``width=``), else
    None: the model's own width."""
    cap = block["train"].get("width")
    if not cap or trial.width is None or trial.width <= cap or "width" in trial.sweep_reasons:
        return None
    return int(cap)


def train_lm(trial: ModelUnderTrial, seed: int, *, steps: int, lr: float, batch: int, length: int,
             probe_batch: int, vocab: int = 32, width: int | None = None,
             announce: Callable[[float], None] | None = None) -> tuple["pd.DataFrame", float, float]:
    """(``model_probes.probe`` of the model after ``steps`` of next-token training, on ``probe_batch`` of the task's
    held-out sequences; its first and last training loss) on the suite's ``MarkovLM`` (a fixed random Markov chain
    whose second half repeats the first: some tokens follow from the previous one, some only from half a sequence
    back). A linear head on the model's first output is trained with it; AdamW at ``lr``. ``width``: the model is
    built at that width (``train_width``). For a causal model only (``trial.causal``): a bidirectional one would read
    the answer. ``announce(seconds a step)``: called before the first step, with one step timed on a batch of its
    own (the random state restored, so the training is the one it would be). Only the readings are kept in
    ``trial.cache``, per (seed, steps, lr, batch, length, width), never the model: the claims that read them share
    the runs."""
    from harness.data.tasks import MarkovLM

    key = _train_key(seed, steps, lr, batch, length, probe_batch, width, vocab)
    if key in trial.cache:
        return trial.cache[key]
    if not trial.causal:
        raise ModelError("next-token training needs a causal model: this one declares bidirectional attention"
                         if trial.causal is False else f"next-token training needs a causal model: {UNDECLARED}")
    if trial.base is not None and getattr(getattr(trial.base, "config", None), "is_encoder_decoder", False):
        raise ModelError("next-token training of an encoder-decoder is not built (its encoder sees every token)")
    task = MarkovLM(vocab=vocab, seq_len=length)
    model = trial.build(seed, **({"width": width} if width else {}))
    probe_in = model_probes.model_inputs(model, 1, 2, seed)
    if "input_ids" not in probe_in:
        raise ModelError("next-token training needs a model that takes token ids")
    model_vocab = int(getattr(getattr(model, "config", None), "vocab_size", 0) or getattr(model, "vocab_size", 0))
    if model_vocab < task.src_vocab:
        raise ModelError(f"next-token training needs a vocabulary of {task.src_vocab} tokens; the model has "
                         f"{model_vocab}")
    n = sum(p.numel() for p in model.parameters())
    free = free_memory()
    if free is not None and 4 * n * TRAIN_COPIES > free:
        del model
        gc.collect()
        raise ModelError(f"next-token training {training_width(trial, width)} needs about {_gb(4 * n * TRAIN_COPIES)} "
                         f"(float32, {TRAIN_COPIES} copies: the model, gradients, AdamW's moments); {_gb(free)} is free")
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    out_width = model_probes.forward(model, probe_in).shape[-1]
    head = nn.Linear(out_width, task.tgt_vocab)
    params = [p for p in model.parameters() if p.requires_grad] + list(head.parameters())
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    model.train()

    def loss_of(b):
        out = model_probes.forward(model, {"input_ids": b.x})
        return nn.functional.cross_entropy(head(out).reshape(-1, task.tgt_vocab), b.y.reshape(-1))

    if announce is not None:
        with torch.random.fork_rng():
            t0 = time.perf_counter()
            loss_of(task.train_batch(torch.Generator().manual_seed(10_000 + seed), batch)).backward()
            announce(time.perf_counter() - t0)
        opt.zero_grad(set_to_none=True)
    losses = []
    for _ in range(steps):
        loss = loss_of(task.train_batch(g, batch))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(float(loss.detach()))
    del opt, params, head
    model.eval()
    frame = model_probes.probe(model, trial.backend, {"input_ids": task.heldout(probe_batch).x}, seed=seed)
    del model
    gc.collect()
    trial.cache[key] = (frame.assign(seed=seed), losses[0], float(np.mean(losses[-10:])))
    return trial.cache[key]


def _train_key(seed: int, steps: int, lr: float, batch: int, length: int, probe_batch: int, width: int | None,
               vocab: int = 32) -> tuple:
    return ("train", seed, steps, lr, batch, length, vocab, probe_batch, width)


def trained_frame(trial: ModelUnderTrial, seeds: list[int], block: dict[str, Any], rate: float = 1.0,
                  progress: Callable[..., None] | None = None
                  ) -> tuple["pd.DataFrame", dict[int, tuple[float, float]]]:
    """``train_lm``'s reading of each seed's model after training at ``rate`` x the block's learning rate, probed on
    the task's own sequences; and seed -> (first, last) training loss. ``progress``: the estimate of the runs still
    to train, shown before the first of them starts."""
    import pandas as pd

    t = block["train"]
    width = train_width(trial, block)
    args = dict(steps=t["steps"], lr=t["lr"] * rate, batch=t["batch"], length=t["length"],
                probe_batch=block["batch"], width=width)
    todo = [s for s in seeds if _train_key(s, **args) not in trial.cache]
    frames, losses = [], {}
    for seed in seeds:
        announce = None
        if progress is not None and todo and seed == todo[0]:
            def announce(step_s: float, n: int = len(todo)) -> None:
                progress(f"model {trial.spec}: training {training_width(trial, width)}; about {step_s:.2g} s a step "
                         f"(one timed), {t['steps']} steps x {n} seed{'s' * (n > 1)} at {rate:g}x the rate: about "
                         f"{_duration(step_s * t['steps'] * n)}", force=True)
        df, first, last = train_lm(trial, seed, **args, announce=announce)
        frames.append(df)
        losses[seed] = (first, last)
    return pd.concat(frames, ignore_index=True), losses


def training_width(trial: ModelUnderTrial, width: int | None) -> str:
    """The width the training ran at, in words: the released width, or the reduced one beside it."""
    if width is None:
        return f"at the model's own width{f' {trial.width}' if trial.width else ''}"
    return (f"at width {width}, reduced from the model's {trial.width} (heads scaled with it; the rest of the shape "
            "kept)")


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


def trained(trial: ModelUnderTrial, seeds: list[int], block: dict[str, Any], rate: float = 1.0,
            progress: Callable[..., None] | None = None
            ) -> tuple["pd.DataFrame | None", dict[int, tuple[float, float]], str]:
    """``trained_frame``, or (None, {}, why the model cannot be trained here)."""
    try:
        df, losses = trained_frame(trial, seeds, block, rate, progress)
    except ModelError as exc:
        return None, {}, str(exc)
    return df, losses, ""


def read_trained(crit: Any, trial: ModelUnderTrial, seeds: list[int], block: dict[str, Any],
                 progress: Callable[..., None], rate: float = 1.0
                 ) -> tuple["pd.DataFrame", dict[int, tuple[float, float]]] | None:
    """What a reported reading after training starts with: progress shown, ``trained``; where the model cannot be
    trained, ``crit`` is recorded unmeasured with the reason and None is returned."""
    progress(f"model {trial.spec}: {block['train']['steps']} training steps at {rate:g}x the rate, seeds {seeds}",
             force=True)
    df, losses, why = trained(trial, seeds, block, rate, progress)
    if df is None:
        crit.unmeasured(why)
        return None
    return df, losses


def loss_note(losses: dict[int, tuple[float, float]], rate: float, block: dict[str, Any],
              trial: ModelUnderTrial | None = None) -> str:
    """The training in words for the record: steps, rate, the width it ran at (``trial``), each seed's losses."""
    t = block["train"]
    where = f" {training_width(trial, train_width(trial, block))}" if trial is not None else ""
    return (f"{t['steps']} steps of next-token training on MarkovLM{where} at lr {t['lr'] * rate:g}: training loss "
            + ", ".join(f"seed {s} {a:.2f} -> {b:.2f}" for s, (a, b) in losses.items()))
