"""The criteria lock (issue 47, mechanism 2): its content, hash, seed, and a run or record held against it."""
from __future__ import annotations

import json

import pytest

from harness.record import lock


def _row(fp="aaaaaaaaaaaa", role="counted", falsified_by=("local_window",), quote="the words"):
    return {"fingerprint": fp, "role": role, "falsified_by": list(falsified_by), "quote": quote}


def _lock(**per_profile):
    return lock.document(lock.build(per_profile or {"smoke": {"C9/a": _row()}, "standard": {"C9/a": _row(),
                                                                                            "C9/b": _row("b" * 12)}}))


def test_the_master_seed_comes_from_the_hash_and_is_never_smokes():
    assert lock.master_seed("0" * 64) == 1
    assert lock.master_seed("f" * 64) == int("f" * 12, 16) % 10 ** 6 + 1
    seeds = {lock.master_seed(f"{i:064x}") for i in range(0, 10 ** 7, 99991)}
    assert 0 not in seeds and max(seeds) <= lock.MAX_MASTER_SEED


def test_the_text_is_one_criterion_a_line_and_reads_back_with_its_hash(tmp_path):
    doc = _lock()
    text = lock.dumps(doc)
    assert [ln.strip().split(":")[0] for ln in text.splitlines() if ln.startswith("    ")] == ['"C9/a"', '"C9/b"']
    path = tmp_path / "criteria.lock"
    path.write_text(text)
    assert lock.load(path) == json.loads(text) and json.loads(text)["hash"] == lock.criteria_hash(doc["criteria"])
    path.write_text(text.replace("the words", "other words"))
    with pytest.raises(lock.LockError, match="is not its criteria's"):
        lock.load(path)


@pytest.mark.parametrize("field, value", [("fingerprint", "c" * 12), ("role", "premise"), ("falsified_by", ["x"]),
                                          ("quote", "other words")])
def test_any_part_of_a_criterion_changes_the_hash_and_the_seed(field, value):
    before = _lock()
    moved = {**_row(), field: value}
    after = _lock(smoke={"C9/a": moved}, standard={"C9/a": moved, "C9/b": _row("b" * 12)})
    assert before["hash"] != after["hash"] and before["standard_master_seed"] != after["standard_master_seed"]
    [line] = lock.differences(before["criteria"], after["criteria"])
    assert line.startswith(f"~ C9/a: {field} ")


def test_a_criterion_that_quotes_nothing_locks_its_reason():
    """Issue 54: where a criterion quotes none of the note, the lock holds its reason in the quote's place, so that
    changing the reason (or giving a quote instead) changes the lock like a changed quote does."""
    base = {"fingerprint": "a" * 12, "role": "counted", "falsified_by": ["x"]}
    assert lock.row({**base, "quote": "the words"})["quote"] == "the words"
    assert lock.row({**base, "unquoted": "a check the note does not state"})["quote"] == \
        "unquoted: a check the note does not state"
    assert lock.row(base)["quote"] == ""
    rows = [lock.row({**base, **extra}) for extra in ({"unquoted": "one reason"}, {"unquoted": "another"},
                                                      {"quote": "one reason"})]
    assert len({lock.criteria_hash(lock.build({"smoke": {"C9/a": r}})) for r in rows}) == 3


def test_a_role_that_differs_by_profile_is_held_per_profile():
    crits = lock.build({"smoke": {"C9/a": _row(role="premise")}, "standard": {"C9/a": _row()}})
    assert crits["C9/a"]["role"] == {"smoke": "premise", "standard": "counted"}
    assert lock.build({"smoke": {"C9/a": _row()}})["C9/a"]["role"] == "counted"


def _record(key_rows, master_seed):
    claims = {}
    for key, r in key_rows.items():
        cid, name = key.split("/", 1)
        claims.setdefault(cid, {"criteria": []})["criteria"].append({"name": name, **r})
    return {"run": {"profile": "standard", "complete": True, "dry_run": False, "fast": False,
                    "master_seed": master_seed}, "claims": claims}


def test_a_headline_record_at_the_lock_passes_and_each_departure_is_named():
    doc = _lock()
    seed = lock.master_seed(doc["hash"])
    rows = {"C9/a": _row(), "C9/b": _row("b" * 12)}
    assert lock.check_headline(_record(rows, seed), doc) == []
    assert lock.check_headline(_record(rows, 0), doc) == [
        f"master seed 0, not the lock's {seed} (lock {doc['hash'][:12]})"]
    moved = lock.check_headline(_record({**rows, "C9/b": _row("d" * 12)}, seed), doc)
    assert moved == ["C9/b: fingerprint differs from the lock"]
    missing = lock.check_headline(_record({"C9/a": _row()}, seed), doc)
    assert missing == ["C9/b is in the lock at standard but not in this run"]
    extra = lock.check_headline(_record({**rows, "C9/c": _row()}, seed), doc)
    assert extra == ["C9/c is not in the lock at standard"]


def test_a_reported_criterion_is_outside_the_lock_and_a_fast_run_compares_its_subset():
    doc = _lock()
    rec = _record({"C9/a": _row(), "C9/r": _row(role="reported")}, 0)
    assert lock.check_run(rec["claims"], doc, "standard", fast=True) == []
    assert lock.check_run(rec["claims"], doc, "standard") == ["C9/b is in the lock at standard but not in this run"]


def test_a_changed_budget_block_draws_new_seeds_for_its_profile_only_and_a_run_names_it():
    """Issue 54: the lock holds the seeded profiles' blocks; a profile's seed derives from the criteria and its own
    blocks, so a standard budget moves standard's seed and leaves full's, and a run whose block differs is named."""
    crits = lock.build({"standard": {"C9/a": _row()}})
    std = lock.block_fingerprints({"C9": {"steps": 100, "lr_grid": [0.001, 0.003]}, "sweep": {"seeds": 2}}, 5)
    full = lock.block_fingerprints({"C9": {"steps": 1000}}, 5)
    before = lock.document(crits, {"standard": std, "full": full})
    more = lock.block_fingerprints({"C9": {"steps": 150, "lr_grid": [0.001, 0.003]}, "sweep": {"seeds": 2}}, 5)
    after = lock.document(crits, {"standard": more, "full": full})
    assert before["standard_master_seed"] != after["standard_master_seed"]
    assert before["master_seeds"]["full"] == after["master_seeds"]["full"]
    assert lock.profile_seed(after, "standard") == after["standard_master_seed"]
    assert lock.block_differences(before["blocks"], after["blocks"]) == [
        f"~ standard: C9's block {std['C9']} -> {more['C9']}"]
    seeds = lock.block_fingerprints({"C9": {"steps": 100, "lr_grid": [0.001, 0.003]}, "sweep": {"seeds": 2}}, 7)
    assert lock.block_differences({"standard": std}, {"standard": seeds}) == [
        f"~ standard: default seed count 5 -> 7"]
    claims = {"C9": {"criteria": [{"name": "a", **_row()}]}}
    assert lock.check_run(claims, before, "standard", blocks=std) == []
    assert lock.check_run(claims, before, "standard", blocks=more) == ["C9's budget block at standard differs from the lock"]
    shared = {**std, "sweep": "0" * 12}
    assert lock.check_run(claims, before, "standard", blocks=shared) == ["sweep's budget block at standard differs from the lock"]
    rec = _record({"C9/a": _row()}, before["standard_master_seed"])
    assert lock.check_headline(rec, before) == ["the run records no budget blocks to hold against the lock's"]
    rec["run"]["blocks"] = std
    assert lock.check_headline(rec, before) == []


def test_the_lock_file_with_blocks_reads_back_and_its_hash_covers_them(tmp_path):
    doc = lock.document(lock.build({"standard": {"C9/a": _row()}}),
                        {"standard": lock.block_fingerprints({"C9": {"steps": 1}}, 5)})
    path = tmp_path / "criteria.lock"
    path.write_text(lock.dumps(doc))
    assert lock.load(path) == json.loads(lock.dumps(doc))
    path.write_text(lock.dumps(doc).replace(doc["blocks"]["standard"]["C9"], "0" * 12))
    with pytest.raises(lock.LockError, match="is not its criteria's"):
        lock.load(path)


def test_the_summary_line_says_lock_and_seeds():
    h = "3f2a" + "0" * 60
    assert lock.summary({"criteria_lock": h, "criteria_at_lock": True, "seeds_from": "lock"}) == \
        "criteria: at lock 3f2a00000000, seeds from the lock"
    assert lock.summary({"criteria_lock": h, "criteria_at_lock": False, "seeds_from": "--master-seed",
                         "master_seed": 7}) == \
        "criteria: differ from the lock 3f2a00000000, seeds from --master-seed 7, not from the lock"
    assert lock.summary({"criteria_lock": None}).startswith("criteria: no criteria lock")


def test_a_claim_the_lock_does_not_hold_is_named():
    rec = _record({"C9/a": _row(), "C9/b": _row("b" * 12), "F1/x": _row()}, 0)
    assert lock.check_run(rec["claims"], _lock(), "standard") == ["F1: no criterion of it in the lock"]
    nothing_locked = {"Q9": {"criteria": [{"name": "r", **_row(role="reported")}]}}
    assert lock.check_run(nothing_locked, _lock(), "standard", fast=True) == []
