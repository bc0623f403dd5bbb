"""The replicates' run log (issue 64, item 2): the first complete run of each claim's replicate at a lock is the
record; a committed record without its log lines, or a pooled record that passes over a complete set the log shows,
fails. The committed records are checked against the committed log here too (none yet: then it passes trivially)."""
import json

import pytest

from harness.record import lock as criteria_lock
from harness.record import replication, runlog
from harness.record import results as R

from tests.conftest import REPO
from tests.record.test_replication import H, paired_replicates

K = 5


def start(run, k, claims=("F1",), lock=H, seed=None, dry=False):
    return {"event": "start", "run": run, "lock": lock, "replicate": k, "K": K, "seed": k if seed is None else seed,
            "claims": list(claims), "vendor": "AuthenticAMD", "commit": "abc", "at": "t", "dry_run": dry}


def end(run, outcome):
    return {"event": "end", "run": run, "at": "t", "outcome": outcome}


def logged(records):
    """The log a clean replication leaves: each record's run started and ended with its verdicts."""
    out = []
    for rec in records:
        rep = rec["run"]["replicate"]
        out += [start(rep["run"], rep["k"]), end(rep["run"], {c: v["verdict"] for c, v in rec["claims"].items()})]
    return out


@pytest.fixture(scope="module")
def clean():
    records = {r["run"]["replicate"]["file"]: r for r in paired_replicates()}
    entries = logged(records.values())
    pooled = replication.pool(runlog.select(records, entries, H), K)
    return records, entries, pooled


def test_a_clean_replication_stands_on_its_log(clean):
    records, entries, pooled = clean
    assert runlog.problems(records, entries, pooled) == []
    assert runlog.locks(entries) == {H: {"F1": [1, 2, 3, 4, 5]}}
    assert pooled["claims"]["F1"]["replication"]["runs"] == [f"run{k}" for k in range(1, 6)]


def test_a_record_without_its_log_lines_fails(clean):
    records, entries, pooled = clean
    missing = [e for e in entries if e["run"] != "run3"]
    assert any("r3-F1.json: its run run3 has no start line" in p for p in runlog.problems(records, missing))
    no_end = [e for e in entries if not (e["run"] == "run3" and e["event"] == "end")]
    assert any("no end line" in p for p in runlog.problems(records, no_end))
    aborted = [end("run3", runlog.ABORTED) if (e["run"], e["event"]) == ("run3", "end") else e for e in entries]
    assert any("aborted" in p for p in runlog.problems(records, aborted))


def test_a_record_that_says_other_than_its_log_fails(clean):
    records, entries, _ = clean
    other = [dict(e, seed=99) if e["event"] == "start" and e["run"] == "run2" else e for e in entries]
    assert any("seed 99" in p for p in runlog.problems(records, other))
    verdicts = [end("run2", {"F1": "refuted"}) if (e["run"], e["event"]) == ("run2", "end") else e for e in entries]
    assert any("its run's end line 'refuted'" in p for p in runlog.problems(records, verdicts))


def test_a_second_complete_run_is_not_the_record(clean):
    """Replicate 2 ran and completed (run0), then ran again (run2, the stored one): the first is the record, so the
    stored record fails, and the pooled record that used run2 fails too."""
    records, entries, pooled = clean
    rerun = [start("run0", 2), end("run0", {"F1": "inconclusive"})] + entries
    problems = runlog.problems(records, rerun, pooled)
    assert any("r2-F1.json: F1 replicate 2 is run run2, but its first complete run" in p for p in problems)
    assert any(p.startswith("pooled F1: replicate 2 is run run2") for p in problems)
    assert runlog.select(records, rerun, H) and "F1" not in {
        c for r in runlog.select(records, rerun, H) if r["run"]["replicate"]["k"] == 2 for c in r["claims"]}


def test_an_aborted_or_dry_or_errored_run_is_not_complete(clean):
    records, entries, pooled = clean
    before = [start("x1", 2), end("x1", runlog.ABORTED), start("x2", 2, dry=True), end("x2", {"F1": "supported"}),
              start("x3", 2), end("x3", {"F1": "error"}), start("x4", 2)]
    assert runlog.problems(records, before + entries, pooled) == []


def test_a_complete_set_the_pooled_record_does_not_use_fails(clean):
    records, entries, pooled = clean
    assert any("does not use them" in p for p in runlog.problems(records, entries, {**pooled, "claims": {}}))
    elsewhere = [start(f"o{k}", k, lock="e" * 64) for k in range(1, 6)]      # an abandoned lock: visible, not used
    elsewhere += [end(f"o{k}", {"F1": "refuted"}) for k in range(1, 6)]
    assert runlog.problems(records, elsewhere + entries, pooled) == []
    assert set(runlog.locks(elsewhere + entries)) == {"e" * 64, H}


def test_the_log_is_appended_line_by_line(tmp_path):
    path = tmp_path / "reports" / runlog.LOG_NAME
    runlog.append(path, start("a", 1))
    runlog.append(path, end("a", {"F1": "supported"}))
    assert [e["event"] for e in runlog.read(path)] == ["start", "end"]
    assert path.read_text().count("\n") == 2
    path.write_text(path.read_text() + "not json\n")
    with pytest.raises(ValueError, match=":3:"):
        runlog.read(path)


# -------------------------------------------------------------------------------------- the committed record
def committed():
    reports = REPO / "reports"
    records = {}
    for folder in sorted((reports / runlog.RECORDS_DIR).glob("*")):
        for name, rec in ((p.relative_to(reports).as_posix(), R.load(p)) for p in sorted(folder.glob("r*.json"))):
            records[name] = rec
    entries = runlog.read(reports / runlog.LOG_NAME)
    pooled_path = reports / "replicated.json"
    return records, entries, pooled_path


def test_committed_replicates_stand_on_the_run_log():
    """Every committed replicate record has its start and end lines and is its claim's first complete run; the
    pooled record uses the first complete set at its lock, and a complete set at the current lock that no pooled
    record uses fails. With nothing committed yet it passes trivially."""
    records, entries, pooled_path = committed()
    pooled = R.load(pooled_path) if pooled_path.is_file() else None
    lock_hash = criteria_lock.load(REPO / criteria_lock.LOCK_FILE)["hash"]
    if pooled is None:      # no pooled record yet: a complete set at the current lock must not lie unused
        pooled = {"replication": {"lock": lock_hash, "K": replication.K}, "claims": {}}
    assert runlog.problems(records, entries, pooled) == []


def test_the_committed_pooled_record_is_reproduced():
    """reports/replicated.json is the pool of the committed records the log selects, and rejudge reproduces it byte
    for byte."""
    records, entries, pooled_path = committed()
    if not pooled_path.is_file():
        pytest.skip("no pooled record committed yet (reports/replicated.json)")
    text = pooled_path.read_text(encoding="utf-8")
    stored = json.loads(text)
    assert json.dumps(R.rejudge(stored), indent=2, allow_nan=False) + "\n" == text
    lock = stored["replication"]["lock"]
    mine = {n: r for n, r in records.items() if (r["run"].get("replicate") or {}).get("lock") == lock}
    assert R.to_jsonable(replication.pool(runlog.select(mine, entries, lock))) == stored


def test_no_committed_part_ran_over_90_minutes_and_each_names_its_vendor():
    """Issue 64, done-when: no part ran longer than 90 minutes (a session's commands end with it), read from the log;
    every start line names the CPU vendor its replicate ran on."""
    from harness.suite.replication_plan import PART_BUDGET_S

    _, entries, _ = committed()
    for rid, run in runlog.runs(entries).items():
        assert run["start"].get("vendor"), f"run {rid}: its start line names no CPU vendor"
        took = (run.get("end") or {}).get("duration_s")
        assert took is None or took <= PART_BUDGET_S, f"run {rid} took {took:.0f} s, over {PART_BUDGET_S} s"


def test_every_replicate_at_the_lock_measured_with_one_code():
    """Referee: the lock's hash covers criteria, budgets and rules, not code, so a change to training between two
    replicates would be mixed up with the replicate. Every run the log has at the current lock was started from a
    commit whose measuring code (``replication.MEASURING_PATHS``) is the first run's; while the set is incomplete the
    checkout's is too, so the next replicate measures with it. Read with git; skipped outside a git checkout."""
    import shutil
    import subprocess

    _, entries, pooled_path = committed()
    lock_hash = criteria_lock.load(REPO / criteria_lock.LOCK_FILE)["hash"]
    starts = [r["start"] for r in runlog.runs(entries).values()
              if r["start"].get("lock") == lock_hash and not r["start"].get("dry_run")]
    if not starts:
        pytest.skip("no replicate at the current lock yet")
    git = shutil.which("git")
    if git is None or subprocess.run([git, "-C", str(REPO), "cat-file", "-e", f"{starts[0]['commit']}^{{commit}}"],
                                     capture_output=True).returncode != 0:
        pytest.skip("not a git checkout with the replicates' commits")

    def same(a, b=None):
        cmd = [git, "-C", str(REPO), "diff", "--quiet", a, *([b] if b else []), "--", *replication.MEASURING_PATHS]
        return subprocess.run(cmd, capture_output=True).returncode == 0

    first = starts[0]["commit"]
    moved = [s["commit"][:7] for s in starts[1:] if not same(first, s["commit"])]
    assert moved == [], f"replicates at lock {lock_hash[:12]} measured with other code than {first[:7]}: {moved}"
    complete = pooled_path.is_file() and (R.load(pooled_path).get("replication") or {}).get("complete")
    assert complete or same(first), (
        f"the measuring code differs from replicate {starts[0]['replicate']}'s ({first[:7]}) while the set at lock "
        f"{lock_hash[:12]} is incomplete: the next replicate would measure with other code "
        f"(git diff {first[:7]} -- {' '.join(replication.MEASURING_PATHS)})")
