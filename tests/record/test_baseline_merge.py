"""Nothing lost (issue 46): ``--update-baseline`` of a subset merges into the baseline, an interrupted update leaves
the old file intact, and a claim leaves the baseline only through ``python -m harness.report baseline --drop``."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from harness.record import baseline as B
from harness.record import results as R
from harness.report import baseline_file

from tests.conftest import REPO, copy_fake_claims, run_pytest

COMMON = ("--device", "cpu", "-p", "no:randomly")
VOLATILE = ("duration_s",)   # wall time: the only field of a claim record two identical runs do not share


def _stable(claims: dict) -> dict:
    return {cid: {k: v for k, v in c.items() if k not in VOLATILE} for cid, c in claims.items()}


def _update(root, target, *tests, env=None):
    proc = run_pytest(root, *COMMON, "--report-dir", f"r-{target}", "--update-baseline", "--baseline", target,
                      *tests, env=env)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Five updates shared by the tests below: all three claims at once; the same three in two disjoint updates;
    F1 alone again with a moved score; F1 alone at another profile."""
    root = copy_fake_claims(tmp_path_factory.mktemp("merge"),
                            ["test_f1_supported.py", "test_f3_refuted.py", "test_q9_question.py"])
    read = lambda name: json.loads((root / name).read_text())  # noqa: E731
    _update(root, "base.json")
    out = {"root": root, "whole": read("base.json")}
    _update(root, "split.json", "test_f3_refuted.py")
    _update(root, "split.json", "test_f1_supported.py", "test_q9_question.py")
    out["split"] = read("split.json")
    out["subset"] = _update(root, "base.json", "test_f1_supported.py", env={"FAKE_F1_SCORE": "0.84"})
    out["after"] = read("base.json")
    out["other_profile"] = run_pytest(root, *COMMON, "--profile", "standard", "--report-dir", "r-prof",
                                      "--update-baseline", "--baseline", "base.json", "test_f1_supported.py")
    out["after_refusal"] = read("base.json")
    return out


def test_a_subset_update_keeps_the_other_claims_byte_for_byte(runs):
    before, after = runs["whole"], runs["after"]
    assert list(before["claims"]) == ["Q9", "F1", "F3"]
    assert "kept from earlier runs: Q9, F3" in runs["subset"].stdout
    assert list(after["claims"]) == ["Q9", "F1", "F3"]
    for cid in ("Q9", "F3"):       # not run: kept as they were, to the byte
        assert json.dumps(after["claims"][cid]) == json.dumps(before["claims"][cid])
        assert after["provenance"][cid] == before["provenance"][cid]
    assert after["claims"]["F1"]["metrics"]["score"] != before["claims"]["F1"]["metrics"]["score"]
    assert after["provenance"]["F1"]["started_at"] == after["run"]["started_at"]
    assert set(after["provenance"]["F1"]) == set(B.PROVENANCE_KEYS)
    R.validate(after)
    B.load_baseline(runs["root"] / "base.json")          # and it still gates


def test_two_disjoint_updates_give_the_file_one_update_of_both_gives(runs):
    both, split = runs["whole"], runs["split"]
    assert list(split["claims"]) == list(both["claims"]) == ["Q9", "F1", "F3"]
    assert _stable(split["claims"]) == _stable(both["claims"])
    assert set(split["provenance"]) == set(both["provenance"]) == {"Q9", "F1", "F3"}
    assert set(both) == set(split)
    assert split["provenance"]["F3"]["started_at"] <= split["provenance"]["F1"]["started_at"]


def test_a_run_of_another_profile_is_not_merged(runs):
    out = runs["other_profile"].stdout
    assert "baseline NOT updated" in out and "holds profile smoke" in out, out
    assert runs["after_refusal"] == runs["after"]


def test_an_update_interrupted_by_sigint_leaves_the_old_file_intact(tmp_path):
    root = copy_fake_claims(tmp_path, ["test_f1_supported.py", "test_f5_interrupt.py"])
    base = root / "base.json"
    base.write_text("the committed baseline\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "PYTEST_XDIST"))}
    env.update(PYTHONPATH=str(REPO), FAKE_INTERRUPT="wait")
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *COMMON, "--update-baseline",
                             "--baseline", "base.json"], cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            # a shell's background job starts with SIGINT ignored, and Python then installs no handler
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not (root / "f5-measuring").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)                # what Ctrl-C sends
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert base.read_text() == "the committed baseline\n"
    assert "baseline NOT updated: the run is incomplete" in out
    assert R.load(root / "reports" / "results.json")["run"]["complete"] is False   # and the results stay valid


def test_an_interrupt_during_the_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "baseline.json"
    target.write_text("the committed baseline\n")

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        R.write_json_atomic(target, {"claims": {}})
    assert target.read_text() == "the committed baseline\n"
    assert [p.name for p in tmp_path.iterdir()] == ["baseline.json"]


def _results(claims: dict, profile="smoke", **run) -> dict:
    return {"schema_version": R.SCHEMA_VERSION, "attention": None,
            "run": {"profile": profile, "started_at": run.get("started_at", "t1"), "git_commit": "c1", **run},
            "claims": {cid: {"id": cid, "verdict": v, "tables": {"per_seed": [1]}} for cid, v in claims.items()}}


def test_merge_keeps_order_and_says_where_each_claim_came_from():
    old = B.merge_baseline(None, _results({"C3": "supported", "R1": "refuted"}, started_at="t0"))
    assert old["provenance"]["C3"]["started_at"] == "t0" and "tables" not in old["claims"]["C3"]
    new = B.merge_baseline(old, _results({"C1": "refuted", "R1": "supported"}, started_at="t1"))
    assert list(new["claims"]) == ["C1", "C3", "R1"]
    assert new["claims"]["C3"] is old["claims"]["C3"]
    assert {cid: p["started_at"] for cid, p in new["provenance"].items()} == {"C1": "t1", "C3": "t0", "R1": "t1"}
    legacy = {k: v for k, v in old.items() if k != "provenance"}      # a file from before merging existed
    assert B.claim_provenance(legacy)["C3"]["started_at"] == "t0"
    with pytest.raises(B.BaselineError, match="a baseline is one profile"):
        B.merge_baseline(old, _results({"C1": "refuted"}, profile="standard"))
    kernel = {**_results({"C1": "refuted"}), "attention": {"name": "mine:attn"}}
    with pytest.raises(B.BaselineError, match="the kernel mine:attn"):
        B.merge_baseline(old, kernel)
    assert list(B.merge_baseline(old, _results({"C3": "x", "R1": "y"}, profile="standard"))["claims"]) == \
        ["C3", "R1"]                                   # replacing every claim: any profile


def test_drop_is_the_one_way_out(tmp_path, capsys):
    path = tmp_path / "baseline.json"
    base = B.merge_baseline(None, _results({"C3": "supported", "R1": "refuted"}))
    base["claims"] = {cid: {**c, **{k: c.get(k) for k in R.CLAIM_KEYS}, "criteria": [], "metrics": {},
                            "figures": []} for cid, c in base["claims"].items()}
    base["run"].update({k: base["run"].get(k) for k in R.RUN_KEYS})
    R.write_json_atomic(path, base)
    assert baseline_file.main([str(path), "--drop", "Q7"]) == 4
    assert "holds no claim Q7" in capsys.readouterr().err
    assert baseline_file.main([str(path)]) == 0
    assert "C3" in capsys.readouterr().out
    assert baseline_file.main([str(path), "--drop", "R1"]) == 0
    left = json.loads(path.read_text())
    assert list(left["claims"]) == list(left["provenance"]) == ["C3"]
    assert baseline_file.main([str(tmp_path / "none.json")]) == 4
