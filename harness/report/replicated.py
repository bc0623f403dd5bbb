"""``python -m harness.report replicated FOLDER [--write reports/replicated.json]``: the pooled record (issue 64).

FOLDER is ``reports/replicates/<lock[:12]>``, where ``pytest --profile standard --replicate k`` stores each run's
record. The run log beside it (``reports/runlog.jsonl``, ``--log``) says which record of each claim's replicate is
the record: its first complete run at the lock (``harness.record.runlog.select``). Those are pooled by the
pre-registered rule (``harness.record.replication.pool``); a claim with fewer than K replicates in prints
``k of K in`` and is left out of the pooled record until its set is complete. ``--write`` stores the pooled record
atomically (``python -m harness.report rejudge`` reproduces it byte for byte); it refuses where the records do not
stand on the log (``runlog.problems``). Exit 0, 1 where the records and the log disagree, 4 on a usage error.
"""
from __future__ import annotations

import json
from pathlib import Path

from harness.record import replication, runlog
from harness.record import results as results_io
from harness.record.cli import USAGE_EXIT, OneLineParser


def load_records(folder: Path) -> dict[str, dict]:
    """{file name: results} of the replicate records in ``folder``."""
    return {p.name: results_io.load(p, what="replicate record") for p in sorted(Path(folder).glob("r*.json"))}


def stored(folder: Path, log: Path | None = None) -> tuple[str, dict[str, dict], list[dict], Path]:
    """(lock, {file: results}, run-log entries, log path) of the replicate records in ``folder``, all of one lock,
    and the run log (default ``reports/runlog.jsonl`` two folders above ``folder``); ValueError (or
    ``results.ResultsFormatError``) where a record or the log is unreadable or the records are not of one lock."""
    log = log or Path(folder).resolve().parents[1] / runlog.LOG_NAME
    records = load_records(folder)
    entries = runlog.read(log)
    locks = {(r["run"].get("replicate") or {}).get("lock") for r in records.values()}
    if len(locks) != 1 or None in locks:
        raise ValueError(f"{folder}: needs replicate records of one lock, found {len(records)} records at "
                         f"{len(locks)} locks")
    return locks.pop(), records, entries, log


def lines(pooled: dict, K: int) -> list[str]:
    """One line per claim: its pooled verdict and r of K, or how many of its K replicates are in."""
    out = []
    for cid, ks in pooled["replication"]["in"].items():
        claim = pooled["claims"].get(cid)
        if claim is None:
            out.append(f"{cid}: {len(ks)} of {K} in" + (f" (replicates {', '.join(map(str, ks))})" if ks else ""))
            continue
        r = claim["replication"]
        lo, hi = r["wilson"]
        out.append(f"{cid}: {claim['verdict']}, repeated in {r['r']} of {r['K']} replicates [{lo:.2f}, {hi:.2f}]"
                   + (" (fragile)" if r["fragile"] else "")
                   + (" (most replicates gave another verdict)" if r["pooled_differs_from_most"] else ""))
    return out


#: the README's generated block of replicates in (``--status --write README.md``)
STATUS_MARKER = "replication-status"


def status_markdown(lock_doc: dict, entries: list[dict]) -> str:
    """The README's 'k of K in' block: at the lock's hash, each trained claim's replicates complete in the run log
    (``runlog.first_complete``), and any other lock the log has complete runs at (an abandoned lock stays visible)."""
    from harness.record import lock as criteria_lock

    h, rep = lock_doc["hash"], lock_doc.get("replication") or {}
    K = int(rep.get("K") or replication.K)
    done = runlog.first_complete(entries, h)
    claims = sorted(criteria_lock.held_claims(lock_doc), key=results_io.claim_sort_key)
    per = {c: sorted(k for (cc, k) in done if cc == c) for c in claims}
    total = sum(len(v) for v in per.values())
    out = [f"At lock {h[:12]} (replicate master seeds {', '.join(map(str, rep.get('seeds') or []))}): "
           f"{total} of {K * len(claims)} claim replicates in; "
           + ", ".join(f"{c} {len(ks)} of {K}" for c, ks in per.items()) + "."]
    for lk, got in runlog.locks(entries).items():
        if lk != h:
            out.append(f"Complete runs at another lock, {lk[:12]} (not the record): "
                       + ", ".join(f"{c} {len(ks)}" for c, ks in got.items()) + ".")
    return "\n\n".join(out) + "\n"


def status_main(args, parser) -> int:
    from harness.record import lock as criteria_lock
    from harness.report import findings

    root = Path(__file__).resolve().parents[2]
    try:
        lock_doc = criteria_lock.load(root / criteria_lock.LOCK_FILE)
        entries = runlog.read(args.log or root / "reports" / runlog.LOG_NAME)
    except (criteria_lock.LockError, ValueError) as exc:
        parser.error(str(exc))
    return findings.print_or_write(status_markdown(lock_doc, entries), args.write, STATUS_MARKER,
                                   f"wrote the replicates in into {args.write}")


def main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m harness.report replicated",
        description="Pool the stored replicate records of one lock (reports/replicates/<lock>) by the pre-registered "
                    "rule and print each claim's pooled verdict and r of K, or 'k of K in'. Exit 0, 1 where the "
                    "records do not stand on the run log, 4 on a usage error.")
    parser.add_argument("folder", type=Path, nargs="?", help="reports/replicates/<lock hash[:12]>")
    parser.add_argument("--status", action="store_true",
                        help="print (or --write into FILE's replication-status markers) the replicates in at the "
                             "current lock, from the run log")
    parser.add_argument("--log", type=Path, default=None,
                        help=f"the run log (default: {runlog.LOG_NAME} two folders above FOLDER)")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help="store the pooled record there (reports/replicated.json)")
    args = parser.parse_args(argv)
    if args.status:
        return status_main(args, parser)
    if args.folder is None or not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder of replicate records")
    try:
        lock, records, entries, log = stored(args.folder, args.log)
    except (results_io.ResultsFormatError, ValueError) as exc:
        parser.error(str(exc))
    try:
        pooled = replication.pool(runlog.select(records, entries, lock))
    except replication.ReplicationError as exc:
        print(f"error: {exc}")
        return 1
    print(f"lock {lock[:12]}, K = {replication.K}, {len(records)} records, run log {log}")
    print("\n".join(lines(pooled, replication.K)))
    problems = runlog.problems(records, entries, pooled)
    for lk, claims in runlog.locks(entries).items():
        if lk != lock:
            print(f"note: the run log also has complete runs at lock {lk[:12]} ({', '.join(sorted(claims))})")
    if problems:
        print("\n".join(f"problem: {p}" for p in problems))
        return 1
    if args.write is not None:
        same = args.write.is_file() and json.loads(args.write.read_text(encoding="utf-8")) == \
            results_io.to_jsonable(pooled)
        if not same:
            results_io.write_json_atomic(args.write, pooled)
        print(f"{'unchanged' if same else 'wrote'} {args.write}")
    return 0
