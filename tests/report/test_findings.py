"""The findings in words (harness/report/findings.py) and `python -m harness.report findings`."""
import pytest

from harness.report import findings as F
from harness.report import html as report
from harness.record import results as R
from tests.report.test_html import claim, results

LOSS = "held-out loss (nats) after the budget"


def crit(kind, **extra):
    c = {"name": "c", "kind": kind, "metric": LOSS, "arms": ["unscaled", "additive"], "measured": 1.69,
         "ci": [1.2, 2.1], "margin": 0.1, "deciding_part": None, "passed": True, "refuted": False,
         "rule": {"kind": kind, "margin": 0.1}, "better": "lower"}
    c.update(extra)
    return c


def test_superiority_names_the_arm_behind_with_interval_part_and_margin():
    text = F.effect_text(crit("superiority", deciding_part="d_k=256"))
    assert text == "unscaled trails additive by 1.69 nats [1.2, 2.1] at d_k 256 (margin 0.1)"


def test_a_negative_difference_names_the_other_arm_and_flips_the_interval():
    """δ = a − b < 0 on a loss: b is behind; the interval is that of the stated difference, b − a."""
    text = F.effect_text(crit("non_inferiority", arms=["alpha = 1", "alpha = 0.5"], measured=-0.13,
                              ci=[-0.28, 0.02], margin=0.05, deciding_part="kv_lookup d_k=256"))
    assert text == "alpha = 0.5 trails alpha = 1 by 0.13 nats [−0.02, 0.28] on key-value lookup at d_k 256 (margin 0.05)"


def test_a_criterion_that_declares_higher_is_better_turns_the_sentence_round():
    """Issue 54: the direction is the criterion's declaration (``better``), not a word of its metric's name."""
    text = F.effect_text(crit("superiority", metric="effective resolution (fraction of the slots), per seed",
                              arms=["h = 4", "h = 1"], measured=0.62, ci=[0.51, 0.72], margin=0.25, better="higher"))
    assert text == "h = 1 trails h = 4 by 0.62 in effective resolution [0.51, 0.72] (margin 0.25)"


def test_a_criterion_that_declares_no_direction_reads_by_its_sign():
    for better in ("none", None):
        text = F.effect_text(crit("equivalence", metric="log-log slope of |dy/dx| against d, per seed",
                                  arms=["a", "b"], measured=-0.0044, ci=[-0.038, 0.029], margin=0.25, better=better))
        assert text == "a is below b by 0.0044 in log-log slope of |dy/dx| against d [−0.029, 0.038] (margin ±0.25)"
    # a loss whose criterion declares nothing: the metric's name decides nothing either
    assert F.effect_text(crit("superiority", better=None)).startswith("unscaled exceeds additive by 1.69 nats")


def test_band():
    c = crit("band", metric="log-log slope of Var(q.k) against d_k", arms=[], measured=0.98, ci=[0.95, 1.01],
             margin=None, rule={"kind": "band", "lo": 0.9, "hi": 1.1})
    assert F.effect_text(c) == "log-log slope of Var(q.k) against d_k = 0.98 [0.95, 1] (band [0.9, 1.1])"
    c["rule"] = {"kind": "band", "lo": None, "hi": -0.5}
    assert F.effect_text(c).endswith("(band ≤ −0.5)")


def test_exact_holds_or_fails_with_the_details_first_clause():
    c = crit("exact", measured=None, ci=None, margin=None, prediction="the mask is causal",
             detail="12 cases (seeds x paths): max future dependency 0, min past 0.46; weights above the diagonal 0")
    assert F.effect_text(c) == "holds: 12 cases: max future dependency 0, min past 0.46"
    c.update(passed=False, refuted=True, detail="480 cases (d_k [1, 8], both paths); worst error 0.3")
    assert F.effect_text(c) == "fails: the mask is causal"  # too few words in the detail: the prediction


def test_a_missing_interval_says_so_and_issue_26s_extra_fields_are_read_when_present():
    text = F.effect_text(crit("superiority", ci=None))
    assert text == "unscaled trails additive by 1.69 nats (margin 0.1; no interval)"
    text = F.effect_text(crit("superiority", measured=0.05, ci=[0.01, 0.09], short_of_margin=True,
                              parts=[{"label": "kv_lookup", "outcome": "inconclusive"},
                                     {"label": "delayed_copy", "outcome": "passed"}]))
    assert text.endswith("(margin 0.1; smaller than the margin; inconclusive on key-value lookup; "
                         "passed on delayed copy)")


def test_an_interval_in_the_refutation_region_that_holm_does_not_reject_says_so():
    """Standard's C4: alpha = 0.5 trails by 0.26 [0.16, 0.35] against a 0.05 margin, inconclusive; without the
    note the row reads as refuted."""
    from harness.record import decision

    c = crit("superiority", outcome="inconclusive", p_refute=0.0872,
             decision_note=decision.HOLM_NOT_REJECTED)
    assert F.effect_text(c).endswith("(margin 0.1; not refuted after Holm's correction over the claim's tests, "
                                     "adjusted p 0.087)")
    assert "Holm" not in F.effect_text(crit("superiority", outcome="inconclusive", p_refute=0.2))


def test_never_recorded_and_no_criterion():
    assert F.effect_text(crit("superiority", recorded=False, name="gain")) == "gain: never recorded"
    assert F.effect_text(None) == "—"


def test_findings_rows_follow_the_deciding_criterion_and_strip_a_repeated_id():
    c3 = claim("C3", "refuted", title="C3 — unscaled saturates", firmness=None,
               criteria=[crit("superiority", passed=False, refuted=True, firmness=0.9, outcome="refuted")])
    q2 = claim("Q2", "answered no", kind="question", firmness=0.97,
               criteria=[crit("band", arms=[], metric="Spearman rho(sink, resolution) per seed", measured=0.57,
                              ci=[0.35, 0.8], passed=False, refuted=True, rule={"kind": "band", "hi": -0.5})])
    rows = F.findings_rows(results(C3=c3, Q2=q2))
    assert rows[0] == {"id": "C3", "claim": "unscaled saturates", "verdict": "refuted (firmness not estimated)",
                       "effect": "Refuted in this run: no scaling is 1.7 nats [1.2, 2.1] worse than additive "
                                 "attention in held-out loss (needed: more than 0.1 nats, the margin)."}
    assert rows[1]["verdict"] == "answered no (firmness 0.97)"
    assert rows[1]["effect"] == ("No: the rank correlation of the attention sink with resolution is 0.57 [0.35, 0.8] "
                                 "(needed: at most −0.5).")
    table = F.findings_markdown(results(C3=c3, Q2=q2))
    assert "| C3 | unscaled saturates | refuted (firmness not estimated) |" in table
    assert "2026-01-01 00:00 UTC" in table.splitlines()[0]


def test_a_pipe_in_an_effect_does_not_break_the_markdown_table():
    c = claim("R2", criteria=[crit("band", arms=[], metric="slope of |dL/dlogits|", rule={"kind": "band", "lo": 0.1})])
    row = F.findings_markdown(results(R2=c)).splitlines()[-1]
    assert "\\|dL/dlogits\\|" in row and row.count(" | ") == 3


def test_cli_prints_and_writes_between_the_markers(tmp_path, capsys):
    R.write_json_atomic(tmp_path / "results.json", results(C4=claim("C4")))
    assert report.main(["findings", str(tmp_path / "results.json")]) == 0
    table = capsys.readouterr().out
    assert table == F.findings_markdown(results(C4=claim("C4")))
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{F.BEGIN}\nold\n{F.END}\ntail\n", encoding="utf-8")
    assert report.main(["findings", str(tmp_path / "results.json"), "--write", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == f"# x\n{F.BEGIN}\n{table}{F.END}\ntail\n"
    assert F.between_markers(readme.read_text(encoding="utf-8")) == table
    readme.write_text("no markers\n", encoding="utf-8")
    capsys.readouterr()
    assert report.main(["findings", str(tmp_path / "results.json"), "--write", str(readme)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "markers" in err


def test_expect_all_names_what_a_file_that_parts_fill_lacks(tmp_path, capsys):
    """Issue 57: reports/full.json fills claim by claim; --expect-all names every claim module's id it lacks, and a
    file not made yet lacks them all (no error); without it, a missing file is still exit 4."""
    from harness.profiles import claim_files

    ids = list(claim_files())
    R.write_json_atomic(tmp_path / "full.json", results(C4=claim("C4")))
    assert report.main(["findings", str(tmp_path / "full.json"), "--expect-all"]) == 0
    out = capsys.readouterr().out
    assert "| C4 |" in out and out.rstrip().endswith(f"Not in this file yet: {', '.join(i for i in ids if i != 'C4')}.")
    assert report.main(["findings", str(tmp_path / "none.json"), "--expect-all"]) == 0
    assert capsys.readouterr().out.startswith(f"No run at this profile has been merged: `{tmp_path / 'none.json'}`")
    assert report.main(["findings", str(tmp_path / "none.json")]) == 4


@pytest.mark.parametrize("value, text", [(1.694, "1.69"), (-0.129, "−0.129"), (1234.5, "1234"), (0.00133, "0.00133"),
                                         (float("inf"), "∞")])
def test_numbers_in_prose(value, text):
    assert F.number(value) == text


def _not_testable_claim():
    """A claim judged by the harness whose premise (a band on the single head's top-slot share) is refuted while
    its counted criterion passes (issue 38)."""
    from harness.record import decision as D
    from harness.record import verdict as V

    gain = {"name": "gain", "prediction": "p", "kind": "superiority", "metric": LOSS, "arms": ["a", "b"],
            "threshold": "t", "rule": D.superiority(0.1, reason="r").as_dict(), "recorded": True,
            "measurements": [D.samples([2.0, 2.1, 1.9, 2.05])]}
    averages = {"name": "h1_averages", "prediction": "p", "kind": "band", "role": "premise", "counts": False,
                "arms": ["h = 1"], "metric": "top-slot share of the single head, per seed", "threshold": "≤ 0.5",
                "rule": D.band(None, 0.5, reason="r").as_dict(), "recorded": True,
                "measurements": [D.samples([0.8, 0.9, 0.85, 0.95], label="position")]}
    return V.apply_judgement({"id": "C5", "title": "heads", "statement": "s", "strength": "moderate",
                              "metrics": {}, "figures": [], "duration_s": 1.0, "criteria": [gain, averages]})


def test_a_claim_not_testable_here_says_which_premise_and_its_effect():
    c5 = _not_testable_claim()
    assert c5["verdict"] == "inconclusive" and c5["not_testable"].startswith("premise h1_averages refuted")
    effect = F.deciding_effect(c5)
    assert effect == ("not testable here: premise h1_averages refuted: top-slot share of the single head = 0.875 "
                      "[0.8, 0.95] on position (band ≤ 0.5)"), effect
    assert F.findings_rows(results(C5=c5))[0]["verdict"] == "inconclusive (firmness not estimated)"


def test_a_kernel_trials_failing_properties_come_first_with_their_counterexample():
    """Issue 39: the trial's summary names what the kernel breaks (head layout before masks, since a layout bug
    breaks masks too), each with its smallest counterexample (else its detail); passing criteria, criteria without
    a property and runs without a kernel name nothing."""
    def crit(name, outcome, prop="", example="", detail="d"):
        return {"name": name, "outcome": outcome, "detail": detail, **({"property": prop} if prop else {}),
                **({"counterexample": example} if example else {})}
    res = {"attention": {"name": "k"}, "claims": {
        "R1": {"criteria": [crit("kernel_exact", "refuted", "masks (causal)", "float32: differs at B=1, causal"),
                            crit("kernel_scale_exponent", "passed", "scale")]},
        "M0": {"criteria": [crit("kernel_heads_independent", "refuted", "head layout", detail="heads mixed"),
                            crit("model_check", "refuted")]}}}
    lines = F.failing_properties(res)
    assert [line.split()[0] for line in lines] == ["head", "masks"]
    assert lines[0].endswith("M0 kernel_heads_independent: heads mixed")
    assert lines[1].endswith("R1 kernel_exact: float32: differs at B=1, causal")
    assert F.failing_properties({**res, "attention": None}) == []


def test_a_question_answered_per_case_names_each_answer_in_its_verdict_cell():
    answers = [{"case": "l2", "answer": "answered no", "firmness": 0.78, "criteria": ["scale_earns_place_l2"]},
               {"case": "rmsnorm", "answer": "answered yes", "firmness": None, "criteria": ["scale_earns_place_rmsnorm"]}]
    q1 = claim("Q1", "answered no", kind="question", firmness=0.78, answers=answers,
               criteria=[crit("superiority", passed=False, refuted=True, firmness=0.78, outcome="refuted")])
    assert F.findings_rows(results(Q1=q1))[0]["verdict"] == (
        "answered no (firmness 0.78): answered no for l2 (firmness 0.78); answered yes for rmsnorm (firmness not "
        "estimated)")
