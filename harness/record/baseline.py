"""The regression gate: load a committed baseline (a results.json), compare a run's claims to it (issues 4, 16, 36).

A regression is a change that made the evidence *significantly* worse, not a verdict that flipped. With
``--baseline`` a claim test fails iff it regressed:

* **a significant move**: a counted criterion's effect δ moved in the bad direction beyond seed noise. Per part
  (a task, a d_k) the run's estimate is compared with the baseline's, both from their own per-seed samples (or
  estimate and standard error): a one-sided Welch t test on the difference (``move_p``), with Holm's step-down over
  every part of every counted criterion of the claim at ``GATE_ALPHA``. The bad direction is the rule's: down for
  superiority, non-inferiority and a band with a lower edge, up for a band with an upper edge, away from the
  centre for a two-sided band or equivalence (two-sided when the baseline sits on the centre);
* **a new refutation**: a counted criterion refuted now that the baseline did not refute;
* **an exact check that changed**: a deterministic criterion whose outcome got worse;
* **a definition that changed**: its fingerprint (kind, metric, arms, margin or band, alpha, counts, fast,
  pairing) differs from the baseline's. Loosening a margin or setting ``counts=False`` is a new pre-registration,
  to be made deliberately with ``--update-baseline`` and explained in the commit, never silently;
* a counted criterion of the baseline missing from the run, or a claim that errors.

A verdict or criterion outcome that got worse *without* any of these is **unstable**: a flip the seeds allow
(a criterion at firmness 0.5 flips half the time on a fresh floating-point path). So is a significant move in a claim
whose tuned learning rates moved (``retuned``): a rate chosen on a tuning seed trains every evaluation seed
differently at once, so their spread cannot tell the change from the tuning seed's choice; and so is one of a
criterion timed in wall-clock seconds (``timed``), which machine load moves between runs. It is shown in the terminal, the
report and ``python -m harness.report compare``, and never fails the run. Gated metrics (``ev.gate``) are single
numbers without seeds, so they cannot tell a move from noise: one beyond its tolerance is shown as *moved*, and
only a gated metric gone missing (not finite) fails. An improvement never fails; a claim, criterion or metric
that the baseline lacks is "new". For a question (yes and no are both answers) only errors, redefinitions and
missing criteria fail.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import math

from scipy import stats as sps

from harness.record import decision
from harness.record import results as results_io
from harness.record import verdict as verdicts

GATE_ALPHA = decision.ALPHA     # per claim: Holm over its counted parts, so noise fails a claim at most 5% of runs
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


# What a baseline says of the run each claim came from (its ``provenance``): enough to tell two runs apart and to
# reproduce either (commit, time, profile, master seed, floating-point path).
PROVENANCE_KEYS = ("git_commit", "git_dirty", "started_at", "profile", "master_seed", "fp_path", "torch_version",
                   "platform")


def provenance(run: Mapping[str, Any]) -> dict[str, Any]:
    """The run block's fields that say where a baseline claim came from."""
    return {k: run.get(k) for k in PROVENANCE_KEYS}


def claim_provenance(baseline: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each claim's provenance in a baseline file: its ``provenance`` map, or, for a file written before merging
    existed (one run for every claim), the file's own run block."""
    stored = baseline.get("provenance") or {}
    return {cid: dict(stored.get(cid) or provenance(baseline.get("run") or {})) for cid in baseline["claims"]}


def _on_trial(data: Mapping[str, Any]) -> str:
    """What a results file judged: the project's own attention, a kernel (--attention) or a model (--model)."""
    if data.get("attention"):
        return f"the kernel {data['attention'].get('name')}"
    if data.get("model"):
        return f"the model {data['model'].get('spec')}"
    return "this project's own attention"


def merge_baseline(existing: Mapping[str, Any] | None, results: Mapping[str, Any]) -> dict[str, Any]:
    """The baseline after ``--update-baseline``: the run's claims written over ``existing``'s, every claim the run did
    not select kept as it was (its record untouched), and ``provenance`` saying which run each claim came from.

    The top-level ``run`` block is the newest update's. A run is merged only into a baseline of the same profile
    that judged the same thing (this project's attention, or the same kernel or model): a claim's baseline must be
    comparable with the others' and with the run that will be gated on it. ``existing`` None: the run alone.
    Raises BaselineError with the reason when they differ and ``existing`` keeps claims the run did not replace."""
    new = for_baseline(results)
    run = results["run"]
    claims: dict[str, Any] = {}
    origin: dict[str, dict[str, Any]] = {}
    if existing is not None:
        kept = [cid for cid in existing["claims"] if cid not in new["claims"]]
        if kept:
            old_profile = (existing.get("run") or {}).get("profile")
            if old_profile != run.get("profile"):
                raise BaselineError(f"it holds profile {old_profile} ({', '.join(kept)} not run now), this run is "
                                    f"{run.get('profile')}: a baseline is one profile. Write this one elsewhere "
                                    "with --baseline PATH, or run every claim of it")
            if _on_trial(existing) != _on_trial(results):
                raise BaselineError(f"it judged {_on_trial(existing)} ({', '.join(kept)} not run now), this run "
                                    f"judged {_on_trial(results)}. Write this one elsewhere with --baseline PATH")
        claims = {cid: existing["claims"][cid] for cid in kept}
        origin = {cid: p for cid, p in claim_provenance(existing).items() if cid in kept}
    claims.update(new["claims"])
    origin.update({cid: provenance(run) for cid in new["claims"]})
    order = sorted(claims, key=results_io.claim_sort_key)
    out = dict(new)
    out["run"] = {**new["run"], "baseline_not_run": []}
    out["claims"] = {cid: claims[cid] for cid in order}
    out["provenance"] = {cid: origin[cid] for cid in order}
    return out


def drop_claims(baseline: Mapping[str, Any], ids: list[str]) -> dict[str, Any]:
    """``baseline`` without the claims ``ids`` (and their provenance); KeyError names an id it does not hold."""
    missing = [cid for cid in ids if cid not in baseline["claims"]]
    if missing:
        raise KeyError(", ".join(missing))
    origin = claim_provenance(baseline)
    out = dict(baseline)
    out["claims"] = {cid: c for cid, c in baseline["claims"].items() if cid not in ids}
    out["provenance"] = {cid: origin[cid] for cid in out["claims"]}
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
    """One gated metric against the baseline: status moved / improved / ok / new (shown), or missing (fails)."""
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
    status = "moved" if worse > allowed else "improved" if better > allowed else "ok"
    return {**row, "delta": delta, "status": status, "regressed": False}


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


def better_direction(rule: decision.Rule, base_delta: float) -> int:
    """+1 when a higher δ is better, -1 when lower is, 0 when either way is worse (a two-sided region whose centre
    the baseline sits on): a move away from the pass region, or from its centre when it is bounded on both sides."""
    if rule.hi is None:
        return 1
    if rule.lo is None:
        return -1
    centre = (rule.lo + rule.hi) / 2
    return 1 if base_delta < centre else -1 if base_delta > centre else 0


def move_p(rule: decision.Rule, now_m: Mapping[str, Any], base_m: Mapping[str, Any]) -> dict[str, Any] | None:
    """One part's move against the baseline: δ now and then, the difference, its Welch standard error and df, and
    the one-sided p that it moved in the bad direction (two-sided when either way is bad). None when either side
    cannot be tested (an invalid comparison, an arm constant across seeds, a zero standard error without a
    reason): such a part can flip, and then reads unstable."""
    if now_m.get("invalid") or base_m.get("invalid"):
        return None
    sn, sb = decision.stat(now_m), decision.stat(base_m)
    if sn.degenerate or sb.degenerate:
        return None
    diff = sn.delta - sb.delta
    direction = better_direction(rule, sb.delta)
    worse = -direction * diff if direction else abs(diff)
    vn, vb = sn.se ** 2, sb.se ** 2
    se = math.sqrt(vn + vb)
    if se == 0:     # two exact points: any move the bad way is certain
        p, df = (0.0 if worse > 0 else 1.0), math.inf
    else:
        df = (vn + vb) ** 2 / ((vn ** 2 / sn.df if vn else 0.0) + (vb ** 2 / sb.df if vb else 0.0))
        p = float(sps.t.sf(worse / se, df)) * (1 if direction else 2)
    return {"label": now_m.get("label", ""), "baseline": sb.delta, "now": sn.delta, "diff": diff, "se": se,
            "df": df, "p": min(1.0, p), "worse": worse > 0}


def _pair_measurements(now: Mapping[str, Any], base: Mapping[str, Any]) -> list[tuple[Mapping, Mapping]]:
    """A criterion's parts matched by label (by position where labels repeat or are missing)."""
    mn, mb = now.get("measurements") or [], base.get("measurements") or []
    labels_n, labels_b = [m.get("label", "") for m in mn], [m.get("label", "") for m in mb]
    if len(set(labels_n)) == len(labels_n) and len(set(labels_b)) == len(labels_b):
        by_label = dict(zip(labels_b, mb))
        return [(m, by_label[m.get("label", "")]) for m in mn if m.get("label", "") in by_label]
    return list(zip(mn, mb))


def significant_moves(pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]], alpha: float = GATE_ALPHA
                      ) -> dict[str, list[dict[str, Any]]]:
    """Every testable part of the given (now, baseline) counted criteria, with Holm's step-down over them all (the
    claim's family): criterion name -> its parts' moves, each with ``holm_p`` and ``significant``."""
    rows: list[tuple[str, dict[str, Any]]] = []
    for now_c, base_c in pairs:
        rule_d = now_c.get("rule")
        if not rule_d or rule_d.get("kind") == "exact":
            continue
        rule = decision.rule_from_dict(rule_d)
        for mn, mb in _pair_measurements(now_c, base_c):
            move = move_p(rule, mn, mb)
            if move is not None:
                rows.append((now_c["name"], move))
    _, rejected, adjusted = decision.holm_levels([m["p"] for _, m in rows], alpha)
    out: dict[str, list[dict[str, Any]]] = {}
    for (name, move), rej, adj in zip(rows, rejected, adjusted):
        out.setdefault(name, []).append({**move, "holm_p": adj, "significant": bool(rej and move["worse"])})
    return out


def _move_text(moves: list[dict[str, Any]]) -> str:
    """The most significant of a criterion's part moves: 'δ 0.9 -> 0.84 on task, Holm p 0.01'."""
    worst = min(moves, key=lambda m: m["holm_p"])
    where = f" on {worst['label']}" if worst["label"] else ""
    return f"δ {worst['baseline']:.4g} -> {worst['now']:.4g}{where}, Holm p {worst['holm_p']:.2g}"


TUNED_LR_PREFIX = "tuned_lr/"     # the metric every tuned arm records its chosen rate under (harness.study.tuning)


def retuned(now: Mapping[str, Any], base: Mapping[str, Any]) -> list[str]:
    """The claim's tuned learning rates that differ from the baseline's ('tuned_lr/C3/scaled/256/delayed_copy
    0.004 -> 0.016'). Rates are chosen on a tuning seed, and a rate a factor 4 away trains every evaluation seed
    differently at once: the seeds then measure another experiment, and their spread says nothing about that move."""
    mn, mb = now.get("metrics") or {}, base.get("metrics") or {}
    return [f"{k[len(TUNED_LR_PREFIX):]} {mb[k]:g} -> {mn[k]:g}" for k in sorted(mn)
            if k.startswith(TUNED_LR_PREFIX) and mb.get(k) is not None and mn[k] is not None and mn[k] != mb[k]]


def timed(criterion: Mapping[str, Any]) -> bool:
    """A criterion measured in wall-clock seconds (its metric says so). Its seeds are timing rounds within one run,
    so their spread leaves out the load of the machine between runs, which moves it more: R3's additive/dot ratio
    at n = 256 read 47.0 and 28.1 in two smoke runs on the same box (2026-12-03), each with a per-seed spread under
    10%. Its significant move reads unstable, not regressed; its refutation still fails the gate."""
    return "seconds" in str(criterion.get("metric") or "")


def _evidence_text(row: Mapping[str, Any]) -> str:
    """A criterion row's evidence in a few words: its most significant move, or why a flip is not a regression."""
    if row["status"] == "unstable" and row.get("timed"):
        return (f"{_move_text(row['moves'])}: a wall-clock timing, which the machine's load moves between runs "
                "more than its rounds spread; not gated")
    if row["status"] == "unstable" and row.get("retuned"):
        return (f"{_move_text(row['moves'])}, but the claim's tuned rates moved ({'; '.join(row['retuned'])}): "
                "another experiment, not gated")
    if row["status"] == "unstable":
        return "no significant move of its evidence: a flip the seeds allow, not gated"
    return _move_text(row["moves"]) if row.get("moves") else ""


def compare_criteria(now: Mapping[str, Any], base: Mapping[str, Any], *, whole_claim: bool = True
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    """Criterion by criterion: definition (fingerprint), outcome and evidence against the baseline.

    Returns the rows (name, outcome, baseline_outcome, fingerprint, baseline_fingerprint, status, regressed, moves)
    and the regression reasons. Statuses: new, redefined, moved (a significant move the bad way), refuted (a new
    refutation), worse (an exact check), unstable (worse without a significant move), better, changed, ok,
    missing. A significant move in a claim whose tuned rates moved (``retuned``) reads unstable: the move may be the
    tuning seed's choice, not the change. ``whole_claim``: the record holds every part of the claim, so a counted
    baseline criterion that it lacks is missing (a part checks only its own criteria)."""
    question = (now.get("kind") or "claim") == "question"
    fast = bool(now.get("fast"))
    base_by_name = {c["name"]: c for c in base.get("criteria", [])}
    matched = [(c, base_by_name.get(_base_name(now, c["name"], base_by_name))) for c in now.get("criteria", [])]

    def counted(c: Mapping[str, Any]) -> bool:
        return bool(c.get("counts", True) and (c.get("fast") or not fast))

    family = [(c, b) for c, b in matched if b is not None and counted(c) and not question
              and c.get("fingerprint") == b.get("fingerprint")]
    moves = significant_moves(family)
    rates_moved = retuned(now, base)
    rows, reasons = [], []
    for c, b in matched:
        row = {"name": c["name"], "outcome": c.get("outcome"), "fingerprint": c.get("fingerprint"),
               "baseline_outcome": b.get("outcome") if b else None,
               "baseline_fingerprint": b.get("fingerprint") if b else None, "moves": moves.get(c["name"], [])}
        if b is None:
            rows.append({**row, "status": "new", "regressed": False})
            continue
        if c.get("fingerprint") != b.get("fingerprint"):
            reasons.append(f"criterion {c['name']}: definition changed ({_definition_change(c, b)}); {REMAKE}")
            rows.append({**row, "status": "redefined", "regressed": True})
            continue
        now_rank, base_rank = _OUTCOME_RANK.get(c.get("outcome"), 1), _OUTCOME_RANK.get(b.get("outcome"), 1)
        gated = counted(c) and not question
        is_exact = (c.get("rule") or {}).get("kind") == "exact" or c.get("kind") == "exact"
        went = f"{b.get('outcome')} -> {c.get('outcome') or 'not recorded'}"
        significant = gated and any(m["significant"] for m in row["moves"])
        if gated and is_exact and now_rank < base_rank:
            status, why = "worse", f"criterion {c['name']}: exact check {went}"
        elif gated and c.get("outcome") == "refuted" and b.get("outcome") != "refuted":
            status, why = "refuted", f"criterion {c['name']}: newly refuted ({went})"
        elif significant and rates_moved:
            status, why = "unstable", ""
            row["retuned"] = rates_moved
        elif significant and timed(c):
            status, why = "unstable", ""
            row["timed"] = True
        elif significant:
            status, why = "moved", (f"criterion {c['name']}: a significant move the bad way, "
                                    f"{_move_text(row['moves'])} ({went})")
        elif gated and now_rank < base_rank:
            status, why = "unstable", ""
        elif now_rank > base_rank:
            status, why = "better", ""
        elif c.get("outcome") != b.get("outcome"):
            status, why = "changed", ""
        else:
            status, why = "ok", ""
        if why:
            reasons.append(why)
        rows.append({**row, "status": status, "regressed": bool(why)})
    if whole_claim:
        names = {c["name"] for c in now.get("criteria", [])}
        for b in base.get("criteria", []):
            if b["name"] not in names and counted(b):
                reasons.append(f"criterion {b['name']}: counted in the baseline, missing from this run; {REMAKE}")
                rows.append({"name": b["name"], "outcome": None, "fingerprint": None, "moves": [],
                             "baseline_outcome": b.get("outcome"), "baseline_fingerprint": b.get("fingerprint"),
                             "status": "missing", "regressed": True})
    return rows, reasons


def compare_claim(now: Mapping[str, Any], base: Mapping[str, Any] | None, *, whole_claim: bool = False
                  ) -> dict[str, Any]:
    """The regression record for one claim (or one part of a claim) against its baseline entry: status regressed,
    unstable (a worse verdict or criterion without a significant move), improved, changed (a question's answer),
    ok or new."""
    kind = now.get("kind") or "claim"
    if base is None:
        return {"status": "new", "regressed": False, "baseline_verdict": None, "reasons": [], "metrics": [],
                "criteria": []}
    base_verdict = _baseline_verdict(now, base)
    errored = verdicts.canonical(now["verdict"]) == verdicts.ERROR
    verdict_worse = verdicts.is_worse(now["verdict"], base_verdict, kind)
    criteria: list[dict[str, Any]] = []
    evidence: list[str] = []
    if not errored:
        criteria, evidence = compare_criteria(now, base, whole_claim=whole_claim)
    metrics = []
    for name, gate in sorted(now.get("gates", {}).items()):
        row = compare_metric(name, now.get("metrics", {}).get(name), base.get("metrics", {}).get(name), gate)
        metrics.append(row)
        if row["regressed"]:
            evidence.append(f"gated metric {name} missing or not finite (baseline {row['baseline']:.4g})")
    reasons = ([f"verdict {base_verdict} -> {now['verdict']}"] if verdict_worse and (errored or evidence) else []) \
        + evidence
    if verdict_worse:
        verdict_status = "worse" if reasons else "unstable"
    else:
        verdict_status = ("better" if verdicts.rank(now["verdict"]) > verdicts.rank(base_verdict)
                          else "changed" if now["verdict"] != base_verdict else "ok")
    regressed = bool(reasons)
    if regressed:
        status = "regressed"
    elif verdict_status == "unstable" or any(c["status"] == "unstable" for c in criteria):
        status = "unstable"
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
                         "status": c["status"], "regressed": bool(c.get("regressed")),
                         "evidence": _evidence_text(c)})
        for m in reg.get("metrics", []):
            if m["status"] == "ok":
                continue
            rows.append({"claim": cid, "what": "metric", "name": m["metric"], "old": m.get("baseline"),
                         "new": m.get("now"), "status": m["status"], "regressed": m["regressed"],
                         "tolerance": m.get("tolerance"), "relative": m.get("relative"),
                         "direction": m.get("direction")})
    return rows
