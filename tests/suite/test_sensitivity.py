"""harness.suite.sensitivity (issue 10): the fault table covers every fault, bad usage is an error, and a
fault that a claim module does not notice is reported as missed (the matrix can say 'no')."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.suite import sensitivity
from model.faults import FAULTS


def test_every_fault_is_caught_in_the_matrix_or_by_a_counted_criterion():
    """A fault no fast criterion catches is there for a training criterion (``--criteria``): some counted criterion
    must name it, or it breaks nothing the suite claims to see."""
    assert set(sensitivity.EXPECTED_CATCHERS) == set(FAULTS)
    named = {f for crits in sensitivity.declared_falsifiers(sensitivity.ROOT / "claims").values()
             for fs in crits.values() for f in fs}
    assert {f for f, catchers in sensitivity.EXPECTED_CATCHERS.items() if not catchers} <= named
    assert named - {sensitivity.NO_FAULT} <= set(FAULTS)


def test_unknown_fault_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        sensitivity.main(["--faults", "no_such_fault"])
    assert exc.value.code == 4
    assert "no_scale" in capsys.readouterr().err


def test_claim_module_lookup(tmp_path):
    (tmp_path / "test_x1_thing.py").write_text("")
    assert sensitivity.claim_module("X1", tmp_path).name == "test_x1_thing.py"
    with pytest.raises(ValueError, match="X2"):
        sensitivity.claim_module("X2", tmp_path)


FAKE = '''
import pytest
from harness.record import decision
from model.faults import active_fault
pytestmark = pytest.mark.claim("{cid}")

def test_{lower}(evidence, fast):
    evidence.claim("{cid}", title="t", statement="s", strength="strong")
    c = evidence.criterion("no_fault_seen", rule=decision.band(0.0, None, reason="r"), prediction="p", metric="m",
                           fast=True)
    faulty = active_fault() is not None and "{kind}" != "ignore"
    if faulty and "{kind}" == "refute":
        c.sample([-1.0, -1.1, -0.9])
    elif faulty:
        c.sample([-1.0, 1.1, 0.9])
    else:
        c.sample([1.0, 1.1, 0.9])
'''
NO_FAST = '''
import pytest
pytestmark = pytest.mark.claim("Q7")

def test_q7(evidence, fast):
    if fast:
        pytest.skip("no fast criteria")
'''


def test_matrix_counts_refutations_only_and_checks_every_off_target_cell(tmp_path):
    """Issue 20: every claim under every fault. C2 refutes uniform_attention (caught); C5 only goes inconclusive
    under it (a weak catch, not counted); C1 ignores it (missed); R3, not about the fault, moves (off-target)."""
    claims = tmp_path / "claims"
    claims.mkdir()
    for cid, kind in (("C2", "refute"), ("C5", "inconclusive"), ("C1", "ignore"), ("R3", "refute")):
        (claims / f"test_{cid.lower()}_fake.py").write_text(textwrap.dedent(FAKE.format(cid=cid, lower=cid.lower(),
                                                                                       kind=kind)))
    (claims / "test_q7_fake.py").write_text(textwrap.dedent(NO_FAST))
    doc = sensitivity.measure(["uniform_attention"], [0, 1], claims_dir=claims, progress=lambda m: None, jobs=2)
    f = doc["faults"]["uniform_attention"]
    assert f["cells"] == {"C1": "missed", "C2": "caught", "C5": "weak", "R3": "moved"}
    assert doc["sensitivity"] == pytest.approx(1 / 3)           # C2 of C2, C5, C1
    assert doc["specificity"] == 0.0                              # R3 moved
    assert doc["not_in_matrix"] == ["Q7"] and doc["claims"] == ["C1", "C2", "C5", "R3"]
    assert doc["stability"]["stable"] is True and doc["stability"]["master_seeds"] == [0, 1]
    assert doc["stability"]["verdicts/C2"] == "supported, supported"
    assert not sensitivity.passed(doc)


def test_a_listed_side_effect_is_excused(monkeypatch):
    monkeypatch.setitem(sensitivity.SIDE_EFFECTS, ("no_scale", "C5"), "because")
    assert sensitivity.classify("no_scale", "C5", "refuted", "supported") == "side effect"
    assert sensitivity.classify("no_scale", "C5", "supported", "supported") == "kept"
    assert sensitivity.classify("no_scale", "R1", "error", "supported") == "missed"


def test_bad_jobs_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        sensitivity.main(["--jobs", "0"])
    assert exc.value.code == 4
    assert "--jobs" in capsys.readouterr().err


def test_side_effects_name_real_cells_and_give_a_reason():
    """Issue 20: an off-target cell may move only for a stated reason, and never one the claim is expected to catch."""
    for (fault, cid), reason in sensitivity.SIDE_EFFECTS.items():
        assert fault in FAULTS and cid not in sensitivity.EXPECTED_CATCHERS[fault]
        assert len(reason.split()) >= 6, (fault, cid)


def test_a_cell_below_firmness_0_9_is_named_flaky():
    """Issue 25: a cell whose claim or counted fast criterion is under 0.9 firm in its run is flaky, and says why;
    a firm one, or a low firmness on a reported criterion, is not."""
    firm = {"firmness": 1.0, "criteria": [{"name": "a", "counts": True, "fast": True, "firmness": 0.97}]}
    assert sensitivity.flakiness(firm) == ""
    weak = {"firmness": 0.54, "criteria": [
        {"name": "attention_learns", "counts": True, "fast": True, "firmness": 0.54, "outcome": "inconclusive",
         "ci": [-0.097, 0.231]},
        {"name": "reported", "counts": False, "fast": True, "firmness": 0.1}]}
    why = sensitivity.flakiness(weak)
    assert "claim firmness 0.54" in why and "attention_learns inconclusive at firmness 0.54" in why
    assert "[-0.097, 0.231]" in why and "reported" not in why
    assert sensitivity.flakiness({"firmness": None, "criteria": []}) == ""


def test_the_matrix_warns_of_flaky_cells(tmp_path):
    """A fake claim that only just passes under a fault (its seeds straddle the band) is named flaky in the document
    and in a warning line, while its cell still counts as it came out."""
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "test_c3_fake.py").write_text(textwrap.dedent('''
        import pytest
        from harness.record import decision
        from model.faults import active_fault
        pytestmark = pytest.mark.claim("C3")

        def test_c3(evidence, fast):
            evidence.claim("C3", title="t", statement="s", strength="strong")
            c = evidence.criterion("borderline", rule=decision.band(0.0, None, reason="r"), prediction="p",
                                   metric="m", fast=True)
            c.sample([1.0, 1.1, 0.9] if active_fault() is None else [1.0, 0.2, 1.9])
    '''))
    lines = []
    doc = sensitivity.measure(["no_scale"], [], claims_dir=claims, progress=lines.append, jobs=1)
    assert [(f["fault"], f["claim"]) for f in doc["flaky"]] == [("no_scale", "C3")]
    assert any(line.startswith("[sensitivity] WARNING flaky cell no_scale x C3") for line in lines)


def test_calibration_rows_count_repeats_over_ordered_pairs():
    """harness.suite.calibration (issue 26): a criterion decided the same in 3 runs repeats at rate 1; one that flips once
    in 3 repeats 1/3 of the ordered pairs; its predicted firmness is the mean over runs."""
    from harness.suite import calibration

    def rec(outcome, firm):
        return {"C9": {"criteria": [{"name": "a", "counts": True, "fast": True, "outcome": outcome,
                                     "firmness": firm},
                                    {"name": "r", "counts": False, "fast": True, "outcome": "passed",
                                     "firmness": 1.0}]}}
    rows = calibration.rows({0: rec("passed", 0.9), 1: rec("passed", 0.8), 2: rec("inconclusive", 0.4)})
    assert len(rows) == 1 and rows[0]["criterion"] == "C9 a" and rows[0]["runs"] == 3
    assert rows[0]["predicted"] == pytest.approx(0.7) and rows[0]["observed"] == pytest.approx(1 / 3)
    assert "| C9 a | 0.70 | 0.33 | 3 |" in calibration.markdown(rows, [0, 1, 2])
    trained = {m: {"C9": {**r["C9"], "verdict": v, "firmness": f}} for m, r, v, f in (
        (0, rec("passed", 0.9), "supported", 0.6), (1, rec("passed", 0.8), "supported", 0.7),
        (2, rec("inconclusive", 0.4), "inconclusive", 0.5))}
    by_name = {r["criterion"]: r for r in calibration.rows(trained, fast=False)}
    assert set(by_name) == {"C9 a", "C9 (verdict)"} and by_name["C9 (verdict)"]["predicted"] == pytest.approx(0.6)
    assert "| [0.5, 0.7) | 1 |" in calibration.markdown(list(by_name.values()), [0, 1, 2], fast=False)


def test_calibration_keeps_each_master_seeds_report_directory_when_asked(tmp_path, monkeypatch):
    """--keep DIR: each master seed's runs go to DIR/m<seed> (re-decidable later), not to a temporary directory."""
    from harness.suite import calibration
    seen = []

    def run_fast(ids, *, fault, master_seed, report_dir, claims_dir, fast, profile):
        seen.append((Path(report_dir), profile))
        return {"C9": {"verdict": "supported"}}
    monkeypatch.setattr(sensitivity, "run_fast", run_fast)
    calibration.collect([3, 4], claims_dir=tmp_path, jobs=1, progress=lambda m: None, claim_ids=["C9"],
                        keep=tmp_path / "kept", fast=False, profile="standard")
    assert sorted(seen) == [(tmp_path / "kept" / "m3", "standard"), (tmp_path / "kept" / "m4", "standard")]
    assert "at standard budgets" in calibration.markdown([], [3, 4], fast=False, profile="standard")


def test_declared_flaky_cells_name_real_cells_and_give_a_reason():
    """Issue 25: a cell below the flaky line is either warned of or declared with its measured reason."""
    for (fault, cid), reason in sensitivity.FLAKY_DECLARED.items():
        assert (fault is None or fault in FAULTS) and len(reason.split()) >= 8, (fault, cid)


def test_a_kept_fast_run_stands_in_only_for_the_same_clean_commit_fault_seed_and_claims(tmp_path, monkeypatch):
    """CI runs the matrix first; tests/suite/test_sensitivity_modules.py then reads its cells (FAST_RUNS_ENV) instead of
    training them twice, but only a run of the same command at the same clean commit may stand in."""
    import json as _json

    def no_training(*a, **k):
        raise AssertionError("trained again")

    kept = tmp_path / "no_scale-m0" / "results.json"
    kept.parent.mkdir()
    kept.write_text(_json.dumps({"run": {"git_commit": "abc", "git_dirty": False,
                                         "fast_claims_requested": ["C1", "M0", "R1"]},
                                 "claims": {"M0": {"verdict": "supported"}, "R1": {"verdict": "refuted"}}}))
    monkeypatch.setenv(sensitivity.FAST_RUNS_ENV, str(tmp_path))
    monkeypatch.setattr(sensitivity, "clean_commit", lambda root: "abc")
    monkeypatch.setattr(sensitivity.subprocess, "run", no_training)
    args = dict(fault="no_scale", master_seed=0, report_dir=tmp_path / "r", claims_dir=sensitivity.ROOT / "claims")
    assert sensitivity.run_fast(["R1", "C1"], **args) == {"R1": {"verdict": "refuted"}}   # C1 recorded nothing
    for change in (dict(fault="scale_by_dk"), dict(master_seed=1)):                     # another cell
        with pytest.raises(AssertionError, match="trained again"):
            sensitivity.run_fast(["R1"], **{**args, **change})
    with pytest.raises(AssertionError, match="trained again"):                         # a claim it did not run
        sensitivity.run_fast(["R1", "C5"], **args)
    with pytest.raises(AssertionError, match="trained again"):                         # other arguments
        sensitivity.run_fast(["R1"], **args, extra_args=["--device", "cpu"])
    monkeypatch.setattr(sensitivity, "clean_commit", lambda root: "def")                              # another commit
    with pytest.raises(AssertionError, match="trained again"):
        sensitivity.run_fast(["R1"], **args)
    monkeypatch.setattr(sensitivity, "clean_commit", lambda root: None)                              # uncommitted changes
    with pytest.raises(AssertionError, match="trained again"):
        sensitivity.run_fast(["R1"], **args)
