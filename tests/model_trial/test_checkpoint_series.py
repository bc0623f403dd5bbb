"""Two checkpoints compared, a user's own init, a series of saves (issue 55, item 10), on planted saves.

A 2-layer Llama (hidden 64, 4 heads of d_k 16), never trained: ``init.pt`` is its build, and each other save is
that build with layer 0's W_Q multiplied by a known factor, so that layer 0's scaled logit std is exactly that
factor times the init's and layer 1 is read after it. ``step_20.pt``, ``step_300.pt`` and ``step_1000.pt`` (W_Q
times 2, 4 and 8) are a run's saves whose names sort otherwise than their steps. No training: a few seconds.
"""
from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pytest
import torch

from harness.trial import checkpoint, checkpoint_series as series, model as models

pytestmark = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                reason="the checkpoint tests build a transformers Llama (.[models])")

SHAPE = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, vocab_size=35)
W_Q0 = "layers.0.self_attn.q_proj.weight"
STEPS = {20: 2.0, 300: 4.0, 1000: 8.0}


def _trial(config: str = "LlamaConfig"):
    over = [f"{k}={v}" for k, v in SHAPE.items()] if config == "LlamaConfig" else []
    return models.preflight(models.resolve(config=config, overrides=over))


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """(the trial, the run's folder, probe ids: 4 sequences of 32 tokens)."""
    root = tmp_path_factory.mktemp("run")
    trial = _trial()
    state = {k: v.clone() for k, v in trial.build(7).state_dict().items()}
    torch.save(state, root / "init.pt")
    torch.save({k: 4 * v if k == W_Q0 else v for k, v in state.items()}, root / "x4.pt")
    for step, factor in STEPS.items():
        torch.save({k: factor * v if k == W_Q0 else v for k, v in state.items()}, root / f"step_{step}.pt")
    ids = torch.randint(0, SHAPE["vocab_size"], (4, 32), generator=torch.Generator().manual_seed(0))
    return trial, root, ids


def _prepared(trial, weights, ids, **kw):
    ckpt = series.prepare(trial, str(weights), **kw)
    ckpt.ids, ckpt.in_distribution = ids, True
    return ckpt


# ----------------------------------------------------------------------------------- --model-init-weights
def test_the_users_init_is_read_at_init_and_w_q_times_4_reads_4_times_its_logit_std(planted):
    trial, root, ids = planted
    ckpt = _prepared(trial, root / "x4.pt", ids, init=str(root / "init.pt"))
    df = checkpoint.read(trial, ckpt, ids)
    rows = checkpoint.footnote_rows(df)
    assert rows[0]["logit_std"] / rows[0]["logit_std_init"] == pytest.approx(4.0, rel=1e-4)
    # the "at init" half is the saved init itself: the same readings as init.pt read as the checkpoint
    alone = checkpoint.read(trial, _prepared(trial, root / "init.pt", ids), ids)
    a = df[df.which == "init"].sort_values(["layer", "batch", "head"]).logit_std.to_numpy()
    b = alone[alone.which == "checkpoint"].sort_values(["layer", "batch", "head"]).logit_std.to_numpy()
    assert np.allclose(a, b, rtol=1e-6)
    # ... and not the random draw of seed 0, which the read without the option takes
    drawn = checkpoint.read(trial, _prepared(trial, root / "x4.pt", ids), ids)
    assert not np.allclose(drawn[drawn.which == "init"].sort_values(["layer", "batch", "head"]).logit_std, a)
    assert ckpt.describe()["init"] == {"source": "saved", "path": str(root / "init.pt"),
                                       "files": [str(root / "init.pt")], "tensors": 20}
    assert _prepared(trial, root / "x4.pt", ids).describe()["init"] == {"source": "random", "seed": 0}
    assert series.init_note(ckpt).startswith(f"at init: the saved init {root / 'init.pt'}")


def test_a_bad_init_is_one_line_naming_its_option(planted, tmp_path):
    trial, root, ids = planted
    with pytest.raises(models.ModelError) as err:
        series.prepare(trial, str(root / "x4.pt"), init=str(tmp_path / "gone.pt"))
    assert str(err.value) == f"--model-init-weights {tmp_path / 'gone.pt'}: no such file or folder"
    torch.save({k: v[..., :-1] if k == W_Q0 else v for k, v in torch.load(root / "init.pt").items()},
               tmp_path / "cut.pt")
    with pytest.raises(models.ModelError) as err:
        series.prepare(trial, str(root / "x4.pt"), init=str(tmp_path / "cut.pt"))
    assert str(err.value).startswith(f"--model-init-weights {tmp_path / 'cut.pt'}: {W_Q0} is [64, 63] in the weights")


# ------------------------------------------------------------------------------------------------- a series
def test_a_glob_reads_the_saves_in_step_order_and_draws_them(planted):
    from harness.report.checkpoint_plots import figure_series

    trial, root, ids = planted
    ckpt = _prepared(trial, root / "step_*.pt", ids, init=str(root / "init.pt"))
    assert [(s.path.name, s.step) for s in ckpt.saves] == [("step_20.pt", 20), ("step_300.pt", 300),
                                                           ("step_1000.pt", 1000)]
    assert ckpt is ckpt.saves[-1] and ckpt.describe()["series"][0] == {"path": str(root / "step_20.pt"), "step": 20}
    table = series.series_table(trial, ckpt, ids)
    assert list(table.step.drop_duplicates()) == [0, 20, 300, 1000]
    assert list(table.save.drop_duplicates()) == ["init.pt", "step_20.pt", "step_300.pt", "step_1000.pt"]
    layer0 = table[table.layer == 0].logit_std.to_numpy()
    assert np.allclose(layer0 / layer0[0], [1, 2, 4, 8], rtol=1e-4)
    # Q3 answers for the last save: the read is step_1000's beside the init
    rows = checkpoint.footnote_rows(checkpoint.read(trial, ckpt, ids))
    assert rows[0]["logit_std"] / rows[0]["logit_std_init"] == pytest.approx(8.0, rel=1e-4)
    lines = series.series_lines(table)
    assert [ln.split(" (")[0] for ln in lines] == ["init", "step 20", "step 300", "step 1000"]
    assert f"scaled logit std {layer0[2]:.3g}," in lines[2]
    fig = figure_series(table, f"weights {root}/step_*.pt")
    std = fig.axes[0]
    assert std.get_yscale() == "log"
    lines0 = [ln for ln in std.get_lines() if ln.get_label() == "layer 0"]
    assert list(lines0[0].get_xdata()) == [0, 20, 300, 1000]
    assert np.allclose(lines0[0].get_ydata(), layer0)
    assert "training step (from the saves' names)" == std.get_xlabel() and str(root) not in fig._suptitle.get_text()


def test_a_list_keeps_its_order_where_a_name_has_no_step_and_a_trainer_folder_is_a_series(planted, tmp_path):
    trial, root, ids = planted
    state = torch.load(root / "init.pt")
    for name in ("late", "early"):
        torch.save(state, tmp_path / f"{name}.pt")
    named = series.saves_named(f"{tmp_path / 'late.pt'},{tmp_path / 'early.pt'}")
    assert named == [(str(tmp_path / "late.pt"), None), (str(tmp_path / "early.pt"), None)]
    ckpt = _prepared(trial, f"{tmp_path / 'late.pt'},{tmp_path / 'early.pt'}", ids)
    table = series.series_table(trial, ckpt, ids)
    assert list(table.step.drop_duplicates()) == [0, 1, 2] and set(table.step_from) == {"order"}
    assert table.save.iloc[0] == "random, seed 0"
    for step in (500, 1500, 1000):
        (tmp_path / "out" / f"checkpoint-{step}").mkdir(parents=True)
        torch.save(state, tmp_path / "out" / f"checkpoint-{step}" / "pytorch_model.bin")
    assert [s for _, s in series.saves_named(str(tmp_path / "out"))] == [500, 1000, 1500]
    for bad, says in ((f"{tmp_path}/nothing_*.pt", "no file or folder matches"),
                      (f"{root / 'x4.pt'},,{root / 'init.pt'}", "an empty name in the comma-separated list"),
                      (f"{root / 'x4.pt'},{root / 'x4.pt'}", "is named twice")):
        with pytest.raises(models.ModelError) as err:
            series.prepare(trial, bad)
        assert str(err.value).startswith("--model-weights ") and says in str(err.value) and "\n" not in str(err.value)


def test_only_names_that_carry_a_step_give_one_and_a_trainer_state_does(tmp_path):
    """Issue 65, item 3: a single save in a folder named gpt2 read as "step 2"; llama3 and t5 would too."""
    for name in ("gpt2", "llama3", "t5", "t5-small"):
        assert series.step_of(tmp_path / name) is None
        assert series.step_of(tmp_path / name / "model.safetensors") is None
    for name, step in (("checkpoint-100", 100), ("step_200", 200), ("ckpt_300.pt", 300), ("iter_400.pt", 400),
                       ("gpt2-ckpt_500.pt", 500), ("llama3-step-600", 600)):
        assert series.step_of(tmp_path / name) == step, name
    assert series.step_of(tmp_path / "checkpoint-100" / "model.safetensors") == 100
    (tmp_path / "gpt2").mkdir()
    (tmp_path / "gpt2" / "trainer_state.json").write_text(json.dumps({"global_step": 750}))
    assert series.step_of(tmp_path / "gpt2") == series.step_of(tmp_path / "gpt2" / "pytorch_model.bin") == 750


def test_a_single_save_without_a_step_is_save_1_and_the_terminal_says_why(planted, tmp_path):
    trial, root, ids = planted
    (tmp_path / "gpt2").mkdir()
    torch.save(torch.load(root / "init.pt"), tmp_path / "gpt2" / "pytorch_model.bin")
    ckpt = _prepared(trial, tmp_path / "gpt2", ids)
    assert ckpt.step is None and ckpt.describe()["series"][0]["step"] is None
    table = series.series_table(trial, ckpt, ids)
    lines = series.series_lines(table)
    assert lines[0].startswith("the save's name carries no training step (checkpoint-N, ") and "save 1" in lines[0]
    assert lines[2].startswith("save 1 (gpt2)") and not any("step 2" in ln for ln in lines)


# -------------------------------------------------------------------------------------------------- compare
def _record(trial, ckpt, tmp_path, name):
    """A results.json of Q3's checkpoint read, as the harness writes it (its judged record and the model)."""
    from claims import test_q3_variance_after_training as q3
    from harness.record import results as R
    from harness.record.evidence import Evidence
    from harness.record.verdict import judge_record

    ev = Evidence(tmp_path / name, "Q3")
    ev.claim("Q3", title="t", statement="s", strength="open question", kind="question")
    q3.checkpoint_trial(ev, trial)
    rec = ev.to_record()
    judged = judge_record(rec["criteria"], kind="question")
    rec.update(criteria=judged["criteria"], verdict=judged["verdict"], firmness=None, seeds_for_firm=None,
               duration_s=1.0)
    run = {"profile": "smoke", "device": "cpu", "seeds": [0], "git_commit": "abc", "complete": True,
           "torch_version": torch.__version__, "duration_s": 1.0,
           "started_at": "2026-01-01T00:00:00+00:00"}
    out = {"schema_version": R.SCHEMA_VERSION, "run": run, "claims": {"Q3": rec}, "model": trial.describe()}
    R.write_json_atomic(tmp_path / f"{name}.json", out)
    return rec


def test_compare_of_a_trained_read_against_its_init_save_shows_each_layer_moving(planted, tmp_path, capsys):
    """The issue's case: byte-identical configs in two folders are one model (no warning), and the per-layer
    readings move old -> new: layer 0's scaled logit std 4 times, layer 1's as read."""
    from harness.report import html as report

    _, root, ids = planted
    for run in ("init_run", "trained_run"):
        (tmp_path / run).mkdir()
        _trial().base.config.save_pretrained(tmp_path / run)
    old_trial, new_trial = (_trial(str(tmp_path / run / "config.json")) for run in ("init_run", "trained_run"))
    assert old_trial.spec != new_trial.spec and old_trial.config_sha256 == new_trial.config_sha256
    old = _record(old_trial, _prepared(old_trial, root / "init.pt", ids), tmp_path, "old")
    new = _record(new_trial, _prepared(new_trial, root / "x4.pt", ids, init=str(root / "init.pt")), tmp_path, "new")
    assert {"checkpoint_series", "checkpoint_readings"} <= set(new["tables"])
    assert "figures/Q3/checkpoint_series.png" in new["figures"]
    assert any(n.startswith("at init: the saved init") for n in new["notes"])
    code = report.main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")])
    captured = capsys.readouterr()
    out = captured.out
    assert code in (0, 1), captured.err
    assert "different models judged" not in out
    assert "Q3's checkpoint readings per layer, old -> new" in out
    assert f"at init: saved init {root / 'init.pt'}" in out and "at init: random draw (seed 0)" in out
    table = {int(m[1]): m[2] for m in re.finditer(r"^\s+(\d+)\s+(.*)$", out, re.M)}
    std = lambda rec, w, layer: np.exp(np.mean([np.log(r["logit_std"]) for r in rec["tables"]["checkpoint_readings"]
                                                if r["which"] == w and r["layer"] == layer]))
    x, y = std(old, "checkpoint", 0), std(new, "checkpoint", 0)
    assert table[0].startswith(f"{x:.3g} -> {y:.3g} (x4)")
    assert "0.0% -> 0.0%" in table[0] and set(table) == {0, 1}
    # another config is another model
    other = json.loads((tmp_path / "new.json").read_text())
    other["model"]["config_sha256"] = "0" * 64
    (tmp_path / "other.json").write_text(json.dumps(other))
    report.main(["compare", str(tmp_path / "old.json"), str(tmp_path / "other.json")])
    assert f"WARNING: different models judged: config {tmp_path / 'init_run' / 'config.json'} (config sha256 " \
           in capsys.readouterr().out


@pytest.mark.subprocess
def test_from_the_command_line_a_bad_init_is_exit_4_in_one_line(planted, tmp_path):
    from tests.conftest import REPO, run_pytest

    _, root, _ = planted
    common = ["claims/test_q3_variance_after_training.py", "--collect-only", f"--report-dir={tmp_path / 'r'}",
              "--model-config", "LlamaConfig", *[f"--model-override={k}={v}" for k, v in SHAPE.items()]]
    for args, says in (([f"--model-init-weights={root / 'init.pt'}"], "--model-init-weights needs --model-weights"),
                       ([f"--model-weights={root / 'x4.pt'}", f"--model-init-weights={tmp_path / 'gone'}"],
                        f"--model-init-weights {tmp_path / 'gone'}: no such file or folder")):
        proc = run_pytest(REPO, *common, *args)
        lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
        assert proc.returncode == 4 and len(lines) == 1 and says in lines[0], (proc.returncode, lines[:30])
