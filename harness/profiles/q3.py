"""Q3's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_q3_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import overrides

# Q3 (issue 11): the footnote's quantities through training, scaled and unscaled, at a small and a large d_k
# (d_model fixed), read on `probe_size` held-out examples at each of `checkpoints` (and step 0); the last
# checkpoint is the last step. Key-value lookup at a rate the scaled model learns it by the end.
SMOKE = {"task": {"name": "kv_lookup", "n_pairs": 8, "n_values": 8},
         "model": {"d_model": 32, "n_heads": 2, "d_v": 16, "d_ff": 64, "n_encoder_layers": 2},
         "train": {"steps": 150, "batch_size": 32, "schedule": "warmup_constant", "lr": 0.01, "warmup": 20,
                   "eval_every": 0, "eval_size": 256},
         "checkpoints": [25, 50, 100, 150], "probe_size": 256, "d_ks": [8, 64], "seeds": 3}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"train": {"steps": 400, "eval_size": 512},
                                     "checkpoints": [25, 50, 100, 200, 300, 400], "probe_size": 512,
                                     "d_ks": [8, 16, 32, 64], "seeds": 4}),
           "full": overrides(SMOKE, {"task": {"n_pairs": 16, "n_values": 16},
                                 "model": {"d_model": 64, "d_v": 32, "d_ff": 256},
                                 "train": {"steps": 3000, "batch_size": 64, "lr": 0.003, "warmup": 100,
                                           "eval_size": 1024},
                                 "checkpoints": [50, 100, 250, 500, 1000, 2000, 3000], "probe_size": 1024,
                                 "d_ks": [8, 16, 32, 64, 128, 256], "seeds": 8})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 30, "standard": 210}
DRY_RUN_WALL_BUDGET_S = {"standard": 3, "full": 6}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
REFUTED_BY_FAULTS = ()

#: under --attention this claim is skipped, for this reason (the default: harness.profiles)
KERNEL_TRIAL = None

#: under --model this claim judges the user's model after a short training, reported only (issue 40)
MODEL_TRIAL = True
