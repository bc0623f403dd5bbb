"""Issue 63: every row in the paper's words, on every committed results file and on made-up records.

A row names no internal id, uses the paper's names for the arms, says a direction only where the interval excludes
zero, gives the unit, and stays within 90 words; the same sentence is the README's row, the report's summary cell
and the terminal's line.
"""
import json
import re
from pathlib import Path

import pytest

from harness.report import sentences, words

ROOT = Path(__file__).resolve().parents[2]
#: the committed results files: the standard run, the smoke baseline, the full profile's, the pooled record and the
#: replicate records, and the examples' baselines (not a run's own reports/results.json, nor sensitivity.json)
FILES = sorted(p for p in [*(ROOT / "reports" / n for n in ("standard.json", "baseline.json", "full.json",
                                                          "replicated.json")),
                           *ROOT.glob("reports/replicates/*/*.json"), *ROOT.glob("examples/**/*.baseline.json")]
               if p.is_file())
#: the suite's dialect, which a row must not speak (issue 63, item 1)
DIALECT = re.compile(r"\balpha\b|\bunscaled\b|\bband\b|log seconds|\blog2\b|the long d\b|trains nothing|\bHolm p\b"
                     r"|largest reported contradiction|dot_matmul|l2_unscaled")
DIRECTION = re.compile(r"\b(worse|better|larger|smaller|higher|lower|faster|slower|trails|ahead|behind|beats)\b")


def _claims():
    for path in FILES:
        doc = json.loads(path.read_text(encoding="utf-8"))
        for cid, claim in (doc.get("claims") or {}).items():
            yield pytest.param(claim, id=f"{path.name}:{cid}")


def test_there_are_committed_records_to_read():
    assert any(p.name == "standard.json" for p in FILES) and any(p.name == "baseline.json" for p in FILES)


@pytest.mark.parametrize("claim", list(_claims()))
def test_a_row_speaks_the_papers_words(claim):
    row = sentences.sentence(claim)
    assert not words.INTERNAL_ID.search(row), row
    assert not DIALECT.search(row), row
    assert len(row.split()) <= sentences.MAX_WORDS, row
    assert row[0].isupper() and row.endswith((".", "…")), row


@pytest.mark.parametrize("claim", list(_claims()))
def test_a_direction_only_where_the_interval_excludes_zero(claim):
    for c in claim.get("criteria") or ():
        if c.get("kind") == "exact" or c.get("recorded") is False:
            continue
        text = sentences.effect(c, needed=False).replace(words.quantity(c.get("metric"))[0], "the quantity")
        if DIRECTION.search(text.split(" (needed")[0]):          # a quantity's own name ('lag behind') is no direction
            assert sentences.says_direction(c, c.get("ci")), (c.get("name"), text)


def _comparison(delta, ci, **kw):
    return {"name": "x", "kind": "superiority", "metric": "held-out loss (nats) after the budget",
            "arms": ["l2_unscaled", "l2_scaled"], "measured": delta, "ci": ci, "margin": 0.05, "better": "lower",
            "deciding_part": "d_k=64", "rule": {"kind": "superiority", "lo": 0.05, "margin": 0.05}, **kw}


def test_an_interval_across_zero_gives_the_signed_difference_and_no_direction():
    text = sentences.effect(_comparison(0.0197, [-0.0057, 0.045]))
    assert text.startswith("held-out loss of L2 QK-norm without 1/√d_k minus L2 QK-norm with 1/√d_k is 0.0197 nats "
                           "[−0.0057, 0.045] at d_k 64")
    assert not DIRECTION.search(text.split(" (needed")[0])


def test_an_interval_clear_of_zero_names_the_arm_behind_in_the_papers_words():
    text = sentences.effect(_comparison(-0.25, [-0.39, -0.11], arms=["alpha = 1", "alpha = 0.5"],
                                        kind="non_inferiority", deciding_part="kv_lookup d_k=512"))
    assert text.startswith("1/√d_k is 0.25 nats [0.11, 0.39] worse than 1/d_k in held-out loss on key-value lookup "
                           "at d_k 512")


def test_a_log_ratio_reads_as_a_ratio_with_its_arms():
    c = {"name": "t", "kind": "band", "metric": "log seconds per call at n = 256", "arms": ["additive", "dot_matmul"],
         "measured": 4.1178, "ci": [3.2509, 4.9848], "rule": {"kind": "band", "lo": 1.609}}
    assert sentences.effect(c) == ("time per forward and backward call of additive attention against matmul "
                                   "dot-product attention is 61× [26×, 146×] at n = 256 (needed: at least 5×)")


def test_a_level_names_the_one_model_its_part_tuned():
    """C1's band declares no arm; its part tuned one model (``C1/<task>/transformer``), and the row names it."""
    c = {"name": "generalises/reverse", "kind": "band", "metric": "held-out test cross-entropy (teacher-forced, nats "
         "per target token), reverse", "arms": [], "measured": 0.0412, "ci": [0.02, 0.062], "deciding_part": "reverse",
         "rule": {"kind": "band", "hi": 0.1}, "measurements": [{"label": "reverse", "rates": [
             {"key": "C1/reverse/transformer"}]}]}
    assert sentences.effect(c).startswith("held-out loss of the Transformer is 0.0412 nats [0.02, 0.062]")
    c["measurements"][0]["rates"].append({"key": "C1/reverse/lstm"})      # two models: no single name to give
    assert sentences.effect(c).startswith("held-out loss is 0.0412 nats")
    c["measurements"] = [{"label": "reverse", "tuned": ["C1/reverse/transformer"]}]     # a part pooled over replicates
    assert sentences.effect(c).startswith("held-out loss of the Transformer is 0.0412 nats")


def test_a_growth_across_distance_says_both_distances():
    c = {"name": "g", "kind": "superiority", "arms": ["lag at the long d", "lag at the short d"], "better": "none",
         "metric": "(deep conv minus self-attention steps to 0.95 on each seed's test slice; unreached: the budget "
                   "+ 1) at the long d minus at the short d", "measured": -600.0, "ci": [-943.0, -258.0],
         "deciding_part": "dilated_conv_k2 (7 layers) d=64 vs d=4", "rule": {"kind": "superiority", "margin": 50}}
    text = sentences.effect(c)
    assert "is 600 steps [258, 943] smaller at distance 64 than at distance 4" in text
    assert text.endswith("(needed: more than 50 steps, the margin)")


def test_a_censored_part_says_it_is_a_bound_and_which_way_its_sign_is_unknown():
    """C2's control pooled over replicates: an upper bound whose interval lies above zero says no direction (the true
    growth may be smaller), and the row says why the premise could not hold: which runs missed their target where."""
    c = {"name": "g", "kind": "superiority", "arms": ["lag at the long d", "lag at the short d"], "better": "none",
         "metric": "(contiguous conv minus self-attention steps to 0.95 on each seed's test slice; unreached: the "
                   "budget + 1) at the long d minus at the short d", "measured": 254.3, "ci": [146.8, 361.8],
         "deciding_part": "conv_k5 (2 layers) d=8 vs d=4", "rule": {"kind": "superiority", "margin": 50},
         "measurements": [{"label": "conv_k5 (2 layers) d=8 vs d=4", "bound": "upper", "censored":
                           "replicate 1: runs unreached within 800 steps (self_attention d=8 2/6)"}]}
    text = sentences.effect(c)
    assert "at distance 8 minus at distance 4 is 254 steps [147, 362]" in text
    assert not DIRECTION.search(text.split(" (needed")[0].replace("lag behind", ""))
    assert text.endswith("(needed: more than 50 steps, the margin); an upper bound, as 2 of 6 self-attention seeds "
                         "at distance 8 missed 95% accuracy within 800 steps in replicate 1")
    # an upper bound below zero keeps its direction: the true difference is smaller still
    down = {**c, "measured": -254.3, "ci": [-361.8, -146.8]}
    assert "is 254 steps [147, 362] smaller at distance 8 than at distance 4" in sentences.effect(down)
    assert sentences.says_direction(down, down["ci"]) and not sentences.says_direction(c, c["ci"])
    c["measurements"] = []                      # the same interval, not censored: a direction
    assert "is 254 steps [147, 362] larger at distance 8" in sentences.effect(c)


def test_a_reported_comparison_is_not_part_of_the_claim_and_never_a_contradiction():
    counted = {**_comparison(0.6, [0.4, 0.8], arms=["unscaled", "scaled"]), "role": "counted", "outcome": "passed",
               "passed": True}
    reported = {**_comparison(0.3, [0.2, 0.4], arms=["lstm", "transformer"]), "role": "reported", "name": "speed",
                "metric": "speed of convergence: mean held-out validation cross-entropy"}
    claim = {"verdict": "supported", "criteria": [counted, reported]}
    row = sentences.sentence(claim)
    assert "Not part of the claim: the LSTM is 0.3 nats [0.2, 0.4] worse than the Transformer" in row
    assert "contradiction" not in row


def test_an_at_the_edge_outcome_prints_enough_digits_to_differ_from_its_level():
    c = {**_comparison(-600, [-943, -258]), "outcome": "refuted", "p_value": 0.0499982, "level": 0.05}
    assert sentences.at_the_edge(c) == "Decided at the edge: Holm-adjusted refutation p 0.049998 against 0.05"


def test_a_question_says_yes_or_no():
    c = {**_comparison(0.0197, [-0.0057, 0.045]), "role": "counted", "outcome": "refuted", "refuted": True,
         "rule": {"kind": "superiority", "lo": 0.05, "margin": 0.05, "refute_below": 0.05}}
    row = sentences.sentence({"verdict": "answered no", "kind": "question", "criteria": [c],
                              "answers": [{"case": "l2", "answer": "answered no"}]})
    assert row.startswith("No: no for L2 QK-norm; held-out loss of L2 QK-norm without 1/√d_k minus")
    assert "(needed: more than 0.05 nats to answer yes, less to answer no)" in row


def test_a_pooled_row_says_in_how_many_replicates_it_repeats():
    from harness.report import findings

    c = {**_comparison(-0.25, [-0.3, -0.2], arms=["alpha = 1", "alpha = 0.5"], kind="non_inferiority"),
         "role": "counted", "outcome": "refuted", "refuted": True}
    claim = {"verdict": "refuted", "criteria": [c], "firmness": 0.64,
             "replication": {"K": 8, "r": 3, "wilson": [0.16, 0.66], "fragile": True, "pooled_differs_from_most": True,
                             "outcomes": ["refuted"] * 3 + ["inconclusive"] * 4 + ["supported"]}}
    row = sentences.sentence(claim)
    assert row.startswith("Refuted pooled over 8 replicates: 1/√d_k is 0.25 nats [0.2, 0.3] worse than 1/d_k")
    assert ("Repeated in 3 of 8 replicates [0.16, 0.66], fragile (the other 5: inconclusive 4, supported 1); most "
            "replicates gave another verdict") in row
    assert findings.verdict_text(claim) == "refuted (3 of 8 replicates, fragile; firmness 0.64)"


def test_a_pooled_row_cut_to_fit_keeps_its_r_of_k():
    """The r of K clause, with "fragile" and "most replicates gave another verdict", is never what a long row loses:
    the effect is cut instead, and the row stays within MAX_WORDS."""
    long_arm = "a variant " + " ".join(f"w{i}" for i in range(80))
    c = {**_comparison(-0.25, [-0.3, -0.2], arms=[long_arm, "alpha = 0.5"], kind="non_inferiority"),
         "role": "counted", "outcome": "refuted", "refuted": True}
    claim = {"verdict": "refuted", "criteria": [c], "firmness": 0.64,
             "replication": {"K": 8, "r": 3, "wilson": [0.16, 0.66], "fragile": True, "pooled_differs_from_most": True}}
    row = sentences.sentence(claim)
    assert len(row.split()) <= sentences.MAX_WORDS and " … " in row
    assert row.endswith("Repeated in 3 of 8 replicates [0.16, 0.66], fragile; most replicates gave another verdict on "
                        "their own.")
