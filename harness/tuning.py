"""Every arm at its own tuned learning rate (issue 17), on seeds disjoint from the ones it is judged on.

A comparison of trained arms at one shared learning rate compares learning rates as much as arms: under Adam
with ε ≈ 0, the scale d_k^-α on q·k is the same as rescaling W_Q and W_K's init and their learning rate. So
each (arm, d_k, task) is first trained over a learning-rate grid on *tuning seeds*, the rate with the lowest mean
held-out loss is chosen, and the arm is then evaluated at that rate on the evaluation seeds (which the choice
never saw). A chosen rate at the edge of its grid means the optimum may lie outside it: the comparison that
uses that arm is inconclusive (``edge_reason``), and the profile's grid should be widened.

Built on ``harness.sweeps.attention_variant_sweep``: its in-process memo keys on the training config, so a rate
tuned once is trained once, and modules that share the sweep share the tuning runs too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .sweeps import attention_variant_sweep

#: tuning seed i of an evaluation seed s is TUNING_SEED_OFFSET + s: disjoint from every evaluation seed set
#: (master seed m gives seeds m*1000 + i, so master seeds below 500 never reach it).
TUNING_SEED_OFFSET = 500_000
#: the held-out loss a diverged run counts as when a rate is chosen (it must never win)
DIVERGED_LOSS = math.inf


def tuning_seeds(seeds: Sequence[int], n: int) -> list[int]:
    """``n`` tuning seeds, disjoint from ``seeds`` and from every other master seed's evaluation seeds."""
    if n < 1:
        raise ValueError(f"tuning needs at least one tuning seed, got {n}")
    base = list(seeds)[:n] if len(seeds) >= n else list(seeds) + [max(seeds) + 1 + i for i in range(n - len(seeds))]
    return [TUNING_SEED_OFFSET + int(s) for s in base]


def lr_grid(base_lr: float, points: int, span: float) -> list[float]:
    """``points`` learning rates spaced evenly in log over a ``span``-fold range centred on ``base_lr``."""
    if points < 3 or span <= 1:
        raise ValueError(f"a tuning grid needs >= 3 points over a span > 1, got {points} points over {span}x")
    lo = base_lr / math.sqrt(span)
    return [float(lo * span ** (i / (points - 1))) for i in range(points)]


@dataclass(frozen=True)
class Tuned:
    """The rate chosen for one (arm, d_k) on the tuning seeds, and where it sits in the grid (``d_k`` None: an arm
    without one, e.g. C1's architectures)."""
    arm: str
    d_k: int | None
    lr: float
    grid: tuple[float, ...]
    mean_loss: tuple[float, ...]         # mean over the tuning seeds, per grid point, of the choosing quantity:
    score: str = "held-out loss"         # this one (``choose_rate`` may choose by another, e.g. steps to a target)

    @property
    def edge(self) -> str | None:
        """'lowest' / 'highest' when the chosen rate is at that end of the grid, else None."""
        if self.lr == self.grid[0]:
            return "lowest"
        if self.lr == self.grid[-1]:
            return "highest"
        return None

    @property
    def edge_reason(self) -> str:
        """The message that makes a comparison using this arm inconclusive ('' when the rate is interior)."""
        if self.edge is None:
            return ""
        where = self.arm if self.d_k is None else f"{self.arm} at d_k={self.d_k}"
        return (f"{where}: its tuned learning rate {self.lr:.3g} is the grid's {self.edge} "
                f"point ({self.grid[0]:.3g} .. {self.grid[-1]:.3g}); widen the grid in harness/profiles.py")


def _with_lr(budget: Mapping[str, Any], lr: float) -> dict[str, Any]:
    return {**budget, "train": {**budget["train"], "lr": float(lr)}}


def tune(variants: Mapping[str, Mapping[str, Any]], d_ks: Sequence[int], budget: Mapping[str, Any],
         seeds: Sequence[int], grid: Sequence[float], device: Any = "cpu",
         progress: Callable[..., Any] | None = None) -> tuple[pd.DataFrame, dict[tuple[str, int], Tuned]]:
    """Train every (variant, d_k) at every rate of ``grid`` on the tuning ``seeds``; choose by mean held-out
    loss (``final_loss``; a diverged run counts as infinitely bad). Returns the tuning runs (with an ``lr``
    column) and the choice per (variant, d_k)."""
    grid = sorted(float(g) for g in grid)
    runs = []
    for lr in grid:
        df = attention_variant_sweep(variants, d_ks, _with_lr(budget, lr), seeds, device=device, progress=progress)
        runs.append(df.assign(lr=lr))
    table = pd.concat(runs, ignore_index=True)
    loss = np.where(table["diverged"] | ~np.isfinite(table["final_loss"]), DIVERGED_LOSS, table["final_loss"])
    means = table.assign(tuning_loss=loss).groupby(["variant", "d_k", "lr"])["tuning_loss"].mean()
    chosen = {}
    for (variant, d_k), cell in means.groupby(level=["variant", "d_k"]):
        by_lr = cell.droplevel(["variant", "d_k"]).reindex(grid)
        chosen[(variant, int(d_k))] = Tuned(variant, int(d_k), float(by_lr.idxmin()), tuple(grid),
                                            tuple(float(v) for v in by_lr.to_numpy()))
    return table, chosen


def choose_rate(arm: str, grid: Sequence[float], seeds: Sequence[int],
                train_and_score: Callable[[float, int], Mapping[str, float]], by: Sequence[str] = ("loss",),
                d_k: int | None = None) -> tuple[pd.DataFrame, Tuned]:
    """The tuning rule of ``tune`` over any training function, for arms outside the attention-variant sweep.
    ``train_and_score(lr, seed)`` trains ``arm`` at ``lr`` on tuning seed ``seed`` and returns its scores by name
    (lower is better; NaN counts as ``DIVERGED_LOSS``, so a diverged run never wins), among them every name in
    ``by``. The chosen rate has the lowest mean over ``seeds`` of ``by[0]``; a tie is broken by the mean of
    ``by[1]``, and so on (then the lower rate). Returns (one row per run: arm, lr, seed and the scores; the
    choice, its ``mean_loss`` holding ``by[0]``'s means and ``score`` that name)."""
    if not by:
        raise ValueError("choose_rate needs at least one score to choose by")
    grid = sorted(float(g) for g in grid)
    table = pd.DataFrame([{"arm": arm, "lr": lr, "seed": int(s), **train_and_score(lr, int(s))}
                          for lr in grid for s in seeds])
    missing = [k for k in by if k not in table]
    if missing:
        got = sorted(set(table) - {"arm", "lr", "seed"})
        raise KeyError(f"train_and_score returned no {missing}; it returned {got}")
    means = table[["lr", *by]].astype(float).fillna(DIVERGED_LOSS).groupby("lr")[list(by)].mean().reindex(grid)
    lr = min(grid, key=lambda g: (*means.loc[g], g))
    return table, Tuned(arm, d_k, float(lr), tuple(grid), tuple(float(v) for v in means[by[0]]), score=by[0])


def evaluate_at_tuned(variants: Mapping[str, Mapping[str, Any]], d_ks: Sequence[int], budget: Mapping[str, Any],
                      seeds: Sequence[int], tuned: Mapping[tuple[str, int], Tuned], device: Any = "cpu",
                      progress: Callable[..., Any] | None = None) -> pd.DataFrame:
    """Each (variant, d_k) trained on the evaluation ``seeds`` at its own tuned rate; one row per run, with
    ``lr`` and ``lr_edge`` ('' for an interior rate, 'lowest' or 'highest') columns."""
    parts = []
    for d_k in d_ks:
        for variant, overrides in variants.items():
            t = tuned[(variant, int(d_k))]
            df = attention_variant_sweep({variant: overrides}, [d_k], _with_lr(budget, t.lr), seeds, device=device,
                                         progress=progress)
            parts.append(df.assign(lr=t.lr, lr_edge=t.edge or ""))
    return pd.concat(parts, ignore_index=True)


def tuned_table(tuned: Mapping[tuple[str, int], Tuned]) -> pd.DataFrame:
    """One row per (arm, d_k, grid rate): the tuning seeds' mean held-out loss, the chosen rate marked."""
    return pd.DataFrame([{"arm": t.arm, "d_k": t.d_k, "lr": lr, "tuning_mean_loss": loss, "chosen": lr == t.lr,
                          "edge": (t.edge or "") if lr == t.lr else ""}
                         for t in tuned.values() for lr, loss in zip(t.grid, t.mean_loss)])


def figure_loss_vs_lr(tuned: Mapping[tuple[str, int], Tuned], title: str):
    """Held-out loss against learning rate per arm, one panel per d_k, the chosen rate circled (issue 17)."""
    import matplotlib.pyplot as plt

    d_ks = sorted({t.d_k for t in tuned.values()})
    fig, axes = plt.subplots(1, len(d_ks), figsize=(4.8 * len(d_ks), 3.8), squeeze=False)
    for ax, d_k in zip(axes[0], d_ks):
        for t in (t for t in tuned.values() if t.d_k == d_k):
            finite = [(lr, v) for lr, v in zip(t.grid, t.mean_loss) if math.isfinite(v)]
            line, = ax.plot([p[0] for p in finite], [p[1] for p in finite], "o-", label=t.arm)
            chosen = dict(zip(t.grid, t.mean_loss))[t.lr]
            ax.plot([t.lr], [chosen], "o", ms=12, mfc="none", color=line.get_color())
        ax.set_xscale("log")
        ax.set_xlabel("learning rate")
        ax.set_ylabel("held-out loss (tuning seeds' mean)")
        ax.set_title(f"d_k = {d_k}")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return fig
