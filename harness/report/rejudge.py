"""``python -m harness.report rejudge RESULTS [--write]``: decide a stored run again under this checkout's rules.

A results file keeps every criterion's rule and its per-seed measurements, so its verdicts, criterion outcomes and
firmness can be recomputed without training anything (``harness.record.results.rejudge``). With the decision rules
unchanged the recomputed file is the stored one, byte for byte (the firmness simulation is seeded); after a change
of the rules (of ``harness.record.decision``, ``firmness`` or ``verdict``) it shows what the change does to the
stored runs, and ``--write`` stores it (then regenerate the README's tables with ``findings ... --write``).
Measurements, metrics and fingerprints are never touched: only what the rules derive from them.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from harness.record import results as results_io
from harness.record.cli import USAGE_EXIT, OneLineParser


def changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """One line per claim and per criterion whose verdict, outcome or firmness differs between two results."""
    lines = []
    for cid, o in old["claims"].items():
        n = new["claims"][cid]
        if (o.get("verdict"), o.get("firmness")) != (n.get("verdict"), n.get("firmness")):
            lines.append(f"{cid}: {o.get('verdict')} (firmness {_f(o.get('firmness'))}) -> {n.get('verdict')} "
                         f"(firmness {_f(n.get('firmness'))})")
        for co, cn in zip(o.get("criteria", []), n.get("criteria", [])):
            if (co.get("outcome"), co.get("firmness")) != (cn.get("outcome"), cn.get("firmness")):
                lines.append(f"  {cid} {co.get('name')}: {co.get('outcome')} ({_f(co.get('firmness'))}) -> "
                             f"{cn.get('outcome')} ({_f(cn.get('firmness'))})")
    return lines


def _f(x: Any) -> str:
    return "null" if x is None else f"{x:.4g}"


def main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m harness.report rejudge",
        description="Decide a results.json again from its recorded criteria under this checkout's rules, without "
                    "running anything, and print what changed (verdicts, outcomes, firmness). Exit 0 when nothing "
                    "changed or --write stored it, 1 when something changed and was not written, 4 when RESULTS "
                    "cannot be read.")
    parser.add_argument("results", type=Path, help="a results.json or reports/baseline.json")
    parser.add_argument("--write", action="store_true", help="store the re-decided file in place of RESULTS")
    args = parser.parse_args(argv)
    old = results_io.load_or_say(args.results)
    if old is None:
        return USAGE_EXIT
    new = results_io.rejudge(old)
    moved = changes(old, new)
    same = json.dumps(new, sort_keys=True) == json.dumps(results_io.to_jsonable(old), sort_keys=True)
    print("\n".join(moved) if moved else
          f"{args.results}: every verdict, outcome and firmness as stored" + ("" if same else
                                                                             " (other derived fields differ)"))
    if args.write and not same:
        results_io.write_json_atomic(args.results, new)
        print(f"wrote {args.results}")
    return 0 if same or args.write else 1
