"""Every budget of the suite, as data, in one place.

A claim module asks ``profile.claim("C4")`` for its block and never hard-codes a step count, a
seed count or a sweep grid. ``smoke`` is CI (whole suite under 10 min on 2 CPU cores), ``standard``
gives statistically firm verdicts on CPU (under 45 min), ``full`` is paper-scale on a GPU.
The three share one code path: only these numbers change.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

PROFILE_NAMES = ("smoke", "standard", "full")

# Seeds per claim unless a block says otherwise (``--seeds N`` overrides both).
DEFAULT_SEEDS = {"smoke": 3, "standard": 5, "full": 5}


def _c1_long_tasks(**train: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """C1's standard/full tasks (issue 8): lengths 10-20, integers up to 999999; ``train``: a task's overrides of
    the profile's train block (e.g. its step cap)."""
    tasks = {"reverse": {"task": {"vocab": 20, "min_len": 10, "max_len": 20}},
             "sort": {"task": {"vocab": 20, "min_len": 10, "max_len": 20}},
             "number_words_de": {"task": {"max_n": 999999}}}
    for name, overrides in train.items():
        tasks[name]["train"] = dict(overrides)
    return tasks


# One block per claim id; each block has a "smoke", "standard" and "full" entry.
#
# standard (issue 18): firm verdicts in at most 45 min on the 2-core box with `-n 2 --dist loadgroup`. The shared
# sweep (C3, C4, R1: one xdist worker) and C1 are the two longest units, so they set the wall time; the rest fills
# the other worker. Before the redesign it ran over 80 min (C1 alone more than that: sort at a constant 1e-3 sat at
# its 6000-step cap, ~9 min a seed) and issue 17's tuning stages doubled the sweep (~730 runs). What changed, each
# measured (2026-12-01, one torch thread, the box otherwise quiet), and what it costs a verdict:
# - C1 takes smoke's warmup + cosine to 0 at the cap (sort at lengths 10-20 reached 95% in 1400 steps, test exact
#   match 0.98, 49 s a run), caps 1200 / 1800 (sort) / 1000 (number words) steps, 1000 test rows (binomial sd 0.004
#   at 0.98); lengths, seeds and both comparison tasks kept.
# - The sweep keeps the d_k that its counted criteria read (8 and 512) plus d_k 2 for the small-d_k equivalence and
#   the crossover (d_k 32 and 4, 16 dropped: reported only), trains key-value lookup 400 steps (300 at smoke) and
#   delayed copy 250 (it reached loss < 0.01 by then at d_model 64); C4's alphas 0, 0.5, 0.75, 1 (0.25 dropped: at
#   the large d_k alpha 0 already trails by > 1 nat) with its q/k control at the large d_k only (where alpha matters)
#   on 5 seeds. Additive attention at d_k 512 is the sweep's dearest run (11-15 s against 3-4 s for the dot arms).
# - C2 stops at d 64: at d 256 one step cost 0.21 s (self-attention) to 0.38 s (recurrent), 5-10 min a run.
# - Q1 200 steps, Q2 1500 at batch 32, Q3 400, R3 shorter timing rounds: their smoke verdicts were firm already.
# - Seeds go where the firmness figures asked for them: the first standard run (33 min 19 s) had C3 fragile (0.66,
#   "~7 seeds") with everything else firm, so the sweep (C3, C4, R1) evaluates 7 seeds.
# - Issue 26's criteria (C1's and C2's tuned comparisons, R3's similar_quality) took the run to 72 min on the 2-core
#   AMD EPYC box (4330 s; its modules ran ~2x their times on the box these budgets were first measured on). Cut where
#   that run's firmness had room, every cut a count, no size or step budget: tuning on 1 seed instead of 2 (C3's block,
#   so C4's alphas too, and C5's; C1 and C2 already tuned on 1: a 2x grid that extends past an edge locates a rate
#   better than a second seed on a coarser grid); the sweep's evaluation seeds 7 -> 6 (its counted criteria were at
#   0.99-1.00 firmness on 7); C1 5 -> 4 seeds (1.00); Q1 5 -> 4 (0.99); R3 timing seeds 5 -> 3 (additive 24x dot
#   against a 5x criterion); C5's primary arms 25 -> 16 seeds (distinct_slots 0.9975 on 25; at 16 all-but-two
#   seeds still decide at alpha / 3), its long single head 5 -> 3x the steps (reported framing); C2's (c) stops at
#   d = 16 (its d = 64 runs, 20 of them at 800 steps, were half of C2: the convs are beyond reach from d = 16 on, and
#   (e) trains self-attention at d = 64, which attention_learns reads there).
# - That run took 55 min 17 s (3317 s; the sweep worker 2877 s of modules). Cut again, counts only, where its firmness
#   had room (2026-12-02): C4 (b)'s model draws 4 -> 2 (one draw at d_k 1024 builds 4 encoders of d_model 4096, 17 s;
#   the 24 draws a d_k were ~400 s of the sweep worker for criteria at firmness 1.00; 12 points a d_k still fit each
#   slope to ~0.003 against a 0.1 band); the key-value sweep's small d_k is 8 alone, as at smoke (d_k 2 stays on delayed
#   copy, where it costs a sixth; it fed only the reported small-d_k equivalence); C4's q/k control 5 -> 3 seeds (a
#   reported control); C1 4 -> 3 seeds (every counted criterion 1.00), C2 5 -> 4 (0.98; (e)'s d = 64 runs are most of
#   its time), Q1 4 -> 3 (0.96), Q2 5 -> 4 and Q3 5 -> 4 (open questions answered at 0.95-1.00).
# - The sweep's tuning searches instead of sweeping (2026-12-02): 3 points a factor 2 apart round the task's rate,
#   extended one factor-2 step past an end while the choice sits there, at most 4 times a side, in place of 5 points
#   over 16x extended at most 3 times. Same resolution (2x), same reach (5 steps either side of the centre), fewer
#   runs where the optimum is near the centre: computed from the 50:22 run's choices (22 arms, all within 2 steps), 79
#   tuning runs instead of 111.
#
# smoke (issue 26: <= 10 min with -n 2) is unchanged: in CI it took 11 min 52 s (modules: C3 458 s, C1 258, C4 160,
# C5 161, C2 133). Tuning on one seed, as standard does, was measured (2026-12-02, 11 min 4 s in all): it saved 110 s
# of C3, 23 of C4 and 13 of C5, but C3's firmness fell from 0.81 to 0.47 and R1's from 0.94 to 0.82 (C5 0.76 -> 0.75):
# a gate that would flip with the seed set. Its other counts each carry their reason in the blocks below.
CLAIMS: dict[str, dict[str, dict[str, Any]]] = {
    # filled by each claim module's issue; keys are the module's own budget names
    # C2 (issue 6): path length between positions (a), gradient against distance at init (b), learning the
    # long-range match at equal depth and parameters (c), conv stacks deep enough to cover d (d; empty: off).
    # model: the 2-layer self-attention every other architecture is width-matched to (params within 20%);
    # vocab 16 keeps the d=4 example space large (with 8, memorising the visible suffix against the hash split
    # moved a conv that cannot see x_0 to 0.30/0.78 held-out accuracy). n_test: held-out examples per seed,
    # scored per seed (smoke 3000: binomial sd 0.009, so 3 seeds resolve "at chance" within its 0.05 margin; at
    # 1000 the criterion's firmness was 0.77; evaluation only, no time). fast_distances: --fast's d (issue 10).
    # threads / num_threads 1: tiny models and float64 graphs (2 threads on a shared box burnt 15x the CPU).
    # fast_train (issue 25): the --fast run's attention_learns trains a fixed 400 steps, no early stop. At 250 steps
    # with the 0.99-accuracy stop, single_head (one effective head) learns d=16 more slowly, and whether a seed
    # reached the stop within the budget decided a 0.18 against a 0.2-nat loss (nine seeds: 3 above 0.2); at a
    # fixed 400 steps the nine seeds sit at <= 0.10 under single_head, <= 0.02 with no fault, and uniform_attention
    # stays at chance (0.69), so neither the fault's catch nor the off-target cell rests on a knife edge.
    # fast_seeds 5 (smoke, the only --fast budget): at 3 seeds (t with 2 df) one slow single_head seed (0.09 nats)
    # put the upper end at 0.12 against the 0.2 band, predictive firmness 0.78, and the per-seed losses move with the
    # floating-point path (ATEN_CPU_CAPABILITY=default moved the no-fault cell's upper end 0.012 -> 0.054); at 5
    # seeds, master seeds 0 and 1 on both paths put it at 0.06-0.08 (2026-12-02). ~5 s a seed.
    # helps (issue 26, (e)): self-attention against the LSTM, each tuned (lr_grid on tuning_seeds, extend past an end
    # once), at the long-range d only (>= 16: the LSTM's path is >= 16 steps), trained a fixed `steps` with no early
    # stop. Grid: attention's 3e-3 in the middle; 1e-3 .. 3e-2 all left the LSTM at chance at d = 16 in 250 steps
    # (one seed, 2026-12-01), so its edge cannot mislead (C2's learnt_nothing rule).
    "C2": {
        "smoke": {"structural": {"distances": [1, 2, 4, 8, 16, 32, 64, 128], "d_model": 16, "n_heads": 2,
                                 "d_ff": 32},
                  "gradient": {"distances": [1, 2, 4, 8, 16, 32, 64, 128], "batch": 8},
                  "model": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_layers": 2, "vocab": 16},
                  "learning": {"archs": ["self_attention", "conv_k3", "conv_k5", "dilated_conv_k2", "recurrent"],
                               "distances": [4, 16], "n_test": 3000,
                               "train": {"steps": 250, "batch_size": 64, "num_threads": 1,
                                         "schedule": "warmup_constant", "lr": 3e-3, "warmup": 30,
                                         "eval_every": 50, "eval_size": 256,
                                         "target_metric": "accuracy", "target_value": 0.99}},
                  "fast_distances": [16], "fast_train": {"steps": 400, "stop_at_target": False}, "fast_seeds": 5,
                  "deep": {"distances": []},
                  "helps": {"distances": [16], "steps": 250, "lr_grid": [1e-3, 3e-3, 1e-2], "extend": 1,
                            "tuning_seeds": 1},
                  "threads": 1},
        "standard": {"seeds": 4, "structural": {"distances": [1, 2, 4, 8, 16, 32, 64, 128], "d_model": 16, "n_heads": 2,
                                    "d_ff": 32},
                     "gradient": {"distances": [1, 2, 4, 8, 16, 32, 64, 128], "batch": 16},
                     "model": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_layers": 2, "vocab": 16},
                     "learning": {"archs": ["self_attention", "conv_k3", "conv_k5", "dilated_conv_k2", "recurrent"],
                                  "distances": [4, 16], "n_test": 2000,
                                  "train": {"steps": 800, "batch_size": 64, "num_threads": 1,
                                            "schedule": "warmup_constant", "lr": 3e-3, "warmup": 30,
                                            "eval_every": 50, "eval_size": 512,
                                            "target_metric": "accuracy", "target_value": 0.99}},
                     "fast_distances": [16], "fast_train": {"steps": 400, "stop_at_target": False},
                     "deep": {"distances": []},
                     "helps": {"distances": [64], "steps": 800, "lr_grid": [1e-3, 3e-3, 1e-2], "extend": 1,
                               "tuning_seeds": 1},
                     "threads": 1},
        "full": {"structural": {"distances": [1, 2, 4, 8, 16, 32, 64, 128], "d_model": 16, "n_heads": 2,
                                "d_ff": 32},
                 "gradient": {"distances": [1, 2, 4, 8, 16, 32, 64, 128, 256], "batch": 32},
                 "model": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_layers": 2, "vocab": 16},
                 "learning": {"archs": ["self_attention", "conv_k3", "conv_k5", "dilated_conv_k2", "recurrent"],
                              "distances": [4, 16, 64, 128, 256], "n_test": 4000,
                              "train": {"steps": 5000, "batch_size": 64, "schedule": "warmup_constant",
                                        "lr": 3e-3, "warmup": 30, "eval_every": 50, "eval_size": 1024,
                                        "target_metric": "accuracy", "target_value": 0.99}},
                 "fast_distances": [16], "fast_train": {"steps": 400, "stop_at_target": False},
                 "deep": {"distances": [16, 64, 256]},
                 "helps": {"distances": [16, 64, 256], "steps": 5000, "lr_grid": [3e-4, 1e-3, 3e-3, 1e-2],
                           "extend": 1, "tuning_seeds": 2},
                 "threads": 2},
    },

    # Q2 (issue 11): a DecoderLM trained on markov_lm, measured per head at step 0 and at each checkpoint
    # (entropy, BOS sink mass, C5's resolution probe on n_fit / n_eval sequences, queries t >= 1).
    "Q2": {
        "smoke": {"task": {"name": "markov_lm", "vocab": 32, "seq_len": 32, "branching": 4, "repeat": True},
                  "model": {"d_model": 64, "n_heads": 4, "d_ff": 256, "n_layers": 2},
                  "train": {"steps": 500, "batch_size": 32, "num_threads": 1, "schedule": "warmup_constant",
                            "lr": 1e-3, "warmup": 50, "eval_every": 0, "eval_size": 256},
                  "checkpoints": [0, 25, 50, 100, 200, 350, 500],
                  "probe": {"n_fit": 128, "n_eval": 128, "fit_seed": 8800, "ridge": 1e-3}},
        "standard": {"seeds": 4,
                     "task": {"name": "markov_lm", "vocab": 32, "seq_len": 32, "branching": 4, "repeat": True},
                     "model": {"d_model": 64, "n_heads": 4, "d_ff": 256, "n_layers": 2},
                     "train": {"steps": 1500, "batch_size": 32, "num_threads": 1, "schedule": "warmup_constant",
                               "lr": 1e-3, "warmup": 100, "eval_every": 500, "eval_size": 512},
                     "checkpoints": [0, 25, 50, 100, 200, 400, 800, 1500],
                     "probe": {"n_fit": 256, "n_eval": 256, "fit_seed": 8800, "ridge": 1e-3}},
        "full": {"task": {"name": "markov_lm", "vocab": 64, "seq_len": 64, "branching": 4, "repeat": True},
                 "model": {"d_model": 128, "n_heads": 8, "d_ff": 512, "n_layers": 4},
                 "train": {"steps": 20000, "batch_size": 64, "num_threads": 1, "schedule": "warmup_constant",
                           "lr": 5e-4, "warmup": 500, "eval_every": 1000, "eval_size": 1024},
                 "checkpoints": [0, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000],
                 "probe": {"n_fit": 512, "n_eval": 512, "fit_seed": 8800, "ridge": 1e-3}},
    },
    # C5 (issue 7): multi-position retrieval, one attention layer + FFN at d_model 64, h varied (d_k = 64 / h),
    # on both bindings of harness.data.tasks.MultiPositionRetrieval. token: the task (marks fused into the
    # tokens; the paper's warmup schedule truncated at `steps`, issue 7's calibration): (a), and the single-head
    # entropy at each of single_head_marked (M = 2 from standard on: smoke has 90 s). position: slot = a fixed
    # position (where averaging can cost resolution): the resolution and sharpness criteria over heads, and (c) at
    # too_many_heads (d_k = 4). long_steps_factor: the long-budget single head of the framing (0: off).
    # probe: harness.measure.resolution's fit/eval sizes. num_threads 1: tiny models, shared 2-core machines (the probe
    # runs on it too). foreach: Adam's multi-tensor path, the same numbers as the loop on CPU, ~1 ms less a step.
    # position.primary_seeds: seeds of the position binding's h = 1 and h = 4 arms (resolution_gain, distinct_slots,
    # head_sharpness), when more than the run's. distinct_slots is a proportion of seeds: at 3 seeds even 3/3 cannot
    # reach p < 0.05 (exact binomial 1/8), at 8 the plus-four estimate of 8/8 decides at alpha / 3 (p 0.009); 25
    # from standard on (the entropy test, now reported, needs them: passes with ~0.95 there, ~0.3 at 3 seeds).
    # position.tuning (issue 17): every position arm at its own rate, chosen by held-out loss on `seeds` tuning seeds
    # over lr_grid (warmup_constant's rate). h = 1 and h = 4 want rates far apart (master seed 7, grid 1e-3..8e-3:
    # h = 1 chose its lowest point, h = 4 and 16 their highest), so the grids span 64x: smoke 4 points a factor 4
    # apart (the issue's >= 3 over 4x, at the cost of 4 points), standard/full 7 points a factor 2 apart (>= 5 over
    # 16x; they hold the shared rate 2e-3, so their tuning table also shows the fixed-rate comparison).
    # fast_seeds 5 (smoke): --fast's resolution_rises is one slope per seed; at 3 seeds its interval sat at 4-8x the
    # band but the t with 2 df held its predictive firmness at 0.82-0.88 in every cell (declared flaky); 5 seeds.
    "C5": {
        "smoke": {"task": {"seq_len": 16, "vocab": 16}, "model": {"d_model": 64, "d_ff": 256, "n_layers": 1},
                  "token": {"heads": [1, 4], "single_head_marked": [4],
                            "train": {"steps": 600, "batch_size": 64, "num_threads": 1, "foreach": True,
                                      "eval_every": 0, "eval_size": 512}},
                  "position": {"heads": [1, 4], "too_many_heads": 16, "primary_seeds": 8,
                               "tuning": {"lr_grid": [2.5e-4, 1e-3, 4e-3, 1.6e-2], "seeds": 2},
                               "train": {"steps": 400, "batch_size": 64, "num_threads": 1, "foreach": True,
                                         "schedule": "warmup_constant", "lr": 2e-3, "warmup": 50, "eval_every": 0,
                                         "eval_size": 512}},
                  "long_steps_factor": 0, "fast_seeds": 5,
                  "probe": {"n_fit": 2048, "n_eval": 1024, "fit_seed": 7700, "ridge": 1e-3}},
        "standard": {"task": {"seq_len": 16, "vocab": 16}, "model": {"d_model": 64, "d_ff": 256, "n_layers": 1},
                     "token": {"heads": [1, 2, 4, 8], "single_head_marked": [2, 4],
                               "train": {"steps": 600, "batch_size": 64, "num_threads": 1, "foreach": True,
                                         "eval_every": 100, "eval_size": 1024}},
                     "position": {"heads": [1, 2, 4, 8], "too_many_heads": 16, "primary_seeds": 16,
                                  "tuning": {"lr_grid": [2.5e-4, 5e-4, 1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2],
                                             "seeds": 1},
                                  "train": {"steps": 600, "batch_size": 64, "num_threads": 1, "foreach": True,
                                            "schedule": "warmup_constant", "lr": 2e-3, "warmup": 50,
                                            "eval_every": 100, "eval_size": 1024}},
                     "long_steps_factor": 3,
                     "probe": {"n_fit": 4096, "n_eval": 2048, "fit_seed": 7700, "ridge": 1e-3}},
        "full": {"task": {"seq_len": 16, "vocab": 16}, "model": {"d_model": 64, "d_ff": 256, "n_layers": 1},
                 "token": {"heads": [1, 2, 4, 8], "single_head_marked": [2, 4],
                           "train": {"steps": 600, "batch_size": 64, "num_threads": 1, "foreach": True,
                                     "eval_every": 100, "eval_size": 2048}},
                 "position": {"heads": [1, 2, 4, 8], "too_many_heads": 16, "primary_seeds": 25,
                              "tuning": {"lr_grid": [2.5e-4, 5e-4, 1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2],
                                         "seeds": 3},
                              "train": {"steps": 600, "batch_size": 64, "num_threads": 1, "foreach": True,
                                        "schedule": "warmup_constant", "lr": 2e-3, "warmup": 50, "eval_every": 100,
                                        "eval_size": 2048}},
                 "long_steps_factor": 5, "seeds": 10,
                 "probe": {"n_fit": 8192, "n_eval": 4096, "fit_seed": 7700, "ridge": 1e-3}},
    },
    # R3 (issue 9): forward+backward of one attention layer, dot (SDPA / plain matmul) vs additive.
    # ns: sequence lengths; criterion_n: where additive/dot >= 5 is tested; timing_seeds (optional): how many of the
    # seeds time the cells (default all; a dry run's is 1, DRY_RUN_CLAIM_CAPS); variants: from
    # harness.measure.bench.ATTENTION_VARIANTS (additive_chunked costs as much time as additive: standard/full only);
    # min_round_s / max_iterations: back-to-back calls per timed round of a cheap cell; reuse_profiled_s: a
    # cell whose memory-profiled call took this long reuses it as seed 0's timed round (profiler overhead is
    # per op); max_memory_fraction: skip a cell whose estimated peak exceeds this share of free memory
    # (additive at n=1024 needs ~35 GB: a GPU's, not the dev box's). threads: 1 on CPU, where 2 OpenMP threads
    # on a shared box made matmul 5-10x slower (spin-waiting) and the ratios meaningless. sweep_from: the shared
    # tuned sweep whose runs similar_quality (R3's precondition, reported) reads, memoised (issue 26).
    "R3": {
        "smoke": {"ns": [64, 128, 256], "criterion_n": 256, "batch": 8, "n_heads": 4, "d_k": 64, "seeds": 3,
                  "variants": ["dot_sdpa", "dot_matmul", "additive"], "additive_chunk": 16,
                  "min_round_s": 0.05, "max_iterations": 20, "reuse_profiled_s": 1.0, "threads": 1,
                  "max_memory_fraction": 0.5, "sweep_from": "C3"},
        "standard": {"ns": [64, 128, 256, 512], "criterion_n": 256, "batch": 8, "n_heads": 4, "d_k": 64,
                     "seeds": 3, "variants": ["dot_sdpa", "dot_matmul", "additive", "additive_chunked"],
                     "additive_chunk": 16, "min_round_s": 0.1, "max_iterations": 20, "reuse_profiled_s": 1.0,
                     "threads": 1, "max_memory_fraction": 0.5, "sweep_from": "C3"},
        "full": {"ns": [64, 128, 256, 512, 1024], "criterion_n": 256, "batch": 8, "n_heads": 4, "d_k": 64,
                 "seeds": 5, "variants": ["dot_sdpa", "dot_matmul", "additive", "additive_chunked"],
                 "additive_chunk": 16, "min_round_s": 0.2, "max_iterations": 100, "reuse_profiled_s": 1.0,
                 "threads": 2, "max_memory_fraction": 0.6, "sweep_from": "C3"},
    },
    # C4 (issue 5). iid: Var(q.k) of iid components, fresh draws per (distribution, seed, d_k). model: the default
    # encoder at init read through its taps, d_model = heads*d_k and a fixed d_model (Table 3 rows B), every layer.
    # alpha: scale d_k^-alpha on C3's key-value sweep (sweep_from: its block, d_k = its smallest and largest sweep
    # d_k; alpha 0 and 0.5 are C3's unscaled/scaled runs, memoised); smoke keeps three alphas to fit 3 minutes.
    # Each alpha at its own rate tuned with C3's tuning block on C3's tasks (issue 17; alpha 0 and 0.5 are C3's
    # runs). qk_control: alpha 0.5 with W_Q, W_K's rate x each multiplier (issue 17's grid {1/4, 1/2, 1, 2});
    # smoke at the large d_k only (where alpha matters) on 3 of the evaluation seeds, to fit the sweep worker.
    "C4": {
        "smoke": {"iid": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "n_samples": 12288},
                  "model": {"dims": [8, 16, 32, 64, 128, 256], "heads": 4, "fixed_d_model": 64, "n_layers": 2,
                            "batch": 8, "seq_len": 32, "draws": 3},
                  "alpha": {"sweep_from": "C3", "alphas": [0.0, 0.5, 1.0],
                            "qk_control": {"multipliers": [0.25, 0.5, 1.0, 2.0], "d_ks": "large", "seeds": 3}}},
        "standard": {"seeds": 6, "iid": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "n_samples": 32768},
                     "model": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "heads": 4, "fixed_d_model": 64,
                               "n_layers": 2, "batch": 16, "seq_len": 32, "draws": 2},
                     "alpha": {"sweep_from": "C3", "alphas": [0.0, 0.5, 0.75, 1.0],
                               "qk_control": {"multipliers": [0.25, 0.5, 1.0, 2.0], "d_ks": "large", "seeds": 3}}},
        "full": {"iid": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "n_samples": 131072},
                 "model": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "heads": 8, "fixed_d_model": 512,
                           "n_layers": 2, "batch": 16, "seq_len": 64, "draws": 4},
                 "alpha": {"sweep_from": "C3", "alphas": [0.0, 0.25, 0.5, 0.75, 1.0],
                           "qk_control": {"multipliers": [0.25, 0.5, 1.0, 2.0], "d_ks": "all"}}},
    },
    # R2 (issue 5): harness.measure.probes.saturation_check on the model's compatibility functions; dims: d_k grid;
    # min_slope: the log-log slope magnitude below which a trend is flat.
    "R2": {
        "smoke": {"dims": [8, 32, 128, 512], "n_keys": 64, "n_queries": 32, "batch": 8, "min_slope": 0.1},
        "standard": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "n_keys": 64, "n_queries": 32, "batch": 16,
                     "min_slope": 0.1},
        "full": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024, 2048], "n_keys": 128, "n_queries": 64, "batch": 16,
                 "min_slope": 0.1},
    },
    # Q1 (issue 11): QK-norm against 1/sqrt(d_k). Five arms (claims/test_q1_qk_norm.py ARMS) at a small and a
    # large d_k (d_model fixed), each over the learning rates `lrs` (constant after a linear warmup: Wortsman et
    # al. 2023 reproduce attention-logit growth at small scale by raising it), through harness.study.sweeps
    # (attention_variant_sweep, one call per lr; grad_steps = steps, so the max |logit| is read on every batch).
    # Smoke's 2 seeds: the paired scale_matters_with_qk_norm passes at firmness ~0.86 (3 would firm it, +50% time).
    "Q1": {
        "smoke": {"task": {"name": "kv_lookup", "n_pairs": 8, "n_values": 8},
                  "model": {"d_model": 32, "n_heads": 2, "d_v": 16, "d_ff": 64},
                  "train": {"steps": 120, "batch_size": 32, "schedule": "warmup_constant", "warmup": 20,
                            "eval_every": 0, "eval_size": 256},
                  "probe_size": 64, "d_ks": [8, 64], "lrs": [3e-3, 1e-2, 3e-2], "seeds": 2},
        "standard": {"task": {"name": "kv_lookup", "n_pairs": 8, "n_values": 8},
                     "model": {"d_model": 32, "n_heads": 2, "d_v": 16, "d_ff": 64},
                     "train": {"steps": 200, "batch_size": 32, "schedule": "warmup_constant", "warmup": 20,
                               "eval_every": 0, "eval_size": 512},
                     "probe_size": 128, "d_ks": [8, 64], "lrs": [1e-3, 3e-3, 1e-2, 3e-2, 1e-1], "seeds": 3},
        "full": {"task": {"name": "kv_lookup", "n_pairs": 16, "n_values": 16},
                 "model": {"d_model": 64, "n_heads": 2, "d_v": 32, "d_ff": 256},
                 "train": {"steps": 1000, "batch_size": 64, "schedule": "warmup_constant", "warmup": 100,
                           "eval_every": 0, "eval_size": 1024},
                 "probe_size": 256, "d_ks": [8, 64, 256], "lrs": [3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1],
                 "seeds": 8},
    },
    # Q3 (issue 11): the footnote's quantities through training, scaled and unscaled, at a small and a large d_k
    # (d_model fixed), read on `probe_size` held-out examples at each of `checkpoints` (and step 0); the last
    # checkpoint is the last step. Key-value lookup at a rate the scaled model learns it by the end.
    "Q3": {
        "smoke": {"task": {"name": "kv_lookup", "n_pairs": 8, "n_values": 8},
                  "model": {"d_model": 32, "n_heads": 2, "d_v": 16, "d_ff": 64, "n_encoder_layers": 2},
                  "train": {"steps": 150, "batch_size": 32, "schedule": "warmup_constant", "lr": 1e-2, "warmup": 20,
                            "eval_every": 0, "eval_size": 256},
                  "checkpoints": [25, 50, 100, 150], "probe_size": 256, "d_ks": [8, 64], "seeds": 3},
        "standard": {"task": {"name": "kv_lookup", "n_pairs": 8, "n_values": 8},
                     "model": {"d_model": 32, "n_heads": 2, "d_v": 16, "d_ff": 64, "n_encoder_layers": 2},
                     "train": {"steps": 400, "batch_size": 32, "schedule": "warmup_constant", "lr": 1e-2,
                               "warmup": 20, "eval_every": 0, "eval_size": 512},
                     "checkpoints": [25, 50, 100, 200, 300, 400], "probe_size": 512, "d_ks": [8, 16, 32, 64],
                     "seeds": 4},
        "full": {"task": {"name": "kv_lookup", "n_pairs": 16, "n_values": 16},
                 "model": {"d_model": 64, "n_heads": 2, "d_v": 32, "d_ff": 256, "n_encoder_layers": 2},
                 "train": {"steps": 3000, "batch_size": 64, "schedule": "warmup_constant", "lr": 3e-3,
                           "warmup": 100, "eval_every": 0, "eval_size": 1024},
                 "checkpoints": [50, 100, 250, 500, 1000, 2000, 3000], "probe_size": 1024,
                 "d_ks": [8, 16, 32, 64, 128, 256], "seeds": 8},
    },
    # C3 (issue 5): (a) the softmax of freshly initialised sweep models at probe_d_ks on probe_size held-out
    # examples (plus xavier-initialised unscaled attention, the mediator check); (b, c) harness.study.sweeps'
    # attention_variant_sweep of additive / unscaled / scaled dot at sweep_d_ks (smallest and largest are the
    # "small" and "large" d_k) on key-value lookup, one attention layer, d_model 64, one head, PyTorch default
    # init; grad_steps: K, the steps whose dL/dlogits (b) averages; threads: torch threads for the module's body
    # (the sweep's train block sets its own). R1 (b) and C4 (c) reuse this sweep.
    # 8 pairs, not the 16: with one head, scaled dot at d_k=512 plateaus near 0.78 held-out accuracy on
    # 16 pairs even at 1000 steps (measured), so steps-to-90% could not be compared; on 8 pairs it reaches 0.9 in
    # ~200 steps. Small d_k = 8: where the unscaled logit std at init is ~1 (var_q ~ var_k ~ 0.36 with PyTorch's
    # default init at d_model 64; at d_k = 32 it is already ~2.3), i.e. where the dot products are not yet large.
    # Smoke's large d_k is 256 (unscaled logit std ~8 at init, deep in saturation): at 512 scaled dot hovers at
    # 0.88-0.95 after 300 steps, so steps-to-90% was censored for one seed in three, and additive attention at 512
    # costs twice what it does at 256. standard/full train longer and keep 512.
    # seeds 5 at smoke (issue 10's specificity): at 3 seeds the verdict moved with the master seed (refuted,
    # refuted, inconclusive at master seeds 0, 1, 2): (c)'s small-d_k difference (additive ~0.13-0.17 ahead, Cohen's
    # d 3-5) gave p = 0.032 / 0.022 / 0.076 at Welch's ~2 degrees of freedom, and scaled-flat's gradient CI missed 0
    # by 0.005. At 5 seeds: p = 0.004 / 0.002 / 0.012 and every other criterion passed at all three master seeds
    # (C3 alone: 147-155 s against 89-100 s; on the sweep's xdist worker, which has slack). Issue 16 keeps 5: Holm
    # tests C3's first of 7 counted criteria at 0.05/7, where a 3-seed t interval is ~2.6x a 5-seed one.
    # foreach in every sweep train block: Adam's multi-tensor path, the same numbers bitwise as the loop on CPU,
    # ~15% less at d_k 8.
    # Issue 17: tuning: each (arm, d_k, task) at its own rate from a grid of `points` rates over `span`x centred on
    # the task's train lr (the fixed-lr table's shared rate) on `seeds` tuning seeds; a choice at an end of the grid
    # extends it by one grid step past that end, up to `extend` times (harness.study.tuning.tune: the widening decided on
    # the tuning seeds alone). Smoke 3 over 16x (steps of 4x), standard 5 over 16x (2x), full 7 over 64x (2x).
    # Why extension and not one wide grid: the optima differ by ~100x across arms (unscaled at kv d_k 256 wanted
    # <= 5e-4 while delayed copy's additive and scaled wanted >= 3.2e-2 in a 64x grid round 4e-3), and a grid wide
    # enough for all would train every arm at rates only one arm needs.
    # Centres: kv 4e-3 (smoke, 300 steps: additive and alpha = 1 kept improving up to 4e-3); delayed copy 1.6e-2
    # (smoke, 150 steps: its arms sat at 3.2e-2, the top of the 64x grid round 4e-3).
    # small_d_ks: the small-d_k equivalence grid and crossover (below 8 included; at smoke d_k 2 runs on delayed copy
    # only, ~0.6 s a run against ~4 s on key-value lookup, where its 22 runs cost ~90 s of the sweep worker's time;
    # standard too, since 2026-12-02; full runs the whole grid on both tasks). task2: the second task
    # (delayed copy: position-addressed, not content-addressed), smoke shrunk to fit the sweep worker's ~6.5 min
    # (d_model 32, 150 steps, length 8); its chance loss is ln 8.
    "C3": {
        "smoke": {"seeds": 5,
                  "probe_d_ks": [8, 16, 32, 64, 128, 256, 512], "probe_size": 64, "probe_xavier": True, "threads": 1,
                  "sweep_d_ks": [8, 256], "small_d_ks": [8],
                  "tuning": {"points": 3, "span": 16.0, "seeds": 2, "extend": 3},
                  "sweep": {"task": {"name": "kv_lookup", "n_pairs": 8},
                            "model": {"d_model": 64, "n_heads": 1, "d_v": 64, "d_ff": 256},
                            "train": {"steps": 300, "batch_size": 64, "foreach": True, "schedule": "warmup_constant",
                                      "lr": 4e-3, "warmup": 50, "num_threads": 1, "eval_every": 50, "eval_size": 256},
                            "grad_steps": 50, "target_accuracy": 0.9, "probe_size": 128},
                  "task2": {"sweep_d_ks": [8, 256], "small_d_ks": [2, 8],
                            "sweep": {"task": {"name": "delayed_copy", "d": 4, "vocab": 8, "n_out": 4},
                                      "model": {"d_model": 32, "n_heads": 1, "d_v": 32, "d_ff": 64},
                                      "train": {"steps": 150, "batch_size": 64, "foreach": True,
                                                "schedule": "warmup_constant", "lr": 1.6e-2, "warmup": 50,
                                                "num_threads": 1, "eval_every": 50, "eval_size": 256},
                                      "grad_steps": 50, "target_accuracy": 0.9, "probe_size": 128}}},
        "standard": {"seeds": 6,
                     "probe_d_ks": [8, 16, 32, 64, 128, 256, 512, 1024], "probe_size": 256, "probe_xavier": True,
                     "threads": 1,
                     "sweep_d_ks": [8, 512], "small_d_ks": [8],
                     "tuning": {"points": 3, "span": 4.0, "seeds": 1, "extend": 4},
                     "sweep": {"task": {"name": "kv_lookup", "n_pairs": 8},
                               "model": {"d_model": 64, "n_heads": 1, "d_v": 64, "d_ff": 256},
                               "train": {"steps": 400, "batch_size": 64, "foreach": True, "schedule": "warmup_constant",
                                         "lr": 4e-3, "warmup": 50, "num_threads": 1, "eval_every": 50,
                                         "eval_size": 512},
                               "grad_steps": 100, "target_accuracy": 0.9, "probe_size": 256},
                     "task2": {"sweep_d_ks": [8, 512], "small_d_ks": [2, 8],
                               "sweep": {"task": {"name": "delayed_copy", "d": 6, "vocab": 8, "n_out": 6},
                                         "model": {"d_model": 64, "n_heads": 1, "d_v": 64, "d_ff": 256},
                                         "train": {"steps": 250, "batch_size": 64, "foreach": True,
                                                   "schedule": "warmup_constant", "lr": 8e-3, "warmup": 50,
                                                   "num_threads": 1, "eval_every": 50, "eval_size": 512},
                                         "grad_steps": 100, "target_accuracy": 0.9, "probe_size": 256}}},
        "full": {"probe_d_ks": [8, 16, 32, 64, 128, 256, 512, 1024, 2048], "probe_size": 512, "probe_xavier": True,
                 "threads": 1,
                 "sweep_d_ks": [8, 32, 128, 512, 1024], "small_d_ks": [1, 2, 4, 8, 16],
                 "tuning": {"points": 7, "span": 64.0, "seeds": 3, "extend": 3},
                 "sweep": {"task": {"name": "kv_lookup", "n_pairs": 8},
                           "model": {"d_model": 64, "n_heads": 1, "d_v": 64, "d_ff": 256},
                           "train": {"steps": 2000, "batch_size": 64, "foreach": True, "schedule": "warmup_constant",
                                     "lr": 2e-3, "warmup": 50, "eval_every": 50, "eval_size": 2048},
                           "grad_steps": 200, "target_accuracy": 0.9, "probe_size": 1024},
                 "task2": {"sweep_d_ks": [8, 32, 128, 512, 1024], "small_d_ks": [1, 2, 4, 8, 16],
                           "sweep": {"task": {"name": "delayed_copy", "d": 8, "vocab": 16, "n_out": 8},
                                     "model": {"d_model": 64, "n_heads": 1, "d_v": 64, "d_ff": 256},
                                     "train": {"steps": 2000, "batch_size": 64, "foreach": True,
                                               "schedule": "warmup_constant", "lr": 2e-3, "warmup": 50,
                                               "eval_every": 50, "eval_size": 2048},
                                     "grad_steps": 200, "target_accuracy": 0.9, "probe_size": 1024}}},
    },
    # R1 smoke seeds 5: C3's smoke seeds, so the comparisons reuse every one of C3's runs (no training of their own
    # when run in C3's process) and are paired over 5 seeds, not 3.
    "R1": {
        "smoke": {"d_ks": [1, 8, 64, 512], "heads": [1, 4], "sweep_from": "C3", "threads": 1, "seeds": 5},
        "standard": {"d_ks": [1, 4, 8, 16, 64, 256, 512, 1024], "heads": [1, 2, 4, 8], "sweep_from": "C3",
                     "threads": 1, "seeds": 6},
        "full": {"d_ks": [1, 4, 8, 16, 64, 128, 256, 512, 1024, 2048], "heads": [1, 2, 4, 8, 16],
                 "sweep_from": "C3", "threads": 1},
    },
    # C1 (issue 8): the Transformer on held-out reverse / sort / number words (b), against a parameter-matched
    # LSTM encoder-decoder with attention on the same steps (c; smoke: number words only), and the
    # paper's base config on a user's corpus (d; full only, env ATTN_CLAIMS_CORPUS_TSV or _SRC/_TGT).
    # Runs stop at validation exact match stop_exact_match; test_size held-out examples the stop never saw
    # measure held-out loss (it decides, issue 16) and exact match. The paper's warmup schedule at d_model 64
    # (peak 6e-3 at warmup 400) collapsed reverse from 0.93 to 0.04 mid-run on 2 of 3 seeds; Adam 1e-3 after a
    # 100-step linear ramp did not. gate_*: exact match may drop 0.03, BLEU 3, steps to 95% may double (seed
    # noise on smoke).
    # smoke (issue 8's budget, 3 min; 301 s before, 118-155 s after on the 2-core dev box, one thread): reverse and
    # sort take batch 32 (~0.6x the step time of 64 for ~1.2x the steps) and Adam 3e-3 with a cosine decay to 0 at
    # the step cap (sort at a constant 1e-3 oscillated around 0.9 for 500-900 steps; now it stops at 375-425).
    # Number words keep the ramp to a constant 1e-3 (at batch 32 too) for both architectures (c): at the cosine
    # 3e-3 the LSTM halves its steps and stays 2.5x slower than the Transformer, but varies so much across seeds
    # that the 3-seed Welch test sat at p 0.03-0.06. The validation part (eval_size 384: at 512 the 9999 integers
    # left number words a 296-row test part) is scored teacher-forced (the greedy exact match, ~5x cheaper, so
    # every 25 steps); the test part is decoded greedily. fused: Adam's fused kernel.
    # tuning (issue 17): on each comparison task (lstm.tasks) each arch at its own rate of tuning.<arch>.lr_grid (the
    # task's schedule, its lr replaced), chosen on `seeds` tuning seeds by mean steps to 95%. Smoke grids from
    # tuning seeds 500000-1 on number words (mean steps to 95%): the Transformer 1e-3 125, 1.5e-3 125, 2e-3 100,
    # 3e-3 100, 4e-3 88, 6e-3 75, 8e-3 325 (a cliff: 275-375); the LSTM 1e-3 500, 2e-3 325, 4e-3 238, 5.5e-3 200,
    # 8e-3 175, 1.1e-2 163, 1.6e-2 175, 2.2e-2 200, 3.2e-2 238, 6.4e-2 never (1000). The LSTM's optimum is a flat
    # 8e-3..1.6e-2 (a 3-point grid there put the choice on an edge by the loss tie-break), so 4 points over 8x.
    # The Transformer's too: on 2e-3..8e-3, master seed 2's tuning seeds chose 2e-3 (100 steps against 175 at
    # 4e-3), an edge; with 1e-3 (138 there) every master seed 0-2 chooses an interior rate (transformer 4e-3, 4e-3,
    # 2e-3; lstm 1.6e-2, 8e-3, 1.6e-2). The grids share 4e-3 and 8e-3, which the fixed-rate table (one shared
    # rate, reported) reads. Standard/full: >= 5 points over 16x around the same optima (scaled down by the full
    # model's lower rate), not yet run.
    # C1 (issue 26): every run trains its fixed budget (no early stop: the quality comparison and generalisation are
    # read at that budget); both architectures tuned by validation loss at it. Smoke runs reverse and number words
    # (both compared with the LSTM: two tasks), 300 steps each, a 3-point grid per arm that extends up to 4 steps a
    # side while the choice sits at an end (as the sweep's; still at an end: invalid), one tuning seed (measured
    # 2026-12-01, one thread: 100 steps of reverse 5.4 s Transformer / 2.9 s LSTM, of number words 2.4 / 1.7 s);
    # sort runs in full only. stop_exact_match is kept for older readers of the block.
    # Standard (issue 26's 45-minute run): the smoke tasks and grids at longer budgets, 5 seeds, one tuning seed
    # (estimated from the smoke step times: ~8 runs per arm and task, ~12 min of one worker).
    "C1": {
        "smoke": {"seeds": 3, "tasks_run": ["reverse", "number_words_de"],
                  "model": {"d_model": 64, "n_heads": 4, "d_ff": 256, "n_encoder_layers": 2, "n_decoder_layers": 2},
                  "train": {"steps": 300, "batch_size": 32, "schedule": "warmup_cosine", "lr": 3e-3,
                            "warmup": 60, "eval_every": 25, "eval_size": 384, "eval_decode": "teacher_forced",
                            "fused": True, "num_threads": 1},
                  "stop_exact_match": 0.98, "target": 0.95, "test_size": 512,
                  "tasks": {"reverse": {"task": {"vocab": 20, "min_len": 6, "max_len": 12}},
                            "sort": {"task": {"vocab": 20, "min_len": 6, "max_len": 12}, "train": {"steps": 450}},
                            "number_words_de": {"task": {"max_n": 9999},
                                                "train": {"schedule": "warmup_constant", "lr": 1e-3, "warmup": 100,
                                                          "steps": 300}}},
                  "lstm": {"tasks": ["reverse", "number_words_de"], "widths": list(range(32, 257, 4))},
                  "tuning": {"seeds": 1, "extend": 4, "transformer": {"lr_grid": [1.5e-3, 3e-3, 6e-3]},
                             "lstm": {"lr_grid": [6e-3, 1.2e-2, 2.4e-2]}},
                  "fast": {"tasks": ["reverse"], "train": {}},
                  "gate_exact_match": 0.03, "gate_bleu": 3.0, "gate_steps_relative": 1.0,
                  "corpus": None},
        "standard": {"seeds": 3, "tasks_run": ["reverse", "number_words_de"],
                     "model": {"d_model": 64, "n_heads": 4, "d_ff": 256, "n_encoder_layers": 2,
                               "n_decoder_layers": 2},
                     "train": {"steps": 1200, "batch_size": 32, "schedule": "warmup_cosine", "lr": 3e-3,
                               "warmup": 100, "eval_every": 50, "eval_size": 512, "eval_decode": "teacher_forced",
                               "fused": True, "num_threads": 1},
                     "stop_exact_match": 0.98, "target": 0.95, "test_size": 1000,
                     "tasks": _c1_long_tasks(reverse={"steps": 800}, sort={"steps": 1400},
                                             number_words_de={"steps": 600}),
                     "lstm": {"tasks": ["reverse", "number_words_de"], "widths": list(range(32, 257, 4))},
                     "tuning": {"seeds": 1, "extend": 4, "transformer": {"lr_grid": [1.5e-3, 3e-3, 6e-3]},
                                "lstm": {"lr_grid": [6e-3, 1.2e-2, 2.4e-2]}},
                     "fast": {"tasks": ["reverse"], "train": {"steps": 500}},
                     "gate_exact_match": 0.01, "gate_bleu": 1.0, "gate_steps_relative": 0.5,
                     "corpus": None},
        "full": {"seeds": 5,
                 "model": {"d_model": 128, "n_heads": 8, "d_ff": 512, "n_encoder_layers": 3, "n_decoder_layers": 3},
                 "train": {"steps": 20000, "batch_size": 128, "schedule": "warmup_constant", "lr": 5e-4,
                           "warmup": 500, "eval_every": 250, "eval_size": 1000},
                 "stop_exact_match": 0.995, "target": 0.95, "test_size": 5000,
                 "tasks": _c1_long_tasks(),
                 "lstm": {"tasks": ["reverse", "sort", "number_words_de"], "widths": list(range(64, 513, 8))},
                 "tuning": {"seeds": 2, "extend": 4, "transformer": {"lr_grid": [2.5e-4, 5e-4, 1e-3, 2e-3, 4e-3]},
                            "lstm": {"lr_grid": [1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2]}},
                 "fast": {"tasks": ["reverse"], "train": {"steps": 500}},
                 "gate_exact_match": 0.01, "gate_bleu": 1.0, "gate_steps_relative": 0.5,
                 # step_time_vs_length (counted under --device cuda only): reverse at n = 16..256 (5 points, a
                 # 16x range for the slope) at 8192 source tokens per batch (512 rows at 16, 32 at 256), the median
                 # of 20 timed steps after 5 warmup steps (cuDNN and allocator warm), 5 repeats (the slope's unit)
                 "step_time": {"lengths": [16, 32, 64, 128, 256], "tokens_per_batch": 8192, "repeats": 5,
                               "steps": 20, "warmup_steps": 5},
                 # the paper's base model (Table 3) and schedule (5.3), label smoothing 0.1 (5.4); bleu_min: a
                 # threshold to count the criterion (None: BLEU is reported, no universal bar for a user's corpus)
                 "corpus": {"seeds": 1, "heldout_fraction": 0.01, "max_len": 100, "shared_vocab": True,
                            "max_vocab": 37000, "test_size": 3000, "bleu_min": None, "model": {},
                            "train": {"steps": 100000, "batch_size": 128, "schedule": "warmup", "warmup": 4000,
                                      "label_smoothing": 0.1, "eval_every": 5000, "eval_size": 500,
                                      "bf16": True}}},
    },
    # M0 (issue 8, issue 10): structural model checks on freshly built float64 models (causal mask, distinct
    # heads, the paper's sinusoid, padding ignored); seconds on every profile.
    "M0": {
        "smoke": {"seeds": 3, "model": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_encoder_layers": 2,
                                        "n_decoder_layers": 2}},
        "standard": {"seeds": 5, "model": {"d_model": 64, "n_heads": 8, "d_ff": 128, "n_encoder_layers": 2,
                                           "n_decoder_layers": 2}},
        "full": {"seeds": 5, "model": {"d_model": 64, "n_heads": 8, "d_ff": 128, "n_encoder_layers": 3,
                                       "n_decoder_layers": 3}},
    },
    # The probe-level trial of a user's kernel (issue 27, harness/measure/kernel_probes.py; M0, R1, R2, R3 with --attention):
    # cases Hypothesis draws for R1's exactness (a failing one is shrunk; more cases, more shapes seen), the d_k grid
    # of the scale law and the saturation check (the paper's 8..256), query and key counts of the weight readout,
    # and R3's timed sizes (the suite's R3 layer: batch 8, h 4, d_k 64). Target: <= 60 s a kernel on 2 CPU cores.
    # training: R1's kernel_trains_as_reference (not under --fast), the kernel and the reference as two arms of the
    # tuned sweep of `sweep_from`'s tasks (C3's key-value lookup and delayed copy) at its smallest and largest d_k:
    # `seeds` evaluation seeds (the first of R1's), `tuning` as C3's block (points over span round the task's rate,
    # tuning seeds, extensions past an end), `train`: per task, overrides of C3's train block (none: C3's steps).
    # Smoke is small so that `pytest --attention ... --profile smoke -n 2` stays well inside 10 minutes: 3 seeds (R1
    # has 5) and one tuning seed (C3 has 2), C3's smoke steps (300 key-value lookup, 150 delayed copy); 2 arms x 2
    # tasks x 2 d_k, 6-9 runs each. Standard and full: C3's tuning blocks and steps, 5 seeds.
    "kernel_trial": {
        "smoke": {"cases": 60, "max_len": 9, "d_ks": [8, 16, 32, 64, 128, 256], "n_queries": 16, "n_keys": 32,
                  "seeds": 3, "speed": {"sizes": [[8, 4, 128, 64]], "reps": 3},
                  "training": {"sweep_from": "C3", "seeds": 3,
                               "tuning": {"points": 3, "span": 16.0, "seeds": 1, "extend": 3}, "train": {}}},
        "standard": {"cases": 200, "max_len": 17, "d_ks": [8, 16, 32, 64, 128, 256], "n_queries": 32, "n_keys": 64,
                     "seeds": 5, "speed": {"sizes": [[8, 4, 128, 64], [8, 4, 256, 64]], "reps": 5},
                     "training": {"sweep_from": "C3", "seeds": 5,
                                  "tuning": {"points": 5, "span": 16.0, "seeds": 2, "extend": 3}, "train": {}}},
        "full": {"cases": 500, "max_len": 33, "d_ks": [8, 16, 32, 64, 128, 256], "n_queries": 32, "n_keys": 64,
                 "seeds": 5, "speed": {"sizes": [[8, 4, 256, 64], [8, 4, 1024, 64]], "reps": 5},
                 "training": {"sweep_from": "C3", "seeds": 5,
                              "tuning": {"points": 7, "span": 64.0, "seeds": 3, "extend": 3}, "train": {}}},
    },
}


# --dry-run (issue 18): counts of things, never sizes of configs. Repetitions that are not training steps (R3's
# timing rounds) and the number of examples evaluated, probed or drawn: at full, C1's greedy decoding of 5000 test
# and 1000 validation examples per run (the LSTM re-reads its prefix every token) was 439 of C1's 462 s. 32 examples
# run every evaluation, probe and split path at the real shapes per example; C2's n_test keeps 128 (its
# heldout_slices needs 100 a slice). C4 (b) at full builds encoders of d_model 8 x 1024 (537M parameters): its
# draws (models per seed and d_k) repeat one config, so 1, and its model.batch counts the random sequences read
# (not a training batch), so 2 (538 s of C4's dry run before these two caps). A key "parent.key" caps only there.
# Grids of rates (not configs: the same path at another number) keep their two ends; the shared sweep's tuning grid
# (`tuning.points` rates round the shared one) keeps 3, and grows past an end at most once (`tuning.extend`): at full,
# 7 points and up to 3 extensions trained ~4x the runs the dry run needs to reach every path of the sweep.
DRY_RUN_CAPS: dict[str, float] = {"max_iterations": 2, "min_round_s": 0.01,
                                  "eval_size": 32, "test_size": 32, "n_test": 128, "probe_size": 32,
                                  "n_fit": 32, "n_eval": 32, "n_samples": 1024, "draws": 1, "model.batch": 2,
                                  "tuning.points": 3, "tuning.extend": 1}
DRY_RUN_GRID_ENDS = ("lrs", "lr_factors", "lr_grid")
# Per claim, counts a dry run sets lower than DRY_RUN_CAPS would (a key the block lacks is added). R3 times its cells
# on `timing_seeds` of its seeds (default: all of them), and at real sizes one forward+backward of additive attention
# is seconds (26 s at n = 512, about 100 s chunked at n = 1024 on the 2-core box, 2026-12-01): on one timing seed a slow
# cell's memory-profiled call is its only call. Those calls were ~60% of the two dry runs' time in CI. One timing seed
# leaves R3's timing criteria unrecorded, which a dry run does not decide anyway; similar_quality keeps both seeds.
DRY_RUN_CLAIM_CAPS: dict[str, dict[str, int]] = {"R3": {"timing_seeds": 1}}
# C1 (d) in a dry run without a user corpus: pairs of harness.data.language.generated_parallel_corpus (the full profile
# holds out 1% by hash: ~10 held-out pairs to decode and score with BLEU)
DRY_RUN_CORPUS_PAIRS = 1000


#: the claims that judge a kernel under --attention (issue 27); every other claim module is skipped with its reason,
#: so a user reads one table of which claims ran on their kernel
KERNEL_TRIAL_CLAIMS = ("M0", "R1", "R2", "R3", "C1", "C5")
KERNEL_NOT_YET = {
    "C2": "its LSTM and conv baselines and its float64 Jacobian probes are not about a user's kernel",
    "C3": "its part (a) on the kernel is R2's saturation check through the kernel, and (b, c) are R1's "
          "kernel_trains_as_reference (the kernel as an arm of C3's tuned sweep); its additive and unscaled arms "
          "are the project's own",
    "C4": "its part (a) on the kernel is R1's kernel_scale_exponent and kernel_logit_variance (the 1/sqrt(d_k) law "
          "read out of the black box); its alpha sweep sets the scale inside the project's own attention",
    "Q1": "QK-norm stays the project's own attention, not the kernel's",
    "*": "its measurements read the logits/weights taps inside the attention, which a black-box kernel does not "
         "expose, or train arms the kernel is not part of (docs/attention-trial.md)",
}


@dataclass(frozen=True)
class Profile:
    name: str
    n_seeds: int
    blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    dry: bool = False   # a dry run's profile (Profile.dry_run): the numbers mean nothing, every path must run

    def dry_run(self, steps: int = 2, seeds: int = 2) -> "Profile":
        """This profile at its real sizes but a few steps and seeds (issue 18's dry run): every ``steps`` value is
        capped at ``steps``, every ``*seeds`` count at ``seeds``, repetition and example counts at ``DRY_RUN_CAPS``
        (and a claim's at ``DRY_RUN_CLAIM_CAPS``),
        learning-rate grids keep their two ends, and ``checkpoints`` keep those below the new step count plus the
        last. Model sizes, sequence lengths, batch sizes, d_k grids, arms and tasks are untouched, so every config
        is built and trained at its real size."""
        caps = {"steps": steps, **DRY_RUN_CAPS}

        def shrink(node: Any, key: str = "", parent: str = "") -> Any:
            if isinstance(node, dict):
                return {k: shrink(v, k, key) for k, v in node.items()}
            if isinstance(node, list) and key == "checkpoints":
                return sorted({c for c in node if isinstance(c, int) and c < steps} | {steps})
            if isinstance(node, list) and key in DRY_RUN_GRID_ENDS and len(node) > 2:
                return [node[0], node[-1]]
            if isinstance(node, list):
                return [shrink(v) for v in node]
            if isinstance(node, (int, float)) and not isinstance(node, bool):
                cap = caps.get(f"{parent}.{key}", caps.get(key))
                if cap is not None:
                    return min(node, cap)
                if key.endswith("seeds") and isinstance(node, int):
                    return min(node, seeds)
            return node
        blocks = {cid: shrink(block) for cid, block in self.blocks.items()}
        for cid, capped in DRY_RUN_CLAIM_CAPS.items():
            for key, cap in capped.items():
                if cid in blocks:
                    blocks[cid][key] = min(int(blocks[cid].get(key, cap)), cap)
        return Profile(name=self.name, n_seeds=min(self.n_seeds, seeds), blocks=blocks, dry=True)

    def seed_count(self, claim_id: str | None, fast: bool = False) -> int:
        """How many seeds ``claim_id`` runs: its block's ``fast_seeds`` under ``--fast`` (a fast criterion that must
        be decided with room on any machine's floating-point path), else its ``seeds``, else the profile's count."""
        block = self.blocks.get(claim_id, {}) if claim_id else {}
        n = block.get("fast_seeds") if fast and "fast_seeds" in block else block.get("seeds")
        return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else self.n_seeds

    def claim(self, claim_id: str) -> dict[str, Any]:
        """The budget block for ``claim_id`` in this profile (a copy: callers may not mutate it)."""
        try:
            return copy.deepcopy(self.blocks[claim_id])
        except KeyError:
            raise KeyError(f"profile {self.name!r} has no budget block for claim {claim_id!r}; "
                           f"add one to harness/profiles/__init__.py (known: {sorted(self.blocks)})") from None


def get_profile(name: str, n_seeds: int | None = None) -> Profile:
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r}; valid choices: {', '.join(PROFILE_NAMES)}")
    if n_seeds is not None and n_seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {n_seeds}")
    blocks = {cid: per[name] for cid, per in CLAIMS.items() if name in per}
    return Profile(name=name, n_seeds=n_seeds or DEFAULT_SEEDS[name], blocks=blocks)


# Expected wall time (s) of each claim module, per profile, on the 2-core CPU box under `-n 2 --dist loadgroup`
# (issue 18). A report, not a timed test: the terminal summary and `python -m harness.report --times` print the
# measured time beside it. Smoke: the last clean-clone baseline run, rounded up by ~20%. None: not measured yet.
# Smoke re-measured 2026-12-01 after issue 17's tuning stages (clean clone, quiet box, 6 min 17 s in all): C1 118 s,
# C3 236, C4 84, C5 109 (the others under their earlier budgets, kept). Re-measured after issue 26 (the baseline
# run, 8 min 53 s in all): C1 190 s, C2 73, C3 348, C4 109, C5 118, Q1 57, Q2 44, R3 23, Q3 21; budgets ~20% above. Standard: the clean-clone run of 2026-12-01
# (39 min 37 s in all: C1 994 s, C3 912, C4 765, C2 492, C5 476, Q1 226, R3 185, Q2 100, Q3 96, R1 10, R2 6, M0 1).
# Standard re-measured after issue 26's cuts (clean clone of 3dae7ab, the 2-core AMD EPYC box, 55 min 17 s): C3 1636 s,
# C1 1221, C4 1006, C2 885, C5 674, Q1 321, Q2 236, R3 221, Q3 180, R1 14, R2 14, M0 3; budgets ~20% above. After the
# second cuts (clean clone of 6c2dc50, 50 min 22 s): C3 1297, C1 984, C2 878, C4 820, C5 706, Q1 257, R3 237, Q2 203,
# Q3 174, R2 14, R1 11, M0 3. Smoke re-set from the clean-clone CI run of 9fd2d43 (2026-12-02, 12 min 38 s; the 8 min
# 53 s run predates C2's (e) and R3's similar_quality): C3 492 s, C1 277, C5 190, C4 162, C2 147, Q1 67, Q2 52, R3 27,
# Q3 26, R1 6, R2 3, M0 1; ~10% above (the longest-first order is unchanged).
WALL_BUDGET_S: dict[str, dict[str, float | None]] = {
    "smoke": {"C1": 305, "C2": 160, "C3": 540, "C4": 180, "C5": 210, "R1": 7, "R2": 5, "R3": 32, "Q1": 75,
              "Q2": 60, "Q3": 30, "M0": 5},
    "standard": {"C1": 1180, "C2": 1050, "C3": 1560, "C4": 985, "C5": 850, "R1": 15, "R2": 17, "R3": 285, "Q1": 310,
                 "Q2": 245, "Q3": 210, "M0": 5},
    "full": {},
}


# The same for `--dry-run` (CI runs the standard and full dry runs): measured 2026-12-01 on the 2-core box with
# `-n 2 --dist loadgroup` (standard 94 s, full 258 s in all), rounded up by ~20%. The plugin also starts the longest
# modules first by these numbers. R3 is the floor: additive attention at its real n (512; chunked at 1024 in full).
DRY_RUN_WALL_BUDGET_S: dict[str, dict[str, float | None]] = {
    "smoke": {},
    "standard": {"C1": 15, "C2": 10, "C3": 20, "C4": 20, "C5": 5, "R1": 6, "R2": 5, "R3": 90, "Q1": 3, "Q2": 2,
                 "Q3": 3, "M0": 1},
    "full": {"C1": 75, "C2": 50, "C3": 70, "C4": 85, "C5": 5, "R1": 15, "R2": 23, "R3": 245, "Q1": 8, "Q2": 5,
             "Q3": 6, "M0": 1},
}


# Under --attention (issue 27) the claims that judge a kernel do other work than on our module (R1 trains the kernel
# as an arm of the tuned sweep), so their module budgets do not apply: these are a kernel trial's, None where not
# measured yet.
# Smoke: `pytest --profile smoke -n 2 --dist loadgroup --attention examples.attention.sdpa_wrapper:attention` from
# the repository, 2026-12-01 on the 2-core AMD EPYC box, 5 min 56 s in all (C5 186 s, R1 146 s with its training arm,
# the probe-level M0, R2, R3 under a second each); ~20% above. C1 (judging kernels since 2026-12-02): 254 s in the
# same command (6 min 24 s in all; C5 158 s, R1 118 s), ~10% above.
KERNEL_TRIAL_WALL_BUDGET_S: dict[str, dict[str, float | None]] = {
    "smoke": {"C1": 280, "C5": 225, "R1": 175, "R2": 5, "R3": 5, "M0": 5}, "standard": {}, "full": {}}


def wall_budget(profile: str, claim_id: str, dry: bool = False, attention: bool = False) -> float | None:
    """The expected wall time of ``claim_id`` under ``profile`` (its dry run's when ``dry``; a kernel trial's when
    ``attention``, dry or not; None when not stated)."""
    if attention:
        return None if dry else KERNEL_TRIAL_WALL_BUDGET_S.get(profile, {}).get(claim_id)
    return (DRY_RUN_WALL_BUDGET_S if dry else WALL_BUDGET_S).get(profile, {}).get(claim_id)
