"""The regression gate: load a committed baseline (a results.json), compare a run's claims to it (issue 4).

With ``--baseline`` a claim test fails iff it regressed: its verdict got worse (supported >
inconclusive > refuted > error; for a question only an error is worse), or one of its gated
metrics (``ev.gate``) moved beyond its tolerance in the bad direction. An improvement never fails;
a claim or a metric that the baseline lacks is "new", not a regression.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from harness import results as results_io
from harness import verdict as verdicts

MAKE_BASELINE = "pytest --profile smoke --update-baseline"
_DIRECTION_TEXT = {"higher": "higher is better", "lower": "lower is better", "both": "it must not move either way"}


class BaselineError(Exception):
    """A missing or malformed baseline file; the message says which and how to make one."""


def load_baseline(path: Path) -> dict[str, Any]:
    try:
        return results_io.load(Path(path), what="baseline file")
    except results_io.ResultsFormatError as exc:
        raise BaselineError(f"{exc}. Make a baseline with `{MAKE_BASELINE}` "
                            "(it writes reports/baseline.json).") from None


def for_baseline(results: Mapping[str, Any]) -> dict[str, Any]:
    """A results dict slimmed for committing: per-run tables dropped, everything the gate reads kept."""
    out = dict(results)
    out["claims"] = {cid: {k: v for k, v in claim.items() if k != "tables"}
                     for cid, claim in results["claims"].items()}
    return out


def _baseline_verdict(now: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    """The baseline's verdict over the same criteria the current record has.

    A claim split over several tests is gated test by test: each part compares against the
    baseline verdict recomputed over that part's criteria.
    """
    if verdicts.canonical(base["verdict"]) == verdicts.ERROR:
        return base["verdict"]
    names = {c["name"] for c in now.get("criteria", [])}
    base_names = {c["name"] for c in base.get("criteria", [])}
    if not names or names == base_names:
        return base["verdict"]
    subset = [c for c in base.get("criteria", []) if c["name"] in names]
    return verdicts.decide(subset, kind=now.get("kind") or "claim", fast_only=bool(now.get("fast")))


def compare_metric(name: str, now: Any, base: Any, gate: Mapping[str, Any]) -> dict[str, Any]:
    """One gated metric against the baseline: status regressed / improved / ok / new."""
    direction, tol = gate["direction"], float(gate["tolerance"])
    row = {"metric": name, "baseline": base, "now": now, "direction": direction, "tolerance": tol,
           "relative": bool(gate.get("relative")), "delta": None}
    if base is None:
        return {**row, "status": "new", "regressed": False}
    if now is None:
        return {**row, "status": "missing", "regressed": True}
    allowed = tol * abs(base) if gate.get("relative") else tol
    allowed += 1e-12 * max(1.0, abs(base))  # float noise never decides a gate
    delta = now - base
    worse = {"higher": -delta, "lower": delta, "both": abs(delta)}[direction]
    better = {"higher": delta, "lower": -delta, "both": 0.0}[direction]
    status = "regressed" if worse > allowed else "improved" if better > allowed else "ok"
    return {**row, "delta": delta, "status": status, "regressed": status == "regressed"}


def compare_claim(now: Mapping[str, Any], base: Mapping[str, Any] | None) -> dict[str, Any]:
    """The regression record for one claim (or one part of a claim) against its baseline entry."""
    kind = now.get("kind") or "claim"
    if base is None:
        return {"status": "new", "regressed": False, "baseline_verdict": None, "reasons": [], "metrics": []}
    base_verdict = _baseline_verdict(now, base)
    reasons = []
    verdict_worse = verdicts.is_worse(now["verdict"], base_verdict, kind)
    if verdict_worse:
        reasons.append(f"verdict {base_verdict} -> {now['verdict']}")
    metrics = []
    for name, gate in sorted(now.get("gates", {}).items()):
        row = compare_metric(name, now.get("metrics", {}).get(name), base.get("metrics", {}).get(name), gate)
        metrics.append(row)
        if row["regressed"]:
            if row["now"] is None:
                reasons.append(f"gated metric {name} missing or not finite (baseline {row['baseline']:.4g})")
            else:
                tol = f"{row['tolerance']:g}{' relative' if row['relative'] else ''}"
                reasons.append(f"{name} {row['baseline']:.4g} -> {row['now']:.4g}, beyond tolerance {tol} "
                               f"({_DIRECTION_TEXT[row['direction']]})")
    regressed = bool(reasons)
    if regressed:
        status = "regressed"
    elif verdicts.rank(now["verdict"]) > verdicts.rank(base_verdict) or any(m["status"] == "improved" for m in metrics):
        status = "improved"
    elif now["verdict"] != base_verdict:
        status = "changed"  # a question's answer flipped: shown, not gated
    else:
        status = "ok"
    return {"status": status, "regressed": regressed, "baseline_verdict": base_verdict,
            "reasons": reasons, "metrics": metrics}
