"""Saves of one run read in one command, and a user's own saved init (issue 55, item 10).

``--model-weights`` names one save or several: a comma-separated list, a glob (``'run/ckpt_*.pt'``, quoted so that
the shell leaves it), or a folder holding no weights of its own whose entries are saves (a Trainer's
``checkpoint-500/``, ``checkpoint-1000/``). Each save is checked as a single one is (``checkpoint.attach``); the
step of each is its folder's ``trainer_state.json``, or the number of a name that carries a step (``checkpoint-N``,
``step_N``, ``ckpt_N.pt``, ``iter_N``; its folder's name for a generic file name such as ``model.safetensors``):
``gpt2`` or ``llama3`` carry none. Where every save has a step they are read in step order, else in the order given,
and the terminal says so. A single
save is a series of one: Q3 answers for the last save, and the series' readings per layer are a table and a figure
over the steps (``series_table``).

``--model-init-weights PATH`` names the run's own saved init: the "at init" half of each answer reads it in place of
the random draw of seed 0, loaded by the same rules (and refused in the same one-line words, naming this option).
"""
from __future__ import annotations

import glob
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.trial import checkpoint as checkpoints
from harness.trial import checkpoint_probes as readings_of
from harness.trial.model import ModelError, ModelUnderTrial

if TYPE_CHECKING:
    import pandas as pd

#: the file names that say nothing of a step: their folder's name is read instead
_GENERIC = {"model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json"}
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".ckpt")


#: the names that carry a training step (issue 65, item 3): a Trainer's checkpoint-500, step_500, ckpt_500.pt,
#: iter_500; a number elsewhere in a name (gpt2, llama3, t5) is no step
_STEP = re.compile(r"(?:checkpoint|ckpt|step|iter)[-_]?(\d+)(?!\d)", re.IGNORECASE)
#: what a save says its step is where no name carries one
STEP_NAMES = "checkpoint-N, step_N, ckpt_N.pt, iter_N or a trainer_state.json"


def step_of(path: str | Path) -> int | None:
    """The training step of a save: ``global_step`` of the ``trainer_state.json`` in its folder (a Trainer's
    checkpoint folder), else the number a step-carrying name holds (``_STEP``: ``ckpt_1500.pt`` 1500,
    ``checkpoint-500`` 500; its folder's name for a generic file name such as ``model.safetensors``); None where
    neither says (``gpt2``, ``llama3``)."""
    p = Path(path)
    folder = p if p.is_dir() else p.parent if p.name in _GENERIC else None
    state = folder / "trainer_state.json" if folder is not None else None
    if state is not None and state.is_file():
        try:
            step = json.loads(state.read_text()).get("global_step")
            if isinstance(step, int) and not isinstance(step, bool):
                return step
        except (ValueError, OSError, AttributeError):
            pass                                     # an unreadable state says nothing: the name is read
    name = p.parent.name if p.name in _GENERIC else (p.stem if p.suffix in _WEIGHTS else p.name)
    found = _STEP.findall(name)
    return int(found[-1]) if found else None


def _is_save(p: Path) -> bool:
    if p.is_file():
        return p.suffix in _WEIGHTS
    return p.is_dir() and any((p / n).is_file() for n in (*checkpoints._SINGLE, *checkpoints._INDEX))


def saves_named(weights: str) -> list[tuple[str, int | None]]:
    """(path, step) of each save ``--model-weights`` names, in step order where every one has a step, else in the
    order given; a ``ModelError`` (one line) for an empty item, a glob that matches nothing, or a save named twice."""
    items = [w.strip() for w in str(weights).split(",")]
    if not all(items):
        raise ModelError(f"--model-weights {weights}: an empty name in the comma-separated list")
    paths: list[str] = []
    for item in items:
        if any(c in item for c in "*?["):
            found = sorted(glob.glob(item))
            if not found:
                raise ModelError(f"--model-weights {item}: no file or folder matches")
            paths += found
            continue
        p = Path(item)
        inner = sorted(c for c in p.iterdir() if _is_save(c)) if p.is_dir() and not _is_save(p) else []
        if inner and all(step_of(c) is not None for c in inner):     # a run's folder: checkpoint-500/, ...
            paths += [str(c) for c in inner]
        else:
            paths.append(item)                       # a save, or what ``weight_files`` refuses in its own words
    twice = next((p for i, p in enumerate(paths) if Path(p).resolve() in {Path(q).resolve() for q in paths[:i]}),
                 None)
    if twice is not None:
        raise ModelError(f"--model-weights {weights}: {twice} is named twice")
    steps = [step_of(p) for p in paths]
    pairs = list(zip(paths, steps))
    return sorted(pairs, key=lambda ps: ps[1]) if all(s is not None for s in steps) else pairs


def attach_as(trial: ModelUnderTrial, path: str, flag: str, allow_unused: bool = False) -> checkpoints.Checkpoint:
    """``checkpoint.attach``, its one-line refusals naming ``flag`` (the loading rules are the same)."""
    try:
        return checkpoints.attach(trial, path, allow_unused)
    except ModelError as exc:
        text = str(exc)
        raise ModelError(flag + text[len("--model-weights"):] if text.startswith("--model-weights ") else text) \
            from None


def prepare(trial: ModelUnderTrial, weights: str, *, init: str | None = None, tokens: str | None = None,
            text: str | None = None, allow_unused: bool = False) -> checkpoints.Checkpoint:
    """The saves ``--model-weights`` names (``saves_named``), each checked, and the saved init where given; the
    last save prepared as ``checkpoint.prepare`` does (its probe inputs; ``trial.checkpoint``) and holding the
    others (``saves``) and the init (``init``). Every mistake is a ``ModelError`` before anything is measured."""
    named = saves_named(weights)
    init_ckpt = attach_as(trial, init, "--model-init-weights", allow_unused) if init else None
    earlier = [attach_as(trial, p, "--model-weights", allow_unused) for p, _ in named[:-1]]
    ckpt = checkpoints.prepare(trial, named[-1][0], tokens=tokens, text=text, allow_unused=allow_unused)
    ckpt.init = init_ckpt
    ckpt.saves = earlier + [ckpt] if earlier else []
    for save, (_, step) in zip(ckpt.saves or [ckpt], named):
        save.step = step
    return ckpt


def init_note(ckpt: checkpoints.Checkpoint) -> str:
    """Which init the "at init" half reads, in words."""
    if ckpt.init is not None:
        return f"at init: the saved init {ckpt.init.path} ({ckpt.init.n_tensors} tensors, --model-init-weights)"
    return "at init: the same architecture drawn at random (seed 0), not this run's own init (give " \
           "--model-init-weights for that)"


# ------------------------------------------------------------------------------------------------ the series
#: the per-layer readings of the series, as Q3 pools them: (column, pooling over heads and probe sequences)
SERIES = (("logit_std", "geo"), ("independence_ratio", "geo"), ("entropy_ratio", "mean"),
          ("saturated_rows", "mean"), ("sink_mass", "mean"))


def series_table(trial: ModelUnderTrial, ckpt: checkpoints.Checkpoint, ids: Any, seed: int = 0) -> "pd.DataFrame":
    """One row per (save, layer), init first and then the saves in order: ``which`` (init, checkpoint), ``save``
    (the file's name, or "random init"), ``step`` (0 at init; the step in the save's name, or where a save has
    none, its place 1..n in the order given), ``step_from`` (name, order), ``layer`` and ``SERIES``' readings
    (the scaled logits' std and the independence ratio as geometric means over heads, the shares as means)."""
    import pandas as pd

    frames = checkpoints.read_saves(trial, ckpt, ids, seed)
    saves = ckpt.saves or [ckpt]
    by_name = all(s.step is not None for s in saves)
    rows = []
    for i, frame in enumerate(frames):
        save = saves[i - 1] if i else ckpt.init
        step = 0 if i == 0 else (save.step if by_name else i)
        table = readings_of.layer_table(frame)
        for layer, part in table.groupby("layer"):
            row = dict(which="init" if i == 0 else "checkpoint",
                       save=save.path.name if save is not None else "random, seed 0",
                       step=int(step), step_from="name" if by_name else "order", layer=int(layer))
            for column, pool in SERIES:
                row[column] = readings_of.geo_mean(part[column]) if pool == "geo" else float(part[column].mean())
            rows.append(row)
    return pd.DataFrame(rows)


def series_lines(table: "pd.DataFrame") -> list[str]:
    """The series in the terminal: where the saves' names carry no step, a line that says they are read in the order
    given; then one line a save, each reading listed by layer."""
    out = []
    if (table.step_from == "order").any():
        n = table[table.which == "checkpoint"].save.nunique()
        out.append(f"the save's name carries no training step ({STEP_NAMES}): it is save 1" if n == 1 else
                   f"not every save's name carries a training step ({STEP_NAMES}): the {n} saves are read in the "
                   "order given, numbered 1..n")
    for (step, save), part in table.groupby(["step", "save"], sort=False):
        part = part.sort_values("layer")
        std = ", ".join(f"{v:.3g}" for v in part.logit_std)
        ent = ", ".join(f"{v:.2f}" for v in part.entropy_ratio)
        sat = ", ".join(f"{v:.1%}" for v in part.saturated_rows)
        at = "init" if part.which.iloc[0] == "init" else f"step {step}" if part.step_from.iloc[0] == "name" \
            else f"save {step}"
        out.append(f"{at} ({save}): by layer, scaled logit std {std}; entropy/ln n {ent}; saturated rows {sat}")
    return out
