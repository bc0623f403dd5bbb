"""Wall times as generated blocks (harness/report/times.py, issue 56): `python -m harness.report times`."""
import json

from harness.report import html as report
from harness.report import times as T
from tests.conftest import REPO
from tests.report.test_html import claim, results

STAGES = {"git_commit": "abcdef1234", "date": "2026-12-05", "cpu": "AMD EPYC 7B13", "cores": 2, "total_s": 1632,
          "exit": 0, "stages": [{"name": "setup", "exit": 0, "seconds": 64},
                                {"name": "smoke", "exit": 0, "seconds": 409}]}


def test_minutes():
    assert T.minutes(1953.2) == "32 min 33 s" and T.minutes(42) == "42 s" and T.minutes(None) == "not recorded"


def test_a_run_row_names_its_machine_commit_and_longest_module():
    res = results(C2=claim("C2"), C3=claim("C3"))
    res["claims"]["C2"]["duration_s"] = 1652.0
    res["run"].update(duration_s=1953.2, git_commit="c24aa78775fa", workers=2, started_at="2026-12-05T12:39:30",
                      fp_path={"vendor": "AuthenticAMD", "capability": "AVX2"})
    row = T.run_row(res)
    assert row["wall"] == "32 min 33 s" and row["commit"] == "c24aa78" and row["date"] == "2026-12-05"
    assert row["machine"] == "cpu, AuthenticAMD AVX2, 2 workers" and row["longest"] == "C2, 27 min 32 s"
    res["run"].update(complete=False, git_dirty=True)
    assert T.run_row(res)["wall"] == "32 min 33 s (incomplete, uncommitted changes)"


def test_the_ci_stage_table_comes_from_the_file_ci_run_writes():
    text = T.block([STAGES])
    assert "clean clone of abcdef1 on 2026-12-05, AMD EPYC 7B13 (2 cores): **27 min 12 s**, exit 0" in text
    assert "| setup | 0 | 1 min 4 s |" in text and "| smoke | 0 | 6 min 49 s |" in text


def test_write_replaces_only_the_block_and_bad_inputs_are_one_line_exit_4(tmp_path, capsys):
    stages, doc = tmp_path / "ci-stages.json", tmp_path / "page.md"
    stages.write_text(json.dumps(STAGES))
    doc.write_text("before\n<!-- ci-stages:begin -->\nold\n<!-- ci-stages:end -->\nafter\n")
    assert report.main(["times", str(stages), "--write", str(doc), "--marker", "ci-stages"]) == 0
    text = doc.read_text()
    assert text.startswith("before\n") and text.endswith("<!-- ci-stages:end -->\nafter\n") and "old" not in text
    assert report.main(["times", str(stages), "--write", str(doc)]) == 1        # no 'times' markers there
    (tmp_path / "bad.json").write_text("[1]")
    assert report.main(["times", str(tmp_path / "bad.json")]) == 4
    assert report.main(["times", str(tmp_path / "missing.json")]) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("error: ") for line in err) and "Traceback" not in "".join(err)


def test_the_docs_blocks_are_what_the_command_writes_today():
    """profiles.md's block is generated from the committed standard run: a hand edit there fails here."""
    from harness.report import findings
    page = (REPO / "docs" / "profiles.md").read_text(encoding="utf-8")
    standard = json.loads((REPO / "reports" / "standard.json").read_text(encoding="utf-8"))
    assert findings.between_markers(page, "times") == T.block([standard])
    assert findings.between_markers((REPO / "docs" / "ci-gating.md").read_text(encoding="utf-8"), "ci-stages")
