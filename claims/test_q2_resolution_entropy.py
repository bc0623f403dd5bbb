"""Q2: is "reduced effective resolution due to averaging" what the entropy-collapse and attention-sink
literature measures? (NOTE-011, open question 2.)

The note names a cost, resolution lost to averaging, that its record does not otherwise discuss, and asks
whether two later literatures measure it: attention entropy (Zhai et al. 2023: mean entropy of the attention
rows, averaged over queries, heads and examples; its collapse is a training instability) and attention sinks
(Gu et al. 2024: the importance of position k is the mean attention it receives; a head is a sink head when the
first token's importance exceeds 0.3). Issue 11: over the training of a small decoder-only model
(``model.DecoderLM``) on a synthetic language (``harness.data.tasks.MarkovLM``: a fixed random Markov chain whose
second half repeats the first, so some heads must look at the previous token and some back half a sequence),
measure at checkpoints, per head:

* ``entropy``: ``harness.measure.probes.attention_entropy`` (nats, mean over query rows and examples);
* ``sink``: ``harness.measure.probes.sink_mass`` at position 0 (the BOS token): Gu et al.'s first-token importance;
  ``sink_fraction`` = fraction of heads above 0.3;
* ``resolution``: C5's metric (``harness.measure.resolution``) for a head with no task-given targets
  (``head_resolution``): the base-rate-corrected accuracy with which a linear probe reads the token at the
  head's most-attended key from the head's own output (queries t >= 1; fitted on training draws, scored on
  held-out text). 1: the head's output names what it looked at; 0: it does not, either because it blurred
  several positions together or because it always looks at the same token (a sink on BOS resolves nothing).

Prediction, stated before measuring (issue 16's protocol): if the answer is yes, the literature's two measures
are readings of the same quantity, so among heads at the same point of training each tracks lost resolution.
Both criteria are ``band(None, -0.5, null=0)`` on per-seed Spearman rhos: 'answered no' needs a rho wholly above
0 (no relation or the opposite one); a negative rho weaker than -0.5 is not shown either way. The seed is the
unit (the points within a seed share a trajectory, so a pooled p-value would overstate them); the rhos are computed
on values minus their checkpoint's mean across heads. Uncentred, a trend that all three measures share over training decides the rho (sink and resolution
both rise as the model learns, with a within-checkpoint rho of 0.13 in the standard run of e3f5c13): that is the
model learning, not one measure reading the other.

(1) ``entropy_tracks_resolution`` (the entropy-collapse half): higher entropy (more averaging) goes with lower
    resolution: per seed, checkpoint-centred Spearman rho(entropy, resolution) over that seed's (checkpoint x head)
    points; the interval of the mean rho lies below -0.5 (yes), or wholly above 0 (no: no relation, or the other
    sign); between, not shown.
(2) ``sink_tracks_resolution`` (the attention-sink half): more sink mass goes with lower resolution, the same
    way. -0.5 is the conventional "strong" |rho|: a weaker relation would not make the two one quantity.

Both are **reported**, not counted (issue 54), because the "yes" each predicts is partly built into the resolution
metric. ``head_resolution`` reads, from a head's own output, the token at that head's own most-attended key (the
argmax of its weights), so the weights choose the probe's target. The lower a head's entropy H, the more its output
is that one key's value vector (its weight is at least e^-H; at H = 0, all of it), read back with less crosstalk: low
entropy goes with high resolution by the metric's construction, before any literature is asked. A head whose
most-attended key is BOS (position 0) on every query row has a target that never varies, which ``decodability``
scores 0 by definition (base rate 1): high sink mass goes with low resolution by construction too. A strong
negative rho is thus partly the metric agreeing with itself, and cannot count as evidence that the two
literatures measure lost resolution. (No fault in model.faults turns either relation around either: under
``uniform_attention`` and ``single_head`` every head is the same, so there is no rho to take.) So Q2 counts nothing
and reads not tested here, as R2 does; a note answers each half alone from these two (the committed smoke baseline:
entropy half yes, rho -0.64; sink half open, 0.05 [-0.28, 0.38]), and the same two relations uncentred
(``*_over_training``) are reported beside them.
Sink heads have low entropy, so (1) and (2) pull against each other unless sinks are rare: that tension is what the
question is about. The relation between the two literatures' measures is the metric ``q2_entropy_sink_corr``
(mean over seeds of Spearman rho(entropy, sink) over checkpoints and heads).

No fault in model.faults is about Q2 (issue 10): under ``--fast`` the module skips.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest
import torch

from harness.record import decision
from harness.measure import stats
from harness.measure.probes import attention_entropy, run_with_taps, sink_mass
from harness.measure.resolution import head_resolution
from harness.data import make_task
from harness.data.tasks import Batch, Task
from harness.report.plots import plt
from harness.train.loop import TrainConfig, build_for_task, train
from model import ModelConfig

pytestmark = pytest.mark.claim("Q2")

CLAIM_ID = "Q2"
SINK_THRESHOLD = 0.3          # Gu et al. 2024: a sink head's first-token importance exceeds epsilon = 0.3
STRONG_RHO = -0.5             # a strong monotone relation (|rho| >= 0.5)
RULE = decision.band(None, STRONG_RHO, null=0.0, reason="rho = -0.5: the conventional 'strong' monotone relation; a weaker "
                                              "one would not make the two measures one quantity")
PAIRS = {"entropy_resolution": ("entropy", "resolution"), "sink_resolution": ("sink", "resolution"),
         "entropy_sink": ("entropy", "sink")}
_HOW = ("scipy Spearman per seed over that seed's (checkpoint x head) points, each value minus its checkpoint's "
        "mean across heads")
_HOW_TREND = "scipy Spearman per seed over that seed's (checkpoint x head) points, trend included"
#: name -> the criterion's declaration (rule, prediction, metric, how); the pair of measures each reads: ``PAIR_OF``
CRITERIA = {
    "entropy_tracks_resolution": dict(
        rule=RULE, role="reported", metric="Spearman rho(entropy, resolution) per seed, checkpoint-centred", how=_HOW,
        prediction="the entropy-collapse half: yes would mean that, among heads at the same point of training, more "
                   "entropy goes with less resolution: checkpoint-centred Spearman rho(entropy, resolution) "
                   "strongly negative"),
    "sink_tracks_resolution": dict(
        rule=RULE, role="reported", metric="Spearman rho(sink, resolution) per seed, checkpoint-centred", how=_HOW,
        prediction="the attention-sink half: yes would mean that, among heads at the same point of training, more "
                   "sink goes with less resolution: checkpoint-centred Spearman rho(sink, resolution) strongly "
                   "negative"),
    "entropy_tracks_resolution_over_training": dict(
        rule=RULE, role="reported", metric="Spearman rho(entropy, resolution) per seed", how=_HOW_TREND,
        prediction="reported: the same relation over training, where a trend both measures share can make it"),
    "sink_tracks_resolution_over_training": dict(
        rule=RULE, role="reported", metric="Spearman rho(sink, resolution) per seed", how=_HOW_TREND,
        prediction="reported: the same relation over training, where a trend both measures share can make it"),
}
ANSWER = {"passed": "yes", "refuted": "no", "inconclusive": "inconclusive at this scale"}
PAIR_OF = {"entropy_tracks_resolution": "entropy_resolution_within", "sink_tracks_resolution": "sink_resolution_within",
           "entropy_tracks_resolution_over_training": "entropy_resolution",
           "sink_tracks_resolution_over_training": "sink_resolution"}


# ============================================================================================ measure
#: a reviewer's first objections (harness.record.objections.OBJECTIONS) and how this module meets each; firmness is
#: the harness's
OBJECTIONS = {
    "tuned_lr": ("not applicable", "no arms are compared: correlations within one model's training run per seed"),
    "ceiling": ("answered", "Spearman rhos per seed over checkpoints x heads; a constant measure is inconclusive"),
    "selection": ("not applicable", "no best arm or setting is chosen"),
    "second_task": ("open", "one synthetic language (a repeating Markov chain)"),
}


def head_stats(model: torch.nn.Module, fit: Batch, held: Batch, n_layers: int, n_classes: int, ridge: float
               ) -> list[dict[str, Any]]:
    """One row per (layer, head): entropy and sink mass on the held-out batch, resolution probed from ``fit`` to
    ``held``. Resolution uses query rows t >= 1 (row 0 can only attend BOS)."""
    taps = ["decoder.layers.*.self_attn.weights", "decoder.layers.*.self_attn.out"]
    caches = [run_with_taps(model, b, taps)[0] for b in (fit, held)]
    rows = []
    for layer in range(n_layers):
        name = f"decoder.layers.{layer}.self_attn"
        w_held = caches[1][f"{name}.weights"]
        ent, sink = attention_entropy(w_held), sink_mass(w_held, position=0)
        per = []
        for cache, batch in zip(caches, (fit, held)):
            w, out = cache[f"{name}.weights"][:, :, 1:].cpu(), cache[f"{name}.out"][:, :, 1:].cpu()
            B, h, T, S = w.shape
            tokens = batch.x.cpu()[:, None, :].expand(B, T, S).reshape(B * T, S)
            per.append((out.permute(0, 2, 1, 3).reshape(B * T, h, -1), w.permute(0, 2, 1, 3).reshape(B * T, h, S),
                        tokens))
        res = head_resolution(*per[0], *per[1], n_classes=n_classes, ridge=ridge)
        for i in range(len(ent)):
            rows.append({"layer": layer, "head": i, "entropy": float(ent[i]), "sink": float(sink[i]),
                         "resolution": float(res[i])})
    return rows


def build_task(block: dict[str, Any]) -> Task:
    return make_task(**block["task"])


def train_with_checkpoints(block: dict[str, Any], seed: int, device: torch.device | str = "cpu",
                           progress: Callable[..., Any] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Train one seed, measuring ``head_stats`` at step 0 and at every step in ``checkpoints``.
    Returns (per-head rows with step and seed, the run's learning curve)."""
    task = build_task(block)
    mb = block["model"]
    cfg = ModelConfig(d_model=mb["d_model"], n_heads=mb["n_heads"], d_ff=mb["d_ff"],
                      n_decoder_layers=mb["n_layers"], n_encoder_layers=0)
    model = build_for_task("decoder_lm", task, cfg, seed)
    probe = block["probe"]
    held = task.heldout(probe["n_eval"]).to(device)
    fit = task.train_batch(torch.Generator().manual_seed(probe["fit_seed"] + seed), probe["n_fit"]).to(device)
    checkpoints = sorted(set(block["checkpoints"]))
    rows: list[dict[str, Any]] = []

    def snapshot(step: int) -> None:
        for r in head_stats(model, fit, held, mb["n_layers"], task.src_vocab, probe["ridge"]):
            rows.append({"seed": seed, "step": step, **r})

    model.to(device)
    if 0 in checkpoints:
        snapshot(0)

    def on_step(step: int, model_: torch.nn.Module, batch: Batch, loss: float) -> None:
        if step in checkpoints:
            snapshot(step)
            if progress:
                progress(f"Q2 seed {seed}: checkpoint at step {step}, loss {loss:.3f}", force=True)

    tc = TrainConfig.from_dict({**block["train"], "device": str(device)})
    if progress:
        progress(f"Q2 seed {seed}: training {tc.steps} steps, checkpoints {checkpoints}", force=True)
    result = train(model, task, tc, seed, on_step=on_step, progress=progress)
    curve = result.curve_frame().assign(seed=seed)
    return pd.DataFrame(rows), curve


def measure(block: dict[str, Any], seeds: list[int], device: torch.device | str = "cpu",
            progress: Callable[..., Any] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    parts = [train_with_checkpoints(block, s, device, progress) for s in seeds]
    return pd.concat([p[0] for p in parts], ignore_index=True), pd.concat([p[1] for p in parts], ignore_index=True)


def per_checkpoint(heads: pd.DataFrame) -> pd.DataFrame:
    """Per (seed, step): mean entropy (Zhai et al.), sink fraction (Gu et al., > 0.3), mean sink mass, mean
    resolution."""
    g = heads.groupby(["seed", "step"])
    return pd.DataFrame({"mean_entropy": g["entropy"].mean(),
                         "sink_fraction": g["sink"].apply(lambda s: float((s > SINK_THRESHOLD).mean())),
                         "mean_sink_mass": g["sink"].mean(), "mean_resolution": g["resolution"].mean()}
                        ).reset_index()


def _spearman(x: pd.Series, y: pd.Series) -> tuple[float, float]:
    if x.nunique() < 2 or y.nunique() < 2:
        return math.nan, math.nan
    c = stats.correlation(x, y, method="spearman")
    return c.r, c.p_value


def correlations(heads: pd.DataFrame) -> pd.DataFrame:
    """Per seed, for each pair in PAIRS: Spearman rho over that seed's (checkpoint x head) points (``<pair>``, the
    issue's relation over training; NaN when one side never varies), and rho of the values minus their
    checkpoint's mean (``<pair>_within``: across heads at the same point of training, without the shared trend)."""
    rows = []
    for seed, g in heads.groupby("seed"):
        row: dict[str, Any] = {"seed": seed, "n_points": len(g)}
        centred = g[["entropy", "sink", "resolution"]] - g.groupby("step")[["entropy", "sink", "resolution"]
                                                                          ].transform("mean")
        for name, (a, b) in PAIRS.items():
            row[name], row[f"{name}_p"] = _spearman(g[a], g[b])
            row[f"{name}_within"], _ = _spearman(centred[a], centred[b])
        rows.append(row)
    return pd.DataFrame(rows)


# ============================================================================================ figures
def figure_trajectories(ckpt: pd.DataFrame):
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for (col, label), ax in zip((("mean_entropy", "mean attention entropy (nats)"),
                                 ("sink_fraction", f"fraction of sink heads (BOS importance > {SINK_THRESHOLD})"),
                                 ("mean_resolution", "mean head resolution (probe)")), axes):
        for seed, g in ckpt.groupby("seed"):
            ax.plot(g["step"], g[col], marker="o", ms=3, label=f"seed {seed}")
        ax.set_xscale("symlog", linthresh=max(1, int(ckpt["step"][ckpt["step"] > 0].min())))
        ax.set_xlabel("training step")
        ax.set_title(label, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.suptitle("Q2: entropy, sinks and resolution over training (DecoderLM on markov_lm)", fontsize=10)
    fig.tight_layout()
    return fig


def figure_relations(heads: pd.DataFrame):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    sc = ax1.scatter(heads["entropy"], heads["resolution"], c=heads["sink"], cmap="magma_r", vmin=0, vmax=1, s=12,
                     alpha=0.8)
    ax1.set_xlabel("head entropy (nats)")
    ax1.set_ylabel("head resolution")
    ax1.set_title("each point: one head at one checkpoint (colour: BOS mass)", fontsize=9)
    fig.colorbar(sc, ax=ax1, label="first-token importance")
    ax2.scatter(heads["entropy"], heads["sink"], c=np.log1p(heads["step"]), cmap="viridis", s=12, alpha=0.8)
    ax2.axhline(SINK_THRESHOLD, color="grey", ls=":", lw=1)
    ax2.set_xlabel("head entropy (nats)")
    ax2.set_ylabel("first-token importance (sink mass)")
    ax2.set_title("entropy vs sink mass (colour: log training step)", fontsize=9)
    fig.tight_layout()
    return fig


# ============================================================================================ the question
# ========================================================================= a model on trial (issue 40)
#: after a short training of the user's model: do the heads that sink (mass on the first key) lose resolution?
MODEL_CRITERIA = {
    "model_sink_tracks_entropy": dict(
        role="reported", rule=decision.band(None, -0.1, null=0.0, reason="a rank correlation below -0.1: the "
                                            "sinking heads are the low-entropy ones, not a tie"),
        metric="Spearman rho between sink mass over uniform and entropy / ln n over the (call, head)s, per seed",
        prediction="after {steps} steps of next-token training, the heads that put more than their share on the "
                   "first key are the low-entropy ones (rank correlation below -0.1)"),
}


def model_trial(ev, trial, block: dict, seeds, progress=lambda msg, force=False: None) -> None:
    """Q2 on a user's model (``--model``): sinks against entropy over the heads after a short training (reported)."""
    from scipy import stats as sps

    from harness.trial import model_reads as trials

    crit = ev.declare(MODEL_CRITERIA, steps=block["train"]["steps"])["model_sink_tracks_entropy"]
    ev.counts_nothing("on a model on trial Q2 reads one relation after a short training at an untuned rate: "
                      "reported, never counted")
    progress = trials.trained_from_init(ev, trial, seeds, "Q2's sinks against entropy", progress)
    found = trials.read_trained(crit, trial, seeds, block, progress)
    if found is None:
        return
    df, losses = found
    rho = df.groupby("seed").apply(lambda g: sps.spearmanr(g.sink_ratio, g.entropy_ratio)[0], include_groups=False)
    crit.sample(rho.to_numpy(), detail=f"Spearman rho {rho.mean():.3f} over {df.groupby('seed').size().iloc[0]} "
                                       f"heads; sink mass over uniform {df.sink_ratio.mean():.2f} (largest "
                                       f"{df.sink_ratio.max():.2f}), entropy / ln n {df.entropy_ratio.mean():.3f}")
    ev.metric("model_sink_entropy_rho", float(rho.mean()))
    ev.metric("model_sink_ratio_max", float(df.sink_ratio.max()))
    ev.table("model_attention_after_training", df)
    ev.note(trials.loss_note(losses, 1.0, block, trial))
    ev.headline("model_sink_entropy_rho")

def test_q2_resolution_entropy(evidence, profile, device, seeds, progress, fast, model_on_trial):
    if fast:
        pytest.skip("Q2 has no fast criterion: no fault in model.faults is about it (issue 10)")
    block = profile.claim(CLAIM_ID)
    ev = evidence
    ev.claim(CLAIM_ID, title="Is resolution lost to averaging what entropy collapse and attention sinks measure?",
             statement="\u201cReduced effective resolution due to averaging\u201d is a cost this paper names and the "
                       "record does not otherwise discuss. Is it what the attention-sink and entropy-collapse "
                       "literature is measuring?",
             strength="open question", kind="question",
             limitation="The note names the cost but gives no measure of it; here: one small decoder-only model on "
                        "one synthetic language, CPU budgets, resolution as C5's linear-probe decodability.")
    ev.answer_objections(OBJECTIONS)
    if model_on_trial is not None:
        return model_trial(ev, model_on_trial, profile.claim("model_trial"), seeds, progress)
    crits = ev.declare(CRITERIA)
    ev.counts_nothing("both relations are partly built into the resolution metric: head_resolution reads, from a "
                      "head's output, the token at that head's own most-attended key, so a low-entropy head's output "
                      "is mostly that key's value (low entropy goes with high resolution by construction), and a "
                      "head whose top key is always BOS has a target that never varies, which decodability scores 0 "
                      "(sink mass goes with low resolution by construction); a strong negative rho is partly the "
                      "metric agreeing with itself, so both halves are reported, never counted")
    ev.gate("q2_entropy_sink_corr", direction="both", tolerance=0.35)

    heads, curve = measure(block, seeds, device, progress)
    ckpt = per_checkpoint(heads)
    corr = correlations(heads)

    for name, crit in crits.items():
        pair = PAIR_OF[name]
        rhos = corr[pair].dropna()     # NaN: a measure never varied in that seed; under 2 seeds: unrecorded
        if len(rhos) >= 2:
            crit.sample(rhos, detail=f"{pair}: per-seed Spearman rho " + ", ".join(f"{r:.3f}" for r in rhos))
    es = corr["entropy_sink"].dropna()
    ev.metric("q2_entropy_sink_corr", float(es.mean()) if len(es) else math.nan)
    ev.metric("q2_entropy_resolution_corr", float(corr["entropy_resolution"].mean()))
    ev.metric("q2_sink_resolution_corr", float(corr["sink_resolution"].mean()))
    for pair in PAIRS:
        ev.metric(f"q2_{pair}_corr_within", float(corr[f"{pair}_within"].mean()))
    last = ckpt[ckpt["step"] == ckpt["step"].max()]
    first = ckpt[ckpt["step"] == ckpt["step"].min()]
    for col in ("mean_entropy", "sink_fraction", "mean_resolution"):
        ev.metric(f"q2_{col}_init", float(first[col].mean()))
        ev.metric(f"q2_{col}_final", float(last[col].mean()))
    ev.table("correlations", corr)
    ev.table("checkpoints", ckpt)
    ev.table("heads", heads)
    ev.table("learning_curve", curve)
    ev.figure("trajectories", figure_trajectories(ckpt))
    ev.figure("relations", figure_relations(heads))
    ev.headline("q2_entropy_sink_corr")
    final_heads = heads[heads["step"] == heads["step"].max()]
    is_sink = final_heads["sink"] > SINK_THRESHOLD
    sinks, others = final_heads[is_sink], final_heads[~is_sink]
    ev.note(f"At the last checkpoint: {len(sinks)} of {len(final_heads)} (seed x head) are sink heads (first-token "
            f"importance > {SINK_THRESHOLD}): mean entropy {sinks['entropy'].mean():.3f} and resolution "
            f"{sinks['resolution'].mean():.3f}, against {others['entropy'].mean():.3f} and "
            f"{others['resolution'].mean():.3f} for the other heads (nan: no such head).")
    ev.note("Correlations: '<pair>_within' removes each checkpoint's mean first, so it compares heads at the same "
            "point of training without the trend they share (the reported *_tracks_resolution criteria: sink and "
            "resolution can both rise over training without one reading the other); '<pair>' is Spearman over "
            "(checkpoint x head) points per seed, trend included (the reported *_over_training criteria).")
    halves = {name: decision.decide_alone(CRITERIA[name]["rule"], [decision.samples(corr[PAIR_OF[name]].dropna())])
              ["outcome"] for name in ("entropy_tracks_resolution", "sink_tracks_resolution")
              if corr[PAIR_OF[name]].notna().sum() >= 2}
    ev.note("Each half alone (its criterion decided by itself, no family): "
            + "; ".join(f"{name.split('_')[0]}: {ANSWER.get(o, o)}" for name, o in halves.items()) + ".")
    er, sr = corr["entropy_resolution"].mean(), corr["sink_resolution"].mean()
    ev.note(f"Reading, from this run: resolution {'falls' if er < 0 else 'rises'} with entropy (mean rho {er:.2f}), "
            + ("so entropy moves with resolution lost to averaging; " if er < 0 else
               "so entropy does not read as resolution lost to averaging; ")
            + f"sink mass "
            f"{'falls' if sr < 0 else 'rises'} with resolution (mean rho {sr:.2f}), and sink heads resolve "
            f"{'more' if sinks['resolution'].mean() > others['resolution'].mean() else 'less'} than the others at "
            "the last checkpoint: " + ("sinking goes with lost resolution here. " if sr < 0 else
                                       "a head that parks mass on BOS is not one that blurs positions. ")
            + "Entropy *collapse* (Zhai et al.: too little entropy, a training instability) is the other end of the "
            f"same axis; here mean entropy went from {first['mean_entropy'].mean():.2f} at init to "
            f"{last['mean_entropy'].mean():.2f} nats ("
            + ("no collapse" if last["mean_entropy"].mean() > 0.5 else "near collapse")
            + "); whether collapse costs resolution is not "
            "tested here (it needs the high learning rates of Q1's sweep).")
