"""docs/fault-matrix.md's two tables, generated from the profiles and the claim modules, never kept by hand.

* ``fault-catchers``: each fault of ``model.faults.FAULTS``, what it breaks (the registry's words) and the claims
  that must catch it (each claim's ``REFUTED_BY_FAULTS``), with their fast counted criteria that name the fault in
  ``falsified_by``; a fault no claim catches fast names the claims whose training criteria it refutes;
* ``fault-cells``: the cells tests/suite/test_sensitivity_modules.py runs (``harness.suite.sensitivity.FAST_CELLS``,
  from each claim's ``FAST_CELLS``).

    python -m harness.suite.fault_tables                                 # print both tables
    python -m harness.suite.fault_tables --write docs/fault-matrix.md    # replace them between their markers

tests/suite/test_fault_tables.py fails when the page's tables differ from what this prints. A bad option or a file
without the markers: one line, exit 4.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from model.faults import FAULTS

from harness.record.verdict import COUNTED, role_of
from harness.report.findings import MarkersMissing, between_markers, replace_between_markers
from harness.suite import USAGE_EXIT, OneLineParser, sensitivity

MARKERS = ("fault-catchers", "fault-cells")


def counted_criteria(claims_dir: Path) -> dict[str, dict[str, Mapping[str, Any]]]:
    """claim id -> {counted criterion: its declaration}, for every claim module in ``claims_dir``."""
    return {cid: {n: c for n, c in sensitivity.claim_criteria(cid, claims_dir).items() if role_of(c) == COUNTED}
            for cid in sensitivity.matrix_claims(claims_dir)}


def catchers_table(claims_dir: Path = sensitivity.ROOT / "claims") -> str:
    counted = counted_criteria(claims_dir)
    rows = ["| fault | what it breaks | the claims that must catch it (`REFUTED_BY_FAULTS` in each claim's profile "
            "file), with their fast counted criteria that name it |", "|---|---|---|"]
    for fault, what in FAULTS.items():
        catchers = []
        for cid in sensitivity.EXPECTED_CATCHERS[fault]:
            fast = [n for n, c in counted.get(cid, {}).items() if c.get("fast") and fault in c.get("falsified_by", ())]
            cell = sensitivity.FAST_CELLS.get(fault, ())
            if cell and cell[0] == cid and cell[1] not in fast:      # a criterion made fast per part (C1's reverse)
                fast.append(cell[1])
            catchers.append(cid + (f" ({', '.join(f'`{n}`' for n in fast)})" if fast else ""))
        if not catchers:
            trained = [cid for cid, crits in counted.items()
                       if any(fault in c.get("falsified_by", ()) for c in crits.values())]
            catchers = [f"none fast: {', '.join(trained)} (training criteria, below)" if trained else "none"]
        rows.append(f"| `{fault}` | {what.replace('|', chr(92) + '|')} | {', '.join(catchers)} |")
    return "\n".join(rows) + "\n"


def cells_table(cells: Mapping[str, tuple[str, str, str]] | None = None) -> str:
    cells = sensitivity.FAST_CELLS if cells is None else cells
    rows = ["| fault | refuted (criterion) | stays supported |", "|---|---|---|"]
    rows += [f"| {fault} | {catcher} (`{crit}`) | {off} |" for fault, (catcher, crit, off) in cells.items()]
    return "\n".join(rows) + "\n"


def tables(claims_dir: Path = sensitivity.ROOT / "claims") -> dict[str, str]:
    """marker name -> the table that belongs between its markers."""
    return {"fault-catchers": catchers_table(claims_dir), "fault-cells": cells_table()}


def stale(text: str, claims_dir: Path = sensitivity.ROOT / "claims") -> list[str]:
    """The marker names whose table in ``text`` is missing or differs from the generated one."""
    return [name for name, table in tables(claims_dir).items() if between_markers(text, name) != table]


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.suite.fault_tables", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", type=Path, metavar="FILE",
                        help=f"replace each table between its markers in FILE ({', '.join(MARKERS)})")
    args = parser.parse_args(argv)
    generated = tables()
    if args.write is None:
        print("\n".join(generated.values()), end="")
        return 0
    try:
        text = args.write.read_text(encoding="utf-8")
        for name, table in generated.items():
            text = replace_between_markers(text, table, name)
        args.write.write_text(text, encoding="utf-8")
    except (OSError, MarkersMissing) as exc:
        print(f"fault_tables: {args.write}: {exc}", file=sys.stderr)
        return USAGE_EXIT
    print(f"wrote {', '.join(MARKERS)} into {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
