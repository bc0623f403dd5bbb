"""Multi-head retrieval arms, trained at their rates and probed through the taps (C5's measurement).

An ``Arm`` is one configuration of ``harness.data.tasks.MultiPositionRetrieval`` and the one-layer model that answers it:
the task binding (``token`` or ``position``), M slots, h heads and d_k (d_model // h unless set), and a step
multiplier (the long single head). ``train_arm`` trains one (arm, seed) on the profile's train block for its binding
and measures it on the test part of the held-out split: exact match and loss, then, through the taps on the query
row, the attention entropy, the mass on the slots and each head's slot shares (when the attention returns weights),
and ``harness.measure.resolution.positional_resolution`` on the heads' outputs. ``tune_arms`` is the tuning stage
(``harness.study.tuning.choose_rates`` over the binding's ``tuning`` block, scored on the validation part alone);
``measure`` runs every arm on its seeds (``arm_seeds``) at its tuned rate. ``select``, ``by_seed``,
``paired_by_seed``, ``by_h``, ``means_by_h`` and ``selecting_fraction`` (heads above ``SELECTING_SHARE``) read the
runs table; ``resolution_slope`` is one slope of resolution against log2 h per seed (``exact_note``: its exact point,
in words); ``entropy_band`` and ``entropy_position`` place a query-row entropy between one position and all;
``rate_choices`` are the position arms' rate choices for a comparison (issue 47). Budgets are the profile's C5 block;
what is decided from these numbers is the claim module's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch

from model import ModelConfig, QueryTagger

from harness.record import decision
from harness.measure import stats
from harness.measure.probes import attention_entropy, run_with_taps
from harness.measure.resolution import distinct_majority_slots, positional_resolution, slot_shares, slot_weights, top_slot_share
from harness.data.tasks import MultiPositionRetrieval, validation_test_split
from harness.train.loop import TrainConfig, build_for_task, evaluate, torch_threads, train
from harness.study.tuning import Tuned, choose_rates, rate_choice_of, tuning_seeds, val_loss_scores

WEIGHTS_TAP = "encoder.layers.0.self_attn.weights"
OUT_TAP = "encoder.layers.0.self_attn.out"
MAJORITY = 0.5             # a slot receives "most" of a head's slot mass: a share above one half
SELECTING_SHARE = 0.9      # a head whose most-attended slot holds > 90% of its slot mass selects one slot (measured:
                           # selecting single heads ~1.0, diffuse ones 0.71-0.75, multi-head heads 0.91-0.99)
#: the runs' columns read off the attention weights (NaN under a kernel that returns none, issue 27)
WEIGHT_COLUMNS = ("entropy", "entropy_per_head", "effective_positions", "mass_on_slots", "top_slot_share",
                  "top_slot_share_per_head", "slot_share_per_head", "distinct_slots")


@dataclass(frozen=True)
class Arm:
    """One configuration: task binding, M slots, h heads, d_k (None: d_model // h), step multiplier."""
    binding: str
    M: int
    h: int
    d_k: int | None = None
    steps_factor: int = 1          # the long-budget single head trains steps_factor x the budget

    @property
    def label(self) -> str:
        return (f"{self.binding} M={self.M} h={self.h}"
                + (f" x{self.steps_factor} steps" if self.steps_factor > 1 else ""))


@dataclass
class Measurement:
    """``runs``: one row per (arm, seed): exact_match, loss, entropy (query row, mean over heads),
    entropy_per_head, effective_positions (mean exp(entropy)), mass_on_slots, top_slot_share (mean over heads),
    top_slot_share_per_head, resolution (mean over slots),
    resolution_per_slot. ``maps``: (binding, M, h) -> the query row's attention (h, S) on held-out example 0
    for the arm's first seed, with that example's slot positions."""
    runs: pd.DataFrame
    maps: dict[tuple[str, int, int], dict[str, Any]] = field(default_factory=dict)


def make_task(arm: Arm, task_block: dict[str, Any]) -> MultiPositionRetrieval:
    """The arm's retrieval task, as a classify task: y (B, M), the targets at the query only."""
    return MultiPositionRetrieval(n_marked=arm.M, seq_len=task_block["seq_len"], vocab=task_block["vocab"],
                                  binding=arm.binding, kind="classify")


def model_config(arm: Arm, model_block: dict[str, Any]) -> ModelConfig:
    """One attention layer + FFN at fixed d_model; d_k = d_v (= d_model // h unless the arm sets it)."""
    return ModelConfig(d_model=model_block["d_model"], n_heads=arm.h, d_k=arm.d_k, d_v=arm.d_k,
                       d_ff=model_block["d_ff"], n_encoder_layers=model_block["n_layers"], n_decoder_layers=0)


def build_model(arm: Arm, model_block: dict[str, Any], task: MultiPositionRetrieval, seed: int) -> QueryTagger:
    """The harness's seeded ``encoder_tagger`` for the arm (``build_for_task``: pooled at the query for the
    classify task), its weights loaded into a ``QueryTagger``."""
    base = build_for_task("encoder_tagger", task, model_config(arm, model_block), seed)
    model = QueryTagger(base.cfg, base.n_classes, pool=base.pool)
    model.load_state_dict(base.state_dict())
    return model


def train_config(arm: Arm, block: dict[str, Any], device: torch.device | str = "cpu",
                 lr: float | None = None) -> TrainConfig:
    """The arm's binding's train block (steps x the arm's factor), at rate ``lr`` when given."""
    tc = TrainConfig.from_dict({**block[arm.binding]["train"], "device": str(device),
                                **({"lr": float(lr)} if lr is not None else {})})
    return tc.replace(steps=tc.steps * arm.steps_factor)


def train_arm(arm: Arm, block: dict[str, Any], seed: int, device: torch.device | str = "cpu",
              progress: Callable[..., Any] | None = None, lr: float | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train one (arm, seed) (at ``lr`` when given, else the profile's rate), then measure through the taps:
    entropy of the query row, the mass it puts on the slots, the slot shares per head and the resolution probe.
    Returns (row, attention map of held-out example 0). The whole arm, probe included, runs on the train block's
    ``num_threads`` (1 at every profile; why: docs/c5-resolution.md)."""
    tc = train_config(arm, block, device, lr)
    with torch_threads(tc.num_threads):
        return _train_and_probe(arm, block, tc, seed, device, progress)


def tuning_run(arm: Arm, block: dict[str, Any], seed: int, lr: float, device: torch.device | str = "cpu",
               progress: Callable[..., Any] | None = None) -> dict[str, Any]:
    """One tuning run: the arm trained at ``lr`` on ``seed``; its scores (``val_loss_scores``: the final validation
    loss chooses the rate, issue 26: the validation part of the held-out split alone) and, reported and read by
    the firmness of a choice (``harness.study.tuning.rate_choice_of``), the resolution probe on the test part, as
    ``train_arm`` measures it (NaN for a diverged run)."""
    tc = train_config(arm, block, device, lr)
    with torch_threads(tc.num_threads):
        task = make_task(arm, block["task"])
        model = build_model(arm, block["model"], task, seed)
        if progress:
            progress(f"C5 tuning {arm.label} lr {lr:.3g} seed {seed}: training {tc.steps} steps", force=True)
        val, test = validation_test_split(task, tc.eval_size, block["probe"]["n_eval"])
        result = train(model, task, tc, seed, progress=progress, heldout=val)
        loss = float(result.final.get("loss", math.nan))
        diverged = bool(result.diverged or not math.isfinite(loss))
        resolution = math.nan if diverged else \
            float(_resolution(model, task, test.to(device), block["probe"], seed, device)[0].mean())
    return {**val_loss_scores(loss, diverged), "resolution": resolution}


def tune_arms(arms: list[Arm], block: dict[str, Any], seeds: list[int], device: torch.device | str = "cpu",
              progress: Callable[..., Any] | None = None) -> tuple[pd.DataFrame, dict[Arm, Tuned]]:
    """Issue 17's tuning stage for C5's arms (module docstring), ``harness.study.tuning.choose_rates`` over each arm's
    binding's ``tuning`` block, each run a ``tuning_run``. Returns (one row per tuning run, the ``Tuned`` per arm,
    named by its h)."""
    (tune_block,) = {arm.binding: block[arm.binding]["tuning"] for arm in arms}.values()   # the arms of one binding
    return choose_rates(arms, lambda arm: tune_block["lr_grid"], tuning_seeds(seeds, int(tune_block["seeds"])),
                        lambda arm, lr, seed: tuning_run(arm, block, seed, lr, device, progress),
                        by=("val_loss",), extend=int(tune_block.get("extend", 1)),
                        name=lambda arm: f"h={arm.h}", d_k=lambda arm: d_k_of(arm, block),
                        columns=lambda arm: dict(arm=arm.label, binding=arm.binding, h=arm.h, d_k=d_k_of(arm, block)))


def d_k_of(arm: Arm, block: dict[str, Any]) -> int:
    return int(arm.d_k or block["model"]["d_model"] // arm.h)


def task_name(binding: str) -> str:
    """The task in issue 17's metric names: the retrieval task and its binding."""
    return f"multi_retrieval_{binding}"


def _resolution(model: QueryTagger, task: MultiPositionRetrieval, held: Any, probe: dict[str, Any], seed: int,
                device: torch.device | str) -> tuple[torch.Tensor, list[Any]]:
    """``positional_resolution`` per slot of the heads' outputs at the query, the probe fitted on the seed's fit
    batch and read on ``held``; with the taps' caches of (fit, held)."""
    fit = task.train_batch(torch.Generator().manual_seed(probe["fit_seed"] + seed), probe["n_fit"]).to(device)
    caches = [run_with_taps(model, b, [WEIGHTS_TAP, OUT_TAP])[0] for b in (fit, held)]
    outs = [c[OUT_TAP][:, :, -1].reshape(c[OUT_TAP].shape[0], -1).cpu() for c in caches]    # (N, h*d_v)
    res = positional_resolution(outs[0], fit.y.cpu(), outs[1], held.y.cpu(), task.tgt_vocab,   # y: (N, M)
                                ridge=probe["ridge"])
    return res, caches


def _train_and_probe(arm: Arm, block: dict[str, Any], tc: TrainConfig, seed: int, device: torch.device | str,
                     progress: Callable[..., Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    task = make_task(arm, block["task"])
    model = build_model(arm, block["model"], task, seed)
    if progress:
        progress(f"C5 {arm.label} seed {seed}: training {tc.steps} steps", force=True)
    probe = block["probe"]
    val, test = validation_test_split(task, tc.eval_size, probe["n_eval"])
    result = train(model, task, tc, seed, progress=progress, heldout=val)
    held = test.to(device)
    tested = evaluate(model, task, batch=held, batch_size=tc.eval_batch_size, device=device)
    res, caches = _resolution(model, task, held, probe, seed, device)
    slots = held.meta["marked_positions"].cpu()                         # (N, M)
    row = {"binding": arm.binding, "M": arm.M, "h": arm.h, "d_k": model.cfg.d_k, "steps": result.steps_run,
           "long": arm.steps_factor > 1, "seed": seed, "lr": tc.lr if tc.schedule != "warmup" else math.nan,
           "exact_match": tested["exact_match"], "token_accuracy": tested["token_accuracy"],
           "loss": tested["loss"], "val_loss": result.final["loss"], "resolution": float(res.mean()),
           "resolution_per_slot": [round(float(r), 4) for r in res], "train_time_s": result.train_time_s}
    if not caches[1].names(WEIGHTS_TAP):   # a kernel on trial that returns no weights: where heads looked is unseen
        return {**row, **dict.fromkeys(WEIGHT_COLUMNS, math.nan)}, {}
    w = caches[1][WEIGHTS_TAP][:, :, -1].cpu()                           # (N, h, S): the query row
    ent = attention_entropy(w.unsqueeze(2))                             # (h,)
    on_slots = slot_weights(w, slots).sum(-1).mean(0)                   # (h,)
    top_share = top_slot_share(w, slots)                                 # (h,)
    shares = slot_shares(w, slots)                                       # (h, M)
    row.update({"entropy": float(ent.mean()), "entropy_per_head": [round(float(e), 4) for e in ent],
                "effective_positions": float(np.exp(ent).mean()), "mass_on_slots": float(on_slots.mean()),
                "top_slot_share": float(top_share.mean()),
                "top_slot_share_per_head": [round(float(t), 4) for t in top_share],
                "slot_share_per_head": [[round(float(v), 4) for v in head] for head in shares],
                "distinct_slots": distinct_majority_slots(shares, MAJORITY)})
    amap = {"weights": w[0].numpy(), "slots": slots[0].tolist()}
    return row, amap


def arm_seeds(arm: Arm, block: dict[str, Any], seeds: list[int], fast: bool = False) -> list[int]:
    """The seeds of one arm: the run's, except that the position binding's h = 1 and h = 4 arms (resolution_gain,
    distinct_slots, head_sharpness) take ``block["position"]["primary_seeds"]`` when that is more: the run's
    seeds continued one by one (they are consecutive: ``harness.settings.derive_seeds``). distinct_slots, a
    proportion of seeds, cannot pass at 3 (profiles.py); --fast (resolution_rises only) keeps the run's seeds."""
    n = int(block["position"].get("primary_seeds", 0))
    if fast or arm.binding != "position" or arm.h not in (1, 4) or arm.steps_factor != 1 or n <= len(seeds):
        return list(seeds)
    return list(seeds) + [seeds[-1] + i for i in range(1, n - len(seeds) + 1)]


def measure(arms: list[Arm], block: dict[str, Any], seeds: list[int], device: torch.device | str = "cpu",
            progress: Callable[..., Any] | None = None, fast: bool = False,
            lrs: dict[Arm, float] | None = None) -> Measurement:
    """Every arm on its seeds, at ``lrs[arm]`` when given (its tuned rate), else at the profile's rate."""
    rows, maps = [], {}
    lrs = lrs or {}
    for arm in arms:
        for i, seed in enumerate(arm_seeds(arm, block, seeds, fast)):
            row, amap = train_arm(arm, block, seed, device, progress, lr=lrs.get(arm))
            row["arm"] = arm.label
            rows.append(row)
            if i == 0 and arm.steps_factor == 1 and amap:
                maps[(arm.binding, arm.M, arm.h)] = amap
    return Measurement(pd.DataFrame(rows), maps)


def arms_for(block: dict[str, Any], fast: bool = False) -> list[Arm]:
    """The arms the criteria need. Token binding: M = 4 over its heads, h = 1 at every single_head_marked M, and
    the long single head when long_steps_factor > 1. Position binding: M = 4 over its heads and too_many_heads.
    Fast: the position binding's h = 1 and h = 4 only (all that ``resolution_rises`` needs at smoke)."""
    if fast:
        return [Arm("position", 4, 1), Arm("position", 4, 4)]
    tok, pos = block["token"], block["position"]
    arms = [Arm("token", 4, h) for h in tok["heads"]]
    arms += [Arm("token", M, 1) for M in tok["single_head_marked"] if Arm("token", M, 1) not in arms]
    if block.get("long_steps_factor", 0) > 1:
        arms.append(Arm("token", 4, 1, steps_factor=block["long_steps_factor"]))
    arms += [Arm("position", 4, h) for h in pos["heads"]]
    arms.append(Arm("position", 4, pos["too_many_heads"]))
    return arms


def select(df: pd.DataFrame, binding: str, M: int, h: int) -> pd.DataFrame:
    """Rows of one arm at the fixed budget (the long-budget arm excluded)."""
    return df[(df["binding"] == binding) & (df["M"] == M) & (df["h"] == h) & ~df["long"]]


def by_seed(df: pd.DataFrame, binding: str, M: int, h: int, col: str) -> np.ndarray:
    """One arm's per-seed values of ``col``, sorted by seed (so two arms of the same seeds pair up)."""
    return select(df, binding, M, h).sort_values("seed")[col].to_numpy(float)


def paired_by_seed(df: pd.DataFrame, binding: str, M: int, h_a: int, h_b: int, col: str
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Two arms' values of ``col`` on the seeds they share, sorted by seed (h = 4 runs ``primary_seeds``, h = 16
    the run's seeds)."""
    a, b = (select(df, binding, M, h).set_index("seed")[col] for h in (h_a, h_b))
    common = sorted(set(a.index) & set(b.index))
    return a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)


def resolution_slope(df: pd.DataFrame, heads: list[int], binding: str = "position", M: int = 4) -> dict[str, Any]:
    """resolution_rises's measurement (why per seed: docs/c5-resolution.md): one least-squares slope of resolution
    against log2 h per seed, over the seeds that ran every h, then a t interval across seeds
    (``stats.replicate_slope``); an exact point when every seed's slope is the same and no h's resolution is
    constant across seeds."""
    sel = pd.concat([select(df, binding, M, h) for h in heads])
    balanced = [s for s, g in sel.groupby("seed") if set(g["h"]) >= set(heads)]
    sel = sel[sel["seed"].isin(balanced)]
    fit = stats.replicate_slope(np.log2(sel["h"].to_numpy(float)), sel["resolution"].to_numpy(float),
                                sel["seed"].to_numpy(), transform="linear")
    ceiling = [h for h, g in sel.groupby("h") if g["resolution"].nunique() == 1]
    exact = (f"every one of the {fit.n} seeds has slope exactly {fit.slope:g} (its h arms give identical "
             "resolution), while each h's resolution varies across seeds (no arm at a ceiling)"
             if fit.n >= 2 and fit.stderr == 0 and not ceiling else "")
    return decision.from_fit(fit, exact=exact)


def entropy_band(M: int, n_keys: int) -> tuple[float, float]:
    """Entropies nearer ln M than to 0 (one position) or to ln n_keys (every position)."""
    return math.log(M) / 2.0, (math.log(M) + math.log(n_keys)) / 2.0


def entropy_position(entropy: np.ndarray, M: int, n_keys: int) -> np.ndarray:
    """H's place in ``entropy_band(M, n_keys)``: (2H - ln M) / ln S, 0 at its low edge and 1 at its high edge
    (a linear map of H, so the band [0, 1] decides exactly what [ln M / 2, (ln M + ln S) / 2] would)."""
    return (2.0 * np.asarray(entropy, float) - math.log(M)) / math.log(n_keys)


def exact_note(m: dict[str, Any]) -> str:
    """'; an exact point: why' when ``resolution_slope`` handed over an exact point, else ''."""
    return f"; an exact point: {m['exact']}" if m.get("exact") else ""


def rate_choices(tuning_runs: pd.DataFrame, tuned: dict[Arm, Tuned], df: pd.DataFrame, signs: dict[int, float],
                 column: str = "resolution") -> list[dict[str, Any]]:
    """The position arms' rate choices (``tuning.rate_choice_of``) for a comparison that reads ``column`` of the
    h in ``signs`` with those signs: each tuning run probes ``column`` as the evaluation does, so the firmness
    simulates a fresh choice of each arm's rate (issue 47)."""
    out = []
    for h, sign in signs.items():
        arm = Arm("position", 4, h)
        runs = tuning_runs[tuning_runs["arm"] == arm.label]
        out.append(rate_choice_of(f"C5/{arm.label}", tuned[arm], runs, select(df, "position", 4, h), column, sign))
    return out


def means_by_h(df: pd.DataFrame, col: str, heads: list[int], binding: str, M: int = 4) -> str:
    return f"{binding} binding, M={M}, mean {col} by h: " + ", ".join(
        f"h={h} {select(df, binding, M, h)[col].mean():.3f}" for h in heads)


def selecting_fraction(single: pd.DataFrame) -> float:
    """The fraction of the rows (runs) whose heads put > SELECTING_SHARE of their slot mass on one slot; NaN
    without the column or rows."""
    if "top_slot_share" not in single or single.empty or single["top_slot_share"].isna().all():
        return math.nan
    return float((single["top_slot_share"] > SELECTING_SHARE).mean())


def by_h(df: pd.DataFrame, M: int = 4) -> pd.DataFrame:
    return df[(df["M"] == M) & ~df["long"]]
