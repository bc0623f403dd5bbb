"""Every counted criterion has been seen to fail (issue 38, mechanism 2). A fast one in the fault matrix, which CI
runs (``criteria_caught``); one that trains in ``reports/falsifiers.json``, written by ``python -m
harness.suite.sensitivity --criteria``, which records each refuted under a fault it names, under the fingerprint the
committed baseline has. A criterion whose definition changed since is not covered until
the file is re-run (``--claims <id>`` re-runs one claim and merges)."""
from __future__ import annotations

import json

import pytest

from harness.record.verdict import COUNTED, role_of
from harness.suite import sensitivity
from tests.conftest import REPO

FALSIFIERS = REPO / "reports" / "falsifiers.json"
BASELINE = REPO / "reports" / "baseline.json"


def _counted_in_baseline() -> list[tuple[str, dict]]:
    doc = json.loads(BASELINE.read_text(encoding="utf-8"))
    return [(cid, c) for cid, claim in doc["claims"].items() for c in claim["criteria"]
            if role_of(c) == COUNTED and c.get("recorded", True)
            and not c.get("fast")]


def test_every_counted_criterion_of_the_baseline_was_refuted_by_its_falsifier():
    rows = json.loads(FALSIFIERS.read_text(encoding="utf-8"))["criteria"]
    missing, stale, standing = [], [], []
    for cid, c in _counted_in_baseline():
        row = rows.get(f"{cid}/{c['name']}")
        if row is None:
            missing.append(f"{cid}/{c['name']}")
        elif row["fingerprint"] != c["fingerprint"]:
            stale.append(f"{cid}/{c['name']} ({row['fingerprint']} in falsifiers.json, {c['fingerprint']} in the "
                         "baseline)")
        elif not row["refuted"]:
            standing.append(f"{cid}/{c['name']}: {row['outcomes']}")
    assert not missing and not stale and not standing, (
        "re-run python -m harness.suite.sensitivity --criteria --claims <ids>:\n"
        f"no row: {missing}\nanother definition: {stale}\nnot refuted by a falsifier: {standing}")


def test_the_file_names_the_faults_each_criterion_declares():
    declared = sensitivity.declared_falsifiers(REPO / "claims")
    rows = json.loads(FALSIFIERS.read_text(encoding="utf-8"))["criteria"]
    for key, row in rows.items():
        assert tuple(row["falsified_by"]) == declared[row["claim"]][row["criterion"]], key
    trained = sensitivity.declared_falsifiers(REPO / "claims", trained_only=True)
    assert {(r["claim"], r["criterion"]) for r in rows.values()} == {(c, n) for c, crits in trained.items()
                                                                      for n in crits}


@pytest.mark.parametrize("outcomes, refuted", [({"local_window": "refuted"}, True),
                                               ({"local_window": "inconclusive", "uniform_attention": "refuted"}, True),
                                               ({"local_window": "inconclusive"}, False)])
def test_a_criterion_counts_as_falsified_when_one_of_its_faults_refutes_it(outcomes, refuted, monkeypatch):
    def fake_run(ids, *, fault, report_dir, fast, **_):
        assert not fast
        return {"C9": {"verdict": "refuted", "criteria": [
            {"name": "a", "role": "counted", "falsified_by": list(outcomes), "fingerprint": "f" * 12, "fast": False,
             "outcome": outcomes[fault or sensitivity.NO_FAULT]}]}}

    monkeypatch.setattr(sensitivity, "declared_falsifiers", lambda *a, **k: {"C9": {"a": tuple(outcomes)}})
    monkeypatch.setattr(sensitivity, "run_fast", fake_run)
    doc = sensitivity.measure_criteria(REPO / "claims", progress=lambda m: None)
    assert doc["criteria"]["C9/a"]["refuted"] is refuted and doc["criteria"]["C9/a"]["outcomes"] == outcomes
