"""Issue 64: firmness calibrated on the replicated record, claim by claim (``calibration --replicates``).

The table in docs/profiles.md is generated from the replicate records the run log names; it must not drift from
them, and it must read each replicate once, from the record the log chose.
"""
import copy
import json
from pathlib import Path

from harness.record import lock as criteria_lock
from harness.report import findings
from harness.suite import calibration

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_calibration_block_is_the_replicate_records():
    h = criteria_lock.load(ROOT / criteria_lock.LOCK_FILE)["hash"]
    folder = ROOT / "reports" / "replicates" / h[:12]
    block = findings.between_markers((ROOT / "docs" / "profiles.md").read_text(encoding="utf-8"),
                                     calibration.REPLICATES_MARKER)
    assert block == calibration.replicates_markdown(folder), (
        "docs/profiles.md's replicate calibration differs from the records; run `python -m harness.suite.calibration "
        f"--replicates reports/replicates/{h[:12]} --write docs/profiles.md`")


def _replicate(src: dict, k: int, run: str, verdict: str, firmness: float) -> dict:
    rec = copy.deepcopy(src)
    rec["run"]["replicate"] = {**rec["run"]["replicate"], "k": k, "run": run, "file": f"r{k}-C5.json",
                               "claims": ["C5"]}
    rec["run"]["master_seed"] = 100 + k
    rec["claims"] = {"C5": {**rec["claims"]["C5"], "verdict": verdict, "firmness": firmness}}
    return rec


def _log(rec: dict, *, end: bool = True) -> list[dict]:
    rep = rec["run"]["replicate"]
    start = {"event": "start", "run": rep["run"], "lock": rep["lock"], "replicate": rep["k"], "K": rep["K"],
             "seed": rec["run"]["master_seed"], "claims": ["C5"], "part": "C5", "file": f"replicates/x/{rep['file']}",
             "vendor": "AuthenticAMD", "commit": "0" * 40, "dirty": False, "dry_run": False,
             "at": "2026-12-07T00:00:00+00:00", "workers": 2}
    stop = {"event": "end", "run": rep["run"], "outcome": {"C5": rec["claims"]["C5"]["verdict"]}, "duration_s": 1.0,
            "at": "2026-12-07T00:01:00+00:00"}
    return [start, stop] if end else [start]


def test_each_replicate_is_read_once_from_the_record_the_log_chose(tmp_path):
    src = json.loads(next((ROOT / "reports" / "replicates").glob("*/r1-*.json")).read_text(encoding="utf-8"))
    folder = tmp_path / "reports" / "replicates" / "x"
    folder.mkdir(parents=True)
    recs = {"r1-C5.json": _replicate(src, 1, "aaaa", "supported", 0.6),
            "r2-C5.json": _replicate(src, 2, "bbbb", "supported", 0.8),
            "r3-C5.json": _replicate(src, 3, "cccc", "inconclusive", 0.7),
            "r3-C5-again.json": _replicate(src, 3, "dddd", "supported", 0.9)}   # a re-roll after r3: not the record
    log = []
    for name, rec in recs.items():
        (folder / name).write_text(json.dumps(rec), encoding="utf-8")
        log += _log(rec)
    (tmp_path / "reports" / "runlog.jsonl").write_text("".join(json.dumps(e) + "\n" for e in log), encoding="utf-8")
    runs, blocks = calibration.from_replicates(folder)
    assert sorted(runs) == [1, 2, 3] and runs[3]["C5"]["verdict"] == "inconclusive"
    row = next(r for r in calibration.rows(runs, fast=False) if r["criterion"] == "C5 (verdict)")
    assert row["runs"] == 3 and abs(row["predicted"] - 0.7) < 1e-12
    assert abs(row["observed"] - 2 / 6) < 1e-12             # of 6 ordered pairs, only (1, 2) and (2, 1) agree
    text = calibration.replicates_markdown(folder)
    assert "replicates 1, 2, 3 of 8 in (master seeds 101, 102, 103; AuthenticAMD)" in text
    assert "| C5 (verdict) | 0.70 | 0.33 | 3 | supported 2, inconclusive 1 |" in text
