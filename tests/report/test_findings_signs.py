"""Issue 54, item 1: every sentence says what its interval shows.

For both committed reports, every counted comparison of two arms is put into words again by
``harness.report.findings.effect_text``, and the sentence is read back: which arm it names first, its verb (trails,
exceeds, is below), the size and the interval it prints. The sign those words imply must be the stored δ's, the size
|δ|, and the printed interval the stored interval times that sign. Which arm trails comes from the criterion's
declared ``better`` only (a record without one reads by its sign alone), so a metric's name can never turn a
sentence round."""
from __future__ import annotations

import json
import math
import re

import pytest

from harness.report import findings
from tests.conftest import REPO

REPORTS = ("reports/baseline.json", "reports/standard.json")
_COMPARISONS = ("superiority", "non_inferiority", "equivalence")
_NUM = r"(−?[\d.]+(?:e[−+]?\d+)?)"


def _value(text: str) -> float:
    return float(text.replace("−", "-"))


def _comparisons(path: str):
    res = json.loads((REPO / path).read_text(encoding="utf-8"))
    for cid, claim in res["claims"].items():
        for c in claim.get("criteria", []):
            if c.get("role") in ("counted", "reported") and c.get("kind") in _COMPARISONS \
                    and len(c.get("arms") or ()) >= 2:
                yield cid, c


def implied_sign(c, first: str, verb: str) -> int:
    """The sign of δ = mean(a − b) that a sentence '<first> <verb> <other> by |δ|' asserts."""
    a, b = findings._arm_names(c, c["arms"])
    assert first in (a, b), f"the sentence names {first!r}, not an arm ({a!r}, {b!r})"
    if verb in ("exceeds", "is below"):
        assert first == a, "a sentence by sign alone names arm a first"
        return 1 if verb == "exceeds" else -1
    assert verb == "trails" and c.get("better") in ("lower", "higher"), "'trails' only where better is declared"
    a_behind = first == a
    # a behind where lower is better: a is larger (δ > 0); where higher is better: a is smaller (δ < 0)
    return (1 if a_behind else -1) * (1 if c["better"] == "lower" else -1)


@pytest.mark.parametrize("path", REPORTS)
def test_every_comparison_reads_in_the_direction_of_its_interval(path):
    """Counted and reported alike: a reported one can reach the headline as its largest contradiction."""
    checked = 0
    for cid, c in _comparisons(path):
        delta, ci = c.get("measured"), c.get("ci")
        if not isinstance(delta, (int, float)) or not math.isfinite(delta):
            continue
        text = findings.effect_text(c)
        a, b = findings._arm_names(c, c["arms"])
        names = "|".join(re.escape(x) for x in (a, b))
        m = re.match(rf"(?P<first>{names}) (?P<verb>trails|exceeds|is below) (?P<other>{names}) by {_NUM}", text)
        assert m, f"{cid}/{c['name']}: cannot read {text!r}"
        sign = implied_sign(c, m["first"], m["verb"])
        assert sign == (1 if delta >= 0 else -1), f"{cid}/{c['name']}: {text!r} against δ = {delta}"
        assert _value(m[4]) == pytest.approx(abs(delta), rel=0.01, abs=1e-9)
        printed = re.search(rf"\[{_NUM}, {_NUM}\]", text)
        if ci and all(isinstance(v, (int, float)) and math.isfinite(v) for v in ci):
            want = sorted(sign * v for v in ci)
            assert printed, f"{cid}/{c['name']}: no interval in {text!r}"
            got = [_value(printed[1]), _value(printed[2])]
            assert got == pytest.approx(want, rel=0.06, abs=0.006), f"{cid}/{c['name']}: {text!r} vs ci {ci}"
        # the quantity named in words restates no difference whose order the sentence may have turned round
        quantity = text.split(" by ", 1)[1].split("[", 1)[0]
        assert not re.search(r"\S [-−] \S|\bminus\b", quantity), f"{cid}/{c['name']}: {quantity!r} restates a difference"
        assert "nan" not in text.lower().split(), text
        checked += 1
    assert checked >= 5, f"{path}: only {checked} counted comparisons read"


@pytest.mark.parametrize("path", REPORTS)
def test_no_summary_cell_prints_nan(path):
    res = json.loads((REPO / path).read_text(encoding="utf-8"))
    for row in findings.findings_rows(res):
        assert not re.search(r"\bnan\b", row["effect"] + row["verdict"]), row


def test_a_declared_direction_names_the_arm_behind_and_none_reads_by_sign():
    """The inversion the fourth referee found: C2's growth of 0.617 read as a shrinkage, because "loss" in the
    metric's name was taken to mean lower is better. Declared "none", it reads by its sign; declared "lower" for a
    loss, the arm with the larger loss trails."""
    c = {"name": "g", "kind": "superiority", "arms": ["advantage at the long d", "advantage at the short d"],
         "metric": "(LSTM minus self-attention held-out loss, nats) at the long d minus at the short d",
         "measured": 0.617, "ci": [0.2, 1.0], "margin": 0.05, "deciding_part": "d=64 vs d=4", "better": "none"}
    text = findings.effect_text(c)
    assert text.startswith("advantage at the long d exceeds advantage at the short d by 0.617 nats [0.2, 1]")
    assert "at d 64 vs d 4" in text
    loss = {**c, "arms": ["lstm", "transformer"], "metric": "ln loss at the budget: ln LSTM - ln Transformer",
            "measured": -1.24, "ci": [-1.67, -0.80], "better": "lower", "deciding_part": "reverse"}
    text = findings.effect_text(loss)
    assert text.startswith("transformer trails lstm by 1.24 in ln loss at the budget [0.8, 1.7]"), text
    assert "LSTM - ln" not in text
    higher = {**loss, "better": "higher"}
    assert findings.effect_text(higher).startswith("lstm trails transformer by 1.24")


def test_leaning_refuted_is_a_label_beside_an_inconclusive_verdict():
    from harness.record import decision

    crit = {"name": "x", "counts": True, "kind": "non_inferiority", "decision_note": decision.HOLM_NOT_REJECTED}
    claim = {"verdict": "inconclusive", "firmness": 0.53, "criteria": [crit]}
    assert findings.verdict_text(claim).startswith("inconclusive, leaning refuted (firmness 0.53")
    assert "leaning" not in findings.verdict_text({**claim, "verdict": "supported"})
    assert "leaning" not in findings.verdict_text({**claim, "criteria": [{**crit, "decision_note": ""}]})
    # a question's refutation is the answer no: it leans "no", in its own words, and Holm leaves it short of that
    from harness.report import sentences
    q = {**claim, "kind": "question", "verdict": "inconclusive at this scale", "criteria": [{**crit, "role": "counted"}]}
    assert findings.verdict_text(q).startswith("inconclusive at this scale, leaning no (firmness 0.53")
    assert "short of answering no" in sentences.extra(q, q["criteria"][0])
    assert "short of refutation" in sentences.extra(claim, crit)


def test_a_steps_metric_states_steps_and_restates_no_difference():
    """C2's lag metric names its difference ('... at the long d minus at the short d'); the sentence turns it round
    where the lag shrank, so it states the size in steps and leaves the restatement out."""
    c = {"name": "g", "kind": "superiority", "arms": ["lag at the long d", "lag at the short d"], "better": "none",
         "metric": "(deep conv minus self-attention steps to 0.95 on each seed's test slice; unreached: the budget + "
                   "1) at the long d minus at the short d, paired by seed", "measured": -600.5, "ci": [-943, -258],
         "margin": 50, "deciding_part": "d=64 vs d=4"}
    text = findings.effect_text(c)
    assert text.startswith("lag at the long d is below lag at the short d by 600 steps [258, 943]"), text
    assert "minus" not in text


def test_an_outcome_at_the_edge_of_its_level_says_so():
    """C2 at standard: refuted at an adjusted p of 0.049998 against 0.05; the words show the digits that tell them
    apart. Far from the level, or undecided, nothing is added."""
    c = {"name": "g", "kind": "superiority", "arms": ["a", "b"], "measured": -1.0, "ci": [-2.0, -0.5], "margin": 0.1,
         "outcome": "refuted", "p_value": 0.0499982, "level": 0.05}
    assert "at the edge: adjusted p 0.049998 against 0.05" in findings.effect_text(c)
    assert "at the edge" not in findings.effect_text({**c, "p_value": 0.01})
    assert "at the edge" not in findings.effect_text({**c, "outcome": "inconclusive"})


def test_a_leaning_reported_comparison_is_the_largest_contradiction_unless_the_deciding_effect_says_it():
    """R1 at standard: additive ahead of the default at kv d_k 512, in its refutation region but not rejected after
    Holm, belongs beside "supported"; C4's reported row equal to its deciding effect is not printed twice."""
    from harness.record import decision

    counted = {"name": "never_worse", "role": "counted", "counts": True, "kind": "non_inferiority",
               "arms": ["unscaled", "default"], "better": "lower", "measured": 0.686, "ci": [0.27, 1.1],
               "margin": 0.05, "outcome": "passed", "passed": True, "p_value": 0.008, "level": 0.05}
    leaning = {"name": "default_vs_additive", "role": "reported", "counts": False, "kind": "non_inferiority",
               "arms": ["default", "additive"], "better": "lower", "measured": 0.236, "ci": [0.086, 0.39],
               "margin": 0.05, "outcome": "inconclusive", "decision_note": decision.HOLM_NOT_REJECTED}
    claim = {"verdict": "supported", "firmness": 0.63, "criteria": [counted, leaning]}
    text = findings.deciding_effect(claim)
    assert "(default_vs_additive, leaning refuted): default trails additive by 0.236" in text, text
    same = {**leaning, "arms": counted["arms"], "measured": 0.686, "ci": [0.27, 1.1]}
    assert "largest reported contradiction" not in findings.deciding_effect({**claim, "criteria": [counted, same]})
