"""Criteria -> verdict, and nothing else (issues 4, 16).

Works on criterion *records* (the dicts in results.json), not on live Evidence objects, so the same
rule judges a fresh run, a merged xdist run and a stored baseline. Measurement lives in
``harness.record.evidence``, the statistics of one decision in ``harness.record.decision``, rendering in ``harness.report``.

How a verdict is decided: ``HOW_VERDICTS_ARE_DECIDED`` below, which the report prints word for word.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from harness.record import decision, pvalues
from harness.record.firmness import FRAGILE_BELOW

#: The rule, as the report prints it (and the README's "How verdicts are decided" summarises).
HOW_VERDICTS_ARE_DECIDED = (
    "Each criterion declared its rule before measuring: superiority, non-inferiority or equivalence of two arms "
    "with a stated margin (the smallest effect the claim cares about, and why), a band for one quantity, or an "
    "exact (deterministic) check. The seed is the unit: arms are compared over per-seed values, paired by seed "
    "where they share the seed's data and initialisation.",
    "A rule has a pass region and a refutation region. A criterion passes when its two-sided 90% Student-t "
    "interval (Welch's for unpaired arms; alpha = 0.05 one-sided) lies inside the pass region. It is refuted only "
    "when the interval lies in the refutation region, which means the prediction is contradicted: for "
    "superiority, no advantage at all (the interval at or below 0); for non-inferiority, worse by more than the "
    "margin; for equivalence and bands, wholly outside (a one-sided band predicting a direction may declare a "
    "null: then only the far side of it refutes). Between the two it is inconclusive; 'smaller than the margin' "
    "says when the effect was measured but is below what the claim cares about. Non-significance never passes "
    "and never refutes: 'similar' and 'flat' are equivalence tests with a margin. An arm constant across seeds "
    "(a ceiling) or a comparison marked invalid (an arm tuned to the edge of its grid) is inconclusive.",
    "One rule for several parts (every d_k, or the same comparison on two tasks): a criterion passes only if "
    "every part passes, and is refuted if any part is refuted; the verdict names the scope ('refuted on "
    "key-value lookup; passed on delayed copy').",
    "The claim is supported if every counted criterion passed: an intersection-union test, each at alpha = 0.05 "
    "with no multiplicity correction (the claim's false-support rate stays at or below 0.05). It is refuted if "
    "any counted criterion was refuted, where refutation is decided by Holm's step-down over every part of every "
    "counted criterion (the r-th smallest of m refutation p-values at 0.05 / (m - r + 1)), so the claim's "
    "false-refutation rate stays at or below 0.05; an exact check that fails refutes. Otherwise inconclusive, "
    "including a criterion never recorded; error if its module crashed. A claim with nothing counted in the run "
    "claims nothing: it reads not tested here, with its module's reason, and never fails the run. "
    "Questions read answered yes / answered no / inconclusive at this scale. A question asked of several cases "
    "(each counted criterion naming the case it answers for: a variant) also gets one answer per case, from that "
    "case's counted criteria by the same rule (within the question's Holm family), each with the firmness of its "
    "weakest criterion; the pooled verdict stays the rule above, and its scope names each case's answer ('answered "
    "no for l2; answered yes for rmsnorm'). Reported criteria are decided alone and never enter the verdict.",
    "A premise is a condition the test needs (the variance law a scaling claim builds on; that one head averages, "
    "for a claim that heads undo averaging). It is decided alone, outside the Holm family and the claim's "
    "firmness, and checked first: if any premise did not pass (refuted, or not shown), the claim is inconclusive, "
    "not testable here, with the premise and its numbers as the reason, whatever its counted criteria say.",
    "Firmness is the replication probability, estimated from this run's seeds: the share of simulated fresh, "
    "equally sized seed sets that give the same outcome, each drawn from the predictive distribution (each arm's "
    "mean and spread first drawn from their posterior at the observed n; an arm whose rate was tuned has its "
    "rate chosen afresh too, from its tuning runs, and moves by what that rate gives), "
    "with the whole rule applied in every simulated run; criteria measured on the same seeds are drawn together, "
    "correlated as their per-seed values are, so criteria that share runs pass or fail together. It is not "
    "estimated (null, with the reason) for exact checks, for degenerate, invalid or unmeasured criteria, and for "
    "an inconclusive verdict that rests on one, nor for a refutation that a counted exact check decides alone "
    "(every fresh seed set repeats it). "
    "'Seeds for firm' is a planning number: the seed count at which the outcome would reach 0.9 if the observed "
    "means and spreads were the truth. Below 0.8 a verdict is marked fragile.",
)
KINDS = ("claim", "recommendation", "question")
SUPPORTED, INCONCLUSIVE, REFUTED, ERROR = "supported", "inconclusive", "refuted", "error"
#: Nothing counted, nothing claimed (issue 47): a claim (or question) with no counted criterion in this run reads
#: "not tested here", with the module's reason (``Evidence.counts_nothing``), and never fails the run
NOT_TESTED = "not tested"
CLAIM_VERDICTS = (SUPPORTED, INCONCLUSIVE, REFUTED, ERROR, NOT_TESTED)
QUESTION_LABELS = {SUPPORTED: "answered yes", INCONCLUSIVE: "inconclusive at this scale",
                   REFUTED: "answered no", ERROR: ERROR, NOT_TESTED: NOT_TESTED}
ALL_VERDICTS = CLAIM_VERDICTS + tuple(label for v, label in QUESTION_LABELS.items() if label != v)
_CANONICAL = {**{v: v for v in CLAIM_VERDICTS}, **{label: v for v, label in QUESTION_LABELS.items()}}
# Worse is lower: the order the regression gate uses (supported > inconclusive = not tested > refuted > error). Not
# tested ranks with inconclusive: neither claims anything, so a move between them is no regression.
_RANK = {SUPPORTED: 3, INCONCLUSIVE: 2, NOT_TESTED: 2, REFUTED: 1, ERROR: 0}
#: why a claim counts nothing when its module does not say (``judge_record``'s ``not_tested``)
NO_COUNTED_CRITERION = "it declares no counted criterion"
NO_FAST_COUNTED = "a --fast run keeps none of its counted criteria"


#: A criterion's role (issue 38): counted (decides the verdict, in the Holm family), premise (a condition the test
#: needs: decided alone and checked first; one that does not pass makes the claim inconclusive, not testable here),
#: reported (shown, decided alone, never in the verdict).
COUNTED, PREMISE, REPORTED = "counted", "premise", "reported"
ROLES = (COUNTED, PREMISE, REPORTED)


def role_of(criterion: Mapping[str, Any]) -> str:
    """A criterion record's role: its ``role``, else (a record written before roles) counted unless ``counts`` is
    false."""
    role = criterion.get("role")
    if role in ROLES:
        return role
    return COUNTED if criterion.get("counts", True) else REPORTED


def _in_run(c: Mapping[str, Any], fast_only: bool) -> bool:
    return bool(c.get("fast", False) or not fast_only)


def counted(criteria: Iterable[Mapping[str, Any]], fast_only: bool = False) -> list[Mapping[str, Any]]:
    """The criteria that enter the verdict: role counted, and in a --fast run only the fast ones."""
    return [c for c in criteria if role_of(c) == COUNTED and _in_run(c, fast_only)]


def premises(criteria: Iterable[Mapping[str, Any]], fast_only: bool = False) -> list[Mapping[str, Any]]:
    """The claim's premises, in a --fast run only the fast ones."""
    return [c for c in criteria if role_of(c) == PREMISE and _in_run(c, fast_only)]


def failed_premises(criteria: Iterable[Mapping[str, Any]], fast_only: bool = False) -> list[Mapping[str, Any]]:
    """The judged premises that did not pass (refuted, inconclusive, unmeasured or never recorded)."""
    return [c for c in premises(criteria, fast_only) if not c.get("passed")]


def premise_failure(c: Mapping[str, Any]) -> str:
    """Why one premise did not pass, in a line: 'premise <name> refuted: measured 0.93, interval [0.9, 0.96]
    against ...' or 'premise <name> not shown: ...'."""
    if not c.get("recorded", True):
        return f"premise {c.get('name')} not shown: never recorded"
    state = "refuted" if c.get("refuted") else "not shown"
    kind = c.get("kind") or (c.get("rule") or {}).get("kind")
    bits = []
    if kind == "exact":
        bits.append("the check failed" if c.get("refuted") else "not decided")
        if c.get("detail"):
            bits.append(_clip(str(c["detail"])))
    else:
        if c.get("measured") is not None:
            bits.append(f"measured {_fmt(c['measured'])}" + (f" at {c['deciding_part']}"
                                                              if c.get("deciding_part") else ""))
        if c.get("ci") is not None:
            bits.append(f"interval {_fmt(c['ci'])}")
        if c.get("threshold"):
            bits.append(f"against {c['threshold']}")
    if c.get("decision_note"):
        bits.append(str(c["decision_note"]))
    return f"premise {c.get('name')} {state}" + (f": {', '.join(bits)}" if bits else "")


def not_testable(criteria: Iterable[Mapping[str, Any]], fast_only: bool = False) -> str:
    """Why the claim cannot be tested here (its failed premises, '; '-joined), or '' when every premise passed."""
    return "; ".join(premise_failure(c) for c in failed_premises(criteria, fast_only))


def _clip(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[:n].rsplit(" ", 1)[0] + "…"


_VERDICT_OF_CODE = {2: SUPPORTED, 1: INCONCLUSIVE, 0: REFUTED}


def judge_record(criteria: Sequence[Mapping[str, Any]], *, kind: str = "claim", errored: bool = False,
                 fast_only: bool = False, firmness: bool = True, nothing_counted: str = "") -> dict[str, Any]:
    """Decide a claim's criteria records: returns ``{"criteria": [judged copies], "verdict", "firmness",
    "seeds_for_firm", "n_seeds", "scope", "not_testable", "not_tested"}``. Each judged criterion gains its ``role``
    and outcome,
    passed, refuted, ci (at its Holm level), p_value and what it is (p_label: ``harness.record.pvalues``), level,
    measured, firmness and seeds_for_firm.

    Counted criteria decide the verdict (Holm over their parts); premises and reported criteria are decided alone.
    A premise that did not pass (in a --fast run, a fast one) makes the claim inconclusive whatever its counted
    criteria say, with ``not_testable`` saying which premise and why (``premise_failure``), and no firmness.

    A claim with no counted criterion in the run (none declared, or a --fast run keeps none) is ``NOT_TESTED``
    (unless it errored), whatever its premises say, with ``not_tested`` giving why: ``nothing_counted`` (the
    module's reason, ``Evidence.counts_nothing``) or the harness's own."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    criteria = [{**c, "role": role_of(c)} for c in criteria]
    judged_ids = {id(c) for c in counted(criteria, fast_only)}
    mask = [id(c) in judged_ids for c in criteria]
    result = decision.judge(criteria, mask, firmness=firmness)
    for c, d in zip(criteria, result.criteria):
        if not d:
            c.update(outcome=None, passed=False, refuted=False, firmness=None, seeds_for_firm=None)
            continue
        c.update(outcome=d["outcome"], passed=d["outcome"] == decision.PASSED,
                 refuted=d["outcome"] == decision.REFUTED, firmness=d.get("firmness"),
                 seeds_for_firm=d.get("seeds_for_firm"))
        for plan in ("tuning_seeds_for_firm", "firm_aims_at"):   # the plan's other seed set and its aim (issue 54)
            if d.get(plan) is not None:
                c[plan] = d[plan]
        if d.get("firmness") is None and d.get("firmness_reason"):
            c["firmness_reason"] = d["firmness_reason"]
        if d.get("decision_note") and d.get("level") is None:
            c["decision_note"] = d["decision_note"]
        if "level" in d and d["level"] is not None:
            c.update(level=d["level"], refute_level=d["refute_level"], p_value=d["p_value"],
                     p_label=pvalues.label(d, counted=id(c) in judged_ids), ci=list(d["ci"]),
                     measured=d["measured"], p_support=d["p_support"], p_refute=d["p_refute"],
                     deciding_part=d["deciding_part"], decision_note=d["decision_note"],
                     short_of_margin=d["short_of_margin"])
            if len(d["parts"]) > 1:
                c["parts"] = d["parts"]
    settled = _settle(criteria, result.verdict_code, kind=kind, errored=errored, fast_only=fast_only,
                      nothing_counted=nothing_counted)
    firm, need, why = result.firmness, result.seeds_for_firm, result.firmness_reason
    plan = {"tuning_seeds_for_firm": getattr(result, "tuning_seeds_for_firm", None),
            "firm_aims_at": getattr(result, "firm_aims_at", None)}
    if errored:
        firm, need, why = None, None, "the module errored"
    elif settled["not_testable"]:
        firm, need, why = None, None, "not testable here: a premise did not pass"
    elif canonical(settled["verdict"]) == REFUTED and firm is not None and (checks := refuting_checks(criteria, fast_only)):
        firm, need, why = None, None, (
            f"decided by deterministic checks alone ({', '.join(checks)} refuted: an exact check gives the same "
            "outcome on any seeds, so every simulated run repeats it): nothing to simulate")
    return {"criteria": criteria, "verdict": settled["verdict"], "firmness": firm, "seeds_for_firm": need,
            "firmness_reason": why, "n_seeds": result.n_seeds, "scope": settled["scope"],
            "not_testable": settled["not_testable"], "not_tested": settled["not_tested"],
            "answers": settled["answers"], **(plan if need is not None else {})}


def _settle(criteria: Sequence[Mapping[str, Any]], code: int, *, kind: str, errored: bool, fast_only: bool,
            nothing_counted: str = "") -> dict[str, str]:
    """The verdict of judged criteria whose counted outcomes gave verdict ``code`` (2, 1, 0): error if the module
    errored, not tested if nothing is counted in the run (``not_tested`` says why: the module's
    ``nothing_counted``, else the harness's reason), inconclusive (not testable here) if a premise did not pass,
    else the code's; with ``not_testable`` and ``scope``."""
    untestable = "" if errored else not_testable(criteria, fast_only)
    nothing = "" if errored or counted(criteria, fast_only) else nothing_counted or (
        NO_FAST_COUNTED if fast_only and counted(criteria) else NO_COUNTED_CRITERION)
    if errored:
        outcome = ERROR
    elif nothing:
        outcome = NOT_TESTED
    elif untestable:
        outcome = INCONCLUSIVE
    else:
        outcome = _VERDICT_OF_CODE[code]
    per_case = [] if errored or untestable or nothing or kind != "question" else answers(criteria, fast_only)
    where = "" if errored or untestable else scope(criteria, outcome, fast_only)
    if len({a["answer"] for a in per_case}) > 1:
        where = " | ".join(filter(None, (answers_text(per_case, firmness=False), where)))
    return {"verdict": QUESTION_LABELS[outcome] if kind == "question" else outcome,
            "not_testable": untestable, "not_tested": nothing, "scope": where, "answers": per_case}


def part_verdict(criteria: Sequence[Mapping[str, Any]], *, kind: str = "claim", errored: bool = False,
                 fast_only: bool = False, nothing_counted: str = "") -> dict[str, Any]:
    """The verdict of some of a claim's criteria *as the claim judged them* (their outcomes are read, nothing is
    decided again): a test part's verdict, for its pytest outcome and its gate. ``{"verdict", "not_testable",
    "not_tested", "scope", "answers"}`` by the verdict rule of ``judge_record``; a counted criterion without an
    outcome was never recorded."""
    judged = counted(criteria, fast_only)
    code = decision.verdict_code([decision.OUTCOME_RANK[c["outcome"]] for c in judged if c.get("outcome")],
                                 sum(not c.get("outcome") for c in judged))
    return _settle(criteria, code, kind=kind, errored=errored, fast_only=fast_only, nothing_counted=nothing_counted)


def answers(criteria: Sequence[Mapping[str, Any]], fast_only: bool = False) -> list[dict[str, Any]]:
    """A question's answer per case (issue 47): ``[{"case", "answer", "firmness", "criteria"}]`` in the order the
    cases' counted criteria come, for the counted criteria that name a case (``answers``); [] when none does. A
    case is answered no if any of its criteria was refuted (at the question's Holm level), yes if every one passed,
    else inconclusive at this scale; its firmness is its weakest criterion's (None where one has none)."""
    cases: dict[str, list[Mapping[str, Any]]] = {}
    for c in counted(criteria, fast_only):
        if c.get("answers"):
            cases.setdefault(str(c["answers"]), []).append(c)
    out = []
    for case, cs in cases.items():
        outcome = REFUTED if any(c.get("refuted") for c in cs) else \
            SUPPORTED if all(c.get("passed") for c in cs) else INCONCLUSIVE
        firm = [c.get("firmness") for c in cs]
        out.append({"case": case, "answer": QUESTION_LABELS[outcome],
                    "firmness": None if any(f is None for f in firm) else min(firm),
                    "criteria": [c["name"] for c in cs]})
    return out


#: what a claim's verdict line adds where it read a model at random init beside trained weights (``at_init``)
AT_INIT = "at init"


def verdict_shown(claim: Mapping[str, Any]) -> str:
    """The verdict as a claim's lines show it: 'supported at init' where the claim read the architecture at random
    init while trained weights were on trial (its record's ``at_init``, issue 55), else the verdict itself."""
    v = claim.get("verdict")
    return f"{v} {at_init_label(claim)}" if v and claim.get("at_init") else str(v)


def at_init_label(claim: Mapping[str, Any]) -> str:
    """How a claim that read the architecture, not the trained weights on trial, labels its verdict: "at init",
    or its record's ``at_init_label`` ("trained from init" where it trained the architecture here)."""
    return claim.get("at_init_label") or AT_INIT


def answers_text(per_case: Sequence[Mapping[str, Any]], firmness: bool = True) -> str:
    """'answered no for l2 (firmness 0.78); answered yes for rmsnorm (firmness 0.91)'; '' for no cases."""
    def firm(a: Mapping[str, Any]) -> str:
        f = a.get("firmness")
        return "" if not firmness else " (firmness not estimated)" if f is None else f" (firmness {f:.2f})"
    return "; ".join(f"{a['answer']} for {a['case']}{firm(a)}" for a in per_case)


def refuting_checks(criteria: Sequence[Mapping[str, Any]], fast_only: bool = False) -> list[str]:
    """The judged counted exact checks that came out refuted. One is enough to refute the claim, on any seeds,
    so a refutation that has one is decided by deterministic checks alone and has no firmness (issue 47,
    finding 1), as a claim of exact checks only has none: the simulation would hold them fixed and read 1.00."""
    return [c["name"] for c in counted(criteria, fast_only)
            if (c.get("rule") or {}).get("kind") == "exact" and c.get("refuted")]


def refuting_checks(criteria: Sequence[Mapping[str, Any]], fast_only: bool = False) -> list[str]:
    """The judged counted exact checks that came out refuted. One is enough to refute the claim, on any seeds,
    so a refutation that has one is decided by deterministic checks alone and has no firmness (issue 47,
    finding 1), as a claim of exact checks only has none: the simulation would hold them fixed and read 1.00."""
    return [c["name"] for c in counted(criteria, fast_only)
            if (c.get("rule") or {}).get("kind") == "exact" and c.get("refuted")]


def scope(criteria: Sequence[Mapping[str, Any]], outcome: str, fast_only: bool = False) -> str:
    """Where a verdict holds when its counted criteria's parts disagree: 'refuted on kv_lookup
    (c_large_dk_scaled_beats_unscaled); passed on delayed_copy'. Empty when every part agrees."""
    bits = []
    for c in counted(criteria, fast_only):
        parts = c.get("parts") or []
        states = {p["outcome"] for p in parts}
        if len(states) < 2:
            continue
        by = {o: [p["label"] for p in parts if p["outcome"] == o] for o in ("refuted", "inconclusive", "passed")}
        bits.append(f"{c['name']}: " + "; ".join(f"{o} on {', '.join(labels)}" for o, labels in by.items() if labels))
    return " | ".join(bits)


def decide(criteria: Sequence[Mapping[str, Any]], *, kind: str = "claim", errored: bool = False,
           fast_only: bool = False) -> str:
    """The verdict for a claim's criteria records (see the module docstring for the rule)."""
    return judge_record(criteria, kind=kind, errored=errored, fast_only=fast_only, firmness=False)["verdict"]


def apply_judgement(record: dict[str, Any], *, errored: bool = False, fast_only: bool = False) -> dict[str, Any]:
    """Judge a claim (or part) record in place: its criteria, verdict, firmness and seeds_for_firm."""
    j = judge_record(record.get("criteria", []), kind=record.get("kind") or "claim", errored=errored,
                     fast_only=fast_only, nothing_counted=record.get("nothing_counted") or "")
    record["criteria"] = j["criteria"]
    record.update(verdict=j["verdict"], firmness=j["firmness"], seeds_for_firm=j["seeds_for_firm"])
    for plan in ("tuning_seeds_for_firm", "firm_aims_at"):
        record.pop(plan, None)
        if j.get(plan) is not None:
            record[plan] = j[plan]
    record["firmness_reason"] = j["firmness_reason"] if j["firmness"] is None else ""
    record["scope"] = j["scope"]
    if j["answers"] or "answers" in record:
        record["answers"] = j["answers"]
    record["not_testable"] = j["not_testable"]
    if j["not_tested"] or "not_tested" in record:
        record["not_tested"] = j["not_tested"]
    return record


def deciding_criteria(record: Mapping[str, Any], limit: int = 2) -> tuple[list[Mapping[str, Any]], int]:
    """The criteria a claim's verdict rests on, most telling first, and how many more there are.

    Not testable here (a premise did not pass): those premises, in declared order. Refuted: its refuted counted
    criteria, the firmest refutation first. Inconclusive: the counted criteria that neither passed nor were
    refuted (never recorded included), the least firm first. Supported: every counted criterion passed, so the
    verdict is only as firm as its weakest ones: the least firm first. An error or nothing counted: none.
    """
    if canonical(record.get("verdict")) in (ERROR, NOT_TESTED):
        return [], 0
    fast_only = bool(record.get("fast"))
    verdict = canonical(record.get("verdict"))
    failed = failed_premises(record.get("criteria", []), fast_only) if verdict == INCONCLUSIVE else []
    if failed:
        return failed[:limit], max(0, len(failed) - limit)
    judged = counted(record.get("criteria", []), fast_only)

    def firmness(c: Mapping[str, Any]) -> float:
        # no firmness: an exact check (deterministic, the firmest) when it passed or refuted; an untestable or
        # unmeasured criterion (the least firm) when it left the claim open
        if isinstance(c.get("firmness"), (int, float)):
            return c["firmness"]
        return -1.0 if verdict == INCONCLUSIVE else 2.0
    if verdict == REFUTED:
        pick = sorted((c for c in judged if c.get("refuted")), key=firmness, reverse=True)
    elif verdict == INCONCLUSIVE:
        pick = sorted((c for c in judged if not c.get("passed") and not c.get("refuted")), key=firmness)
    else:
        pick = sorted(judged, key=firmness)
    return pick[:limit], max(0, len(pick) - limit)


#: the label beside an inconclusive verdict whose counted interval lies in its refutation region at alpha while
#: Holm's step-down does not reject it (issue 54): a label, never a verdict
LEANING_REFUTED = "leaning refuted"


def leaning(criterion: Mapping[str, Any]) -> bool:
    """A judged criterion whose interval lies in its refutation region at alpha, which Holm's correction over the
    claim does not reject (``decision.HOLM_NOT_REJECTED`` in its note)."""
    return decision.HOLM_NOT_REJECTED in str(criterion.get("decision_note") or "")


def leaning_refuted(record: Mapping[str, Any]) -> list[str]:
    """The counted criteria of an inconclusive claim whose interval lies in the refutation region at alpha, which
    Holm's correction over the claim does not reject (``decision.HOLM_NOT_REJECTED`` in their note); [] otherwise."""
    if canonical(record.get("verdict")) != INCONCLUSIVE:
        return []
    return [c.get("name") for c in counted(record.get("criteria", []), bool(record.get("fast")))
            if leaning(c)]


#: a summary cell's short phrase for why firmness was not estimated: the first of these keys found in the
#: record's reason (the reason itself is in the claim's own section)
_WHY_NOT_ESTIMATED = (("dead foil", "a dead foil"), ("at the floor", "an arm at the loss floor"),
                      ("constant across seeds", "an arm constant across seeds"),
                      ("edge", "a tuned rate at its grid's edge"), ("deterministic", "deterministic checks only"),
                      ("exact point", "exact points only"), ("nothing counted", "nothing counted"),
                      ("not measured", "a criterion not measured"))


def firmness_short(record: Mapping[str, Any]) -> str:
    """``firmness_text`` for a summary cell: one short phrase, 'firmness not estimated: a dead foil'; the long reason
    stays in the claim's section."""
    if record.get("firmness") is not None:
        return firmness_text(record)
    why = str(record.get("firmness_reason") or "")
    phrase = next((short for key, short in _WHY_NOT_ESTIMATED if key in why), "")
    return "firmness not estimated" + (f": {phrase}" if phrase else "")


def fragile(firmness: float | None) -> bool:
    return firmness is not None and firmness < FRAGILE_BELOW


#: what a tuned claim's firmness holds fixed where its measurements do not carry their rate choices (issue 38,
#: finding 10; issue 47, mechanism 3): a new tuning seed can move the rates (C3's firmness once went 0.81 -> 0.47)
GIVEN_TUNED = "given the tuned rates"


def tuned_rates(record: Mapping[str, Any]) -> bool:
    """True for a claim whose arms ran at learning rates it tuned (its metrics hold ``tuned_...`` entries)."""
    return any(str(k).startswith("tuned_") for k in (record.get("metrics") or {}))


def tuned(record: Mapping[str, Any]) -> bool:
    """True for a claim whose arms ran at learning rates it tuned (``tuned_rates``) and whose firmness holds some
    of them fixed: a counted criterion it simulated reads per-seed samples that say nothing of their rates (no
    ``rates``; ``rates=[]`` says every arm ran at the profile's rate: ``harness.record.firmness``, "A fresh rate
    choice")."""
    if not tuned_rates(record):
        return False
    return any(m.get("source") == "samples" and "rates" not in m
               for c in record.get("criteria") or () if c.get("counts", True) and c.get("firmness") is not None
               for m in c.get("measurements") or ())


def firmness_text(record: Mapping[str, Any], n_seeds: int | None = None) -> str:
    """'firmness 0.97', or 'fragile at N seeds: about M needed (firmness 0.55)'; a tuned claim's says 'given the
    tuned rates'."""
    f = record.get("firmness")
    if f is None:
        return "firmness not estimated" + (f" ({record['firmness_reason']})" if record.get("firmness_reason") else "")
    given = f" {GIVEN_TUNED}" if tuned(record) else ""
    if not fragile(f):
        return f"firmness {f:.2f}{given}"
    need = record.get("seeds_for_firm")
    at = f" at {n_seeds} seeds" if n_seeds else ""
    tuning = record.get("tuning_seeds_for_firm")
    aim = record.get("firm_aims_at")
    more = (f": about {need} needed" + (f", with {tuning} tuning seeds" if tuning else "")
            + (f", to firm '{aim}'" if aim else "")) if need else ": no seed count up to 200 firms it"
    return f"fragile{at}{more} (firmness {f:.2f}{given})"


def canonical(verdict: str | None) -> str | None:
    """supported/inconclusive/refuted/error for any verdict label (a question's included); None stays None."""
    if verdict is None:
        return None
    try:
        return _CANONICAL[verdict]
    except KeyError:
        raise ValueError(f"unknown verdict {verdict!r}; valid: {', '.join(ALL_VERDICTS)}") from None


def rank(verdict: str) -> int:
    return _RANK[canonical(verdict)]


def test_passes(verdict: str, kind: str) -> bool:
    """The pytest outcome without a baseline (issue 56: one rule with the model trial's exit status): a claim's test
    fails only where the evidence contradicts it (refuted) or the module errored. Inconclusive is a finding, said in
    the summary and the report, not a failure, so a correct checkout's first run exits 0; a question fails only
    on an error."""
    if kind == "question":
        return canonical(verdict) != ERROR
    return canonical(verdict) not in (REFUTED, ERROR)


test_passes.__test__ = False  # a helper, not a pytest test


def is_worse(now: str, base: str, kind: str) -> bool:
    """True when ``now`` is a worse verdict than ``base``.

    For a question, yes and no are both answers, so only an error counts as worse (a changed answer
    is reported, not gated).
    """
    if kind == "question":
        return canonical(now) == ERROR and canonical(base) != ERROR
    return rank(now) < rank(base)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return str(value)


def explain(record: Mapping[str, Any]) -> str:
    """A few lines that say why a claim got its verdict (the pytest failure text, the terminal)."""
    fast_only = bool(record.get("fast"))
    judged = {id(c) for c in counted(record.get("criteria", []), fast_only)}
    lines = [f"{record.get('id')} {record.get('verdict')}: {record.get('statement') or record.get('title') or ''}".rstrip()]
    for c in record.get("criteria", []):
        if not c.get("recorded", True):
            state = "NEVER RECORDED"
        elif c.get("refuted"):
            state = "REFUTED"
        else:
            state = "passed" if c.get("passed") else \
                "inconclusive (smaller than the margin)" if c.get("short_of_margin") else "inconclusive"
        kind = c.get('kind') or (c.get('rule') or {}).get('kind', '?')
        # an exact check has no threshold: its state says whether it held
        extra = [f"{kind}", f"measured {_fmt(c.get('measured'))}"] + (
            ["deterministic"] if kind == "exact" else [f"threshold {_fmt(c.get('threshold'))}"])
        if c.get("ci") is not None:
            extra.append(f"CI {_fmt(c['ci'])}")
        if pvalues.shown(c):
            extra.append(pvalues.shown(c))
        if c.get("firmness") is not None:
            extra.append(f"firmness {c['firmness']:.2f}")
        if c.get("parts"):
            extra.append("parts " + ", ".join(f"{p['label']} {p['outcome']}" for p in c["parts"]))
        counts = "" if id(c) in judged else " (premise)" if role_of(c) == PREMISE else " (not counted)"
        lines.append(f"  - {c.get('name')}: {state}{counts}; " + ", ".join(extra))
        if c.get("quote"):
            lines.append(f"      the note: {c['quote']}")
        if c.get("detail"):
            lines.append(f"      {c['detail']}")
        if c.get("decision_note") and c["decision_note"] != c.get("detail"):    # an unmeasured one says it once
            lines.append(f"      {c['decision_note']}")
    if record.get("not_testable"):
        lines.append(f"  not testable here: {record['not_testable']}")
    if not judged:
        lines.append(f"  not tested here: {record.get('not_tested') or NO_COUNTED_CRITERION} "
                     "(no counted criterion: nothing can support or refute this claim)")
    if record.get("answers"):
        lines.append(f"  answers: {answers_text(record['answers'])}")
    if record.get("scope"):
        lines.append(f"  scope: {record['scope']}")
    if record.get("error"):
        lines.append(f"  error: {record['error']}")
    return "\n".join(lines)


# Practices in the record that this note bears on, and the claims whose verdicts decide them.
PRACTICES = (
    {"id": "SOTA-050", "practice": "scale attention weights by 1/sqrt(head_dim)",
     "claims": ("C3", "C4", "R1"), "note_disposition": "confirmed — C3, C4"},
)


def practice_disposition(claim_ids: Sequence[str], verdicts: Mapping[str, str | None]) -> str:
    """confirmed if every deciding claim is supported; not confirmed if any is refuted; else open.

    'not run' when none of them ran in this session.
    """
    found = [canonical(verdicts.get(cid)) for cid in claim_ids]
    if all(v is None for v in found):
        return "not run"
    if any(v == REFUTED for v in found):
        return "not confirmed"
    if all(v == SUPPORTED for v in found):
        return "confirmed"
    return "open"


def practice_dispositions(verdicts: Mapping[str, str | None], kernel: str | None = None,
                          model: str | None = None) -> list[dict[str, Any]]:
    """One row per practice: the note's disposition beside this run's, with the deciding verdicts. With a ``kernel``
    (or a ``model``, issue 40) on trial the verdicts judge that kernel or model, not the practice (a mask bug
    refutes R1 on the kernel and says nothing of 1/sqrt(head_dim), issue 39): the disposition says so instead."""
    judged = f"the kernel {kernel}" if kernel else f"the model {model}" if model else None
    rows = []
    for p in PRACTICES:
        rows.append({**p, "verdicts": {cid: verdicts.get(cid) or "not run" for cid in p["claims"]},
                     "disposition": practice_disposition(p["claims"], verdicts) if judged is None else
                     f"not judged: these verdicts judge {judged}, not the practice"})
    return rows


__doc__ += "\n" + "\n\n".join(f"{i}. {p}" for i, p in enumerate(HOW_VERDICTS_ARE_DECIDED, 1)) + "\n"
