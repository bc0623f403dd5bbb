"""The model trial's numbers (``--model``, issue 40): the probe inputs and the family sweeps that M0, R1, R2, C3 and
C4 read as ``profile.claim("model_trial")``."""
from harness.profiles.merge import overrides

# A probe at init: `batch` sequences of `length` uniform token ids (the length keeps 31 of 32 causal rows with two
# keys or more), once per seed; `seeds` random inits (the seed is the unit: the family slopes' replicates). The
# family sweeps (C4: logit std against head_dim; R2: against width) build the model at each value with the rest of
# the attention's shape held: head_dim over the paper's range scaled to small models (8..64), width 64..256 at the
# model's own head dim; `min_slope` is R2's (a flat trend: the std changes by under 7% a doubling). Target (issue
# 40): <= 60 s a model at probe level on 2 CPU cores.
SMOKE = {"batch": 4, "length": 32, "seeds": 3, "head_dims": [8, 16, 32, 64], "widths": [64, 128, 256], "min_slope": 0.1}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"seeds": 5, "length": 64}),
           "full": overrides(SMOKE, {"seeds": 5, "length": 128, "head_dims": [8, 16, 32, 64, 128, 256],
                                     "widths": [64, 128, 256, 512, 1024]})}

#: expected wall time (s) of each claim judging a model (M0, R1, C4, R2) on the 2-core box, smoke: the example
#: architectures took 0.1-16 s a claim (T5's head-dim family the longest); the trial's target is 60 s a model
WALL_BUDGET_S = {"smoke": {"M0": 10, "R1": 10, "C4": 30, "R2": 20},
                 "standard": {"M0": 15, "R1": 10, "C4": 60, "R2": 40}}
