"""Every command of the project answers a bad option or a missing file in one line, exit 4, no traceback (the same
usage error as the pytest plugin's options). In process: each command's ``main`` is what ``python -m`` runs."""
from __future__ import annotations

import importlib

import pytest

from harness.record.cli import USAGE_EXIT

COMMANDS = [
    ("harness.report.html", "--bogus"), ("harness.report.html", "compare", "--bogus"),
    ("harness.report.html", "lock", "--bogus"), ("harness.report.html", "baseline", "--bogus"),
    ("harness.report.html", "rejudge", "--bogus"), ("harness.report.html", "findings", "no/such/results.json"),
    ("harness.report.html", "no/such/results.json"), ("harness.report.browser", "no/such/index.html"),
    ("harness.suite.sensitivity", "--jobs", "0"), ("harness.suite.calibration", "--bogus"),
    ("harness.suite.model_table", "--bogus"), ("harness.suite.fault_tables", "--bogus"),
    ("harness.suite.new_claim", "--bogus"), ("harness.suite.replication_plan", "--bogus"),
    ("harness.report.html", "replicated", "--bogus"), ("harness.report.html", "replicated", "no/such/folder"),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_bad_argument_is_one_line_and_exit_4(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main = importlib.import_module(argv[0]).main
    try:
        code = main(list(argv[1:]))
    except SystemExit as exc:
        code = exc.code
    assert code == USAGE_EXIT
    err = capsys.readouterr().err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1 and "Traceback" not in err, err
