"""``python -m harness.report lock [--write]``: the criteria lock from the code (issue 47, mechanism 2;
``harness.record.lock``).

Runs every claim module at each locked profile (``harness.record.lock.LOCKED_PROFILES``) up to its ``ev.declare``
and no further (a pytest subprocess per profile; nothing trains), collects each premise and counted criterion's
fingerprint, role, falsifiers and quote, and the seeded profiles' budget blocks (``harness/profiles/``, standard and
full), and compares them with ``reports/criteria.lock``:

    python -m harness.report lock            # print the differences; exit 1 if the code's criteria differ
    python -m harness.report lock --write    # refresh reports/criteria.lock (and with it standard's master seed)

Exit status: 0 when the code's criteria and budgets equal the lock (or ``--write`` wrote it), 1 when they differ, 4 for a bad
option or a run that collected nothing.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from harness.profiles import get_profile
from harness.record import lock, rules
from harness.record.cli import OneLineParser
from harness.record.results import write_text_atomic

ROOT = Path(__file__).resolve().parents[2]


def code_criteria(claims_dir: Path = ROOT / "claims") -> dict[str, Any]:
    """The lock's criteria as the code declares them today (``harness.record.lock.build``)."""
    per_profile = {}
    with tempfile.TemporaryDirectory(prefix="criteria-lock-") as tmp:
        for profile in lock.LOCKED_PROFILES:
            rows = Path(tmp) / profile / "rows"
            cmd = [sys.executable, "-m", "pytest", str(claims_dir), "-p", "harness.plugin", "-c",
                   str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), "--profile", profile,
                   "--report-dir", str(Path(tmp) / profile / "report"), "-q", "-p", "no:cacheprovider",
                   "-p", "no:randomly", "-p", "no:xdist"]
            env = {**os.environ, lock.DECLARE_ONLY_ENV: str(rows)}
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
            found = lock.declared_rows(rows) if rows.is_dir() else {}
            if not found:
                raise RuntimeError(f"no criterion declared at {profile} (pytest exit {proc.returncode}):\n"
                                   f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            per_profile[profile] = found
    return lock.build(per_profile)


def code_blocks() -> dict[str, dict[str, str]]:
    """Each seeded profile's budget blocks as ``harness/profiles/`` holds them today (``lock.block_fingerprints``)."""
    out = {}
    for name in lock.SEEDED_PROFILES:
        profile = get_profile(name)
        out[name] = lock.block_fingerprints(profile.blocks, profile.n_seeds)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.report lock", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write the code's criteria to {lock.LOCK_FILE}")
    parser.add_argument("--lock", default=str(ROOT / lock.LOCK_FILE), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    path = Path(args.lock)
    try:
        new = code_criteria()
    except RuntimeError as exc:
        print(f"harness.report lock: {exc}", file=sys.stderr)
        return 4
    blocks = code_blocks()
    doc = lock.document(new, blocks, rules.RULES)
    old = None
    if path.is_file():
        try:
            old = lock.load(path)
        except lock.LockError as exc:
            print(f"{exc}", file=sys.stderr)
    moved = (lock.differences(old["criteria"], new) + lock.block_differences(old.get("blocks"), blocks)
             + lock.rule_differences(old.get("rules"), rules.RULES)) if old else []
    seeds = ", ".join(f"{p} master seed {s}" for p, s in doc["master_seeds"].items())
    if args.write:
        write_text_atomic(path, lock.dumps(doc))
        print(f"{path}: {len(new)} criteria, {len(blocks)} profiles' blocks, hash {doc['hash'][:12]}, {seeds}"
              + (f"; {len(moved)} changed:" if moved else ""))
        for line in moved:
            print(f"  {line}")
        return 0
    if old is None:
        print(f"{path}: no readable criteria lock; write it with {lock.REFRESH}")
        return 1
    if not moved:
        print(f"the code's criteria and budgets equal the lock {old['hash'][:12]} ({len(new)} criteria; {seeds})")
        return 0
    print(f"the code's criteria or budgets differ from the lock {old['hash'][:12]} ({len(moved)} changes; the new hash "
          f"{doc['hash'][:12]} gives {seeds}); refresh with {lock.REFRESH}:")
    for line in moved:
        print(f"  {line}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
