"""harness.measure.bench: the attention variants R3 times are what they claim to be, peak memory is exact and
repeatable, and the pytest-benchmark JSON is one the report (and pytest-benchmark) can read."""
import json

import pytest
import torch
import torch.nn.functional as F

from harness.measure import bench
from harness.report.charts import load_benchmarks

SHAPE = dict(batch=2, n=16, n_heads=2, d_k=8)


def test_peak_memory_is_exact_and_repeatable():
    def two_live_one_freed():
        a = torch.empty(1_000_000, dtype=torch.uint8)
        b = torch.empty(2_000_000, dtype=torch.uint8)
        del a
        c = torch.empty(500_000, dtype=torch.uint8)
        return b.numel() + c.numel()

    first = bench.peak_memory_bytes(two_live_one_freed)
    assert first == bench.peak_memory_bytes(two_live_one_freed)
    assert 3_000_000 <= first < 3_000_000 + 4096          # a and b alive together; c comes after a is gone


def test_step_memory_repeatable_and_ordered():
    peaks = {}
    for v in bench.ATTENTION_VARIANTS:
        step = bench.attention_step(v, seed=0, additive_chunk=4, **{**SHAPE, "n": 32})
        peaks[v] = bench.peak_memory_bytes(step)
        assert bench.peak_memory_bytes(step) == peaks[v], v
    assert peaks["additive"] > peaks["additive_chunked"] > peaks["dot_matmul"]
    assert peaks["additive"] > 4 * peaks["dot_matmul"]


def test_variants_take_their_paths(monkeypatch):
    calls = []
    real = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or real(*a, **k))
    outputs = {}
    for v in bench.ATTENTION_VARIANTS:
        calls.clear()
        step = bench.attention_step(v, seed=3, **SHAPE)
        step()
        assert bool(calls) == (v == "dot_sdpa"), v                  # only the fast path calls SDPA
        outputs[v] = step.layer(step.input)
        assert all(p.grad is None for p in step.layer.parameters())  # a call leaves no gradients behind
    torch.testing.assert_close(outputs["dot_matmul"], outputs["dot_sdpa"], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(outputs["additive_chunked"], outputs["additive"], rtol=1e-5, atol=1e-6)


def test_bad_options_name_the_field():
    with pytest.raises(ValueError, match="variant"):
        bench.attention_config("bahdanau", n_heads=2, d_k=8)
    with pytest.raises(ValueError, match="iterations"):
        bench.time_per_call(lambda: None, iterations=0)
    with pytest.raises(ValueError, match="device"):
        bench.peak_memory_bytes(lambda: None, "meta")


def test_iterations_for_and_estimate():
    assert bench.iterations_for(0.01, 0.05, 20) == 5
    assert bench.iterations_for(2.0, 0.05, 20) == 1
    assert bench.iterations_for(1e-9, 0.05, 20) == 20
    est = {v: bench.estimated_peak_bytes(v, **{**SHAPE, "n": 32}) for v in bench.ATTENTION_VARIANTS}
    for v in bench.ATTENTION_VARIANTS:                       # the estimate is an upper bound of the measurement
        assert est[v] >= bench.peak_memory_bytes(bench.attention_step(v, seed=0, **{**SHAPE, "n": 32})), v


def test_benchmark_json_is_read_by_the_report(tmp_path):
    recs = [bench.benchmark_record(f"r3[{v}-n{n}]", v, [0.1 * n, 0.12 * n], params={"n": n},
                                   iterations=[3, 3], extra_info={"peak_memory_bytes": 10 * n})
            for v in ("dot_sdpa", "additive") for n in (8, 16)]
    path = bench.write_benchmark_json(tmp_path / "benchmark_r3.json", recs)
    data = json.loads(path.read_text())
    assert {"machine_info", "commit_info", "benchmarks", "datetime", "version"} <= set(data)
    st = data["benchmarks"][0]["stats"]
    assert st["rounds"] == 2 and st["iterations"] == 3 and st["data"] == [0.8, pytest.approx(0.96)]
    assert st["min"] == 0.8 and st["median"] == pytest.approx(0.88)
    [loaded] = load_benchmarks(tmp_path)
    assert "error" not in loaded and loaded["plot"]
    assert sorted((r["series"], r["n"]) for r in loaded["rows"]) == [("additive", 8), ("additive", 16),
                                                                     ("dot_sdpa", 8), ("dot_sdpa", 16)]
