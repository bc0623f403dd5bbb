"""The evidence API (harness/record/evidence.py): criteria first, measurements after, clear errors on misuse."""
import math

import pytest

from harness.record import decision as D
from harness.record.evidence import Evidence, EvidenceError

EXACT = dict(rule=D.exact(), prediction="p", metric="m")


@pytest.fixture
def ev(tmp_path):
    e = Evidence(tmp_path)
    e.claim("C9", title="t", statement="s", strength="strong", limitation="lim")
    return e


def test_criteria_must_come_before_measurements(ev):
    c = ev.criterion("a", **EXACT)
    c.check(True, measured=1.0)
    with pytest.raises(EvidenceError, match="declared after measuring"):
        ev.criterion("b", **EXACT)


def test_a_metric_also_starts_the_measurement(ev):
    ev.metric("m", 1.0)
    with pytest.raises(EvidenceError, match="before the first measurement"):
        ev.criterion("late", **EXACT)


def test_nothing_before_the_claim_is_declared(tmp_path):
    with pytest.raises(EvidenceError, match="declare the claim first"):
        Evidence(tmp_path).criterion("a", **EXACT)


def test_claim_id_must_match_the_marker(tmp_path):
    with pytest.raises(EvidenceError, match="make them agree"):
        Evidence(tmp_path, claim_id="C4").claim("C3", title="t", statement="s", strength="strong")


def test_bad_kind_and_empty_statement(tmp_path):
    with pytest.raises(EvidenceError, match="kind must be one of"):
        Evidence(tmp_path).claim("C1", title="t", statement="s", strength="strong", kind="opinion")
    with pytest.raises(EvidenceError, match="statement must be a non-empty string"):
        Evidence(tmp_path).claim("C1", title="t", statement=" ", strength="strong")


def test_record_validates_its_values(ev):
    with pytest.raises(EvidenceError, match="rule must be a harness.record.decision rule"):
        ev.criterion("x", rule="p < 0.05", prediction="p", metric="m")
    with pytest.raises(EvidenceError, match="metric must be a non-empty string"):
        ev.criterion("x", rule=D.exact(), prediction="p", metric="")
    c = ev.criterion("a", **EXACT)
    s = ev.criterion("s", rule=D.superiority(0.1, reason="r"), prediction="p", metric="m")
    with pytest.raises(EvidenceError, match="must be a bool"):
        c.check("yes")
    with pytest.raises(EvidenceError, match="check\\(\\) is for exact rules"):
        s.check(True)
    with pytest.raises(EvidenceError, match="exact criterion is recorded with check"):
        c.sample([1.0, 2.0])
    with pytest.raises(D.DecisionError, match="at least 2 seeds"):
        s.compare([1.0], [0.0])
    with pytest.raises(D.DecisionError, match="NaN or inf"):
        s.compare([1.0, float("nan")], [0.0, 1.0])
    c.check(True)
    with pytest.raises(EvidenceError, match="already recorded"):
        c.check(True)


def test_rules_need_a_reason_and_sane_bounds():
    with pytest.raises(D.DecisionError, match="reason"):
        D.superiority(0.1, reason=" ")
    with pytest.raises(D.DecisionError, match="lo < hi"):
        D.band(1.0, 0.5, reason="r")
    with pytest.raises(D.DecisionError, match="> 0 for equivalence"):
        D.equivalence(0.0, reason="r")
    with pytest.raises(D.DecisionError, match="needs a bound"):
        D.band(None, None, reason="r")


def test_numpy_values_become_plain_json(ev):
    np = pytest.importorskip("numpy")
    c = ev.criterion("a", rule=D.superiority(0.0, reason="r", paired=True), prediction="p", metric="m",
                     arms=("x", "y"))
    c.compare(np.array([1.0, 2.0, 3.0], dtype=np.float32), np.array([0.5, 1.0, 1.5]))
    ev.metric("m", np.int64(3))
    ev.metric("diverged", float("nan"))
    rec = ev.to_record()
    (m,) = rec["criteria"][0]["measurements"]
    assert m["a"] == [1.0, 2.0, 3.0] and all(type(v) is float for v in m["a"]) and m["paired"] is True
    assert rec["metrics"] == {"m": 3, "diverged": None}  # JSON has no NaN
    with pytest.raises(EvidenceError, match="must be a number"):
        ev.metric("text", "high")


def test_unrecorded_criterion_is_reported_as_such(ev):
    ev.criterion("never", **EXACT)
    (c,) = ev.to_record()["criteria"]
    assert c["recorded"] is False and c["passed"] is False and c["measured"] is None


def test_the_record_carries_the_definition_and_its_fingerprint(ev):
    a = ev.criterion("a", rule=D.non_inferiority(0.05, reason="5 points"), prediction="p", metric="loss",
                     arms=("x", "y"))
    rec = ev.to_record()["criteria"][0]
    assert (rec["kind"], rec["margin"], rec["margin_reason"]) == ("non_inferiority", 0.05, "5 points")
    assert rec["threshold"] == "mean(a - b) > -0.05" and len(rec["fingerprint"]) == 12
    # the fingerprint covers the definition (margin, counts), not the wording
    other = Evidence(ev.report_dir)
    other.claim("C9", title="t", statement="s", strength="strong")
    same = other.criterion("a", rule=D.non_inferiority(0.05, reason="other words"), prediction="q", metric="loss",
                           arms=("x", "y"))
    assert same.to_dict()["fingerprint"] == rec["fingerprint"]
    for changed in (dict(rule=D.non_inferiority(0.1, reason="r")), dict(role="reported"), dict(fast=True),
                    dict(arms=("y", "x")), dict(metric="accuracy"), dict(rule=D.superiority(0.05, reason="r"))):
        kw = dict(rule=D.non_inferiority(0.05, reason="r"), prediction="p", metric="loss", arms=("x", "y"))
        kw.update(changed)
        e = Evidence(ev.report_dir)
        e.claim("C9", title="t", statement="s", strength="strong")
        assert e.criterion("a", **kw).to_dict()["fingerprint"] != rec["fingerprint"], changed
    del a


def test_gate_validation(ev):
    ev.gate("m", direction="higher", tolerance=0.1)
    with pytest.raises(EvidenceError, match="higher, lower, both"):
        ev.gate("m", direction="up", tolerance=0.1)
    with pytest.raises(EvidenceError, match="tolerance"):
        ev.gate("m", direction="both", tolerance=-1)
    assert ev.to_record()["gates"] == {"m": {"direction": "higher", "tolerance": 0.1, "relative": False}}


def test_tables_from_dataframe_records_and_columns(ev):
    pd = pytest.importorskip("pandas")
    ev.table("df", pd.DataFrame({"seed": [0, 1], "acc": [0.5, math.inf]}))
    ev.table("by_seed", pd.DataFrame({"acc": [0.5]}, index=pd.Index([7], name="seed")))
    ev.table("cols", {"a": [1, 2], "b": ["x", "y"]})
    ev.table("recs", [{"a": 1}])
    t = ev.to_record()["tables"]
    assert t["df"] == [{"seed": 0, "acc": 0.5}, {"seed": 1, "acc": None}]
    assert t["by_seed"] == [{"seed": 7, "acc": 0.5}]
    assert t["cols"] == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(EvidenceError, match="file name"):
        ev.table("../escape", [{"a": 1}])


def test_figure_is_saved_under_the_claim_and_referenced_relatively(ev, tmp_path):
    from matplotlib.figure import Figure

    fig = Figure()
    fig.add_subplot(1, 1, 1).plot([0, 1], [0, 1])
    rel = ev.figure("curve", fig)
    assert rel == "figures/C9/curve.png"
    assert (tmp_path / rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ev.to_record()["figures"] == [rel]


def test_headline_never_recorded_is_noted(ev):
    ev.headline("missing_metric")
    assert any("never recorded" in n for n in ev.to_record()["notes"])


# -- Evidence.declare: a module's CRITERIA, in C3's shape, declared in one call (issue 37) ----------------------
CRITERIA = {
    "slow": dict(rule=D.superiority(0.1, paired=True, reason="r"), prediction="at d_k={large_dk} A beats B",
                 metric="loss at d_k={large_dk}", arms=("B", "A"), how="paired by seed"),
    "quick": dict(rule=D.exact("a check"), prediction="exact", metric="m", fast=True),
    "banded": dict(rule=lambda min_slope: D.band(-min_slope, min_slope, reason=f"+-{min_slope}"),
                   role=lambda min_slope: "counted" if min_slope < 1 else "reported", prediction="flat",
                   metric="slope"),
}


def test_declare_is_criterion_for_each_entry_in_order(ev, tmp_path):
    crits = ev.declare(CRITERIA, how={"quick": "one call"}, large_dk=64, min_slope=0.1)
    assert list(crits) == ["slow", "quick", "banded"] and [c.name for c in ev.criteria] == list(crits)
    slow, quick, banded = crits.values()
    assert (slow.prediction, slow.metric, slow.how) == ("at d_k=64 A beats B", "loss at d_k=64", "paired by seed")
    assert quick.how == "one call" and quick.fast and not slow.fast
    assert (banded.rule.lo, banded.rule.hi, banded.counts) == (-0.1, 0.1, True)
    # the same declaration through ev.criterion: the same definition, so the same fingerprint
    by_hand = Evidence(tmp_path)
    by_hand.claim("C9", title="t", statement="s", strength="strong", limitation="lim")
    by_hand.criterion("slow", rule=CRITERIA["slow"]["rule"], prediction="at d_k=64 A beats B",
                      metric="loss at d_k=64", arms=("B", "A"), how="paired by seed")
    assert by_hand.criteria[0].to_dict() == slow.to_dict()


def test_declare_keeps_the_fast_ones_under_fast_and_skips_what_the_run_leaves_out(ev):
    assert list(ev.declare(CRITERIA, fast=True)) == ["quick"]
    assert list(ev.declare({k: v for k, v in CRITERIA.items() if k != "quick"}, skip=["banded"],
                           how="every one", large_dk=8)) == ["slow"]
    assert ev.criteria[-1].how == "every one"


def test_declare_without_fill_leaves_the_text_alone(ev):
    crit = ev.declare({"a": dict(rule=D.exact(), prediction="a set {0, 1}", metric="m")})["a"]
    assert crit.prediction == "a set {0, 1}"


@pytest.mark.parametrize("call, message", [
    (lambda e: e.declare(CRITERIA, large_dk=8), "'banded': rule needs min_slope"),
    (lambda e: e.declare(CRITERIA, min_slope=0.1, other=1), "'slow': prediction names 'large_dk'"),
    (lambda e: e.declare(CRITERIA, skip=["slwo"], large_dk=8, min_slope=0.1), "skip names no declared criterion: slwo"),
    (lambda e: e.declare(CRITERIA, how={"quik": "x"}, large_dk=8, min_slope=0.1), "how names no declared criterion"),
    (lambda e: e.declare({"a": ("p", "m", True)}), "'a' must be a dict of ev.criterion's keyword arguments"),
    (lambda e: e.declare({"a": dict(EXACT, measure=len)}), "unknown field.*measure"),
])
def test_declare_says_what_is_wrong(ev, call, message):
    with pytest.raises(EvidenceError, match=message):
        call(ev)


def test_declare_after_measuring_is_refused(ev):
    ev.metric("m", 1.0)
    with pytest.raises(EvidenceError, match="before the first measurement"):
        ev.declare(CRITERIA, fast=True)


# ------------------------------------------------------------------------------ roles (issue 38, mechanism 1)
def test_a_criterion_declares_its_role_the_one_name_and_counts_derives_from_it(ev):
    """Issue 46: one name per concept. A criterion is declared with ``role``; ``counts`` (results.json's field) is
    derived, never declared."""
    assert ev.criterion("a", **EXACT).role == "counted" and ev.criteria[-1].counts is True
    assert ev.criterion("c", role="reported", **EXACT).role == "reported" and ev.criteria[-1].counts is False
    p = ev.criterion("d", role="premise", **EXACT)
    assert p.role == "premise" and p.counts is False
    with pytest.raises(TypeError, match="counts"):
        ev.criterion("h", counts=True, **EXACT)
    with pytest.raises(EvidenceError, match="unknown|counts"):
        ev.declare({"i": dict(counts=False, **EXACT)})
    with pytest.raises(EvidenceError, match="role must be one of counted, premise, reported"):
        ev.criterion("j", role="context", **EXACT)
    assert ev.declare({"k": dict(role="premise", **EXACT)})["k"].role == "premise"


def test_every_criterion_record_carries_its_role_into_results(ev):
    from harness.record import results, verdict

    crits = [ev.criterion("law", role="premise", **EXACT), ev.criterion("claim", **EXACT),
             ev.criterion("shown", role="reported", **EXACT)]
    for c, holds in zip(crits, (True, True, False)):
        c.check(holds)
    record = ev.to_record()
    assert [c["role"] for c in record["criteria"]] == ["premise", "counted", "reported"]
    assert [c["counts"] for c in record["criteria"]] == [False, True, False]
    merged = results.merge_parts([{**record, "nodeid": "claims/test_c9.py::test_c9", "verdict": "supported"}])["C9"]
    assert [c["role"] for c in merged["criteria"]] == ["premise", "counted", "reported"]
    assert merged["verdict"] == "supported" and merged["not_testable"] == ""
    # a record written before roles (no "role") is judged from counts, and gains its role
    old = [{k: v for k, v in c.items() if k != "role"} for c in record["criteria"]]
    assert [c["role"] for c in verdict.judge_record(old)["criteria"]] == ["reported", "counted", "reported"]


def test_an_unchanged_criterion_keeps_its_fingerprint_and_a_premise_gets_a_new_one(ev):
    """The definition a counted or reported criterion had before roles existed, byte for byte: the baseline gate
    must not see every criterion redefined. Only a premise adds ``role`` to it."""
    rule = D.non_inferiority(0.05, reason="r", paired=True)
    before = {"name": "a", "kind": "non_inferiority", "metric": "loss", "arms": ["x", "y"], "lo": rule.lo,
              "hi": rule.hi, "margin": 0.05, "paired": True, "alpha": D.ALPHA, "counts": True, "fast": False}
    kw = dict(rule=rule, prediction="p", metric="loss", arms=("x", "y"))
    counted = ev.criterion("a", **kw)
    assert counted.definition() == before
    assert counted.to_dict()["fingerprint"] == D.fingerprint(before)
    for spelling in (dict(role="reported"),):
        e = Evidence(ev.report_dir)
        e.claim("C9", title="t", statement="s", strength="strong")
        assert e.criterion("a", **kw, **spelling).to_dict()["fingerprint"] == D.fingerprint({**before, "counts": False})
    e = Evidence(ev.report_dir)
    e.claim("C9", title="t", statement="s", strength="strong")
    as_premise = e.criterion("a", role="premise", **kw)
    assert as_premise.definition() == {**before, "counts": False, "role": "premise"}
    fingerprints = (D.fingerprint(before), D.fingerprint({**before, "counts": False}))
    assert as_premise.to_dict()["fingerprint"] not in fingerprints


def test_a_quote_is_recorded_outside_the_fingerprint(ev):
    """Issue 47: the note's words a criterion tests travel in its record (whitespace normalised), never in its
    definition: a criterion quoted or re-quoted is the same criterion."""
    quoted = ev.declare({"a": dict(EXACT, quote="Scaling by 1/√d_k returns\n   it to unit variance.")})["a"]
    rec = quoted.to_dict()
    assert rec["quote"] == "Scaling by 1/√d_k returns it to unit variance."
    other = Evidence(ev.report_dir)
    other.claim("C9", title="t", statement="s", strength="strong")
    bare = other.criterion("a", **EXACT).to_dict()
    assert "quote" not in bare and bare["fingerprint"] == rec["fingerprint"]
    with pytest.raises(EvidenceError, match="quote must be"):
        other.criterion("b", quote=["words"], **EXACT)


def test_a_reason_stands_in_for_a_quote_never_beside_one(ev):
    """Issue 54: a criterion the note's words do not state gives why instead (``unquoted``): recorded, whitespace
    normalised, outside the fingerprint; a criterion that gives both a quote and a reason is refused."""
    c = ev.declare({"a": dict(EXACT, unquoted="an implementation check\n  the note does not state")})["a"]
    rec = c.to_dict()
    assert rec["unquoted"] == "an implementation check the note does not state" and "quote" not in rec
    other = Evidence(ev.report_dir)
    other.claim("C9", title="t", statement="s", strength="strong")
    assert other.criterion("a", **EXACT).to_dict()["fingerprint"] == rec["fingerprint"]
    with pytest.raises(EvidenceError, match="never with it"):
        other.criterion("b", quote="the words", unquoted="a reason", **EXACT)
    with pytest.raises(EvidenceError, match="unquoted must be"):
        other.criterion("c", unquoted=["a reason"], **EXACT)


def test_a_claim_says_why_it_counts_nothing(ev):
    """Issue 47, mechanism 5: the module's reason travels in the record as ``nothing_counted``."""
    assert "nothing_counted" not in ev.to_record()
    ev.counts_nothing("its rows are\n identities")
    assert ev.to_record()["nothing_counted"] == "its rows are identities"
    with pytest.raises(EvidenceError, match="needs the reason"):
        ev.counts_nothing(" ")
