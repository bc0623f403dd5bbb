"""Suite sensitivity and specificity (issues 10, 20): every claim's fast criteria under every fault.

A verification suite is worth the faults it catches, and only if it stays quiet about the ones it is not about.
For every fault in ``model.faults.FAULTS`` this runs, in a pytest subprocess, every claim module that has fast
criteria (``--fast --inject-fault NAME``, smoke budgets), and once more with no fault at each master seed. Each
cell of the fault x claim matrix is then:

* an **expected** cell (the claim is about that fault, ``EXPECTED_CATCHERS``): a *catch* only when the verdict is
  ``refuted``. ``inconclusive`` is a *weak catch*, shown apart and not counted: a module that lost its fast
  criterion would be inconclusive under every fault and would otherwise "catch" them all;
* an **off-target** cell: it must keep the verdict the same claim got with no fault at the same master seed, or
  be an expected side effect listed in ``SIDE_EFFECTS`` with its one-line reason.

``sensitivity`` = expected cells refuted / expected cells; ``specificity`` = off-target cells that kept their
no-fault verdict / off-target cells (side effects excluded). With no fault every module must also keep its
verdict (``supported``) at every master seed (``stability``). The document goes to
``<report-dir>/sensitivity.json`` (schema in ``harness/report/html.py``), rendered as the matrix in index.html.

The matrix reads criteria too (issue 38): each counted fast criterion must come out refuted under every fault its
``falsified_by`` names (``criteria_caught``). Criteria that need training are proven by ``--criteria``: every
claim module runs at smoke budgets (not ``--fast``) under each fault its counted criteria name, and
``reports/falsifiers.json`` records each counted criterion's outcome under its falsifiers, with its fingerprint;
tests/suite/test_falsifiers.py fails when a counted criterion of the committed baseline has no recorded
refutation under its current fingerprint. ``--criteria --profile standard`` measures them at standard budgets, on the
standard profile's master seed (the criteria lock's, ``harness.record.lock``), and merges the rows in under the
file's ``profiles.standard`` (the smoke rows stay where they are): a criterion counted only at standard (C2's
``deep_conv_advantage_grows_with_distance``, R3's ``lean_memory_ratio``) is proven there, and the test reads
``reports/standard.json`` for those (issue 47, mechanism 4).

    python -m harness.suite.sensitivity --jobs 2             # every fault, every claim; no-fault at master seeds 0,1,2
    python -m harness.suite.sensitivity --faults no_scale    # one fault (and the no-fault runs)
    python -m harness.suite.sensitivity --criteria --jobs 2  # every counted criterion under its falsifiers
    python -m harness.suite.sensitivity --criteria --claims C2,C3   # those claims' rows, merged into the file
    python -m harness.suite.sensitivity --criteria --claims C2 --profile standard   # at standard: profiles.standard

Exit status: 0 when sensitivity and specificity are both 1.0, every counted fast criterion is refuted under its
falsifiers and the no-fault runs are stable (``--criteria``: every counted criterion refuted by a falsifier), 1
otherwise, 4 for a usage error (one line). A crash (``error``) is never a catch.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from model.faults import FAULTS

from harness import profiles
from harness.record.results import clean_commit, write_json_atomic
from harness.settings import lock_master_seed
from harness.suite import OneLineParser

#: fault -> the claim ids that must be refuted under it, from each claim's profile file (REFUTED_BY_FAULTS)
EXPECTED_CATCHERS: dict[str, tuple[str, ...]] = {
    fault: tuple(c for c, faults in profiles.REFUTED_BY_FAULTS.items() if fault in faults) for fault in FAULTS}
#: fault -> (a claim that must catch it, its fast counted criterion the fault refutes, a claim the fault is not about):
#: the cells tests/suite/test_sensitivity_modules.py runs, from each claim's profile file (FAST_CELLS), the catchers
#: whose smoke budget is the longest first
FAST_CELLS: dict[str, tuple[str, str, str]] = dict(sorted(
    profiles.FAST_CELLS.items(), key=lambda kv: -profiles.WALL_BUDGET_S["smoke"].get(kv[1][0], 0)))
#: (fault, claim) -> why an off-target cell may move: the fault breaks something that claim also measures
SIDE_EFFECTS: dict[tuple[str, str], str] = {
    (fault, c): why for c, reasons in profiles.SIDE_EFFECTS.items() for fault, why in reasons.items()}

CAUGHT, WEAK = "refuted", "inconclusive"
ROOT = Path(__file__).resolve().parents[2]
#: a cell whose claim (or one of its counted fast criteria) has a firmness below this in that run is *flaky*: its
#: outcome may differ on another machine's floating-point path (issue 25), so the matrix names it before it fails CI
FLAKY_BELOW = 0.9
#: (fault or None, claim) -> why a cell below FLAKY_BELOW is known and accepted: printed as a declared cell, not a
#: warning (each claim's profile file, FLAKY_DECLARED)
FLAKY_DECLARED: dict[tuple[str | None, str], str] = {
    (fault, c): why for c, reasons in profiles.FLAKY_DECLARED.items() for fault, why in reasons.items()}


def matrix_claims(claims_dir: Path) -> list[str]:
    """The claim ids whose modules are in the matrix: every module under claims/ (each runs its fast criteria;
    one with none records no claim in a --fast run and drops out of the matrix)."""
    from harness.record.results import claim_sort_key

    ids = []
    for path in sorted(claims_dir.glob("test_*_*.py")):
        ids.append(path.name.split("_")[1].upper())
    return sorted(set(ids), key=claim_sort_key)


def classify(fault: str, cid: str, verdict: str, no_fault_verdict: str | None) -> str:
    """One cell: caught / weak / missed (expected cells); kept / side effect / moved (off-target cells)."""
    if cid in EXPECTED_CATCHERS[fault]:
        return "caught" if verdict == CAUGHT else "weak" if verdict == WEAK else "missed"
    if verdict == no_fault_verdict:
        return "kept"
    return "side effect" if (fault, cid) in SIDE_EFFECTS else "moved"


def claim_module(claim_id: str, claims_dir: Path) -> Path:
    """The one module ``claims/test_<id>_*.py`` of a claim id (ValueError if none or several)."""
    found = sorted(claims_dir.glob(f"test_{claim_id.lower()}_*.py"))
    if len(found) != 1:
        raise ValueError(f"expected one module claims/test_{claim_id.lower()}_*.py for {claim_id}, found "
                         f"{[p.name for p in found] or 'none'}")
    return found[0]


#: a directory where ``run_fast`` keeps each run's results.json (``<fault or no_fault>-m<master seed>/``) and from
#: which a later call with the same fault, master seed and claims at the same clean commit reads it instead of
#: training again: CI runs the matrix first, and tests/suite/test_sensitivity_modules.py then reads the matrix's cells
#: (the same command, seeds and commit: the same evidence) rather than training six of them twice
FAST_RUNS_ENV = "ATTN_CLAIMS_FAST_RUNS"


def _kept_run(claim_ids: Sequence[str], fault: str | None, master_seed: int, claims_dir: Path,
              extra_args: Sequence[str]) -> tuple[Path | None, dict[str, dict[str, Any]] | None]:
    """(where this run is kept under ``FAST_RUNS_ENV``, its claim records if a kept run can stand for it)."""
    store = os.environ.get(FAST_RUNS_ENV)
    head = clean_commit(ROOT) if store else None
    if not store or not head or extra_args or claims_dir.resolve() != (ROOT / "claims").resolve():
        return None, None
    path = Path(store) / f"{fault or 'no_fault'}-m{master_seed}" / "results.json"
    if not path.is_file():
        return path, None
    doc = json.loads(path.read_text(encoding="utf-8"))
    run, claims = doc.get("run", {}), doc.get("claims", {})
    ran = set(run.get("fast_claims_requested") or claims)
    if run.get("git_commit") != head or run.get("git_dirty") or not set(claim_ids) <= ran:
        return path, None
    return path, {cid: rec for cid, rec in claims.items() if cid in claim_ids}


def run_fast(claim_ids: Sequence[str], *, fault: str | None, master_seed: int, report_dir: Path,
             claims_dir: Path, extra_args: Sequence[str] = (), fast: bool = True,
             profile: str = "smoke") -> dict[str, dict[str, Any]]:
    """Run the fast criteria of ``claim_ids`` at smoke budgets in a pytest subprocess (the suite's own command for
    one cell of the matrix, also used by tests/suite/test_sensitivity_modules.py); return results.json's claim records
    (a claim that recorded nothing is absent). With ``FAST_RUNS_ENV`` set, a run kept there at this clean commit
    with the same fault and master seed over these claims is read instead of trained again. ``fast=False``: every
    criterion at ``profile``'s budgets (``--criteria``; smoke unless asked), never kept."""
    kept_at, kept = (_kept_run(claim_ids, fault, master_seed, claims_dir, extra_args) if fast and profile == "smoke"
                     else (None, None))
    if kept is not None:
        print(f"[sensitivity] {fault or 'no fault'} at master seed {master_seed}: reading the run kept at {kept_at} "
              f"(same commit, same command)", file=sys.stderr, flush=True)
        return kept
    modules = [str(claim_module(cid, claims_dir)) for cid in claim_ids]
    # -p/-c/--rootdir pin the project's plugin and settings whatever directory the modules live in
    cmd = [sys.executable, "-m", "pytest", *modules, "-p", "harness.plugin", "-c", str(ROOT / "pyproject.toml"),
           "--rootdir", str(ROOT), *(["--fast"] if fast else []), "--profile", profile,
           "--master-seed", str(master_seed), "--report-dir", str(report_dir),
           "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *extra_args]
    if fault:
        cmd += ["--inject-fault", fault]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    results_path = report_dir / "results.json"
    if not results_path.is_file():
        raise RuntimeError(f"pytest wrote no results.json (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"\n{proc.stderr[-3000:]}")
    doc = json.loads(results_path.read_text(encoding="utf-8"))
    if kept_at is not None:
        doc["run"]["fast_claims_requested"] = list(claim_ids)
        kept_at.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(kept_at, doc)
    return doc["claims"]


def verdicts_and_flaky(claim_ids: Sequence[str], claims: Mapping[str, Mapping[str, Any]]
                       ) -> tuple[dict[str, str], dict[str, str]]:
    """({claim id: verdict}, {claim id: why its cell is flaky}, see ``flakiness``) of one run's claim records."""
    verdicts = {cid: claims.get(cid, {}).get("verdict", "not run") for cid in claim_ids}
    flaky = {cid: why for cid in claim_ids if cid in claims and (why := flakiness(claims[cid]))}
    return verdicts, flaky


def falsifier_outcomes(record: Mapping[str, Any], fault: str | None) -> dict[str, str]:
    """{criterion: outcome} of a claim record's counted criteria that name ``fault`` (None: "none") among their
    falsifiers; an unmeasured or errored criterion reads as its outcome or "not measured"."""
    from harness.record.verdict import COUNTED, role_of

    name = fault or NO_FAULT
    return {c["name"]: c.get("outcome") or "not measured" for c in record.get("criteria", [])
            if role_of(c) == COUNTED and name in (c.get("falsified_by") or ())}


def add_matrix_rows(rows: dict[str, Any], cid: str, record: Mapping[str, Any], fault: str | None) -> None:
    """Issue 64, item 6: each fast counted criterion's outcome under ``fault`` as a falsifiers.json row, with its
    fingerprint (the matrix proves the fast ones, ``--criteria`` the trained ones; ``merge_matrix_rows``)."""
    from harness.record.verdict import COUNTED, role_of

    name = fault or NO_FAULT
    for c in record.get("criteria", []):
        if role_of(c) != COUNTED or not c.get("fast") or name not in (c.get("falsified_by") or ()):
            continue
        row = rows.setdefault(f"{cid}/{c['name']}", {"claim": cid, "criterion": c["name"].split("/")[0],
                                                     "proven_by": "fault matrix",
                                                     "falsified_by": list(c.get("falsified_by") or ()),
                                                     "outcomes": {}, "fingerprint": c.get("fingerprint")})
        row["outcomes"][name] = c.get("outcome") or "not measured"
        row["refuted"] = any(o == CAUGHT for o in row["outcomes"].values())


def merge_matrix_rows(old: Mapping[str, Any] | None, rows: Mapping[str, Any], run: Mapping[str, Any]
                      ) -> dict[str, Any]:
    """falsifiers.json with the fault matrix's rows (``add_matrix_rows``) over its smoke rows of the same criteria;
    every other row, and the other profiles' rows, kept."""
    out = dict(old or {"schema_version": 1, "mode": "", "criteria": {}, "faults": {}})
    out["criteria"] = {**out.get("criteria", {}), **rows}
    out["matrix_run"] = dict(run)
    return out


def flakiness(record: Mapping[str, Any], below: float = FLAKY_BELOW) -> str:
    """Why a claim's cell is flaky in this run ('' when it is not): the claim's firmness, or that of a counted fast
    criterion, below ``below``. Firmness is the share of simulated fresh seed sets that repeat the outcome, so a
    cell under 0.9 can flip on a machine whose floating-point path moves a seed a little (issue 25)."""
    weak = []
    f = record.get("firmness")
    if isinstance(f, (int, float)) and f < below:
        weak.append(f"claim firmness {f:.2f}")
    for c in record.get("criteria", []):
        cf = c.get("firmness")
        if c.get("counts", True) and c.get("fast") and isinstance(cf, (int, float)) and cf < below:
            weak.append(f"{c.get('name')} {c.get('outcome')} at firmness {cf:.2f}"
                        + (f", interval [{c['ci'][0]:.3g}, {c['ci'][1]:.3g}]" if c.get("ci") else ""))
    return "; ".join(weak)


def measure(faults: Sequence[str], master_seeds: Sequence[int], *, claims_dir: Path,
            progress=print, jobs: int = 1, claim_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """The sensitivity.json document: the fault x claim matrix, sensitivity, specificity and stability.

    Every fault run and every no-fault run is its own pytest subprocess, independent of the others: ``jobs``
    of them run side by side (2 on a 2-core machine; each trains on one thread). The fault runs use master seed 0,
    and their off-target cells compare with the no-fault run at master seed 0 (run even if not asked for)."""
    t0 = time.perf_counter()
    ids = list(claim_ids) if claim_ids is not None else matrix_claims(claims_dir)
    seeds_clean = sorted(set(master_seeds) | {0})
    doc: dict[str, Any] = {"faults": {}, "claims": ids, "mode": "fast criteria, smoke budgets, every claim under "
                                                                "every fault"}
    with tempfile.TemporaryDirectory(prefix="sensitivity-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:

        def timed(fault, master_seed, name):
            t = time.perf_counter()
            records = run_fast(ids, fault=fault, master_seed=master_seed, report_dir=Path(tmp) / name,
                               claims_dir=claims_dir)
            verdicts, flaky = verdicts_and_flaky(ids, records)
            return verdicts, flaky, round(time.perf_counter() - t, 1), records

        clean_runs = {ms: pool.submit(timed, None, ms, f"clean-{ms}") for ms in seeds_clean}
        fault_runs = {}
        for fault in faults:
            progress(f"[sensitivity] fault {fault}: running {', '.join(ids)} (fast criteria)")
            fault_runs[fault] = pool.submit(timed, fault, 0, fault)
        clean, flaky_cells = {}, []

        def warn_flaky(fault: str | None, ms: int, flaky: Mapping[str, str], cells: Mapping[str, str]) -> None:
            for cid, why in flaky.items():
                cell = cells.get(cid)
                if cell == "side effect":
                    continue
                # a declared side effect is known to move the cell, and so to leave it unfirm where it did not move
                declared = FLAKY_DECLARED.get((fault, cid), "") or SIDE_EFFECTS.get((fault, cid), "")
                flaky_cells.append({"fault": fault, "master_seed": ms, "claim": cid, "cell": cell, "why": why,
                                    "declared": declared})
                if declared:
                    progress(f"[sensitivity] declared flaky cell {fault or 'no fault'} x {cid} (master seed {ms}, "
                             f"{cell}): {why}; {declared}")
                else:
                    progress(f"[sensitivity] WARNING flaky cell {fault or 'no fault'} x {cid} (master seed {ms}, "
                             f"{cell}): {why}; below {FLAKY_BELOW} it may flip on another machine")

        for ms, fut in clean_runs.items():
            clean[ms], flaky, duration, _ = fut.result()
            progress(f"[sensitivity] no fault, master seed {ms}: {clean[ms]} ({duration} s)")
            warn_flaky(None, ms, flaky, {cid: "no fault" for cid in flaky})
        base = clean[0]
        # a module with no fast criteria skips itself under --fast: it has no cell in the matrix
        doc["not_in_matrix"] = sorted(cid for cid in ids if base.get(cid) == "not run")
        doc["no_fault"] = base = {cid: v for cid, v in base.items() if v != "not run"}
        counts = {"caught": 0, "expected": 0, "kept": 0, "off_target": 0}
        criteria_caught: dict[str, str] = {}
        for fault, fut in fault_runs.items():
            verdicts, flaky, duration, records = fut.result()
            for cid, rec in records.items():
                for crit, outcome in falsifier_outcomes(rec, fault).items():
                    criteria_caught[f"{fault} x {cid}/{crit}"] = outcome
                add_matrix_rows(doc.setdefault("criteria_rows", {}), cid, rec, fault)
            verdicts = {cid: v for cid, v in verdicts.items() if cid in base}
            cells = {cid: classify(fault, cid, v, base.get(cid)) for cid, v in verdicts.items()}
            warn_flaky(fault, 0, {c: w for c, w in flaky.items() if c in cells}, cells)
            expected = list(EXPECTED_CATCHERS[fault])
            counts["expected"] += len(expected)
            counts["caught"] += sum(cells[c] == "caught" for c in expected if c in cells)
            off = [c for c in cells if c not in expected and cells[c] != "side effect"]
            counts["off_target"] += len(off)
            counts["kept"] += sum(cells[c] == "kept" for c in off)
            doc["faults"][fault] = {
                "expected": expected, "caught": [c for c in expected if cells.get(c) == "caught"],
                "weak": [c for c in expected if cells.get(c) == "weak"], "verdicts": verdicts, "cells": cells,
                "side_effects": {c: SIDE_EFFECTS[(fault, c)] for c in cells if cells[c] == "side effect"},
                "description": FAULTS[fault], "duration_s": duration}
            bad = {c: f"{cells[c]} ({verdicts[c]})" for c in cells if cells[c] in ("weak", "missed", "moved")}
            progress(f"[sensitivity] fault {fault}: {verdicts}" + (f"; NOT AS EXPECTED: {bad}" if bad else "")
                     + f" ({duration} s)")
        doc["claims"] = list(base)
        doc["criteria_caught"] = criteria_caught
        missed = {k: v for k, v in criteria_caught.items() if v != CAUGHT}
        if missed:
            progress(f"[sensitivity] counted fast criteria NOT refuted under their falsifier: {missed}")
        doc["sensitivity"] = counts["caught"] / counts["expected"] if counts["expected"] else None
        doc["specificity"] = counts["kept"] / counts["off_target"] if counts["off_target"] else None
        doc["counts"] = counts
        doc["flaky"] = flaky_cells
        asked = [ms for ms in seeds_clean if ms in master_seeds]
        per_claim = {cid: [clean[ms].get(cid, "not run") for ms in asked] for cid in base}
        doc["stability"] = {"master_seeds": asked,
                            "stable": all(v == "supported" for vs in per_claim.values() for v in vs),
                            **{f"verdicts/{cid}": ", ".join(vs) for cid, vs in per_claim.items()}}
    doc["duration_s"] = round(time.perf_counter() - t0, 1)
    return doc


# ============================================================================ --criteria: reports/falsifiers.json
NO_FAULT = "none"           # a question's falsifier when the unfaulted model already answers "no"


def declared_falsifiers(claims_dir: Path, claim_ids: Sequence[str] | None = None, trained_only: bool = False
                        ) -> dict[str, dict[str, tuple[str, ...]]]:
    """claim id -> {counted criterion: the faults it names in ``falsified_by``}, read from each claim module's
    CRITERIA (its profile-independent declaration); ``trained_only``: leave out the ``fast`` ones."""
    from harness.record.verdict import COUNTED, role_of

    out = {}
    for cid in claim_ids or matrix_claims(claims_dir):
        out[cid] = {name: tuple(c.get("falsified_by", ())) for name, c in claim_criteria(cid, claims_dir).items()
                    if role_of(c) == COUNTED and not (trained_only and c.get("fast"))}
    return out


def claim_criteria(claim_id: str, claims_dir: Path) -> dict[str, Any]:
    """A claim module's ``CRITERIA`` (its profile-independent declaration), read from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_falsifiers_{claim_id.lower()}", claim_module(claim_id, claims_dir))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(getattr(module, "CRITERIA", {}))


def _declared_name(record_name: str, declared: Mapping[str, Any]) -> str | None:
    """The CRITERIA key a recorded criterion comes from: itself, or ``generalises`` for ``generalises/<task>``."""
    if record_name in declared:
        return record_name
    base = record_name.split("/")[0]
    return base if base in declared else None


def measure_criteria(claims_dir: Path, *, jobs: int = 1, progress=print,
                     claim_ids: Sequence[str] | None = None, profile: str = "smoke") -> dict[str, Any]:
    """The falsifiers.json document (at smoke) or its ``profiles.<profile>`` part: every counted criterion of
    ``claim_ids`` (default all) that trains (not ``fast``: the fast ones are the matrix's, ``criteria_caught``) under
    each fault its ``falsified_by`` names, at ``profile``'s budgets and master seed (0 at smoke; standard's from the
    criteria lock). One pytest subprocess per fault, over the claims whose trained criteria name it (so the shared
    sweep's memo serves the claims that share it)."""
    t0 = time.perf_counter()
    declared = declared_falsifiers(claims_dir, claim_ids, trained_only=True)
    by_fault: dict[str, list[str]] = {}
    for cid, crits in declared.items():
        for fault in sorted({f for fs in crits.values() for f in fs}):
            by_fault.setdefault(fault, []).append(cid)
    unknown = sorted(set(by_fault) - set(FAULTS) - {NO_FAULT})
    if unknown:
        raise ValueError(f"falsified_by names unknown fault(s) {unknown}; valid: {', '.join(FAULTS)}, {NO_FAULT}")
    master_seed = lock_master_seed(profile, None)[0]
    doc: dict[str, Any] = {"schema_version": 1, "mode": f"every counted criterion at {profile} budgets (not --fast) "
                           f"under each fault its falsified_by names, master seed {master_seed}", "criteria": {},
                           "faults": {}}
    with tempfile.TemporaryDirectory(prefix="falsifiers-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:

        def timed(fault: str, ids: list[str]):
            t = time.perf_counter()
            records = run_fast(ids, fault=None if fault == NO_FAULT else fault, master_seed=master_seed,
                               report_dir=Path(tmp) / fault, claims_dir=claims_dir, fast=False, profile=profile)
            return records, round(time.perf_counter() - t, 1)

        # the longest first: a fault that runs the shared sweep's claims or many claims
        order = sorted(by_fault, key=lambda f: -len(by_fault[f]))
        futures = {}
        for fault in order:
            progress(f"[falsifiers] {fault}: running {', '.join(by_fault[fault])} at {profile} budgets")
            futures[fault] = pool.submit(timed, fault, by_fault[fault])
        for fault in order:
            records, duration = futures[fault].result()
            doc["faults"][fault] = {"claims": by_fault[fault], "duration_s": duration}
            for cid in by_fault[fault]:
                rec = records.get(cid, {})
                seen = set()
                for c in rec.get("criteria", []):
                    name = _declared_name(c["name"], declared[cid])
                    if name is None or fault not in declared[cid][name] or c.get("fast"):
                        continue
                    seen.add(name)
                    entry = doc["criteria"].setdefault(f"{cid}/{c['name']}", {
                        "claim": cid, "criterion": name, "falsified_by": list(declared[cid][name]), "outcomes": {}})
                    entry["fingerprint"] = c.get("fingerprint")
                    entry["outcomes"][fault] = c.get("outcome") or "not measured"
                for name, faults in declared[cid].items():
                    if fault in faults and name not in seen:
                        entry = doc["criteria"].setdefault(f"{cid}/{name}", {
                            "claim": cid, "criterion": name, "falsified_by": list(faults), "outcomes": {},
                            "fingerprint": None})
                        entry["outcomes"][fault] = f"not measured at {profile}" if rec else "not run"
            progress(f"[falsifiers] {fault} ({duration} s): " + ", ".join(
                f"{k} {v['outcomes'][fault]}" for k, v in doc["criteria"].items() if fault in v["outcomes"]))
    for entry in doc["criteria"].values():
        entry["refuted"] = any(o == CAUGHT for o in entry["outcomes"].values())
    doc["run"] = {"git_commit": clean_commit(ROOT), "profile": profile, "master_seed": master_seed,
                  "date": time.strftime("%Y-%m-%d", time.gmtime()), "duration_s": round(time.perf_counter() - t0, 1)}
    return doc


def merge_falsifiers(old: Mapping[str, Any] | None, new: Mapping[str, Any], claim_ids: Sequence[str]
                     ) -> dict[str, Any]:
    """``new``'s rows for ``claim_ids`` over ``old``'s rows for every other claim (a partial re-run)."""
    if not old:
        return dict(new)
    keep = {k: v for k, v in old.get("criteria", {}).items() if v.get("claim") not in claim_ids
            or v.get("proven_by") == "fault matrix"}          # the matrix's rows are the matrix's to replace
    runs = {**old.get("runs", {}), **{cid: new["run"] for cid in claim_ids}}
    extra = {"matrix_run": old["matrix_run"]} if old.get("matrix_run") else {}
    return {**new, **extra, "criteria": {**keep, **new["criteria"]}, "runs": runs}


def merge_profile(old: Mapping[str, Any] | None, new: Mapping[str, Any], claim_ids: Sequence[str] | None
                  ) -> dict[str, Any]:
    """The file ``old`` with ``new`` (measured at a profile other than smoke) under ``profiles.<profile>``: merged
    with that profile's earlier rows for a partial re-run (``claim_ids``), replacing them otherwise. The smoke rows
    (the top level, the layout the file has always had) and every other profile's are kept."""
    profile = new["run"]["profile"]
    out = dict(old or {"schema_version": 1, "criteria": {}, "faults": {}})
    profiles_ = dict(out.get("profiles", {}))
    earlier = profiles_.get(profile)
    profiles_[profile] = merge_falsifiers(earlier, new, claim_ids) if claim_ids and earlier else {
        **new, "runs": {cid: new["run"] for cid in {r["claim"] for r in new["criteria"].values()}}}
    out["profiles"] = profiles_
    return out


def profile_rows(doc: Mapping[str, Any], profile: str) -> dict[str, Any]:
    """A falsifiers.json document's rows measured at ``profile``: the top level at smoke, ``profiles.<profile>``
    otherwise ({} when none)."""
    if profile == "smoke":
        return dict(doc.get("criteria", {}))
    return dict(doc.get("profiles", {}).get(profile, {}).get("criteria", {}))


def passed(doc: Mapping[str, Any]) -> bool:
    return doc["sensitivity"] == 1.0 and doc["specificity"] in (1.0, None) and doc["stability"]["stable"] and \
        all(v == CAUGHT for v in doc.get("criteria_caught", {}).values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.suite.sensitivity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", default="all",
                        help=f"comma-separated faults, or 'all' (valid: {', '.join(EXPECTED_CATCHERS)})")
    parser.add_argument("--master-seeds", default="0,1,2",
                        help="master seeds at which the no-fault runs must keep every verdict (default 0,1,2); "
                             "master seed 0 always runs, as the reference for the off-target cells")
    parser.add_argument("--report-dir", default=str(ROOT / "reports"), help="where sensitivity.json goes")
    parser.add_argument("--jobs", type=int, default=1,
                        help="pytest subprocesses side by side (default 1; 2 on a 2-core machine)")
    parser.add_argument("--criteria", action="store_true",
                        help="every counted criterion under the faults its falsified_by names, at smoke budgets "
                             "(not --fast); writes falsifiers.json")
    parser.add_argument("--claims", default="",
                        help="with --criteria: comma-separated claim ids to re-run, merged into the existing file")
    parser.add_argument("--profile", default="smoke",
                        help="with --criteria: the budgets (default smoke; standard merges its rows in under "
                             "profiles.standard, on the criteria lock's master seed)")
    parser.add_argument("--claims-dir", default=str(ROOT / "claims"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs takes a positive integer, got {args.jobs}")
    if args.criteria:
        return main_criteria(args, parser)
    if args.profile != "smoke":
        parser.error("--profile goes with --criteria; the fault matrix runs at smoke budgets")
    faults = list(EXPECTED_CATCHERS) if args.faults == "all" else [f for f in args.faults.split(",") if f]
    unknown = [f for f in faults if f not in EXPECTED_CATCHERS]
    if unknown or not faults:
        parser.error(f"unknown fault(s) {unknown}; valid: {', '.join(EXPECTED_CATCHERS)}")
    try:
        master_seeds = [int(s) for s in args.master_seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--master-seeds takes comma-separated integers, got {args.master_seeds!r}")
    doc = measure(faults, master_seeds, claims_dir=Path(args.claims_dir), progress=lambda m: print(m, flush=True),
                  jobs=args.jobs)
    report_dir = Path(args.report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(report_dir / "sensitivity.json", doc)
    if doc.get("criteria_rows") and set(faults) == set(EXPECTED_CATCHERS):     # the whole matrix: its rows
        out = report_dir / "falsifiers.json"
        old = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else None
        write_json_atomic(out, merge_matrix_rows(old, doc["criteria_rows"], {
            "git_commit": clean_commit(ROOT), "profile": "smoke", "master_seed": 0,
            "date": time.strftime("%Y-%m-%d", time.gmtime())}))
    results = report_dir / "results.json"
    if results.is_file():           # re-render so the matrix shows up in index.html
        from harness.report.html import main as render
        render([str(results)])
    c = doc["counts"]
    spec = "n/a" if doc["specificity"] is None else f"{doc['specificity']:.3f}"
    print(f"sensitivity = {doc['sensitivity']:.3f} (refuted {c['caught']} / expected {c['expected']}); "
          f"specificity = {spec} (kept {c['kept']} / off-target {c['off_target']}); no-fault verdicts "
          f"{'stable' if doc['stability']['stable'] else 'UNSTABLE'} at master seeds "
          f"{doc['stability']['master_seeds']}; {len(doc['flaky'])} flaky cell(s) (firmness < {FLAKY_BELOW}; "
          f"{sum(1 for f in doc['flaky'] if not f.get('declared'))} undeclared); "
          f"{doc['duration_s']:.0f} s")
    return 0 if passed(doc) else 1


def main_criteria(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    claims_dir = Path(args.claims_dir)
    known = matrix_claims(claims_dir)
    ids = [c.strip().upper() for c in args.claims.split(",") if c.strip()] or known
    if set(ids) - set(known):
        parser.error(f"unknown claim id(s) {sorted(set(ids) - set(known))}; valid: {', '.join(known)}")
    if args.profile not in profiles.PROFILE_NAMES:
        parser.error(f"--profile {args.profile!r} is not valid; valid choices: {', '.join(profiles.PROFILE_NAMES)}")
    try:
        doc = measure_criteria(claims_dir, jobs=args.jobs, progress=lambda m: print(m, flush=True), claim_ids=ids,
                               profile=args.profile)
    except ValueError as e:
        parser.error(str(e))
    out = Path(args.report_dir) / "falsifiers.json"
    old = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else None
    if args.profile != "smoke":
        doc = merge_profile(old, doc, ids if args.claims else None)
    else:
        if args.claims and old:
            doc = merge_falsifiers(old, doc, ids)
        if old and old.get("profiles"):       # a smoke re-run keeps the rows measured at other profiles
            doc["profiles"] = old["profiles"]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, doc)
    rows = profile_rows(doc, args.profile)
    unmeasured = sorted(k for k, v in rows.items() if all(o.startswith("not ") for o in v["outcomes"].values()))
    missed = sorted(k for k, v in rows.items() if not v["refuted"] and k not in unmeasured)
    print(f"falsifiers: {len(rows) - len(missed) - len(unmeasured)} / {len(rows) - len(unmeasured)} trained counted "
          f"criteria measured at {args.profile} refuted by a falsifier"
          + (f"; NOT refuted: {', '.join(missed)}" if missed else "")
          + (f"; not measured at {args.profile}: {', '.join(unmeasured)}" if unmeasured else "")
          + f"; {out}")
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main())
