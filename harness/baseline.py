"""The regression gate: load a committed baseline (a results.json), compare a run's claims to it (issues 4, 16).

With ``--baseline`` a claim test fails iff it regressed:

* its verdict got worse (supported > inconclusive > refuted > error; for a question only an error is worse);
* a criterion's definition changed: its fingerprint (kind, metric, arms, margin or band, alpha, counts, fast,
  pairing) differs from the baseline's. Loosening a margin or setting ``counts=False`` is a new pre-registration,
  to be made deliberately with ``--update-baseline`` and explained in the commit, never silently;
* a counted criterion's outcome got worse (passed > inconclusive > refuted), also inside a claim that is
  already refuted; or a counted criterion of the baseline is missing from the run;
* one of its gated metrics (``ev.gate``) moved beyond its tolerance in the bad direction.

An improvement never fails; a claim, criterion or metric that the baseline lacks is "new", not a regression.
For a question (yes and no are both answers) a criterion's changed outcome is shown, not gated.
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
    except results_io.OldSchemaError as exc:
        raise BaselineError(f"{exc}: its criteria carry no rules or fingerprints, so it cannot gate this suite. "
                            f"Remake it with `{MAKE_BASELINE}` and commit it with the reason") from None
    except results_io.ResultsFormatError as exc:
        raise BaselineError(f"{exc}. Make a baseline with `{MAKE_BASELINE}` "
                            "(it writes reports/baseline.json).") from None


def for_baseline(results: Mapping[str, Any]) -> dict[str, Any]:
    """A results dict slimmed for committing: per-run tables dropped, everything the gate reads kept."""
    out = dict(results)
    out["claims"] = {cid: {k: v for k, v in claim.items() if k != "tables"}
                     for cid, claim in results["claims"].items()}
    return out


def _base_name(now: Mapping[str, Any], name: str, base_names: set[str] | Mapping[str, Any]) -> str:
    """The baseline's name for a criterion of ``now``: when parts of one claim repeat a criterion name, the merge
    (``results.merge_parts``) names the later ones ``"<name> [<test>]"``, so a part compares with its own copy."""
    test = str(now.get("nodeid") or "").split("::")[-1]
    qualified = f"{name} [{test}]"
    return qualified if test and qualified in base_names else name


def _baseline_verdict(now: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    """The baseline's verdict over the same criteria the current record has.

    A claim split over several tests is gated test by test: each part compares against the
    baseline verdict recomputed over that part's criteria.
    """
    if verdicts.canonical(base["verdict"]) == verdicts.ERROR:
        return base["verdict"]
    base_names = {c["name"] for c in base.get("criteria", [])}
    names = {_base_name(now, c["name"], base_names) for c in now.get("criteria", [])}
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


_OUTCOME_RANK = {"passed": 2, "inconclusive": 1, None: 1, "refuted": 0}
REMAKE = ("if the change is deliberate, run `pytest --profile smoke --update-baseline` and give the reason in "
          "the commit message")


def _definition_change(now: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    """Which declared fields moved between two versions of a criterion (for the message)."""
    keys = ("kind", "metric", "arms", "margin", "counts", "fast")
    moved = [f"{k} {base.get(k)!r} -> {now.get(k)!r}" for k in keys if base.get(k) != now.get(k)]
    rb, rn = base.get("rule") or {}, now.get("rule") or {}
    moved += [f"{k} {rb.get(k)!r} -> {rn.get(k)!r}" for k in ("lo", "hi", "paired") if rb.get(k) != rn.get(k)]
    return ", ".join(moved) or "fingerprint differs"


def compare_criteria(now: Mapping[str, Any], base: Mapping[str, Any], *, whole_claim: bool = True
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    """Criterion by criterion: definition (fingerprint) and outcome against the baseline.

    Returns the rows (name, outcome, baseline_outcome, fingerprint, baseline_fingerprint, status, regressed) and
    the regression reasons. ``whole_claim``: the record holds every part of the claim, so a counted baseline
    criterion that it lacks is missing (a part checks only its own criteria)."""
    question = (now.get("kind") or "claim") == "question"
    fast = bool(now.get("fast"))
    base_by_name = {c["name"]: c for c in base.get("criteria", [])}
    rows, reasons = [], []
    for c in now.get("criteria", []):
        b = base_by_name.get(_base_name(now, c["name"], base_by_name))
        row = {"name": c["name"], "outcome": c.get("outcome"), "fingerprint": c.get("fingerprint"),
               "baseline_outcome": b.get("outcome") if b else None,
               "baseline_fingerprint": b.get("fingerprint") if b else None}
        if b is None:
            rows.append({**row, "status": "new", "regressed": False})
            continue
        if c.get("fingerprint") != b.get("fingerprint"):
            reasons.append(f"criterion {c['name']}: definition changed ({_definition_change(c, b)}); {REMAKE}")
            rows.append({**row, "status": "redefined", "regressed": True})
            continue
        counted = c.get("counts", True) and (c.get("fast") or not fast)
        now_rank, base_rank = _OUTCOME_RANK.get(c.get("outcome"), 1), _OUTCOME_RANK.get(b.get("outcome"), 1)
        if counted and now_rank < base_rank and not question:
            reasons.append(f"criterion {c['name']}: {b.get('outcome')} -> {c.get('outcome') or 'not recorded'}")
            status = "worse"
        elif now_rank > base_rank:
            status = "better"
        elif c.get("outcome") != b.get("outcome"):
            status = "changed"
        else:
            status = "ok"
        rows.append({**row, "status": status, "regressed": status == "worse"})
    if whole_claim:
        names = {c["name"] for c in now.get("criteria", [])}
        for b in base.get("criteria", []):
            if b["name"] not in names and b.get("counts", True) and (b.get("fast") or not fast):
                reasons.append(f"criterion {b['name']}: counted in the baseline, missing from this run; {REMAKE}")
                rows.append({"name": b["name"], "outcome": None, "fingerprint": None,
                             "baseline_outcome": b.get("outcome"), "baseline_fingerprint": b.get("fingerprint"),
                             "status": "missing", "regressed": True})
    return rows, reasons


def compare_claim(now: Mapping[str, Any], base: Mapping[str, Any] | None, *, whole_claim: bool = False
                  ) -> dict[str, Any]:
    """The regression record for one claim (or one part of a claim) against its baseline entry."""
    kind = now.get("kind") or "claim"
    if base is None:
        return {"status": "new", "regressed": False, "baseline_verdict": None, "reasons": [], "metrics": [],
                "criteria": []}
    base_verdict = _baseline_verdict(now, base)
    reasons = []
    verdict_worse = verdicts.is_worse(now["verdict"], base_verdict, kind)
    if verdict_worse:
        reasons.append(f"verdict {base_verdict} -> {now['verdict']}")
    verdict_status = ("worse" if verdict_worse else "better" if verdicts.rank(now["verdict"]) > verdicts.rank(base_verdict)
                      else "changed" if now["verdict"] != base_verdict else "ok")
    criteria: list[dict[str, Any]] = []
    if verdicts.canonical(now["verdict"]) != verdicts.ERROR:
        criteria, why = compare_criteria(now, base, whole_claim=whole_claim)
        reasons += why
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
    elif verdict_status == "better" or any(m["status"] == "improved" for m in metrics) or any(
            c["status"] == "better" for c in criteria):
        status = "improved"
    elif verdict_status == "changed" or any(c["status"] == "changed" for c in criteria):
        status = "changed"  # a question's answer flipped: shown, not gated
    else:
        status = "ok"
    return {"status": status, "regressed": regressed, "baseline_verdict": base_verdict,
            "verdict_status": verdict_status, "reasons": reasons, "metrics": metrics, "criteria": criteria}


def compare_results(claims: Mapping[str, Mapping[str, Any]], base_claims: Mapping[str, Mapping[str, Any]]
                    ) -> dict[str, dict[str, Any]]:
    """Every (whole, merged) claim of a run against its baseline entry: the records the gate stores in
    ``claim["regression"]`` at the end of a run, and ``python -m harness.report compare`` computes for two files."""
    return {cid: compare_claim(claim, base_claims.get(cid), whole_claim=True) for cid, claim in claims.items()}



def moves(claims: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What moved against the baseline, read from each claim's regression record (``compare_claim``): one row
    per changed verdict, criterion outcome or definition (fingerprint), and gated metric beyond its tolerance,
    old beside new, and per claim the baseline lacks. Rows: claim, what (claim/verdict/criterion/metric), name,
    old, new, status, regressed. Empty when nothing moved. (Claims of the baseline that did not run are listed
    apart: a partial run is not a move.)"""
    rows: list[dict[str, Any]] = []
    for cid, claim in claims.items():
        reg = claim.get("regression")
        if not reg:
            continue
        if reg["status"] == "new" and reg.get("baseline_verdict") is None:
            rows.append({"claim": cid, "what": "claim", "name": cid, "old": "not in the baseline",
                         "new": claim.get("verdict"), "status": "new", "regressed": False})
            continue
        v_status = reg.get("verdict_status") or ("ok" if claim.get("verdict") == reg["baseline_verdict"] else "changed")
        if v_status != "ok":
            rows.append({"claim": cid, "what": "verdict", "name": "verdict", "old": reg["baseline_verdict"],
                         "new": claim.get("verdict"), "status": v_status, "regressed": v_status == "worse"})
        for c in reg.get("criteria", []):
            if c["status"] == "ok":
                continue
            rows.append({"claim": cid, "what": "criterion", "name": c["name"],
                         "old": {"outcome": c.get("baseline_outcome"), "fingerprint": c.get("baseline_fingerprint")},
                         "new": {"outcome": c.get("outcome"), "fingerprint": c.get("fingerprint")},
                         "status": c["status"], "regressed": bool(c.get("regressed"))})
        for m in reg.get("metrics", []):
            if m["status"] == "ok":
                continue
            rows.append({"claim": cid, "what": "metric", "name": m["metric"], "old": m.get("baseline"),
                         "new": m.get("now"), "status": m["status"], "regressed": m["regressed"],
                         "tolerance": m.get("tolerance"), "relative": m.get("relative"),
                         "direction": m.get("direction")})
    return rows
