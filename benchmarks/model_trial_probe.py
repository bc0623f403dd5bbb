"""Issue 48 benchmark: the probe-level model trial (M0, R1, C4, R2) on released shapes, timed as a user runs it.

Each shape is a transformers 5.23 config class at a released model's width, cut to 2 layers and built at random
init, offline. For each, one subprocess runs ``pytest`` in process on the four claims with ``--model-config`` and
the overrides, at one torch thread, and prints each claim's wall time, its budget (``budget_s``: it grows with the
parameter count) and the peak resident memory of the process while the claim ran (sampled every 20 ms), then the
run's whole time. Target: each claim under 60 s and 4 GB on 2 CPU cores.

    python benchmarks/model_trial_probe.py [gpt-neo-1.3b qwen3-0.6b ...] [--profile smoke]

The builds at init take the vocabulary cut to ``harness.trial.model.PROBE_VOCAB`` tokens (the config's pad token
kept inside): Gemma 2 9B's 256k-token vocabulary alone is 3.7 GB of float32 parameters.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODULES = ("claims/test_m0_model_checks.py", "claims/test_r1_scale_by_sqrt_dk.py", "claims/test_c4_scaling.py",
           "claims/test_r2_saturation_check.py")
TARGET_S, TARGET_GB = 60.0, 4.0
#: name -> (config class, overrides): the released width, heads and vocabulary; 2 layers
SHAPES = {
    "gpt-neo-1.3b": ("GPTNeoConfig", ["hidden_size=2048", "num_heads=16", "num_layers=2",
                                      "attention_types=[[['global', 'local'], 1]]"]),
    "gemma2-9b": ("Gemma2Config", ["hidden_size=3584", "num_attention_heads=16", "num_key_value_heads=8",
                                   "head_dim=256", "intermediate_size=14336", "query_pre_attn_scalar=256",
                                   "vocab_size=256000", "num_hidden_layers=2"]),
    "qwen3-0.6b": ("Qwen3Config", ["hidden_size=1024", "intermediate_size=3072", "num_attention_heads=16",
                                   "num_key_value_heads=8", "head_dim=128", "vocab_size=151936",
                                   "num_hidden_layers=2"]),
    "phi-3-mini": ("Phi3Config", ["hidden_size=3072", "intermediate_size=8192", "num_attention_heads=32",
                                  "num_key_value_heads=32", "vocab_size=32064", "num_hidden_layers=2"]),
    "olmo-2-1b": ("Olmo2Config", ["hidden_size=2048", "intermediate_size=8192", "num_attention_heads=16",
                                  "num_key_value_heads=16", "vocab_size=100352", "num_hidden_layers=2"]),
}


def _rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


class Meter:
    """A pytest plugin: each claim test's wall time and the process's peak resident memory while it ran."""

    def __init__(self) -> None:
        self.claims: dict[str, dict[str, float]] = {}
        self.peak = 0

    def _sample(self, stop: threading.Event) -> None:
        while not stop.wait(0.02):
            self.peak = max(self.peak, _rss())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        from harness.session import claim_marker_id
        self.peak = _rss()
        stop = threading.Event()
        thread = threading.Thread(target=self._sample, args=(stop,), daemon=True)
        thread.start()
        t0 = time.perf_counter()
        yield
        stop.set()
        thread.join()
        self.peak = max(self.peak, _rss())
        self.claims[claim_marker_id(item) or item.name] = {"s": time.perf_counter() - t0, "peak_gb": self.peak / 1e9}


def one(name: str, profile: str) -> dict:
    cls, overrides = SHAPES[name]
    meter = Meter()
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        args = ["-p", "no:cacheprovider", "-q", "-n", "0", *MODULES, f"--model-config={cls}", "--profile", profile,
                f"--report-dir={out}"] + [f"--model-override={o}" for o in overrides]
        code = pytest.main(args, plugins=[meter])
        wall = time.perf_counter() - t0
        results = json.loads((Path(out) / "results.json").read_text()) if (Path(out) / "results.json").exists() \
            else {"claims": {}}
    from harness.trial import model as models
    trial = models.resolve(config=cls, overrides=overrides)
    trial.base = models._on_meta(trial)             # the pre-flight's cut, read on the meta device
    trial.vocab = models.probe_vocab(trial)
    return {"shape": name, "exit": int(code), "wall_s": wall, "n_params": models.parameter_count(trial),
            "n_params_built": models.parameter_count(trial, **models.vocab_overrides(trial)),
            "vocab": list(trial.vocab) if trial.vocab else None,
            "claims": {cid: {**m, "budget_s": results["claims"].get(cid, {}).get("budget_s"),
                             "verdict": results["claims"].get(cid, {}).get("verdict")}
                       for cid, m in meter.claims.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", nargs="*", metavar="SHAPE", help=f"of {', '.join(SHAPES)} (default: all)")
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    unknown = [s for s in args.shapes if s not in SHAPES]
    if unknown:
        print(f"unknown shape {unknown[0]!r}; the shapes: {', '.join(SHAPES)}", file=sys.stderr)
        return 4
    if args.one:
        print(json.dumps(one(args.one, args.profile)))
        return 0
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}
    worst = 0
    for name in args.shapes or list(SHAPES):
        proc = subprocess.run([sys.executable, __file__, "--one", name, "--profile", args.profile], cwd=REPO,
                              env=env, capture_output=True, text=True)
        line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("{")), None)
        if proc.returncode or line is None:
            print(f"{name}: failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-400:]}")
            worst = 1
            continue
        r = json.loads(line)
        cut = (f", built at init with {r['n_params_built'] / 1e6:.0f}M ({r['vocab'][0]} of its {r['vocab'][1]} "
               f"tokens)" if r.get("vocab") else "")
        print(f"{name}: {r['n_params'] / 1e6:.0f}M parameters (2 layers){cut}, {r['wall_s']:.0f} s in all")
        for cid, m in r["claims"].items():
            flag = "" if m["s"] <= TARGET_S and m["peak_gb"] <= TARGET_GB else "  over the target"
            budget = f" / budget {m['budget_s']:.0f} s" if m.get("budget_s") else ""
            print(f"  {cid:<3} {m['s']:6.1f} s{budget:<18} peak {m['peak_gb']:.2f} GB  {m['verdict']}{flag}")
    return worst


if __name__ == "__main__":
    sys.exit(main())
