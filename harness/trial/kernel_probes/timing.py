"""Speed (R3): the kernel's forward+backward time and peak memory against PyTorch's SDPA at the same sizes."""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from harness.trial.kernel_probes.reference import _first_line


def _step(fn: Callable, q, k, v, backward: bool) -> Callable[[], None]:
    def run():
        leaves = [t.detach().requires_grad_(backward) for t in (q, k, v)]
        out = fn(*leaves)
        if backward:
            out.sum().backward()
    return run


def speed(kernel: Callable, sizes, *, reps: int = 3, calls: int = 1, dtype: torch.dtype = torch.float32,
          device: torch.device | str = "cpu") -> pd.DataFrame:
    """Per (B, H, L, D) size and round (``reps`` rounds): the kernel's and SDPA's forward+backward seconds and their
    ratio. In each round the two are called in turn, ``calls`` times each (kernel, SDPA, kernel, SDPA, ...; SDPA first
    in every other round), and each side's fastest call counts (timeit's rule: the minimum is the call least
    disturbed by other processes; a burst of load falls on both sides of a round alike). The clock is ``_now``'s (CPU
    seconds on a CPU, synchronised wall time on CUDA), after one warm-up call each; forward only where the kernel has
    no backward here, both sides alike. Peak memory of one call
    each from ``harness.measure.bench.peak_memory_bytes`` (CUDA: max allocated; CPU: the profiler's allocator
    events)."""
    from harness.measure.bench import peak_memory_bytes

    rows = []
    for B, H, L, D in sizes:
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(B, H, L, D, generator=g).to(device=device, dtype=dtype) for _ in range(3))
        ours = lambda a, b, c: kernel(a, b, c)[0]                                    # noqa: E731
        theirs = lambda a, b, c: F.scaled_dot_product_attention(a, b, c)             # noqa: E731
        backward, note = True, ""
        try:
            _step(ours, q, k, v, True)()
        except Exception as exc:
            backward, note = False, f"forward only: backward raised {_first_line(exc)}"
            try:
                _step(ours, q, k, v, False)()
            except Exception as exc2:
                rows.append({"B": B, "H": H, "L": L, "D": D, "rep": None, "rejected": _first_line(exc2)})
                continue
        steps = {"kernel": _step(ours, q, k, v, backward), "sdpa": _step(theirs, q, k, v, backward)}
        steps["sdpa"]()
        peak = {name: peak_memory_bytes(fn, device) for name, fn in steps.items()}
        for rep in range(reps):
            secs: dict[str, float] = {"kernel": math.inf, "sdpa": math.inf}
            for _ in range(calls):
                for name in (("kernel", "sdpa") if rep % 2 == 0 else ("sdpa", "kernel")):
                    t0 = _now(device)
                    steps[name]()
                    secs[name] = min(secs[name], _now(device) - t0)
            rows.append({"B": B, "H": H, "L": L, "D": D, "rep": rep, "calls": calls, "kernel_s": secs["kernel"],
                         "sdpa_s": secs["sdpa"], "time_ratio": secs["kernel"] / secs["sdpa"],
                         "kernel_peak_bytes": peak["kernel"], "sdpa_peak_bytes": peak["sdpa"],
                         "memory_ratio": peak["kernel"] / max(peak["sdpa"], 1), "backward": backward,
                         "rejected": "", "note": note})
    return pd.DataFrame(rows)


def _now(device) -> float:
    """The clock ``speed`` reads: on CUDA wall time after a synchronise; on a CPU the process's CPU seconds
    (``time.process_time``), which a process waiting for a core does not accrue (both sides run on one torch thread,
    so that is their compute time). Under 3 busy processes on 2 cores the SDPA wrapper's rounds read 0.57..1.17 by
    wall time and 0.94..1.04 by CPU time (8 rounds x 3 calls, 2026-12-03)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
        return time.perf_counter()
    return time.process_time()


def log_ratios(table: pd.DataFrame, column: str = "time_ratio") -> np.ndarray:
    """ln of a ratio column over the measured rows (the samples a reported criterion is decided on)."""
    t = table[table.get("rejected", "") == ""] if "rejected" in table else table
    return np.log(t[column].to_numpy(dtype=float)) if column in t else np.array([])
