"""harness.sensitivity (issue 10): the fault table covers every fault, bad usage is an error, and a
fault that a claim module does not notice is reported as missed (the matrix can say 'no')."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness import sensitivity
from model.faults import FAULTS


def test_every_fault_has_expected_catchers():
    assert set(sensitivity.EXPECTED_CATCHERS) == set(FAULTS)
    assert all(sensitivity.EXPECTED_CATCHERS.values())


def test_unknown_fault_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        sensitivity.main(["--faults", "no_such_fault"])
    assert exc.value.code == 2
    assert "no_scale" in capsys.readouterr().err


def test_claim_module_lookup(tmp_path):
    (tmp_path / "test_x1_thing.py").write_text("")
    assert sensitivity.claim_module("X1", tmp_path).name == "test_x1_thing.py"
    with pytest.raises(ValueError, match="X2"):
        sensitivity.claim_module("X2", tmp_path)


FAKE = '''
import pytest
from harness import decision
from model.faults import active_fault
pytestmark = pytest.mark.claim("{cid}")

def test_{lower}(evidence, fast):
    evidence.claim("{cid}", title="t", statement="s", strength="strong")
    c = evidence.criterion("no_fault_seen", rule=decision.exact(), prediction="p", metric="m", fast=True)
    bad = active_fault() in {bad}
    c.check(not bad, measured=float(bad))
'''


def test_matrix_reports_caught_and_missed(tmp_path, monkeypatch):
    """A module that sees the fault goes red (caught); one that ignores it stays green (missed)."""
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "test_r1_fake.py").write_text(textwrap.dedent(FAKE.format(cid="R1", lower="r1", bad="('no_scale',)")))
    (claims / "test_c4_fake.py").write_text(textwrap.dedent(FAKE.format(cid="C4", lower="c4", bad="()")))
    (claims / "test_r2_fake.py").write_text(textwrap.dedent(FAKE.format(cid="R2", lower="r2", bad="('no_scale',)")))
    doc = sensitivity.measure(["no_scale"], [0, 1], claims_dir=claims, progress=lambda m: None, jobs=2)
    f = doc["faults"]["no_scale"]
    assert sorted(f["caught"]) == ["R1", "R2"]
    assert f["verdicts"]["C4"] == "supported"
    assert doc["sensitivity"] == pytest.approx(2 / 3)
    assert doc["specificity"]["stable"] is True
    assert doc["specificity"]["master_seeds"] == [0, 1]
    assert doc["specificity"]["verdicts/R1"] == "supported, supported"  # in master-seed order, run side by side


def test_bad_jobs_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        sensitivity.main(["--jobs", "0"])
    assert exc.value.code == 2
    assert "--jobs" in capsys.readouterr().err
