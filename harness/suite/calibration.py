"""Is firmness honest? Its calibration on this suite's own criteria (issue 26).

Firmness is the replication probability estimated from one run's seeds (``harness.record.decision``). This checks it the
only way a probability can be checked: run the same criteria again on fresh seeds and count. It runs every claim's
fast criteria at smoke budgets (the fault matrix's own command, ``harness.suite.sensitivity.run_fast``, no fault) at
several master seeds (disjoint seed sets), and for each counted criterion compares the firmness each run predicted
with how often the other runs repeated that run's outcome.

    python -m harness.suite.calibration --master-seeds 0,1,2,3,4 --jobs 2      # prints a Markdown table
    python -m harness.suite.calibration --trained --master-seeds 0,1,2,3,4,5,6,7 --jobs 2
    python -m harness.suite.calibration --trained --claims C4,R1 --master-seeds 201,202 --keep /tmp/cal  # runs kept

``--trained`` (issue 38, finding 11): every counted criterion and every claim's verdict at smoke budgets, not only
the fast criteria, so that the predictions between 0.5 and 0.9, which only trained criteria make, are checked too.
``--profile standard`` (issue 54, item 5) runs them at standard budgets, where the README reports firmness:

    python -m harness.suite.calibration --trained --profile standard --claims C1,C5 --master-seeds 301,302 --keep /tmp/cs

``--replicates FOLDER`` (issue 64) trains nothing: it reads the replicate records of the verdict of record
(``reports/replicates/<lock>``, the ones the run log says are the record) and sets each replicate's firmness beside
how often the replicates repeat, claim by claim; ``--write docs/profiles.md`` puts the table between that file's
``calibration-replicates`` markers (tests/suite/test_calibration.py fails when it drifts from the records):

    python -m harness.suite.calibration --replicates reports/replicates/<lock> --write docs/profiles.md

One row per criterion (mean predicted firmness, observed repeat rate over the ordered pairs of runs, outcomes),
then the same pooled into bins of predicted firmness. With a handful of runs and criteria that are nearly always
decided the same way, it can show gross miscalibration only (a criterion predicted 0.95 that flips every other run);
tests/record/test_firmness.py checks calibration finely on synthetic claims.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.suite import OneLineParser, sensitivity

BINS = ((0.0, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.0001))


def collect(master_seeds: Sequence[int], *, claims_dir: Path, jobs: int = 2, progress=print, fast: bool = True,
            claim_ids: Sequence[str] | None = None, keep: Path | None = None,
            profile: str = "smoke") -> dict[int, dict[str, Any]]:
    """{master seed: results.json's claim records} of the fast criteria (``fast=False``: every criterion at
    ``profile``'s budgets, smoke unless asked), no fault; ``claim_ids``: only those claims (default every claim module). ``keep``: each master
    seed's report directory goes to ``keep/m<seed>`` (its results.json can be re-decided later: ``python -m
    harness.report rejudge``), else to a temporary directory."""
    ids = list(claim_ids) if claim_ids else sensitivity.matrix_claims(claims_dir)
    with tempfile.TemporaryDirectory(prefix="calibration-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        root = Path(keep) if keep is not None else Path(tmp)
        futures = {m: pool.submit(sensitivity.run_fast, ids, fault=None, master_seed=m,
                                  report_dir=root / f"m{m}", claims_dir=claims_dir, fast=fast,
                                  profile=profile)
                   for m in master_seeds}
        out = {}
        for m, fut in futures.items():
            out[m] = fut.result()
            progress(f"[calibration] master seed {m}: " + ", ".join(f"{c} {r.get('verdict')}" for c, r in out[m].items()))
    return out


def rows(runs: Mapping[int, Mapping[str, Any]], fast: bool = True) -> list[dict[str, Any]]:
    """One row per counted (``fast``: counted fast) criterion, and with ``fast=False`` per claim's verdict too, with
    a firmness in some run: predicted (mean firmness), observed (share of ordered pairs of runs (m, m') where m'
    repeats m's outcome), runs, outcomes."""
    seen: dict[str, list[tuple[float | None, str]]] = {}
    for m in sorted(runs):
        for cid, rec in runs[m].items():
            if not fast and rec.get("verdict"):
                seen.setdefault(f"{cid} (verdict)", []).append((rec.get("firmness"), rec["verdict"]))
            for c in rec.get("criteria", []):
                if c.get("counts", True) and (c.get("fast") or not fast) and c.get("outcome"):
                    seen.setdefault(f"{cid} {c['name']}", []).append((c.get("firmness"), c["outcome"]))
    out = []
    for name, obs in seen.items():
        firm = [f for f, _ in obs if isinstance(f, (int, float))]
        outcomes = [o for _, o in obs]
        pairs = [(i, j) for i in range(len(obs)) for j in range(len(obs)) if i != j]
        if not firm or not pairs:
            continue
        repeated = sum(outcomes[i] == outcomes[j] for i, j in pairs) / len(pairs)
        out.append({"criterion": name, "predicted": sum(firm) / len(firm), "observed": repeated, "runs": len(obs),
                    "outcomes": ", ".join(f"{o} {outcomes.count(o)}" for o in dict.fromkeys(outcomes))})
    return out


#: the generated block of docs/profiles.md (``--replicates ... --write``)
REPLICATES_MARKER = "calibration-replicates"


def from_replicates(folder: Path, log: Path | None = None) -> tuple[dict[int, dict[str, Any]], dict[int, dict]]:
    """{replicate k: {claim: record}} of the replicate records in ``folder`` that the run log (default
    ``reports/runlog.jsonl`` two folders up) says are the record (``runlog.select``), and {k: that replicate's run
    block}; ValueError where the folder holds no records of one lock (``replicated.stored``)."""
    from harness.record import runlog
    from harness.report import replicated

    lock, records, entries, _ = replicated.stored(folder, log)
    runs: dict[int, dict[str, Any]] = {}
    blocks: dict[int, dict] = {}
    for rec in runlog.select(records, entries, lock):
        k = int(rec["run"]["replicate"]["k"])
        runs.setdefault(k, {}).update(rec["claims"])
        blocks[k] = rec["run"]
    return runs, blocks


def replicates_header(blocks: Mapping[int, Mapping[str, Any]]) -> str:
    """Where the replicate table comes from, in the records' own terms (no date or machine of today's)."""
    some = next(iter(blocks.values()), {}).get("replicate") or {}
    K = some.get("K") or "K"
    vendors = sorted({str((b.get("fp_path") or {}).get("vendor") or "unknown vendor") for b in blocks.values()})
    return (f"From the replicate records at lock {str(some.get('lock') or '?')[:12]}: replicates "
            f"{', '.join(str(k) for k in sorted(blocks))} of {K} in (master seeds "
            f"{', '.join(str(blocks[k].get('master_seed')) for k in sorted(blocks))}; {', '.join(vendors)}). Each "
            f"replicate is a full standard run; a row's firmness is each replicate's prediction, its repeat rate "
            f"the share of ordered pairs of replicates that agree:")


def markdown(table: list[dict[str, Any]], master_seeds: Sequence[int], fast: bool = True,
             commit: str | None = None, profile: str = "smoke", header: str | None = None) -> str:
    what = "fast criteria" if fast else "every counted criterion and verdict"
    lines = [header or (f"Measured {dt.date.today().isoformat()} on {platform.node() or 'this machine'} "
             f"({platform.processor() or platform.machine()}){f', commit {commit[:7]}' if commit else ''}, "
             f"{what} at {profile} budgets, master seeds "
             f"{', '.join(map(str, master_seeds))}:"), "",
             "| criterion | predicted firmness (mean) | observed repeat rate | runs | outcomes |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['criterion']} | {r['predicted']:.2f} | {r['observed']:.2f} | {r['runs']} | {r['outcomes']} |"
              for r in sorted(table, key=lambda r: r["criterion"])]
    lines += ["", "| predicted firmness | criteria | mean predicted | mean observed |", "|---|---|---|---|"]
    for lo, hi in BINS:
        sel = [r for r in table if lo <= r["predicted"] < hi]
        if sel:
            lines.append(f"| [{lo:.1f}, {min(hi, 1.0):.1f}{']' if hi > 1 else ')'} | {len(sel)} | "
                         f"{sum(r['predicted'] for r in sel) / len(sel):.2f} | "
                         f"{sum(r['observed'] for r in sel) / len(sel):.2f} |")
    return "\n".join(lines)


def replicates_markdown(folder: Path, log: Path | None = None) -> str:
    runs, blocks = from_replicates(folder, log)
    return markdown(rows(runs, fast=False), sorted(runs), fast=False, header=replicates_header(blocks)) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.suite.calibration", description=__doc__.split("\n\n")[0])
    parser.add_argument("--master-seeds", default="0,1,2,3,4", help="comma-separated master seeds (at least 2)")
    parser.add_argument("--jobs", type=int, default=2, help="pytest subprocesses side by side (default 2)")
    parser.add_argument("--trained", action="store_true",
                        help="every counted criterion and verdict at --profile's budgets, not only the fast "
                             "criteria (which are at smoke's)")
    parser.add_argument("--profile", default="smoke", choices=("smoke", "standard"),
                        help="the budgets of --trained (default smoke; standard: firmness where it is reported)")
    parser.add_argument("--claims", default="", help="comma-separated claim ids (default every claim)")
    parser.add_argument("--keep", default=None, metavar="DIR",
                        help="keep each master seed's report directory as DIR/m<seed> (default: not kept)")
    parser.add_argument("--replicates", type=Path, default=None, metavar="FOLDER",
                        help="train nothing: the replicate records in FOLDER (reports/replicates/<lock>), firmness "
                             "beside the replicates' repeat rate")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help=f"with --replicates: put the table between FILE's {REPLICATES_MARKER} markers")
    parser.add_argument("--claims-dir", default=str(sensitivity.ROOT / "claims"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write is not None and args.replicates is None:
        parser.error("--write goes with --replicates")
    if args.replicates is not None:
        from harness.report import findings
        try:
            block = replicates_markdown(args.replicates)
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
        return findings.print_or_write(block, args.write, REPLICATES_MARKER,
                                       f"wrote the replicates' calibration into {args.write}")
    known = sensitivity.matrix_claims(Path(args.claims_dir))
    claim_ids = [c.strip().upper() for c in args.claims.split(",") if c.strip()]
    if set(claim_ids) - set(known):
        parser.error(f"unknown claim id(s) {sorted(set(claim_ids) - set(known))}; valid: {', '.join(known)}")
    try:
        seeds = [int(s) for s in args.master_seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--master-seeds takes comma-separated integers, got {args.master_seeds!r}")
    if len(seeds) < 2 or args.jobs < 1:
        parser.error("--master-seeds needs at least 2 seeds and --jobs a positive integer")
    if args.profile != "smoke" and not args.trained:
        parser.error("--profile standard needs --trained: the fast criteria are calibrated at smoke budgets")
    runs = collect(seeds, claims_dir=Path(args.claims_dir), jobs=args.jobs,
                   progress=lambda m: print(m, file=sys.stderr, flush=True), fast=not args.trained,
                   claim_ids=claim_ids, keep=Path(args.keep) if args.keep else None, profile=args.profile)
    print(markdown(rows(runs, fast=not args.trained), seeds, fast=not args.trained,
                   commit=sensitivity.clean_commit(sensitivity.ROOT), profile=args.profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
