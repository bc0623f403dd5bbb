"""Issue 63, item 8: the revisions made after an outcome was seen, one list read by the docs and by the report."""
import subprocess
from pathlib import Path

import pytest
from markupsafe import escape

from harness.record import results as R
from harness.report import findings
from harness.report import html as report
from harness.report import revisions as RV

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "revisions.md"


def test_the_docs_page_is_the_generated_table():
    block = findings.between_markers(PAGE.read_text(encoding="utf-8"), RV.MARKER)
    assert block == RV.markdown(), ("docs/revisions.md differs from harness/report/revisions.py; run "
                                    "`python -m harness.report.revisions --write docs/revisions.md`")


def test_the_page_says_what_fresh_seeds_protect_and_what_not():
    assert "fitting a criterion or a budget to the seeds that decide it" in RV.PROTECTS
    assert "a design informed by earlier outcomes at other seeds" in RV.PROTECTS


def test_each_row_names_its_seed_and_commit():
    """Every row gives the master seed of the outcome before it; only the rows of issue 63 are still pending."""
    for r in RV.REVISIONS:
        assert r.what and r.change and r.seen and r.issue
        assert r.seed.isdigit() or r.seed == "not recorded", r
        assert bool(r.commits) or r.issue == "63", r
    assert {r.what for r in RV.REVISIONS} >= {"C1", "C2", "C5", "Q1", "firmness"}


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def test_every_commit_named_is_in_the_history():
    try:
        shallow = _git("rev-parse", "--is-shallow-repository")
    except FileNotFoundError:
        pytest.skip("no git")
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("not a full git checkout")
    missing = [c for r in RV.REVISIONS for c in r.commits if _git("cat-file", "-e", f"{c}^{{commit}}").returncode]
    assert missing == []


def test_the_report_renders_the_section(tmp_path):
    run = {"profile": "smoke", "device": "cpu", "seeds": [0, 1], "started_at": "2026-01-01T00:00:00+00:00",
           "duration_s": 1.0, "complete": True}
    page = report.render_html({"schema_version": R.SCHEMA_VERSION, "run": run, "claims": {}}, tmp_path)
    assert f'<section id="revisions"><h2>{RV.TITLE}</h2>' in page and 'href="#revisions"' in page
    assert escape(RV.PROTECTS) in page
    for r in RV.rows():
        assert f"<code>{r['commits']}</code>" in page and escape(r["change"]) in page
