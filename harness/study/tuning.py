"""Every arm at its own tuned learning rate (issue 17), on seeds disjoint from the ones it is judged on.

A comparison of trained arms at one shared learning rate compares learning rates as much as arms: under Adam
with ε ≈ 0, the scale d_k^-α on q·k is the same as rescaling W_Q and W_K's init and their learning rate. So
each (arm, d_k, task) is first trained over a learning-rate grid on *tuning seeds*, the rate with the lowest mean
validation loss is chosen, and the arm is then evaluated at that rate on the evaluation seeds (which the choice
never saw), on a test part of the held-out split that the validation loss never read (issue 26). A chosen rate at the edge of its grid means the optimum may lie outside it: the comparison that
uses that arm is inconclusive (``edge_reason``), and the profile's grid should be widened.

Built on ``harness.study.sweeps.attention_sweep``: its in-process memo keys on the training config, so a rate
tuned once is trained once, and modules that share the sweep share the tuning runs too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from harness.record import decision
from harness.study.sweeps import attention_sweep

#: tuning seed i of an evaluation seed s is TUNING_SEED_OFFSET + s: disjoint from every evaluation seed set by
#: construction (issue 26): master seed m <= 10**6 gives seeds m*1000 + i < 10**9 + 1000 < 2**31, and a tuning seed
#: is >= 2**31 (and < 2**32, so numpy's seed % 2**32 keeps it distinct too). tests/study/test_tuning.py checks it
#: against the plugin's bounds.
TUNING_SEED_OFFSET = 2 ** 31
#: the held-out loss a diverged run counts as when a rate is chosen (it must never win)
DIVERGED_LOSS = math.inf
#: the name ``tune`` hands ``choose_rate`` for a sweep run's choosing score: the loss on the validation part of the
#: held-out split (issue 26: never the test part the claims compare), a diverged run counting as inf
TUNING_SCORE = "validation loss"


def tuning_seeds(seeds: Sequence[int], n: int) -> list[int]:
    """``n`` tuning seeds, disjoint from ``seeds`` and from every other master seed's evaluation seeds."""
    if n < 1:
        raise ValueError(f"tuning needs at least one tuning seed, got {n}")
    if any(not 0 <= int(s) < TUNING_SEED_OFFSET - n for s in seeds):
        raise ValueError(f"evaluation seeds must lie in [0, 2**31 - {n}) to keep tuning seeds disjoint, got {seeds}")
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
    setting: str = "d_k"                 # what ``d_k`` holds (C2's is the distance d)
    n: int = 1                           # the tuning seeds the means are over

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
        where = self.arm if self.d_k is None else f"{self.arm} at {self.setting}={self.d_k}"
        return (f"{where}: its tuned learning rate {self.lr:.3g} is the grid's {self.edge} "
                f"point ({self.grid[0]:.3g} .. {self.grid[-1]:.3g}); widen the grid in harness/profiles/<claim>.py")


def _with_lr(block: Mapping[str, Any], lr: float) -> dict[str, Any]:
    return {**block, "train": {**block["train"], "lr": float(lr)}}


def tune(arms: Mapping[str, Mapping[str, Any]], d_ks: Sequence[int], block: Mapping[str, Any],
         seeds: Sequence[int], grid: Sequence[float], device: Any = "cpu",
         progress: Callable[..., Any] | None = None, extend: int = 0
         ) -> tuple[pd.DataFrame, dict[tuple[str, int], Tuned]]:
    """``choose_rate`` for every (arm, d_k) of the attention sweep: each trained at every rate of
    ``grid`` on the tuning ``seeds`` and chosen by mean validation loss (``val_loss``; a diverged run counts as
    infinitely bad), the grid extended past an end up to ``extend`` times while the choice sits there. Returns the
    tuning runs (the sweep's rows, with ``lr``) and the choice per (arm, d_k)."""
    tables, chosen = [], {}
    for d_k in d_ks:
        for arm, overrides in arms.items():
            def held_out_loss(lr: float, seed: int, arm=arm, overrides=overrides, d_k=d_k) -> dict:
                row = attention_sweep({arm: overrides}, [d_k], _with_lr(block, lr), [seed],
                                              device=device, progress=progress).iloc[0].to_dict()
                diverged = bool(row["diverged"]) or not math.isfinite(row["val_loss"])
                return {**row, TUNING_SCORE: DIVERGED_LOSS if diverged else float(row["val_loss"])}

            table, chosen[(arm, int(d_k))] = choose_rate(arm, grid, seeds, held_out_loss, by=(TUNING_SCORE,),
                                                             d_k=int(d_k), extend=extend)
            tables.append(table.drop(columns=[TUNING_SCORE]))      # its arm column is the sweep row's own
    return pd.concat(tables, ignore_index=True), chosen


def choose_rate(arm: str, grid: Sequence[float], seeds: Sequence[int],
                train_and_score: Callable[[float, int], Mapping[str, float]], by: Sequence[str] = ("loss",),
                d_k: int | None = None, extend: int = 0) -> tuple[pd.DataFrame, Tuned]:
    """Issue 17's tuning rule, over any training function (the sweep's ``tune`` and arms outside it, e.g. C1's).
    ``train_and_score(lr, seed)`` trains ``arm`` at ``lr`` on tuning seed ``seed`` and returns its scores by name
    (lower is better; NaN counts as ``DIVERGED_LOSS``, so a diverged run never wins), among them every name in
    ``by``. The chosen rate has the lowest mean over ``seeds`` of ``by[0]``; a tie is broken by the mean of
    ``by[1]``, and so on (then the lower rate). While the choice sits at an end of the grid, the grid is extended
    past that end by one grid step (the ratio of its first two rates), at most ``extend`` times per end: the
    widening the profile would otherwise need, decided on the tuning seeds alone, so the evaluation seeds never
    see it; a choice still at an end keeps its ``edge``. Returns (one row per run: arm, lr, seed and the scores;
    the choice, its ``mean_loss`` holding ``by[0]``'s means and ``score`` that name)."""
    if not by:
        raise ValueError("choose_rate needs at least one score to choose by")
    grid = sorted(float(g) for g in grid)
    rows: list[dict[str, Any]] = []
    trained: set[float] = set()
    used = {"lowest": 0, "highest": 0}
    while True:
        for lr in grid:
            if lr not in trained:
                rows += [{"arm": arm, "lr": lr, "seed": int(s), **train_and_score(lr, int(s))} for s in seeds]
                trained.add(lr)
        table = pd.DataFrame(rows)
        missing = [k for k in by if k not in table]
        if missing:
            got = sorted(set(table) - {"arm", "lr", "seed"})
            raise KeyError(f"train_and_score returned no {missing}; it returned {got}")
        means = table[["lr", *by]].astype(float).fillna(DIVERGED_LOSS).groupby("lr")[list(by)].mean().reindex(grid)
        lr = min(grid, key=lambda g: (*means.loc[g], g))
        t = Tuned(arm, d_k, float(lr), tuple(grid), tuple(float(v) for v in means[by[0]]), score=by[0],
                  n=len(seeds))
        if t.edge is None or used[t.edge] >= extend:
            return table, t
        used[t.edge] += 1
        ratio = grid[1] / grid[0]
        grid = [grid[0] / ratio] + grid if t.edge == "lowest" else grid + [grid[-1] * ratio]


def choose_rates(arms: Iterable[Any], grid: Callable[[Any], Sequence[float]], seeds: Sequence[int],
                 train_and_score: Callable[[Any, float, int], Mapping[str, Any]], *, by: Sequence[str] = ("loss",),
                 extend: int = 0, name: Callable[[Any], str] = str, d_k: Callable[[Any], int | None] = lambda arm: None,
                 columns: Callable[[Any], Mapping[str, Any]] = lambda arm: {}) -> tuple[pd.DataFrame, dict[Any, Tuned]]:
    """``choose_rate`` for every arm trained outside the sweep (C1's architectures, C2's (arch, d), C5's heads):
    ``arm`` over ``grid(arm)`` on the tuning ``seeds`` (``tuning_seeds``: disjoint from the evaluation's),
    ``train_and_score(arm, lr, seed)`` training and scoring one run (``val_loss_scores`` for a (loss, diverged)
    pair), chosen by ``by``, each grid extended past an end at most ``extend`` times. Returns (every arm's tuning
    runs in one table, named ``name(arm)`` with ``columns(arm)`` added; the choice per arm, a ``Tuned`` at
    ``d_k(arm)``)."""
    tables, chosen = [], {}
    for arm in arms:
        table, chosen[arm] = choose_rate(name(arm), grid(arm), seeds,
                                         lambda lr, seed, arm=arm: train_and_score(arm, lr, seed),
                                         by=by, d_k=d_k(arm), extend=extend)
        tables.append(table.assign(**columns(arm)))
    return pd.concat(tables, ignore_index=True), chosen


def val_loss_scores(loss: float, diverged: bool) -> dict[str, Any]:
    """A tuning run's scores from its validation loss: ``val_loss`` is ``DIVERGED_LOSS`` for a diverged run, so that
    it never wins (choose by ``("val_loss",)``)."""
    return {"loss": loss, "diverged": diverged, "val_loss": DIVERGED_LOSS if diverged else loss}


def edge_reasons(tuned: Iterable[Tuned]) -> str:
    """Why a comparison of these tuned arms cannot be trusted: each arm whose rate is at an edge of its grid."""
    return "; ".join(t.edge_reason for t in tuned if t.edge)


def evaluate_at_tuned(arms: Mapping[str, Mapping[str, Any]], d_ks: Sequence[int], block: Mapping[str, Any],
                      seeds: Sequence[int], tuned: Mapping[tuple[str, int], Tuned], device: Any = "cpu",
                      progress: Callable[..., Any] | None = None) -> pd.DataFrame:
    """Each (arm, d_k) trained on the evaluation ``seeds`` at its own tuned rate; one row per run, with
    ``lr`` and ``lr_edge`` ('' for an interior rate, 'lowest' or 'highest') columns."""
    parts = []
    for d_k in d_ks:
        for arm, overrides in arms.items():
            t = tuned[(arm, int(d_k))]
            df = attention_sweep({arm: overrides}, [d_k], _with_lr(block, t.lr), seeds, device=device,
                                         progress=progress)
            parts.append(df.assign(lr=t.lr, lr_edge=t.edge or ""))
    return pd.concat(parts, ignore_index=True)


def tuned_table(tuned: Mapping[Any, Tuned], runs: pd.DataFrame | None = None,
                aggregates: Mapping[str, tuple[str, str]] | None = None) -> pd.DataFrame:
    """One row per (arm, d_k, grid rate): the tuning seeds' mean held-out loss, the chosen rate marked. With
    ``runs`` (``choose_rate``'s tuning runs: arm, lr, seed and scores) and ``aggregates`` (pandas named
    aggregations, e.g. ``{"reached": ("reached", "sum")}``), those per (arm, rate) too."""
    table = pd.DataFrame([{"arm": t.arm, "d_k": t.d_k, "lr": lr, "tuning_mean_loss": loss, "chosen": lr == t.lr,
                           "edge": (t.edge or "") if lr == t.lr else ""}
                          for t in tuned.values() for lr, loss in zip(t.grid, t.mean_loss)])
    if runs is None or not aggregates:
        return table
    return table.merge(runs.groupby(["arm", "lr"]).agg(**aggregates).reset_index(), on=["arm", "lr"], how="left")


def fixed_rate_table(tuning: pd.DataFrame, tuned: Mapping[Any, Tuned], columns: Sequence[str]) -> pd.DataFrame:
    """The fixed-rate view (reported, never counted), the design tuning replaces: every arm of ``tuned`` at each
    rate that all of their grids share, read from ``choose_rate``'s tuning runs there (no run of its own). One row
    per (rate, arm): the tuning seeds' mean of ``columns``, and whether it is that arm's tuned rate."""
    arms = {t.arm: t for t in tuned.values()}
    shared = sorted(set.intersection(*(set(t.grid) for t in arms.values())))
    at = tuning[tuning["arm"].isin(list(arms)) & tuning["lr"].isin(shared)]
    out = at.groupby(["lr", "arm"], sort=False)[list(columns)].mean().reset_index().sort_values("lr", kind="stable")
    return out.assign(tuned_rate=[math.isclose(r.lr, arms[r.arm].lr) for r in out.itertuples()], seeds="tuning")


# ------------------------------------------------------------------------------ the shared tuned sweep (C3, C4, R1)
def rate_choice_of(key: str, t: Tuned, tuning: pd.DataFrame, evaluation: pd.DataFrame, column: str,
                   sign: float = 1.0, transform: Callable[[np.ndarray], np.ndarray] | None = None, *,
                   choice: str = "val_loss", tuning_column: str | None = None) -> dict[str, Any]:
    """How one tuned arm's rate ``t`` was chosen, for a measurement that reads ``transform(column)`` of its
    ``evaluation`` runs with ``sign`` (``decision.rate_choice``; ``key`` names the arm, one simulated choice per key):
    at each rate of ``t.grid`` the mean over ``tuning`` (the arm's tuning runs, with ``lr``) of the choosing
    quantity ``choice`` (diverged, where a ``diverged`` column says so: inf; absent: ``column``) and of the measured
    quantity (``tuning_column``, default ``column``: the tuning runs' name for it, e.g. the validation loss for a
    test loss); the seed-to-seed SDs of both, pooled over the tuning seeds at each rate and the evaluation seeds
    (the evaluation's own ``choice`` column where it has one, else ``column``). Where the choosing quantity is
    positive (a loss), the same SD of its log; from two tuning seeds up, the share of the tuning runs' variance a
    seed shares across rates (``rho``: a two-way analysis of variance, rate x seed, on that scale); and the
    evaluation seeds' count and means (of the choosing quantity only where the evaluation has its ``choice`` column:
    no stand-in)."""
    f = transform or (lambda x: x)
    at_tuning = tuning_column or column

    def loss(df: pd.DataFrame) -> np.ndarray:
        x = df[choice if choice in df else column].to_numpy(float)
        return np.where(df["diverged"].to_numpy(bool), np.inf, x) if "diverged" in df else x
    choices, value, dev_c, dev_v = [], [], [], []
    for lr in t.grid:
        at = tuning[np.isclose(tuning.lr, lr)]
        c, v = loss(at), f(at[at_tuning].to_numpy(float))
        choices.append(float(np.mean(c)) if len(c) else math.inf)
        value.append(float(np.mean(v)) if len(v) else math.nan)
        if len(c) > 1 and np.all(np.isfinite(c)) and np.all(np.isfinite(v)):
            dev_c.append(c - c.mean())
            dev_v.append(v - v.mean())
    c, v = loss(evaluation), f(evaluation[column].to_numpy(float))
    ok = np.isfinite(c) & np.isfinite(v)
    dev_c.append(c[ok] - c[ok].mean())
    dev_v.append(v[ok] - v[ok].mean())
    df = sum(len(d) - 1 for d in dev_c if len(d) > 1)
    pooled = lambda devs: math.sqrt(sum(float((d ** 2).sum()) for d in devs if len(d) > 1) / df) if df else 0.0  # noqa: E731
    # the log scale (issue 54): a loss's spread scales with it, so one SD fits the grid there, not on the raw scale
    runs_c = [loss(tuning[np.isclose(tuning.lr, lr)]) for lr in t.grid] + [c[ok]]
    positive = all(np.all(x[np.isfinite(x)] > 0) for x in runs_c)
    log_devs = [np.log(x) - np.log(x).mean() for x in runs_c if len(x) > 1 and np.all(np.isfinite(x))] if positive else []
    log_df = sum(len(d) - 1 for d in log_devs)
    log_sd = math.sqrt(sum(float((d ** 2).sum()) for d in log_devs) / log_df) if log_df else None
    extra = {"log_sd": log_sd, "log_df": log_df if log_sd is not None else None, "rho": _seed_share(tuning, t.grid, loss,
             positive) if t.n > 1 and "seed" in tuning else None, "n_eval": int(ok.sum()),
             "eval_value": float(v[ok].mean()) if ok.any() else None}
    if choice in evaluation and ok.any():
        extra["eval_choice"] = float(c[ok].mean())
        extra["eval_log_choice"] = float(np.log(c[ok]).mean()) if positive else None
    return decision.rate_choice(key, sign, t.grid, choices, value, t.lr, t.n, pooled(dev_c), df, pooled(dev_v),
                                **extra)


def _seed_share(tuning: pd.DataFrame, grid: Sequence[float], loss: Callable[[pd.DataFrame], np.ndarray],
                log: bool) -> float | None:
    """The share of a tuning run's seed-to-seed variance that its seed shares across the grid's rates (a seed that
    is unlucky at one rate is unlucky at the others): the seed component of a two-way analysis of variance (rate x
    seed, no replicate) over the rates where every tuning seed is finite, on the log scale where ``log``; None
    where fewer than two such rates or seeds."""
    rows = []
    for lr in grid:
        at = tuning[np.isclose(tuning.lr, lr)].sort_values("seed")
        x = loss(at)
        if len(x) > 1 and np.all(np.isfinite(x)):
            rows.append(pd.Series(np.log(x) if log else x, index=at["seed"].to_numpy()))
    y = pd.concat(rows, axis=1).dropna().to_numpy(float).T if len(rows) > 1 else np.empty((0, 0))
    if y.shape[0] < 2 or y.shape[1] < 2:
        return None
    r, s = y.shape
    resid = y - y.mean(1, keepdims=True) - y.mean(0, keepdims=True) + y.mean()
    var_e = float((resid ** 2).sum()) / ((r - 1) * (s - 1))
    ms_seed = r * float(((y.mean(0) - y.mean()) ** 2).sum()) / (s - 1)
    var_b = max(0.0, (ms_seed - var_e) / r)
    return var_b / (var_b + var_e) if var_b + var_e > 0 else None


@dataclass
class TunedSweep:
    """One task's tuned sweep: the tuning runs, the rate chosen per (arm, d_k), and the evaluation runs at those
    rates. ``cell`` hands a paired comparison its per-seed values; ``invalid`` the edge reasons of its arms."""
    task: str
    tuning: pd.DataFrame
    tuned: dict[tuple[str, int], Tuned]
    runs: pd.DataFrame
    shared_lr: float

    @classmethod
    def from_runs(cls, task: str, runs: pd.DataFrame, lr: float = 1e-3, edge: Sequence[tuple[str, int]] = ()
                  ) -> "TunedSweep":
        """A sweep whose every (arm, d_k) of ``runs`` was tuned to ``lr`` inside a 3-point grid, except the
        cells in ``edge`` (tuned to the grid's top): for tests of the measurement functions."""
        grid = (lr / 2, lr, lr * 2)
        cells = {(str(v), int(d)) for v, d in zip(runs["arm"], runs["d_k"])}
        tuned = {c: Tuned(c[0], c[1], grid[-1] if c in set(edge) else lr, grid, (1.0, 0.5, 0.9)) for c in cells}
        return cls(task, runs.assign(lr=lr), tuned, runs.assign(lr=lr), lr)

    def cell(self, arm: str, d_k: int, column: str = "final_loss") -> np.ndarray:
        """``column`` of (arm, d_k) on the evaluation seeds, in seed order (pairs with any other cell)."""
        c = self.runs[(self.runs.arm == arm) & (self.runs.d_k == int(d_k))].sort_values("seed")
        if c.empty:
            raise ValueError(f"the {self.task} sweep has no runs of {arm!r} at d_k={d_k}")
        return c[column].to_numpy(float)

    def describe(self, arm: str, d_k: int) -> str:
        """'<arm> <mean held-out loss> (lr <its tuned rate>)' on the evaluation seeds, for a criterion's detail."""
        return f"{arm} {self.cell(arm, d_k).mean():.3g} (lr {self.tuned[(arm, int(d_k))].lr:.3g})"

    def paired(self, a: str, b: str, d_k: int, label: str = "", identical: str = "") -> dict[str, Any]:
        """Arm ``a`` against arm ``b`` at ``d_k``, paired by seed (δ = a - b of the held-out loss; ``decision.samples``,
        ``identical`` passed on), invalid where either arm's rate sits at its grid's edge."""
        return decision.samples(self.cell(a, d_k), self.cell(b, d_k), paired=True,
                                label=label or f"{self.task} d_k={d_k}", invalid=self.invalid((a, d_k), (b, d_k)),
                                identical=identical, rates=[self.rates(a, d_k), self.rates(b, d_k, -1.0)])

    def rates(self, arm: str, d_k: int, sign: float = 1.0, column: str = "final_loss",
              transform: Callable[[np.ndarray], np.ndarray] | None = None) -> dict[str, Any]:
        """How (arm, d_k)'s rate was chosen, for a measurement that reads ``transform(column)`` of it with ``sign``
        (``decision.rate_choice``): the grid's tuning means of the validation loss (diverged: inf) and of the
        measured quantity, and their seed-to-seed SDs, the evaluation seeds at the chosen rate pooled with the
        tuning seeds' spread at each rate."""
        runs = self.tuning[(self.tuning.arm == arm) & (self.tuning.d_k == int(d_k))]
        ev = self.runs[(self.runs.arm == arm) & (self.runs.d_k == int(d_k))]
        return rate_choice_of(f"{self.task}/{arm}/d_k={int(d_k)}", self.tuned[(arm, int(d_k))], runs, ev, column,
                              sign, transform)

    def invalid(self, *cells: tuple[str, int]) -> str:
        """Why a comparison of these (arm, d_k) cells cannot be trusted: each arm whose rate is at a grid edge."""
        return "; ".join(f"{self.task}: {self.tuned[(a, int(d))].edge_reason}" for a, d in dict.fromkeys(cells)
                         if self.tuned[(a, int(d))].edge)

    def fixed_lr(self) -> pd.DataFrame:
        """The secondary (reported, never counted) table: every arm at the one shared rate (the grid's centre),
        from the tuning runs that already trained there: mean held-out loss and accuracy per (d_k, arm)."""
        at = self.tuning[np.isclose(self.tuning["lr"], self.shared_lr)]
        return (at.groupby(["d_k", "arm"])[["final_loss", "final_accuracy"]].mean().reset_index()
                .assign(task=self.task, lr=self.shared_lr, seeds="tuning"))


def tuned_sweep(arms: Mapping[str, Mapping[str, Any]], d_ks: Sequence[int], block: Mapping[str, Any],
                seeds: Sequence[int], tuning: Mapping[str, Any], device: Any = "cpu",
                progress: Callable[..., Any] | None = None) -> TunedSweep:
    """``tune`` then ``evaluate_at_tuned`` for one task: ``tuning`` is a profile block ``{"points", "span",
    "seeds", "extend"}``; the grid is centred on ``block["train"]["lr"]`` (the shared rate of the fixed-lr table). Every
    run goes through the sweep's memo, so modules that ask for the same (arm, d_k, task) share its runs."""
    shared = float(block["train"]["lr"])
    grid = lr_grid(shared, int(tuning["points"]), float(tuning["span"]))
    if not any(math.isclose(g, shared, rel_tol=1e-9) for g in grid):
        raise ValueError(f"the tuning grid {grid} must contain the shared rate {shared} (use an odd number of points)")
    grid = [shared if math.isclose(g, shared, rel_tol=1e-9) else g for g in grid]
    table, tuned = tune(arms, d_ks, block, tuning_seeds(seeds, int(tuning["seeds"])), grid, device, progress,
                        extend=int(tuning.get("extend", 0)))
    runs = evaluate_at_tuned(arms, d_ks, block, seeds, tuned, device, progress)
    return TunedSweep(block.get("task", {}).get("name", "task"), table, tuned, runs, shared)


def sweep_tasks(block: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The tasks of the shared sweep, from C3's profile block: the first task (``sweep``, ``sweep_d_ks``,
    ``small_d_ks``) and the second (``task2``: the same three keys). task name -> {"block", "d_ks",
    "small_d_ks"}."""
    out = {}
    for part in (block, block.get("task2")):
        if part:
            b = part["sweep"]
            out[b["task"]["name"]] = {"block": b, "d_ks": list(part["sweep_d_ks"]),
                                      "small_d_ks": list(part.get("small_d_ks", []))}
    return out


def tuned_metrics(claim: str, sweep: TunedSweep, arm_names: Mapping[str, str] | None = None) -> dict[str, float]:
    """``tuned_lr/<claim>/<arm>/<d_k>/<task>`` and ``tuned_loss/<claim>/<arm>/<d_k>/<task>`` (issue 17's
    contract), name -> value, for the claim to record (``ev.metric``): the rate chosen on the tuning seeds and the
    mean held-out loss at it on the evaluation seeds."""
    names = arm_names or {}
    out: dict[str, float] = {}
    for (arm, d_k), t in sweep.tuned.items():
        label = f"{claim}/{names.get(arm, arm)}/{d_k}/{sweep.task}"
        out[f"tuned_lr/{label}"] = t.lr
        out[f"tuned_loss/{label}"] = float(np.mean(sweep.cell(arm, d_k)))
    return out


def tuned_tables(sweeps_: Mapping[str, TunedSweep]) -> pd.DataFrame:
    """``tuned_table`` of every task, with the evaluation seeds' mean loss at the chosen rate."""
    parts = []
    for task, s in sweeps_.items():
        t = tuned_table(s.tuned).assign(task=task)
        t["eval_mean_loss"] = [float(np.mean(s.cell(r.arm, r.d_k))) if r.chosen else math.nan
                               for r in t.itertuples()]
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def merge(a: TunedSweep, b: TunedSweep) -> TunedSweep:
    """Two tuned sweeps of one task (e.g. different arms at different d_k) as one."""
    if a.task != b.task or a.shared_lr != b.shared_lr:
        raise ValueError(f"cannot merge the {a.task} and {b.task} sweeps (or different shared rates)")
    return TunedSweep(a.task, pd.concat([a.tuning, b.tuning], ignore_index=True), {**a.tuned, **b.tuned},
                      pd.concat([a.runs, b.runs], ignore_index=True), a.shared_lr)
