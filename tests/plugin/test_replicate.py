"""``--replicate k`` (issue 64): the option's usage errors, and a replicate run end to end on fake claims: the lock's
k-th replicate seed, the record under replicates/<lock>/, the run log's start and end lines, a second run of a
complete replicate refused, a dry run's wiring."""
import json

import pytest

from harness import settings as settings_mod
from harness.record import replication, runlog

LOCK = settings_mod.read_lock()


@pytest.fixture
def suite(fake_suite, pytester):
    fake_suite(only=["test_f1_supported.py", "test_f2_borderline.py"])
    return pytester


@pytest.fixture
def registered(monkeypatch):
    """The criteria lock as it reads once it pre-registers the replication (``lock.document`` stores
    ``replication.lock_section``), for the in-process runs."""
    doc = {**LOCK, "replication": replication.lock_section(LOCK["hash"])}
    monkeypatch.setattr(settings_mod, "read_lock", lambda path=settings_mod.LOCK_PATH: doc)
    return doc


@pytest.mark.parametrize("args,message", [
    (["--profile", "standard", "--replicate", "0"], "--replicate '0' is not valid"),
    (["--profile", "standard", "--replicate", str(replication.K + 1)], f"between 1 and {replication.K}"),
    (["--profile", "standard", "--replicate", "two"], "--replicate 'two' is not valid"),
    (["--replicate", "1"], "give --profile standard (got smoke)"),
    (["--profile", "full", "--replicate", "1"], "give --profile standard (got full)"),
    (["--profile", "standard", "--replicate", "1", "--seeds", "3"], "cannot be combined with --seeds"),
    (["--profile", "standard", "--replicate", "1", "--master-seed", "3"], "cannot be combined with --master-seed"),
])
def test_a_bad_replicate_is_a_usage_error(suite, registered, args, message):
    result = suite.runpytest_inprocess("--device", "cpu", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_a_lock_without_the_replication_refuses_a_replicate(suite):
    if "replication" in LOCK:
        pytest.skip("the committed lock pre-registers the replication")
    result = suite.runpytest_inprocess("--device", "cpu", "--profile", "standard", "--replicate", "1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "pre-registers no replication" in result.stderr.str()


def test_a_replicate_run_is_logged_and_stored(suite, registered):
    run = lambda k: ["--device", "cpu", "--profile", "standard", "--replicate", str(k), "--report-dir", "out",  # noqa: E731
                     "-p", "no:randomly"]
    args = run(2)
    assert suite.runpytest_inprocess(*args).ret == 0
    out = suite.path / "out"
    entries = runlog.read(out / runlog.LOG_NAME)
    assert [e["event"] for e in entries] == ["start", "end"]
    first, last = entries
    seed = registered["replication"]["seeds"][1]
    assert first["lock"] == LOCK["hash"] and first["replicate"] == 2 and first["seed"] == seed
    assert first["claims"] == ["F1", "F2"] and first["vendor"] in ("GenuineIntel", "AuthenticAMD", "")
    assert last["outcome"] == {"F1": "supported", "F2": "inconclusive"} and last["run"] == first["run"]
    path = out / first["file"]
    assert path == out / "replicates" / LOCK["hash"][:12] / "r2-F1-F2.json"
    record = json.loads(path.read_text())
    assert record["run"]["master_seed"] == seed and record["run"]["seeds"][0] == seed * 1000
    assert record["run"]["replicate"]["run"] == first["run"] and record["run"]["complete"]
    assert runlog.problems({path.name: record}, entries) == []
    # the first complete run is the record: a second run of the same replicate is refused before it trains
    again = suite.runpytest_inprocess(*args)
    assert again.ret == pytest.ExitCode.USAGE_ERROR and "already complete" in str(again.outlines + again.errlines)
    assert len(runlog.read(out / runlog.LOG_NAME)) == 2
    # another replicate of the same claims is its own run, at its own seed
    assert suite.runpytest_inprocess(*run(3)).ret == 0
    starts = [e for e in runlog.read(out / runlog.LOG_NAME) if e["event"] == "start"]
    assert [e["seed"] for e in starts] == registered["replication"]["seeds"][1:3]


def test_a_dry_run_wires_up_without_counting(suite):
    """A dry run decides nothing: it takes the seeds the lock's hash gives even before the lock lists them, and its
    lines never make a replicate complete."""
    args = ["--device", "cpu", "--profile", "standard", "--replicate", "1", "--dry-run", "--report-dir", "out"]
    assert suite.runpytest_inprocess(*args).ret == 0
    entries = runlog.read(suite.path / "out" / runlog.LOG_NAME)
    assert entries[0]["dry_run"] and entries[0]["seed"] == replication.replicate_seed(LOCK["hash"], 1)
    assert runlog.first_complete(entries, LOCK["hash"]) == {}
    assert suite.runpytest_inprocess(*args).ret == 0        # so it may run again
