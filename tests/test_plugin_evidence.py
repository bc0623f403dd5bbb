"""The evidence API (harness/evidence.py): criteria first, measurements after, clear errors on misuse."""
import math

import pytest

from harness.evidence import Evidence, EvidenceError


@pytest.fixture
def ev(tmp_path):
    e = Evidence(tmp_path)
    e.claim("C9", title="t", statement="s", strength="strong", limitation="lim")
    return e


def test_criteria_must_come_before_measurements(ev):
    c = ev.criterion("a", prediction="p", threshold=1, test="t")
    c.record(measured=1.0, passed=True)
    with pytest.raises(EvidenceError, match="declared after measuring"):
        ev.criterion("b", prediction="p", threshold=1, test="t")


def test_a_metric_also_starts_the_measurement(ev):
    ev.metric("m", 1.0)
    with pytest.raises(EvidenceError, match="before the first measurement"):
        ev.criterion("late", prediction="p", threshold=1, test="t")


def test_nothing_before_the_claim_is_declared(tmp_path):
    with pytest.raises(EvidenceError, match="declare the claim first"):
        Evidence(tmp_path).criterion("a", prediction="p", threshold=1, test="t")


def test_claim_id_must_match_the_marker(tmp_path):
    with pytest.raises(EvidenceError, match="make them agree"):
        Evidence(tmp_path, claim_id="C4").claim("C3", title="t", statement="s", strength="strong")


def test_bad_kind_and_empty_statement(tmp_path):
    with pytest.raises(EvidenceError, match="kind must be one of"):
        Evidence(tmp_path).claim("C1", title="t", statement="s", strength="strong", kind="opinion")
    with pytest.raises(EvidenceError, match="statement must be a non-empty string"):
        Evidence(tmp_path).claim("C1", title="t", statement=" ", strength="strong")


def test_record_validates_its_values(ev):
    c = ev.criterion("a", prediction="p", threshold=1, test="t")
    with pytest.raises(EvidenceError, match="passed and refuted"):
        c.record(measured=1, passed=True, refuted=True)
    with pytest.raises(EvidenceError, match="must be a bool"):
        c.record(measured=1, passed="yes")
    with pytest.raises(EvidenceError, match=r"p_value must be in \[0, 1\]"):
        c.record(measured=1, passed=True, p_value=3.0)
    with pytest.raises(EvidenceError, match="ci must be a"):
        c.record(measured=1, passed=True, ci=(1, 2, 3))
    c.record(measured=1, passed=True)
    with pytest.raises(EvidenceError, match="already recorded"):
        c.record(measured=1, passed=True)


def test_numpy_values_become_plain_json(ev):
    np = pytest.importorskip("numpy")
    c = ev.criterion("a", prediction="p", threshold=np.float64(0.5), test="t")
    c.record(measured=np.float32(0.25), passed=np.bool_(True), ci=np.array([0.1, 0.4]), p_value=np.float64(0.01))
    ev.metric("m", np.int64(3))
    ev.metric("diverged", float("nan"))
    rec = ev.to_record()
    assert rec["criteria"][0]["passed"] is True and rec["criteria"][0]["ci"] == pytest.approx([0.1, 0.4])
    assert rec["metrics"] == {"m": 3, "diverged": None}  # JSON has no NaN
    with pytest.raises(EvidenceError, match="must be a number"):
        ev.metric("text", "high")


def test_unrecorded_criterion_is_reported_as_such(ev):
    ev.criterion("never", prediction="p", threshold=1, test="t")
    (c,) = ev.to_record()["criteria"]
    assert c["recorded"] is False and c["passed"] is False and c["measured"] is None


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
