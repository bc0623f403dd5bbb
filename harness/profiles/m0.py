"""M0's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_m0_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import overrides

# M0 (issue 8, issue 10): structural model checks on freshly built float64 models (causal mask, distinct
# heads, the paper's sinusoid, padding ignored); seconds on every profile.
SMOKE = {"seeds": 3,
         "model": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_encoder_layers": 2, "n_decoder_layers": 2}}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"seeds": 5, "model": {"d_model": 64, "n_heads": 8, "d_ff": 128}}),
           "full": overrides(SMOKE, {"seeds": 5,
                                 "model": {"d_model": 64, "n_heads": 8, "d_ff": 128, "n_encoder_layers": 3,
                                           "n_decoder_layers": 3}})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 5, "standard": 5}
DRY_RUN_WALL_BUDGET_S = {"standard": 1, "full": 1}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
#: (single_head: its heads_distinct check exists for it; no_positional_encoding: its positional_encoding check)
REFUTED_BY_FAULTS = ("single_head", "causal_leak", "no_positional_encoding", "padding_leak", "local_window")
#: fault -> (this claim's fast, counted criterion that the fault refutes, a claim the fault is not about that must
#: keep its verdict): the cells of tests/suite/test_sensitivity_modules.py this claim makes (one per fault with a
#: catcher, across the profiles; docs/fault-matrix.md's table is generated from them)
FAST_CELLS = {"single_head": ("heads_distinct", "C1"), "causal_leak": ("causal_mask", "C5"),   # seconds
              "no_positional_encoding": ("positional_encoding", "R1"), "padding_leak": ("padding_ignored", "C5")}

#: under --attention this claim judges the kernel
KERNEL_TRIAL = True
KERNEL_TRIAL_WALL_BUDGET_S = {"smoke": 5}

#: under --model this claim judges the user's model (issue 40; docs/model-trial.md)
MODEL_TRIAL = True
