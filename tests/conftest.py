"""Shared test helpers. The root conftest.py registers harness.plugin for these runs too (it is inert
without claim tests); pytester drives the plugin on the fake claim set in tests/fake_claims/."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# The fake claims are run by the plugin tests inside temp dirs, never collected here.
collect_ignore = ["fake_claims"]

REPO = Path(__file__).resolve().parents[1]
FAKE_CLAIMS = Path(__file__).resolve().parent / "fake_claims"


def copy_fake_claims(dest: Path, only: list[str] | None = None) -> Path:
    """The fake claim set (conftest + modules) copied into ``dest``; ``only`` picks modules by file name."""
    dest.mkdir(parents=True, exist_ok=True)
    for src in FAKE_CLAIMS.glob("*.py"):
        if src.name == "conftest.py" or only is None or src.name in only:
            shutil.copy(src, dest / src.name)
    return dest


def run_pytest(cwd: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m pytest`` in a subprocess (as pytester.runpytest_subprocess), for runs shared by tests."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "PYTEST_XDIST"))}
    full_env["PYTHONPATH"] = os.pathsep.join([str(REPO), full_env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          env=full_env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def fake_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """A pytester dir holding the fake claims; returns a function that copies the chosen modules."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    for key in [k for k in os.environ if k.startswith("FAKE_")]:
        monkeypatch.delenv(key)

    def make(only: list[str] | None = None) -> Path:
        return copy_fake_claims(pytester.path, only)

    return make
