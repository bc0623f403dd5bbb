"""Parts -> claims (harness/record/results.py): a claim is judged once where its parts are merged (issue 46), and
each test part reads its own criteria from that judgement."""
import pytest

from harness.record import decision as D
from harness.record import results as R
from harness.record import verdict as V


def part(test, order, **checks):
    """A part of claim C9 as a worker ships it: exact checks (name -> holds), unjudged."""
    criteria = [{"name": name, "prediction": "p", "threshold": "t", "measured": 1.0, "rule": D.exact().as_dict(),
                 "exact_holds": holds, "recorded": True, "counts": True, "fast": False, "kind": "exact",
                 "fingerprint": name} for name, holds in checks.items()]
    return {"id": "C9", "title": "t", "statement": "s", "strength": "strong", "kind": "claim", "criteria": criteria,
            "metrics": {f"m/{test}": 1.0}, "figures": [], "tables": {}, "notes": [], "gates": {},
            "nodeid": f"claims/test_c9.py::{test}", "order": order, "duration_s": 1.0, "error": None,
            "errored": False}


@pytest.fixture
def calls(monkeypatch):
    """How many times a claim (or part) is judged."""
    seen = []
    judge = V.judge_record
    monkeypatch.setattr(V, "judge_record", lambda criteria, **kw: seen.append(len(criteria)) or judge(criteria, **kw))
    return seen


def test_a_claim_judged_as_its_parts_arrived_is_not_judged_again(calls):
    a, b = part("test_a", 0, a=True), part("test_b", 1, b=False)
    claim = R.merge_claim([b, a])                       # arrived out of order: merged in collection order
    assert [c["name"] for c in claim["criteria"]] == ["a", "b"] and claim["verdict"] == "refuted"
    assert calls == [2]
    merged = R.merge_parts([a, b], {"C9": claim})
    assert calls == [2] and merged["C9"] == claim and merged["C9"] is not claim
    # a part that arrived after the judgement (one cut short at Ctrl-C): judged again, over every part
    late = {**part("test_c", 2, c=True), "errored": True, "interrupted": True}
    again = R.merge_parts([a, b, late], {"C9": claim})["C9"]
    assert calls == [2, 3] and again["verdict"] == "error" and again["interrupted"] is True


def test_each_part_reads_its_own_criteria_from_the_claims_judgement(calls):
    """Two parts repeat criterion ``b``: the merge names the later one ``b [test_b2]``; each part keeps its own
    name (the gate maps it to the baseline's copy) and its verdict is its own criteria's."""
    parts = [part("test_a", 0, a=True), part("test_b1", 1, b=True), part("test_b2", 2, b=False)]
    claim = R.merge_claim(parts)
    assert [c["name"] for c in claim["criteria"]] == ["a", "b", "b [test_b2]"] and calls == [3]
    records = [R.part_record(claim, parts, p) for p in parts]
    assert [r["verdict"] for r in records] == ["supported", "supported", "refuted"]
    assert [[c["name"] for c in r["criteria"]] for r in records] == [["a"], ["b"], ["b"]]
    assert records[2]["criteria"][0]["outcome"] == "refuted" and records[2]["nodeid"].endswith("test_b2")
    assert records[1]["metrics"] == {"m/test_b1": 1.0} and calls == [3]     # read, never decided again


def test_a_claim_of_one_part_is_its_parts_record():
    only = part("test_a", 0, a=True, b=False)
    claim = R.merge_claim([only])
    record = R.part_record(claim, [only], only)
    for key in ("verdict", "not_testable", "scope", "criteria"):
        assert record[key] == claim[key], key
