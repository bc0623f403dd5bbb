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


#: the least firmness (``harness.record.decision``'s replication probability, in [0, 1]) a trained outcome a unit test asserts
#: may have at the test's budget (issue 36): below it the test rides on a coin flip of seeds and floating-point path
FIRM_ENOUGH = 0.95
#: the reasons ``harness.record.decision`` gives for no firmness when there is nothing to simulate: an exact check (kind
#: 'exact', decided by a deterministic check) and an exact point (every replicate identical, e.g. a kernel computing
#: the reference bit for bit)
NOTHING_TO_SIMULATE = ("deterministic check", "an exact point")


def assert_firm(judged: dict, outcome: str, least: float = FIRM_ENOUGH) -> None:
    """A trained outcome asserted, and that it is firm: ``judged`` is a judged criterion (its ``outcome``) or a judged
    claim record (its ``verdict``, canonical), and its ``firmness`` must be >= ``least`` at the test's budget, so the
    test does not pass or fail on the draw of seeds or the floating-point path (issue 36). Where the harness computes
    no firmness because there is nothing to simulate (an exact check, kind 'exact'; an exact point; a claim of
    deterministic checks only) the outcome alone is asserted: such a result is as firm as a result can be. Tests of
    deterministic probes or of hand-made tables (``decision.decide_alone`` without ``firmness=True``) need no
    firmness and do not call this."""
    from harness.record import verdict as verdicts

    is_claim = "criteria" in judged
    got = verdicts.canonical(judged.get("verdict")) if is_claim else judged.get("outcome")
    what = f"verdict of {judged.get('claim_id') or judged.get('id') or 'the claim'}" if is_claim else \
        f"outcome of {judged.get('name', 'the criterion')}"
    shown = {k: judged.get(k) for k in ("outcome", "verdict", "firmness", "firmness_reason", "seeds_for_firm",
                                        "measured", "ci", "deciding_part", "detail") if k in judged}
    assert got == outcome, f"{what} is {got!r}, not {outcome!r}: {shown}"
    firmness = judged.get("firmness")
    if firmness is None:
        reason = judged.get("firmness_reason") or ""
        assert reason.startswith(NOTHING_TO_SIMULATE), \
            f"{what} is {outcome!r} but has no firmness ({reason or 'no reason given'}): {shown}"
        return
    assert firmness >= least, (f"{what} is {outcome!r} at firmness {firmness:.3f} < {least}: a coin flip at this "
                               f"budget (seeds for firm: {judged.get('seeds_for_firm')}); raise seeds or steps, or "
                               f"pick a stronger case: {shown}")
