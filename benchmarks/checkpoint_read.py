"""Issue 49 benchmark: reading a trained checkpoint per layer and head, as ``--model-weights`` does, timed.

It makes a checkpoint at the given shape (a ``LlamaForCausalLM`` at random init, saved with ``save_pretrained`` in
the given dtype: a stand-in for trained weights; the cost does not depend on their values), then reads it in a
fresh process at two torch threads (``--threads``), through the trial's own path: ``harness.trial.model.resolve`` and
``preflight``, ``checkpoint.prepare`` (names and shapes checked, probe ids drawn) and ``checkpoint.read`` (the readings at the
checkpoint and at init on ``--count`` x ``--length`` probe tokens). It prints the wall time of each step and the
reading process's peak resident memory. Target (issue 49): a 1B checkpoint in bf16, 8 x 256 tokens, under 5
minutes and 8 GB on 2 CPU cores.

    python benchmarks/checkpoint_read.py                         # ~1.2B: hidden 2048, 16 layers, bf16
    python benchmarks/checkpoint_read.py --hidden 512 --layers 8 --vocab 32000   # a small shape
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def overrides(a: argparse.Namespace) -> dict[str, int]:
    return dict(hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
                num_key_value_heads=a.kv_heads, intermediate_size=a.intermediate or 4 * a.hidden,
                vocab_size=a.vocab, max_position_embeddings=max(a.length, 512))


def make(a: argparse.Namespace, folder: Path) -> int:
    """The checkpoint, saved in ``a.dtype``; its parameter count."""
    import torch
    import transformers

    torch.manual_seed(0)
    with torch.device("meta"):
        n = sum(p.numel() for p in transformers.LlamaForCausalLM(transformers.LlamaConfig(**overrides(a))).parameters())
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**overrides(a))).to(getattr(torch, a.dtype))
    model.save_pretrained(folder)
    return n


def read(a: argparse.Namespace, folder: Path) -> dict[str, float]:
    import torch

    torch.set_num_threads(a.threads)
    from harness.trial import checkpoint, model as models
    from harness.trial import checkpoint_probes as readings

    out: dict[str, float] = {}
    t = time.perf_counter()
    trial = models.preflight(models.resolve(
        config="LlamaConfig", overrides=[f"{k}={v}" for k, v in overrides(a).items()]))
    out["preflight_s"] = time.perf_counter() - t
    t = time.perf_counter()
    ckpt = checkpoint.prepare(trial, str(folder))
    ckpt.ids = ckpt.ids[:a.count, :a.length]
    out["prepare_s"] = time.perf_counter() - t
    t = time.perf_counter()
    df = checkpoint.read(trial, ckpt, ckpt.ids)
    out["read_s"] = time.perf_counter() - t
    out["rows"] = len(df)
    out["layers_out_of_regime"] = len(checkpoint.regime_rows(df))
    out["heads"] = int(readings.layer_table(df).shape[0] // 2)
    out["peak_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=16)
    p.add_argument("--intermediate", type=int, default=None, help="default 4 x hidden")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--dtype", default="bfloat16", choices=("bfloat16", "float16", "float32"))
    p.add_argument("--count", type=int, default=8)
    p.add_argument("--length", type=int, default=256)
    p.add_argument("--threads", type=int, default=2, help="torch threads of the reading process (the target's 2 cores)")
    p.add_argument("--read", type=Path, default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.read is not None:                       # the reading process: its own peak memory only
        print(json.dumps(read(a, a.read)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "ckpt"
        t = time.perf_counter()
        n = make(a, folder)
        made = time.perf_counter() - t
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(f"checkpoint: {n / 1e6:.0f}M parameters, {a.dtype}, {size / 1e9:.2f} GB on disk, made in {made:.0f} s")
        env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run([sys.executable, __file__, *sys.argv[1:], "--read", str(folder)], env=env,
                              capture_output=True, text=True)
        if proc.returncode:
            sys.exit(f"the read failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
        r = json.loads(proc.stdout.strip().splitlines()[-1])
    total = r["preflight_s"] + r["prepare_s"] + r["read_s"]
    print(f"read {a.count} x {a.length} probe tokens at {a.threads} thread(s): pre-flight {r['preflight_s']:.1f} s, "
          f"prepare {r['prepare_s']:.1f} s, readings (checkpoint and init) {r['read_s']:.1f} s; total {total:.1f} s "
          f"(target 300 s); peak resident memory {r['peak_gb']:.2f} GB (target 8 GB)")
    print(f"{r['heads']} heads read; {r['layers_out_of_regime']} layers out of the footnote's regime")


if __name__ == "__main__":
    main()
