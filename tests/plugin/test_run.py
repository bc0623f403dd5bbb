"""The plugin end to end on the fake claim set: outcomes, results.json, report, gate, xdist merge, Ctrl-C.

Three runs are shared by the tests of this module (they are the slow part): a serial run that also
writes a baseline, the same run under ``-n 2``, and a gated run against that baseline in which F1's
metric drops beyond its tolerance, F2's verdict worsens, and F3 and F4 improve.
"""
import concurrent.futures as cf
import json
import re

import pytest

from harness.report import html as html_report
from harness.record import results as R

from tests.conftest import copy_fake_claims, run_pytest

VERDICTS = {"F1": "supported", "F2": "inconclusive", "F3": "refuted", "F4": "error", "F5": "supported",
            "F6": "supported", "Q9": "answered yes"}
GATE_ENV = {"FAKE_F1_SCORE": "0.84", "FAKE_F2_MODE": "refuted", "FAKE_F3_MODE": "fixed", "FAKE_F4_CRASH": "0"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("fake_suite")
    copy_fake_claims(root)
    common = ["--device", "cpu", "-p", "no:randomly"]
    serial_args = [*common, "--report-dir", "serial", "--update-baseline", "--baseline", "baseline.json"]
    xdist_args = [*common, "--report-dir", "xdist", "-n", "2"]
    with cf.ThreadPoolExecutor(2) as pool:  # the serial and the xdist run are independent: side by side
        serial_f = pool.submit(run_pytest, root, *serial_args)
        xdist_f = pool.submit(run_pytest, root, *xdist_args)
        serial, xdist = serial_f.result(), xdist_f.result()
    gate = run_pytest(root, *common, "--report-dir", "gate", "--baseline", "baseline.json", env=GATE_ENV)
    load = lambda d: json.loads((root / d / "results.json").read_text())  # noqa: E731
    return {"root": root, "serial": serial, "xdist": xdist, "gate": gate,
            "serial_results": load("serial"), "xdist_results": load("xdist"), "gate_results": load("gate")}


def test_claim_test_fails_only_when_refuted_or_errored(runs):
    """Issue 56: one rule with the model trial's exit status: an inconclusive claim (F2) is a finding and passes;
    a refuted one (F3) and a crash (F4) fail."""
    out = runs["serial"].stdout
    assert runs["serial"].returncode == 1, out
    assert re.search(r"2 failed, 7 passed, 1 skipped", out), out
    for nodeid in ("test_f3_refuted.py::test_f3_refuted", "test_f4_crash.py::test_f4_crash"):
        assert f"FAILED {nodeid}" in out
    assert "FAILED test_f2_borderline.py::test_f2_borderline" not in out
    assert "F3 is refuted, not supported" in out and "value_high: REFUTED" in out
    assert "RuntimeError: fake crash in the measurement" in out


def test_results_json_follows_the_contract(runs):
    res = runs["serial_results"]
    R.validate(res)
    assert res["schema_version"] == R.SCHEMA_VERSION == 2
    assert set(R.RUN_KEYS) <= set(res["run"]) and res["run"]["complete"] is True
    assert res["run"]["seeds"] == [0, 1, 2] and res["run"]["profile"] == "smoke"
    assert res["run"]["inject_fault"] is None and res["run"]["master_seed"] == 0
    assert {cid: c["verdict"] for cid, c in res["claims"].items()} == VERDICTS
    assert list(res["claims"]) == ["Q9", "F1", "F2", "F3", "F4", "F5", "F6"]  # the note's order, then others
    f1 = res["claims"]["F1"]
    for key in (*R.CLAIM_KEYS, "kind", "notes", "tables", "headline", "limitation"):
        assert key in f1
    assert f1["metrics"] == {"score": pytest.approx(0.901)} and f1["headline"] == "score"
    c = f1["criteria"][0]
    assert c["outcome"] == "passed" and c["kind"] == "band" and c["level"] == 0.05 and c["p_value"] < 1e-3
    assert c["ci"] == pytest.approx([0.901 - 0.001686, 0.901 + 0.001686], abs=2e-5)  # 90% t interval, 2 df
    assert c["firmness"] > 0.99 and c["seeds_for_firm"] is None and len(c["fingerprint"]) == 12
    assert f1["firmness"] > 0.99 and f1["seeds_for_firm"] is None
    assert f1["figures"] == ["figures/F1/score_by_seed.png"]
    assert (runs["root"] / "serial" / f1["figures"][0]).is_file()
    assert f1["tables"]["per_seed"][2] == {"seed": 2, "score": pytest.approx(0.902)}
    assert res["claims"]["F4"]["error"].startswith("RuntimeError: fake crash")
    assert res["claims"]["F2"]["kind"] == "recommendation"
    f6 = res["claims"]["F6"]  # one claim over three tests, merged in collection order
    assert [c["name"] for c in f6["criteria"]] == ["a", "b", "b [test_f6_part_b[2]]"]
    assert len(f6["parts"]) == 3 and set(f6["metrics"]) == {"a_value", "b_value/1", "b_value/2"}
    assert res["run"]["skipped"][0]["nodeid"] == "test_f6_parts.py::test_f7_skipped"


def test_progress_is_live_without_dash_s_and_summary_has_a_line_per_claim(runs):
    out = runs["serial"].stdout
    assert "[F1] profile smoke seed 0: step 10/10 loss 0.01" in out
    for cid, verdict in VERDICTS.items():
        assert re.search(rf"^{cid}\s+{verdict}\s", out, re.M), cid
    assert re.search(r"^F1\s+supported\s+firm 1\.00\s+score = 0\.901\s+\d+\.\d s\s+not gated", out, re.M)
    assert "baseline written:" in out


def test_report_is_written_escaped_and_rebuildable(runs, capsys):
    out_dir = runs["root"] / "serial"
    html = (out_dir / "index.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(" in html
    assert "data:image/png;base64," in html
    assert html_report.main([str(out_dir / "results.json"), "-o", str(out_dir / "rebuilt.html")]) == 0
    assert (out_dir / "rebuilt.html").read_text() == html  # same page from the same results, nothing rerun


def test_xdist_merge_equals_serial(runs):
    assert runs["xdist"].returncode == 1, runs["xdist"].stdout
    strip = lambda res: {cid: {k: v for k, v in c.items() if k != "duration_s"}  # noqa: E731
                         for cid, c in res["claims"].items()}
    serial, xdist = strip(runs["serial_results"]), strip(runs["xdist_results"])
    assert list(xdist) == list(serial)
    for cid in serial:
        assert xdist[cid] == serial[cid], cid
    assert runs["xdist_results"]["run"]["skipped"] == runs["serial_results"]["run"]["skipped"]
    fp = runs["serial_results"]["run"]["fp_path"]     # issue 36: the path is recorded (here no claim used torch)
    assert fp["machine"] and fp["how"].startswith(("pinned by the suite", "set by the user", "native"))
    assert (runs["root"] / "xdist" / "figures" / "F1" / "score_by_seed.png").is_file()
    assert re.search(r"\[gw\d\] \[F1\] profile smoke seed 0", runs["xdist"].stdout + runs["xdist"].stderr)


def test_gate_fails_regressions_only(runs):
    gate, res = runs["gate"], runs["gate_results"]
    out = gate.stdout
    assert gate.returncode == 1, out
    assert re.search(r"2 failed, 7 passed, 1 skipped", out), out
    # F1: still supported, but its per-seed scores dropped far beyond their seed noise (issue 36)
    assert "FAILED test_f1_supported.py::test_f1_supported" in out
    assert "criterion score_high: a significant move the bad way, δ 0.901 -> 0.841" in out
    assert res["claims"]["F1"]["verdict"] == "supported" and res["claims"]["F1"]["regression"]["regressed"]
    assert res["claims"]["F1"]["regression"]["metrics"][0]["status"] == "moved"   # its gated metric: shown
    # F2: inconclusive -> refuted
    assert "FAILED test_f2_borderline.py::test_f2_borderline" in out
    assert res["claims"]["F2"]["regression"]["reasons"] == ["verdict inconclusive -> refuted",
                                                           "criterion gap_small: newly refuted (inconclusive -> "
                                                           "refuted)"]
    # F3 refuted -> supported and F4 error -> supported are improvements: they pass
    for cid in ("F3", "F4"):
        assert res["claims"][cid]["regression"]["status"] == "improved"
        assert f"FAILED test_{cid.lower()}" not in out
    assert res["claims"]["F5"]["regression"]["status"] == "ok"
    assert res["run"]["baseline"].endswith("baseline.json") and res["run"]["baseline_profile"] == "smoke"
    assert re.search(r"^F1\s+supported\s+firm 1\.00\s+score = 0\.841\s+\d+\.\d s\s+REGRESSED", out, re.M)
    assert "REGRESSED" in (runs["root"] / "gate" / "index.html").read_text()


def test_report_written_on_ctrl_c_and_marked_incomplete(fake_suite, pytester, monkeypatch):
    fake_suite(only=["test_f3_refuted.py", "test_f5_interrupt.py", "test_f6_parts.py"])
    monkeypatch.setenv("FAKE_INTERRUPT", "1")
    result = pytester.runpytest_inprocess("--device", "cpu", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out_dir = pytester.path / "reports"
    res = R.load(out_dir / "results.json")
    assert res["run"]["complete"] is False
    assert res["claims"]["F3"]["verdict"] == "refuted"  # finished before the interrupt: kept
    f5 = res["claims"]["F5"]  # cut short: its partial evidence is kept, marked
    assert f5["interrupted"] is True and f5["verdict"] == "error" and f5["metrics"] == {"partial": 1.5}
    assert "F6" not in res["claims"]
    assert "INCOMPLETE RUN" in (out_dir / "index.html").read_text()
    assert sorted(p.name for p in out_dir.iterdir()) == ["index.html", "results.json"]  # no temp files left
    assert "run INCOMPLETE" in result.stdout.str()


def test_sigterm_takes_the_ctrl_c_path(fake_suite, pytester):
    """A run killed with SIGTERM (`timeout`, a cancelled CI job) still writes its results, marked incomplete."""
    fake_suite(only=["test_f3_refuted.py", "test_f5_interrupt.py", "test_f6_parts.py"])
    proc = run_pytest(pytester.path, "--device", "cpu", env={"FAKE_INTERRUPT": "term"}, timeout=120)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, proc.stdout + proc.stderr
    res = R.load(pytester.path / "reports" / "results.json")
    assert res["run"]["complete"] is False
    assert res["claims"]["F3"]["verdict"] == "refuted"
    assert res["claims"]["F5"]["interrupted"] is True and res["claims"]["F5"]["metrics"] == {"partial": 1.5}
    assert "F6" not in res["claims"]


def test_update_baseline_on_an_interrupted_run_leaves_the_baseline_alone(fake_suite, pytester, monkeypatch):
    """Issue 20: an interrupted run is not a baseline; the committed one stays byte for byte."""
    fake_suite(only=["test_f3_refuted.py", "test_f5_interrupt.py"])
    base = pytester.path / "baseline.json"
    base.write_text("the committed baseline\n")
    monkeypatch.setenv("FAKE_INTERRUPT", "1")
    result = pytester.runpytest_inprocess("--device", "cpu", "--update-baseline", "--baseline", "baseline.json",
                                          no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert base.read_text() == "the committed baseline\n"
    assert "baseline NOT updated: the run is incomplete" in result.stdout.str()


def test_update_baseline_on_a_run_stopped_by_x_leaves_the_baseline_alone(fake_suite, pytester):
    """Issue 20: -x stops the session at the first refuted claim; the run is incomplete, so it is no baseline."""
    fake_suite(only=["test_f3_refuted.py", "test_f1_supported.py"])
    base = pytester.path / "baseline.json"
    base.write_text("the committed baseline\n")
    result = pytester.runpytest_inprocess("--device", "cpu", "--update-baseline", "--baseline", "baseline.json",
                                          "-x", "-p", "no:randomly", "test_f3_refuted.py", "test_f1_supported.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert base.read_text() == "the committed baseline\n"
    assert "baseline NOT updated: the run is incomplete" in result.stdout.str()
    res = R.load(pytester.path / "reports" / "results.json")
    assert res["run"]["complete"] is False and res["run"]["stopped"] == "stopping after 1 failures"
    assert list(res["claims"]) == ["F3"]


def test_parts_with_a_repeated_criterion_name_are_gated_against_their_own_copy(fake_suite, pytester, monkeypatch):
    """Issue 20: parts b[1] and b[2] both declare criterion ``b``; the merge stores b[2]'s as ``b [test_f6_part_b[2]]``.
    With b[2] refuted in the baseline, a run where b[2] is still refuted keeps every part green (compared with b[1]'s
    copy it would regress), and a run where b[1] turns refuted fails b[1] only."""
    fake_suite(only=["test_f6_parts.py"])
    monkeypatch.setenv("FAKE_F6_REFUTE", "2")
    made = pytester.runpytest_inprocess("--device", "cpu", "-p", "no:randomly", "--update-baseline",
                                        "--baseline", "baseline.json")
    made.assert_outcomes(passed=2, failed=1, skipped=1)
    criteria = R.load(pytester.path / "baseline.json")["claims"]["F6"]["criteria"]
    assert {c["name"]: c["outcome"] for c in criteria} == {"a": "passed", "b": "passed",
                                                           "b [test_f6_part_b[2]]": "refuted"}
    same = pytester.runpytest_inprocess("--device", "cpu", "-p", "no:randomly", "--baseline", "baseline.json",
                                        "--report-dir", "same")
    same.assert_outcomes(passed=3, skipped=1)
    monkeypatch.setenv("FAKE_F6_REFUTE", "1")
    moved = pytester.runpytest_inprocess("--device", "cpu", "-p", "no:randomly", "--baseline", "baseline.json",
                                         "--report-dir", "moved")
    moved.assert_outcomes(passed=2, failed=1, skipped=1)
    assert "FAILED test_f6_parts.py::test_f6_part_b[1]" in moved.stdout.str()
    assert "criterion b: exact check passed -> refuted" in moved.stdout.str()


def test_the_terminal_summary_says_why_a_claim_is_not_testable_here():
    """Issue 38: under the claim's summary line, the premise that did not pass; nothing for a testable claim or a
    crash."""
    from harness.session.summary import _not_testable_line

    why = "premise h1_averages refuted: measured 0.9, interval [0.85, 0.95], against ≤ 0.5"
    assert _not_testable_line({"verdict": "inconclusive", "not_testable": why}, 3) == f"     not testable here: {why}"
    assert _not_testable_line({"verdict": "supported", "not_testable": ""}, 3) == ""
    assert _not_testable_line({"verdict": "inconclusive"}, 3) == ""
    assert _not_testable_line({"verdict": "error", "not_testable": why}, 3) == ""
    # issue 47: a claim that counts nothing says so, with its module's reason
    assert _not_testable_line({"verdict": "not tested", "not_tested": "its rows are identities"}, 3) == \
        "     not tested here: its rows are identities"


def test_each_claim_is_judged_once_where_its_parts_are_merged(fake_suite, pytester, monkeypatch):
    """Issue 46: a part travels unjudged; where its report is logged its claim, merged from the parts so far, is
    judged once, and the test outcome, the gate and results.json read that judgement: F3 (one test) is judged
    once, F6 (three tests) once per part as it arrives, and results.json judges nothing again."""
    from harness.record import verdict

    fake_suite(only=["test_f3_refuted.py", "test_f6_parts.py"])
    judged = []
    judge = verdict.judge_record
    monkeypatch.setattr(verdict, "judge_record", lambda criteria, **kw: judged.append(
        [c["name"] for c in criteria]) or judge(criteria, **kw))
    monkeypatch.setenv("FAKE_F6_REFUTE", "1")
    result = pytester.runpytest_inprocess("--device", "cpu", "-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=2, skipped=1)
    assert "FAILED test_f6_parts.py::test_f6_part_b[1]" in result.stdout.str()
    assert judged == [["value_high"], ["a"], ["a", "b"], ["a", "b", "b [test_f6_part_b[2]]"]]
    res = R.load(pytester.path / "reports" / "results.json")
    assert {cid: c["verdict"] for cid, c in res["claims"].items()} == {"F3": "refuted", "F6": "refuted"}
