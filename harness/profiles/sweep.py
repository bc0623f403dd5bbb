"""The shared tuned sweep's numbers: the attention sweep (harness.study.sweeps, tuned by
harness.study.tuning) that C3, C4, R1, R3 and the kernel trial all train through. Its own block, named by each:
C3's profile file merges it into C3's block (C3 judges the sweep), the others name it as ``"sweep_from": "sweep"``
and read it as ``profile.claim("sweep")``. A number here moves every claim that names it, and their runs are one
set of runs (the sweep's in-process memo keys on these numbers)."""
from harness.profiles.merge import DROP, overrides

# Issue 5: harness.study.sweeps' attention_sweep of additive / unscaled / scaled dot at sweep_d_ks (smallest
# and largest are the "small" and "large" d_k) on key-value lookup, one attention layer, d_model 64, one head,
# PyTorch default init; grad_steps: K, the steps whose dL/dlogits C3 (b) averages. C3 (b, c), R1 (b), C4 (c), R3's
# similar_quality and the kernel trial's training arm read it.
# 8 pairs, not the 16: with one head, scaled dot at d_k=512 plateaus near 0.78 held-out accuracy on
# 16 pairs even at 1000 steps (measured), so steps-to-90% could not be compared; on 8 pairs it reaches 0.9 in
# ~200 steps. Small d_k = 8: where the unscaled logit std at init is ~1 (var_q ~ var_k ~ 0.36 with PyTorch's
# default init at d_model 64; at d_k = 32 it is already ~2.3), i.e. where the dot products are not yet large.
# Smoke's large d_k is 256 (unscaled logit std ~8 at init, deep in saturation): at 512 scaled dot hovers at
# 0.88-0.95 after 300 steps, so steps-to-90% was censored for one seed in three, and additive attention at 512
# costs twice what it does at 256. standard/full train longer and keep 512.
# stack (issue 57, a "sweep" block key, unset = 1): seeds per training step (harness.train.stacked). Unset on the
# CPU profiles: on the 2-core box stacking was no faster (benchmarks/stacked_seeds.py: 0.63-1.28x by arm and k, the
# additive arm slower at every k), and a stacked run differs from the loop's by float32 rounding. Full (a GPU) stacks
# 8 seeds a step: a one-layer d_model-64 model is bound by kernel launches there, not arithmetic. Set before any GPU
# measurement; scripts/gpu_check.sh prints the ratio on the lent GPU (benchmarks/stacked_seeds.py --device cuda).
# foreach in every sweep train block: Adam's multi-tensor path, the same numbers bitwise as the loop on CPU,
# ~15% less at d_k 8; num_threads: the train block's torch threads.
# Issue 17: tuning: each (arm, d_k, task) at its own rate from a grid of `points` rates over `span`x centred on
# the task's train lr (the fixed-lr table's shared rate) on `seeds` tuning seeds; a choice at an end of the grid
# extends it by one grid step past that end, up to `extend` times (harness.study.tuning.tune: the widening decided on
# the tuning seeds alone). Smoke 3 over 16x (steps of 4x); standard keeps smoke's 3 points over 4x (steps of 2x)
# on 1 tuning seed with up to 4 extensions; full 7 over 64x (2x).
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
SMOKE = {"sweep_d_ks": [8, 256], "small_d_ks": [8],
         "tuning": {"points": 3, "span": 16.0, "seeds": 2, "extend": 3},
         "sweep": {"task": {"name": "kv_lookup", "n_pairs": 8},
                   "model": {"d_model": 64, "n_heads": 1, "d_v": 64, "d_ff": 256},
                   "train": {"steps": 300, "batch_size": 64, "foreach": True, "schedule": "warmup_constant",
                             "lr": 0.004, "warmup": 50, "num_threads": 1, "eval_every": 50, "eval_size": 256},
                   "grad_steps": 50, "target_accuracy": 0.9, "probe_size": 128},
         "task2": {"sweep_d_ks": [8, 256], "small_d_ks": [2, 8],
                   "sweep": {"task": {"name": "delayed_copy", "d": 4, "vocab": 8, "n_out": 4},
                             "model": {"d_model": 32, "n_heads": 1, "d_v": 32, "d_ff": 64},
                             "train": {"steps": 150, "batch_size": 64, "foreach": True,
                                       "schedule": "warmup_constant", "lr": 0.016, "warmup": 50, "num_threads": 1,
                                       "eval_every": 50, "eval_size": 256},
                             "grad_steps": 50, "target_accuracy": 0.9, "probe_size": 128}}}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"sweep_d_ks": [8, 512],
                                     "tuning": {"span": 4.0, "seeds": 1, "extend": 4},
                                     "sweep": {"train": {"steps": 400, "eval_size": 512}, "grad_steps": 100,
                                               "probe_size": 256},
                                     "task2": {"sweep_d_ks": [8, 512],
                                               "sweep": {"task": {"d": 6, "n_out": 6},
                                                         "model": {"d_model": 64, "d_v": 64, "d_ff": 256},
                                                         "train": {"steps": 250, "lr": 0.008, "eval_size": 512},
                                                         "grad_steps": 100, "probe_size": 256}}}),
           "full": overrides(SMOKE, {"sweep_d_ks": [8, 32, 128, 512, 1024], "small_d_ks": [1, 2, 4, 8, 16],
                                 "tuning": {"points": 7, "span": 64.0, "seeds": 3},
                                 "sweep": {"train": {"steps": 2000, "lr": 0.002, "eval_size": 2048,
                                                     "num_threads": DROP},
                                           "grad_steps": 200, "probe_size": 1024, "stack": 8},
                                 "task2": {"sweep_d_ks": [8, 32, 128, 512, 1024], "small_d_ks": [1, 2, 4, 8, 16],
                                           "sweep": {"task": {"d": 8, "vocab": 16, "n_out": 8},
                                                     "model": {"d_model": 64, "d_v": 64, "d_ff": 256},
                                                     "train": {"steps": 2000, "lr": 0.002, "eval_size": 2048,
                                                               "num_threads": DROP},
                                                     "grad_steps": 200, "probe_size": 1024, "stack": 8}}})}
