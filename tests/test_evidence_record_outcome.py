"""Criterion.record_outcome: an evaluate_* function's dict recorded as is (extra keys ignored, checks kept)."""
import pytest

from harness.evidence import Evidence, EvidenceError


def test_record_outcome_takes_the_record_keys_and_ignores_the_rest(tmp_path):
    ev = Evidence(tmp_path)
    ev.claim("Q9", title="t", statement="s", strength="open question", kind="question")
    a = ev.criterion("a", prediction="p", threshold=1, test="t")
    b = ev.criterion("b", prediction="p", threshold=1, test="t")
    a.record_outcome({"measured": 0.7, "passed": True, "refuted": False, "ci": (0.2, 1.2), "p_value": 0.02,
                      "detail": "d", "table": [1, 2, 3]})
    d = a.to_dict()
    assert (d["measured"], d["passed"], d["ci"], d["p_value"], d["detail"]) == (0.7, True, [0.2, 1.2], 0.02, "d")
    with pytest.raises(EvidenceError, match="both true"):
        b.record_outcome({"measured": 1.0, "passed": True, "refuted": True})
    with pytest.raises(EvidenceError, match="already recorded"):
        a.record_outcome({"measured": 1.0, "passed": False})
