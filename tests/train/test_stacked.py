"""harness/train/stacked.py: k seeds in one step give each seed the run the one-seed loop gives it.

Tolerance: ``RTOL`` relative (``ATOL`` absolute near zero) on every loss, curve metric, final metric and tapped
gradient. The two paths add the same terms in another order (a batched matmul over k seeds against k single ones,
the per-seed gradient norm against ``clip_grad_norm_``'s), so they agree to float32 rounding at the first step
(~1e-7 relative), and Adam carries those last bits forward for the run's 20 steps: the largest relative
difference measured here is 1.8e-7 (losses, curves, final metrics; three arms, k = 1 and 3). 1e-4 leaves room for
a longer or more saturated run without hiding a wrong seed (two seeds' losses differ by ~1e-2).
Counts (steps to target, steps run, divergence step) are equal exactly."""
import math

import pytest
import torch

from harness.data import tasks
from harness.train.loop import TrainConfig, build_for_task, train
from harness.train.stacked import clip_per_seed, stack_batches, train_stacked
from model import ModelConfig

torch.set_num_threads(1)

RTOL, ATOL = 1e-4, 1e-6
TINY = ModelConfig.tiny(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
LOGITS = "encoder.layers.0.self_attn.logits"


@pytest.fixture(scope="module")
def kv_task():
    return tasks.KeyValueLookup(n_pairs=4, n_keys=6, n_values=4)


def quick(**kw):
    base = dict(steps=20, batch_size=16, schedule="warmup_constant", warmup=5, lr=3e-3, eval_every=10, eval_size=64,
                foreach=True)
    return TrainConfig(**{**base, **kw})


def models_for(task, seeds, **cfg):
    return [build_for_task("encoder_tagger", task, TINY.replace(**cfg), seed=s) for s in seeds]


def close(a, b):
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL) or (math.isnan(a) and math.isnan(b))


def assert_same_run(loop, stacked):
    assert (stacked.seed, stacked.steps_run, stacked.steps_to_target, stacked.diverged, stacked.diverged_step) == \
        (loop.seed, loop.steps_run, loop.steps_to_target, loop.diverged, loop.diverged_step)
    assert len(stacked.losses) == len(loop.losses)
    assert all(close(a, b) for a, b in zip(loop.losses, stacked.losses)), (loop.losses, stacked.losses)
    assert [r["step"] for r in stacked.curve] == [r["step"] for r in loop.curve]
    for a, b in zip(loop.curve, stacked.curve):
        assert all(close(a[m], b[m]) for m in ("train_loss", "lr", "loss", "exact_match", "token_accuracy")), (a, b)
    assert stacked.final.keys() == loop.final.keys()
    assert all(close(loop.final[m], stacked.final[m]) for m in loop.final), (loop.final, stacked.final)


@pytest.mark.parametrize("seeds", [[3], [0, 1, 2]], ids=["k1", "k3"])
@pytest.mark.parametrize("arm", [{}, {"scale": "none", "d_k": 32}, {"score": "additive"}],
                         ids=["scaled", "unscaled", "additive"])
def test_stacked_equals_the_loop(kv_task, seeds, arm):
    cfg = quick(target_metric="accuracy", target_value=0.3, stop_at_target=False)
    loops = [train(m, kv_task, cfg, seed=s) for m, s in zip(models_for(kv_task, seeds, **arm), seeds)]
    stacked = train_stacked(models_for(kv_task, seeds, **arm), kv_task, cfg, seeds)
    for a, b in zip(loops, stacked):
        assert_same_run(a, b)
    assert len({r.losses[0] for r in stacked}) == len(seeds)          # each seed its own init and data


def test_taps_give_each_seed_its_gradient(kv_task):
    seeds, got = [0, 1], {}

    def grab(seed):
        def on_step(step, model, batch, loss, cache):
            got.setdefault(seed, []).append((cache[LOGITS].clone(), cache.grad(LOGITS).clone()))
        return on_step

    cfg = quick(steps=6)
    loops = [train(m, kv_task, cfg, seed=s, on_step=grab(("loop", s)), taps=["*.logits"], tap_steps=3,
                   retain_grad=True) for m, s in zip(models_for(kv_task, seeds), seeds)]
    stacked = train_stacked(models_for(kv_task, seeds), kv_task, cfg, seeds, on_step=[grab(s) for s in seeds],
                            taps=["*.logits"], tap_steps=3)
    for s, a, b in zip(seeds, loops, stacked):
        assert_same_run(a, b)
        assert len(got[s]) == len(got[("loop", s)]) == 3
        for (la, ga), (lb, gb) in zip(got[("loop", s)], got[s]):
            # up to a constant per query row: dL/d(k_proj.bias) is zero but for rounding (softmax ignores a
            # constant added to every key's logit), and Adam turns that noise into steps of ~lr of either sign,
            # which move each row of logits by a constant in one path and another in the other; the loss, the
            # softmax and dL/dlogits do not see it
            torch.testing.assert_close(lb - lb.mean(-1, keepdim=True), la - la.mean(-1, keepdim=True),
                                       rtol=RTOL, atol=ATOL)
            torch.testing.assert_close(gb, ga, rtol=RTOL, atol=1e-8)
            assert ga.abs().mean() > 0


def test_clipping_early_stop_and_divergence_stay_per_seed(kv_task):
    seeds = [0, 1, 2]
    clipped = quick(grad_clip=0.05)
    for a, b in zip([train(m, kv_task, clipped, seed=s) for m, s in zip(models_for(kv_task, seeds), seeds)],
                    train_stacked(models_for(kv_task, seeds), kv_task, clipped, seeds)):
        assert_same_run(a, b)
    stop = quick(steps=40, eval_every=5, lr=1e-2, target_metric="accuracy", target_value=0.45)
    loops = [train(m, kv_task, stop, seed=s) for m, s in zip(models_for(kv_task, seeds), seeds)]
    for a, b in zip(loops, train_stacked(models_for(kv_task, seeds), kv_task, stop, seeds)):
        assert_same_run(a, b)
    wild = quick(steps=30, schedule="constant", lr=1e6)
    loops = [train(m, kv_task, wild, seed=s) for m, s in zip(models_for(kv_task, seeds), seeds)]
    assert all(r.diverged for r in loops)
    for a, b in zip(loops, train_stacked(models_for(kv_task, seeds), kv_task, wild, seeds)):
        assert_same_run(a, b)


def test_clip_per_seed_is_clip_grad_norm_per_seed():
    torch.manual_seed(0)
    stacked = [torch.randn(3, 4, 5, requires_grad=True), torch.randn(3, 7, requires_grad=True)]
    for p in stacked:
        p.grad = torch.randn_like(p) * torch.tensor([0.01, 1.0, 10.0]).view(-1, *[1] * (p.dim() - 1))
    singles = [[torch.nn.Parameter(p[i].detach().clone()) for p in stacked] for i in range(3)]
    for i, ps in enumerate(singles):
        for q, p in zip(ps, stacked):
            q.grad = p.grad[i].clone()
        torch.nn.utils.clip_grad_norm_(ps, 1.0)
    clip_per_seed(stacked, 1.0)
    for i, ps in enumerate(singles):
        for q, p in zip(ps, stacked):
            torch.testing.assert_close(p.grad[i], q.grad)


def test_refusals(kv_task):
    with pytest.raises(ValueError, match="one seed per model"):
        train_stacked(models_for(kv_task, [0]), kv_task, quick(), [0, 1])
    with pytest.raises(ValueError, match="same shape"):
        stack_batches([kv_task.train_batch(torch.Generator().manual_seed(0), 4),
                       kv_task.train_batch(torch.Generator().manual_seed(0), 5)])
    with pytest.raises(RuntimeError, match="randomness"):          # dropout: no per-seed RNG stream to draw from
        train_stacked(models_for(kv_task, [0, 1], dropout=0.1), kv_task, quick(steps=2), [0, 1])
