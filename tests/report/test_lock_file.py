"""The committed criteria lock against the code, and the committed standard run against the lock (issue 47,
mechanism 2; ``harness.record.lock``, ``python -m harness.report lock``)."""
from __future__ import annotations

import copy
import json

import pytest

from harness.record import lock
from harness.report import lock_file as lock_cmd
from tests.conftest import REPO

LOCK = REPO / lock.LOCK_FILE
STANDARD = REPO / "reports" / "standard.json"


@pytest.mark.subprocess
def test_the_code_criteria_equal_the_committed_lock():
    """Each claim module run up to its ``ev.declare`` at smoke and standard (~25 s): a premise or counted criterion
    whose rule, margin, role, falsifiers or quote changed changes the lock, hence standard's seeds."""
    moved = lock.differences(lock.load(LOCK)["criteria"], lock_cmd.code_criteria())
    assert moved == [], (f"the code's criteria differ from {lock.LOCK_FILE}; refresh it with `{lock.REFRESH}` "
                         "(that moves the standard profile's master seed: re-run standard after it):\n  "
                         + "\n  ".join(moved))


def test_the_committed_standard_run_is_at_the_lock_or_said_to_be_an_earlier_draw():
    """``reports/standard.json`` was run on the lock's master seed with the lock's criteria; or (issues 63, 64) it is
    one run at an earlier lock, kept as the README's table only while the replicated record at the current lock is
    incomplete, and the README names that lock and says the run was decided under its rules. Once the replicated
    record is complete the README cites it, not ``reports/standard.json``, whose verdicts are no record of today's
    rules; the docs that keep it (for its times, for the replication plan) name its lock."""
    standard = json.loads(STANDARD.read_text(encoding="utf-8"))
    doc = lock.load(LOCK)
    problems = lock.check_headline(standard, doc)
    if not problems:
        return
    replicated = REPO / "reports" / "replicated.json"
    complete = replicated.is_file() and (json.loads(replicated.read_text(encoding="utf-8")).get("replication") or {}
                                         ).get("lock") == doc["hash"] and json.loads(
        replicated.read_text(encoding="utf-8"))["replication"].get("complete")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    earlier = str(standard["run"].get("criteria_lock") or "")[:12]
    if complete:
        assert "reports/standard.json" not in readme, (
            "the replicated record at the lock is complete: the README's table comes from it, and cites no "
            "reports/standard.json off the lock:\n  " + "\n  ".join(problems))
        for page in ("docs/profiles.md", "docs/replication.md"):
            text = (REPO / page).read_text(encoding="utf-8")
            assert "reports/standard.json" not in text or f"lock {earlier}" in text, (
                f"{page} cites reports/standard.json, a run at an earlier lock, without naming lock {earlier}")
        return
    assert earlier and f"lock {earlier}" in readme and "decided under that lock's rules" in readme, (
        "reports/standard.json is not at the lock, and the README does not say which lock it was decided at:\n  "
        + "\n  ".join(problems))


@pytest.mark.parametrize("page", ["docs/profiles.md", "docs/verdicts.md", "docs/gpu-and-machines.md"])
def test_the_docs_name_the_committed_lock_and_its_seeds(page):
    """Issue 54: the docs' lock examples are today's: each page that names a lock or a profile's master seed names
    the committed lock's hash and the seeds it draws, so a refreshed lock that leaves them stale fails here."""
    doc = lock.load(LOCK)
    text = (REPO / page).read_text(encoding="utf-8")
    seeds = {p: str(lock.profile_seed(doc, p)) for p in ("standard", "full")}
    if page != "docs/gpu-and-machines.md":
        assert f"lock {doc['hash'][:12]}" in text, (page, doc["hash"][:12])
        assert seeds["standard"] in text, (page, seeds)
    assert seeds["full"] in text, (page, seeds)


def _made_to_match(doc: dict, lock_doc: dict) -> dict:
    """``doc`` with its run on the lock's master seed and its premise and counted criteria as the lock holds them at
    standard (what a re-run at the lock records): the check's passing side, on the committed file's shape."""
    out = copy.deepcopy(doc)
    out["run"]["master_seed"] = lock.profile_seed(lock_doc, lock.HEADLINE_PROFILE)
    out["run"]["blocks"] = dict(lock_doc.get("blocks", {}).get(lock.HEADLINE_PROFILE, {}))
    for key, entry in lock_doc["criteria"].items():
        fp = entry["fingerprint"].get(lock.HEADLINE_PROFILE)
        if fp is None:
            continue
        cid, name = key.split("/", 1)
        crits = out["claims"].setdefault(cid, {"criteria": []})["criteria"]
        role = entry["role"] if isinstance(entry["role"], str) else entry["role"][lock.HEADLINE_PROFILE]
        row = {"name": name, "fingerprint": fp, "role": role, "counts": role == "counted",
               "falsified_by": entry["falsified_by"], "quote": entry["quote"]}
        found = [c for c in crits if c["name"] == name]
        if found:
            found[0].update(row)
        else:
            crits.append(row)
    for cid, claim in out["claims"].items():
        claim["criteria"] = [c for c in claim["criteria"] if not lock.locked(c) or
                             lock.HEADLINE_PROFILE in lock_doc["criteria"].get(f"{cid}/{c['name']}", {}).get(
                                 "fingerprint", {})]
    return out


def test_a_standard_record_at_the_lock_passes_the_check_and_the_committed_shape_reads():
    lock_doc = lock.load(LOCK)
    doc = json.loads(STANDARD.read_text(encoding="utf-8"))
    assert lock.check_headline(_made_to_match(doc, lock_doc), lock_doc) == []
    stale = _made_to_match(doc, lock_doc)
    stale["run"]["master_seed"] = 0
    assert lock.check_headline(stale, lock_doc) == [
        f"master seed 0, not the lock's {lock.profile_seed(lock_doc)} (lock {lock_doc['hash'][:12]})"]
    moved = _made_to_match(doc, lock_doc)
    moved["run"]["blocks"]["C3"] = "0" * 12
    assert lock.check_headline(moved, lock_doc) == ["C3's budget block at standard differs from the lock"]


def test_the_lock_holds_the_seeded_profiles_blocks_as_the_code_has_them():
    """Issue 54: the standard and full budget blocks are in the lock, so a changed budget draws new seeds."""
    assert lock.load(LOCK).get("blocks") == lock_cmd.code_blocks(), (
        f"harness/profiles/ differs from the blocks in {lock.LOCK_FILE}; refresh it with `{lock.REFRESH}`")


def test_the_command_prints_the_differences_and_exits_1_until_written(tmp_path, monkeypatch, capsys):
    crits = {"C9/a": {"falsified_by": ["x"], "fingerprint": {"standard": "a" * 12}, "quote": "q", "role": "counted"}}
    monkeypatch.setattr(lock_cmd, "code_criteria", lambda *a, **k: crits)
    path = tmp_path / "criteria.lock"
    assert lock_cmd.main(["--lock", str(path)]) == 1
    assert lock_cmd.main(["--lock", str(path), "--write"]) == 0
    assert lock_cmd.main(["--lock", str(path)]) == 0
    assert lock.load(path)["criteria"] == crits
    crits["C9/a"] = {**crits["C9/a"], "quote": "other"}
    assert lock_cmd.main(["--lock", str(path)]) == 1
    assert "~ C9/a: quote" in capsys.readouterr().out
