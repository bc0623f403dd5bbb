"""C1: attention alone suffices for sequence transduction (NOTE-011, claim C1, strength strong; issues 8, 26, 54).

**What the note claims.** "Attention alone suffices for sequence transduction", supported by "the results": a
claim of *sufficiency*, with "no recurrence, no convolution". So C1 counts what tests sufficiency: the Transformer
learns each task and generalises to held-out inputs (``generalises``), and its decoder transduces
(``decoder_is_causal``). The note claims no race with a recurrent model: a comparison with the LSTM at a step
budget measures how fast each converges, and its direction depends on the task (issue 54: at budgets tied to the
Transformer's convergence the LSTM was 3.4x ahead on reverse and the Transformer 22x ahead on number words), so
the LSTM comparisons are **reported**, not counted, and need no falsifier. The paper's speed argument is a
different one again (Table 1: O(1) against O(n) *sequential* operations, i.e. parallelism), which one CPU thread
cannot test: there nothing runs in parallel, and wall time is FLOPs plus per-op dispatch cost.

**Design.** The Transformer (``model.Transformer``) learns reverse, sort and English->German number words
(``harness.data.tasks``); on the comparison tasks (two at every profile) a parameter-matched LSTM encoder-decoder with
Luong attention (``model.baselines``, ``width_for_params``), the 2017 baseline, trains on the same data stream.
Every run trains a **fixed step budget** (no early stop), each architecture at its own learning rate, tuned on
tuning seeds disjoint from the evaluation seeds (``harness.study.transduction.measure``, ``harness.study.tuning.choose_rates``)
by the validation loss at the budget's end, on a validation part of the held-out split the test part never shares
(``harness.data.tasks.validation_test_split``). **One budget rule**, declared before any run, for every comparison
task and both arms: the same number of steps and the same evaluation points (every ``eval_every`` steps and the
last), whatever the task (``harness.study.transduction.one_budget`` stops a profile that breaks it before anything
trains). It is the profile's number (harness/profiles/c1.py), sized on development seeds only
(reports/development/), never on the lock's. The full profile adds the paper's base
configuration on a user's parallel corpus (``test_c1_corpus_bleu``, ``harness.study.corpus``).

**Criteria** (``CRITERIA``, declared before measuring; the harness decides):
* ``no_recurrence_no_convolution`` (exact, **premise**, issue 38): a walk of every trained Transformer's
  ``modules()`` finds no recurrent or convolutional module (the same walk of the LSTM is reported, to show it sees
  them). It is the condition the claim is about, not evidence for it: a model with a recurrence would make the
  test not testable, and no fault of ours adds a module, so nothing could show it fail as a counted criterion.
* Every counted criterion names the fault that must refute it (``falsified_by``; ``reports/falsifiers.json``
  records that it does): ``causal_leak`` for ``decoder_is_causal``, ``no_positional_encoding`` (reversal and
  number words need order) and ``uniform_attention`` for ``generalises``.
* ``decoder_is_causal`` (exact, fast): the trained Transformers transduce. Redrawing every target token after t
  leaves the teacher-forced logits at positions <= t unchanged (``harness.measure.probes.future_target_leak``, at most 1e-5
  of the largest logit). Every loss below is teacher-forced; a decoder that reads the next target token scores a
  low loss by copying it while greedy decoding fails, so a leak refutes C1's measurement of transduction, and the
  loss criteria it would fake are marked invalid (inconclusive) beside it. Refuted by ``causal_leak``.
* ``generalises/<task>`` (band: held-out test loss < 0.1 nats per target token at the fixed budget).
  ``generalises/reverse`` is the fast criterion (issue 10): without positional encoding the encoder sees a bag of
  tokens, under uniform attention nothing can be routed; both leave the loss above 1 nat, which refutes it.
* Reported, not counted, at the one budget (paired by seed, one part per comparison task; an arm tuned to an edge of
  its grid makes that part inconclusive): ``quality_vs_lstm`` (non-inferiority, 0.05 nats,
  ``harness.record.margins``) and ``quality_ratio_vs_lstm`` (non-inferiority on ln loss, at most twice) on the
  held-out test loss at the budget's end, the quantities they always read; and ``convergence_area_vs_lstm``
  (non-inferiority, 0.05 nats), the mean validation loss over the budget's evaluation points, the area under the
  learning curve: a measure of speed of convergence over the whole budget, not a snapshot at its end. Why reported:
  a counted comparison must test what the note claims, and the note's C1 is sufficiency; whichever arm is ahead at a
  budget says how fast it converges on that task. Counting one would need a falsifier, a live foil and a claim of
  speed the note does not make. Near the floor 0.05 nats admits a Transformer 20x worse (0.002 against 0.04), which
  the ratio shows, but only where it has a loss to scale: see the floor, next.
* **The loss floor** (issue 47; ``transduction.LOSS_FLOOR`` = 0 within ``FLOOR_TOL`` = 0.01 nats,
  ``decision.dead_foil``). The target is a function of the source, so the loss can reach 0; within 0.01 nats every
  reference token has geometric-mean probability >= 0.99, greedy decoding is exact, and what remains of the loss is
  how confident a solved task became, not its quality. So, in the reported comparisons, ``quality_vs_lstm``'s part on
  a task is not testable (invalid, inconclusive) where its foil, the LSTM, is at the floor on every seed and at every
  rate its tuning tried (the live-foil rule), and ``quality_ratio_vs_lstm``'s where *either* arm is at the floor on
  every seed: a ratio of two floors (0.00036 against 0.00008 nats, exact match 1.0 each) would read a Transformer "4x
  worse" on no difference in quality. The area needs no such rule: its early points lie far above the floor. The
  ``ceiling`` objection (``ceiling_objection``) is answered: what counts is a level (generalises), which a loss at the
  floor meets rather than hides, and an exact check; it names the comparisons' tasks and arms at the floor, or gives
  their loss ranges.
* **The budget** (issue 54). One number of steps and one evaluation interval for every comparison task and both
  arms: smoke 300 steps evaluated every 25, standard 250 every 50, full 20000 every 250. It serves the counted
  criterion first: standard's 250 is the smallest budget probed at which, on development master seed 900 (its tuning
  seed and five evaluation seeds, the profile's own tuning), the Transformer was inside generalises' 0.1 on reverse,
  the slower task for it (at 200 it was outside on 4 of 5); on number words at 250 it sat at the floor, which the
  level meets. The figures are in reports/development/C1-master-seed-900.md; no budget was set by an outcome on the
  lock's seeds. The area reads the validation part, whose final loss also chose each arm's rate on the tuning seeds
  (other seeds, the same examples), so it is reported as a description of the runs, not as a held-out test.
* Reported, not counted: ``wall_time_to_95`` (ln(LSTM / Transformer) CPU wall time to 95% validation exact match,
  with steps to 95%, which are load-free, in the tables). On one CPU thread this is not a test of the parallelism
  argument, and its old margin (ln 1.25) was a noise floor, not an effect anyone asserted. BLEU is reported for
  both architectures on number words.
* ``step_time_vs_length`` (superiority, paired by repeat; declared and counted only under ``--device cuda`` with
  a profile whose block has ``step_time``, i.e. full): the parallelism argument itself. At a fixed number of
  tokens per batch, the log-log slope of the time per training step against sequence length n is lower for the
  Transformer (O(1) sequential operations per layer) than for the LSTM (O(n)) by more than 0.25. On a CPU thread
  nothing runs in parallel, so there it is not declared, and a note says why. **Reported**, not counted (issue
  38): a counted criterion must be shown to fail under a named fault, and that needs a GPU this suite's CI never
  has.
* ``corpus_bleu`` (full profile): counted only when the profile sets ``bleu_min``.

**A kernel on trial** (``--attention``, issue 27): the session's kernel replaces the score-softmax-value step in
every Transformer here (encoder, causal decoder, cross-attention; training and decoding), with the masks the model
builds; the criteria are unchanged, so they judge a Transformer built on that kernel (``KERNEL_NOTE``).

**Refuted** if its decoder reads later target tokens, or its held-out loss on a task lies wholly above 0.1 nats
per token; **not testable** if a trained Transformer holds recurrence or convolution (the premise). Which
architecture converges faster is reported beside the verdict and never decides it.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd
import pytest

from harness.record import decision, margins
from harness.measure.bench import step_time_slopes
from harness.measure.probes import FUTURE_LEAK_TOL
from harness.report.plots import figure_loss_vs_lr_by_task, plt
from harness.study.corpus import (corpus_paths, corpus_status, cpu_has_native_bf16, load_corpus, measure_corpus_bleu,
                            write_generated_corpus)
from harness.train.loop import TrainConfig
from harness.study.transduction import (FLOOR_TOL, arch_rate, at_floor, convergence_area, fixed_lr_table, floor_reason,
                                        generalisation, leak_reason, leaking, lr_tuning_table, measure, one_budget,
                                        step_time_parts, step_times, times_steps, wall_time)
from harness.study.tuning import Tuned, edge_reasons
from model import ModelConfig

pytestmark = pytest.mark.claim("C1")

CLAIM_ID = "C1"
TASKS = ("reverse", "sort", "number_words_de")       # the profile's ``tasks`` block names those it runs

#: name -> rule, prediction, metric, arms, how, counts, fast: the whole pre-registration of C1 ("generalises" is
#: declared once per task, as "generalises/<task>": ``per_task``; corpus_bleu's rule is the profile's ``bleu_min``).
CRITERIA: dict[str, dict[str, Any]] = {
    "no_recurrence_no_convolution": dict(
        quote="No recurrence, no convolution.",
        role="premise", rule=decision.exact("a walk of model.modules(): deterministic"),
        prediction="the Transformers trained here hold no recurrent and no convolutional module",
        metric="modules of type RNNBase, RNNCellBase or _ConvNd in the trained Transformers"),
    "decoder_is_causal": dict(
        quote="Attention alone suffices for sequence transduction",
        falsified_by=("causal_leak",),
        fast=True, how="every target position t of 16 test examples per run, the later tokens redrawn from the batch's "
                       "own",
        rule=decision.exact("logits recomputed from the same prefix: deterministic up to float32 rounding (at most "
                            f"{FUTURE_LEAK_TOL:g} of the largest logit)"),
        prediction="the trained Transformers transduce: their prediction at target position t reads the source and "
                   "the target tokens before t only (paper 3.2.3), so the teacher-forced losses below score what "
                   "decoding can produce",
        metric="largest change of the teacher-forced logits at positions <= t when every target token after t is "
               "redrawn, relative to the largest |logit|, over every t, seed and task"),
    "generalises": dict(
        quote="Attention alone suffices for sequence transduction",
        falsified_by=("no_positional_encoding", "uniform_attention"),
        rule=decision.band(None, 0.1, level=True, reason="0.1 nats per token: each held-out reference token gets geometric-mean "
                           "probability e^-0.1 = 0.90; a uniform guess costs >= ln 20 = 3.0, the faults leave > 1"),
        prediction="the Transformer learns {task} and generalises to held-out inputs (never in training, never seen "
                   "by the early stop): test loss below 0.1 nats per target token",
        metric="held-out test cross-entropy (teacher-forced, nats per target token), {task}",
        how="one test part per task, per seed"),
    "quality_vs_lstm": dict(
        role="reported",
        rule=decision.non_inferiority(margins.HELD_OUT_LOSS.value, paired=True, reason=margins.HELD_OUT_LOSS.reason),
        arms=("lstm", "transformer"), better="lower",
        prediction="at the end of the one step budget (the same on every comparison task, for both arms), the "
                   "Transformer's held-out test loss is not worse than a parameter-matched LSTM encoder-decoder's "
                   "with attention, each at its own learning rate tuned on disjoint seeds: how far each has "
                   "converged by then, a matter of speed of convergence as much as of what either can reach",
        metric="held-out test cross-entropy (teacher-forced, nats per target token) at the end of the one step "
               "budget: LSTM - Transformer"),
    "quality_ratio_vs_lstm": dict(
        role="reported",
        rule=decision.non_inferiority(margins.LOSS_RATIO.value, paired=True, reason=margins.LOSS_RATIO.reason),
        arms=("lstm", "transformer"), better="lower",
        prediction="at the end of the one step budget, the Transformer's held-out test loss is at most twice the "
                   "parameter-matched LSTM's, each at its own tuned rate (the same runs as quality_vs_lstm, on a "
                   "ratio scale): how far each has converged by then",
        metric="ln held-out test cross-entropy at the end of the one step budget: ln LSTM - ln Transformer"),
    "convergence_area_vs_lstm": dict(
        role="reported",
        rule=decision.non_inferiority(margins.HELD_OUT_LOSS.value, paired=True, reason=(
            "0.05 nats per target token, the suite's held-out loss gap (harness.record.margins), here averaged over "
            "the learning curve; reported: speed of convergence is not what the note's C1 claims")),
        arms=("lstm", "transformer"), better="lower",
        prediction="over the one step budget (the same steps and evaluation points on every comparison task, for "
                   "both arms), the Transformer converges no more slowly than the parameter-matched LSTM: its mean "
                   "held-out validation loss over the learning curve (the area under it) is not higher than the "
                   "LSTM's by more than 0.05 nats per target token, each at its own tuned rate",
        metric="speed of convergence: mean held-out validation cross-entropy (teacher-forced, nats per target "
               "token) over the evaluation points of the one step budget, the area under the learning curve: "
               "LSTM - Transformer"),
    "wall_time_to_95": dict(
        rule=decision.superiority(math.log(1.25), reason="ln 1.25 = 0.22, reported only: a CPU noise floor, not an "
                                  "effect the note asserts", paired=True),
        arms=("lstm", "transformer"), role="reported", better="lower",
        prediction="a parameter-matched LSTM encoder-decoder with attention, same step budget and data, each "
                   "architecture at its own learning rate tuned on disjoint seeds, takes longer than the "
                   "Transformer to reach 95% validation exact match",
        metric="ln training wall time to 95% validation exact match (s; evaluation excluded)"),
    "step_time_vs_length": dict(
        role="reported", rule=decision.superiority(0.25, paired=True, reason="0.25 in the log-log slope: per doubling of n the "
                                  "LSTM's step time grows 2^0.25 = 19% more than the Transformer's; O(n) against "
                                  "O(1) sequential operations predict a gap near 1 where a step's latency is its "
                                  "sequential depth, so a quarter of it is the smallest gap we call one"),
        arms=("lstm", "transformer"), better="none", how="reverse at each length, fixed tokens per batch; CUDA synchronised around "
                                          "every timed step; one slope per repeat",
        prediction="at a fixed number of tokens per batch, the Transformer's time per training step grows more "
                   "slowly with sequence length than the parameter-matched LSTM's (O(1) against O(n) sequential "
                   "operations; GPU only)",
        metric="log-log slope of median seconds per training step against sequence length n, per repeat: LSTM - "
               "Transformer"),
    "corpus_bleu": dict(
        quote="Machine translation is the evaluation domain (WMT En-De, En-Fr)",
        falsified_by=("no_positional_encoding",),
        rule=lambda bleu_min: decision.band(bleu_min or 0.0, None, level=True, reason=f"the profile's bleu_min ({bleu_min})"
                                            if bleu_min is not None else "reported: BLEU above 0; no bar is "
                                            "universal for a user's corpus"),
        role=lambda bleu_min: "counted" if bleu_min is not None else "reported",
        prediction="the paper's base Transformer, trained on the user's corpus, translates its held-out pairs above "
                   "the profile's bleu_min (reported, not counted, when the profile sets none)",
        metric="corpus BLEU (sacrebleu 13a) on held-out pairs"),
}
#: the LSTM comparisons read at the one budget (reported: module docstring)
COMPARISONS = ("quality_vs_lstm", "quality_ratio_vs_lstm", "convergence_area_vs_lstm")
#: the tuning stage's choice (module docstring): the mean validation loss at the fixed budget on the tuning seeds
TUNING_SCORE = ("val_loss",)


# -------------------------------------------------------------------------------------------- objections
#: a reviewer's first objections (harness.record.objections.OBJECTIONS) and how this module meets each; firmness is
#: the harness's
#: ``ceiling`` is not in this table: it is answered after measuring (``ceiling_objection``), from the run's losses
OBJECTIONS = {
    "tuned_lr": ("answered", "the Transformer and the LSTM each at their own rate, chosen by validation loss at the "
                 "budget's end on tuning seeds disjoint from the evaluation seeds; the fixed-rate view is a table"),
    "selection": ("not applicable", "the arms are fixed by the claim; no best arm is chosen"),
    "second_task": ("answered", "generalises, counted, is decided on every task the profile runs (reverse and number "
                    "words), refuted on any; the reported LSTM comparisons have one part per task"),
}
#: does what C1 counts test what the note claims? (issue 54; harness.record.objections.OBJECTIONS has no row for it, so
#: the record carries it as a note)
TESTS_THE_CLAIM = ("What C1 counts tests the note's claim, sufficiency (\"Attention alone suffices for sequence "
                   "transduction\"): generalises (the Transformer, with no recurrence and no convolution, learns each "
                   "task to held-out loss below 0.1 nats per token) and decoder_is_causal (its decoder transduces, "
                   "reading no later target token). The LSTM comparisons are reported, not counted: the note claims "
                   "no race with a recurrent model, and a loss read at a step budget measures speed of convergence, "
                   "whose direction depends on the task (the one budget rule and the area under the learning curve, "
                   "convergence_area_vs_lstm, say how fast each arm converges, not whether attention suffices).")


# ------------------------------------------------------------------------------- what the criteria read
def forbidden_in(df: pd.DataFrame) -> tuple[bool, int, str]:
    """(a): (no Transformer holds a forbidden module, how many do, detail with what the walk finds in the LSTM)."""
    tr, lstm = df[df.arch == "transformer"], df[df.arch == "lstm"]
    bad = tr[tr.forbidden_modules != ""]
    detail = (f"{len(tr)} trained Transformers walked: {len(bad)} hold a recurrent or convolutional module"
              + (f" (e.g. {bad.iloc[0].forbidden_modules})" if len(bad) else "")
              + (f"; the same walk finds in the LSTM: {lstm.iloc[0].forbidden_modules or 'nothing (!)'}" if len(lstm)
                 else ""))
    return len(tr) > 0 and bad.empty, len(bad), detail


def causal_decoders(df: pd.DataFrame) -> tuple[bool, float, str]:
    """(holds, the largest relative leak, detail): no trained Transformer's logits at t move when later target
    tokens are redrawn (``future_target_leak`` per run; the LSTM's, reported, shows the probe on a causal decoder)."""
    tr, lstm = df[df.arch == "transformer"], df[df.arch == "lstm"]
    bad = leaking(tr)
    detail = (f"{len(tr)} trained Transformers probed: largest change {tr.future_leak.max():.3g} of the largest logit "
              f"(tolerance {FUTURE_LEAK_TOL:g}); {len(bad)} read later target tokens"
              + (f" (e.g. {bad.iloc[0].task} seed {bad.iloc[0].seed}, first at position {bad.iloc[0].future_leak_at})"
                 if len(bad) else "") + (f"; the LSTMs: {lstm.future_leak.max():.3g}" if len(lstm) else ""))
    return len(tr) > 0 and bad.empty, float(tr.future_leak.max()), detail


def quality(df: pd.DataFrame, tuned: Mapping[str, Mapping[str, Tuned]] | None = None, log: bool = False,
            tuning: pd.DataFrame | None = None) -> tuple[list[dict[str, Any]], str]:
    """Per comparison task, the seed-paired held-out test loss (LSTM, Transformer) at the fixed budget (its log
    when ``log``: quality_ratio_vs_lstm), and the detail; an arm at an edge of its grid makes that task's part
    invalid (inconclusive, naming the arm and edge). At the loss floor (module docstring): quality_vs_lstm's part
    is invalid where the LSTM, its foil, is a dead foil (``decision.dead_foil``, rates tried included);
    quality_ratio_vs_lstm's where either arm's loss is at the floor on every seed (a ratio with a floor in it).
    ``tuning`` (the tuning runs): each part carries both arms' rate choices (``tuning.rate_choice_of``: the tuning
    runs' validation loss stands for the test loss, the same quantity on a disjoint split), so the firmness
    simulates a fresh choice of each arm's rate."""
    scale = np.log if log else (lambda x: x)
    parts, text = [], []
    for task_name, g in df.groupby("task", sort=False):
        t, lstm = (g[g.arch == a].sort_values("seed") for a in ("transformer", "lstm"))
        rates = (tuned or {}).get(task_name, {})
        floors = "; ".join(r for r in (floor_reason(g, a) for a in ("lstm", "transformer")) if r) if log else ""
        invalid = "; ".join(r for r in (leak_reason(g) or edge_reasons(rates.values()),
                                        f"not testable, a ratio with a floor in it: {floors}" if floors else "") if r)
        choices = [arch_rate(tuning, tuned, rows, task_name, arch, sign, log)
                   for arch, rows, sign in (("lstm", lstm, 1.0), ("transformer", t, -1.0))] \
            if tuning is not None and {"transformer", "lstm"} <= set(rates) else None
        parts.append(decision.samples(scale(lstm.test_loss.to_numpy(float)), scale(t.test_loss.to_numpy(float)),
                                      paired=True, label=task_name, invalid=invalid,
                                      foil_dead="" if log else floor_reason(g, "lstm", rates.get("lstm")),
                                      rates=choices))
        bleu = (f"; BLEU transformer {t.bleu.mean():.2f}, lstm {lstm.bleu.mean():.2f}"
                if "bleu" in g and g.bleu.notna().any() else "")
        text.append(f"{task_name}: test loss transformer {np.round(t.test_loss, 4).tolist()} vs lstm "
                    f"{np.round(lstm.test_loss, 4).tolist()}{bleu}")
    return parts, "; ".join(text)


def ceiling_objection(cmp: pd.DataFrame) -> tuple[str, str]:
    """The ``ceiling`` objection as this run measured it (``ev.objection``'s status and how). The deciding metrics are
    generalises' held-out loss, a level (below 0.1 nats), which a loss at the floor meets rather than hides, and an
    exact check: answered. The reported LSTM comparisons' floor is said beside it: the tasks and arms at the floor on
    every seed (``at_floor``; there quality_ratio_vs_lstm reads not testable), or each arm's loss range."""
    level = ("the counted criteria are generalises, a level (held-out loss below 0.1 nats per token), which a loss at "
             "the floor meets rather than hides, and decoder_is_causal, an exact check")
    if cmp.empty:
        return "answered", level + "; no LSTM comparison in this run"
    floored = at_floor(cmp)
    span = lambda x: f"{x.min():.3g}-{x.max():.3g}"
    spans = "; ".join(f"{name} " + ", ".join(f"{a} {span(g[g.arch == a].test_loss)}" for a in ("transformer", "lstm"))
                      for name, g in cmp.groupby("task", sort=False))
    return "answered", (level + "; of the reported LSTM comparisons, " + (
        f"the held-out loss sits at the floor (< {FLOOR_TOL:g} nats on every seed) on {'; '.join(floored)}, where "
        "quality_ratio_vs_lstm is not testable" if floored else
        f"no arm of any task sits at the loss floor (within {FLOOR_TOL:g} nats on every seed)")
        + f": test loss {spans} nats per token over the seeds")


# --------------------------------------------------------------------------------------------- figures
def curves_figure(curves: pd.DataFrame, target: float):
    tasks = list(dict.fromkeys(curves.task))
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 3.2), squeeze=False)
    colors = {"transformer": "tab:blue", "lstm": "tab:orange"}
    for ax, name in zip(axes[0], tasks):
        for (arch, seed), g in curves[curves.task == name].groupby(["arch", "seed"]):
            ax.plot(g.step, g.exact_match, color=colors.get(arch, "k"), alpha=0.8,
                    label=arch if seed == curves.seed.min() else None)
        ax.axhline(target, color="grey", ls=":", lw=1)
        ax.set_title(name)
        ax.set_xlabel("step")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(loc="lower right", fontsize=8)
    axes[0][0].set_ylabel("validation exact match")
    fig.tight_layout()
    return fig


def time_figure(df: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    for i, (key, g) in enumerate(df.groupby(["task", "arch"], sort=False)):
        ax.scatter(np.full(len(g), i), g.time_to_95_s, c=np.where(g.reached_95, "tab:blue", "tab:red"))
        ax.bar(i, g.time_to_95_s.mean(), alpha=0.3, color="grey")
    ax.set_xticks(range(df.groupby(["task", "arch"]).ngroups))
    ax.set_xticklabels([f"{t}\n{a}" for t, a in df.groupby(["task", "arch"], sort=False).groups], fontsize=8)
    ax.set_ylabel("training wall time to 95% (s)\n(red: never reached, censored)")
    fig.tight_layout()
    return fig


def step_time_figure(times: pd.DataFrame):
    """Does the time per training step grow more slowly with n for the Transformer than for the LSTM?"""
    fig, ax = plt.subplots(figsize=(4.5, 3.4))
    for arm, g in times.groupby("arm", sort=False):
        med = g.groupby("n").s_per_step.median()
        ax.plot(med.index, 1e3 * med.to_numpy(), "o-", label=arm)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"sequence length n ({int(times.tokens.iloc[0])} tokens per batch)")
    ax.set_ylabel("ms per training step (median)")
    ax.set_title("Does step time grow more slowly with n\nfor the Transformer than the LSTM?")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


#: what a kernel on trial (--attention, issue 27) is in this claim: the session's kernel runs in every Transformer
KERNEL_NOTE = ("The attention under trial is {name} ({convention} convention): every Transformer here calls it in place "
               "of its own score-softmax-value step, in the encoder's self-attention with its padding mask, the "
               "decoder's causal self-attention and its cross-attention, in training and in greedy decoding (the "
               "model builds each mask and passes it in, with is_causal=False). The LSTM is the project's own. So "
               "generalises says whether a Transformer built on that kernel learns these tasks (the LSTM "
               "comparisons, reported, say how fast against the tuned LSTM, each at its own tuned rate). Their loss "
               "is teacher-forced through the same kernel: one that ignores its causal mask lets the decoder read "
               "the next target, and its loss looks good while greedy decoding fails. decoder_is_causal catches "
               "that on the trained Transformers (and marks those losses invalid); M0 and R1 judge every mask the "
               "kernel is given.")


# -------------------------------------------------------------------------------------------- the claim
def _declare_claim(ev) -> None:
    ev.claim(CLAIM_ID, title="Attention alone suffices for sequence transduction",
             statement="Attention alone suffices for sequence transduction", strength="strong", kind="claim",
             limitation="2017 translation benchmarks. Here: small synthetic transduction tasks (and a user's corpus "
                        "in the full profile only) at CPU scale, against one recurrent baseline.")
    ev.answer_objections(OBJECTIONS)


def per_task(criteria: Mapping[str, dict[str, Any]], tasks: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """``criteria`` with ``generalises`` declared once per task, in its place: ``generalises/<task>``, its
    prediction and metric naming the task, fast for reverse (the fast criterion, issue 10)."""
    out: dict[str, dict[str, Any]] = {}
    for name, spec in criteria.items():
        if name != "generalises":
            out[name] = spec
            continue
        for task in tasks:
            out[f"{name}/{task}"] = {**spec, "fast": task == "reverse", "prediction": spec["prediction"].format(
                task=task), "metric": spec["metric"].format(task=task)}
    return out


def declare(ev, tasks: tuple[str, ...], compare: tuple[str, ...], fast: bool, timing: bool = False,
            budget: tuple[int, int] | None = None) -> dict[str, Any]:
    """The claim and its criteria (``CRITERIA``, ``generalises`` per task; a --fast run declares the fast ones;
    ``compare``: the LSTM comparisons' tasks, none without them; ``timing``: ``step_time_vs_length`` too;
    ``budget``: the comparison's one budget, (steps, eval_every), ``transduction.one_budget``), before measuring.
    corpus_bleu is ``test_c1_corpus_bleu``'s."""
    _declare_claim(ev)
    on = f"tasks {', '.join(compare)}; " + (f"one budget, {budget[0]} steps evaluated every {budget[1]}, on every task "
                                            "for both arms; " if budget else "")
    return ev.declare(
        per_task(CRITERIA, tasks), fast=fast,
        skip=["corpus_bleu", *([] if compare else [*COMPARISONS, "wall_time_to_95"]),
              *([] if timing else ["step_time_vs_length"])],
        how={**{name: on + "each arch at its rate tuned on disjoint seeds by validation loss at the budget's end; "
                          "one part per task" for name in COMPARISONS},
             "wall_time_to_95": on + "one CPU thread: not a test of the parallelism argument; censored runs enter "
                                     "with their whole training time"})


def test_c1_attention_suffices(evidence, profile, device, seeds, progress, fast, attention):
    block = profile.claim(CLAIM_ID)
    ev = evidence
    tasks = tuple(block.get("fast", {}).get("tasks", ["reverse"])) if fast else tuple(block.get("tasks_run", TASKS))
    compare = () if fast else tuple(block["lstm"]["tasks"])
    budget = one_budget(block, compare) if compare else None     # the rule holds before anything trains
    timing = not fast and times_steps(block, device)
    c = declare(ev, tasks, compare, fast, timing, budget)
    if attention is not None:
        ev.note(KERNEL_NOTE.format(name=attention.name, convention=attention.convention))
    for name in tasks:
        ev.gate(f"exact_match/{name}", direction="higher", tolerance=float(block["gate_exact_match"]))
    if "number_words_de" in tasks:
        ev.gate("bleu/number_words_de", direction="higher", tolerance=float(block["gate_bleu"]))
    if compare:
        ev.gate("steps_to_95/transformer", direction="lower", tolerance=float(block["gate_steps_relative"]),
                relative=True)

    # ---- measure: on each comparison task tune both arms on tuning seeds, then evaluate at the tuned rates
    m = measure(block, tasks, compare, seeds, device, progress, fast, by=TUNING_SCORE)
    runs, curves = m.runs, m.curves

    # ---- record
    if "no_recurrence_no_convolution" in c:
        holds, n_bad, detail = forbidden_in(runs)
        c["no_recurrence_no_convolution"].check(holds, measured=n_bad, detail=detail)
    holds, leak, detail = causal_decoders(runs)
    c["decoder_is_causal"].check(holds, measured=leak, detail=detail)
    for name in tasks:
        rows = runs[(runs.task == name) & (runs.arch == "transformer")]
        measurement, detail = generalisation(rows, [arch_rate(m.tuning, m.tuned, rows, name, "transformer")]
                                             if "transformer" in m.tuned.get(name, {}) else [])
        c[f"generalises/{name}"].measure([measurement], detail=detail)
        ev.metric(f"exact_match/{name}", float(rows.test_exact_match.mean()))
        ev.metric(f"token_accuracy/{name}", float(rows.test_token_accuracy.mean()))
        if "bleu" in rows and rows.bleu.notna().any():
            ev.metric(f"bleu/{name}", float(rows.bleu.mean()))
    # the ceiling objection as measured: a comparison at the loss floor has no room to separate the arms
    ev.objection("ceiling", *ceiling_objection(runs[runs.task.isin(compare)]))
    if compare:
        cmp = runs[runs.task.isin(compare)]
        parts, detail = quality(cmp, m.tuned, tuning=m.tuning)
        c["quality_vs_lstm"].measure(parts, detail=detail)
        c["quality_ratio_vs_lstm"].measure(quality(cmp, m.tuned, log=True, tuning=m.tuning)[0], detail=detail)
        parts, area = convergence_area(curves, cmp, *budget, m.tuned)
        c["convergence_area_vs_lstm"].measure(parts, detail=area)
        for task_name, g in cmp.groupby("task", sort=False):
            by = {a: g[g.arch == a].sort_values("seed") for a in ("transformer", "lstm")}
            ev.metric(f"quality_gap/{CLAIM_ID}/{task_name}",
                      float((by["transformer"].test_loss.to_numpy() - by["lstm"].test_loss.to_numpy()).mean()))
            if "bleu" in g and by["lstm"].bleu.notna().any():
                ev.metric(f"bleu_lstm/{task_name}", float(by["lstm"].bleu.mean()))
        parts, detail = wall_time(cmp, m.tuned)
        c["wall_time_to_95"].measure(parts, detail=detail)
        for task_name, by_arch in m.tuned.items():
            for arch, t in by_arch.items():
                at = runs[(runs.task == task_name) & (runs.arch == arch)]
                ev.metric(f"tuned_lr/{CLAIM_ID}/{arch}/{task_name}", t.lr)
                ev.metric(f"tuned_loss/{CLAIM_ID}/{arch}/{task_name}", float(at.test_loss.mean()))
        first = cmp[cmp.task == compare[0]]
        for arch in ("transformer", "lstm"):
            g = first[first.arch == arch]
            ev.metric(f"steps_to_95/{arch}", float(g.steps_to_95.mean()))
            ev.metric(f"time_to_95_s/{arch}", float(g.time_to_95_s.mean()))
            ev.metric(f"params/{arch}", int(g.params.iloc[0]))
        ev.figure("time_to_95", time_figure(cmp))
        ev.table("lr_tuning", lr_tuning_table(m.tuning, m.tuned))
        ev.table("fixed_lr", fixed_lr_table(m.tuning, m.tuned))
        ev.table("tuning_runs", m.tuning)
        ev.figure("steps_vs_lr", figure_loss_vs_lr_by_task(
            m.tuned, "Which learning rate gives the lowest validation\nloss at the fixed budget, per architecture?"))
    ev.table("per_seed", runs)
    ev.figure("learning_curves", curves_figure(curves, float(block["target"])))
    ev.note(f"Every run trains its fixed step budget (no early stop). Loss and exact match (greedy decoding) are "
            f"measured on a test part of the held-out split that neither training nor the tuning's validation part "
            f"saw (validation scored {block['train'].get('eval_decode', 'greedy').replace('_', '-')}).")
    if compare:
        ev.note(f"Steps and time to 95% come from the validation curve (evaluated every "
                f"{block['train'].get('eval_every')} steps). Wall times exclude evaluation and carry the machine's "
                f"load; seeds are interleaved across the two architectures so load drift hits both alike. This "
                f"profile compares with the LSTM on {', '.join(compare)}.")
        ev.note("Learning rates (issue 17): on each comparison task both architectures are trained at their own "
                f"rate, chosen on {block['tuning']['seeds']} tuning seed(s) disjoint from the evaluation seeds by "
                "mean validation loss at the fixed budget: "
                + "; ".join(f"{task_name}: " + ", ".join(
                    f"{a} {t.lr:.3g}" + (f" (the grid's {t.edge} point)" if t.edge else "") + f" of {list(t.grid)}"
                    for a, t in by_arch.items()) for task_name, by_arch in m.tuned.items())
                + ". A rate at an edge makes the LSTM comparisons inconclusive on that task. fixed_lr (reported, not "
                "counted) is the design this replaces, both arms at one shared rate: the tuning runs at each rate "
                "both grids share, on the same tuning seeds (ln seconds beside seconds).")
    if timing:
        times = step_times(block, device)
        parts, detail = step_time_parts(times)
        c["step_time_vs_length"].measure(parts, detail=detail)
        for arm, g in step_time_slopes(times).groupby("arm"):
            ev.metric(f"step_time_slope/{arm}", float(g.slope.mean()))
        ev.table("step_times", times)
        ev.figure("step_time_vs_length", step_time_figure(times))
    else:
        ev.note("step_time_vs_length (time per step against sequence length at fixed tokens per batch, the "
                "parallelism argument) is not declared: it needs --device cuda and a profile with a step_time block "
                "(--profile full); one CPU thread runs nothing in parallel.")
    ev.note("(d) corpus BLEU with the paper's base configuration: " + corpus_status(block, profile.dry)[1])
    ev.note(TESTS_THE_CLAIM)
    ev.headline("exact_match/reverse")


# ----------------------------------------------------------------------------------------- (d) corpus
def test_c1_corpus_bleu(evidence, profile, device, seeds, progress, fast, tmp_path):
    """(d) the paper's base configuration on the user's corpus (full profile); skips without one, except in a dry
    run, which writes a generated corpus in the user's TSV format and runs on that."""
    block = profile.claim(CLAIM_ID)
    ev = evidence
    _declare_claim(ev)
    runs, why = corpus_status(block, profile.dry)
    if fast or not runs:
        pytest.skip(f"C1 (d) corpus BLEU {why}" if not fast else "C1 (d) corpus BLEU is not a fast criterion")
    spec = block["corpus"]
    bleu_min = spec.get("bleu_min")
    crit = ev.declare({"corpus_bleu": CRITERIA["corpus_bleu"]}, bleu_min=bleu_min)["corpus_bleu"]
    # a dry run without a user corpus (corpus_status): generated pairs go through the user's loader
    task = load_corpus(corpus_paths() or write_generated_corpus(tmp_path / "generated_pairs.tsv"), spec)
    mcfg = ModelConfig.paper_base(**spec.get("model", {}))
    train_block = {**spec["train"], "device": str(device)}
    if profile.dry and train_block.get("bf16") and str(device) == "cpu" and not cpu_has_native_bf16():
        # a dry run checks paths, not numbers: on a CPU without AVX-512 bf16 is emulated (a paper-base step took
        # ~200 s against ~7 s where it is native, 2026-12-01), so the dry run trains in float32 there and says so
        train_block["bf16"] = False
        ev.note("Dry run on a CPU without native bf16 (no AVX-512): the corpus run trained in float32, not the "
                "GPU's bf16 autocast path.")
    df = pd.DataFrame([measure_corpus_bleu(task, mcfg, TrainConfig.from_dict(train_block), seed,
                                           int(spec["test_size"]), progress)
                       for seed in seeds[: int(spec.get("seeds", len(seeds)))]])
    r = df.iloc[0]   # the seed is the unit; one seed's interval comes from its bootstrap over test sentences
    crit.measure([decision.samples(df.bleu, label="seeds") if len(df) >= 2 else decision.estimate(
        r.bleu, r.bleu_se_bootstrap, max(int(r.test_pairs) - 1, 1), 1, label="one seed",
        method="BLEU with a bootstrap s.e. over test sentences")], detail=f"BLEU per seed {df.bleu.round(2).tolist()}")
    ev.metric("bleu/corpus", float(df.bleu.mean()))
    ev.table("corpus_runs", df)
