"""Issue 2 benchmark: one training step (forward, backward, Adam) of our encoder layer against
``nn.TransformerEncoderLayer`` at d_model 256, h 4, sequence 128, batch 16, on CPU.

Prints the ratio ours/torch for taps off (target <= 1.15: the SDPA fast path must cost nothing)
and with every tap on (target <= 2.0: the explicit path is for measurement, not for speed).
Timings are medians over interleaved rounds (ours and torch alternate, so load from other
processes on a shared machine hits both alike).

    python benchmarks/bench_encoder_layer.py [--rounds 20] [--threads 1] [--dropout 0.0]
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model import EncoderLayer, ModelConfig, capture  # noqa: E402

D_MODEL, HEADS, SEQ, BATCH, D_FF = 256, 4, 128, 16, 1024
TARGET_OFF, TARGET_ON = 1.15, 2.0


def _step_fn(layer: nn.Module, x: torch.Tensor, ctx=contextlib.nullcontext):
    opt = torch.optim.Adam(layer.parameters(), lr=1e-4)

    def step() -> None:
        with ctx():
            loss = layer(x).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
        opt.step()
    return step


def _time(step, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - t0) / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20, help="interleaved timing rounds (median taken)")
    ap.add_argument("--steps", type=int, default=3, help="training steps per round")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the dev machine is shared: 1-2)")
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="dropout for both layers (ours applies it to attention weights too, as torch does)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    cfg = ModelConfig(d_model=D_MODEL, n_heads=HEADS, d_ff=D_FF, dropout=args.dropout, attn_dropout=args.dropout)
    ours = EncoderLayer(cfg).train()
    ref = nn.TransformerEncoderLayer(D_MODEL, HEADS, D_FF, dropout=args.dropout, batch_first=True).train()
    x = torch.randn(BATCH, SEQ, D_MODEL)
    steps = {
        "torch": _step_fn(ref, x),
        "ours_taps_off": _step_fn(ours, x),
        "ours_taps_on": _step_fn(ours, x, lambda: capture(ours)),
        "ours_taps_on_retain_grad": _step_fn(ours, x, lambda: capture(ours, retain_grad=True)),
    }
    for step in steps.values():                 # warm-up (allocator, oneDNN kernels)
        _time(step, 2)
    times: dict[str, list[float]] = {k: [] for k in steps}
    for r in range(args.rounds):
        for name, step in steps.items():
            times[name].append(_time(step, args.steps))
        print(f"\rround {r + 1}/{args.rounds}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"encoder layer train step (fwd+bwd+Adam), d_model={D_MODEL} h={HEADS} seq={SEQ} batch={BATCH} "
          f"d_ff={D_FF} dropout={args.dropout}, CPU threads={args.threads}, torch {torch.__version__}")
    for k, v in med.items():
        print(f"  {k:26s} {v * 1e3:8.2f} ms/step (median of {args.rounds} x {args.steps})")
    off, on = med["ours_taps_off"] / med["torch"], med["ours_taps_on"] / med["torch"]
    on_rg = med["ours_taps_on_retain_grad"] / med["torch"]
    print(f"ratio ours/torch taps off: {off:.3f}  (target <= {TARGET_OFF}) {'OK' if off <= TARGET_OFF else 'OVER'}")
    print(f"ratio ours/torch taps on:  {on:.3f}  (target <= {TARGET_ON}) {'OK' if on <= TARGET_ON else 'OVER'}")
    print(f"ratio ours/torch taps on + retain_grad: {on_rg:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
