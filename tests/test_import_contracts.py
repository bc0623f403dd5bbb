"""The layers are a contract (issue 37): `lint-imports` keeps pyproject.toml's [tool.importlinter] contracts, and
fails when a module imports against them. Needs the `lint` extra (import-linter); skips with the reason without it."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("importlinter", reason="the layer check needs the lint extra: pip install -e '.[lint]'")


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
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("module,line,contract", [
    ("harness/record/verdict.py", "import torch", "the record and report side never imports torch"),
    ("harness/record/results.py", "import claims.test_c3_softmax_saturation", "harness and model never import the claims"),
    ("model/config.py", "import harness.data.tasks", "model never imports the harness"),
    ("harness/data/tasks.py", "import harness.train.loop", "the layers import only downward"),
    ("harness/measure/stats.py", "import harness.study.sweeps", "the layers import only downward"),
    ("harness/profiles/__init__.py", "import harness.data.tasks", "profiles are numbers: they import nothing else of the harness"),
])
def test_an_upward_import_breaks_its_contract(tmp_path, module, line, contract):
    root = copy_of_the_tree(tmp_path)
    path = root / module
    text = path.read_text(encoding="utf-8")
    head, sep, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + sep + line + "\n" + rest if sep else line + "\n" + text, encoding="utf-8")
    result = lint_imports(root)
    assert result.returncode != 0, result.stdout
    assert f"{contract} BROKEN" in result.stdout, result.stdout
