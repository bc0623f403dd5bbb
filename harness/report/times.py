"""Wall times that change with every run, as generated Markdown blocks (issue 56): the docs state today's figure
once, with its machine and commit, from a file the run wrote, never from a hand edit.

Two inputs:

- a ``results.json`` (or ``reports/standard.json``, ``reports/baseline.json``): one row per file, the profile, its
  wall time, the commit, the machine (CPU vendor and the floating-point path's capability, workers) and the
  longest module;
- ``ci-stages.json``, which ``.ci/run`` writes into ``reports/`` at its end: the stage table (exit, seconds per
  stage), the commit, the CPU model and the total.

``python -m harness.report times FILE... [--write FILE --marker NAME]``; the markers are
``<!-- NAME:begin -->`` / ``<!-- NAME:end -->`` (``findings.replace_between_markers``).
"""
from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any, Mapping

from harness.record import results as results_io
from harness.record.cli import USAGE_EXIT, OneLineParser
from harness.report import findings


def minutes(seconds: float | None) -> str:
    """``1953.2`` -> ``32 min 33 s``; under a minute, seconds."""
    if seconds is None:
        return "not recorded"
    s = int(round(float(seconds)))
    return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"


def _fp_path(run: Mapping[str, Any]) -> Mapping[str, Any]:
    """The run's floating-point path record (a dict, or its repr in older files)."""
    fp = run.get("fp_path") or {}
    if isinstance(fp, str):
        try:
            fp = ast.literal_eval(fp)
        except (ValueError, SyntaxError):
            return {}
    return fp if isinstance(fp, Mapping) else {}


def machine(run: Mapping[str, Any]) -> str:
    """What a results file says of its machine: device, CPU vendor and capability, xdist workers."""
    fp = _fp_path(run)
    parts = [str(run.get("device") or "cpu")]
    if fp.get("vendor") or fp.get("capability"):
        parts.append(" ".join(str(fp[k]) for k in ("vendor", "capability") if fp.get(k)))
    workers = run.get("workers")
    parts.append(f"{workers} workers" if workers else "one process")
    return ", ".join(parts)


def run_row(results: Mapping[str, Any]) -> dict[str, str]:
    run = results["run"]
    claims = results.get("claims") or {}
    longest = max(claims.items(), key=lambda kv: kv[1].get("duration_s") or 0.0, default=None)
    notes = []
    if not run.get("complete", True):
        notes.append("incomplete")
    if run.get("dry_run"):
        notes.append("dry run")
    if run.get("git_dirty"):
        notes.append("uncommitted changes")
    return {"profile": str(run.get("profile")),
            "wall": minutes(run.get("duration_s")) + (f" ({', '.join(notes)})" if notes else ""),
            "commit": str(run.get("git_commit") or "")[:7] or "not recorded",
            "date": str(run.get("started_at") or "")[:10] or "not recorded",
            "machine": machine(run),
            "longest": (f"{longest[0]}, {minutes(longest[1].get('duration_s'))}" if longest else "none")}


def runs_markdown(docs: list[Mapping[str, Any]]) -> str:
    rows = [run_row(d) for d in docs]
    out = ["| profile | wall time | commit | date | machine | longest module |", "|---|---|---|---|---|---|"]
    out += [f"| {r['profile']} | {r['wall']} | {r['commit']} | {r['date']} | {r['machine']} | {r['longest']} |"
            for r in rows]
    return "\n".join(out) + "\n"


def ci_markdown(doc: Mapping[str, Any]) -> str:
    """The stage table of one ``.ci/run`` (its ``ci-stages.json``), with its commit, machine and exit."""
    stages = doc.get("stages") or []
    head = (f"`.ci/run` from a clean clone of {str(doc.get('git_commit') or '')[:7] or 'an unrecorded commit'} "
            f"on {doc.get('date') or 'an unrecorded date'}, {doc.get('cpu') or 'an unrecorded CPU'} "
            f"({doc.get('cores') or '?'} cores): **{minutes(doc.get('total_s'))}**, exit {doc.get('exit')}.")
    out = [head, "", "| stage | exit | time |", "|---|---|---|"]
    out += [f"| {s['name']} | {s['exit']} | {minutes(s['seconds'])} |" for s in stages]
    return "\n".join(out) + "\n"


def is_ci_stages(doc: Mapping[str, Any]) -> bool:
    return "stages" in doc and "claims" not in doc


def block(docs: list[Mapping[str, Any]]) -> str:
    """One generated block: a CI stage table, or a table of runs (never both: they are different questions)."""
    ci = [d for d in docs if is_ci_stages(d)]
    if ci and len(ci) != len(docs):
        raise results_io.ResultsFormatError("give either ci-stages.json files or results files, not both")
    return "\n".join(ci_markdown(d) for d in ci) if ci else runs_markdown(docs)


def _load(path: Path) -> Mapping[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise results_io.ResultsFormatError(f"{path}: cannot read it as JSON ({exc.__class__.__name__})") from None
    if not isinstance(doc, dict) or not (is_ci_stages(doc) or "run" in doc):
        raise results_io.ResultsFormatError(f"{path}: neither a results file nor a ci-stages.json")
    return doc


def main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m harness.report times",
        description="Wall times as a Markdown block: one row per results file (profile, wall time, commit, machine, "
                    "longest module), or the stage table of a .ci/run's reports/ci-stages.json. Exit 1 when --write's "
                    "file lacks the markers, 4 when an input cannot be read.")
    parser.add_argument("files", type=Path, nargs="+", help="results files, or ci-stages.json files")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help="replace the text between <!-- NAME:begin --> and <!-- NAME:end --> in FILE")
    parser.add_argument("--marker", default="times", metavar="NAME", help="the markers' name (default times)")
    args = parser.parse_args(argv)
    try:
        text = block([_load(p) for p in args.files])
    except results_io.ResultsFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    return findings.print_or_write(text, args.write, args.marker, f"wrote the times of "
                                   f"{', '.join(map(str, args.files))} into {args.write} ({args.marker})")
