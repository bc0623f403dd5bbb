"""A reviewer's first objections (DEVELOPERS.md): each claim says which it answers; the harness answers firmness
and re-opens 'ceiling' when a counted criterion was constant across seeds."""
import pytest

from harness.record import decision, objections, verdict
from harness.record.evidence import Evidence, EvidenceError
from harness.record.results import merge_parts


def _ev(tmp_path, values_a, values_b):
    ev = Evidence(tmp_path)
    ev.claim("CX", title="t", statement="s", strength="strong")
    ev.objection("tuned_lr", "answered", "each arm at its own rate, tuned on disjoint seeds")
    ev.objection("second_task", "open", "one task only at this profile")
    crit = ev.criterion("a_beats_b", rule=decision.superiority(0.1, paired=True, reason="r"), prediction="p",
                        metric="loss")
    crit.compare(values_a, values_b)
    return ev


def _merged(ev):
    rec = dict(ev.to_record(), nodeid="claims/test_cx.py::test_cx", order=0, duration_s=1.0)
    return merge_parts([rec])["CX"]


def test_rows_come_in_order_with_the_modules_answers_and_the_harness_firmness(tmp_path):
    claim = _merged(_ev(tmp_path, [2.0, 2.1, 2.2, 2.05, 2.15], [1.0, 1.1, 1.0, 1.05, 1.0]))
    rows = {r["key"]: r for r in claim["objections"]}
    assert [r["key"] for r in claim["objections"]] == list(objections.OBJECTIONS)
    assert rows["tuned_lr"]["status"] == "answered" and "disjoint" in rows["tuned_lr"]["how"]
    assert rows["second_task"]["status"] == "open"
    assert rows["selection"] == {"key": "selection", "question": objections.OBJECTIONS["selection"], "status": "open",
                                 "how": "not addressed by the module"}
    assert claim["verdict"] == "supported" and rows["firmness"]["status"] == "answered"
    assert "firmness" in rows["firmness"]["how"]


def test_a_constant_arm_reopens_the_ceiling_objection(tmp_path):
    ev = _ev(tmp_path, [1.0] * 5, [0.5, 0.6, 0.4, 0.55, 0.45])
    ev.objection("ceiling", "answered", "loss, not accuracy")
    rows = {r["key"]: r for r in _merged(ev)["objections"]}
    assert rows["ceiling"]["status"] == "open" and "a_beats_b" in rows["ceiling"]["how"]


def test_a_fragile_verdict_leaves_firmness_open():
    rows = {r["key"]: r for r in objections.objections({"firmness": 0.5, "seeds_for_firm": 9, "criteria": []})}
    assert rows["firmness"]["status"] == "open" and "fragile" in rows["firmness"]["how"]


@pytest.mark.parametrize("args, message", [
    (("lr", "answered", "x"), "unknown objection"),
    (("firmness", "answered", "x"), "firmness is the harness's"),
    (("ceiling", "yes", "x"), "status must be one of"),
    (("ceiling", "answered", " "), "say how"),
])
def test_bad_answers_are_refused_with_a_clear_message(tmp_path, args, message):
    ev = Evidence(tmp_path)
    ev.claim("CX", title="t", statement="s", strength="strong")
    with pytest.raises(EvidenceError, match=message):
        ev.objection(*args)


def test_the_harness_answers_whether_each_counted_criterion_tests_the_notes_words():
    """The guide's first objection: a counted criterion that quotes the note's words answers it; one that quotes none
    leaves it open with its reason, for a reader to judge."""
    quoted = {"name": "a", "role": "counted", "counts": True, "quote": "the words"}
    bare = {"name": "b", "role": "counted", "counts": True, "unquoted": "an implementation check"}
    row = lambda crits: {r["key"]: r for r in objections.objections({"criteria": crits})}["tests_claim"]  # noqa: E731
    assert row([quoted])["status"] == "answered"
    open_row = row([quoted, bare])
    assert open_row["status"] == "open" and "b: an implementation check" in open_row["how"]
    assert row([])["status"] == "not applicable"
