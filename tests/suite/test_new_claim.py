"""A claim added from the docs (issue 46, section 4): ``python -m harness.suite.new_claim`` and
docs/adding-a-claim.md's steps, followed literally in a copy of the tree, add a probe-only claim (R4, "every head's
attention rows are distributions over the allowed keys") that the suite's structural tests accept, that runs
supported and is refuted by its falsifier, and that touches three files by hand plus the one generated page the fault
matrix's tables live on."""
from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys

import pytest

from harness.suite import USAGE_EXIT, new_claim
from tests.conftest import REPO

TITLE = "Every head's attention rows are distributions over the allowed keys"
SLUG = "rows_are_distributions"
COPIED = ("harness", "model", "claims", "tests", "examples", "docs")

#: what the author writes where the scaffold marks it (scaffold text -> filled text; each found exactly once)
PROFILE_FILLS = {
    '''# TODO(new_claim): every number the module reads, each with its reason (what sets it; what was measured). A probe at
# init needs a model size and a few seeds; standard and full override only what they change.
SMOKE = {"model": {"d_model": 32, "n_heads": 4}}''':
    '''# One causal self-attention layer at init, float64: d_model 32 with 4 heads (d_k 8); 9 positions, the last 3 keys
# of the second sequence padded, so that both masks forbid keys. A row sums to 1 within ~1e-16 at any size.
SMOKE = {"model": {"d_model": 32, "n_heads": 4}, "length": 9, "padded": 3}''',
    'WALL_BUDGET_S = {"smoke": 5}           # TODO(new_claim): measured (the run\'s terminal summary prints it)':
    'WALL_BUDGET_S = {"smoke": 2}           # measured: ~0.1 s',
    'REFUTED_BY_FAULTS = ("TODO(new_claim): a fault of model/faults.py",)':
    'REFUTED_BY_FAULTS = ("causal_leak", "padding_leak")',
    'KERNEL_TRIAL = "TODO(new_claim): why it does not judge a user\'s kernel under --attention"':
    'KERNEL_TRIAL = "it reads the weights tap inside the attention, which a black-box kernel does not expose"',
}
MODULE_FILLS = {
    "**Claim.** TODO(new_claim): the note's words, quoted, and what would follow if they were false.":
    "**Claim.** Attention weights are a softmax over the keys a query may see: each row sums to 1 over them.",
    "TODO(new_claim): what is measured, on which model and inputs, and why this design measures the claim.":
    "Every weight of every head, causal and key-padded, against the masks.",
    "TODO(new_claim): each criterion argued from the note before the numbers\nare seen; each counted one names in "
    "``falsified_by`` the fault under which it must come out refuted.":
    "``holds``: an exact check; ``causal_leak`` and\n``padding_leak`` put weight on a forbidden key.",
    "**Refuted by**: TODO(new_claim): the outcome that refutes the claim.":
    "**Refuted by**: a row off 1, a negative weight, or weight on a forbidden key.",
    'CLAIM_ID = "R4"\n': 'CLAIM_ID = "R4"\nTOL = 1e-12   # float64 rounding of a softmax row is ~1e-16\n',
    'falsified_by=("TODO(new_claim): a fault of model/faults.py",), fast=True,':
    'falsified_by=("causal_leak", "padding_leak"), fast=True,',
    'quote="TODO(new_claim): the words of the note it tests, verbatim (docs/NOTE-011.txt)",':
    'quote="Scaled dot-product attention: softmax(QKᵀ/√d_k)V.",',
    'rule=decision.exact("TODO(new_claim): why a deterministic check (or another decision rule)"),':
    'rule=decision.exact("float64: a softmax row sums to 1 within ~1e-16; tolerance 1e-12"),',
    'prediction="TODO(new_claim): what the note predicts, as a number and its tolerance",':
    'prediction="every row of every head sums to 1 over the allowed keys, with 0 on the others",',
    'metric="TODO(new_claim): the quantity read"),': 'metric="largest row-sum error or forbidden weight"),',
    '"ceiling": ("not applicable", "TODO(new_claim): answered, open or not applicable, and how"),':
    '"ceiling": ("not applicable", "an exact check"),',
    '"second_task": ("not applicable", "TODO(new_claim): answered, open or not applicable, and how"),':
    '"second_task": ("not applicable", "a check of the implementation, not of a task"),',
    'statement="TODO(new_claim): quoted from the note",': 'statement="softmax(QK^T/sqrt(d_k))V",',
    'strength="TODO(new_claim): the note\'s strength",': 'strength="model check",',
    'limitation="TODO(new_claim): the note\'s limitation that bears on it")': 'limitation="At init only.")',
}
CHECK_BODY = '''    """(holds, measured, detail) over ``seeds``, float64: the largest |row sum - 1|, negative weight or weight on a
    key the causal or padding mask forbids."""
    cfg = model_config(block)
    T, padded = block["length"], block["padded"]
    worst = 0.0
    for seed in seeds:
        torch.manual_seed(seed)
        mha = MultiHeadAttention(cfg, causal=True).double().eval()
        x = torch.randn(2, T, cfg.d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
        pad = torch.zeros(2, T, dtype=torch.bool)
        pad[1, T - padded:] = True
        with torch.no_grad(), capture(mha) as cache:
            mha(x, key_padding_mask=pad)
        w = cache["weights"]
        allowed = torch.ones(T, T, dtype=torch.bool).tril()[None, None] & ~pad[:, None, None, :]
        worst = max(worst, float(w.masked_fill(allowed, 0).abs().max()), float((w.sum(-1) - 1).abs().max()),
                    float(-w.min()))
    return worst <= TOL, worst, f"{len(seeds)} seeds x {cfg.n_heads} heads: worst {worst:.3g} (tolerance {TOL:g})"
'''


def fill(text: str, fills: dict[str, str]) -> str:
    for old, new in fills.items():
        assert text.count(old) == 1, f"the scaffold no longer writes: {old!r}"
        text = text.replace(old, new)
    return text


def snapshot(root) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_bad_arguments_are_one_line_and_exit_4(tmp_path, capsys):
    for argv in (["X4", "--title", "t"], ["R", "--title", "t"], ["R1", "--title", "t"], ["R4", "--title", " "],
                 ["R4", "--title", "t", "--slug", "Bad-Slug"], ["R4"]):
        with pytest.raises(SystemExit) as exc:
            new_claim.main(argv)
        assert exc.value.code == USAGE_EXIT, argv
        assert len(capsys.readouterr().err.strip().splitlines()) == 1, argv
    assert not (REPO / "harness" / "profiles" / "r4.py").exists()


def test_a_probe_only_claim_added_by_the_docs_steps_touches_three_files_by_hand(tmp_path):
    tree = tmp_path / "tree"
    for name in COPIED:
        shutil.copytree(REPO / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "conftest.py"):
        shutil.copy(REPO / name, tree / name)
    before = snapshot(tree)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree), "HOME": str(tmp_path)}

    def run(*args, ok=True):
        done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=300)
        assert (done.returncode == 0) == ok, " ".join(args) + "\n" + done.stdout[-3000:] + done.stderr[-3000:]
        return done

    # step 1: the scaffold writes three files, and the structural tests flag what it left to the author
    run("-m", "harness.suite.new_claim", "R4", "--title", TITLE, "--slug", SLUG)
    profile, module, test = (tree / "harness/profiles/r4.py", tree / f"claims/test_r4_{SLUG}.py",
                             tree / "tests/claims/test_r4.py")
    flagged = run("-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "tests/test_claim_layout.py",
                  "tests/claims/test_criteria.py", "-k", "marker or r4", ok=False).stdout
    assert "harness/profiles/r4.py" in flagged and f"claims/test_r4_{SLUG}.py" in flagged

    # step 2: the author fills each marker (the profile's numbers, the methods section, the check)
    profile.write_text(fill(profile.read_text(encoding="utf-8"), PROFILE_FILLS), encoding="utf-8")
    text = fill(module.read_text(encoding="utf-8"), MODULE_FILLS)
    stub = r'    """\(holds, measured, detail\).*?raise NotImplementedError\("TODO\(new_claim\): measure"\)\n'
    text, n = re.subn(stub, lambda _: CHECK_BODY, text, flags=re.S)
    assert n == 1, "the scaffold's check stub moved"
    module.write_text(text, encoding="utf-8")

    # step 3: regenerate what is generated from the profiles (the fault matrix's tables)
    run("-m", "harness.suite.fault_tables", "--write", "docs/fault-matrix.md")

    # the tests the docs name, and the suite's structural ones, pass on it
    run("-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "tests/claims/test_r4.py",
        "tests/test_claim_layout.py", "-k", "not toy", "tests/claims/test_criteria.py",
        "tests/suite/test_fault_tables.py", "tests/suite/test_sensitivity_modules.py", "-m", "not subprocess")
    run("-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "tests/kernel/test_kernel.py", "-k", "skips")
    # step 4: it runs, supported, and its falsifier refutes it
    for fault, verdict in ((None, "supported"), ("padding_leak", "refuted")):
        out = tmp_path / f"out-{fault}"
        run("-m", "pytest", "-p", "no:cacheprovider", f"claims/test_r4_{SLUG}.py", "--report-dir", str(out),
            *(["--inject-fault", fault] if fault else []), ok=verdict == "supported")
        assert json.loads((out / "results.json").read_text())["claims"]["R4"]["verdict"] == verdict

    after = snapshot(tree)
    touched = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert touched == sorted(["claims/test_r4_rows_are_distributions.py", "docs/fault-matrix.md",
                              "harness/profiles/r4.py", "tests/claims/test_r4.py"]), touched


def test_the_doc_describes_the_scaffold_it_names():
    """docs/adding-a-claim.md names the command, its marker, the three files and the id letters the scaffold uses."""
    doc = (REPO / "docs" / "adding-a-claim.md").read_text(encoding="utf-8")
    assert "python -m harness.suite.new_claim R4" in doc and new_claim.MARKER in doc
    for path in ("harness/profiles/r4.py", "claims/test_r4_<slug>.py", "tests/claims/test_r4.py",
                 "python -m harness.suite.fault_tables --write docs/fault-matrix.md"):
        assert path in doc, path
    for letter, kind in new_claim.KINDS.items():
        assert f"`{letter}` a" in doc and f'"{kind}"' in doc, letter
