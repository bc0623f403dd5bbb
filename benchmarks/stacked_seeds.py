"""Issue 57 benchmark: seeds per second of C3's sweep arm, the one-seed loop against k seeds stacked in one step.

For each arm of C3's sweep (harness/profiles/sweep.py's smoke block: key-value lookup, one attention layer,
d_model 64) it trains k seeds with ``harness.train.loop.train`` one after another and with
``harness.train.stacked.train_stacked`` in one call, for k = 1, 4, 16, and prints seeds per second for each and
their ratio (stacked / loop: above 1, the stacked path is faster). Training only, as the sweep trains (its train
block: foreach Adam, its thread count), with ``--steps`` steps and one held-out evaluation at the end; the model
is built before the clock starts. Best of ``--rounds`` rounds (load from other processes only slows a round).

    python benchmarks/stacked_seeds.py [--steps 30] [--rounds 2] [--ks 1 4 16] [--threads 1] [--device cuda]

On a GPU (``--device cuda``, run by scripts/gpu_check.sh) the small model is bound by kernel launches, not by
arithmetic, which is where stacking k seeds into one step is expected to pay.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.profiles.sweep import SMOKE  # noqa: E402
from harness.study.sweeps import build_sweep_model, sweep_task  # noqa: E402
from harness.train.loop import TrainConfig, train  # noqa: E402
from harness.train.stacked import train_stacked  # noqa: E402

# C3's sweep arms at its smoke grid's small and large d_k (claims/test_c3_softmax_saturation.py's SWEEP_ARMS)
ARMS = [("scaled", 8, {"scale_exponent": 0.5}), ("unscaled", 256, {"scale": "none"}),
        ("scaled", 256, {"scale_exponent": 0.5}), ("additive", 256, {"score": "additive"})]


def seeds_per_second(stacked: bool, block, task, d_k, overrides, cfg, k, rounds) -> float:
    best = float("inf")
    for _ in range(rounds):
        models = [build_sweep_model(block, task, d_k, overrides, seed) for seed in range(k)]
        t0 = time.perf_counter()
        if stacked:
            train_stacked(models, task, cfg, list(range(k)))
        else:
            for seed, model in enumerate(models):
                train(model, task, cfg, seed)
        if cfg.device != "cpu":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return k / best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", help="the device the runs train on (cpu, cuda)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)              # as the sweep trains (harness.study.sweeps._one_run)
    block = SMOKE["sweep"]
    task = sweep_task(block)
    cfg = TrainConfig.from_dict({**block["train"], "steps": args.steps, "eval_every": 0,
                                 "num_threads": args.threads, "device": args.device})
    print(f"C3 sweep arm, smoke block: {block['task']}, d_model {block['model']['d_model']}, batch "
          f"{cfg.batch_size}, {args.steps} steps, {args.threads} thread(s), {args.device}; seeds/s best of {args.rounds}")
    print(f"{'arm':>9} {'d_k':>4} {'k':>3} {'loop':>8} {'stacked':>8} {'ratio':>6}")
    for arm, d_k, overrides in ARMS:
        for k in args.ks:
            loop = seeds_per_second(False, block, task, d_k, overrides, cfg, k, args.rounds)
            stacked = seeds_per_second(True, block, task, d_k, overrides, cfg, k, args.rounds)
            print(f"{arm:>9} {d_k:>4} {k:>3} {loop:8.3f} {stacked:8.3f} {stacked / loop:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
