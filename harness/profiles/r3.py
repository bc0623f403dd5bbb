"""R3's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_r3_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import overrides

# R3 (issue 9): forward+backward of one attention layer, dot (SDPA / plain matmul) vs additive.
# ns: sequence lengths; criterion_n: where additive/dot >= 5 is tested; timing_seeds (optional): how many of the
# seeds time the cells (default all; a dry run's is 1, DRY_RUN_CLAIM_CAPS); variants: from
# harness.measure.bench.ATTENTION_VARIANTS (additive_chunked costs as much time as additive: standard/full only);
# min_round_s / max_iterations: back-to-back calls per timed round of a cheap cell; reuse_profiled_s: a
# cell whose memory-profiled call took this long reuses it as seed 0's timed round (profiler overhead is
# per op); max_memory_fraction: skip a cell whose estimated peak exceeds this share of free memory
# (additive at n=1024 needs ~35 GB: a GPU's, not the dev box's). threads: 1 on CPU, where 2 OpenMP threads
# on a shared box made matmul 5-10x slower (spin-waiting) and the ratios meaningless. sweep_from: the shared
# tuned sweep (harness/profiles/sweep.py) whose runs similar_quality (R3's precondition, reported) reads, memoised
# (issue 26).
SMOKE = {"ns": [64, 128, 256], "criterion_n": 256, "batch": 8, "n_heads": 4, "d_k": 64, "seeds": 3,
         "variants": ["dot_sdpa", "dot_matmul", "additive"], "additive_chunk": 16, "min_round_s": 0.05,
         "max_iterations": 20, "reuse_profiled_s": 1.0, "threads": 1, "max_memory_fraction": 0.5,
         "sweep_from": "sweep"}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"ns": [64, 128, 256, 512],
                                     "variants": ["dot_sdpa", "dot_matmul", "additive", "additive_chunked"],
                                     "min_round_s": 0.1}),
           "full": overrides(SMOKE, {"ns": [64, 128, 256, 512, 1024], "seeds": 5,
                                 "variants": ["dot_sdpa", "dot_matmul", "additive", "additive_chunked"],
                                 "min_round_s": 0.2, "max_iterations": 100, "threads": 2,
                                 "max_memory_fraction": 0.6})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 32, "standard": 285}
DRY_RUN_WALL_BUDGET_S = {"standard": 90, "full": 245}
#: counts a dry run sets lower than harness.profiles.DRY_RUN_CAPS would
DRY_RUN_CAPS = {"timing_seeds": 1}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
REFUTED_BY_FAULTS = ()

#: under --attention this claim judges the kernel
KERNEL_TRIAL = True
KERNEL_TRIAL_WALL_BUDGET_S = {"smoke": 5}
