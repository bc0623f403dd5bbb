"""results.json -> one self-contained index.html (issue 4). Rendering only: no verdict logic here.

``python -m harness.report reports/results.json`` rebuilds the page without rerunning anything;
``... compare OLD NEW`` prints what moved between two runs; ``... findings RESULTS [--write README.md]`` prints the
findings table (``harness.report.findings``, the summary's effects in words) as Markdown; ``... rejudge RESULTS``
decides a stored run again under this checkout's rules (``harness.report.rejudge``).

The page embeds everything (CSS inline, figures as base64 PNG) and fetches nothing. Every string
from data goes through jinja2 autoescape, so a statement like ``<script>`` renders as text.

Optional inputs found beside results.json in the report dir:

* ``benchmark*.json`` — pytest-benchmark JSON (``--benchmark-json``, R3 / issue 9): a table of the
  benchmarks and a time-against-n plot (n from ``params["n"]`` or ``extra_info["n"]``; ``harness.report.charts``).
* ``sensitivity.json`` — the fault-injection matrix (issues 10, 20), written by ``harness.suite.sensitivity``::

      {"claims": ["C1", ...],                               # the matrix's columns
       "no_fault": {"C1": "supported", ...},                # the reference verdicts (master seed 0)
       "faults": {"<fault>": {"expected": ["R1", ...],      # claim ids that must be refuted
                              "caught": [...], "weak": [...],   # refuted / only inconclusive
                              "verdicts": {"R1": "refuted", ...}, # every claim's verdict under the fault
                              "cells": {"R1": "caught", ...},     # caught|weak|missed|kept|side effect|moved
                              "side_effects": {cid: reason}, "description": "...", "duration_s": 1.0}},
       "sensitivity": 1.0, "specificity": 1.0, "counts": {...}, "stability": {...},
       "flaky": [{"fault": "<fault>" | null, "master_seed": 0, "claim": "C2", "cell": "kept", "why": "..."}]}
                                                            # cells with a firmness < 0.9 (issue 25)

  rendered as the fault x claim matrix (read by ``harness.report.charts.load_sensitivity``).

The markup and the CSS are package data in ``harness/report/templates/``: ``report.j2`` (index.html),
``compare.j2`` (``compare ... -o FILE``), ``macros.j2`` (shared by both) and ``style.css`` (inlined in each page).
"""
from __future__ import annotations

import functools
import importlib.resources
import math
import re
import sys
from pathlib import Path
from typing import Any, Mapping

import jinja2

from harness.record import baseline as baseline_gate
from harness.record import lock
from harness import fp_path
from harness.profiles import claim_files
from harness.report import checkpoint_compare, findings, revisions
from harness.report import sentences, words
from harness.report.charts import embed_figure, load_benchmarks, load_sensitivity
from harness.record import results as results_io
from harness.record import verdict as verdicts
from harness.record import objections as objections_of
from harness.record import pvalues
from harness.record.cli import USAGE_EXIT, OneLineParser

# The note's items, so the page can say which of them this run did not reach (not a verdict source).
NOTE_ITEMS = {
    "C1": "Attention alone suffices for sequence transduction",
    "C2": "Relating two positions in O(1) operations helps long-range dependency",
    "C3": "Unscaled dot products saturate the softmax at large d_k",
    "C4": "1/√d_k is the right scale",
    "C5": "Multi-head attention recovers resolution lost to averaging",
    "R1": "Scale dot-product attention by 1/√d_k",
    "R2": "When a compatibility function's magnitude grows with a dimension, check what that does to the softmax's gradients",
    "R3": "Prefer the operation that maps to optimized matmul",
    "Q1": "Does QK-norm fix the problem the scaling fixes, and does the scaling still earn its place?",
    "Q2": "Is 'reduced effective resolution due to averaging' what the entropy-collapse and attention-sink literature measures?",
    "Q3": "Does the variance argument, true at initialization, hold after training?",
}
MAX_TABLE_ROWS = 200
_BADGE = {verdicts.SUPPORTED: "ok", verdicts.REFUTED: "bad", verdicts.INCONCLUSIVE: "meh", verdicts.ERROR: "err",
          verdicts.NOT_TESTED: "untested"}


def fmt(value: Any) -> str:
    """Numbers to 4 significant digits, pairs as [lo, hi], missing as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {fmt(v)}" for k, v in value.items())
    return str(value)


def natural_key(name: str) -> list:
    """'ratio/64' < 'ratio/128' < 'ratio/256': numbers inside names compare as numbers."""
    return [(0, int(tok), "") if tok.isdigit() else (1, 0, tok) for tok in re.split(r"(\d+)", str(name)) if tok]


#: A question's yes and no are both answers: one neutral badge, never the colours of a pass or a failure.
_ANSWERS = {verdicts.QUESTION_LABELS[verdicts.SUPPORTED], verdicts.QUESTION_LABELS[verdicts.REFUTED]}


def badge_class(verdict: str | None) -> str:
    if verdict in _ANSWERS:
        return "answer"
    return _BADGE.get(verdicts.canonical(verdict) if verdict else None, "none")


def replicate_strip(rep: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A pooled claim's replicates as marks: number, own verdict, its badge (issue 64); [] for a single run."""
    outcomes = rep.get("outcomes") or []
    ks = rep.get("replicates") or range(1, len(outcomes) + 1)
    return [{"k": k, "verdict": v, "badge": badge_class(v)} for k, v in zip(ks, outcomes)]


def slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in str(text))


def _table(records: Any) -> dict[str, Any]:
    rows = records if isinstance(records, list) else []
    columns: list[str] = []
    for r in rows:
        for k in (r if isinstance(r, dict) else {}):
            if k not in columns:
                columns.append(k)
    shown = rows[:MAX_TABLE_ROWS]
    return {"columns": columns, "rows": [[r.get(c) for c in columns] for r in shown if isinstance(r, dict)],
            "truncated": max(0, len(rows) - len(shown)), "n_rows": len(rows)}


# What the verdict box says before listing the criteria ``verdict.deciding_criteria`` picks.
_DECIDING_LEAD = {
    verdicts.REFUTED: "Refuted by:",
    verdicts.INCONCLUSIVE: "Left open by:",
    verdicts.SUPPORTED: "Every counted criterion passed; the least firm:",
}
#: ... when a premise did not pass (``verdict.judge_record``'s ``not_testable``): the verdict box lists the premises
_NOT_TESTABLE_LEAD = "Not testable here: the test needs a premise that did not pass:"


def move_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """One row of ``baseline.moves`` as display text (shared by the page, the compare page and its text)."""
    def side(value: Any, other: Any) -> str:
        if row["what"] != "criterion":
            return fmt(value)
        text = value.get("outcome") or "—"
        if value.get("fingerprint") != other.get("fingerprint") and value.get("fingerprint"):
            text += f"; definition {value['fingerprint']}"
        return text

    note = ""
    if row["what"] == "metric" and row.get("tolerance") is not None:
        direction = {"higher": "higher is better", "lower": "lower is better", "both": "must not move"}
        note = (f"tolerance ±{fmt(row['tolerance'])}{' relative' if row.get('relative') else ''}, "
                f"{direction.get(row.get('direction'), row.get('direction'))}")
    if row["what"] == "criterion":
        note = row.get("evidence") or ""
    return {**row, "old_text": side(row["old"], row["new"]), "new_text": side(row["new"], row["old"]), "note": note}


def build_context(results: Mapping[str, Any], report_dir: Path) -> dict[str, Any]:
    claims = []
    for cid, c in results["claims"].items():
        head = c.get("headline")
        deciding, more = verdicts.deciding_criteria(c)
        claims.append({
            **c,
            "title": findings.strip_own_id(cid, c.get("title")),
            "statement": findings.strip_own_id(cid, c.get("statement")),
            "effect_text": sentences.sentence(c),
            "answers_text": verdicts.answers_text(c.get("answers") or []),
            # issue 64: a pooled record's replicate outcomes, one mark a replicate, beside its r of K
            "strip": replicate_strip(c.get("replication") or {}),
            "repeated": sentences.repeated(c),
            "anchor": "claim-" + slug(cid),
            "badge": badge_class(c["verdict"]),
            "verdict_shown": verdicts.verdict_shown(c),
            "headline_text": f"{head} = {fmt(c['metrics'].get(head))}" if head else "—",
            "figures_embedded": [{"path": f, "uri": embed_figure(report_dir, f)} for f in c.get("figures", [])],
            "tables_view": {name: _table(t) for name, t in (c.get("tables") or {}).items()},
            "metrics_sorted": sorted(c["metrics"].items(), key=lambda kv: natural_key(kv[0])),
            "notes": c.get("notes") or [],
            # a note of several lines (Q3's per-layer table of a checkpoint read) keeps its lines and columns
            "notes_view": [{"lead": n.split("\n")[0], "lines": n.split("\n")[1:]} for n in c.get("notes") or []],
            "regression": c.get("regression"),
            "fragile": verdicts.fragile(c.get("firmness")),
            "firmness_text": verdicts.firmness_text(c, len(c["seeds"]) if c.get("seeds") else None),
            # the summary table's cell: one short phrase; the reason in full stays in the claim's section
            "firmness_cell": verdicts.firmness_text(c, len(c["seeds"]) if c.get("seeds") else None)
            if c.get("firmness") is not None else verdicts.firmness_short(c),
            "leaning": verdicts.leaning_refuted(c),
            "leaning_label": words.leaning(c),
            "deciding": [{**k, "effect_text": findings.effect_text(k), "p_shown": pvalues.shown(k)} for k in deciding],
            "deciding_more": more,
            "deciding_lead": _NOT_TESTABLE_LEAD if c.get("not_testable") and deciding
            else _DECIDING_LEAD.get(verdicts.canonical(c["verdict"]), ""),
            # each p with what it is (support or Holm-adjusted refutation) and digits enough to tell it from alpha
            "criteria": [{**k, "role": verdicts.role_of(k), "p_label": pvalues.label(k),
                          "p_text": pvalues.text(k.get("p_value"), k.get("level"))} for k in c.get("criteria", [])],
            # results.json written before the objections existed: rebuilt from the record (firmness, ceiling)
            "objections": c.get("objections") or objections_of.objections(c),
        })
    verdict_by_id = {cid: c["verdict"] for cid, c in results["claims"].items()}
    run = results["run"]
    moves = None
    if run.get("baseline"):
        moves = [move_view(m) for m in baseline_gate.moves(results["claims"])]
    return {
        "run": run,
        "lock_line": lock.summary(run) if "criteria_lock" in run else None,
        # a pooled record (issue 64) says where its figures come from: its replicates, not one replicate's run
        "pooled_line": findings.pooled_run_line(results).replace("**", "") if run.get("replicates") else None,
        "attention": results.get("attention"),
        "model_on_trial": results.get("model"),
        "claims": claims,
        "moves": moves,
        "moves_regressed": sum(1 for m in moves or () if m["regressed"]),
        "moves_unstable": sum(1 for m in moves or () if m["status"] == "unstable"),
        "other_path": fp_path.mismatch(results["run"], {"fp_path": results["run"].get("baseline_fp_path")})
        if results["run"].get("baseline") else None,
        "gated": any(c.get("regression") for c in claims),
        "not_run": [(cid, text) for cid, text in NOTE_ITEMS.items() if cid not in results["claims"]],
        "practices": [{**p, "badge_verdicts": {cid: badge_class(v if v != "not run" else None)
                                               for cid, v in p["verdicts"].items()}}
                      for p in verdicts.practice_dispositions(
                          verdict_by_id, kernel=(results.get("attention") or {}).get("name"),
                          model=(results.get("model") or {}).get("spec"))],
        "benchmarks": load_benchmarks(report_dir),
        "sensitivity": load_sensitivity(report_dir, list(results["claims"])),
        "run_items": [(k, v) for k, v in run.items() if k != "skipped"],
        "how_decided": verdicts.HOW_VERDICTS_ARE_DECIDED,
        # the project's design, not this run's: what was revised after an outcome was seen (issue 63, item 8)
        "revisions": {"title": revisions.TITLE, "lead": revisions.PROTECTS, "rows": revisions.rows(),
                      "calibration": revisions.CALIBRATION},
    }


# templates/ is package data ([tool.setuptools.package-data] in pyproject.toml): an installed copy finds it too
TEMPLATES = "templates"
_ENV = jinja2.Environment(loader=jinja2.PackageLoader("harness.report", TEMPLATES), autoescape=True,
                          undefined=jinja2.ChainableUndefined, trim_blocks=True, lstrip_blocks=True)
_ENV.globals.update(fmt=fmt, slug=slug)


@functools.cache
def _css() -> str:
    """The page's stylesheet (templates/style.css), inlined into every page so that it fetches nothing."""
    return (importlib.resources.files("harness.report") / TEMPLATES / "style.css").read_text(encoding="utf-8")


def render_html(results: Mapping[str, Any], report_dir: Path) -> str:
    """The page for a results dict; figures are read from ``report_dir``."""
    return _ENV.get_template("report.j2").render(css=_css(), **build_context(results, Path(report_dir)))


def write_report(results: Mapping[str, Any], report_dir: Path) -> Path:
    out = Path(report_dir) / "index.html"
    results_io.write_text_atomic(out, render_html(results, report_dir))
    return out


def times_table(results: Mapping[str, Any]) -> str:
    """Per module: measured wall time against the profile's expected time (issue 18), as plain text."""
    run = results["run"]
    lines = [f"profile {run.get('profile')}, {run.get('workers') or 0} workers, run {fmt(run.get('duration_s'))} s",
             f"{'claim':<6} {'measured s':>11} {'budget s':>9}  status"]
    for cid, c in results["claims"].items():
        took, budget = c.get("duration_s") or 0.0, c.get("budget_s")
        status = "no budget stated" if not budget else ("OVER" if took > budget else "ok")
        lines.append(f"{cid:<6} {took:>11.1f} {fmt(budget):>9}  {status}")
    return "\n".join(lines)


def _label(path: Path, results: Mapping[str, Any]) -> str:
    run = results["run"]
    commit = f", commit {run['git_commit'][:10]}" if run.get("git_commit") else ""
    return f"{path} (profile {run.get('profile')}{commit}, {run.get('started_at')})"


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """What moved from ``old`` to ``new`` (two results files): the gate's comparison (``baseline.compare_results``)
    read by ``baseline.moves``, as display rows; the claims of ``old`` that ``new`` did not run; and warnings
    where the two runs are not like for like."""
    regressions = baseline_gate.compare_results(new["claims"], old["claims"])
    claims = {cid: {**c, "regression": regressions[cid]} for cid, c in new["claims"].items()}
    rows = [move_view(m) for m in baseline_gate.moves(claims)]
    o, n = old["run"], new["run"]
    warnings = []
    if o.get("profile") != n.get("profile"):
        warnings.append(f"different profiles: {o.get('profile')} against {n.get('profile')}; numbers are not comparable")
    for key, what in (("fast", "a --fast run (fast criteria only)"), ("dry_run", "a dry run (no verdicts)"),
                      ("inject_fault", "run with a fault injected")):
        for side, run in (("old", o), ("new", n)):
            if run.get(key):
                warnings.append(f"the {side} file is {what}")
    for side, run in (("old", o), ("new", n)):
        if not run.get("complete", True):
            warnings.append(f"the {side} file is an incomplete run")
    judged = [(r.get("attention") or {}).get("name") for r in (old, new)]
    if judged[0] != judged[1]:
        warnings.append("different attentions judged: " + " against ".join(
            name or "this project's own MultiHeadAttention" for name in judged) + "; verdicts are not comparable")
    other_model = checkpoint_compare.model_mismatch(old, new)     # by config content, not the weights' path
    if other_model:
        warnings.append(other_model)
    other_path = fp_path.mismatch(n, o)
    if other_path:
        warnings.append(other_path)
    not_run = sorted(set(old["claims"]) - set(new["claims"]), key=results_io.claim_sort_key)
    return rows, not_run, warnings


def moves_text(rows: list[dict[str, Any]], not_run: list[str] = ()) -> str:
    """The comparison as a plain-text table (a CI log)."""
    tail = [f"in the baseline, not run: {', '.join(not_run)}"] if not_run else []
    if not rows:
        return "\n".join(["nothing moved: every verdict, every criterion's outcome and definition, and every gated "
                          "metric match the baseline"] + tail)
    head = ("claim", "what", "name", "baseline", "this run", "status")
    table = [head] + [(r["claim"], r["what"], r["name"], r["old_text"], r["new_text"],
                       r["status"].upper() if r["regressed"] else r["status"]) for r in rows]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(head))]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip() for line in table]
    for r, line in zip(rows, range(1, len(lines))):
        if r["note"]:
            lines[line] += f"  ({r['note']})"
    regressed = sum(1 for r in rows if r["regressed"])
    unstable = sum(1 for r in rows if r["status"] == "unstable")
    lines.append(f"{len(rows)} moved, {regressed} regressed" + (f", {unstable} unstable (shown, not gated)"
                                                                 if unstable else ""))
    return "\n".join(lines + tail)


def compare_main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m harness.report compare",
        description="What moved from OLD to NEW (two results.json files): every verdict, criterion outcome or "
                    "definition, and gated metric beyond its tolerance, old beside new; the gate's comparison. "
                    "Exit 0 when nothing regressed, 1 when something did, 4 when a file cannot be read.")
    parser.add_argument("old", type=Path, help="the baseline: a results.json or reports/baseline.json")
    parser.add_argument("new", type=Path, help="the run to compare with it: a results.json")
    parser.add_argument("-o", "--output", type=Path, default=None, help="also write the comparison as an HTML page")
    args = parser.parse_args(argv)
    try:
        old = baseline_gate.load_baseline(args.old)
        new = results_io.load(args.new)
    except (baseline_gate.BaselineError, results_io.ResultsFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    rows, not_run, warnings = compare(old, new)
    old_label, new_label = _label(args.old, old), _label(args.new, new)
    print(f"{new_label}\n  against {old_label}")
    for w in warnings:
        print(f"WARNING: {w}")
    print(moves_text(rows, not_run))
    readings = checkpoint_compare.checkpoint_moves(old, new)
    if readings:
        print("\n".join(readings))
    if args.output is not None:
        results_io.write_text_atomic(args.output, _ENV.get_template("compare.j2").render(
            css=_css(), moves=rows, not_run=not_run, warnings=warnings, old_label=old_label, new_label=new_label,
            readings=readings))
        print(f"wrote {args.output}")
    return 1 if any(r["regressed"] for r in rows) else 0


def findings_main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m harness.report findings",
        description="The findings table (per claim: the verdict with its firmness and what was found, "
                    "in words) as Markdown. Exit 1 when --write's file lacks the markers, 4 when RESULTS cannot be read.")
    parser.add_argument("results", type=Path, help="a results.json or reports/baseline.json")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help=f"replace the text between {findings.BEGIN} and {findings.END} in FILE (e.g. README.md)")
    parser.add_argument("--marker", default="findings", metavar="NAME",
                        help="with --write: the markers' name, <!-- NAME:begin --> ... <!-- NAME:end --> (default "
                             "findings; the README's standard-profile table is findings-standard)")
    parser.add_argument("--expect-all", action="store_true",
                        help="name below the table every claim the file lacks (a file that parts fill, "
                             "reports/full.json); a file that does not exist yet lacks them all")
    args = parser.parse_args(argv)
    expected = list(claim_files()) if args.expect_all else []
    try:
        if args.expect_all and not args.results.exists():
            table = findings.nothing_run_markdown(str(args.results), expected)
        else:
            table = findings.findings_markdown(results_io.load(args.results), expected)
    except results_io.ResultsFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    return findings.print_or_write(table, args.write, args.marker,
                                   f"wrote the findings of {args.results} into {args.write}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        return compare_main(argv[1:])
    if argv[:1] == ["findings"]:
        return findings_main(argv[1:])
    if argv[:1] == ["baseline"]:
        from harness.report import baseline_file
        return baseline_file.main(argv[1:])
    if argv[:1] == ["lock"]:
        from harness.report import lock_file
        return lock_file.main(argv[1:])
    if argv[:1] == ["times"]:
        from harness.report import times
        return times.main(argv[1:])
    if argv[:1] == ["rejudge"]:
        from harness.report import rejudge  # a subcommand's own module, imported when asked for
        return rejudge.main(argv[1:])
    if argv[:1] == ["replicated"]:
        from harness.report import replicated
        return replicated.main(argv[1:])
    parser = OneLineParser(prog="python -m harness.report",
                           description="Rebuild index.html from a results.json without rerunning. "
                                       "`python -m harness.report compare OLD NEW`: what moved between "
                                       "two results files (see `compare --help`); "
                                       "`python -m harness.report findings RESULTS [--write README.md]`: "
                                       "the findings table as Markdown (see `findings --help`); "
                                       "`python -m harness.report times FILE... [--write F --marker NAME]`: "
                                       "wall times as a Markdown block (runs, or .ci/run's stage table); "
                                       "`python -m harness.report rejudge RESULTS [--write]`: decide a "
                                       "stored run again under this checkout's rules (see `rejudge --help`); "
                                       "`python -m harness.report baseline [PATH] [--drop ID]`: what a "
                                       "baseline holds, and removing a claim from it; "
                                       "`python -m harness.report lock [--write]`: the code's criteria "
                                       "against reports/criteria.lock (issue 47); "
                                       "`python -m harness.report replicated reports/replicates/<lock> [--write "
                                       "reports/replicated.json]`: the replicates pooled (issue 64).")
    parser.add_argument("results", type=Path, help="path to results.json (figures are read beside it)")
    parser.add_argument("-o", "--output", type=Path, default=None, help="output file (default: index.html beside it)")
    parser.add_argument("--times", action="store_true",
                        help="print each module's measured wall time against its budget instead of writing HTML")
    args = parser.parse_args(argv)
    results = results_io.load_or_say(args.results)
    if results is None:
        return USAGE_EXIT
    if args.times:
        print(times_table(results))
        return 0
    report_dir = args.results.resolve().parent
    if args.output is None:
        out = write_report(results, report_dir)
    else:
        out = args.output
        results_io.write_text_atomic(out, render_html(results, report_dir))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
