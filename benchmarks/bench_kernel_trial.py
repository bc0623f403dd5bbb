"""Issue 27 benchmark: the probe-level trial of one attention kernel, timed as a user runs it.

Runs ``pytest claims/test_m0_model_checks.py claims/test_r1_scale_by_sqrt_dk.py claims/test_r2_saturation_check.py
claims/test_r3_matmul.py --attention NAME --fast`` (M0, R1, R2 and R3 on the kernel; everything but the training
arm) in a subprocess with one torch thread, and prints its summary (failing properties, then verdicts) and wall
time. Target: <= 60 s on the 2-core CPU box.

    python benchmarks/bench_kernel_trial.py [examples.attention.sdpa_wrapper:attention] [--dtypes float32]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULES = ("claims/test_m0_model_checks.py", "claims/test_r1_scale_by_sqrt_dk.py",
           "claims/test_r2_saturation_check.py", "claims/test_r3_matmul.py")
TARGET_S = 60.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("attention", nargs="?", default="examples.attention.sdpa_wrapper:attention")
    ap.add_argument("--dtypes", default="float32")
    args = ap.parse_args()
    env = {**os.environ, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *MODULES, "--fast",
                               "--attention", args.attention, "--attention-dtypes", args.dtypes, "--report-dir", out],
                              cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    lines = proc.stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("attention on trial")), len(lines))
    summary = [line for line in lines[start:] if not line.startswith("results:")][:40]   # properties, then verdicts
    print("\n".join(summary) or proc.stdout[-3000:] + proc.stderr[-2000:])
    print(f"probe-level trial of {args.attention}: {wall:.1f} s wall (target <= {TARGET_S:.0f} s), "
          f"pytest exit {proc.returncode}")
    return 0 if wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
