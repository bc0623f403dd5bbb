"""Q2's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_q2_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import overrides

# Q2 (issue 11): a DecoderLM trained on markov_lm, measured per head at step 0 and at each checkpoint
# (entropy, BOS sink mass, C5's resolution probe on n_fit / n_eval sequences, queries t >= 1).
SMOKE = {"task": {"name": "markov_lm", "vocab": 32, "seq_len": 32, "branching": 4, "repeat": True},
         "model": {"d_model": 64, "n_heads": 4, "d_ff": 256, "n_layers": 2},
         "train": {"steps": 500, "batch_size": 32, "num_threads": 1, "schedule": "warmup_constant", "lr": 0.001,
                   "warmup": 50, "eval_every": 0, "eval_size": 256},
         "checkpoints": [0, 25, 50, 100, 200, 350, 500],
         "probe": {"n_fit": 128, "n_eval": 128, "fit_seed": 8800, "ridge": 0.001}}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"seeds": 4,
                                     "train": {"steps": 1500, "warmup": 100, "eval_every": 500, "eval_size": 512},
                                     "checkpoints": [0, 25, 50, 100, 200, 400, 800, 1500],
                                     "probe": {"n_fit": 256, "n_eval": 256}}),
           "full": overrides(SMOKE, {"task": {"vocab": 64, "seq_len": 64},
                                 "model": {"d_model": 128, "n_heads": 8, "d_ff": 512, "n_layers": 4},
                                 "train": {"steps": 20000, "batch_size": 64, "lr": 0.0005, "warmup": 500,
                                           "eval_every": 1000, "eval_size": 1024},
                                 "checkpoints": [0, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000],
                                 "probe": {"n_fit": 512, "n_eval": 512}})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 60, "standard": 245}
DRY_RUN_WALL_BUDGET_S = {"standard": 2, "full": 5}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
REFUTED_BY_FAULTS = ()

#: under --attention this claim is skipped, for this reason (the default: harness.profiles)
KERNEL_TRIAL = None

#: under --model this claim judges the user's model after a short training, reported only (issue 40)
MODEL_TRIAL = True
