"""R1's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_r1_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import DROP, overrides

# sweep_from: the shared tuned sweep (harness/profiles/sweep.py, which C3 and C4 name too) that default_never_worse
# and default_vs_additive read. R1 smoke seeds 5: C3's smoke seeds, so the comparisons reuse every one of C3's runs
# (no training of their own when run in C3's process) and are paired over 5 seeds, not 3.
SMOKE = {"d_ks": [1, 8, 64, 512], "heads": [1, 4], "sweep_from": "sweep", "threads": 1, "seeds": 5}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"d_ks": [1, 4, 8, 16, 64, 256, 512, 1024], "heads": [1, 2, 4, 8], "seeds": 6}),
           "full": overrides(SMOKE, {"d_ks": [1, 4, 8, 16, 64, 128, 256, 512, 1024, 2048], "heads": [1, 2, 4, 8, 16],
                                 "seeds": DROP})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 7, "standard": 15}
DRY_RUN_WALL_BUDGET_S = {"standard": 6, "full": 15}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
REFUTED_BY_FAULTS = ("no_scale", "scale_by_dk", "scale_inverted")
#: fault -> (this claim's fast, counted criterion that the fault refutes, a claim the fault is not about that must
#: keep its verdict): the cells of tests/suite/test_sensitivity_modules.py this claim makes (one per fault with a
#: catcher, across the profiles; docs/fault-matrix.md's table is generated from them)
FAST_CELLS = {fault: ("default_is_sdpa_scale", "M0") for fault in REFUTED_BY_FAULTS}       # an exact check
#: fault -> why this claim's cell may move under a fault that is not about it
SIDE_EFFECTS = {"uniform_attention": "R1's exact check compares the module with softmax(QK^T/sqrt(d_k))V; any "
                                     "change to the attention operation fails it",
                "single_head": "R1's exact check compares every head with the reference multi-head attention",
                "causal_leak": "R1's exact check includes causal-masked attention, compared with SDPA's causal mask",
                "padding_leak": "R1's exact check includes a key-padding mask, compared with SDPA's",
                "local_window": "R1's exact check compares the module with attention over every key; a window "
                                "zeroes the far ones"}

#: under --attention this claim judges the kernel
KERNEL_TRIAL = True
KERNEL_TRIAL_WALL_BUDGET_S = {"smoke": 175}

#: under --model this claim judges the user's model (issue 40; docs/model-trial.md)
MODEL_TRIAL = True
