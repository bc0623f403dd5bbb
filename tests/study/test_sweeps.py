"""harness.study.sweeps: the shared arm x d_k sweep (issue 5) at a tiny budget: rows, memo, faults, errors."""
import math

import pytest
import torch

from harness.study.sweeps import (attention_sweep, clear_sweep_cache, curves_frame, probe_softmax_state,
                            summary_table)
from model import inject, set_fault

torch.set_num_threads(1)

BUDGET = {"task": {"name": "kv_lookup", "n_pairs": 4, "n_values": 4},
          "model": {"d_model": 16, "n_heads": 1, "d_v": 16, "d_ff": 32},
          "train": {"steps": 4, "batch_size": 8, "schedule": "constant", "lr": 1e-3, "eval_every": 2,
                    "eval_size": 32},
          "grad_steps": 2, "probe_size": 16}
VARIANTS = {"scaled": {"scale_exponent": 0.5}, "unscaled": {"scale": "none"}}


@pytest.fixture(autouse=True)
def _fresh():
    clear_sweep_cache()
    set_fault(None)
    yield
    clear_sweep_cache()
    set_fault(None)


def test_rows_columns_and_curves():
    lines = []
    df = attention_sweep({**VARIANTS, "additive": {"score": "additive"}}, [4, 32], BUDGET, [0],
                                 progress=lines.append)
    assert len(df) == 3 * 2 and not df.cached.any()
    assert set(df.arm) == {"scaled", "unscaled", "additive"} and set(df.d_k) == {4, 32}
    assert any("additive d_k=32 seed 0" in line for line in lines)
    for col in ("final_accuracy", "steps_to_target_censored", "logit_std_init", "grad_abs_mean_first_k",
                "entropy_final", "q_var_init"):
        assert df[col].notna().all(), col
    assert (df.grad_steps == 2).all()
    assert all(s == [2, 4] for s in df.curve_step)
    # the resolved scale: 1/sqrt(d_k) scaled, 1 unscaled and additive
    row = df[(df.arm == "scaled") & (df.d_k == 32)].iloc[0]
    assert row.scale == pytest.approx(32 ** -0.5)
    assert (df[df.arm != "scaled"].scale == 1.0).all()
    # unreached target: NaN steps, censored at the budget
    missed = df[~df.reached_target]
    assert missed.steps_to_target.isna().all() and (missed.steps_to_target_censored == 4).all()
    # the mediator at init: unscaled logits are wider than scaled ones by ~sqrt(d_k)
    sc = df[(df.arm == "scaled") & (df.d_k == 32)].logit_std_init.mean()
    un = df[(df.arm == "unscaled") & (df.d_k == 32)].logit_std_init.mean()
    assert un / sc == pytest.approx(math.sqrt(32), rel=1e-6)      # same seed: same weights
    assert len(curves_frame(df)) == len(df) * 2
    assert "curve_step" not in summary_table(df).columns


def test_memo_shares_identical_computations_and_never_crosses_a_fault():
    first = attention_sweep(VARIANTS, [8], BUDGET, [0])
    # "default" computes exactly what "scaled" (explicit d_k^-0.5) computes: one run
    again = attention_sweep({"default": {}, "scaled": {"scale_exponent": 0.5}}, [8], BUDGET, [0])
    assert again.cached.all()
    assert again.final_loss.iloc[0] == first[first.arm == "scaled"].final_loss.iloc[0]
    with inject("no_scale"):
        faulty = attention_sweep({"default": {}, "unscaled": {"scale": "none"}}, [8], BUDGET, [0])
    assert not faulty.cached.iloc[0]                     # the default now computes something else
    assert faulty.scale.iloc[0] == 1.0
    assert faulty.final_loss.iloc[0] == faulty.final_loss.iloc[1]    # = unscaled, bit for bit


def test_bad_budget_and_arm_name_the_problem():
    with pytest.raises(ValueError, match="unknown key.*stepz"):
        attention_sweep(VARIANTS, [8], {**BUDGET, "stepz": 3}, [0])
    with pytest.raises(ValueError, match="needs 'train'"):
        attention_sweep(VARIANTS, [8], {k: v for k, v in BUDGET.items() if k != "train"}, [0])
    with pytest.raises(ValueError, match="arm 'odd'.*scael"):
        attention_sweep({"odd": {"scael": 1.0}}, [8], BUDGET, [0])
    with pytest.raises(ValueError, match="ModelConfig.scale"):
        attention_sweep({"odd": {"scale": "sqrt"}}, [8], BUDGET, [0])
    with pytest.raises(ValueError, match="at least one arm"):
        attention_sweep({}, [8], BUDGET, [0])


def test_probe_softmax_state_sees_saturation():
    from harness.data import make_task
    from harness.train.loop import build_for_task
    from model import ModelConfig

    task = make_task("kv_lookup", n_pairs=8)
    batch = task.heldout(64)
    out = {}
    for name, kw in (("scaled", {"scale_exponent": 0.5}), ("unscaled", {"scale": "none"})):
        cfg = ModelConfig(d_model=32, n_heads=1, d_k=1024, n_encoder_layers=1, n_decoder_layers=0, **kw)
        out[name] = probe_softmax_state(build_for_task("encoder_tagger", task, cfg, 0), batch, task.tgt_vocab)
    assert out["unscaled"]["logit_std"] > 10 * out["scaled"]["logit_std"]
    assert out["unscaled"]["entropy"] < 0.5 * out["scaled"]["entropy"]
    assert out["unscaled"]["saturated_fraction"] > 0.2 and out["scaled"]["saturated_fraction"] == 0.0
    assert out["unscaled"]["grad_abs_mean"] < out["scaled"]["grad_abs_mean"]


def test_logits_without_gradient_read_zero():
    """Under uniform attention no gradient reaches the logits: the probe reads 0, not an error."""
    with inject("uniform_attention"):
        df = attention_sweep({"scaled": {"scale_exponent": 0.5}}, [8], {**BUDGET, "train": {
            **BUDGET["train"], "steps": 2}}, [0])
    assert df.grad_abs_mean_init.iloc[0] == 0.0 and df.grad_abs_mean_first_k.iloc[0] == 0.0


def test_tuning_reads_a_validation_part_and_results_a_disjoint_test_part():
    """Issue 26: the sweep's val_loss (which tuning chooses by) and final_loss (what the claims compare) come from
    disjoint parts of the held-out split, so no rate is chosen on the examples it is judged on."""
    from harness.study.sweeps import sweep_task
    from harness.data.tasks import validation_test_split

    df = attention_sweep(VARIANTS, [4], {**BUDGET, "test_size": 48}, [0])
    assert {"val_loss", "val_accuracy", "final_loss", "test_size"} <= set(df.columns)
    assert (df.val_loss != df.final_loss).all() and (df.test_size > 0).all()
    task = sweep_task(BUDGET)
    val, test = validation_test_split(task, 32, 48)
    seen = {tuple(r) for r in task.split_keys(val).tolist()}
    assert not any(tuple(r) in seen for r in task.split_keys(test).tolist())
    assert len(val) == 32 and int(df.test_size.iloc[0]) == len(test)


def test_stacked_seeds_give_the_loop_rows():
    """``stack``: the seeds of a cell trained together (harness.train.stacked) give the loop's rows within the
    stacked trainer's tolerance (tests/train/test_stacked.py), its taps included; it is part of the memo key."""
    seeds = [0, 1, 2]
    loop = attention_sweep(VARIANTS, [8], BUDGET, seeds)
    stacked = attention_sweep(VARIANTS, [8], {**BUDGET, "stack": 2}, seeds)
    assert not stacked.cached.any() and list(stacked.seed) == list(loop.seed)
    for col in ("final_loss", "val_loss", "grad_abs_mean_first_k", "entropy_final", "logit_std_init"):
        assert stacked[col].to_numpy() == pytest.approx(loop[col].to_numpy(), rel=1e-4), col
    assert list(stacked.grad_steps) == list(loop.grad_steps) and list(stacked.curve_step) == list(loop.curve_step)
    with pytest.raises(ValueError, match="stack"):
        attention_sweep(VARIANTS, [8], {**BUDGET, "stack": 0}, seeds)
