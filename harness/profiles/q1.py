"""Q1's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_q1_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import overrides

# Q1 (issue 11): QK-norm against 1/sqrt(d_k). Five arms (claims/test_q1_qk_norm.py ARMS) at a small and a
# large d_k (d_model fixed), each over the learning rates `lrs` (constant after a linear warmup: Wortsman et
# al. 2023 reproduce attention-logit growth at small scale by raising it), through harness.study.sweeps
# (attention_variant_sweep, one call per lr; grad_steps = steps, so the max |logit| is read on every batch).
# Smoke's 2 seeds: the paired scale_matters_with_qk_norm passes at firmness ~0.86 (3 would firm it, +50% time).
SMOKE = {"task": {"name": "kv_lookup", "n_pairs": 8, "n_values": 8},
         "model": {"d_model": 32, "n_heads": 2, "d_v": 16, "d_ff": 64},
         "train": {"steps": 120, "batch_size": 32, "schedule": "warmup_constant", "warmup": 20, "eval_every": 0,
                   "eval_size": 256},
         "probe_size": 64, "d_ks": [8, 64], "lrs": [0.003, 0.01, 0.03], "seeds": 2}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"train": {"steps": 200, "eval_size": 512}, "probe_size": 128,
                                     "lrs": [0.001, 0.003, 0.01, 0.03, 0.1], "seeds": 3}),
           "full": overrides(SMOKE, {"task": {"n_pairs": 16, "n_values": 16},
                                 "model": {"d_model": 64, "d_v": 32, "d_ff": 256},
                                 "train": {"steps": 1000, "batch_size": 64, "warmup": 100, "eval_size": 1024},
                                 "probe_size": 256, "d_ks": [8, 64, 256],
                                 "lrs": [0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3], "seeds": 8})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 75, "standard": 310}
DRY_RUN_WALL_BUDGET_S = {"standard": 3, "full": 8}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
REFUTED_BY_FAULTS = ()

#: under --attention this claim is skipped, for this reason
KERNEL_TRIAL = "QK-norm stays the project's own attention, not the kernel's"
