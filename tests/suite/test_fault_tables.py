"""docs/fault-matrix.md's tables are generated (``python -m harness.suite.fault_tables``), never kept by hand."""
from __future__ import annotations

from harness.report.findings import between_markers
from harness.suite import USAGE_EXIT, fault_tables
from model.faults import FAULTS
from tests.conftest import REPO

PAGE = REPO / "docs" / "fault-matrix.md"


def test_the_pages_tables_are_the_generated_ones():
    text = PAGE.read_text(encoding="utf-8")
    assert fault_tables.stale(text) == [], ("docs/fault-matrix.md's tables differ from the profiles and claim "
                                            "modules; run `python -m harness.suite.fault_tables --write "
                                            "docs/fault-matrix.md`")


def test_every_fault_of_the_registry_has_a_row():
    table = between_markers(PAGE.read_text(encoding="utf-8"), "fault-catchers")
    assert [line.split("`")[1] for line in table.splitlines()[2:]] == list(FAULTS)


def test_write_replaces_only_between_the_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("before\n<!-- fault-catchers:begin -->\nSTALE-TABLE\n<!-- fault-catchers:end -->\nmiddle\n"
                    "<!-- fault-cells:begin -->\n<!-- fault-cells:end -->\nafter\n", encoding="utf-8")
    assert fault_tables.main(["--write", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert fault_tables.stale(text) == [] and "STALE-TABLE" not in text
    assert text.startswith("before\n") and "\nmiddle\n" in text and text.endswith("after\n")


def test_bad_arguments_are_one_line_and_exit_4(tmp_path, capsys):
    page = tmp_path / "no_markers.md"
    page.write_text("no markers\n", encoding="utf-8")
    for argv in (["--write", str(page)], ["--write", str(tmp_path / "missing.md")], ["--nope"]):
        try:
            code = fault_tables.main(argv)
        except SystemExit as exc:
            code = exc.code
        assert code == USAGE_EXIT, argv
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
