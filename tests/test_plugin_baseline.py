"""The regression gate (harness/baseline.py) and the results schema it reads (harness/results.py)."""
import json

import pytest

from harness import baseline as B
from harness import results as R


def claim(verdict="supported", metrics=None, gates=None, criteria=None, kind="claim"):
    return {"id": "C9", "kind": kind, "verdict": verdict, "metrics": metrics or {}, "gates": gates or {},
            "criteria": criteria if criteria is not None else
            [{"name": "a", "passed": verdict == "supported", "refuted": verdict == "refuted"}]}


HIGHER = {"m": {"direction": "higher", "tolerance": 0.05, "relative": False}}


def test_gate_fires_on_a_worsened_verdict():
    reg = B.compare_claim(claim("inconclusive"), claim("supported"))
    assert reg["regressed"] and reg["status"] == "regressed"
    assert reg["reasons"] == ["verdict supported -> inconclusive"]


def test_gate_fires_on_a_metric_beyond_tolerance_in_the_bad_direction():
    reg = B.compare_claim(claim(metrics={"m": 0.90}, gates=HIGHER), claim(metrics={"m": 0.96}))
    assert reg["regressed"] and "m 0.96 -> 0.9" in reg["reasons"][0]


def test_gate_holds_within_tolerance_and_on_improvement():
    assert B.compare_claim(claim(metrics={"m": 0.92}, gates=HIGHER), claim(metrics={"m": 0.96}))["status"] == "ok"
    up = B.compare_claim(claim(metrics={"m": 1.5}, gates=HIGHER), claim(metrics={"m": 0.96}))
    assert not up["regressed"] and up["status"] == "improved"
    better_verdict = B.compare_claim(claim("supported"), claim("refuted"))
    assert not better_verdict["regressed"] and better_verdict["status"] == "improved"


@pytest.mark.parametrize("direction,now,regressed", [
    ("lower", 1.2, True), ("lower", 0.5, False), ("both", 0.8, True), ("both", 1.04, False),
])
def test_gate_directions(direction, now, regressed):
    row = B.compare_metric("m", now, 1.0, {"direction": direction, "tolerance": 0.05})
    assert row["regressed"] is regressed


def test_relative_tolerance_scales_with_the_baseline():
    gate = {"direction": "higher", "tolerance": 0.1, "relative": True}
    assert not B.compare_metric("ratio", 75.0, 80.0, gate)["regressed"]   # -6%
    assert B.compare_metric("ratio", 70.0, 80.0, gate)["regressed"]       # -12.5%


def test_new_claims_and_new_metrics_are_not_regressions():
    assert B.compare_claim(claim("refuted"), None) == {"status": "new", "regressed": False,
                                                       "baseline_verdict": None, "reasons": [], "metrics": []}
    row = B.compare_metric("m", 0.1, None, HIGHER["m"])
    assert row["status"] == "new" and not row["regressed"]


def test_a_gated_metric_gone_missing_is_a_regression():
    reg = B.compare_claim(claim(metrics={"m": None}, gates=HIGHER), claim(metrics={"m": 0.96}))
    assert reg["regressed"] and "missing" in reg["reasons"][0]


def test_a_questions_changed_answer_is_shown_not_gated():
    reg = B.compare_claim(claim("answered no", kind="question"), claim("answered yes", kind="question"))
    assert not reg["regressed"] and reg["status"] == "changed"
    assert B.compare_claim(claim("error", kind="question"), claim("answered no", kind="question"))["regressed"]


def test_a_claim_in_parts_compares_each_part_with_its_own_criteria():
    base = claim("inconclusive", criteria=[{"name": "a", "passed": True}, {"name": "b", "passed": False}])
    part_a = claim("supported", criteria=[{"name": "a", "passed": True}])
    assert B.compare_claim(part_a, base)["baseline_verdict"] == "supported"
    assert not B.compare_claim(part_a, base)["regressed"]


def valid_results():
    return {"schema_version": 1,
            "run": {k: None for k in R.RUN_KEYS},
            "claims": {"C9": {"id": "C9", "title": "t", "statement": "s", "strength": "strong",
                              "verdict": "supported", "metrics": {"m": 1.0}, "figures": [], "duration_s": 1.0,
                              "criteria": [{"name": "a", "prediction": "p", "threshold": 1, "measured": 1,
                                            "passed": True}]}}}


def test_malformed_baseline_gives_a_clear_error(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text('{"schema_version": 1, "run": {')
    with pytest.raises(B.BaselineError, match=r"baseline file .*baseline.json is not valid JSON.*line 1") as exc:
        B.load_baseline(path)
    assert "--update-baseline" in str(exc.value)


def test_missing_baseline_gives_a_clear_error(tmp_path):
    with pytest.raises(B.BaselineError, match="baseline file not found"):
        B.load_baseline(tmp_path / "nope.json")


@pytest.mark.parametrize("breakage,field", [
    (lambda d: d.pop("claims"), "claims"),
    (lambda d: d["run"].pop("profile"), "run.profile"),
    (lambda d: d["claims"]["C9"].pop("verdict"), "claims['C9'].verdict"),
    (lambda d: d["claims"]["C9"].__setitem__("verdict", "great"), "claims['C9'].verdict"),
    (lambda d: d["claims"]["C9"]["metrics"].__setitem__("m", "high"), "claims['C9'].metrics['m']"),
    (lambda d: d["claims"]["C9"]["criteria"][0].pop("passed"), "claims['C9'].criteria[0].passed"),
    (lambda d: d.__setitem__("schema_version", 7), "schema_version"),
])
def test_schema_errors_name_the_field(tmp_path, breakage, field):
    data = valid_results()
    breakage(data)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    with pytest.raises(B.BaselineError) as exc:
        B.load_baseline(path)
    assert field in str(exc.value)


def test_valid_baseline_loads_and_is_slimmed_for_committing(tmp_path):
    data = valid_results()
    data["claims"]["C9"]["tables"] = {"per_seed": [{"seed": 0}]}
    slim = B.for_baseline(data)
    assert "tables" not in slim["claims"]["C9"] and "tables" in data["claims"]["C9"]
    R.write_json_atomic(tmp_path / "b.json", slim)
    assert B.load_baseline(tmp_path / "b.json")["claims"]["C9"]["verdict"] == "supported"


def test_claim_order_is_the_notes():
    ids = ["Q1", "C10", "R2", "C2", "M0", "F1", "C1"]
    assert sorted(ids, key=R.claim_sort_key) == ["C1", "C2", "C10", "R2", "Q1", "M0", "F1"]


def test_atomic_write_leaves_no_temp_file(tmp_path):
    R.write_json_atomic(tmp_path / "r.json", {"x": float("nan")})
    assert json.loads((tmp_path / "r.json").read_text()) == {"x": None}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
