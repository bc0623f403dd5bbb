"""R2's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_r2_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import overrides

# R2 (issue 5): harness.measure.probes.saturation_check on the model's compatibility functions; dims: d_k grid;
# min_slope: the log-log slope magnitude below which a trend is flat.
SMOKE = {"dims": [8, 32, 128, 512], "n_keys": 64, "n_queries": 32, "batch": 8, "min_slope": 0.1}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "batch": 16}),
           "full": overrides(SMOKE, {"dims": [8, 16, 32, 64, 128, 256, 512, 1024, 2048], "n_keys": 128, "n_queries": 64,
                                 "batch": 16})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 5, "standard": 17}
DRY_RUN_WALL_BUDGET_S = {"standard": 5, "full": 23}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
#: none outside a kernel trial: default_not_flagged, which reads the default scale, is reported (issue 38); R1
#: catches no_scale and scale_by_dk
REFUTED_BY_FAULTS = ()

#: under --attention this claim judges the kernel
KERNEL_TRIAL = True
KERNEL_TRIAL_WALL_BUDGET_S = {"smoke": 5}

#: under --model this claim judges the user's model (issue 40; docs/model-trial.md)
MODEL_TRIAL = True
