"""Issue 63, item 4: each criterion's p is printed as what it is (the support p, unadjusted, or the refutation p,
Holm-adjusted), in results.json (``p_label``), the report and the terminal, with digits enough that a p under its
level never reads as equal to it."""
import json
from pathlib import Path

import pytest
from scipy import stats as sps

from harness.record import decision as D
from harness.record import pvalues as P
from harness.record import results as R
from harness.record import verdict as V
from harness.report import html as report

REPORTS = Path(__file__).resolve().parents[2] / "reports"
DF = 9


def crit(name, delta, role="counted", margin=0.1):
    """A superiority criterion (margin 0.1) measured as an estimate delta with se 1 and DF degrees of freedom."""
    rule = D.superiority(margin, reason="test")
    return {"name": name, "prediction": "a beats b", "threshold": D.threshold_text(rule), "kind": "superiority",
            "rule": rule.as_dict(), "role": role, "recorded": True,
            "measurements": [D.estimate(delta, 1.0, DF, DF + 1, label="")]}


#: deltas whose one-sided p is 0.0499982 against alpha 0.05: passed (support) and refuted (refutation) at the edge
EDGE_P = 0.0499982
PASS_AT_EDGE = 0.1 + float(sps.t.isf(EDGE_P, DF))
REFUTE_AT_EDGE = float(sps.t.ppf(EDGE_P, DF))


def judged(*criteria):
    return V.judge_record(list(criteria), firmness=False)


def by_name(record):
    return {c["name"]: c for c in record["criteria"]}


def test_the_record_says_which_p_it_holds():
    """Passed: the support p, unadjusted; refuted: the refutation p, Holm-adjusted over the claim's counted
    criteria (a premise or a reported criterion: over its own parts); inconclusive: the smaller of the two."""
    out = by_name(judged(crit("passes", 6.0), crit("refuted", -6.0), crit("open", 0.05),
                         crit("reported_refuted", -6.0, role="reported"), crit("premise", 6.0, role="premise")))
    assert out["passes"]["outcome"] == "passed" and out["passes"]["p_label"] == P.SUPPORT
    assert out["passes"]["p_value"] == out["passes"]["p_support"]
    assert out["refuted"]["outcome"] == "refuted" and out["refuted"]["p_label"] == P.REFUTATION_FAMILY
    assert out["refuted"]["p_value"] == out["refuted"]["p_refute"]
    assert out["reported_refuted"]["p_label"] == P.REFUTATION_ALONE
    assert out["premise"]["p_label"] == P.SUPPORT
    assert out["open"]["outcome"] == "inconclusive" and out["open"]["p_label"] == P.SUPPORT


def test_leaning_refuted_holds_the_adjusted_refutation_p():
    """Two counted criteria each with one-sided refutation p 0.04: Holm rejects neither (0.04 > 0.05 / 2 at the first
    step), both lean refuted, and their p is the adjusted refutation p 0.08, labelled so."""
    lean = float(sps.t.ppf(0.04, DF))
    out = judged(crit("a", lean), crit("b", lean))
    for c in out["criteria"]:
        assert V.leaning(c) and c["outcome"] == "inconclusive"
        assert c["p_label"] == P.REFUTATION_FAMILY and c["p_value"] == pytest.approx(0.08)


@pytest.mark.parametrize("delta,outcome,what", [(PASS_AT_EDGE, "passed", P.SUPPORT),
                                                (REFUTE_AT_EDGE, "refuted", P.REFUTATION_FAMILY)])
def test_a_p_at_the_edge_never_reads_as_its_level(delta, outcome, what, tmp_path):
    record = judged(crit("edge", delta))
    c = record["criteria"][0]
    assert c["outcome"] == outcome and c["p_value"] == pytest.approx(EDGE_P, rel=1e-6)
    assert P.text(c["p_value"], c["level"]) == "0.049998"
    shown = f"{what} = 0.049998"
    assert P.shown(c) == shown
    # the terminal (verdict.explain) and the page (the verdict box and the criteria table)
    claim = {"id": "C9", "title": "t", "statement": "s", "strength": "strong", "metrics": {}, "figures": [],
             "duration_s": 1.0, **record}
    assert shown in V.explain(claim) and "Holm p" not in V.explain(claim)
    page = report.render_html({"schema_version": R.SCHEMA_VERSION, "run": {
        "profile": "smoke", "device": "cpu", "seeds": [0, 1], "started_at": "2026-01-01T00:00:00+00:00",
        "duration_s": 1.0, "complete": True}, "claims": {"C9": claim}}, tmp_path)
    assert f"{what.replace(chr(39), '&#39;')} = 0.049998" in page and "Holm p" not in page
    assert ">0.049998<br><span class=\"meta\">" in page and "= 0.05," not in page


def test_text_tells_a_p_from_its_level():
    assert P.text(0.0499982, 0.05) == "0.049998" and P.text(0.0500004, 0.05) == "0.0500004"
    assert P.text(0.012345678, 0.05) == "0.01235" and P.text(None, 0.05) == "—" and P.text(0.05, 0.05) == "0.05"
    assert P.text(0.0499982, 0.05, digits=3) == "0.049998" and P.text(0.03, None) == "0.03"


def test_a_file_without_the_field_reads_the_label_the_rules_give():
    """results.json written before ``p_label`` (the committed standard run and baseline): the label derived from
    the stored outcome and p's is the one judging its records again stores."""
    for name in ("standard.json", "baseline.json"):
        stored = json.loads((REPORTS / name).read_text())
        for cid, claim in stored["claims"].items():
            again = V.judge_record(claim["criteria"], kind=claim.get("kind", "claim"),
                                   fast_only=bool(claim.get("fast")), firmness=False)
            for old, new in zip(claim["criteria"], again["criteria"]):
                old = {k: v for k, v in old.items() if k != "p_label"}
                assert P.label(old) == new.get("p_label"), (name, cid, old["name"])
                if new.get("p_label"):
                    assert new["p_value"] == old["p_value"]
