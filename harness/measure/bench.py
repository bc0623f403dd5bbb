"""Time and peak memory of one attention layer's forward+backward, and pytest-benchmark's JSON (R3, issue 9).

R3 ("prefer the operation that maps to optimized matmul") is a claim about cost, so its measurements are
cost measurements: seconds per call and peak bytes per call of a step built here, for each attention
variant of the ONE ``MultiHeadAttention`` module:

* ``dot_sdpa``: dot-product through ``F.scaled_dot_product_attention`` (the module's fast path);
* ``dot_matmul``: dot-product written out, q k^T -> softmax -> @ v (the module's explicit path, taken
  because a tap on ``q`` is switched on; the tap stores a reference, it copies nothing);
* ``additive``: Bahdanau's score as the model computes it, materialising (B, h, T, S, d_k);
* ``additive_chunked``: the same score through ``ModelConfig.additive_chunk`` (queries in chunks, tanh
  recomputed in backward: O(B h T S) memory).

Peak memory: on CUDA ``torch.cuda.max_memory_allocated`` over the call; on CPU the torch profiler's
allocator events (``profile_memory=True``), whose running total of bytes allocated during the call is
exact for torch tensors (tracemalloc does not see them, and RSS hides reuse of freed heap memory).
Timings are ``time.perf_counter`` per call (CUDA synchronised), so they work under xdist, where the
pytest-benchmark fixture switches itself off; ``benchmark_record``/``write_benchmark_json`` store them
in pytest-benchmark's JSON format (its own ``Stats``), which ``pytest-benchmark compare`` and
``harness.report`` read.
"""
from __future__ import annotations

import datetime as _dt
import math
import platform
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import torch

from harness.record.results import write_json_atomic
from model import ModelConfig, MultiHeadAttention, capture

ATTENTION_VARIANTS = ("dot_sdpa", "dot_matmul", "additive", "additive_chunked")


def attention_config(variant: str, *, n_heads: int, d_k: int, additive_chunk: int = 16) -> ModelConfig:
    """The ModelConfig of one R3 variant: d_model = n_heads * d_k, d_v = d_k, no dropout."""
    if variant not in ATTENTION_VARIANTS:
        raise ValueError(f"variant: unknown attention variant {variant!r}; valid: {', '.join(ATTENTION_VARIANTS)}")
    extra: dict[str, Any] = {}
    if variant.startswith("additive"):
        extra["score"] = "additive"
    if variant == "additive_chunked":
        extra["additive_chunk"] = additive_chunk
    return ModelConfig(src_vocab=2, d_model=n_heads * d_k, n_heads=n_heads, d_k=d_k, d_v=d_k,
                       n_encoder_layers=0, n_decoder_layers=0, **extra)


def attention_step(variant: str, *, batch: int, n: int, n_heads: int, d_k: int, seed: int,
                   device: torch.device | str = "cpu", additive_chunk: int = 16,
                   dtype: torch.dtype = torch.float32) -> Callable[[], None]:
    """A callable running forward+backward of one self-attention layer on a (batch, n, n_heads*d_k) input.

    Weights and input are drawn from ``seed``. Gradients are dropped at the end of the call, so every call
    starts from the same memory and allocates the same tensors (the peak of one call is that of any call).
    """
    cfg = attention_config(variant, n_heads=n_heads, d_k=d_k, additive_chunk=additive_chunk)
    torch.manual_seed(int(seed))
    layer = MultiHeadAttention(cfg).to(device=device, dtype=dtype)
    g = torch.Generator().manual_seed(int(seed) + 1)
    x = torch.randn(batch, n, cfg.d_model, generator=g, dtype=dtype).to(device).requires_grad_(True)
    explicit = variant == "dot_matmul"

    def step() -> None:
        if explicit:
            with capture(layer, "q"):            # any active tap sends dot-product down the matmul path
                y = layer(x)
        else:
            y = layer(x)
        y.sum().backward()
        layer.zero_grad(set_to_none=True)        # at the end: each call starts with no gradients held
        x.grad = None

    step.layer, step.input = layer, x   # type: ignore[attr-defined]  (for checks: which path, which shapes)
    return step


def estimated_peak_bytes(variant: str, *, batch: int, n: int, n_heads: int, d_k: int, additive_chunk: int = 16,
                         itemsize: int = 4) -> int:
    """A generous upper estimate of one call's peak bytes (measured: additive keeps about three
    (B, h, n, n, d_k) tensors alive), so a caller can skip a cell that would not fit before trying it."""
    pair = batch * n_heads * n * n * itemsize                       # one (B, h, n, n) tensor
    width = n_heads * d_k
    base = (8 * batch * n * width + 8 * width * width) * itemsize    # activations and their grads, weight grads
    if variant == "additive":
        core = 4 * pair * d_k
    elif variant == "additive_chunked":
        core = 4 * pair + 4 * batch * n_heads * min(additive_chunk, n) * n * d_k * itemsize
    else:
        core = 4 * pair
    return int(1.25 * (base + core)) + 2**20                          # + slack for small allocations


def available_memory_bytes(device: torch.device | str = "cpu") -> int:
    """Free memory a measurement may use: CUDA's free bytes, or the kernel's MemAvailable on CPU."""
    dev = torch.device(device)
    if dev.type == "cuda":
        return int(torch.cuda.mem_get_info(dev)[0])
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import os

    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def _sync(device: torch.device | str | None) -> None:
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def time_per_call(fn: Callable[[], Any], iterations: int = 1, device: torch.device | str | None = None) -> float:
    """Mean wall seconds per call over ``iterations`` back-to-back calls (CUDA synchronised at both ends)."""
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(iterations):
        fn()
    _sync(device)
    return (time.perf_counter() - t0) / iterations


def iterations_for(seconds_per_call: float, min_time: float, max_iterations: int) -> int:
    """Calls per timed round so a round lasts at least ``min_time`` (pytest-benchmark's calibration idea)."""
    if seconds_per_call <= 0 or not math.isfinite(seconds_per_call):
        return max_iterations
    return int(min(max_iterations, max(1, math.ceil(min_time / seconds_per_call))))


def peak_memory_bytes(fn: Callable[[], Any], device: torch.device | str = "cpu") -> int:
    """Peak bytes allocated by torch during one call of ``fn``, above what was allocated before it."""
    dev = torch.device(device)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        base = torch.cuda.memory_allocated(dev)
        fn()
        torch.cuda.synchronize(dev)
        return int(torch.cuda.max_memory_allocated(dev) - base)
    if dev.type != "cpu":
        raise ValueError(f"device: peak memory is measured on cpu or cuda, got {dev}")
    return _cpu_peak_bytes(fn)


def _cpu_peak_bytes(fn: Callable[[], Any]) -> int:
    """The maximum, over the profiler's allocator events in time order, of bytes allocated during the call
    minus bytes of those allocations freed so far (torch.autograd.profiler directly: torch.profiler.profile
    imports torch._inductor on entry, seconds of start-up for nothing here).

    Frees of tensors allocated before the call lower nothing (the allocator reporter does not know their
    size), so the figure is "extra memory this call needs", the same for every call of a step.
    """
    import torch.autograd.profiler as autograd_profiler

    try:
        from torch._C._profiler import _EventType
    except ImportError as exc:  # pragma: no cover - a torch without the event tree
        raise RuntimeError("this torch has no profiler event tree (torch._C._profiler._EventType); "
                           "measure CPU peak memory another way") from exc
    with autograd_profiler.profile(use_cpu=True, profile_memory=True) as prof:
        fn()
    events = []
    stack = list(prof.kineto_results.experimental_event_tree())
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.tag == _EventType.Allocation and node.extra_fields.device.type == "cpu":
            events.append((node.start_time_ns, int(node.extra_fields.alloc_size),
                           int(node.extra_fields.total_allocated)))
    if not events:
        return 0
    events.sort()
    # the reporter's running total carries over from earlier profiling sessions: measure from where it stood
    base = events[0][2] - events[0][1]
    return max(0, max(total for _, _, total in events) - base)


# ------------------------------------------------------------------------------ pytest-benchmark's JSON
def _cpu_brand() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(device: torch.device | str = "cpu") -> dict[str, Any]:
    """pytest-benchmark's ``machine_info`` keys (without py-cpuinfo's slow probe), plus torch facts."""
    dev = torch.device(device)
    info: dict[str, Any] = {
        "node": platform.node(), "processor": platform.processor(), "machine": platform.machine(),
        "python_implementation": platform.python_implementation(), "python_version": platform.python_version(),
        "release": platform.release(), "system": platform.system(),
        "cpu": {"brand_raw": _cpu_brand()}, "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(), "device": str(dev),
    }
    if dev.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(dev)
    return info


def benchmark_record(name: str, group: str, times: Iterable[float], *, params: Mapping[str, Any],
                     iterations: int | Iterable[int] = 1, extra_info: Mapping[str, Any] | None = None,
                     fullname: str | None = None) -> dict[str, Any]:
    """One entry of pytest-benchmark's ``benchmarks`` list; ``times`` are seconds per call, one per round."""
    from pytest_benchmark.stats import Stats

    data = [float(t) for t in times]
    if not data:
        raise ValueError(f"benchmark {name!r}: no timings")
    stats = Stats()
    for t in data:
        stats.update(t)
    st = dict(stats.as_dict(), data=data)
    its = list(iterations) if not isinstance(iterations, int) else [iterations]
    st["iterations"] = max(its)
    param = "-".join(f"{v}" for v in params.values())
    return {"group": group, "name": name, "fullname": fullname or name, "params": dict(params), "param": param,
            "extra_info": dict(extra_info or {}),
            "options": {"disable_gc": False, "timer": "perf_counter", "min_rounds": len(data), "max_time": None,
                        "min_time": None, "warmup": True},
            "stats": st}


def write_benchmark_json(path: Path, records: Iterable[Mapping[str, Any]], *, device: torch.device | str = "cpu",
                         commit_info: Mapping[str, Any] | None = None) -> Path:
    """Write a pytest-benchmark JSON file (the shape ``--benchmark-json`` writes) and return its path."""
    from pytest_benchmark import __version__ as pb_version

    out = {"machine_info": machine_info(device), "commit_info": dict(commit_info or {}),
           "benchmarks": [dict(r) for r in records],
           "datetime": _dt.datetime.now(_dt.timezone.utc).isoformat(), "version": pb_version}
    write_json_atomic(Path(path), out)
    return Path(path)


# -------------------------------------------------------------------- training steps against length (C1, GPU)
def training_step_seconds(model: torch.nn.Module, task: Any, cfg: Any, batch_size: int, steps: int,
                          warmup: int = 2, seed: int = 0) -> list[float]:
    """Wall seconds of each of ``steps`` training steps (``harness.train.loop.optimizer_step``: forward, loss,
    backward, clip, Adam) of ``model`` on ``task``'s training batches of ``batch_size`` rows on ``cfg.device``,
    after ``warmup`` untimed steps. The batch is drawn and moved before the clock starts; CUDA is synchronised at
    both ends of every step, so a step's time is its kernels' time, not their launch."""
    from harness.train.loop import make_optimizer, optimizer_step

    device = torch.device(cfg.device)
    model.to(device).train()
    opt, sched = make_optimizer(model, cfg, getattr(getattr(model, "cfg", None), "d_model", None))
    gen = torch.Generator().manual_seed(seed)
    times = []
    for i in range(warmup + steps):
        batch = task.train_batch(gen, batch_size).to(device)
        _sync(device)
        t0 = time.perf_counter()
        optimizer_step(model, batch, task, opt, sched, cfg)
        _sync(device)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    return times


def step_time_vs_length(models: Mapping[str, tuple[str, ModelConfig]], lengths: Iterable[int],
                        tokens_per_batch: int, repeats: int, steps: int, *, device: torch.device | str = "cpu",
                        warmup: int = 2, train: Mapping[str, Any] | None = None, vocab: int = 20) -> "Any":
    """Median seconds per training step against sequence length ``n`` at a fixed number of source tokens per
    batch (``tokens_per_batch // n`` rows of reverse at exactly length n): ``models`` maps an arm to (registry
    name, config). Arms are interleaved inside each (repeat, n), so drift in the machine's load hits all alike;
    repeat r builds every model from seed r. One row per (repeat, n, arm): arm, n, batch_size, s_per_step."""
    import pandas as pd

    from harness.data import make_task
    from harness.train.loop import TrainConfig, build_for_task

    tcfg = TrainConfig.from_dict({"schedule": "constant", "lr": 1e-3, **(train or {}), "steps": steps,
                                  "device": str(device)})
    rows = []
    for repeat in range(repeats):
        for n in lengths:
            task = make_task("reverse", vocab=vocab, min_len=int(n), max_len=int(n))
            batch = max(1, int(tokens_per_batch) // int(n))
            for arm, (name, cfg) in models.items():
                model = build_for_task(name, task, cfg, repeat)
                secs = training_step_seconds(model, task, tcfg, batch, steps, warmup, seed=repeat)
                rows.append({"arm": arm, "n": int(n), "repeat": repeat, "batch_size": batch,
                             "tokens": batch * int(n), "s_per_step": float(sorted(secs)[len(secs) // 2])})
                del model
    return pd.DataFrame(rows)


def step_time_slopes(times: "Any") -> "Any":
    """Per (arm, repeat) of ``step_time_vs_length``'s rows: the least-squares slope of ln seconds per step on
    ln n (the exponent of time ~ n^slope). One row per (arm, repeat): arm, repeat, slope."""
    import numpy as np
    import pandas as pd

    return pd.DataFrame([{"arm": arm, "repeat": rep, "slope": float(np.polyfit(np.log(g.n.to_numpy(float)),
                                                                               np.log(g.s_per_step.to_numpy(float)),
                                                                               1)[0])}
                         for (arm, rep), g in times.groupby(["arm", "repeat"], sort=False)])
