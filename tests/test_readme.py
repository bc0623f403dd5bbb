"""The README is the front page (issue 28): its commands are CI's, its links resolve, its findings are the baseline's.

Nothing here runs the suite: the commands are compared as text with the lines `.ci/run` runs, and the findings
table is regenerated from the committed `reports/baseline.json` (`python -m harness.report findings ... --write`).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness.report import findings
from harness.record import results as R

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
PAGES = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
# A first read: the prose, at most what it was when the README carried its two findings tables in 12,500 bytes; the
# generated tables (smoke and standard findings, the kernel gallery) are not counted, since they grow with claims.
MAX_README_PROSE_BYTES = 7_000
GENERATED_TABLES = ("findings", "findings-standard", "findings-full", "gallery")
# .ci/run makes its venv in a temporary directory ("$WORK/venv/..."); the README makes it in the checkout (.venv/...).
CI_VENV, README_VENV = re.compile(r'"\$WORK/venv([^"]*)"'), r".venv\1"
# Smoke-run arguments only CI passes: the default profile named, and no pytest cache on a CI box.
CI_ONLY_ARGS = (("--profile", "smoke"), ("-p", "no:cacheprovider"))
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def fenced_blocks(text: str) -> list[str]:
    return FENCE.findall(text)


def commands(block: str) -> list[str]:
    """The commands of a shell block: one per line and per `&&`, comments dropped."""
    out = []
    for line in block.splitlines():
        line = line.split(" #")[0].strip()
        out += [c.strip() for c in line.split("&&") if c.strip() and not line.startswith("#")]
    return out


def ci_lines() -> list[str]:
    lines = [CI_VENV.sub(README_VENV, ln.strip()) for ln in CI.read_text(encoding="utf-8").splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#")]


def ci_smoke_args() -> list[str]:
    """The smoke suite's arguments in .ci/run (`args=(...)`, run as `pytest "${args[@]}"`), less CI_ONLY_ARGS."""
    (inner,) = [m.group(1) for ln in ci_lines() if (m := re.fullmatch(r"args=\((.*)\)", ln))]
    tokens = shlex.split(inner)
    for pair in CI_ONLY_ARGS:
        i = next(i for i in range(len(tokens) - 1) if tuple(tokens[i:i + 2]) == pair)
        del tokens[i:i + 2]
    return tokens


def test_the_readmes_two_commands_are_the_ones_ci_runs():
    blocks = fenced_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) == 2, "the README has exactly two fenced blocks: install-and-run, and the tests"
    install_and_run, tests = (commands(b) for b in blocks)
    assert len(tests) == 1 and tests[0].startswith("pytest tests")
    ci = ci_lines()
    assert tests[0] in ci, f"the README's test command {tests[0]!r} is not the one .ci/run runs"
    run = [c for c in install_and_run if c.startswith("pytest")]
    assert len(run) == 1 and install_and_run[-1] == run[0], "install first, then one pytest line"
    assert 'pytest "${args[@]}"' in ci and shlex.split(run[0])[1:] == ci_smoke_args()
    for command in install_and_run[:-1]:
        assert command in ci, f"the README runs {command!r}; .ci/run does not"
    for line in ci:  # and the other way: every install line of CI is the README's
        if line.startswith("pip install"):
            assert line in install_and_run, f".ci/run runs {line!r}; the README does not say so"


def test_the_check_sees_a_drift():
    """A check that cannot fail is a defect: a README that installs something else, or runs pytest otherwise."""
    drifted = 'pip install torch==2.14.0 && pip install -e ".[browser]"\npytest -n 4\n'
    install_and_run = commands(drifted)
    assert "pip install torch==2.14.0" not in ci_lines()
    assert shlex.split(install_and_run[-1])[1:] != ci_smoke_args()


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(m) for m in re.findall(r"^#{1,6} +(.+?) *$", text, re.M)}


def links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert links(README), "the README links into docs/"
    broken = []
    for target in links(page):
        rel, _, anchor = target.partition("#")
        path = (page.parent / rel).resolve() if rel else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert broken == []


def test_the_readme_links_every_docs_page():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in links(README)}
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p.resolve() not in linked]
    assert missing == []


def test_the_baselines_findings_table_is_the_baselines():
    """The smoke baseline's table lives beside the gate it serves (docs/ci-gating.md); the README holds standard's."""
    gating = ROOT / "docs" / "ci-gating.md"
    table = findings.between_markers(gating.read_text(encoding="utf-8"))
    assert table is not None, f"docs/ci-gating.md has no {findings.BEGIN} ... {findings.END} markers"
    expected = findings.findings_markdown(R.load(ROOT / "reports" / "baseline.json"))
    assert table == expected, ("docs/ci-gating.md's findings differ from reports/baseline.json's; run "
                               "`python -m harness.report findings reports/baseline.json --write docs/ci-gating.md`")


def test_the_readmes_standard_table_is_the_record():
    """Issue 26: every standard figure in the README can be checked against the committed record: issue 64, the
    pooled replicates (reports/replicated.json) once their set is complete, until then reports/standard.json."""
    table = findings.between_markers(README.read_text(encoding="utf-8"), "findings-standard")
    begin, end = findings.markers("findings-standard")
    assert table is not None, f"the README has no {begin} ... {end} markers"
    pooled = ROOT / "reports" / "replicated.json"
    record = pooled if pooled.is_file() and (R.load(pooled).get("replication") or {}).get("complete") \
        else ROOT / "reports" / "standard.json"
    expected = findings.findings_markdown(R.load(record))
    assert table == expected, (f"the README's standard table differs from reports/{record.name}'s; run `python -m "
                               f"harness.report findings reports/{record.name} --write README.md --marker "
                               "findings-standard`")


def test_the_readmes_replicates_in_are_the_run_logs_at_the_lock():
    """Issue 64: 'k of K in' shows in the README until the set is complete, from the run log at the current lock."""
    from harness.record import lock, runlog
    from harness.report import replicated

    block = findings.between_markers(README.read_text(encoding="utf-8"), replicated.STATUS_MARKER)
    assert block is not None, f"the README has no {replicated.STATUS_MARKER} markers"
    expected = replicated.status_markdown(lock.load(ROOT / lock.LOCK_FILE),
                                          runlog.read(ROOT / "reports" / runlog.LOG_NAME))
    assert block == expected, ("the README's replicates in differ from the run log; run `python -m harness.report "
                               "replicated --status --write README.md`")


def test_the_readmes_full_table_is_what_reports_full_json_holds_and_names_what_it_lacks():
    """Issue 57: the full profile arrives in parts; the README shows what reports/full.json holds (nothing while no
    part has run) and names every claim it does not hold yet."""
    table = findings.between_markers(README.read_text(encoding="utf-8"), "findings-full")
    assert table is not None, "the README has no findings-full markers"
    from harness.profiles import claim_files

    path, expected = ROOT / "reports" / "full.json", list(claim_files())
    want = (findings.findings_markdown(R.load(path), expected) if path.exists()
            else findings.nothing_run_markdown("reports/full.json", expected))
    assert table == want, ("the README's full table differs from reports/full.json's; run `python -m harness.report "
                           "findings reports/full.json --write README.md --marker findings-full --expect-all`")


def prose(text: str) -> str:
    """The README less its generated tables (the findings of the smoke and standard runs, the gallery): what a
    newcomer reads as text."""
    for name in GENERATED_TABLES:
        begin, end = findings.markers(name)
        start, stop = text.find(begin), text.find(end)
        if 0 <= start < stop:
            text = text[:start] + text[stop + len(end):]
    return text


def test_the_readme_fits_a_first_read():
    size = len(prose(README.read_text(encoding="utf-8")).encode())
    assert size <= MAX_README_PROSE_BYTES, (f"README.md's prose is {size} bytes; move detail into docs/ (at most "
                                            f"{MAX_README_PROSE_BYTES}, generated tables not counted)")


def test_the_prose_budget_counts_everything_but_the_tables():
    text = "intro\n<!-- gallery:begin -->\n| a |\n<!-- gallery:end -->\nmore " + "x" * 10
    assert prose(text) == "intro\n\nmore " + "x" * 10
