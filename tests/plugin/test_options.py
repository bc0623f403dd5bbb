"""Option validation: a bad value is a usage error (exit 4) that names the valid choices."""
import sys
import types

import pytest


ONE_CLAIM = """
import pytest
from harness.record import decision
pytestmark = pytest.mark.claim("F8")

def test_f8(evidence, seeds, profile, fast):
    evidence.claim("F8", title="t", statement="s", strength="strong")
    c = evidence.criterion("c", rule=decision.exact(), prediction="p", metric="m", fast=True)
    c.check(True, measured=seeds)
    evidence.note(f"profile={profile.name} n_seeds={profile.n_seeds} fast={fast}")
"""


@pytest.fixture
def suite(fake_suite, pytester):
    fake_suite(only=[])  # just the conftest that registers the plugin
    pytester.makepyfile(test_f8=ONE_CLAIM)
    return pytester


@pytest.mark.parametrize("args,message", [
    (["--profile", "huge"], "--profile 'huge' is not valid; valid choices: smoke, standard, full"),
    (["--device", "tpu"], "--device 'tpu' is not valid; valid choices: auto, cpu, cuda, cuda:N"),
    (["--seeds", "0"], "--seeds '0' is not valid; it must be an integer between 1 and 1000"),
    (["--seeds", "many"], "--seeds 'many' is not valid"),
    (["--master-seed", "-1"], "--master-seed '-1' is not valid"),
    (["--fast", "--profile", "full"], "--fast runs at smoke budgets"),
])
def test_bad_option_is_a_usage_error(suite, args, message):
    result = suite.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_cuda_without_cuda_says_so(suite):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = suite.runpytest_inprocess("--device", "cuda")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "CUDA is not available" in result.stderr.str()


def test_unknown_fault_names_the_valid_ones(suite, monkeypatch):
    fake = types.ModuleType("model.faults")
    fake.FAULTS = {"no_scale": "...", "single_head": "..."}
    fake.set_fault = lambda name: setattr(fake, "active", name)
    monkeypatch.setitem(sys.modules, "model.faults", fake)
    result = suite.runpytest_inprocess("--inject-fault", "no_sclae", "--device", "cpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--inject-fault 'no_sclae' is not a known fault; valid choices: no_scale, single_head" in result.stderr.str()
    # a valid one is applied for the session, recorded in the run, and cleared afterwards
    result = suite.runpytest_inprocess("--inject-fault", "single_head", "--device", "cpu")
    assert result.ret == 0
    assert fake.active is None
    import json
    run = json.loads((suite.path / "reports" / "results.json").read_text())["run"]
    assert run["inject_fault"] == "single_head"


def test_malformed_baseline_is_a_clear_error_not_a_traceback(suite):
    (suite.path / "baseline.json").write_text('{"schema_version": 1, "claims": ')
    result = suite.runpytest_inprocess("--baseline", "baseline.json", "--device", "cpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "baseline file" in err and "is not valid JSON" in err and "--update-baseline" in err
    assert "Traceback" not in err + result.stdout.str()
    result = suite.runpytest_inprocess("--baseline", "missing.json", "--device", "cpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "baseline file not found" in result.stderr.str()


def test_seeds_come_from_the_profile_or_override_and_the_master_seed(suite):
    import json

    def run(*args):
        assert suite.runpytest_inprocess("--device", "cpu", *args).ret == 0
        claim = json.loads((suite.path / "reports" / "results.json").read_text())["claims"]["F8"]
        return claim["criteria"][0]["measured"], claim["notes"][0]

    assert run() == ([0, 1, 2], "profile=smoke n_seeds=3 fast=False")
    assert run("--seeds", "2", "--master-seed", "4") == ([4000, 4001], "profile=smoke n_seeds=2 fast=False")
    assert run("--profile", "standard")[1] == "profile=standard n_seeds=5 fast=False"
    # issue 47: standard's master seed comes from the criteria lock's hash; a given --master-seed wins, and says so
    from harness.record import lock
    from harness.settings import derive_seeds, read_lock

    lock_seed = lock.profile_seed(read_lock(), "standard")
    assert lock_seed != 0 and run("--profile", "standard")[0] == derive_seeds(lock_seed, 5)
    assert json.loads((suite.path / "reports" / "results.json").read_text())["run"]["seeds_from"] == "lock"
    assert run("--profile", "standard", "--master-seed", "0")[0] == [0, 1, 2, 3, 4]
    assert json.loads((suite.path / "reports" / "results.json").read_text())["run"]["seeds_from"] == "--master-seed"
    assert run("--fast")[1] == "profile=smoke n_seeds=3 fast=True"


def test_fast_seeds_apply_under_fast_only():
    """A claim block's ``fast_seeds`` sets a --fast run's seed count (the fault matrix's cells: C2 and C5 decide
    their fast criterion on 5 seeds, so another machine's floating-point path cannot flip it); a full run keeps its
    ``seeds`` or the profile's count; a block without either takes the profile's."""
    from harness.profiles import Profile, get_profile

    p = Profile(name="smoke", n_seeds=3, blocks={"A": {"fast_seeds": 5}, "B": {"seeds": 4, "fast_seeds": 6},
                                                   "C": {"seeds": 2}, "D": {}})
    assert [p.seed_count(c, fast=True) for c in "ABCD"] == [5, 6, 2, 3]
    assert [p.seed_count(c, fast=False) for c in "ABCD"] == [3, 4, 2, 3]
    assert p.seed_count(None, fast=True) == 3
    smoke = get_profile("smoke")
    assert smoke.seed_count("C2", fast=True) == 5 and smoke.seed_count("C5", fast=True) == 5
    assert smoke.seed_count("C2") == smoke.seed_count("C5") == 3


def test_report_dir_option(suite):
    result = suite.runpytest_inprocess("--device", "cpu", "--report-dir", "out/r")
    assert result.ret == 0
    assert (suite.path / "out" / "r" / "results.json").is_file() and (suite.path / "out" / "r" / "index.html").is_file()
    assert not (suite.path / "reports").exists()


def test_a_run_without_claim_tests_leaves_the_report_dir_alone(suite):
    suite.makepyfile(test_plain="def test_plain():\n    assert True\n")
    assert suite.runpytest_inprocess("test_plain.py").ret == 0
    assert suite.runpytest_inprocess("--collect-only", "--device", "cpu").ret == 0  # claims collected, none run
    assert not (suite.path / "reports").exists()


def test_each_xdist_worker_takes_its_own_gpu():
    from harness.settings import pick_device

    assert pick_device("auto", None, True, 4) == "cuda:0"
    assert pick_device("auto", "gw2", True, 4) == "cuda:2"
    assert pick_device("cuda", "gw5", True, 4) == "cuda:1"  # more workers than GPUs: round-robin
    assert pick_device("cuda:3", "gw0", True, 4) == "cuda:3"  # an explicit device is kept
    assert pick_device("cpu", "gw1", True, 4) == "cpu"
    assert pick_device("auto", "gw1", False, 0) == "cpu"


def test_xdist_workers_share_out_the_cores():
    from harness.settings import worker_threads

    assert worker_threads(2, {"workercount": 2}) == 1  # -n 2 on the 2-core CI box: one thread each
    assert worker_threads(16, {"workercount": 4}) == 4
    assert worker_threads(2, {"workercount": 8}) == 1  # never 0
    assert worker_threads(None, {}) == 1


def test_summary_header_names_claims_on_another_seed_count():
    from harness.session import seed_overrides

    res = {"run": {"seeds": [0, 1, 2]},
           "claims": {"C1": {"seeds": [0, 1, 2]}, "C3": {"seeds": [0, 1, 2, 3, 4]}, "M0": {"seeds": None}}}
    assert seed_overrides(res) == " (C3: 5 seeds)"
    res["claims"].pop("C3")
    assert seed_overrides(res) == ""


def test_master_seeds_give_disjoint_seed_sets():
    from harness.settings import derive_seeds

    sets = [set(derive_seeds(m, 5)) for m in range(3)]
    assert derive_seeds(0, 3) == [0, 1, 2]
    assert not (sets[0] & sets[1] or sets[1] & sets[2] or sets[0] & sets[2])


def test_progress_is_rate_limited_but_says_what_it_dropped(suite):
    suite.makepyfile(test_f9='''
import pytest

@pytest.mark.claim("F9")
def test_f9(evidence, progress):
    for i in range(50):
        progress(f"step {i}")
    progress("done", force=True)
    evidence.claim("F9", title="t", statement="s", strength="strong")
    from harness.record import decision
    evidence.criterion("c", rule=decision.exact(), prediction="p", metric="m").check(True, measured=1)
''')
    out = suite.runpytest_inprocess("test_f9.py", "--device", "cpu").stdout.str()
    assert "[F9] step 0" in out and "[F9] step 4" in out and "[F9] step 5" not in out
    assert "[F9] done  (+45 lines not shown)" in out


# What a dry run must keep (issue 18): every config at its real size. A key here is never cut by Profile.dry_run.
DRY_RUN_KEEPS = {"d_model", "n_heads", "heads", "d_ff", "d_v", "n_layers", "n_encoder_layers", "n_decoder_layers",
                 "fixed_d_model", "dims", "d_ks", "sweep_d_ks", "probe_d_ks", "ns", "seq_len", "min_len", "max_len",
                 "max_n", "vocab", "n_pairs", "distances", "batch_size", "batch", "widths", "archs", "alphas",
                 "tasks", "max_vocab"}


def _leaves(node, path=()):
    """(path, key, value) of every non-dict value of a profile block."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    else:
        yield path, path[-1] if path else "", node


@pytest.mark.parametrize("name", ["standard", "full"])
def test_dry_run_keeps_every_size_and_cuts_only_counts(name):
    from harness.profiles import DRY_RUN_CAPS, DRY_RUN_CLAIM_CAPS, DRY_RUN_GRID_ENDS, get_profile

    real = get_profile(name)
    dry = real.dry_run(steps=2, seeds=2)
    assert dry.n_seeds == 2 and dry.name == name and dry.dry and not real.dry
    assert not DRY_RUN_KEEPS & set(DRY_RUN_CAPS) and not DRY_RUN_KEEPS & set(DRY_RUN_GRID_ENDS)
    # C4's sequences read, and the shared sweep's tuning grid (a count of rates round the shared one): nowhere else
    assert {k for k in DRY_RUN_CAPS if "." in k} == {"model.batch", "tuning.points", "tuning.extend"}
    kept, cut = set(), {"steps": 0, "seeds": 0}
    for cid in real.blocks:
        dry_leaves = {path: v for path, _, v in _leaves(dry.claim(cid))}
        for path, key, a in _leaves(real.claim(cid)):
            b = dry_leaves[path]
            where = f"{cid} {'.'.join(path)}"
            if key == "steps":
                assert b == min(a, 2), where
                cut["steps"] += a > 2
            elif key.endswith("seeds") and isinstance(a, int):
                assert b == min(a, 2), where
                cut["seeds"] += a > 2
            elif key == "checkpoints":
                assert b[-1] == 2 and set(b) <= set(a) | {2}, where
            elif key in DRY_RUN_GRID_ENDS:
                assert b == ([a[0], a[-1]] if len(a) > 2 else a), where
            elif ".".join(path[-2:]) in DRY_RUN_CAPS or key in DRY_RUN_CAPS:
                assert b == min(a, DRY_RUN_CAPS.get(".".join(path[-2:]), DRY_RUN_CAPS.get(key))), where
            else:
                assert a == b, where                    # sizes, d_k grids, lengths, arms, tasks untouched
                if key in DRY_RUN_KEEPS:
                    kept.add(key)
    # the walk above saw the sizes it guards (a renamed key would otherwise pass unchecked) and really cut
    assert {"d_model", "n_heads", "d_ff", "n_encoder_layers", "n_decoder_layers", "n_layers", "d_ks", "dims",
            "sweep_d_ks", "seq_len", "max_len", "ns", "batch_size"} <= kept
    assert cut["steps"] >= 5 and cut["seeds"] >= 1
    for cid, capped in DRY_RUN_CLAIM_CAPS.items():      # counts the dry run adds (capped), never a size
        assert {k: dry.claim(cid)[k] for k in capped} == capped and not set(capped) & DRY_RUN_KEEPS, cid
    assert dry.claim("R3")["seeds"] == 2 and "timing_seeds" not in real.claim("R3")
    c1 = dry.claim("C1")
    assert c1["model"] == real.claim("C1")["model"] and c1["train"]["batch_size"] == real.claim("C1")["train"][
        "batch_size"]


def test_dry_run_of_full_keeps_the_paper_base_corpus_config():
    from harness.profiles import get_profile

    real, dry = get_profile("full").claim("C1"), get_profile("full").dry_run().claim("C1")
    for key in ("model", "max_len", "max_vocab", "shared_vocab", "heldout_fraction"):
        assert dry["corpus"][key] == real["corpus"][key], key
    assert dry["corpus"]["train"]["batch_size"] == real["corpus"]["train"]["batch_size"]
    assert dry["corpus"]["train"]["steps"] == 2 and dry["corpus"]["test_size"] < real["corpus"]["test_size"]


@pytest.mark.parametrize("extra", [["--fast"], ["--update-baseline"], ["--baseline", "b.json"]])
def test_dry_run_refuses_what_it_cannot_mean(pytester, extra):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("--dry-run", *extra, "-p", "harness.plugin")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--dry-run cannot be combined with" in result.stderr.str()


def test_an_unwritable_report_dir_is_a_usage_error_before_any_claim_runs(pytester):
    """Issue 19: one line naming the directory, exit 4, nothing trained."""
    pytester.makepyfile(test_x="def test_x():\n    raise AssertionError('must not run')\n")
    result = pytester.runpytest_subprocess("--report-dir", "/proc/nope", "-p", "harness.plugin")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--report-dir /proc/nope is not writable" in err and "Traceback" not in err
