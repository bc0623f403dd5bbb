"""C5: multi-head attention recovers the resolution lost to averaging (NOTE-011, claim C5, strength moderate).

The paper names the cost of attention, "reduced effective resolution due to averaging attention-weighted
positions", and answers it with several heads; Table 3 (A) ablates h but never isolates resolution. Issue 7
isolates it on multi-position retrieval (``harness.tasks.MultiPositionRetrieval``): one query position must
return the tokens of M slots at once, so one query gathers M positions. Model: one attention layer + FFN
(``EncoderTagger``, one layer), d_model 64 fixed, h varied, d_k = d_v = d_model / h. Every target sits at the
query, so the task is drawn as a classify task (y: the query's M targets) and the model trained as a
``QueryTagger``: the harness's seeded ``encoder_tagger``, its last layer computed at the query only (the other
positions enter it as keys and values; their outputs were never read). Same weights, and at the query the same
function up to float rounding; a training step costs about half of what the full tagger's did on CPU.

Two bindings of the task, because what averaging costs depends on what tells a gathered token's slot:

* ``token`` (issue 7's task): marks 1..M at random positions, fused with the token in one id. The value vector
  of a marked position carries its own slot, so one head can average the M positions and lose nothing: a
  calibration run measured a linear probe reading all M tokens back from a single head's output (resolution
  0.99 at h = 1, M = 4) while its exact match was 0.45-0.65. There multi-head can only help sample efficiency.
* ``position``: slot j is a fixed position and tokens carry no mark. Only *where* attention looked says which
  slot a token fills; an average of the M values (token + positional encoding, added) does not bind token to
  slot. This is where resolution can be lost to averaging, so the resolution criteria are tested here (this
  split was decided after the calibration above showed the token binding has no resolution to lose).

Framing (issue 7): a single head is not incapable: on the token binding at M = 4 it reaches about 0.89 exact
match with five times the steps. So the claim is about resolution and sample efficiency at a fixed budget, not
about what one head can represent in the limit. The standard profile re-measures it (``exact_match_h1_M4_long``).

Criteria (``CRITERIA``, declared before any training; the harness decides them, Holm over the counted ones).
The h arms of one seed start from identical weights (W^Q, W^K, W^V, W^O are d_model x d_model whatever h) and
see identical batches, so they are paired by seed. The margins are the issue's own (a direction, margin 0),
except resolution's, which needs a size for a fault to refute it; issue 17 redesigns these criteria.

(a) ``exact_match`` (token binding, issue 7's calibration): at M = 4 and a fixed budget, h = 4's held-out exact
    match is above h = 1's (superiority, margin 0).
(b) ``single_head_entropy`` (token binding, where averaging is viable): a single head spreads its mass over the
    M targets: its query-row entropy H is nearer ln M than either alternative (0: one position; ln S: all S
    positions), i.e. within [ln M / 2, (ln M + ln S) / 2] at every M; handed over as (2H - ln M) / ln S, H's
    place in that band, so one band [0, 1] states it at every M.
    ``head_sharpness`` (position binding): the heads of the h = 4 model are sharper than the single head: mean
    per-head entropy below h = 1's (superiority of H(h=1) - H(h=4), margin 0).
    ``resolution_rises`` (position binding, fast): effective resolution (below) rises with h: the least-squares
    slope of per-seed resolution against log2 h is above 0.05 (a fifth of a slot per doubling at M = 4).
    Reported, not counted (context on the token binding, where nothing is lost to averaging):
    ``token_head_sharpness`` and ``token_resolution_rises``, the same two rules there.
(c) ``too_many_heads`` (position binding, reported, not counted): Table 3 (A)'s shape at d_model 64: h = 16
    (d_k = 4) loses quality against h = 4: higher held-out loss (exact match, issue 7's metric, reaches 1.000
    on every seed at h = 16, a ceiling with no spread to test; it stays in the detail). Not counted: C5 says heads recover resolution; that too many
    heads cost quality again is the ablation bounding it, not the claim, and issue 7 expects it may be
    inconclusive at this scale.

Effective resolution (``harness.resolution.positional_resolution``): for each of the M slots, the
base-rate-corrected accuracy with which a linear probe reads that slot's token from the attention output at
the query (every head's output concatenated, before W^O), fitted on training draws and scored on held-out
examples; the mean over slots (1: all M resolved, 0: none; M times it: positions resolved). Why this is
resolution: in a one-layer model the attention output is the only route from the gathered positions to the
query. A head that averages M positions superposes their values in one d_v-dimensional vector, so a token is
read back through crosstalk from the others, and when nothing in the value says which slot it came from, not
at all; heads that keep the positions apart (each attending its own slot) leave every token linearly
recoverable. The probe counts how many gathered positions survive as distinct tokens; entropy only says how
spread the weights are. A linear probe, not the model's own FFN, so the measure is of what attention delivered.

Two states of the single head (measured after the baseline, on issue 10's master-seed reruns; nothing about
the criteria changed). On the position binding a single head trained at M = 4 does not weight the M slots evenly.
On 6 of 9 seeds it is diffuse: its most-attended slot holds ~0.72-0.75 of its slot mass (``top_slot_share``;
1/M would be even), entropy ~1.1 nats, loss ~1.5. On 3 of 9 it selects one slot: top-slot share ~1.0, entropy
0.1-0.3 nats, loss ~2.1. It stays there at twice the steps: a worse local optimum, not a model still training.
Both states resolve about one slot in four (resolution 0.24-0.30), so ``resolution_rises`` holds either way. On
the token binding, where an even average loses nothing, the single head does average (top-slot share ~0.32).
Where averaging would cost resolution, a single head does not average; it favours one slot and loses the
others. The selecting state is sharper than the multi-head model's heads (0.26-0.76 nats). So
``head_sharpness`` (the issue's entropy test) is true on average (h = 1: 0.79, h = 4: 0.47 nats over those 9
seeds) but weak per run: at smoke's 3 seeds it is a draw (its firmness in the report says so), and the standard
and full profiles run 25 seeds for these two arms (``position.sharpness_seeds``). The criterion is kept as
declared. Its detail and the metric ``single_head_selecting_fraction_position`` count the
selecting single heads (top-slot share > ``SELECTING_SHARE``), so a reader sees which state a run drew.

Faults (issue 10): ``single_head`` (every head uses head 0's projections: h is in effect 1) and
``uniform_attention`` (every head averages every position) both take away what extra heads add; the fast
criterion ``resolution_rises`` catches both (tests/test_claims_sensitivity_c5.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from harness import decision, stats  # noqa: E402
from harness.probes import attention_entropy, run_with_taps  # noqa: E402
from harness.resolution import positional_resolution  # noqa: E402
from harness.tasks import MultiPositionRetrieval  # noqa: E402
from harness.training import TrainConfig, build_for_task, torch_threads, train  # noqa: E402
from model import EncoderTagger, ModelConfig  # noqa: E402

pytestmark = pytest.mark.claim("C5")

CLAIM_ID = "C5"
WEIGHTS_TAP = "encoder.layers.0.self_attn.weights"
OUT_TAP = "encoder.layers.0.self_attn.out"
BINDINGS = ("token", "position")
SELECTING_SHARE = 0.9      # a head whose most-attended slot holds > 90% of its slot mass selects one slot (measured:
                           # selecting single heads ~1.0, diffuse ones 0.71-0.75, multi-head heads 0.91-0.99)


_DIRECTION = "0: the note predicts a direction, not a size (issue 17 sets sizes)"
_PER_SEED = "per-seed values, arms paired by seed"
_RESOLUTION = decision.band(0.05, None, reason="0.05 of the M slots per doubling of h (a fifth of a slot at M = 4): "
                                               "what a head that adds nothing cannot reach")
_SHARPER = decision.superiority(0.0, reason=_DIRECTION, paired=True)
# name -> the criterion's declaration (rule, prediction, metric, arms, counts, fast); "fast" ones run in --fast
CRITERIA: dict[str, dict[str, Any]] = {
    "resolution_rises": dict(
        rule=_RESOLUTION, fast=True, metric="slope of per-seed effective resolution against log2 h",
        prediction="position binding, M = 4: effective resolution (base-rate-corrected linear-probe decodability "
                   "of each slot's token from the attention output at the query) rises with h"),
    "exact_match": dict(
        rule=decision.superiority(0.0, reason=_DIRECTION, paired=True), arms=("h = 4", "h = 1"),
        metric="held-out exact match, " + _PER_SEED,
        prediction="token binding (issue 7's task), M = 4, fixed step budget: h = 4 has higher held-out exact "
                   "match than h = 1"),
    "single_head_entropy": dict(
        rule=decision.band(0.0, 1.0, reason="the band's edges: entropy nearer ln M than 0 (one position) or ln S "
                                            "(all positions)"),
        metric="h = 1 query-row entropy's place in [ln M / 2, (ln M + ln S) / 2], (2H - ln M) / ln S, per seed",
        prediction="token binding: a single head spreads its mass over the M slots: query-row entropy nearer ln M "
                   "than 0 (one position) or ln S (all positions), at every M"),
    "head_sharpness": dict(
        rule=_SHARPER, arms=("h = 1", "h = 4"), metric="mean per-head query-row entropy (nats), " + _PER_SEED,
        prediction="position binding, M = 4: the h = 4 model's heads are sharper than the single head: mean "
                   "per-head entropy below h = 1's"),
    "token_head_sharpness": dict(
        rule=_SHARPER, arms=("h = 1", "h = 4"), counts=False,
        metric="mean per-head query-row entropy (nats), " + _PER_SEED,
        prediction="context: the same sharpness rule on the token binding, where averaging loses nothing"),
    "token_resolution_rises": dict(
        rule=_RESOLUTION, counts=False, metric="slope of per-seed effective resolution against log2 h",
        prediction="context: the same resolution rule on the token binding, where a single head's average still "
                   "carries each token's slot"),
    "too_many_heads": dict(
        rule=decision.superiority(0.0, reason=_DIRECTION, paired=True), arms=("h = too_many_heads", "h = 4"),
        counts=False, metric="held-out loss (exact match reaches its 1.000 ceiling), " + _PER_SEED,
        prediction="position binding, M = 4: Table 3 (A) shape: h = too_many_heads (d_k = 64 / h) loses quality "
                   "against h = 4: higher held-out loss"),
}


# ============================================================================================ measure
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


class QueryTagger(EncoderTagger):
    """``EncoderTagger(pool="last")`` whose ``forward`` computes the last layer at the query (last position) only.

    Every target of the task sits at the query, so the last layer's outputs at the other positions are never
    read: those positions enter it as keys and values only. Same modules, names (taps) and parameters as the
    harness's ``encoder_tagger``, and at the query the same function (tests/test_claims_sensitivity_c5.py);
    a training step costs about half as much (the FFN, W^Q, W^O and the head run on 1 row of 17). ``features``
    is the base one (every position). A pad mask is not supported: the task never pads."""

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        if pad_mask is not None or self.pool != "last":
            raise ValueError("QueryTagger: pool='last' and no pad mask only")
        h = self.embed(x)
        *first, last = self.encoder.layers
        for layer in first:
            h = layer(h)
        q = h[:, -1:]
        if last.norm_first:
            kv = last.norm1(h)
            q = q + last.drop(last.self_attn(kv[:, -1:], kv))
            q = q + last.drop(last.ff(last.norm2(q)))
        else:
            q = last.norm1(q + last.drop(last.self_attn(q, h)))
            q = last.norm2(q + last.drop(last.ff(q)))
        if self.encoder.norm is not None:
            q = self.encoder.norm(q)
        return self.head(q[:, 0])


def build_model(arm: Arm, model_block: dict[str, Any], task: MultiPositionRetrieval, seed: int) -> QueryTagger:
    """The harness's seeded ``encoder_tagger`` for the arm (``build_for_task``: pooled at the query for the
    classify task), its weights loaded into a ``QueryTagger``."""
    base = build_for_task("encoder_tagger", task, model_config(arm, model_block), seed)
    model = QueryTagger(base.cfg, base.n_classes, pool=base.pool)
    model.load_state_dict(base.state_dict())
    return model


def train_arm(arm: Arm, budget: dict[str, Any], seed: int, device: torch.device | str = "cpu",
              progress: Callable[..., Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train one (arm, seed), then measure through the taps: entropy of the query row, the mass it puts on the
    slots, and the resolution probe. Returns (row, attention map of held-out example 0). The whole arm, probe
    included, runs on the train block's ``num_threads`` (1 at every profile: on a shared 2-core box a second
    thread only spins; the probe on the default two threads cost as much as a third of the training)."""
    tc = TrainConfig.from_dict({**budget[arm.binding]["train"], "device": str(device)})
    tc = tc.replace(steps=tc.steps * arm.steps_factor)
    with torch_threads(tc.num_threads):
        return _train_and_probe(arm, budget, tc, seed, device, progress)


def _train_and_probe(arm: Arm, budget: dict[str, Any], tc: TrainConfig, seed: int, device: torch.device | str,
                     progress: Callable[..., Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    task = make_task(arm, budget["task"])
    model = build_model(arm, budget["model"], task, seed)
    if progress:
        progress(f"C5 {arm.label} seed {seed}: training {tc.steps} steps", force=True)
    result = train(model, task, tc, seed, progress=progress)
    probe = budget["probe"]
    held = task.heldout(probe["n_eval"]).to(device)
    fit = task.train_batch(torch.Generator().manual_seed(probe["fit_seed"] + seed), probe["n_fit"]).to(device)
    caches = [run_with_taps(model, b, [WEIGHTS_TAP, OUT_TAP])[0] for b in (fit, held)]
    w = caches[1][WEIGHTS_TAP][:, :, -1].cpu()                           # (N, h, S): the query row
    slots = held.meta["marked_positions"].cpu()                         # (N, M)
    ent = attention_entropy(w.unsqueeze(2))                             # (h,)
    on_slots = w.gather(2, slots[:, None, :].expand(-1, w.shape[1], -1)).sum(-1).mean(0)     # (h,)
    top_share = top_slot_share(w, slots)                                 # (h,)
    outs = [c[OUT_TAP][:, :, -1].reshape(c[OUT_TAP].shape[0], -1).cpu() for c in caches]    # (N, h*d_v)
    res = positional_resolution(outs[0], fit.y.cpu(), outs[1], held.y.cpu(), task.tgt_vocab,   # y: (N, M)
                                ridge=probe["ridge"])
    row = {"binding": arm.binding, "M": arm.M, "h": arm.h, "d_k": model.cfg.d_k, "steps": result.steps_run,
           "long": arm.steps_factor > 1, "seed": seed,
           "exact_match": result.final["exact_match"], "token_accuracy": result.final["token_accuracy"],
           "loss": result.final["loss"], "entropy": float(ent.mean()),
           "entropy_per_head": [round(float(e), 4) for e in ent], "effective_positions": float(np.exp(ent).mean()),
           "mass_on_slots": float(on_slots.mean()), "top_slot_share": float(top_share.mean()),
           "top_slot_share_per_head": [round(float(t), 4) for t in top_share], "resolution": float(res.mean()),
           "resolution_per_slot": [round(float(r), 4) for r in res], "train_time_s": result.train_time_s}
    amap = {"weights": w[0].numpy(), "slots": slots[0].tolist()}
    return row, amap


def top_slot_share(weights: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
    """Per head: the share of the query's mass on the M slots that its most-attended slot holds, mean over
    examples. ``weights`` (N, h, S): the query row; ``slots`` (N, M). 1/M: the slots weighted evenly (a head that
    averages them); 1: one slot only (a head that selects). C5: tells a single head's two states apart (module
    docstring): a diffuse and a selecting single head both resolve one slot in four, at very different entropy."""
    on = weights.gather(2, slots[:, None, :].expand(-1, weights.shape[1], -1))          # (N, h, M)
    return (on.max(-1).values / on.sum(-1).clamp_min(1e-12)).mean(0)


def arm_seeds(arm: Arm, budget: dict[str, Any], seeds: list[int], fast: bool = False) -> list[int]:
    """The seeds of one arm: the run's, except that the position binding's h = 1 and h = 4 arms (head_sharpness)
    take ``budget["position"]["sharpness_seeds"]`` when that is more: the run's seeds continued one by one (they
    are consecutive: ``harness.plugin.derive_seeds``). head_sharpness's power needs them (module docstring);
    --fast (resolution_rises only) keeps the run's seeds."""
    n = int(budget["position"].get("sharpness_seeds", 0))
    if fast or arm.binding != "position" or arm.h not in (1, 4) or arm.steps_factor != 1 or n <= len(seeds):
        return list(seeds)
    return list(seeds) + [seeds[-1] + i for i in range(1, n - len(seeds) + 1)]


def measure(arms: list[Arm], budget: dict[str, Any], seeds: list[int], device: torch.device | str = "cpu",
            progress: Callable[..., Any] | None = None, fast: bool = False) -> Measurement:
    rows, maps = [], {}
    for arm in arms:
        for i, seed in enumerate(arm_seeds(arm, budget, seeds, fast)):
            row, amap = train_arm(arm, budget, seed, device, progress)
            row["arm"] = arm.label
            rows.append(row)
            if i == 0 and arm.steps_factor == 1:
                maps[(arm.binding, arm.M, arm.h)] = amap
    return Measurement(pd.DataFrame(rows), maps)


def arms_for(budget: dict[str, Any], fast: bool = False) -> list[Arm]:
    """The arms the criteria need. Token binding: M = 4 over its heads, h = 1 at every single_head_marked M, and
    the long single head when long_steps_factor > 1. Position binding: M = 4 over its heads and too_many_heads.
    Fast: the position binding's h = 1 and h = 4 only (all that ``resolution_rises`` needs at smoke)."""
    if fast:
        return [Arm("position", 4, 1), Arm("position", 4, 4)]
    tok, pos = budget["token"], budget["position"]
    arms = [Arm("token", 4, h) for h in tok["heads"]]
    arms += [Arm("token", M, 1) for M in tok["single_head_marked"] if Arm("token", M, 1) not in arms]
    if budget.get("long_steps_factor", 0) > 1:
        arms.append(Arm("token", 4, 1, steps_factor=budget["long_steps_factor"]))
    arms += [Arm("position", 4, h) for h in pos["heads"]]
    arms.append(Arm("position", 4, pos["too_many_heads"]))
    return arms


# ============================================================================================ evaluate
def select(df: pd.DataFrame, binding: str, M: int, h: int) -> pd.DataFrame:
    """Rows of one arm at the fixed budget (the long-budget arm excluded)."""
    return df[(df["binding"] == binding) & (df["M"] == M) & (df["h"] == h) & ~df["long"]]


def by_seed(df: pd.DataFrame, binding: str, M: int, h: int, col: str) -> np.ndarray:
    """One arm's per-seed values of ``col``, sorted by seed (so two arms of the same seeds pair up)."""
    return select(df, binding, M, h).sort_values("seed")[col].to_numpy(float)


def entropy_band(M: int, n_keys: int) -> tuple[float, float]:
    """Entropies nearer ln M than to 0 (one position) or to ln n_keys (every position)."""
    return math.log(M) / 2.0, (math.log(M) + math.log(n_keys)) / 2.0


def entropy_position(entropy: np.ndarray, M: int, n_keys: int) -> np.ndarray:
    """H's place in ``entropy_band(M, n_keys)``: (2H - ln M) / ln S, 0 at its low edge and 1 at its high edge
    (a linear map of H, so the band [0, 1] decides exactly what [ln M / 2, (ln M + ln S) / 2] would)."""
    return (2.0 * np.asarray(entropy, float) - math.log(M)) / math.log(n_keys)


def resolution_fit(df: pd.DataFrame, heads: list[int], binding: str = "position", M: int = 4) -> stats.SlopeFit:
    """Least-squares slope of per-seed resolution against log2 h (resolution gained per doubling of h)."""
    sel = pd.concat([select(df, binding, M, h) for h in heads])
    return stats.linear_slope(np.log2(sel["h"].to_numpy(float)), sel["resolution"].to_numpy(float))


def means_by_h(df: pd.DataFrame, col: str, heads: list[int], binding: str, M: int = 4) -> str:
    return f"{binding} binding, M={M}, mean {col} by h: " + ", ".join(
        f"h={h} {select(df, binding, M, h)[col].mean():.3f}" for h in heads)


def selecting_fraction(single: pd.DataFrame) -> float:
    """The fraction of the rows (runs) whose heads put > SELECTING_SHARE of their slot mass on one slot; NaN
    without the column or rows."""
    if "top_slot_share" not in single or single.empty:
        return math.nan
    return float((single["top_slot_share"] > SELECTING_SHARE).mean())


def describe_single_heads(single: pd.DataFrame) -> str:
    """'k/n select one slot (...)' with each run's entropy and top-slot share: head_sharpness's detail and the
    report's note on the single head's two states (module docstring)."""
    k = round(selecting_fraction(single) * len(single))
    return (f"{k}/{len(single)} select one slot (top-slot share > {SELECTING_SHARE}); entropy per seed "
            + ", ".join(f"{e:.2f}" for e in single["entropy"]) + " nats, top-slot share per seed "
            + ", ".join(f"{t:.2f}" for t in single["top_slot_share"]))


# ============================================================================================ figures
def _by_h(df: pd.DataFrame, M: int = 4) -> pd.DataFrame:
    return df[(df["M"] == M) & ~df["long"]]


def figure_exact_match(df: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for binding, g in _by_h(df).groupby("binding"):
        ax.scatter(g["h"], g["exact_match"], alpha=0.35, s=14)
        m = g.groupby("h")["exact_match"].mean()
        ax.plot(m.index, m.values, marker="o", label=f"{binding} binding, M=4")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("heads h (d_model 64 fixed, d_k = 64 / h)")
    ax.set_ylabel("held-out exact match")
    ax.set_title("C5: exact match vs h at a fixed step budget", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def figure_resolution(df: pd.DataFrame):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
    for binding, g in _by_h(df).groupby("binding"):
        for a, col in ((ax, "resolution"), (ax2, "entropy")):
            a.scatter(g["h"], g[col], alpha=0.35, s=14)
            m = g.groupby("h")[col].mean()
            a.plot(m.index, m.values, marker="o", label=f"{binding} binding")
    ax2.axhline(math.log(4), color="grey", ls=":", lw=1, label="ln M")
    for a in (ax, ax2):
        a.set_xscale("log", base=2)
        a.set_xlabel("heads h (M = 4)")
        a.legend(fontsize=7)
    ax.set_ylabel("fraction of the M slots resolved")
    ax.set_title("C5: effective resolution (linear probe) vs h", fontsize=9)
    ax2.set_ylabel("per-head query entropy (nats)")
    ax2.set_title("per-head attention entropy vs h", fontsize=9)
    fig.tight_layout()
    return fig


def figure_attention_maps(maps: dict[tuple[str, int, int], dict[str, Any]], M: int = 4, heads=(1, 4)):
    shown = [(b, h) for b in BINDINGS for h in heads if (b, M, h) in maps]
    rows = sum(maps[(b, M, h)]["weights"].shape[0] for b, h in shown)
    fig, axes = plt.subplots(len(shown), 1, figsize=(7, 1.0 + 0.5 * rows + 0.5 * len(shown)), squeeze=False)
    for ax, (b, h) in zip(axes[:, 0], shown):
        m = maps[(b, M, h)]
        w = m["weights"]
        im = ax.imshow(w, aspect="auto", cmap="viridis", vmin=0, vmax=1)
        for p in m["slots"]:
            ax.axvline(p, color="red", lw=0.8, alpha=0.7)
        ax.set_yticks(range(w.shape[0]), [f"head {i}" for i in range(w.shape[0])], fontsize=7)
        ax.set_title(f"{b} binding, h={h}: the query's attention over {w.shape[1]} positions "
                     f"(red: the {M} slots)", fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.02)
    axes[-1, 0].set_xlabel("key position (last: the query itself)")
    fig.tight_layout()
    return fig


# ============================================================================================ the claim
def test_c5_multihead_resolution(evidence, profile, device, seeds, progress, fast):
    budget = profile.claim(CLAIM_ID)
    ev = evidence
    ev.claim(CLAIM_ID, title="Multi-head attention recovers the resolution lost to averaging",
             statement="\u201creduced effective resolution due to averaging attention-weighted positions\u201d, "
                       "which is what multi-head attention exists to counteract",
             strength="moderate", kind="claim",
             limitation="Argued and ablated (Table 3 rows A), not isolated analytically; 2017 translation "
                        "benchmarks. Here: one synthetic retrieval task in two bindings, one layer, d_model 64.")
    n_keys = budget["task"]["seq_len"] + 1
    Ms = budget["token"]["single_head_marked"]
    pos_heads = [1, 4] if fast else budget["position"]["heads"]
    many = budget["position"]["too_many_heads"]
    n_sharp = len(arm_seeds(Arm("position", 4, 1), budget, seeds))
    # ---- criteria, before any measurement
    how = {"exact_match": f"{len(seeds)} seeds", "head_sharpness": f"{n_sharp} seeds per arm",
           "resolution_rises": f"h in {pos_heads}; stats.linear_slope over per-seed points",
           "token_resolution_rises": f"h in {budget['token']['heads']}; stats.linear_slope over per-seed points",
           "single_head_entropy": f"M in {Ms}, S = {n_keys} positions", "too_many_heads": f"h = {many}"}
    c = {name: ev.criterion(name, how=how.get(name, ""), **spec) for name, spec in CRITERIA.items()
         if spec.get("fast") or not fast}
    ev.gate("resolution_h4", direction="higher", tolerance=0.2)
    if not fast:
        ev.gate("exact_match_h4_M4", direction="higher", tolerance=0.15)

    # ---- measure
    m = measure(arms_for(budget, fast), budget, seeds, device, progress, fast)
    df = m.runs

    # ---- hand over per-seed values and slopes; the harness decides
    c["resolution_rises"].fit(resolution_fit(df, pos_heads), detail=means_by_h(df, "resolution", pos_heads, "position"))
    if not fast:
        em = lambda binding, h: by_seed(df, binding, 4, h, "exact_match")  # noqa: E731
        ent = lambda binding, h: by_seed(df, binding, 4, h, "entropy")  # noqa: E731
        c["exact_match"].compare(em("token", 4), em("token", 1), detail=means_by_h(df, "exact_match", [1, 4], "token"))
        c["single_head_entropy"].sample_each(
            {f"M={M}": entropy_position(by_seed(df, "token", M, 1, "entropy"), M, n_keys) for M in Ms},
            detail="; ".join(f"M={M}: H per seed "
                             + ", ".join(f"{e:.3f}" for e in by_seed(df, "token", M, 1, "entropy"))
                             + " band [{:.3f}, {:.3f}]".format(*entropy_band(M, n_keys)) for M in Ms))
        single_pos = select(df, "position", 4, 1)
        c["head_sharpness"].compare(ent("position", 1), ent("position", 4),
                                    detail=means_by_h(df, "entropy", [1, 4], "position") + "; single heads: "
                                    + describe_single_heads(single_pos))
        c["token_head_sharpness"].compare(ent("token", 1), ent("token", 4),
                                          detail=means_by_h(df, "entropy", [1, 4], "token"))
        c["token_resolution_rises"].fit(resolution_fit(df, budget["token"]["heads"], "token"),
                                        detail=means_by_h(df, "resolution", budget["token"]["heads"], "token"))
        c["too_many_heads"].compare(by_seed(df, "position", 4, many, "loss"), by_seed(df, "position", 4, 4, "loss"),
                                    detail=means_by_h(df, "loss", [4, many], "position") + "; "
                                    + means_by_h(df, "exact_match", [4, many], "position"))

    # metrics named by issue 7: exact match and entropy on the (token) task; resolution where it can be
    # lost (position binding). The other binding's values carry a suffix.
    for h in (1, 4):
        pos = select(df, "position", 4, h)
        ev.metric(f"resolution_h{h}", float(pos["resolution"].mean()))
        if not fast:
            tok = select(df, "token", 4, h)
            ev.metric(f"exact_match_h{h}_M4", float(tok["exact_match"].mean()))
            ev.metric(f"entropy_per_head_h{h}_M4", float(tok["entropy"].mean()))
            ev.metric(f"resolution_h{h}_token", float(tok["resolution"].mean()))
        ev.metric(f"exact_match_h{h}_M4_position", float(pos["exact_match"].mean()))
        ev.metric(f"entropy_per_head_h{h}_M4_position", float(pos["entropy"].mean()))
    single_pos = select(df, "position", 4, 1)
    ev.metric("single_head_selecting_fraction_position", selecting_fraction(single_pos))
    long = df[df["long"]]
    if not long.empty:
        ev.metric("exact_match_h1_M4_long", float(long["exact_match"].mean()))
    ev.table("runs", df)
    cols = ["exact_match", "token_accuracy", "loss", "entropy", "effective_positions", "mass_on_slots",
            "top_slot_share", "resolution"]
    ev.table("summary", df.groupby(["arm", "binding", "M", "h", "d_k", "steps"], sort=False)[cols].mean()
             .reset_index())
    ev.figure("exact_match_vs_h", figure_exact_match(df))
    ev.figure("attention_maps_h1_vs_h4", figure_attention_maps(m.maps))
    ev.figure("resolution_vs_h", figure_resolution(df))
    ev.headline("resolution_h4")
    if not fast:
        tok_steps = budget["token"]["train"]["steps"]
        h1 = select(df, "token", 4, 1)["exact_match"].mean()
        ev.note("Framing (issue 7): a single head is not incapable; the claim is about resolution and sample "
                f"efficiency at a fixed budget ({tok_steps} steps of the paper's warmup schedule on the token "
                "binding). " + (
                    f"Measured here: h = 1 at M = 4 with {budget['long_steps_factor']}x the steps reaches exact "
                    f"match {long['exact_match'].mean():.2f} (vs {h1:.2f} at the budget)." if not long.empty else
                    "Issue 7 measured about 0.89 exact match for h = 1 at M = 4 with five times the steps; this "
                    "profile does not re-measure it (the standard profile does: exact_match_h1_M4_long)."))
    if not fast and not single_pos.empty:
        ev.note(f"Single heads on the position binding: {describe_single_heads(single_pos)} (1/M = 0.25 would "
                "weight the slots evenly). Where averaging would lose which slot a token came from, a single "
                "head does not average: diffuse or selecting, it favours one slot and resolves about one in four. "
                "A selecting "
                "single head is as sharp as the multi-head model's heads, so head_sharpness (the issue's entropy "
                "test) is weak per run: at a few seeds it is a draw, as its firmness shows.")
    ev.note("Two bindings: on the token binding (issue 7's task) each marked token's id carries its slot, so "
            "a single head's average loses nothing (compare resolution_h1_token with resolution_h1): any gain "
            "from heads there is sample efficiency. On the position binding only where attention looked says "
            "which slot a token fills: that is where averaging can cost resolution, and where the resolution "
            "criteria are tested.")
    ev.note("Resolution = mean over the M slots of the base-rate-corrected accuracy of a ridge linear probe "
            "reading the slot's token from the concatenated head outputs at the query (fit on training draws, "
            "scored on held-out examples); the module docstring says why it measures resolution. entropy = "
            f"query-row attention entropy over all {n_keys} positions (nats), mean over heads; "
            "effective_positions = exp(entropy); mass_on_slots = the query's total weight on the M slots; "
            "top_slot_share = the share of that weight on the most-attended slot (1/M: averaging, 1: selecting).")
