"""Issue 3 benchmark: data generation against the model step in the smoke configs (probes off).

For each smoke-like config (the sizes the claim issues name) it times ``task.train_batch`` alone and one
``harness.train.loop.optimizer_step`` (forward, loss, backward, Adam, schedule) on a pre-generated batch, and
prints data / (data + step). Target: under 10% for every config: the model must dominate a step.
Medians over interleaved rounds (data and step alternate, so load from other processes hits both alike).

    python benchmarks/bench_data_vs_step.py [--rounds 30] [--threads 1]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.data import make_task  # noqa: E402
from harness.train.loop import TrainConfig, build_for_task, make_optimizer, optimizer_step  # noqa: E402
from model import ModelConfig  # noqa: E402

TARGET = 0.10
BATCH = 64
# (label, task name, task kwargs, model name, ModelConfig overrides, model kwargs)
CONFIGS = [
    ("C1 reverse, transformer 2+2", "reverse", dict(vocab=20, min_len=6, max_len=12), "transformer",
     dict(d_model=64, n_heads=4, d_ff=256, n_encoder_layers=2, n_decoder_layers=2), {}),
    ("C1 number words en->de, transformer 2+2", "number_words_de", dict(max_n=9999), "transformer",
     dict(d_model=64, n_heads=4, d_ff=256, n_encoder_layers=2, n_decoder_layers=2), {}),
    ("C1 reverse, lstm seq2seq", "reverse", dict(vocab=20, min_len=6, max_len=12), "lstm_seq2seq",
     dict(d_model=64, n_encoder_layers=1, n_decoder_layers=1), {}),
    ("C3/C4 kv lookup 16 pairs, 1 layer", "kv_lookup", dict(n_pairs=16), "encoder_tagger",
     dict(d_model=64, n_heads=4, d_ff=256, n_encoder_layers=1), {}),
    ("C5 multi retrieval M=4, 1 layer", "multi_retrieval", dict(n_marked=4, seq_len=16, vocab=16),
     "encoder_tagger", dict(d_model=64, n_heads=4, d_ff=256, n_encoder_layers=1), {}),
    ("C2 first-equals-last d=16, 2 layers", "first_equals_last", dict(d=16), "encoder_tagger",
     dict(d_model=64, n_heads=4, d_ff=256, n_encoder_layers=2), {}),
    ("C2 delayed copy d=16, conv k3", "delayed_copy", dict(d=16), "conv",
     dict(d_model=64, n_encoder_layers=2), {}),
]


def measure(label, task_name, task_kw, model_name, cfg_kw, model_kw, rounds, reps):
    task = make_task(task_name, **task_kw)
    model = build_for_task(model_name, task, ModelConfig.small(**cfg_kw), seed=0, **model_kw)
    tcfg = TrainConfig(steps=10**6, batch_size=BATCH, warmup=100)
    opt, sched = make_optimizer(model, tcfg, model.cfg.d_model)
    gen = torch.Generator().manual_seed(0)
    batches = [task.train_batch(gen, BATCH) for _ in range(reps)]
    for b in batches[:3]:                                   # warm up
        optimizer_step(model, b, task, opt, sched, tcfg)
    data_t, step_t = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            task.train_batch(gen, BATCH)
        data_t.append((time.perf_counter() - t0) / reps)
        t0 = time.perf_counter()
        for b in batches:
            optimizer_step(model, b, task, opt, sched, tcfg)
        step_t.append((time.perf_counter() - t0) / reps)
    data, step = statistics.median(data_t), statistics.median(step_t)
    return data, step, data / (data + step)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=5, help="batches per timed round")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"batch {BATCH}, {args.threads} thread(s), median of {args.rounds} rounds x {args.reps} batches")
    print(f"{'config':42s} {'data ms':>8s} {'step ms':>8s} {'data share':>10s}")
    worst = 0.0
    for label, *rest in CONFIGS:
        data, step, share = measure(label, *rest, rounds=args.rounds, reps=args.reps)
        worst = max(worst, share)
        print(f"{label:42s} {data * 1e3:8.3f} {step * 1e3:8.2f} {share:10.1%}")
    ok = worst < TARGET
    print(f"worst data share {worst:.1%} (target < {TARGET:.0%}): {'OK' if ok else 'OVER TARGET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
