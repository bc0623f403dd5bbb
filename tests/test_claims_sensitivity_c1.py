"""C1's criteria fail when the model is wrong in the way C1 is about (issue 8, issue 10), and pass when it is not.

* ``generalises/reverse`` (the fast criterion): on a tiny reverse task and budget, the Transformer reaches the
  threshold on held-out test inputs; under ``no_positional_encoding`` (the encoder sees a bag of tokens) and under
  ``uniform_attention`` (nothing can be routed) the same budget leaves it far below. Lengths 4-6 over 20 tokens:
  at lengths 3-4 over 10 tokens uniform attention still reached 0.59 exact match (the mean of a few
  (token, position) embeddings is decodable), so the tiny task must not be that tiny.
* ``no_recurrence_no_convolution``: the walk finds the LSTM baseline's recurrence (a Transformer holding one would
  be refuted).
* ``wall_time_to_95``: the test says "faster" / "slower" / "can't tell" on constructed timings.
* (d): without a corpus the corpus test skips with a message that says how to give one; a half-given corpus is an
  error naming the variable; the measurement runs on a tiny TSV.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest
import torch

import claims.test_c1_attention_suffices as c1
from harness.tasks import make_task
from harness.training import TrainConfig
from conftest import REPO, run_pytest
from model import ModelConfig, faults

torch.set_num_threads(1)

TINY_BUDGET = {
    "model": {"d_model": 32, "n_heads": 4, "d_ff": 64, "n_encoder_layers": 1, "n_decoder_layers": 1},
    "train": {"steps": 450, "batch_size": 32, "schedule": "warmup_constant", "lr": 3e-3, "warmup": 50,
              "eval_every": 25, "eval_size": 128, "num_threads": 1},
    "stop_exact_match": 0.98, "target": 0.95, "threshold": 0.95, "test_size": 256,
    "tasks": {"reverse": {"task": {"vocab": 20, "min_len": 4, "max_len": 6}}},
    "lstm": {"tasks": ["reverse"], "widths": list(range(8, 80, 4))},
}


@pytest.fixture(autouse=True)
def _no_fault_leaks():
    faults.set_fault(None)
    yield
    faults.set_fault(None)


def _reverse(seeds, fault=None):
    with faults.inject(fault):
        df, _ = c1.measure_task(TINY_BUDGET, "reverse", ("transformer",), seeds, "cpu")
    return c1.evaluate_generalisation(df, TINY_BUDGET["threshold"]), df


def test_reverse_generalises_without_a_fault():
    out, df = _reverse([0, 1])
    assert out["passed"] and not out["refuted"], out["detail"]
    assert (df.test_rows_in_train_split == 0).all() and (df.test_size > 200).all()
    assert c1.evaluate_structure(df)["passed"]


@pytest.mark.parametrize("fault", ["no_positional_encoding", "uniform_attention"])
def test_reverse_fails_under_the_faults_c1_must_catch(fault):
    out, df = _reverse([0], fault)                   # one seed: the clean budget, run to its end, stays far off
    assert not out["passed"], out["detail"]
    assert (df.test_exact_match < 0.5).all() and (df.steps_run == TINY_BUDGET["train"]["steps"]).all()


def test_structure_check_sees_recurrence():
    task = make_task("reverse", vocab=6, min_len=2, max_len=4)
    val, test = c1.heldout_split(task, 16, 16)
    cfg = ModelConfig.tiny(d_model=8, n_heads=1, d_ff=16, n_encoder_layers=1, n_decoder_layers=1)
    tcfg = TrainConfig(steps=1, batch_size=4, schedule="constant", lr=1e-3, eval_every=1, eval_size=16)
    lstm_row, _ = c1.train_and_test("lstm", task, cfg, tcfg, 0, val, test, 0.95)
    assert "LSTM" in lstm_row["forbidden_modules"]
    tr_row, _ = c1.train_and_test("transformer", task, cfg, tcfg, 0, val, test, 0.95)
    ok = c1.evaluate_structure(pd.DataFrame([tr_row, lstm_row]))
    assert ok["passed"] and "LSTM" in ok["detail"]
    bad = c1.evaluate_structure(pd.DataFrame([{**tr_row, "forbidden_modules": lstm_row["forbidden_modules"]}]))
    assert not bad["passed"] and bad["refuted"]


def test_heldout_split_is_disjoint_and_held_out():
    for name, kw in (("reverse", {"vocab": 3, "min_len": 2, "max_len": 3}), ("number_words_de", {"max_n": 999})):
        task = make_task(name, **kw)
        val, test = c1.heldout_split(task, 20, 40)
        keys = lambda b: {tuple(r) for r in task.split_keys(b).tolist()}
        assert not keys(val) & keys(test) and len(val) == 20 and 0 < len(test) <= 40
        assert c1.rows_in_training_split(task, test) == 0
        assert c1.rows_in_training_split(task, task.train_batch(torch.Generator().manual_seed(0), 50)) == 50


def _timings(t, lstm, reached=True):
    rows = [{"task": "reverse", "arch": "transformer", "time_to_95_s": x, "steps_to_95": 10 * x,
             "reached_95": reached} for x in t]
    return pd.DataFrame(rows + [{"task": "reverse", "arch": "lstm", "time_to_95_s": x, "steps_to_95": 10 * x,
                                 "reached_95": True} for x in lstm])


def test_wall_time_criterion_both_ways():
    fast = c1.evaluate_wall_time(_timings([10, 11, 12], [30, 33, 29]))
    assert fast["passed"] and not fast["refuted"] and fast["measured"] < 1
    slow = c1.evaluate_wall_time(_timings([30, 33, 29], [10, 11, 12], reached=False))
    assert not slow["passed"] and slow["refuted"] and "transformer" in slow["detail"]
    unsure = c1.evaluate_wall_time(_timings([10, 30, 20], [12, 28, 21]))
    assert not unsure["passed"] and not unsure["refuted"]


def test_corpus_environment(tmp_path):
    assert c1.corpus_paths({}) is None
    with pytest.raises(ValueError, match=c1.CORPUS_ENV_TGT):
        c1.corpus_paths({c1.CORPUS_ENV_SRC: str(tmp_path / "a")})
    with pytest.raises(ValueError, match="no such file"):
        c1.corpus_paths({c1.CORPUS_ENV_TSV: str(tmp_path / "missing.tsv")})
    runs, why = c1.corpus_status({"corpus": None})
    assert not runs and c1.CORPUS_ENV_TSV in why and "--profile full" in why


def test_corpus_bleu_on_a_tiny_tsv(tmp_path):
    words = make_task("number_words_de", max_n=999)
    lines = []
    for n in range(1000):
        b = words.batch_for(torch.tensor([n]))
        lines.append(f"{words.text_tokens(b.src[0], 'src')}\t{words.detokenize(b.tgt_out[0])}")
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("\n".join(lines), encoding="utf-8")
    task = c1.load_corpus({"tsv": tsv}, {"heldout_fraction": 0.05, "max_len": 20})
    mcfg = ModelConfig.tiny(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
    tcfg = TrainConfig(steps=5, batch_size=8, schedule="constant", lr=1e-3, eval_every=5, eval_size=8)
    row = c1.measure_corpus_bleu(task, mcfg, tcfg, 0, test_size=10)
    assert 0.0 <= row["bleu"] <= 100.0 and row["test_pairs"] == 10


def _em_rows(ems):
    return pd.DataFrame([{"test_exact_match": x, "test_token_accuracy": x, "test_size": 512,
                          "test_rows_in_train_split": 0, "steps_run": 100} for x in ems])


def test_generalisation_verdict_both_ways():
    assert c1.evaluate_generalisation(_em_rows([0.99, 0.97, 0.96]), 0.95)["passed"]
    one_short = c1.evaluate_generalisation(_em_rows([0.99, 0.97, 0.90]), 0.95)
    assert not one_short["passed"] and not one_short["refuted"]              # every seed must reach it
    far = c1.evaluate_generalisation(_em_rows([0.10, 0.05, 0.12]), 0.95)
    assert not far["passed"] and far["refuted"] and far["p_value"] < 0.05
    leaked = _em_rows([0.99, 0.98, 0.97]).assign(test_rows_in_train_split=1)
    assert not c1.evaluate_generalisation(leaked, 0.95)["passed"]


def test_corpus_test_skips_with_instructions(tmp_path):
    env = {k: "" for k in (c1.CORPUS_ENV_TSV, c1.CORPUS_ENV_SRC, c1.CORPUS_ENV_TGT)}
    proc = run_pytest(REPO, str(REPO / "claims" / "test_c1_attention_suffices.py"), "-k", "corpus", "--profile", "full",
                      "--report-dir", str(tmp_path), "-rs", env=env)
    assert proc.returncode == 0, proc.stdout[-2000:]
    skipped = json.loads((tmp_path / "results.json").read_text())["run"]["skipped"]
    assert len(skipped) == 1 and skipped[0]["id"] == "C1"
    assert c1.CORPUS_ENV_TSV in skipped[0]["reason"] and c1.CORPUS_ENV_SRC in skipped[0]["reason"]
