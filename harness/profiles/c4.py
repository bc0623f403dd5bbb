"""C4's numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_c4_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import DROP, overrides

# C4 (issue 5). iid: Var(q.k) of iid components, fresh draws per (distribution, seed, d_k). model: the default
# encoder at init read through its taps, d_model = heads*d_k and a fixed d_model (Table 3 rows B), every layer.
# alpha: scale d_k^-alpha on the shared tuned sweep (sweep_from: harness/profiles/sweep.py, which C3 and R1 name
# too; d_k = its smallest and largest sweep d_k; alpha 0 and 0.5 are C3's unscaled/scaled runs, memoised); smoke
# keeps three alphas to fit 3 minutes. Each alpha at its own rate tuned with the sweep's tuning block on its tasks
# (issue 17; alpha 0 and 0.5 are C3's runs). qk_control: alpha 0.5 with W_Q, W_K's rate x each multiplier (issue
# 17's grid {1/4, 1/2, 1, 2}); smoke at the large d_k only (where alpha matters) on 3 of the evaluation seeds, to
# fit the sweep worker.
SMOKE = {"iid": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "n_samples": 12288},
         "model": {"dims": [8, 16, 32, 64, 128, 256], "heads": 4, "fixed_d_model": 64, "n_layers": 2, "batch": 8,
                   "seq_len": 32, "draws": 3},
         "alpha": {"sweep_from": "sweep", "alphas": [0.0, 0.5, 1.0],
                   "qk_control": {"multipliers": [0.25, 0.5, 1.0, 2.0], "d_ks": "large", "seeds": 3}}}
BUDGETS = {"smoke": SMOKE,
           "standard": overrides(SMOKE, {"seeds": 6, "iid": {"n_samples": 32768},
                                     "model": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "batch": 16,
                                               "draws": 2},
                                     "alpha": {"alphas": [0.0, 0.5, 0.75, 1.0]}}),
           "full": overrides(SMOKE, {"iid": {"n_samples": 131072},
                                 "model": {"dims": [8, 16, 32, 64, 128, 256, 512, 1024], "heads": 8,
                                           "fixed_d_model": 512, "batch": 16, "seq_len": 64, "draws": 4},
                                 "alpha": {"alphas": [0.0, 0.25, 0.5, 0.75, 1.0],
                                           "qk_control": {"d_ks": "all", "seeds": DROP}}})}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's; a kernel trial's (--attention)
WALL_BUDGET_S = {"smoke": 180, "standard": 985}
DRY_RUN_WALL_BUDGET_S = {"standard": 20, "full": 85}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix
#: none: its checks of the default scale are reported since its identity checks became premises (issue 38); R1
#: counts the default scale and catches no_scale and scale_by_dk
REFUTED_BY_FAULTS = ()

#: under --attention this claim is skipped, for this reason
KERNEL_TRIAL = ("its part (a) on the kernel is R1's kernel_scale_exponent and kernel_logit_variance (the "
                "1/sqrt(d_k) law read out of the black box); its alpha sweep sets the scale inside the project's "
                "own attention")

#: under --model this claim judges the user's model (issue 40; docs/model-trial.md)
MODEL_TRIAL = True
