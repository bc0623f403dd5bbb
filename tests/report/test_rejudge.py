"""`python -m harness.report rejudge`: a stored run decided again from its records, without running anything."""
import json
import shutil
from pathlib import Path

import pytest

from harness.record import results as R
from harness.report import html as report
from harness.report import rejudge as RJ

REPORTS = Path(__file__).resolve().parents[2] / "reports"


@pytest.mark.parametrize("name", ["baseline.json", "standard.json"])
def test_the_committed_reports_are_what_the_rules_decide_from_their_records(name):
    """The committed baseline and standard run carry the verdicts and firmness this checkout's rules give their
    recorded measurements: a change of the rules must re-decide them (`rejudge --write`) and the README with them."""
    stored = R.load(REPORTS / name)
    assert R.rejudge(stored) == R.to_jsonable(stored), RJ.changes(stored, R.rejudge(stored))


def test_rejudge_reports_a_change_and_writes_it_only_when_asked(tmp_path, capsys):
    path = tmp_path / "results.json"
    shutil.copy(REPORTS / "baseline.json", path)
    data = json.loads(path.read_text())
    data["claims"]["C3"]["firmness"] = 0.123                    # as if decided under other rules
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert report.main(["rejudge", str(path)]) == 1
    assert "C3: supported (firmness 0.123) -> supported (firmness " in capsys.readouterr().out
    assert json.loads(path.read_text())["claims"]["C3"]["firmness"] == 0.123
    assert report.main(["rejudge", str(path), "--write"]) == 0
    assert path.read_text() == (REPORTS / "baseline.json").read_text()
    assert report.main(["rejudge", str(path)]) == 0
    assert "every verdict, outcome and firmness as stored" in capsys.readouterr().out
    assert report.main(["rejudge", str(tmp_path / "missing.json")]) == 4
