"""harness.study.sweeps: logit_absmax_first_k, the largest |attention logit| over the tapped training batches (Q1)."""
import math

import pytest
import torch

from harness.study.sweeps import attention_sweep, clear_sweep_cache

torch.set_num_threads(1)

BUDGET = {"task": {"name": "kv_lookup", "n_pairs": 4, "n_values": 4},
          "model": {"d_model": 16, "n_heads": 1, "d_v": 16, "d_ff": 32},
          "train": {"steps": 3, "batch_size": 8, "schedule": "constant", "lr": 1e-3, "eval_every": 0,
                    "eval_size": 16},
          "probe_size": 16}


def test_logit_absmax_reads_the_training_batches():
    clear_sweep_cache()
    arms = {"scaled": {}, "unscaled": {"scale": "none"}}
    one = attention_sweep(arms, [16], {**BUDGET, "grad_steps": 1}, [0]).set_index("arm")
    # step 1: same weights, same batch; only the scale differs, so the maxima differ by exactly sqrt(d_k)
    ratio = one.loc["unscaled", "logit_absmax_first_k"] / one.loc["scaled", "logit_absmax_first_k"]
    assert ratio == pytest.approx(math.sqrt(16), rel=1e-5)
    every = attention_sweep(arms, [16], {**BUDGET, "grad_steps": 3}, [0]).set_index("arm")
    assert (every["logit_absmax_first_k"] >= one["logit_absmax_first_k"] - 1e-6).all()   # a max over more steps
    off = attention_sweep({"scaled": {}}, [16], {**BUDGET, "grad_steps": 0}, [0])
    assert math.isnan(off["logit_absmax_first_k"].iloc[0])
    clear_sweep_cache()
