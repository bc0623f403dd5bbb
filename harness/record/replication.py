"""The replicated verdict of record (issue 64): K pre-registered replicates of the standard profile, pooled.

One standard run is a draw: its verdict depends on its seeds and on the rates its tuning seeds chose. The record is
therefore K replicates of the standard profile, unchanged, each at a master seed listed in the criteria lock before
any of them ran, each tuning its own rates; their criteria are pooled by one rule (``RULE``, stored in the lock):

* **Seeds.** Replicate k (1..K) runs at ``replicate_seed(h, k)``: ``int(sha256(f"{h}:replicate:{k}")[:12], 16) %
  10**6 + 1``, where h is the lock's hash (its criteria and budget blocks: everything but this section, so there is
  no circularity). Changing a criterion or a budget draws new replicate seeds, as it draws a new standard seed.
* **Pooling.** Per criterion part, each replicate's effect δ_k is one cluster summary: the mean of its per-seed
  paired differences, mean(a) - mean(b) for unpaired arms, the mean of its per-seed values for one arm, or its
  estimate's value. The pooled effect is the mean of the K δ_k (equal weights: every replicate has the same seeds)
  with a t interval and p over the K summaries (df K - 1): the replicate is the cluster, so the interval carries the
  between-replicate variance, rate choices included. The pooled parts are one-sample measurements
  (``decision.samples(deltas, over="replicates")``) judged by the suite's own ``judge``: the same rule regions,
  margins, Holm over the claim's counted parts, premises and verdict code.
* **Exact checks** hold pooled only where they hold in every replicate. A part that is invalid (an arm at its grid's
  edge, a dead foil) in any replicate is invalid pooled; a foil dead in every replicate holds no Holm slot.
* **r of K.** How many replicates' own verdicts equal the pooled verdict, with a Wilson interval (``LEVEL``); the
  pooled verdict is fragile where r / K < ``FRAGILE_BELOW``, and ``pooled_differs_from_most`` where fewer than half
  of the replicates gave it.

K is chosen by ``python -m harness.suite.replication_plan`` (docs/replication.md), from the ten development runs at
standard budgets and the standard run's wall time. The run log (``harness.record.runlog``) says which stored run is
the record of each claim and replicate: the first complete one at the lock.

API: ``K``, ``LEVEL``, ``FRAGILE_BELOW``, ``RULE``, ``replicate_seed``, ``replicate_seeds``, ``lock_section``,
``wilson``, ``cluster_effect``, ``pool_criterion``, ``pool_claim``, ``pool``, ``summary``, ``refresh``,
``record_name``.
"""
from __future__ import annotations

import copy
import hashlib
import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from scipy import stats as sps

from harness.record import decision

#: the number of replicates (docs/replication.md, ``python -m harness.suite.replication_plan``)
K = 8
#: the level of the Wilson interval on r of K
LEVEL = 0.90
#: an observed repeat rate r / K under this marks the pooled verdict fragile (as firmness does a single run's)
FRAGILE_BELOW = 0.8
#: the profile a replicate runs, unchanged
PROFILE = "standard"
#: the master seed range (``harness.record.lock.MAX_MASTER_SEED``)
MAX_SEED = 10 ** 6
#: what one pooled sample is (``decision.samples(over=...)``, named by the criterion's test text)
OVER = "replicates"

RULE = ("K replicates of the standard profile, unchanged; replicate k (1..K) at master seed "
        "int(sha256('<lock hash>:replicate:<k>')[:12], 16) % 10**6 + 1, each tuning its own rates. Per criterion "
        "part, each replicate's effect (the mean of its per-seed paired differences, mean(a) - mean(b) for unpaired "
        "arms, the mean of its per-seed values for one arm, an estimate's value) is one cluster summary; the pooled "
        "effect is their mean (equal weights) with a t interval and p over the K summaries (df K - 1), decided by "
        "the suite's rules (regions, margins, Holm over the claim's counted parts, premises). An exact check holds "
        "pooled only if it holds in every replicate; a part invalid in any replicate is invalid pooled. r of K: the "
        "replicates whose own verdict equals the pooled one, with a Wilson 90% interval; fragile when r/K < 0.8. "
        "The record of each claim and replicate is its first complete run at the lock in reports/runlog.jsonl.")

#: the fields ``verdict.judge_record`` derives on a criterion: dropped before a pooled criterion is judged
_DERIVED = ("outcome", "passed", "refuted", "firmness", "seeds_for_firm", "tuning_seeds_for_firm", "firm_aims_at",
            "firmness_reason", "level", "refute_level", "p_value", "ci", "p_support", "p_refute", "deciding_part",
            "decision_note", "short_of_margin", "parts")
#: what a claim record keeps of one replicate only as a list per replicate, never as the pooled claim's own
_PER_RUN = ("figures", "tables", "notes", "headline", "gates", "regression", "budget_s")


class ReplicationError(ValueError):
    """Records that cannot be pooled (two records of one claim and replicate, criteria that differ); the message
    names them."""


# ============================================================================================ seeds
def replicate_seed(h: str, k: int) -> int:
    """Replicate k's master seed from the lock's hash h: in 1..10**6, never 0 (smoke's)."""
    if int(k) < 1:
        raise ValueError(f"replicates are numbered from 1, got {k}")
    return int(hashlib.sha256(f"{h}:replicate:{int(k)}".encode()).hexdigest()[:12], 16) % MAX_SEED + 1


def replicate_seeds(h: str, n: int = K) -> list[int]:
    """The master seeds of replicates 1..n; distinct (a collision, about 1 in 30,000 locks at K = 8, is an error:
    change nothing by hand, the lock has to move)."""
    seeds = [replicate_seed(h, k) for k in range(1, n + 1)]
    if len(set(seeds)) != len(seeds):
        raise ReplicationError(f"lock {h[:12]}: two replicates drew the same master seed {seeds}")
    return seeds


def lock_section(h: str) -> dict[str, Any]:
    """What the criteria lock pre-registers of the replication (``harness.record.lock.document`` stores it as the
    document's ``replication``, outside the hash it derives from): K, the replicate seeds, the rule, the level of
    r of K's interval and the fragile mark."""
    return {"K": K, "seeds": replicate_seeds(h), "profile": PROFILE, "rule": RULE, "level": LEVEL,
            "fragile_below": FRAGILE_BELOW}


def record_name(k: int, claims: Iterable[str]) -> str:
    """A replicate record's file name, ``r<k>-<claims>.json`` (claims in the suite's order)."""
    from harness.record.results import claim_sort_key

    return f"r{int(k)}-{'-'.join(sorted(set(claims), key=claim_sort_key))}.json"


# ======================================================================================== r of K
def wilson(r: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Wilson score interval of r successes in n at two-sided ``level`` (Wilson 1927)."""
    if n < 1 or not 0 <= r <= n:
        raise ValueError(f"wilson: needs 0 <= r <= n and n >= 1, got r={r}, n={n}")
    z = float(sps.norm.isf((1 - level) / 2))
    p = r / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, round(centre - half, 12)), min(1.0, round(centre + half, 12))


def summary(pooled_verdict: str, outcomes: Sequence[str], level: float = LEVEL) -> dict[str, Any]:
    """r of K from the replicates' own verdicts and the pooled one: ``{"K", "r", "wilson", "level", "fragile",
    "pooled_differs_from_most", "outcomes"}``. Fragile when r / K < FRAGILE_BELOW; ``pooled_differs_from_most``
    when fewer than half of the replicates gave the pooled verdict."""
    n = len(outcomes)
    r = sum(o == pooled_verdict for o in outcomes)
    lo, hi = wilson(r, n, level)
    return {"K": n, "r": r, "wilson": [lo, hi], "level": level, "fragile": r / n < FRAGILE_BELOW,
            "pooled_differs_from_most": 2 * r < n, "outcomes": list(outcomes)}


def refresh(claim: dict[str, Any]) -> dict[str, Any]:
    """A pooled claim's ``replication`` read again from its (re-decided) verdict and stored replicate outcomes, in
    place (``harness.record.results.rejudge``); a claim without one is left alone."""
    rep = claim.get("replication")
    if rep and rep.get("outcomes"):
        rep.update(summary(claim["verdict"], rep["outcomes"], rep.get("level", LEVEL)))
    return claim


# ======================================================================================== pooling
def cluster_effect(m: Mapping[str, Any]) -> float:
    """One replicate's effect on one part (its cluster summary): an estimate's value; the mean of the per-seed
    paired differences; mean(a) - mean(b) for unpaired arms; mean(a) for one arm."""
    if m["source"] == "estimate":
        return float(m["value"])
    a = np.asarray(m["a"], float)
    if m.get("b") is None:
        return float(a.mean())
    b = np.asarray(m["b"], float)
    return float((a - b).mean()) if m.get("paired") else float(a.mean() - b.mean())


#: what a replicate measures with (the claims, the model, the data, training, probes, budgets and the pinned
#: floating-point path): every replicate at a lock runs one version of these, and while the set is incomplete the
#: checkout does too (tests/record/test_runlog.py, by git). The decision code (harness/record) is not among them: a
#: stored run is judged again by ``rejudge``, and the lock's hash covers the rules.
MEASURING_PATHS = ("claims", "model", "harness/data", "harness/measure", "harness/train", "harness/study",
                   "harness/profiles", "harness/fp_path.py", "harness/schedule.py", "harness/settings.py",
                   "harness/__init__.py", "conftest.py")

#: a pooled part's arm that differed between replicates: ONE_OF + "a | b" (``harness.report.words.arm`` says it)
ONE_OF = "one of: "


def pooled_part(label: str, ms: Sequence[Mapping[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    """One part pooled from its measurement in each replicate (replicate ``ks[i]`` gave ``ms[i]``)."""
    exact = [m.get("exact") for m in ms if m["source"] == "estimate" and m.get("se") == 0]
    values = [cluster_effect(m) for m in ms]
    if len(exact) == len(ms) and len(set(values)) == 1:      # an exact point in every replicate: still exact
        out = decision.estimate(values[0], 0.0, len(ms) - 1, len(ms), label=label, exact=str(exact[0]),
                                method=f"exact in each of the {len(ms)} replicates")
    else:
        dead = [m.get("foil_dead") for m in ms]
        invalid = "; ".join(f"replicate {k}: {m['invalid']}" for k, m in zip(ks, ms)
                            if m.get("invalid") and not (all(dead) and m["invalid"].startswith(decision.DEAD_FOIL)))
        out = decision.samples(values, label=label, invalid=invalid, over=OVER,
                               foil_dead=f"in every replicate: {dead[0]}" if all(dead) else "")
    sides = {m.get("bound") for m in ms if m.get("bound")}          # issue 63: a censored part stays bounded
    if sides and "invalid" not in out:
        why = "; ".join(f"replicate {k}: {m['censored']}" for k, m in zip(ks, ms) if m.get("censored"))
        decision.censor_bound(out, [decision.BOUND_LOWER in sides], [decision.BOUND_UPPER in sides], why)
    picks = [[str(a) for a in m["arms"]] for m in ms if m.get("arms")]
    if picks:       # an arm a replicate chose for itself (C4's best other alpha) is named with every replicate's pick
        out["arms"] = [ONE_OF + " | ".join(dict.fromkeys(p[i] for p in picks)) if len({p[i] for p in picks}) > 1
                       else picks[0][i] for i in range(len(picks[0]))]
        if out["arms"] != picks[0]:
            out["arms_by_replicate"] = picks
    tuned = sorted({str(r["key"]) for m in ms for r in m.get("rates") or () if r.get("key")})
    if tuned:               # which models tuned their rate (their keys, no rate: each replicate chose its own)
        out["tuned"] = tuned
    return out


def pool_criterion(per_replicate: Sequence[Mapping[str, Any]], ks: Sequence[int]) -> dict[str, Any]:
    """One criterion's record pooled from its record in each replicate (``ks``: their replicate numbers), unjudged:
    its definition as declared, its parts pooled (``pooled_part``), or for an exact check whether it held in every
    replicate."""
    first = per_replicate[0]
    for c, k in zip(per_replicate[1:], ks[1:]):
        if c.get("fingerprint") != first.get("fingerprint"):
            raise ReplicationError(f"{first.get('name')}: replicate {k}'s definition (fingerprint "
                                   f"{c.get('fingerprint')}) is not replicate {ks[0]}'s ({first.get('fingerprint')})")
    out = {k: copy.deepcopy(v) for k, v in first.items() if k not in _DERIVED}
    out["replicate_detail"] = [c.get("detail") for c in per_replicate]
    rule = decision.rule_from_dict(first["rule"]) if first.get("rule") else None
    unrecorded = [k for c, k in zip(per_replicate, ks) if not c.get("recorded", True)]
    unmeasured = [f"replicate {k}: {c['unmeasured']}" for c, k in zip(per_replicate, ks) if c.get("unmeasured")]
    if unrecorded:
        out["recorded"] = False
        return out
    if rule is None or rule.kind == "exact":
        holds = [c.get("exact_holds") for c in per_replicate]
        if unmeasured or any(h is None for h in holds):
            out.update(exact_holds=None, unmeasured="; ".join(unmeasured) or "not decided in every replicate")
        else:
            failed = [k for h, k in zip(holds, ks) if not h]
            out["exact_holds"] = not failed
            out["detail"] = (f"holds in each of the {len(ks)} replicates" if not failed else
                             f"fails in replicate{'s' if len(failed) > 1 else ''} {', '.join(map(str, failed))}")
        return out
    labels = [[m.get("label") or "" for m in c.get("measurements") or []] for c in per_replicate]
    if unmeasured or not all(labels):
        out.update(measurements=[], unmeasured="; ".join(unmeasured) or "not measured in every replicate")
        return out
    if any(lb != labels[0] for lb in labels[1:]):
        out.update(measurements=[], unmeasured=f"the replicates measured different parts: {labels}")
        return out
    out["measurements"] = [pooled_part(label, [c["measurements"][q] for c in per_replicate], ks)
                           for q, label in enumerate(labels[0])]
    out["detail"] = (f"pooled over {len(ks)} replicates: each part's effect is the mean of the replicates' own "
                     "effects, its interval a t over them (df K - 1)")
    how = decision.test_text(rule, out["measurements"])
    out["test"] = f"each replicate's effect as one sample (the replicate is the cluster); {how}"
    out["measured"] = None
    return out


def pool_claim(per_replicate: Mapping[int, Mapping[str, Any]], K_: int = K) -> dict[str, Any]:
    """One claim's record pooled from its record in each replicate ({k: claim record}), judged by the suite's rule,
    with its ``replication`` (``summary``, plus the replicates' seeds, vendors, commits and runs)."""
    from harness.record import results as results_io     # results imports this module: imported when pooling

    ks = sorted(per_replicate)
    recs = [per_replicate[k] for k in ks]
    first = recs[0]
    names = [[c["name"] for c in r.get("criteria", [])] for r in recs]
    if any(n != names[0] for n in names[1:]):
        raise ReplicationError(f"{first.get('id')}: the replicates declare different criteria: {names}")
    claim = {k: copy.deepcopy(v) for k, v in first.items() if k not in _PER_RUN and k != "criteria"}
    claim.update(figures=[], tables={}, notes=[], gates={}, headline=None, error=None)
    claim["criteria"] = [pool_criterion([r["criteria"][i] for r in recs], ks) for i in range(len(names[0]))]
    claim["metrics"] = _mean_metrics([r.get("metrics") or {} for r in recs])
    claim["duration_s"] = round(sum(float(r.get("duration_s") or 0.0) for r in recs), 3)
    claim["seeds"] = [s for r in recs for s in (r.get("seeds") or [])] or None
    errored = any(r.get("verdict") == "error" for r in recs)
    claim["replication"] = {}    # before judging: judging moves the fields it re-derives after it, as rejudge does
    results_io.judge_claim(claim, errored=errored)
    outcomes = [r.get("verdict") for r in recs]
    claim["replication"].update({**summary(claim["verdict"], outcomes), "K": K_, "n": len(ks), "replicates": ks,
                                 **{f"{key}s": [(r.get("replicate") or {}).get(key) for r in recs]
                                    for key in ("seed", "vendor", "commit", "run", "file")}})
    return claim


def _mean_metrics(per: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The mean of each metric every replicate recorded as a finite number."""
    out = {}
    for name in per[0]:
        vals = [m.get(name) for m in per]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in vals):
            out[name] = float(np.mean(vals))
    return out


def pool(records: Sequence[Mapping[str, Any]], K_: int = K) -> dict[str, Any]:
    """The pooled results (results.json's schema, plus ``replication`` at the top and in each claim) from replicate
    records: each a results dict whose ``run.replicate`` says which replicate it is (``k``, ``seed``, ``lock``,
    ``run``, ``vendor``, ``commit``, ``file``). A claim is pooled once all K of its replicates are in; the others
    are listed under ``replication.in`` with the replicates that are. Two records of one claim and replicate are an
    error: choose the record first (``harness.record.runlog.select``)."""
    from harness.record.results import claim_sort_key     # results imports this module: imported when pooling

    by_claim: dict[str, dict[int, dict[str, Any]]] = {}
    runs: list[Mapping[str, Any]] = []
    locks = {(r["run"].get("replicate") or {}).get("lock") for r in records}
    if len(locks) > 1:
        raise ReplicationError(f"the records are at {len(locks)} locks: {sorted(map(str, locks))}")
    for rec in records:
        rep = rec["run"].get("replicate") or {}
        if not rep.get("k") or rec["run"].get("dry_run") or rec["run"].get("profile") != PROFILE:
            raise ReplicationError(f"{rep.get('file') or 'a record'}: not a replicate of the {PROFILE} profile "
                                   "(a dry run, another profile, or no run.replicate)")
        runs.append(rec["run"])
        for cid, claim in rec["claims"].items():
            if rep["k"] in by_claim.setdefault(cid, {}):
                raise ReplicationError(f"{cid}: two records of replicate {rep['k']}")
            by_claim[cid][rep["k"]] = {**claim, "replicate": {**rep, "commit": rec["run"].get("git_commit"),
                                                              "vendor": rep.get("vendor")}}
    claims, have = {}, {}
    for cid in sorted(by_claim, key=claim_sort_key):
        have[cid] = sorted(by_claim[cid])
        if len(have[cid]) >= K_:
            claims[cid] = pool_claim({k: by_claim[cid][k] for k in have[cid][:K_]}, K_)
    return {"schema_version": 2, "run": _pooled_run(runs, claims, K_, have), "claims": claims,
            "replication": {"K": K_, "lock": next(iter(locks), None), "rule": RULE,
                            "in": have, "complete": bool(have) and all(len(v) >= K_ for v in have.values())}}


def _pooled_run(runs: Sequence[Mapping[str, Any]], claims: Mapping[str, Any], K_: int,
                have: Mapping[str, list[int]]) -> dict[str, Any]:
    """The pooled record's ``run``: what the replicate runs share, their summed time, and where they differ, each
    (``replicates``: one entry a run, by replicate: k, seed, vendor, commit, start, duration, platform)."""
    first = runs[0] if runs else {}
    commits = sorted({r.get("git_commit") for r in runs if r.get("git_commit")})
    devices = sorted({r.get("device") for r in runs if r.get("device")})
    return {**{k: copy.deepcopy(first.get(k)) for k in ("torch_version", "python", "platform", "fp_path", "workers",
                                                        "criteria_lock", "blocks")},
            "profile": PROFILE, "device": ", ".join(devices), "seeds": sorted({s for r in runs for s in r["seeds"]}),
            "git_commit": commits[0] if len(commits) == 1 else ", ".join(commits) or None,
            "started_at": min((r.get("started_at") for r in runs if r.get("started_at")), default=None),
            "duration_s": round(sum(float(r.get("duration_s") or 0) for r in runs), 3),
            "complete": bool(have) and all(len(v) >= K_ for v in have.values()),
            "master_seed": None, "seeds_from": "lock", "fast": False, "dry_run": False, "inject_fault": None,
            "criteria_at_lock": all(r.get("criteria_at_lock") for r in runs) if runs else None,
            "replicated": {"K": K_, "runs": len(runs), "claims": len(claims)},
            "replicates": sorted(({**{k: (r.get("replicate") or {}).get(k) for k in ("k", "seed", "vendor")},
                                   "commit": r.get("git_commit"), "started_at": r.get("started_at"),
                                   "duration_s": r.get("duration_s"), "platform": r.get("platform")} for r in runs),
                                 key=lambda e: (int(e["k"] or 0), str(e["started_at"])))}
