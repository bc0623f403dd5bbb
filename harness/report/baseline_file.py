"""``python -m harness.report baseline [PATH] [--drop ID ...]``: what a baseline holds, and removing a claim from it.

``pytest --update-baseline`` merges the claims a run selected into the baseline and keeps every other claim as it was
(``harness.record.baseline.merge_baseline``), so a claim leaves the baseline only here, deliberately: ``--drop ID``.
Without ``--drop`` it lists each claim with the run it came from (commit, time, profile, master seed).
"""
from __future__ import annotations

import sys
from pathlib import Path

from harness.record import baseline as baseline_gate
from harness.record import results as results_io
from harness.record.cli import USAGE_EXIT, OneLineParser

DEFAULT = Path("reports/baseline.json")


def main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m harness.report baseline",
        description="List the claims a baseline holds, each with the run it came from, or remove claims from it "
                    "(--drop). Exit 0 when done, 4 when the file cannot be read or when --drop names a claim it "
                    "does not hold.")
    parser.add_argument("baseline", type=Path, nargs="?", default=DEFAULT,
                        help=f"the baseline file (default: {DEFAULT})")
    parser.add_argument("--drop", nargs="+", metavar="ID", default=[],
                        help="remove these claims (and their provenance) from the baseline, written atomically")
    args = parser.parse_args(argv)
    try:
        data = baseline_gate.load_baseline(args.baseline)
    except baseline_gate.BaselineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    if args.drop:
        try:
            data = baseline_gate.drop_claims(data, args.drop)
        except KeyError as exc:
            print(f"error: {args.baseline} holds no claim {exc.args[0]} (it holds {', '.join(data['claims'])})",
                  file=sys.stderr)
            return 4
        results_io.write_json_atomic(args.baseline, data)
        print(f"dropped {', '.join(args.drop)} from {args.baseline}; it holds {', '.join(data['claims']) or 'no claim'}")
        return 0
    for cid, p in baseline_gate.claim_provenance(data).items():
        commit = (p.get("git_commit") or "no commit")[:7] + (" (dirty)" if p.get("git_dirty") else "")
        print(f"{cid:<4} {data['claims'][cid]['verdict']:<24} profile {p.get('profile')}, commit {commit}, "
              f"started {p.get('started_at')}, master seed {p.get('master_seed')}")
    return 0
