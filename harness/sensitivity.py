"""Suite sensitivity (issue 10): inject each fault a claim is about and check the suite catches it.

A verification suite is worth the faults it catches. For every fault in ``model.faults.FAULTS``
this runs, in a pytest subprocess, the claim modules that must go red under it (their *fast*
criteria, ``--fast --inject-fault NAME``), and records which did. The converse, specificity: with
no fault, the same modules are run at several master seeds and must keep their verdict
(``supported``) at every one. The result goes to ``<report-dir>/sensitivity.json`` (schema in
``harness/report.py``), which the HTML report renders as a fault x claim matrix.

    python -m harness.sensitivity                      # all faults, specificity at master seeds 0,1,2
    python -m harness.sensitivity --faults no_scale    # one fault (and specificity at 0,1,2)
    python -m harness.sensitivity --jobs 2             # two pytest subprocesses side by side

Exit status: 0 when sensitivity is 1.0 and every specificity run kept its verdicts, 1 otherwise,
2 for a usage error. "Caught" means the claim's verdict was ``refuted`` or ``inconclusive``; a crash
(``error``) is not counted as a catch, since a suite that crashes under a fault has not shown it can
tell the fault apart.
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
from typing import Any, Sequence

from model.faults import FAULTS

from .results import write_json_atomic

#: fault -> the claim ids that must go red under it (issue 10's table).
EXPECTED_CATCHERS: dict[str, tuple[str, ...]] = {
    "no_scale": ("R1", "C4", "R2"),
    "scale_by_dk": ("R1", "R2"),
    "uniform_attention": ("C2", "C5", "C1"),
    "single_head": ("C5",),
    "causal_leak": ("M0",),
    "no_positional_encoding": ("C1",),
}

CAUGHT_VERDICTS = ("refuted", "inconclusive")
ROOT = Path(__file__).resolve().parent.parent


def claim_module(claim_id: str, claims_dir: Path) -> Path:
    """The one module ``claims/test_<id>_*.py`` of a claim id (ValueError if none or several)."""
    found = sorted(claims_dir.glob(f"test_{claim_id.lower()}_*.py"))
    if len(found) != 1:
        raise ValueError(f"expected one module claims/test_{claim_id.lower()}_*.py for {claim_id}, found "
                         f"{[p.name for p in found] or 'none'}")
    return found[0]


def run_claims(claim_ids: Sequence[str], *, fault: str | None, master_seed: int, report_dir: Path,
               claims_dir: Path, extra_args: Sequence[str] = ()) -> dict[str, str]:
    """Run the fast criteria of ``claim_ids`` in a pytest subprocess; return {claim id: verdict}."""
    modules = [str(claim_module(cid, claims_dir)) for cid in claim_ids]
    # -p/-c/--rootdir pin the project's plugin and settings whatever directory the modules live in
    cmd = [sys.executable, "-m", "pytest", *modules, "-p", "harness.plugin", "-c", str(ROOT / "pyproject.toml"),
           "--rootdir", str(ROOT), "--fast", "--profile", "smoke",
           "--master-seed", str(master_seed), "--report-dir", str(report_dir),
           "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *extra_args]
    if fault:
        cmd += ["--inject-fault", fault]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    results_path = report_dir / "results.json"
    if not results_path.is_file():
        raise RuntimeError(f"pytest wrote no results.json (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"\n{proc.stderr[-3000:]}")
    claims = json.loads(results_path.read_text(encoding="utf-8"))["claims"]
    return {cid: claims.get(cid, {}).get("verdict", "not run") for cid in claim_ids}


def measure(faults: Sequence[str], master_seeds: Sequence[int], *, claims_dir: Path,
            progress=print, jobs: int = 1) -> dict[str, Any]:
    """The sensitivity.json document: per fault the expected and caught claims, then specificity.

    Every fault run and every no-fault run is its own pytest subprocess, independent of the others: ``jobs``
    of them run side by side (2 on a 2-core machine; each trains on one thread)."""
    t0 = time.perf_counter()
    doc: dict[str, Any] = {"faults": {}, "mode": "fast criteria, smoke budgets"}
    catchers = sorted({cid for f in faults for cid in EXPECTED_CATCHERS[f]})
    with tempfile.TemporaryDirectory(prefix="sensitivity-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:

        def timed(claim_ids, fault, master_seed, name):
            t = time.perf_counter()
            verdicts = run_claims(claim_ids, fault=fault, master_seed=master_seed, report_dir=Path(tmp) / name,
                                  claims_dir=claims_dir)
            return verdicts, round(time.perf_counter() - t, 1)

        fault_runs = {}
        for fault in faults:
            progress(f"[sensitivity] fault {fault}: running {', '.join(EXPECTED_CATCHERS[fault])} (fast criteria)")
            fault_runs[fault] = pool.submit(timed, list(EXPECTED_CATCHERS[fault]), fault, 0, fault)
        clean_runs = {}
        for ms in master_seeds:
            progress(f"[sensitivity] no fault, master seed {ms}: running {', '.join(catchers)}")
            clean_runs[ms] = pool.submit(timed, catchers, None, ms, f"clean-{ms}")
        n_expected = n_caught = 0
        for fault, fut in fault_runs.items():
            verdicts, duration = fut.result()
            expected = list(EXPECTED_CATCHERS[fault])
            caught = [cid for cid, v in verdicts.items() if v in CAUGHT_VERDICTS]
            n_expected += len(expected)
            n_caught += len(caught)
            doc["faults"][fault] = {"expected": expected, "caught": caught, "verdicts": verdicts,
                                    "description": FAULTS[fault], "duration_s": duration}
            progress(f"[sensitivity] fault {fault}: caught {len(caught)}/{len(expected)}: {verdicts} ({duration} s)")
        doc["sensitivity"] = n_caught / n_expected if n_expected else None
        if master_seeds:
            per_seed: dict[str, list[str]] = {cid: [] for cid in catchers}
            for ms, fut in clean_runs.items():
                verdicts, duration = fut.result()
                for cid, v in verdicts.items():
                    per_seed[cid].append(v)
                progress(f"[sensitivity] no fault, master seed {ms}: {verdicts} ({duration} s)")
            stable = all(v == "supported" for vs in per_seed.values() for v in vs)
            doc["specificity"] = {"master_seeds": list(master_seeds), "stable": stable,
                                  **{f"verdicts/{cid}": ", ".join(vs) for cid, vs in per_seed.items()}}
    doc["duration_s"] = round(time.perf_counter() - t0, 1)
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.sensitivity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", default="all",
                        help=f"comma-separated faults, or 'all' (valid: {', '.join(EXPECTED_CATCHERS)})")
    parser.add_argument("--master-seeds", default="0,1,2",
                        help="master seeds for the no-fault specificity runs; '' skips them (default 0,1,2)")
    parser.add_argument("--report-dir", default=str(ROOT / "reports"), help="where sensitivity.json goes")
    parser.add_argument("--jobs", type=int, default=1,
                        help="pytest subprocesses side by side (default 1; 2 on a 2-core machine)")
    parser.add_argument("--claims-dir", default=str(ROOT / "claims"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    faults = list(EXPECTED_CATCHERS) if args.faults == "all" else [f for f in args.faults.split(",") if f]
    unknown = [f for f in faults if f not in EXPECTED_CATCHERS]
    if unknown or not faults:
        parser.error(f"unknown fault(s) {unknown}; valid: {', '.join(EXPECTED_CATCHERS)}")
    try:
        master_seeds = [int(s) for s in args.master_seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--master-seeds takes comma-separated integers, got {args.master_seeds!r}")
    if args.jobs < 1:
        parser.error(f"--jobs takes a positive integer, got {args.jobs}")
    doc = measure(faults, master_seeds, claims_dir=Path(args.claims_dir), progress=lambda m: print(m, flush=True),
                  jobs=args.jobs)
    report_dir = Path(args.report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(report_dir / "sensitivity.json", doc)
    results = report_dir / "results.json"
    if results.is_file():           # re-render so the matrix shows up in index.html
        from .report import main as render
        render([str(results)])
    ok = doc["sensitivity"] == 1.0 and doc.get("specificity", {}).get("stable", True)
    print(f"sensitivity = {doc['sensitivity']:.3f} (caught / expected); "
          f"specificity {'stable' if doc.get('specificity', {}).get('stable', True) else 'UNSTABLE'}; "
          f"{doc['duration_s']:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
