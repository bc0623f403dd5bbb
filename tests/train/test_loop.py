"""harness/train/loop.py: determinism, the paper's optimiser and schedule, evaluation against an oracle, early stop,
divergence recorded (not raised), taps during training. Tiny models: the whole file runs in seconds."""
import math

import pytest
import torch
from torch import nn

from harness.data import tasks
from harness.data import make_task
from harness.data.tasks import EOS, IGNORE_INDEX
from harness.train.loop import (RunResult, TrainConfig, build_for_task, evaluate, make_optimizer, score_predictions,
                              set_seed, task_loss, train)
from model import ModelConfig

torch.set_num_threads(1)

TINY = ModelConfig.tiny(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)


@pytest.fixture(scope="module")
def kv_task():
    return tasks.KeyValueLookup(n_pairs=4, n_keys=6, n_values=4)


@pytest.fixture(scope="module")
def rev_task():
    return make_task("reverse", vocab=6, min_len=2, max_len=5)


def quick(**kw):
    base = dict(steps=20, batch_size=16, schedule="constant", lr=3e-3, eval_every=10, eval_size=64)
    base.update(kw)
    return TrainConfig(**base)


# ------------------------------------------------------------------------------------------ determinism
@pytest.mark.parametrize("model_name,task_fixture", [("encoder_tagger", "kv_task"), ("transformer", "rev_task")])
def test_same_seed_identical_curves(model_name, task_fixture, request):
    task = request.getfixturevalue(task_fixture)
    cfg = quick(schedule="warmup", warmup=5)
    runs = [train(build_for_task(model_name, task, TINY, seed=3), task, cfg, seed=3) for _ in range(2)]
    assert runs[0].losses == runs[1].losses and len(runs[0].losses) == 20
    strip = lambda curve: [{k: v for k, v in row.items() if k != "train_time_s"} for row in curve]  # noqa: E731
    assert strip(runs[0].curve) == strip(runs[1].curve) and len(runs[0].curve) == 2
    assert runs[0].final == runs[1].final
    other = train(build_for_task(model_name, task, TINY, seed=4), task, cfg, seed=4)
    assert other.losses != runs[0].losses                 # the seed matters: the check can fail


def test_set_seed_covers_python_numpy_torch():
    import random

    import numpy as np
    set_seed(11)
    a = (random.random(), np.random.rand(), torch.rand(1).item())
    set_seed(11)
    assert a == (random.random(), np.random.rand(), torch.rand(1).item())
    with pytest.raises(ValueError, match="seed"):
        set_seed(-1)


# ----------------------------------------------------------------------------------- optimiser, schedule
def test_paper_schedule_and_adam_settings():
    cfg = TrainConfig(schedule="warmup", warmup=4000, d_model=512)
    for step in (1, 100, 4000, 10000):
        assert cfg.lr_at(step) == pytest.approx(512 ** -0.5 * min(step ** -0.5, step * 4000 ** -1.5))
    assert max(range(1, 8000, 50), key=cfg.lr_at) in range(3951, 4051)     # peak at the end of warmup
    assert TrainConfig(schedule="warmup", warmup=10, lr_factor=2.0).lr_at(5, d_model=64) == \
        pytest.approx(2 * 64 ** -0.5 * 5 * 10 ** -1.5)
    assert TrainConfig(schedule="constant", lr=0.01).lr_at(7) == 0.01
    assert TrainConfig(schedule="warmup_constant", lr=0.01, warmup=10).lr_at(5) == pytest.approx(0.005)
    model = nn.Linear(2, 2)
    opt, sched = make_optimizer(model, cfg)
    group = opt.param_groups[0]
    assert group["betas"] == (0.9, 0.98) and group["eps"] == 1e-9
    assert group["lr"] == pytest.approx(cfg.lr_at(1))
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(cfg.lr_at(2))
    with pytest.raises(ValueError, match="d_model"):
        make_optimizer(model, TrainConfig(schedule="warmup"))


def test_foreach_adam_gives_the_loops_numbers_on_cpu(kv_task):
    """TrainConfig.foreach=True (C5: ~1 ms less a step) changes the speed, not the run: same losses, same weights."""
    runs, weights = [], []
    for foreach in (None, True):
        model = build_for_task("encoder_tagger", kv_task, TINY, seed=2)
        runs.append(train(model, kv_task, quick(foreach=foreach), seed=2))
        weights.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert runs[0].losses == runs[1].losses and torch.equal(weights[0], weights[1])
    assert make_optimizer(nn.Linear(2, 2), quick(foreach=True))[0].param_groups[0]["foreach"] is True
    with pytest.raises(ValueError, match="TrainConfig.foreach"):
        TrainConfig(foreach=1)


def test_fused_adam_option(kv_task):
    """TrainConfig.fused=True (C1) builds Adam's fused kernel and trains; it excludes foreach=True."""
    assert make_optimizer(nn.Linear(2, 2), quick(fused=True))[0].param_groups[0]["fused"] is True
    run = train(build_for_task("encoder_tagger", kv_task, TINY, seed=2), kv_task, quick(fused=True), seed=2)
    assert run.steps_run == 20 and all(math.isfinite(x) for x in run.losses)
    for kw in ({"fused": True, "foreach": True}, {"fused": 1}):
        with pytest.raises(ValueError, match="TrainConfig.fused"):
            TrainConfig(**kw)


def test_warmup_cosine_schedule():
    cfg = TrainConfig(schedule="warmup_cosine", lr=0.01, warmup=10, steps=110)
    assert cfg.lr_at(5) == pytest.approx(0.005) and cfg.lr_at(10) == pytest.approx(0.01)      # linear ramp
    assert cfg.lr_at(60) == pytest.approx(0.005) and cfg.lr_at(110) == pytest.approx(0.0, abs=1e-12)
    assert cfg.lr_at(200) == pytest.approx(0.0, abs=1e-12)                                    # stays at 0
    lrs = [cfg.lr_at(s) for s in range(10, 111)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))                                          # decays monotonically


def test_config_errors_name_the_field():
    for kw, field in [({"steps": 0}, "steps"), ({"schedule": "cosine"}, "schedule"),
                      ({"label_smoothing": 1.5}, "label_smoothing"), ({"target_metric": "exact_match"},
                                                                       "target_value"),
                      ({"target_metric": "bleu", "target_value": 1.0}, "target_metric"),
                      ({"bf16": True, "device": "meta"}, "bf16"), ({"bf16": 1}, "bf16"), ({"device": "tpu"}, "device"), ({"lr": -1.0}, "lr")]:
        with pytest.raises(ValueError, match=f"TrainConfig.{field}"):
            TrainConfig(**kw)
    with pytest.raises(ValueError, match="warmpu"):
        TrainConfig.from_dict({"steps": 10, "warmpu": 5})
    assert TrainConfig.from_dict({"steps": 10}).steps == 10


def test_label_smoothing_loss_matches_torch():
    logits = torch.randn(3, 5, 7)
    y = torch.randint(0, 7, (3, 5))
    y[0, 0] = IGNORE_INDEX
    ref = nn.functional.cross_entropy(logits.reshape(-1, 7), y.reshape(-1), ignore_index=IGNORE_INDEX,
                                      label_smoothing=0.1)
    assert task_loss(logits, y, 7, label_smoothing=0.1).item() == pytest.approx(ref.item())
    with pytest.raises(ValueError, match="out_dim"):
        task_loss(torch.randn(3, 5, 6), y, 7)


# -------------------------------------------------------------------------------------------- evaluation
class ReverseOracle(nn.Module):
    """Seq2seq stand-in that knows the answer (reverse, then EOS); with ``wrong=True`` rows whose source starts
    with token 3 get their first output token wrong."""

    def __init__(self, vocab, wrong=False):
        super().__init__()
        self.vocab, self.wrong = vocab, wrong
        self.dummy = nn.Parameter(torch.zeros(1))

    def encode(self, src, src_pad_mask=None):
        return src

    def decode(self, tgt_in, memory, src_pad_mask=None, tgt_pad_mask=None):
        B, T = tgt_in.shape
        lengths = (memory != tasks.PAD).sum(1)
        rev = make_task("reverse").target(memory, lengths)
        rev = torch.cat([rev, torch.zeros(B, T + 1, dtype=torch.long)], 1)
        rev[torch.arange(B), lengths] = EOS
        nxt = rev[:, :T].clone()
        if self.wrong:
            bad = memory[:, 0] == 3
            nxt[bad, 0] = 3 + (nxt[bad, 0] - 2) % (self.vocab - 3)      # another content token
        return nn.functional.one_hot(nxt.clamp(min=0), self.vocab).float() * 10 + self.dummy

    def forward(self, src, tgt_in, src_pad_mask=None):
        return self.decode(tgt_in, self.encode(src))


def test_greedy_evaluation_against_oracle(rev_task):
    perfect = evaluate(ReverseOracle(rev_task.tgt_vocab), rev_task, n=100)
    assert perfect["exact_match"] == 1.0 and perfect["token_accuracy"] == 1.0 and perfect["loss"] < 1e-3
    held = rev_task.heldout(100)
    n_bad = int((held.src[:, 0] == 3).sum())
    n_targets = int((held.tgt_out != IGNORE_INDEX).sum())
    assert 0 < n_bad < 50
    for chunk in (100, 32, 7):                                         # chunking does not change the numbers
        wrong = evaluate(ReverseOracle(rev_task.tgt_vocab, wrong=True), rev_task, n=100, batch_size=chunk)
        assert wrong["exact_match"] == pytest.approx(1 - n_bad / 100)
        assert wrong["token_accuracy"] == pytest.approx(1 - n_bad / n_targets)
    assert "accuracy" not in perfect


def test_teacher_forced_evaluation_gives_the_greedy_exact_match(rev_task):
    """eval_decode="teacher_forced" (C1's early stop): the same exact match as greedy decoding, on a half-trained
    model (so that rows are both right and wrong) and on the oracle with wrong rows; token accuracy may differ."""
    held = rev_task.heldout(200)
    model = build_for_task("transformer", rev_task, TINY, seed=0)
    run = train(model, rev_task, quick(steps=120, eval_every=120, eval_decode="teacher_forced"), seed=0, heldout=held)
    greedy = evaluate(model, rev_task, held)
    assert 0.05 < greedy["exact_match"] < 0.95, greedy
    assert run.final["exact_match"] == greedy["exact_match"] and run.final["loss"] == pytest.approx(greedy["loss"])
    oracle = ReverseOracle(rev_task.tgt_vocab, wrong=True)
    assert evaluate(oracle, rev_task, held, decode="teacher_forced")["exact_match"] == \
        evaluate(oracle, rev_task, held)["exact_match"] < 1.0
    with pytest.raises(ValueError, match="TrainConfig.eval_decode"):
        TrainConfig(eval_decode="beam")
    with pytest.raises(ValueError, match="decode"):
        evaluate(oracle, rev_task, held, decode="beam")


def test_score_predictions_multi_target():
    y = torch.tensor([[[IGNORE_INDEX, IGNORE_INDEX], [1, 2]], [[IGNORE_INDEX, IGNORE_INDEX], [3, 0]]])
    pred = torch.tensor([[[9, 9], [1, 2]], [[0, 0], [3, 1]]])
    exact, right = score_predictions(pred, y)
    assert exact.tolist() == [True, False] and right.tolist() == [2, 1]
    exact, right = score_predictions(torch.tensor([1, 0]), torch.tensor([1, 1]))     # classify
    assert exact.tolist() == [True, False]


def test_tagging_and_classify_tasks_train(kv_task):
    mr = tasks.MultiPositionRetrieval(n_marked=2, seq_len=6, vocab=4)
    r = train(build_for_task("encoder_tagger", mr, TINY, seed=0), mr, quick(steps=10), seed=0)
    assert set(r.final) == {"loss", "exact_match", "token_accuracy", "accuracy"}
    fel = tasks.FirstEqualsLast(d=4, vocab=4)
    model = build_for_task("encoder_tagger", fel, TINY, seed=0)
    assert model.pool == "last" and model.n_classes == 2
    r = train(model, fel, quick(steps=10), seed=0)
    assert 0.0 <= r.final["accuracy"] <= 1.0 and r.final["accuracy"] == r.final["exact_match"]
    with pytest.raises(ValueError, match="seq2seq"):
        build_for_task("transformer", kv_task, TINY, seed=0)


def test_bf16_trains_under_autocast_on_cpu(rev_task):
    """The full profile's bf16 switch runs its autocast path on a CPU (a dry run proves it before a GPU does)."""
    model = build_for_task("transformer", rev_task, TINY, seed=0)
    seen = []
    model.register_forward_hook(lambda mod, args, out: seen.append(out.dtype))
    r = train(model, rev_task, quick(steps=2, bf16=True), seed=0)
    assert seen[0] == torch.bfloat16 and all(math.isfinite(x) for x in r.losses)
    assert next(model.parameters()).dtype == torch.float32          # autocast, not a cast of the weights


# ------------------------------------------------------------------------------ early stop, divergence
def test_early_stop_records_steps_to_target(kv_task):
    cfg = quick(steps=50, target_metric="loss", target_value=100.0)       # reached at the first evaluation
    r = train(build_for_task("encoder_tagger", kv_task, TINY, seed=0), kv_task, cfg, seed=0)
    assert r.steps_to_target == 10 and r.steps_run == 10 and r.reached_target
    assert 0 < r.time_to_target_s <= r.train_time_s <= r.wall_time_s
    never = train(build_for_task("encoder_tagger", kv_task, TINY, seed=0), kv_task,
                  quick(steps=20, target_metric="exact_match", target_value=1.01), seed=0)
    assert never.steps_to_target is None and never.steps_run == 20 and never.time_to_target_s is None
    keep = train(build_for_task("encoder_tagger", kv_task, TINY, seed=0), kv_task,
                 quick(steps=20, target_metric="loss", target_value=100.0, stop_at_target=False), seed=0)
    assert keep.steps_to_target == 10 and keep.steps_run == 20


@pytest.mark.parametrize("model_name,task_fixture", [("encoder_tagger", "kv_task"), ("transformer", "rev_task")])
def test_divergence_recorded_not_raised(model_name, task_fixture, request):
    task = request.getfixturevalue(task_fixture)
    r = train(build_for_task(model_name, task, TINY, seed=0), task, quick(steps=30, lr=1e6), seed=0)
    assert r.diverged and isinstance(r.diverged_step, int) and 1 <= r.diverged_step <= 30
    assert r.steps_run == r.diverged_step and not math.isfinite(r.losses[-1])
    assert all(math.isfinite(v) for v in r.losses[:-1])
    assert isinstance(r, RunResult) and "exact_match" in r.final
    ok = train(build_for_task(model_name, task, TINY, seed=0), task, quick(steps=10), seed=0)
    assert not ok.diverged and ok.diverged_step is None


# -------------------------------------------------------------------------------------- hooks, progress
def test_on_step_progress_and_taps(kv_task):
    seen, grads, lines = [], [], []
    train(build_for_task("encoder_tagger", kv_task, TINY, seed=0), kv_task, quick(steps=12, eval_every=6), seed=0,
          on_step=lambda step, model, batch, loss: seen.append((step, len(batch), loss)), progress=lines.append)
    assert [s for s, _, _ in seen] == list(range(1, 13)) and all(n == 16 for _, n, _ in seen)
    assert any("step 6/12" in line and "em" in line for line in lines)

    def grab(step, model, batch, loss, cache):
        grads.append((step, cache.grad("encoder.layers.0.self_attn.logits").abs().mean().item()))

    r = train(build_for_task("encoder_tagger", kv_task, TINY, seed=0), kv_task, quick(steps=8), seed=0,
              on_step=grab, taps=["*.logits"], tap_steps=5, retain_grad=True)
    assert [s for s, _ in grads] == [1, 2, 3, 4, 5] and all(g > 0 for _, g in grads)
    assert r.steps_run == 8
    with pytest.raises(ValueError, match="tap_steps"):
        train(build_for_task("encoder_tagger", kv_task, TINY, seed=0), kv_task, quick(steps=2), seed=0, tap_steps=2)


def test_result_frame_and_threads(kv_task):
    before = torch.get_num_threads()
    r = train(build_for_task("encoder_tagger", kv_task, TINY, seed=0), kv_task, quick(num_threads=1), seed=0)
    assert torch.get_num_threads() == before
    df = r.curve_frame()
    assert list(df["step"]) == [10, 20] and {"train_loss", "lr", "exact_match", "loss"} <= set(df.columns)
    assert r.config["task"]["task"] == "kv_lookup" and r.to_dict()["seed"] == 0


def test_torch_threads_sets_and_restores():
    from harness.train.loop import torch_threads

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError):
        with torch_threads(1):
            raise RuntimeError("boom")
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads"):
        with torch_threads(0):
            pass


def test_qk_lr_multiplier_scales_only_the_query_and_key_projections():
    """Issue 17's control: an Adam parameter group for W_Q and W_K at multiplier x the rate; 1.0 is one group."""
    import torch

    from harness.train.loop import TrainConfig, make_optimizer
    from model import EncoderTagger, ModelConfig

    model = EncoderTagger(ModelConfig(src_vocab=8, d_model=8, n_heads=2, d_ff=8, n_encoder_layers=1, max_len=8),
                          n_classes=2)
    opt, _ = make_optimizer(model, TrainConfig(schedule="constant", lr=1e-3))
    assert len(opt.param_groups) == 1
    opt, sched = make_optimizer(model, TrainConfig(schedule="constant", lr=1e-3, qk_lr_multiplier=4.0))
    rest, qk = opt.param_groups
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([1e-3, 4e-3])
    qk_ids = {id(p) for n, p in model.named_parameters() if ".q_proj." in n or ".k_proj." in n}
    assert {id(p) for p in qk["params"]} == qk_ids and len(qk_ids) == 4
    assert not qk_ids & {id(p) for p in rest["params"]}
    with pytest.raises(ValueError, match="qk_lr_multiplier"):
        TrainConfig(qk_lr_multiplier=0.0)
    del torch, sched
