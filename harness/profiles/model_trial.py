"""The model trial's numbers (``--model``, issue 40): the probe inputs and the family sweeps that M0, R1, R2, C3 and
C4 read as ``profile.claim("model_trial")``."""
from harness.profiles.merge import overrides

# A probe at init: `batch` sequences of `length` uniform token ids (the length keeps 31 of 32 causal rows with two
# keys or more), once per seed; `seeds` random inits (the seed is the unit: the family slopes' replicates). The
# family sweeps (C4: logit std against head_dim; R2: against width) build the model at each value with the rest of
# the attention's shape held: head_dim over the paper's range scaled to small models (8..64), width 64..256 at the
# model's own head dim; `min_slope` is R2's (a flat trend: the std changes by under 7% a doubling). Target (issue
# 40): <= 60 s a model at probe level on 2 CPU cores.
# `train`: the short training the reported criteria read after (Q1, Q2, Q3, C5): next-token prediction on the
# suite's MarkovLM (harness.data.tasks), AdamW at `lr` (a common rate for a small Transformer; not tuned, so what
# is read after it is reported, never counted), and again at `rate_high` x lr (Wortsman et al. 2023's logit growth
# appears at high rates). 200 steps of a hidden-64 model took about 5 s (the feasibility study). A wider
# model trains at `width` (the config's hidden size and head count scaled down, the head dim, head groups, MLP ratio,
# layers and vocabulary kept; issue 48): a 2-layer GPT-Neo 1.3B at its own 2048 took 6.3 s a step, so Q1's runs
# would take hours; the width is said in the progress line, the record's note and the report.
SMOKE = {"batch": 4, "length": 32, "seeds": 3, "head_dims": [8, 16, 32, 64], "widths": [64, 128, 256], "min_slope": 0.1,
         "train": {"steps": 200, "lr": 1e-3, "rate_high": 10.0, "batch": 16, "length": 32, "width": 256}}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"seeds": 5, "length": 64, "train": {"steps": 500}}),
           "full": overrides(SMOKE, {"seeds": 5, "length": 128, "head_dims": [8, 16, 32, 64, 128, 256],
                                     "widths": [64, 128, 256, 512, 1024], "train": {"steps": 2000, "width": 1024}})}

#: expected wall time (s) of each claim judging a model on the 2-core box: the probes (M0, R1, C4, R2) took 0.1-16 s a
#: claim on the example architectures (T5's head-dim family the longest; the trial's target is 60 s a model); the
#: short trainings (Q1 at two rates, then Q2, Q3, C5 reading the same runs in one process) 5-25 s a seed and rate
WALL_BUDGET_S = {"smoke": {"M0": 10, "R1": 10, "C3": 15, "C4": 30, "R2": 20, "Q1": 120, "Q2": 40, "Q3": 40, "C5": 40},
                 "standard": {"M0": 15, "R1": 10, "C3": 30, "C4": 60, "R2": 40, "Q1": 300, "Q2": 100, "Q3": 100, "C5": 100}}

#: seconds a million parameters adds to each probe claim's wall time on the 2-core box: a claim builds the model at
#: init once a seed and head-dim point (run alone: M0 3 builds, R1 5, C4 15, C3 6; R2's widths are small), and a
#: build with its probe took 0.033 s a million parameters under load (benchmarks/model_trial_probe.py on GPT-Neo
#: 1.3B at 2 layers, 216M: 6.4-7 s a build; docs/model-trial.md); half again for headroom. Standard: 5 seeds. The
#: budgets above are the hidden-64 examples', the floor.
S_PER_MPARAM = {"smoke": {"M0": 0.15, "R1": 0.25, "C3": 0.3, "C4": 0.75, "R2": 0.03},
                "standard": {"M0": 0.25, "R1": 0.25, "C3": 0.5, "C4": 1.25, "R2": 0.05}}


def budget_s(profile: str, claim_id: str, n_params: float | None = None) -> float | None:
    """The expected wall time of ``claim_id`` judging a model of ``n_params`` parameters: the small model's budget,
    plus ``S_PER_MPARAM`` for each million parameters past the first (the trainings run at the block's ``width``:
    their budget stays); None when not stated."""
    base = WALL_BUDGET_S.get(profile, {}).get(claim_id)
    if base is None or not n_params:
        return base
    return base + S_PER_MPARAM.get(profile, {}).get(claim_id, 0.0) * max(n_params / 1e6 - 1.0, 0.0)
