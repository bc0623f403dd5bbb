"""A report folder holds one run (issue 65, item 4): after a failed Llama read into a folder that held a good GPT-2
read, figures/Q3/ still showed GPT-2's pictures beside the new error's index.html."""
import json

from harness.session.prune import prune_figures, stale_figures

from tests.conftest import copy_fake_claims, run_pytest


def test_a_run_leaves_no_figure_of_the_run_before_it(tmp_path):
    root = copy_fake_claims(tmp_path / "suite", only=["test_f1_supported.py", "test_f4_crash.py"])
    out = root / "report"
    for rel in ("figures/Q3/checkpoint_heatmaps.png", "figures/F1/old.png", "figures/F4/from_before.png"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(b"an earlier run")
    (out / "figures" / "mine").mkdir()
    (out / "figures" / "mine" / "keep.png").write_bytes(b"not the harness's")
    (out / "baseline.json").write_text("{}")
    run = run_pytest(root, "--device", "cpu", "-p", "no:randomly", "--report-dir", "report")
    assert run.returncode == 1, run.stdout[-2000:]                  # F4 crashes: a failed run
    results = json.loads((out / "results.json").read_text())
    assert results["claims"]["F4"]["verdict"] == "error"
    left = sorted(p.relative_to(out).as_posix() for p in (out / "figures").rglob("*") if p.is_file())
    assert left == ["figures/F1/score_by_seed.png", "figures/mine/keep.png"]
    assert (out / "baseline.json").is_file() and not (out / "figures" / "Q3").exists()


def test_only_the_harness_figures_not_in_the_results_are_stale(tmp_path):
    for rel in ("figures/C1/a.png", "figures/C1/b.png", "figures/C1/notes.txt", "figures/x/c.png"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(b"")
    results = {"claims": {"C1": {"figures": ["figures/C1/a.png"]}}}
    assert [p.name for p in stale_figures(tmp_path, results)] == ["b.png"]
    assert prune_figures(tmp_path, results) == ["figures/C1/b.png"]
    assert prune_figures(tmp_path, {"claims": {}}) == ["figures/C1/a.png"] and (tmp_path / "figures/C1").is_dir()


def test_a_claims_benchmark_file_goes_with_its_claim(tmp_path):
    """R3 writes benchmark_r3.json, which the report renders: a run without R3 must not show the last run's."""
    from harness.session.prune import stale_benchmarks

    for name in ("benchmark_r3.json", "benchmark_c1.json", "benchmark_gpu.json", "benchmarks.json"):
        (tmp_path / name).write_text("{}")
    stale = [p.name for p in stale_benchmarks(tmp_path, {"claims": {"C1": {}}})]
    assert stale == ["benchmark_r3.json"]                        # a user's own files stay
    assert prune_figures(tmp_path, {"claims": {"C1": {}}}) == ["benchmark_r3.json"]
