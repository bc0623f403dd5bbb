"""One sentence a claim, in the paper's words (issue 63): the README's findings rows, the report's summary cells and
the terminal summary.

A row says the verdict; the deciding effect with the arms as the paper names them (``harness.report.words``), the
task in words, the interval with its unit; what was needed; and at most one more clause: why a refutation was not
declared (Holm), a decided outcome at the edge of its level, or the strongest comparison that is not part of the
claim, called so. Pure functions over a results record; which criteria decide is ``verdict.deciding_criteria``'s
answer, never this module's.

**Direction words** ("worse", "better", "larger", "smaller", "faster") appear only where the interval excludes zero;
where it does not, the sentence gives the difference with its sign ("A minus B is 0.02 nats [−0.006, 0.045]").
"Not significant" is never said as "similar": only an equivalence result, both bounds inside the margin, is.
``tests/report/test_sentences.py`` holds these properties on every committed results file.
"""
from __future__ import annotations

import math
import re
from typing import Any, Mapping, Sequence

from harness.record import decision, pvalues
from harness.record import verdict as verdicts
from harness.report import words

#: at most this many words a row (issue 63)
MAX_WORDS = 90
#: a decided outcome whose p lies within this share of its level below it is "at the edge": one seed more or less
#: could turn it, which the firmness says in a number and the sentence in words (issue 54)
EDGE_SHARE = 0.2


def num(x: Any, digits: int = 2) -> str:
    """A number for prose: ``digits`` significant digits (at least the integer part), a real minus sign."""
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return "∞" if x == math.inf else "−∞" if x == -math.inf else "not measured"
    text = f"{x:.0f}" if abs(x) >= 10 ** digits else f"{x:.{digits}g}"
    if "e" in text:
        text = f"{x:.{digits - 1}e}"
    return text.replace("-", "−")


def _finite(ci: Any) -> bool:
    return isinstance(ci, (list, tuple)) and len(ci) == 2 and all(
        isinstance(v, (int, float)) and math.isfinite(v) for v in ci)


def excludes_zero(ci: Any) -> bool:
    """Whether an interval lies wholly on one side of zero (a direction may be said)."""
    return _finite(ci) and (ci[0] > 0 or ci[1] < 0)


def _bound(c: Mapping[str, Any]) -> tuple[str, str] | None:
    """The deciding part's censoring (``family.censor_bound``): ('upper' or 'lower', why), None where its values are
    values."""
    for m in c.get("measurements") or ():
        if (m.get("label") or "") == (c.get("deciding_part") or "") and m.get("bound") in ("upper", "lower"):
            return str(m["bound"]), str(m.get("censored") or "")
    return None


def says_direction(c: Mapping[str, Any], ci: Any) -> bool:
    """Whether a direction may be said: the interval excludes zero, and a censored part's bound does not undo it (an
    upper bound above zero, or a lower bound below it, says nothing of the true difference's sign)."""
    if not excludes_zero(ci):
        return False
    bound = _bound(c)
    return bound is None or (bound[0] == "upper" and ci[1] < 0) or (bound[0] == "lower" and ci[0] > 0)


def bound_clause(c: Mapping[str, Any]) -> str:
    """'; an upper bound, as 2 of 6 self-attention seeds at distance 8 missed 95% accuracy within 800 steps in
    replicate 1' for a censored deciding part (why its interval cannot show what a value's would); ''
    otherwise."""
    bound = _bound(c)
    if bound is None:
        return ""
    side, why = bound
    target = re.search(r"steps to (0?\.\d+)", str(c.get("metric") or ""))
    goal = f"{float(target.group(1)) * 100:.0f}% accuracy" if target else "the target"
    said = []
    for m in re.finditer(r"(?:replicate (\d+): )?runs unreached within (\d+) steps \(([^)]*)\)", why):
        cells = [re.match(r"(\S+) d=(\d+) (\d+)/(\d+)", x.strip()) for x in m.group(3).split(",")]
        who = " and ".join(f"{x.group(3)} of {x.group(4)} {words.arm(x.group(1))} seeds at distance {x.group(2)}"
                           for x in cells if x)
        if who:
            said.append(f"{who} missed {goal} within {m.group(2)} steps"
                        + (f" in replicate {m.group(1)}" if m.group(1) else ""))
    return f"; an {side} bound" + (f", as {'; '.join(said)}" if said else "")


def amount(value: float, unit: str) -> str:
    """A difference in its unit: '0.25 nats', '600 steps', '61×' (a natural-log ratio), '4.3×' (a log2 one)."""
    if unit == "x":
        return f"{num(math.exp(value))}×"
    if unit == "x2":
        return f"{num(2 ** value)}×"
    return f"{num(value, 3 if abs(value) < 1 else 2)}{' ' + unit if unit else ''}"


def bracket(ci: Sequence[float], unit: str) -> str:
    """The interval in the same unit as ``amount``: '[0.11, 0.39]', '[26×, 146×]'."""
    if not _finite(ci):
        return ""
    lo, hi = sorted(ci)
    if unit in ("x", "x2"):
        f = math.exp if unit == "x" else (lambda v: 2 ** v)
        return f"[{num(f(lo))}×, {num(f(hi))}×]"
    return f"[{num(lo)}, {num(hi)}]"


def lead(claim: Mapping[str, Any], scope: str = "in this run") -> str:
    """'Supported in this run', 'Inconclusive in this run', 'No', 'Not answered at this scale', 'Not tested here'."""
    v = verdicts.canonical(claim.get("verdict"))
    if claim.get("error") or v == verdicts.ERROR:
        return "Not decided: the module crashed"
    if v == verdicts.NOT_TESTED:
        return "Not tested here"
    if claim.get("not_testable"):
        return "Not testable here"
    if claim.get("kind") == "question":
        return {verdicts.SUPPORTED: "Yes", verdicts.REFUTED: "No"}.get(v, "Not answered at this scale")
    timed = any("seconds" in str(c.get("metric") or "") for c in verdicts.deciding_criteria(claim)[0][:1])
    where = "on this CPU" if timed and scope == "in this run" else scope
    return f"{str(v).capitalize()} {where}"


def effect(c: Mapping[str, Any], needed: bool = True) -> str:
    """The criterion's effect: arms, amount, interval, task, and (``needed``) what was needed."""
    kind = c.get("kind") or (c.get("rule") or {}).get("kind")
    rule = {"margin": c.get("margin"), **(c.get("rule") or {})}
    q, unit = words.quantity(c.get("metric"))
    place = words.where(c.get("deciding_part"))
    at_n = " ".join(re.findall(r"at n = \d+", str(c.get("metric") or "")))
    if c.get("recorded") is False:
        return f"{q} was never recorded"
    if kind == "exact":
        state = "holds" if c.get("passed") else "fails" if c.get("refuted") else "was not decided"
        what = str(c.get("prediction") or q).split(":")[0].split(";")[0].strip()
        return f"the check that {words.say(what)} {state}"
    if str(c.get("decision_note") or "").startswith("not testable"):
        return _join(q, place, f"is not testable ({_untestable_why(str(c['decision_note']))})")
    dk = re.match(r"at d_k ?= ?(\d+)", str(c.get("prediction") or ""))
    if dk and "d_k" not in place:           # a part that names no d_k, of a criterion stated at one (C3's 512)
        place = _join(place, f"at d_k {dk.group(1)}")
    delta, ci = c.get("measured"), c.get("ci")
    raw = _arm_names(c)
    arms = [words.arm(a) for a in raw]
    if not isinstance(delta, (int, float)) or not math.isfinite(delta):
        return _join(f"{q} was not measured", place)
    pair = (arms + ["", ""])[:2]
    need = (_needed_band(rule, unit) if kind == "band" else _needed(kind, rule, unit, *pair,
                                                                   c.get("better"))) if needed else ""
    if kind == "band" or len(arms) < 2:
        who = f" of {arms[0]} against {arms[1]}" if len(arms) == 2 else f" of {arms[0]}" if arms else ""
        return _join(f"{q}{who} is {amount(delta, unit)} {bracket(ci, unit)}", at_n, place) + need
    growth = _growth(raw)
    if growth:
        far, near = growth
        dist = re.search(r"d=(\d+) vs d=(\d+)", str(c.get("deciding_part") or ""))
        if dist:
            far, near = f"at distance {dist.group(1)}", f"at distance {dist.group(2)}"
            place = words.where(re.sub(r"\s*d=\d+ vs d=\d+", "", str(c.get("deciding_part"))))
        if says_direction(c, ci):
            text = f"{q} is {amount(abs(delta), unit)} {bracket([abs(v) for v in ci], unit)} " \
                   f"{'larger' if delta > 0 else 'smaller'} {far} than {near}"
        else:
            text = f"{q} {far} minus {near} is {amount(delta, unit)} {bracket(ci, unit)}"
        return _join(text, place) + need + bound_clause(c)
    a, b = arms[0], arms[1]
    better = c.get("better") if c.get("better") in ("lower", "higher") else None
    if not says_direction(c, ci):
        text = f"{q} of {a} minus {b} is {amount(delta, unit)} {bracket(ci, unit)}"
    elif better is None:
        text = f"{a} is {'larger' if delta > 0 else 'smaller'} than {b} by {amount(abs(delta), unit)} " \
               f"{bracket([abs(v) for v in ci], unit)} in {q}"
    elif better == "lower":
        behind, ahead = (a, b) if delta > 0 else (b, a)
        text = f"{behind} is {amount(abs(delta), unit)} {bracket([abs(v) for v in ci], unit)} worse than {ahead} " \
               f"in {q}"
    else:
        ahead, behind = (a, b) if delta > 0 else (b, a)
        text = f"{q} is {amount(abs(delta), unit)} {bracket([abs(v) for v in ci], unit)} higher with {ahead} " \
               f"than with {behind}"
    return _join(text, at_n, place) + need + bound_clause(c)


def _growth(arms: Sequence[str]) -> tuple[str, str] | None:
    """For an interaction's arms ('lag at the long d', 'lag at the short d'; 'at large d_k', 'at small d_k'): the
    two places in words ('at the long distance', 'at the short one'); None for two ordinary arms."""
    if len(arms) != 2:
        return None
    if str(arms[0]).endswith("at the long d") and str(arms[1]).endswith("at the short d"):
        return "at the long distance", "at the short one"
    if str(arms[0]).endswith("at large d_k") and str(arms[1]).endswith("at small d_k"):
        return "at large d_k", "at small d_k"
    return None


def _arm_names(c: Mapping[str, Any]) -> list[str]:
    for m in c.get("measurements") or ():
        if (m.get("label") or "") == (c.get("deciding_part") or "") and len(m.get("arms") or ()) == 2:
            return list(m["arms"])
    if c.get("arms"):
        return list(c["arms"])
    # a level criterion declares no arm; the one model its part tuned does name it ("C1/<task>/transformer")
    tuned = {str(key).rsplit("/", 1)[-1] for m in c.get("measurements") or ()
             if (m.get("label") or "") == (c.get("deciding_part") or "")
             for key in [r.get("key") for r in m.get("rates") or ()] + list(m.get("tuned") or ())}
    return sorted(tuned) if len(tuned) == 1 and tuned <= set(words.ARMS) else []


def _join(*pieces: str) -> str:
    return " ".join(p.strip() for p in pieces if p and p.strip())


def _needed(kind: str, rule: Mapping[str, Any], unit: str, a: str, b: str, better: str | None) -> str:
    m = rule.get("margin")
    if m is None:
        return ""
    size = amount(m, unit) if unit not in ("x", "x2") else num(m)
    if kind == "equivalence":
        return f" (needed: within ±{size}; the margin)"
    if kind == "non_inferiority":
        kept = b if better != "higher" else a
        other = a if kept == b else b
        return f" (needed: {kept} no more than {size} worse than {other})"
    if rule.get("refute_below") is not None and rule.get("refute_below") == rule.get("lo"):
        return f" (needed: more than {size} to answer yes, less to answer no)"
    return f" (needed: more than {size}, the margin)"


def _needed_band(rule: Mapping[str, Any], unit: str) -> str:
    lo, hi = rule.get("lo"), rule.get("hi")
    show = (lambda v: amount(v, unit)) if unit else num
    if lo is not None and hi is not None:
        return f" (needed: between {show(lo)} and {show(hi)})"
    if lo is not None:
        return f" (needed: at least {show(lo)})"
    if hi is not None:
        return f" (needed: at most {show(hi)})"
    return ""


def extra(claim: Mapping[str, Any], c: Mapping[str, Any] | None) -> str:
    """At most one more clause: Holm's correction where the interval is in the refutation region but not rejected;
    a decided outcome at the edge of its level; else the strongest comparison that is not part of the claim."""
    if c is not None and verdicts.leaning(c):
        n = sum(len(x.get("parts") or [x]) for x in claim.get("criteria") or ()
                if verdicts.role_of(x) == verdicts.COUNTED and x.get("kind") != "exact")
        p = c.get("p_refute")
        return (f"Holm's correction over the claim's {n} tests leaves it short of {words.short_of(claim)}"
                + (f" (adjusted p {num(p)})" if isinstance(p, (int, float)) else ""))
    if c is not None:
        edge = at_the_edge(c)
        if edge:
            return edge
    other = strongest_reported(claim)
    return f"Not part of the claim: {effect(other, needed=False)}" if other else ""


def at_the_edge(c: Mapping[str, Any]) -> str:
    """'Decided at the edge: Holm-adjusted refutation p 0.049998 against 0.05' where a passed or refuted criterion's
    p lies within ``EDGE_SHARE`` of its level below it, printed with the digits that tell it from the level and
    named for what it is (``harness.record.pvalues``); '' otherwise."""
    p, level = c.get("p_value"), c.get("level")
    if c.get("outcome") not in (decision.PASSED, decision.REFUTED) or not all(
            isinstance(v, (int, float)) and math.isfinite(v) for v in (p, level)) or level <= 0:
        return ""
    if not (1 - EDGE_SHARE) * level <= p <= level:
        return ""
    what = "support p" if pvalues.label(c) == pvalues.SUPPORT else "Holm-adjusted refutation p"
    return f"Decided at the edge: {what} {pvalues.text(p, level, digits=3)} against {num(level)}"


def strongest_reported(claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The reported two-arm comparison whose interval excludes zero by the widest multiple of its margin: what
    the claim does not claim, but a reader of its verdict needs beside it; None where none excludes zero."""
    rows = [c for c in claim.get("criteria") or () if verdicts.role_of(c) == verdicts.REPORTED
            and (c.get("kind") in ("superiority", "non_inferiority", "equivalence")) and len(c.get("arms") or ()) == 2
            and excludes_zero(c.get("ci")) and (c.get("margin") or 0) > 0
            and isinstance(c.get("measured"), (int, float))]
    return max(rows, key=lambda c: abs(c["measured"]) / c["margin"]) if rows else None


def not_tested(claim: Mapping[str, Any]) -> str:
    """What a claim that counts nothing checked, and what it found: up to three of its premises and reported
    criteria, each by its prediction's first clause, and whether it held."""
    held = sorted((c for c in claim.get("criteria") or () if c.get("outcome") in (decision.PASSED, decision.REFUTED)),
                  key=lambda c: verdicts.role_of(c) != verdicts.PREMISE)
    said = []
    for c in held[:3]:
        what = re.sub(r" \([^)]*\)", "", str(c.get("prediction") or "").split(";")[0]).strip()
        if not what or len(what.split()) > 12:
            what = effect(c, needed=False)
        said.append(f"{words.say(what)} ({OUTCOME_WORDS[c['outcome']]})")
    return "nothing is counted; it checked " + "; ".join(said) if said else "nothing is counted"


#: how a second counted comparison's outcome is said beside the deciding one
OUTCOME_WORDS = {decision.PASSED: "as predicted", decision.REFUTED: "against the prediction",
                 decision.INCONCLUSIVE: "not decided"}


def _untestable_why(note: str) -> str:
    """'the LSTM is at chance at distance 64 on every seed and at every rate tried' from a not-testable note."""
    why = note.split("dead foil: ", 1)[1] if "dead foil: " in note else note.removeprefix("not testable (")
    why = re.sub(r" \([^)]*\)", "", why).split(":")[0].strip()
    why = re.sub(r"\bd=(\d+)", r"distance \1", why)
    return re.sub(r"^(\w+)", lambda m: words.arm(m.group(1)), why)


def other_counted(claim: Mapping[str, Any], c: Mapping[str, Any] | None) -> str:
    """'; against <the other foil>: <its effect>' for the claim's other counted comparison whose outcome differs from
    the deciding one's (C2: the dilated convolution decides, the LSTM does not): a row names every foil's result."""
    if c is None:
        return ""
    rows = [x for x in claim.get("criteria") or () if verdicts.role_of(x) == verdicts.COUNTED and x is not c
            and x.get("name") != c.get("name") and len(x.get("arms") or ()) == 2
            and x.get("outcome") != c.get("outcome")]
    if not rows:
        return ""
    text = effect(rows[0], needed=False)
    return f"; {text}" + ("" if "not testable" in text else f", {OUTCOME_WORDS.get(rows[0].get('outcome'), '')}")


def repeated(claim: Mapping[str, Any]) -> str:
    """'Repeated in 7 of 8 replicates [0.59, 0.96]' for a pooled record (``harness.record.replication``), with
    'fragile' and 'most replicates gave another verdict' where they hold; '' for a single run."""
    rep = claim.get("replication")
    if not isinstance(rep, Mapping) or "r" not in rep:
        return ""
    lo, hi = rep.get("wilson") or (math.nan, math.nan)
    text = f"Repeated in {rep['r']} of {rep['K']} replicates [{num(lo)}, {num(hi)}]"
    if rep.get("fragile"):
        text += ", fragile"
    others = [str(o) for o in rep.get("outcomes") or () if o != claim.get("verdict")]
    if others:          # what the replicates that did not repeat it gave, so a near miss reads as one
        text += f" (the other {len(others)}: " + ", ".join(f"{o} {others.count(o)}" for o in dict.fromkeys(others)) + ")"
    if rep.get("pooled_differs_from_most"):
        text += "; most replicates gave another verdict on their own"
    return text


def sentence(claim: Mapping[str, Any], scope: str = "in this run") -> str:
    """The claim's row: '<lead>: <effect>. <repeated>. <extra>.' (module docstring); a pooled record's lead says
    'pooled over K replicates' and its row says in how many of them the verdict repeats."""
    rep = repeated(claim)
    if rep and scope == "in this run":
        scope = f"pooled over {claim['replication']['K']} replicates"
    head = lead(claim, scope)
    v = verdicts.canonical(claim.get("verdict"))
    if claim.get("error") or v == verdicts.ERROR:
        return head + "."
    if v == verdicts.NOT_TESTED:
        return _clean(f"{head}: {not_tested(claim)}.")
    picked, _ = verdicts.deciding_criteria(claim)
    c = picked[0] if picked else None
    body = (effect(c) + ("" if claim.get("answers") else other_counted(claim, c))) if c else "no counted criterion"
    if claim.get("not_testable") and c is not None:
        body = f"a premise did not hold: {effect(c)}"
    if claim.get("answers"):
        said = {"answered yes": "yes", "answered no": "no"}
        cases = ", ".join(f"{said.get(a['answer'], 'not answered')} for {words.CASES.get(a['case'], a['case'])}"
                          for a in claim["answers"])
        body = f"{cases}; {body}"
    more = extra(claim, c)
    text = f"{head}: {body}."
    tail = f" {rep}." if rep else ""          # r of K, and "fragile" with it, is never cut to fit
    if more and len(f"{text}{tail} {more}.".split()) <= MAX_WORDS:      # the one more clause, where it fits
        tail += f" {more}."
    if not rep:
        return _clean(text + tail)
    return _clean(text, MAX_WORDS - len(words.plain(tail).split())) + words.plain(tail)


def _clean(text: str, most: int = MAX_WORDS) -> str:
    """Any identifier left (a user's arm, a task this table does not know) said as words; at most ``most`` words."""
    text = words.plain(text)
    parts = text.split()
    return text if len(parts) <= most else " ".join(parts[:most - 1]) + " …"
