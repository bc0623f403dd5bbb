"""A claim is two files (issue 37): ``claims/test_<id>_*.py``, the methods section, and
``harness/profiles/<id>.py``, every number the suite reads about it. The second test adds a toy claim in a copy of
the tree by writing just those two files, and runs it: the plugin, the scheduler's wall budgets, the kernel trial
and the fault matrix all find it; its counted criterion names its falsifier (tests/claims/test_criteria.py passes on
it) and that fault refutes it."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

CLAIM_ID_KEY = re.compile(r"""["']([CRQM]\d+)["']\s*:""")          # a claim id as a dict key: a fact about it
CLAIM_ID_TUPLE = re.compile(r"""\(\s*["'][CRQM]\d+["']\s*,\s*["'][CRQM]\d+["']""")   # a list of claim ids


def claim_module_ids() -> set[str]:
    return {p.name.split("_")[1].upper() for p in (REPO / "claims").glob("test_*_*.py")}


def test_every_claim_module_has_its_profile_file_and_back():
    profile_ids = {p.stem.upper() for p in (REPO / "harness" / "profiles").glob("*.py")
                   if re.fullmatch(r"[a-z]\d+", p.stem)}
    assert claim_module_ids() == profile_ids


#: the note's own record, not facts of a claim module: its items' titles (so the page names the ones a run did not
#: reach) and the practice SOTA-050 with the claims that decide it
NOTE_RECORD = {"harness/report/html.py": "NOTE_ITEMS", "harness/record/verdict.py": "PRACTICES"}


def test_no_fact_about_a_claim_lives_in_the_harness_outside_its_profile_file():
    """Claim ids keyed or listed anywhere in harness/ but harness/profiles/ are a seventh place to edit."""
    found = []
    for path in (REPO / "harness").rglob("*.py"):
        if "profiles" in path.relative_to(REPO / "harness").parts:
            continue
        text = path.read_text(encoding="utf-8")
        name = NOTE_RECORD.get(str(path.relative_to(REPO)))
        if name:               # drop that one literal, up to its closing line
            text = re.sub(rf"\n{name} = [({{].*?\n[)}}]\n", "\n", text, flags=re.S)
        for n, line in enumerate(text.splitlines(), 1):
            if "..." in line:          # a schema example in a docstring: {"C1": "supported", ...}
                continue
            if CLAIM_ID_KEY.search(line) or CLAIM_ID_TUPLE.search(line):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert found == [], "move these into harness/profiles/<id>.py:\n" + "\n".join(found)


def test_no_scaffold_marker_is_left():
    """``python -m harness.suite.new_claim`` marks what only the author can write; a claim is done when none is left."""
    from harness.suite.new_claim import MARKER

    left = [f"{p.relative_to(REPO)}:{n}" for d in ("claims", "harness/profiles", "tests/claims")
            for p in sorted((REPO / d).glob("*.py"))
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if MARKER in line]
    assert left == [], f"fill each {MARKER} (docs/adding-a-claim.md):\n" + "\n".join(left)


MAX_LINES = 600    # the house rule (issue 56): a file a reader can hold, for code and docs alike
SOURCE_DIRS = ("model", "harness", "claims", "tests", "docs", "examples", "benchmarks", "scripts", ".ci")


def test_no_source_or_doc_file_is_over_600_lines():
    """Code, scripts and docs (the committed reports, data and figures aside) stay under the limit."""
    files = [p for d in SOURCE_DIRS for p in (REPO / d).rglob("*") if p.is_file()
             and (p.suffix in (".py", ".sh", ".md", ".toml", ".cfg") or p.parent.name == ".ci")
             and "__pycache__" not in p.parts]
    files += [REPO / n for n in ("README.md", "CHANGELOG.md", "conftest.py", "pyproject.toml") if (REPO / n).exists()]
    over = {str(p.relative_to(REPO)): n for p in files
            if (n := len(p.read_text(encoding="utf-8", errors="replace").splitlines())) > MAX_LINES}
    assert over == {}, f"over {MAX_LINES} lines: {over}"


def test_the_shared_sweep_is_one_block_that_its_users_name():
    """The tuned sweep C3, C4, R1, R3 and the kernel trial train through is harness/profiles/sweep.py: C3's block
    carries it unchanged (key order too: the sweep's memo keys on its JSON), and every ``sweep_from`` names it."""
    from harness import profiles

    def sweep_from(node):
        if isinstance(node, dict):
            yield from ([node["sweep_from"]] if "sweep_from" in node else [])
            for v in node.values():
                yield from sweep_from(v)

    for name in profiles.PROFILE_NAMES:
        for prof in (profiles.get_profile(name), profiles.get_profile(name).dry_run()):
            shared, c3 = prof.claim("sweep"), prof.claim("C3")
            assert json.dumps({k: c3[k] for k in shared}) == json.dumps(shared), name
            named = {cid: list(sweep_from(block)) for cid, block in prof.blocks.items()}
            assert {"C4", "R1", "R3", "kernel_trial"} <= {cid for cid, n in named.items() if n}, name
            assert {x for n in named.values() for x in n} == {"sweep"}, name


TOY_MODULE = '''
"""C9 (a toy): the model's default attention scale is 1/sqrt(d_k), read through a seeded draw's noise."""
import math

import numpy as np
import pytest

from harness.record import decision
from model import ModelConfig, MultiHeadAttention

pytestmark = pytest.mark.claim("C9")

CLAIM_ID = "C9"
CRITERIA = {"scale_near_inverse_sqrt_dk": dict(
    falsified_by=("no_scale",),        # the scale becomes 1: sqrt(d_k) * scale - 1 = 3 at d_k 16, far outside the band
    quote="Scaling by 1/√d_k returns it to unit variance.",
    rule=decision.band(-0.5, 0.5, reason="toy: half a unit either side"),
    prediction="sqrt(d_k) x the default scale, less 1, plus a draw's mean, lies within 0.5 of 0", metric="offset")}
OBJECTIONS = {"tuned_lr": ("not applicable", "a toy: nothing trained")}


def test_c9_toy(evidence, profile, seeds):
    block = profile.claim(CLAIM_ID)
    ev = evidence
    ev.claim(CLAIM_ID, title="A toy claim", statement="Scale by 1/sqrt(d_k)", strength="weak", kind="claim",
             limitation="A toy.")
    ev.answer_objections(OBJECTIONS)
    crit = ev.declare(CRITERIA)["scale_near_inverse_sqrt_dk"]
    cfg = ModelConfig(d_model=64, n_heads=4)
    off = MultiHeadAttention(cfg).effective_scale() * math.sqrt(cfg.d_model // cfg.n_heads) - 1
    values = [off + float(np.random.default_rng(s).normal(size=block["draws"]).mean()) for s in seeds]
    crit.sample(values)
    ev.metric("offset", float(np.mean(values)))
    ev.headline("offset")
'''

TOY_PROFILE = '''
"""C9's numbers (a toy)."""
from harness.profiles.merge import overrides

SMOKE = {"draws": 100}                      # 100 draws: the mean's sd is 0.1, well inside the 0.5 band
BUDGETS = {"smoke": SMOKE, "standard": overrides(SMOKE, {"draws": 1000}), "full": overrides(SMOKE, {"draws": 10000})}
WALL_BUDGET_S = {"smoke": 2}
DRY_RUN_WALL_BUDGET_S = {"standard": 1}
REFUTED_BY_FAULTS = ("no_scale",)
KERNEL_TRIAL = "a toy: it reads the project's own attention scale"
'''


def test_a_toy_claim_is_added_by_writing_two_files(tmp_path):
    for name in ("harness", "model", "claims", "tests", "examples"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "conftest.py"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "claims" / "test_c9_toy.py").write_text(textwrap.dedent(TOY_MODULE).lstrip(), encoding="utf-8")
    (tmp_path / "harness" / "profiles" / "c9.py").write_text(textwrap.dedent(TOY_PROFILE).lstrip(), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HOME": str(tmp_path)}

    def pytest_run(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)

    run = pytest_run("claims/test_c9_toy.py", "--report-dir", "out")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    claim = json.loads((tmp_path / "out" / "results.json").read_text())["claims"]["C9"]
    assert claim["verdict"] == "supported"
    faulty = pytest_run("claims/test_c9_toy.py", "--report-dir", "faulty", "--inject-fault", "no_scale")
    claim = json.loads((tmp_path / "faulty" / "results.json").read_text())["claims"]["C9"]
    assert claim["verdict"] == "refuted", faulty.stdout[-3000:]          # its falsifier refutes it
    scans = pytest_run("tests/claims/test_criteria.py", "-n", "0", "-k", "c9_toy", "-q")
    assert scans.returncode == 0 and "passed" in scans.stdout, scans.stdout[-3000:] + scans.stderr[-3000:]

    facts = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        from harness import profiles
        from harness.suite import sensitivity
        print(profiles.wall_budget("smoke", "C9"), profiles.wall_budget("standard", "C9", dry=True),
              profiles.KERNEL_NOT_YET["C9"], "C9" in sensitivity.EXPECTED_CATCHERS["no_scale"],
              profiles.get_profile("full").claim("C9")["draws"])
        """)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    expected = "2 1 a toy: it reads the project's own attention scale True 10000"
    assert facts.stdout.split("\n")[0] == expected, facts.stdout + facts.stderr
