"""The kernel trial's numbers (``--attention``): the probe draws, speed sizes and the kernel-as-an-arm training that
M0, R1, R2 and R3 read as ``profile.claim("kernel_trial")``."""
from harness.profiles.merge import overrides

# The probe-level trial of a user's kernel (issue 27, harness/trial/kernel_probes/; M0, R1, R2, R3 with
# --attention):
# cases Hypothesis draws for R1's exactness (a failing one is shrunk; more cases, more shapes seen); their query and
# key counts, short (1..max_len) or as often long and ragged (max_len+1..long_len: long_len above 2 x 128 keys, so
# that a kernel with flash-attn's 64- or 128-key tiles runs three tiles or more, the last one partial); the d_k grid
# of the scale law and the saturation check (the paper's 8..256), query and key counts of the weight readout,
# and R3's timed sizes (the suite's R3 layer: batch 8, h 4, d_k 64), its rounds (`reps`: each interleaves kernel and
# SDPA, `calls` calls a side, the fastest counting; 8 rounds put an SDPA wrapper's 90% interval within +-3% of its
# ratio under 3 busy processes on 2 cores, against the +-25% band of "the same speed"). Target: <= 60 s a kernel on
# 2 CPU cores.
# training: R1's kernel_trains_as_reference (not under --fast), the kernel and the reference as two arms of the
# tuned sweep of `sweep_from`'s tasks (harness/profiles/sweep.py: key-value lookup and delayed copy) at its smallest
# and largest d_k: `seeds` evaluation seeds (the first of R1's), `tuning` as the sweep's block (points over span round
# the task's rate, tuning seeds, extensions past an end), `train`: per task, overrides of the sweep's train block
# (none: the sweep's steps).
# Smoke is small so that `pytest --attention ... --profile smoke -n 2` stays well inside 10 minutes: 3 seeds (R1
# has 5) and one tuning seed (the sweep has 2), the sweep's smoke steps (300 key-value lookup, 150 delayed copy);
# 2 arms x 2 tasks x 2 d_k, 6-9 runs each. Standard and full: the sweep's tuning blocks and steps, 5 seeds.
SMOKE = {"cases": 60, "max_len": 9, "long_len": 300, "d_ks": [8, 16, 32, 64, 128, 256], "n_queries": 16, "n_keys": 32, "seeds": 3,
         "speed": {"sizes": [[8, 4, 128, 64]], "reps": 8, "calls": 3},
         "training": {"sweep_from": "sweep", "seeds": 3,
                      "tuning": {"points": 3, "span": 16.0, "seeds": 1, "extend": 3}, "train": {}}}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"cases": 200, "max_len": 17, "n_queries": 32, "n_keys": 64, "seeds": 5,
                                     "speed": {"sizes": [[8, 4, 128, 64], [8, 4, 256, 64]], "reps": 8, "calls": 3},
                                     "training": {"seeds": 5, "tuning": {"points": 5, "seeds": 2}}}),
           "full": overrides(SMOKE, {"cases": 500, "max_len": 33, "n_queries": 32, "n_keys": 64, "seeds": 5,
                                 "speed": {"sizes": [[8, 4, 256, 64], [8, 4, 1024, 64]], "reps": 8, "calls": 3},
                                 "training": {"seeds": 5, "tuning": {"points": 7, "span": 64.0, "seeds": 3}}})}
