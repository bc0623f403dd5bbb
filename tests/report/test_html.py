"""The HTML report (harness/report/html.py): self-contained, escaped, with the optional sections."""
import base64
import json
import re

import pytest

from harness.report import html as report
from harness.record import results as R

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def results(**claims):
    run = {"profile": "smoke", "device": "cpu", "seeds": [0, 1, 2], "torch_version": "2.13.0+cpu",
           "git_commit": "abc", "started_at": "2026-01-01T00:00:00+00:00", "duration_s": 12.5, "complete": True}
    return {"schema_version": R.SCHEMA_VERSION, "run": run, "claims": claims}


def claim(cid, verdict="supported", statement="a statement", **extra):
    c = {"id": cid, "title": f"title of {cid}", "statement": statement, "strength": "strong", "verdict": verdict,
         "criteria": [{"name": "crit", "prediction": "pred", "threshold": "[0.95, 1.05]", "measured": 1.0,
                       "passed": verdict == "supported", "p_value": 0.01, "ci": [0.97, 1.02], "kind": "band",
                       "margin": None, "firmness": 0.95, "seeds_for_firm": None, "fingerprint": "f"}],
         "metrics": {"slope": 1.0}, "figures": [], "duration_s": 3.2, "headline": "slope", "firmness": 0.95,
         "seeds_for_firm": None}
    c.update(extra)
    return c


def test_statement_with_script_renders_escaped(tmp_path):
    evil = '<script>alert("x")</script>'
    html = report.render_html(results(C4=claim("C4", statement=evil, notes=[evil], limitation=evil,
                                                tables={"t": [{"col<script>": evil}]})), tmp_path)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html


def test_page_is_self_contained(tmp_path):
    (tmp_path / "figures" / "C4").mkdir(parents=True)
    (tmp_path / "figures" / "C4" / "f.png").write_bytes(PNG)
    html = report.render_html(results(C4=claim("C4", figures=["figures/C4/f.png"])), tmp_path)
    assert "data:image/png;base64," + base64.b64encode(PNG).decode() in html
    assert "<style>" in html
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing fetched from the network
    assert '<link' not in html


def test_figures_outside_the_report_dir_are_not_embedded(tmp_path):
    secret = tmp_path.parent / "secret.png"
    secret.write_bytes(PNG)
    html = report.render_html(results(C4=claim("C4", figures=["../secret.png", "figures/C4/gone.png"])), tmp_path)
    assert "base64," not in html
    assert "figure missing: ../secret.png" in html and "figure missing: figures/C4/gone.png" in html


def test_summary_has_badges_headline_and_time(tmp_path):
    html = report.render_html(results(C3=claim("C3", "refuted"), C4=claim("C4")), tmp_path)
    assert '<span class="badge bad">refuted</span>' in html and '<span class="badge ok">supported</span>' in html
    assert "slope = 1" in html and "3.2 s" in html
    assert "[0.97, 1.02]" in html and "[0.95, 1.05]" in html
    assert "Not run in this session:" in html and "<b>C1</b>" in html


def test_bearing_on_the_record_derives_sota_050(tmp_path):
    html = report.render_html(results(C3=claim("C3"), C4=claim("C4"), R1=claim("R1", "refuted")), tmp_path)
    row = re.search(r"SOTA-050.*?</tr>", html, re.S).group(0)
    assert "scale attention weights by 1/sqrt(head_dim)" in row and "<b>not confirmed</b>" in row
    html = report.render_html(results(C4=claim("C4")), tmp_path)
    row = re.search(r"SOTA-050.*?</tr>", html, re.S).group(0)
    assert "not run" in row and "<b>open</b>" in row


def test_incomplete_and_fault_banners(tmp_path):
    r = results(C4=claim("C4"))
    r["run"].update(complete=False, inject_fault="no_scale")
    html = report.render_html(r, tmp_path)
    assert "INCOMPLETE RUN" in html and "FAULT INJECTED" in html and "no_scale" in html


def test_benchmark_section_from_pytest_benchmark_json(tmp_path):
    benches = [{"name": f"test_r3[{v}-{n}]", "group": v, "params": {"n": n}, "extra_info": {},
                "stats": {"mean": n * (80e-6 if v == "additive" else 1e-6), "stddev": 1e-7, "median": 1e-6,
                          "min": 1e-6, "rounds": 5}}
               for v in ("dot", "additive") for n in (64, 128, 256)]
    (tmp_path / "benchmark_r3.json").write_text(json.dumps({"benchmarks": benches, "datetime": "now"}))
    html = report.render_html(results(R3=claim("R3")), tmp_path)
    assert "R3 benchmarks" in html and "test_r3[additive-256]" in html
    assert html.count("data:image/png;base64,") == 1  # the time-against-n plot


def test_sensitivity_matrix(tmp_path):
    """Issue 20: every cell of the full matrix, with the catch counted only when refuted."""
    (tmp_path / "sensitivity.json").write_text(json.dumps({
        "claims": ["C3", "C4", "C5", "R1"], "no_fault": {"C3": "supported", "C4": "supported", "C5": "supported",
                                                         "R1": "supported"},
        "faults": {"no_scale": {"expected": ["R1", "C4"], "caught": ["R1"], "weak": ["C4"],
                                "verdicts": {"R1": "refuted", "C4": "inconclusive", "C3": "refuted", "C5": "supported"},
                                "cells": {"R1": "caught", "C4": "weak", "C3": "moved", "C5": "kept"}},
                   "single_head": {"expected": ["C5"], "caught": [], "weak": [], "description": "<h is 1>",
                                   "verdicts": {"C5": "supported", "C3": "inconclusive"},
                                   "cells": {"C5": "missed", "C3": "side effect"},
                                   "side_effects": {"C3": "a reason"}}},
        "sensitivity": 0.5, "specificity": 0.5, "counts": {"caught": 1, "expected": 3, "kept": 1, "off_target": 2}}))
    html = report.render_html(results(C4=claim("C4")), tmp_path)
    assert "Fault-injection sensitivity" in html and "sensitivity = 0.3333" in html
    assert "the file states 0.5" in html and "specificity = 0.5" in html
    for mark in ("MISSED", "WEAK", "MOVED", "side effect", "caught"):
        assert mark in html
    assert "&lt;h is 1&gt;" in html and "a reason" in html


def test_an_old_sensitivity_file_is_named_not_fatal(tmp_path):
    (tmp_path / "sensitivity.json").write_text(json.dumps({"faults": {"no_scale": {"expected": ["R1"],
                                                                                     "caught": ["R1"]}}}))
    html = report.render_html(results(C4=claim("C4")), tmp_path)
    assert "rerun `python -m harness.suite.sensitivity --jobs 2`" in html


def test_cli_rebuilds_the_page_and_reports_bad_files(tmp_path, capsys):
    R.write_json_atomic(tmp_path / "results.json", results(C4=claim("C4", statement="rebuilt statement")))
    assert report.main([str(tmp_path / "results.json")]) == 0
    assert "rebuilt statement" in (tmp_path / "index.html").read_text()
    (tmp_path / "broken.json").write_text("{nope")
    assert report.main([str(tmp_path / "broken.json")]) == 4
    assert "is not valid JSON" in capsys.readouterr().err
    assert report.main([str(tmp_path / "missing.json")]) == 4
    assert "not found" in capsys.readouterr().err


@pytest.mark.parametrize("value,text", [(None, "—"), (0.123456, "0.1235"), ([1.0, 2.5], "[1, 2.5]"), (True, "yes")])
def test_number_formatting(value, text):
    assert report.fmt(value) == text


def test_metric_names_sort_numbers_as_numbers_and_dicts_read_plainly():
    names = ["ratio/256", "ratio/64", "ratio/128", "acc"]
    assert sorted(names, key=report.natural_key) == ["acc", "ratio/64", "ratio/128", "ratio/256"]
    assert report.fmt({"64": 17.6821, "128": 29.7}) == "64: 17.68, 128: 29.7"


def test_verdicts_show_their_firmness_and_the_rule_that_decided_them(tmp_path):
    """Issue 16: a fragile verdict carries a visible mark, and the page says how verdicts are decided."""
    from harness.record import verdict as V

    html = report.render_html(results(C5=claim("C5", firmness=0.31, seeds_for_firm=25, seeds=[0, 1, 2]),
                                      C4=claim("C4")), tmp_path)
    assert "fragile at 3 seeds: about 25 needed (firmness 0.31)" in html
    assert 'class="fragile"' in html and "firmness 0.95" in html
    assert "How verdicts are decided" in html and "Holm" in html
    for paragraph in V.HOW_VERDICTS_ARE_DECIDED:
        assert report.jinja2.utils.markupsafe.escape(paragraph) in html


def test_times_against_budget(tmp_path, capsys):
    """Issue 18: measured wall time beside the profile's expected time, in the page and on the command line."""
    R.write_json_atomic(tmp_path / "results.json",
                        results(C4=claim("C4", budget_s=2.0), C5=claim("C5", budget_s=10.0), C3=claim("C3")))
    assert report.main([str(tmp_path / "results.json"), "--times"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^C4\s+3\.2\s+2\s+OVER$", out, re.M) and re.search(r"^C5\s+3\.2\s+10\s+ok$", out, re.M)
    assert re.search(r"^C3\s+3\.2\s+—\s+no budget stated$", out, re.M)
    html = report.render_html(R.load(tmp_path / "results.json"), tmp_path)
    assert "of 2 s" in html and "of 10 s" in html


def section(html, anchor):
    """The HTML of one <section id=anchor>."""
    return re.search(rf'<section[^>]*id="{anchor}".*?</section>', html, re.S).group(0)


def test_a_claim_section_reads_verdict_first_and_keeps_evidence_collapsed(tmp_path):
    """Issue 19: verdict, firmness and deciding criteria; then criteria, figures, notes, limitation; then the
    per-seed tables and metrics in collapsed <details> (in the page, not open)."""
    (tmp_path / "f.png").write_bytes(PNG)
    c4 = claim("C4", "refuted", figures=["f.png"], notes=["a note"], limitation="the limitation",
               tables={"per_seed": [{"seed": s, "acc": 0.5} for s in range(7)]})
    c4["criteria"] = [{**c4["criteria"][0], "name": "held", "passed": True, "firmness": 0.99},
                      {**c4["criteria"][0], "name": "broke", "passed": False, "refuted": True, "firmness": 0.9}]
    html = section(report.render_html(results(C4=c4), tmp_path), "claim-C4")
    order = [html.index(s) for s in ('class="verdict bad"', "Refuted by:", "<b>broke</b>", 'class="criteria"', "<img",
                                     "a note", "the limitation", "<details", "Table: per_seed (7 rows × 2 columns)")]
    assert order == sorted(order)
    assert "<b>held</b>" not in html.split('class="criteria"')[0]  # only the deciding one opens the section
    assert html.count("<details") == 2 and "<details open" not in html  # metrics and the table, both collapsed
    criteria_table = html[html.index('class="criteria"'):html.index("</table>", html.index('class="criteria"'))]
    assert "<details" not in criteria_table and 'href="#summary"' in html


def test_contents_lists_every_claim_with_its_badge(tmp_path):
    html = report.render_html(results(C3=claim("C3", "refuted"), C4=claim("C4")), tmp_path)
    nav = re.search(r'<nav class="contents".*?</nav>', html, re.S).group(0)
    assert '<a href="#claim-C3"><span class="cid">C3</span> <span class="badge bad">refuted</span></a>' in nav
    assert 'href="#claim-C4"' in nav and 'href="#summary"' in nav and 'href="#run"' in nav
    assert 'id="claim-C3"' in html and 'id="summary"' in html
    assert "against-baseline" not in html  # no baseline, no comparison section


def gated(now, base, not_run=()):
    """Results whose claims carry the gate's record against ``base``, as a run with --baseline writes them."""
    from harness.record import baseline as B

    res = results(**{cid: {**c, "regression": r} for (cid, c), r in zip(now.items(),
                                                                         B.compare_results(now, base).values())})
    res["run"].update(baseline="reports/baseline.json", baseline_profile="smoke", baseline_not_run=list(not_run))
    return res


def test_against_the_baseline_lists_what_moved_and_says_when_nothing_did(tmp_path):
    base = {"C4": claim("C4"), "C5": claim("C5")}
    html = section(report.render_html(gated(base, base), tmp_path), "against-baseline")
    assert "Nothing moved" in html and "<table" not in html
    now = {"C4": claim("C4", "refuted"), "C5": claim("C5")}
    now["C4"]["criteria"][0].update(outcome="refuted", refuted=True, fingerprint="f2")
    now["C5"]["criteria"][0].update(outcome="passed")
    page = report.render_html(gated(now, {cid: {**c, "criteria": [{**c["criteria"][0], "outcome": "passed"}]}
                                          for cid, c in base.items()}, not_run=["R1"]), tmp_path)
    html = section(page, "against-baseline")
    assert "Nothing moved" not in html
    assert re.search(r"C4</a></td><td>verdict</td><td[^>]*>verdict</td>\s*<td>supported</td><td>refuted</td>", html)
    assert "passed; definition f</td><td>refuted; definition f2</td>" in html
    assert "In the baseline, not run: R1." in html and "C5" not in html
    assert "2 moved, 2 regressed" in page  # the banner at the top links here


def test_print_stylesheet_is_deliberate_about_collapsed_blocks(tmp_path):
    html = report.render_html(results(C4=claim("C4")), tmp_path)
    css = html[html.index("@media print"):]
    assert "nav.contents" in css and "details.evidence:not([open])" in css and "not printed" in css
    assert "break-inside:avoid" in css


def test_compare_cli_prints_and_writes_the_same_comparison(tmp_path, capsys):
    base = results(C4=claim("C4"), R1=claim("R1"))
    flipped = claim("C4", "refuted")
    flipped["criteria"][0].update(outcome="refuted", refuted=True)
    now = results(C4=flipped, Q1=claim("Q1"))
    R.write_json_atomic(tmp_path / "old.json", base)
    R.write_json_atomic(tmp_path / "new.json", now)
    assert report.main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json"),
                        "-o", str(tmp_path / "cmp.html")]) == 1  # something regressed: a new refutation
    out = capsys.readouterr().out
    assert re.search(r"^C4\s+verdict\s+verdict\s+supported\s+refuted\s+WORSE$", out, re.M)
    assert re.search(r"^Q1\s+claim\s+Q1\s+not in the baseline\s+supported\s+new$", out, re.M)
    assert "3 moved, 2 regressed\nin the baseline, not run: R1" in out
    # a verdict that flips without its evidence moving is unstable: shown, exit 0
    R.write_json_atomic(tmp_path / "new.json", results(C4=claim("C4", "refuted"), R1=claim("R1")))
    assert report.main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 0
    assert re.search(r"^C4\s+verdict\s+verdict\s+supported\s+refuted\s+unstable$", capsys.readouterr().out,
                     re.M)
    R.write_json_atomic(tmp_path / "new.json", now)
    page = (tmp_path / "cmp.html").read_text()
    assert "<td>supported</td><td>refuted</td>" in page and 'href="#claim-' not in page
    assert report.main(["compare", str(tmp_path / "old.json"), str(tmp_path / "old.json")]) == 0
    assert "nothing moved" in capsys.readouterr().out
    assert report.main(["compare", str(tmp_path / "old.json"), str(tmp_path / "missing.json")]) == 4
    assert "not found" in capsys.readouterr().err


def test_each_claim_shows_a_reviewers_objections_after_its_verdict(tmp_path):
    """DEVELOPERS.md: the report says which objections a verdict survived; an old results.json without them gets
    the rows rebuilt (firmness from the record, the module's answers 'not addressed')."""
    rows = [{"key": "tuned_lr", "question": "Was each trained arm at its own tuned learning rate?",
             "status": "answered", "how": "tuned on <disjoint> seeds"},
            {"key": "second_task", "question": "Does it hold on a second task?", "status": "open",
             "how": "one task"}]
    html = section(report.render_html(results(C3=claim("C3", objections=rows), C4=claim("C4")), tmp_path),
                   "claim-C3")
    table = html[html.index('class="objections"'):]
    assert html.index('class="verdict ok"') < html.index('class="objections"') < html.index('class="criteria"')
    assert 'class="obj-answered">answered' in table and 'class="obj-open">open' in table
    assert "tuned on &lt;disjoint&gt; seeds" in table
    old = section(report.render_html(results(C4=claim("C4")), tmp_path), "claim-C4")
    assert "Would fresh seeds give the same outcome?" in old and "not addressed by the module" in old


def test_summary_says_the_deciding_effect_in_words_and_the_section_keeps_the_headline_metric(tmp_path):
    """Issues 28, 63: the summary's column is the claim's sentence in the paper's words, not a metric name."""
    c3 = claim("C3", "refuted", metrics={"acc_gap": 0.4609}, headline="acc_gap",
               criteria=[{"name": "beats", "kind": "superiority", "metric": "held-out loss (nats)",
                          "arms": ["unscaled", "additive"], "measured": 1.69, "ci": [1.2, 2.1], "margin": 0.1,
                          "deciding_part": "d_k=256", "passed": False, "refuted": True, "outcome": "refuted",
                          "firmness": 0.9, "threshold": "mean(a - b) > 0.1", "better": "lower"}])
    html = report.render_html(results(C3=c3), tmp_path)
    summary = section(html, "summary")
    assert ("Refuted in this run: no scaling is 1.7 nats [1.2, 2.1] worse than additive attention in held-out loss "
            "at d_k 256 (needed: more than 0.1 nats, the margin).") in summary
    assert "acc_gap" not in summary and "what was found" in summary
    assert "acc_gap = 0.4609" in section(html, "claim-C3")


def test_questions_answers_are_neutral_badges(tmp_path):
    html = report.render_html(results(Q2=claim("Q2", "answered no", kind="question"),
                                      Q1=claim("Q1", "answered yes", kind="question"),
                                      Q3=claim("Q3", "inconclusive at this scale", kind="question")), tmp_path)
    assert '<span class="badge answer">answered no</span>' in html
    assert '<span class="badge answer">answered yes</span>' in html
    assert '<span class="badge meh">inconclusive at this scale</span>' in html
    assert "badge bad" not in html and "badge ok" not in html


def test_no_statement_repeats_its_own_id(tmp_path):
    html = report.render_html(results(R3=claim("R3", statement="R3 — Prefer matmul", title="R3: Prefer matmul")),
                              tmp_path)
    assert '<td class="text">Prefer matmul</td>' in section(html, "summary")
    assert "<blockquote>Prefer matmul</blockquote>" in html and "<h2>R3 — Prefer matmul <span" in html
    assert "R3 — R3" not in html and "R3: Prefer" not in html


def test_a_claim_not_testable_here_shows_its_premise_first(tmp_path):
    """Issue 38: a premise that did not pass makes the claim inconclusive; the page says so in the verdict box, the
    summary row says it in words, and the criteria table labels each criterion's role."""
    from tests.report.test_findings import _not_testable_claim

    c5 = _not_testable_claim()
    html = report.render_html(results(C5=c5), tmp_path)
    box = section(html, "claim-C5")
    assert "<b>Not testable here:</b> premise h1_averages refuted" in box
    assert "Not testable here: the test needs a premise that did not pass:" in box
    assert "(premise: checked first, not counted)" in box
    assert "Not testable here: a premise did not hold:" in html.split('id="claim-C5"')[0]   # the summary row
    # a record written before roles: the label is read from counts
    old = claim("C4", criteria=[{**claim("C4")["criteria"][0], "counts": False}])
    assert "(reported, not counted)" in report.render_html(results(C4=old), tmp_path)


def test_a_claim_that_counts_nothing_reads_not_tested_here_with_its_reason(tmp_path):
    """Issue 47, mechanism 5: nothing counted, nothing claimed: its own badge (never inconclusive's), the reason in
    the verdict box and the summary row."""
    why = "its rows are identities of the variance argument"
    reported = {**claim("R2")["criteria"][0], "role": "reported", "counts": False}
    r2 = claim("R2", "not tested", criteria=[reported], firmness=None, not_tested=why, nothing_counted=why)
    html = report.render_html(results(R2=r2), tmp_path)
    assert '<span class="badge untested">not tested</span>' in html and "badge meh" not in html
    assert f"<b>Not tested here:</b> {why}." in section(html, "claim-R2")
    assert "Not tested here: nothing is counted" in section(html, "summary")


def test_each_criterion_shows_the_notes_words_it_tests(tmp_path):
    """Issue 47, mechanism 1: the note's words, verbatim (curly quotes kept), above the criterion they belong to."""
    words = "for large d_k the dot products “grow large in magnitude”"
    c3 = claim("C3", criteria=[{**claim("C3")["criteria"][0], "quote": words}])
    box = section(report.render_html(results(C3=c3), tmp_path), "claim-C3")
    assert f'<q class="note">{words}</q>' in box
    assert box.index(words) < box.index("<td colspan=\"7\">pred")


def test_a_criterion_that_quotes_nothing_shows_why_in_its_place(tmp_path):
    """Issue 54: a criterion with no quote gives its reason (``unquoted``), shown where the note's words would be."""
    why = "an implementation check the note does not state: the note never mentions masks"
    m0 = claim("M0", criteria=[{**claim("M0")["criteria"][0], "unquoted": why}])
    box = section(report.render_html(results(M0=m0), tmp_path), "claim-M0")
    assert f'<span class="meta">no words of the note quoted:</span> {why}' in box and '<q class="note">' not in box
    assert box.index(why) < box.index("<td colspan=\"7\">pred")


def test_a_claim_read_at_init_beside_trained_weights_says_so_on_every_verdict_line(tmp_path):
    """Issue 55, item 5: ``at_init`` labels the badge in the contents, the summary and the section, and says what
    was read."""
    what = "C4's variance law read on the architecture at a random init, not on the weights of x8.pt"
    html = report.render_html(results(C4=claim("C4", at_init=what)), tmp_path)
    assert html.count('<span class="badge ok">supported at init</span>') == 3
    assert "<b>Verdict: supported at init</b>" in html and f"<b>At init:</b> {what.replace(chr(39), '&#39;')}." in html
    assert "supported at init" not in report.render_html(results(C4=claim("C4")), tmp_path)


def test_a_note_of_several_lines_keeps_its_lines(tmp_path):
    """Issue 55, item 8: Q3's per-layer table of a checkpoint read is a note of several lines; the page keeps them
    (it used to run them into one line)."""
    note = "the footnote per layer:\nlayer  ratio\n    0   1.03\n    1   0.98"
    box = section(report.render_html(results(Q3=claim("Q3", notes=[note, "one line"])), tmp_path), "claim-Q3")
    assert '<li>the footnote per layer:<pre class="lines">layer  ratio\n    0   1.03\n    1   0.98</pre></li>' in box
    assert "<li>one line</li>" in box


def test_a_pooled_claim_shows_its_replicates_as_a_strip(tmp_path):
    """Issue 64: one mark a replicate, coloured by its own verdict, beside r of K."""
    c4 = claim("C4", "refuted", replication={"K": 3, "r": 2, "wilson": [0.3, 0.9], "fragile": True,
                                             "pooled_differs_from_most": False, "replicates": [1, 2, 3],
                                             "outcomes": ["refuted", "inconclusive", "refuted"]})
    box = section(report.render_html(results(C4=c4), tmp_path), "claim-C4")
    assert "Repeated in 2 of 3 replicates [0.3, 0.9], fragile" in box
    assert '<span class="badge bad" title="replicate 1: refuted">1</span>' in box
    assert '<span class="badge meh" title="replicate 2: inconclusive">2</span>' in box
