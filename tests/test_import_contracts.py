"""The layers are a contract (issue 37): `lint-imports` keeps pyproject.toml's [tool.importlinter] contracts, and
fails when a module imports against them. Needs the `lint` extra (import-linter, in the README's dev install
`.[browser,lint,models]`); without it the test fails and says so, for a check that skips is a check nobody runs."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def test_import_linter_is_installed():
    """Without import-linter the contracts below cannot run: fail, not skip (the README's dev install has it)."""
    try:
        import importlinter  # noqa: F401
    except ImportError:
        pytest.fail("the layer check needs import-linter, the lint extra: pip install -e '.[browser,lint,models]'")


LAYERS = "the layers import only downward"
RECORD = "record imports nothing else of the harness"
FAMILY = "in record, decision over firmness over their family"
LEAVES = "kernel, schedule, fp_path import nothing else of the harness"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` in ``root`` (its pyproject.toml's contracts, its packages first on the path)."""
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.exit(lint_imports_command())"], cwd=root, env={"PYTHONPATH": str(root), "PATH": ""},
                          capture_output=True, text=True, timeout=120)


def copy_of_the_tree(dest: Path) -> Path:
    for name in ("harness", "model", "claims"):
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", dest / "pyproject.toml")
    return dest


def test_the_layers_hold():
    test_import_linter_is_installed()
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("module,line,contract", [
    ("harness/record/verdict.py", "import torch", "the record and report side never imports torch"),
    ("harness/record/results.py", "import claims.test_c3_softmax_saturation", "harness and model never import the claims"),
    ("model/config.py", "import harness.data.tasks", "model never imports the harness"),
    ("harness/data/tasks.py", "import harness.train.loop", LAYERS),
    ("harness/measure/stats.py", "import harness.study.sweeps", LAYERS),
    # the top layers: the plugin over the session and the suite, over the settings, over the rest
    ("harness/session/__init__.py", "import harness.plugin", LAYERS),
    ("harness/settings.py", "import harness.session", LAYERS),
    ("harness/suite/sensitivity.py", "import harness.session", LAYERS),
    ("harness/report/html.py", "import harness.settings", LAYERS),
    ("harness/study/sweeps.py", "import harness.trial.model_reads", LAYERS),
    ("harness/study/sweeps.py", "import harness.trial.model", "the study and the user's model are independent"),
    ("harness/trial/model.py", "import harness.trial.model_reads", LAYERS),
    ("harness/measure/probes.py", "import harness.trial.model", LAYERS),
    # what is on trial: its probes under the model and the checkpoint, over measure
    ("harness/measure/probes.py", "import harness.trial.model_probes", LAYERS),
    ("harness/trial/model_probes.py", "import harness.trial.model", LAYERS),
    ("harness/trial/checkpoint_probes.py", "import harness.trial.checkpoint", LAYERS),
    ("harness/record/results.py", "import harness.session", RECORD),
    ("harness/record/evidence.py", "import harness.fp_path", RECORD),
    ("harness/record/family.py", "import harness.record.firmness", FAMILY),
    ("harness/record/firmness.py", "import harness.record.decision", FAMILY),
    ("harness/profiles/__init__.py", "import harness.data.tasks", "profiles are numbers: they import nothing else of the harness"),
    ("harness/trial/kernel.py", "import harness.measure.probes", LEAVES),
    ("harness/trial/kernel.py", "import harness.trial.model_probes", LEAVES),
    ("harness/schedule.py", "import harness.profiles", LEAVES),
])
def test_an_upward_import_breaks_its_contract(tmp_path, module, line, contract):
    test_import_linter_is_installed()
    root = copy_of_the_tree(tmp_path)
    path = root / module
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + sep + line + "\n" + rest if sep else line + "\n" + text, encoding="utf-8")
    result = lint_imports(root)
    assert result.returncode != 0, result.stdout
    assert f"{contract} BROKEN" in result.stdout, result.stdout
