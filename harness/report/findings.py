"""The findings in words (issues 26, 28): each claim's verdict, its firmness and the one effect that decided it.

Pure functions over results records, and no verdict logic: which criteria decided a claim is
``verdict.deciding_criteria``'s answer; this module only says it in words, from what every criterion
record carries (``kind``, ``arms``, ``metric``, ``measured``, ``ci``, ``margin``, ``rule``, ``deciding_part``).
The same text is the report's summary column and the README's findings table
(``python -m harness.report findings RESULTS.json [--write README.md]``), so the two cannot drift.

A claim that is not testable here (a premise did not pass, ``verdict.judge_record``'s ``not_testable``) reads
"not testable here: premise <name> refuted: <its effect>"; one that counts nothing (``not_tested``) reads
"not tested here", and its effect is the first clause of the module's reason (the claim's section gives it whole).

How a comparison of two arms reads: the criterion's δ is mean(a − b) of its metric. Which way is better is
what the criterion *declares* (``better``: "lower" for a loss or a time, "higher" for an accuracy; issue 54),
never a guess from the metric's name: where it declares one, the effect names the arm that is behind, "unscaled
trails additive by 1.69 nats [1.2, 2.1] on key-value lookup (margin 0.1)", with the interval of that same
difference; where it declares none, it says only what the sign says, "lag at the long d is below lag at the short
d by 512 steps [226, 799]". An adjusted p within a fifth of its level below it is said ("at the edge: adjusted
p 0.049998 against 0.05"), and a reported comparison in its refutation region stands beside a verdict that is not
refuted as its "largest reported contradiction", leaning refuted where Holm does not reject it. A measurement may
name its arms itself (``decision.samples(arms=...)``: C4's "the other alpha" is alpha = 1 on one part, 0.75 on
another), and the deciding part's names are then the ones shown.
``tests/report/test_findings_signs.py`` regenerates every counted criterion's sentence of the committed reports
and checks its sign and direction against the stored interval.
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.record import decision
from harness.record import verdict as verdicts
from harness.report import sentences, words

BEGIN, END = "<!-- findings:begin -->", "<!-- findings:end -->"   # markers("findings")

# Task and arm names as they appear in part labels, in words.
_LABEL_WORDS = {"kv": "key-value", "de": "English→German", "en": "English"}
_MAX_CLAUSE = 90


def number(x: Any, digits: int = 3) -> str:
    """A number for prose: ``digits`` significant digits, a real minus sign, no exponent for large values."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if x != x:
        return "not measured"
    if abs(x) == float("inf"):
        return "∞" if x > 0 else "−∞"
    text = f"{x:.0f}" if abs(x) >= 10 ** digits else f"{x:.{digits}g}"
    if "e" in text:
        text = f"{x:.{digits - 1}e}"
    return text.replace("-", "−")


def interval(ci: Sequence[float | None] | None) -> str:
    """'[lo, hi]', or '' where there is no interval (none computed, or a part that was not testable: NaN bounds)."""
    return f"[{number(ci[0], 2)}, {number(ci[1], 2)}]" if _finite_pair(ci) else ""


def _finite_pair(ci: Sequence[float | None] | None) -> bool:
    return bool(ci) and len(ci) == 2 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in ci)


def _top_level(text: str, cut: str = ",;") -> str:
    """``text`` without its parenthesised asides (" (...)" at the outer level) and cut at the first outer
    ", " or "; " (the characters in ``cut``): the quantity a metric's name or a detail's first clause is about."""
    out: list[str] = []
    aside = nested = 0  # depth inside a dropped " (...)"; depth inside kept brackets "f(x, y)", "[1, 2]"
    for i, ch in enumerate(text):
        if aside:
            aside += (ch == "(") - (ch == ")")
            continue
        if ch == "(" and not nested and text[i - 1:i] == " ":
            aside = 1
            continue
        nested += (ch in "([") - (ch in ")]")
        if not nested and ch in cut and text[i + 1:i + 2] == " ":
            break
        out.append(ch)
    return re.sub(r"\s+([:;,])", r"\1", re.sub(r"\s+", " ", "".join(out))).strip()


def quantity(metric: str | None) -> str:
    """'held-out loss (nats) after the budget' -> 'held-out loss after the budget'; '... per seed' dropped; cut at
    an outer ': ' too ('ln loss at the budget: ln LSTM - ln Transformer' -> 'ln loss at the budget'), since what
    follows it restates the difference, whose order the sentence may turn round."""
    q = _top_level(metric or "", cut=",;:")
    return re.sub(r"\s+per([ -]seed( values)?)?$", "", q).strip() or "the metric"


def unit(metric: str | None) -> str | None:
    """The unit a difference is stated in, where the metric names one: 'nats', or 'steps' for a steps-to-threshold
    metric (C2's lags, whose name restates the difference as 'at the long d minus at the short d')."""
    if re.search(r"\bnats?\b", metric or ""):
        return "nats"
    return "steps" if re.search(r"\bsteps to\b", metric or "") else None


def better(criterion: Mapping[str, Any]) -> str | None:
    """'lower' or 'higher': which way of the metric is better, as the criterion declares it; None where it declares
    none (the sentence then says only what the sign says)."""
    way = criterion.get("better")
    return way if way in ("lower", "higher") else None


def part_text(label: str | None) -> str:
    """A part label in words: 'kv_lookup d_k=256' -> 'on key-value lookup at d_k 256'; 'd=64 vs d=4' -> 'at d 64 vs
    d 4'; '' or None -> ''."""
    if not label:
        return ""
    if " vs " in str(label):
        left, _, right = str(label).partition(" vs ")
        return f"{part_text(left)} vs {part_text(right).removeprefix('on ').removeprefix('at ')}".strip()
    words, params = [], []
    for tok in str(label).split():
        if "=" in tok:
            name, _, value = tok.partition("=")
            params.append(f"{name} {value}")
        elif "_" in tok and re.fullmatch(r"\w+", tok) and not re.fullmatch(r"[a-z]_[a-z0-9]+", tok):
            words.append(" ".join(_LABEL_WORDS.get(w, w) for w in tok.split("_")))
        else:
            words.append(tok)
    text = f"on {' '.join(words)}" if words else ""
    if params:
        text += (" at " if text else "at ") + ", ".join(params)
    return text


def _first_clause(detail: str | None, prediction: str | None) -> str:
    """The detail's first clause, asides dropped; the prediction's where that leaves under four words
    ('480 cases')."""
    clause = _top_level(detail, cut=";") if detail else ""
    if len(clause.split()) < 4 and prediction:
        clause = _top_level(prediction, cut=";")
    if len(clause) > _MAX_CLAUSE:
        clause = clause[:_MAX_CLAUSE].rsplit(" ", 1)[0] + "…"
    return clause


def _scope(criterion: Mapping[str, Any]) -> str:
    """Where parts disagree (``parts``, issue 26): 'passed on delayed copy; refuted on key-value lookup'."""
    parts = criterion.get("parts") or []
    by_outcome: dict[str, list[str]] = {}
    for p in parts:
        by_outcome.setdefault(str(p.get("outcome") or "not judged"), []).append(
            part_text(p.get("label")).removeprefix("on ").removeprefix("at ") or "the whole")
    if len(by_outcome) < 2:
        return ""
    return "; ".join(f"{outcome} on {', '.join(labels)}" for outcome, labels in by_outcome.items())


def _tail_of(criterion: Mapping[str, Any], bound: str) -> str:
    """' (margin 0.1; smaller than the margin; passed on A; refuted on B)': the rule's bound, then the notes."""
    notes = [bound] if bound else []
    if not _finite_pair(criterion.get("ci")) and criterion.get("measured") is not None:
        notes.append("no interval")
    untestable = [p["label"] for p in criterion.get("parts") or () if p.get("untestable")]
    if untestable or str(criterion.get("decision_note") or "").startswith("not testable"):
        notes.append("not testable" + (f" {', '.join(part_text(u) for u in untestable)}" if untestable else "")
                     + ": at the floor or invalid, no interval")
    if criterion.get("short_of_margin"):
        notes.append("smaller than the margin")
    if verdicts.leaning(criterion):
        p = criterion.get("p_refute")
        notes.append("not refuted after Holm's correction over the claim's tests"
                     + (f", adjusted p {number(p, 2)}" if isinstance(p, (int, float)) else ""))
    edge = _at_the_edge(criterion)
    if edge:
        notes.append(edge)
    scope = _scope(criterion)
    if scope:
        notes.append(scope)
    return f" ({'; '.join(notes)})" if notes else ""


EDGE_SHARE = sentences.EDGE_SHARE


def _at_the_edge(criterion: Mapping[str, Any]) -> str:
    """'at the edge: adjusted p 0.049998 against 0.05' (a refuted criterion) or 'at the edge: support p 0.0499 against
    0.05' (a passed one) where its p lies within ``EDGE_SHARE`` of its level (``sentences.at_the_edge``)."""
    edge = sentences.at_the_edge(criterion)
    return edge.replace("Decided at the edge: Holm-adjusted refutation p", "at the edge: adjusted p").replace(
        "Decided at the edge:", "at the edge:")


def _band_bound(rule: Mapping[str, Any]) -> str:
    lo, hi = rule.get("lo"), rule.get("hi")
    if lo is not None and hi is not None:
        return f"band [{number(lo, 2)}, {number(hi, 2)}]"
    if lo is not None:
        return f"band ≥ {number(lo, 2)}"
    if hi is not None:
        return f"band ≤ {number(hi, 2)}"
    return "band"


def _join(*pieces: str) -> str:
    return " ".join(p for p in pieces if p)


def _comparison(c: Mapping[str, Any], kind: str, tail: bool = True) -> str:
    delta, ci, metric = c.get("measured"), c.get("ci"), c.get("metric")
    margin = c.get("margin")
    if margin is None:
        margin = (c.get("rule") or {}).get("margin")
    bound = "" if margin is None else f"margin {'±' if kind == 'equivalence' else ''}{number(margin, 2)}"
    where = part_text(c.get("deciding_part"))
    _tail = _tail_of if tail else (lambda c, bound: "")
    arms = list(c.get("arms") or ())
    if len(arms) < 2:  # one sample against the margin
        what = f"{arms[0]}: {quantity(metric)}" if arms else quantity(metric)
        value = number(delta) if delta is not None else "not measured"
        return _join(f"{what} = {value}", interval(ci), where) + _tail(c, bound)
    a, b = _arm_names(c, arms)
    if not isinstance(delta, (int, float)) or not math.isfinite(delta):
        return _join(f"{a} − {b} not measured in {quantity(metric)}", where) + _tail(c, bound)
    # δ = a − b; the sentence states |δ| and the interval of that same difference, sign * ci
    sign = 1 if delta >= 0 else -1
    shown_ci = sorted(sign * v for v in ci) if _finite_pair(ci) else None
    amount = f"{number(abs(delta))} {unit(metric)}" if unit(metric) else f"{number(abs(delta))} in {quantity(metric)}"
    way = better(c)
    if way is None:                          # nothing declared: only what the sign says
        head = f"{a} {'exceeds' if delta >= 0 else 'is below'} {b} by {amount}"
    else:                                    # a larger value is worse where lower is better
        behind, ahead = (a, b) if (delta >= 0) == (way == "lower") else (b, a)
        head = f"{behind} trails {ahead} by {amount}"
    return _join(head, interval(shown_ci), where) + _tail(c, bound)


def _arm_names(c: Mapping[str, Any], arms: Sequence[str]) -> tuple[str, str]:
    """The deciding part's own arm names where its measurement gives them (``decision.samples(arms=...)``), else the
    criterion's."""
    for m in c.get("measurements") or ():
        if (m.get("label") or "") == (c.get("deciding_part") or "") and len(m.get("arms") or ()) == 2:
            return m["arms"][0], m["arms"][1]
    return arms[0], arms[1]


def effect_text(criterion: Mapping[str, Any] | None) -> str:
    """The criterion's effect in words, with its interval and the rule's margin or band (module docstring)."""
    if not criterion:
        return "—"
    c = criterion
    kind = c.get("kind") or (c.get("rule") or {}).get("kind")
    if c.get("recorded") is False:
        return f"{c.get('name')}: never recorded"
    if kind == "exact":
        state = "holds" if c.get("passed") else "fails" if c.get("refuted") else "not decided"
        if c.get("refuted") and c.get("counterexample"):      # a kernel's smallest case, as the terminal shows it
            return f"{state}: {c['counterexample']}"
        clause = _first_clause(c.get("detail"), c.get("prediction"))
        return f"{state}: {clause}" if clause else state
    if kind == "band":
        arms = c.get("arms") or ()
        what = quantity(c.get("metric"))
        if len(arms) >= 2:
            what = f"{arms[0]} − {arms[1]} in {what}"
        measured = c.get("measured")
        value = number(measured) if measured is not None else "not measured"
        label = c.get("deciding_part") or ""
        place = "" if "slope" in str(label) and "slope" in what else part_text(label)   # Q3's 'd_k slope' restates it
        return _join(f"{what} = {value}", interval(c.get("ci")), place) + _tail_of(
            c, _band_bound(c.get("rule") or {}))
    return _comparison(c, kind or "")


#: the order in which a kernel's failing properties are named (issue 39): the cause a maintainer looks for first
PROPERTY_ORDER = ("head layout", "masks", "tiling", "scale", "precision")   # a layout bug breaks masks too


def failing_properties(res: Mapping[str, Any]) -> list[str]:
    """One line per failing criterion of a kernel trial that names the property it checks, ordered by
    ``PROPERTY_ORDER``: 'masks (causal)  R1 kernel_exact: float32: differs at ...'. Its smallest counterexample is
    the criterion's own, else its detail. A run without a kernel on trial, or with no failing property: []."""
    if not res.get("attention"):
        return []
    rows = [(c["property"], cid, c["name"], c.get("counterexample") or c.get("detail") or "")
            for cid, claim in res.get("claims", {}).items() for c in claim.get("criteria", [])
            if c.get("property") and c.get("outcome") == decision.REFUTED]

    def rank(prop: str) -> int:
        return next((i for i, p in enumerate(PROPERTY_ORDER) if prop.startswith(p)), len(PROPERTY_ORDER))
    rows.sort(key=lambda r: (rank(r[0]), r[1], r[2]))
    width = max((len(r[0]) for r in rows), default=0)
    return [f"{prop:<{width}}  {cid} {name}: {example}" for prop, cid, name, example in rows]


def strip_own_id(cid: str, text: str | None) -> str:
    """'R3 — Prefer…' -> 'Prefer…': a statement never repeats its own id."""
    return re.sub(rf"^\s*{re.escape(str(cid))}\s*[—–:-]\s*", "", text or "")


def verdict_text(claim: Mapping[str, Any]) -> str:
    """'supported (firmness 0.97)', 'refuted (firmness not estimated)', 'supported (firmness 0.81 given the tuned
    rates)'; 'supported at init (...)' where the claim read a model at init beside trained weights (``at_init``);
    a claim that counts nothing: 'not tested here'; a question answered per case (``answers``) names each
    case's answer: 'answered no (firmness 0.78): answered no for l2 (firmness 0.78); answered yes for rmsnorm
    (firmness 0.91)'."""
    if claim.get("verdict") == verdicts.NOT_TESTED:
        return "not tested here" + (f" {verdicts.at_init_label(claim)}" if claim.get("at_init") else "")
    f = claim.get("firmness")
    firm = verdicts.firmness_short(claim) if not isinstance(f, (int, float)) else \
        f"firmness {f:.2f}" + (f" {verdicts.GIVEN_TUNED}" if verdicts.tuned(claim) else "")
    rep = claim.get("replication")
    if isinstance(rep, Mapping) and "r" in rep:        # a pooled record: the observed repeat rate beside the model's
        firm = f"{rep['r']} of {rep['K']} replicates" + (", fragile" if rep.get("fragile") else "") + (
            f"; firmness {f:.2f}" if isinstance(f, (int, float)) else "")
    per_case = f": {verdicts.answers_text(claim['answers'])}" if claim.get("answers") else ""
    leaning = f", {words.leaning(claim)}" if verdicts.leaning_refuted(claim) else ""
    return f"{verdicts.verdict_shown(claim)}{leaning} ({firm}){per_case}"


def premise_text(premise: Mapping[str, Any]) -> str:
    """A premise that did not pass, in words: 'premise h1_averages refuted: h = 1: top-slot share = 0.85 ...'."""
    state = "refuted" if premise.get("refuted") else "not shown"
    if premise.get("recorded") is False:
        return f"premise {premise.get('name')} not shown: never recorded"
    return f"premise {premise.get('name')} {state}: {effect_text(premise)}"


def deciding_effect(claim: Mapping[str, Any]) -> str:
    """The effect of the first criterion ``verdict.deciding_criteria`` picks; why there is none otherwise. A claim
    not testable here (a premise did not pass, ``verdict.judge_record``) says so, with that premise's effect."""
    if claim.get("error") or claim.get("verdict") == verdicts.ERROR:
        return "the module crashed"
    if claim.get("verdict") == verdicts.NOT_TESTED:
        # a summary cell: the reason's first clause; the claim's own section gives it whole (issue 54, item 1)
        why = _top_level(str(claim.get("not_tested") or verdicts.NO_COUNTED_CRITERION), cut=":;.")
        return f"nothing counted: {why}"
    picked, more = verdicts.deciding_criteria(claim)
    if claim.get("not_testable") and picked:
        n = len(picked) - 1 + more
        return f"not testable here: {premise_text(picked[0])}" + (
            f" (and {n} more premise{'s' if n > 1 else ''})" if n else "")
    if picked:
        text = effect_text(picked[0]) + _largest_part(picked[0])
        return text + _largest_contradiction(claim, text)
    return "—" if verdicts.counted(claim.get("criteria", []), bool(claim.get("fast"))) else "no counted criterion"


def _comparable(c: Mapping[str, Any]) -> bool:
    kind = c.get("kind") or (c.get("rule") or {}).get("kind")
    return kind in ("superiority", "non_inferiority", "equivalence") and len(c.get("arms") or ()) >= 2


def _largest_part(c: Mapping[str, Any]) -> str:
    """'; largest at d_k 512: unscaled trails default by 1.15 nats [1.0, 1.3]' where a comparison's deciding part
    (the weakest, for a criterion that did not refute) is not its largest effect: a tie at the loss floor on one
    part must not hide the effect on another (issue 54, R1)."""
    parts = [p for p in c.get("parts") or () if isinstance(p.get("measured"), (int, float))
             and math.isfinite(p["measured"]) and not p.get("untestable")]
    if len(parts) < 2 or not _comparable(c):
        return ""
    big = max(parts, key=lambda p: abs(p["measured"]))
    if big.get("label") == c.get("deciding_part"):
        return ""
    part = {**c, "measured": big["measured"], "ci": big.get("ci"), "deciding_part": big.get("label")}
    return f"; largest {part_text(big.get('label')) or 'part'}: " + _comparison(part, part.get("kind") or "",
                                                                                 tail=False).replace(
        f" {part_text(big.get('label'))}", "")


def _largest_contradiction(claim: Mapping[str, Any], deciding: str = "") -> str:
    """'; largest reported contradiction (default_vs_additive, leaning refuted): default trails additive by 0.236
    nats ...' for a claim that is not refuted: the reported comparison refuted, or in its refutation region and not
    rejected after Holm ("leaning refuted"), by the widest multiple of its margin, which a reader of a "supported"
    needs beside it (issue 54, R1); nothing where ``deciding`` (the deciding effect's text) already says it."""
    if verdicts.canonical(claim.get("verdict")) == verdicts.REFUTED:
        return ""
    rows = [c for c in claim.get("criteria") or () if verdicts.role_of(c) == verdicts.REPORTED
            and (c.get("refuted") or verdicts.leaning(c)) and _comparable(c)
            and isinstance(c.get("measured"), (int, float)) and (c.get("margin") or 0) > 0]
    if not rows:
        return ""
    worst = max(rows, key=lambda c: abs(c["measured"]) / c["margin"])
    text = _comparison(worst, worst.get("kind") or "", tail=False)
    if text and text in (deciding or ""):          # the deciding effect already says it, word for word
        return ""
    label = f"{worst.get('name')}, {verdicts.LEANING_REFUTED}" if verdicts.leaning(worst) else worst.get("name")
    return f"; largest reported contradiction ({label}): " + text


def findings_rows(results: Mapping[str, Any]) -> list[dict[str, str]]:
    """One row per claim, in the results' order: id, title, verdict (with firmness), and the finding: one sentence in
    the paper's words (``harness.report.sentences``, issue 63), the same the report's summary and the terminal show."""
    return [{"id": cid, "claim": strip_own_id(cid, c.get("title") or c.get("statement")),
             "verdict": verdict_text(c), "effect": sentences.sentence(c)}
            for cid, c in results.get("claims", {}).items()]


def _by_replicate(reps: Sequence[Mapping[str, Any]], key: str, short: int = 0) -> str:
    """'AuthenticAMD (replicates 1-7), GenuineIntel (8)': each value of ``key`` once, with the replicates that had it."""
    groups: dict[str, list[str]] = {}
    for r in reps:
        groups.setdefault(str(r.get(key) or "not recorded")[:short or None], []).append(str(r.get("k")))
    if len(groups) == 1:
        return next(iter(groups))
    return ", ".join(f"{v} ({('replicates ' if len(ks) > 1 else 'replicate ') if i == 0 else ''}{', '.join(ks)})"
                     for i, (v, ks) in enumerate(groups.items()))


def pooled_run_line(results: Mapping[str, Any]) -> str:
    """Where the pooled record's figures come from: its replicates (seeds, vendors, commits, times), none of it
    read off one replicate's run block."""
    run, rep = results.get("run", {}), results.get("replication") or {}
    reps = run.get("replicates") or []
    times = [float(r["duration_s"]) for r in reps if isinstance(r.get("duration_s"), (int, float))]
    first = min((str(r["started_at"]) for r in reps if r.get("started_at")), default="?").replace("T", " ")[:16]
    each = f"{number(min(times), 4)}-{number(max(times), 4)} s each, " if times else ""
    workers = f" with {run['workers']} xdist workers" if run.get("workers") else ""
    return (f"Pooled from {len(reps)} replicates of profile **{run.get('profile')}** at lock "
            f"{str(rep.get('lock') or run.get('criteria_lock') or '?')[:12]}, each a full run on {run.get('device')}"
            f"{workers}: master seeds {', '.join(str(r.get('seed')) for r in reps)}; CPU vendor "
            f"{_by_replicate(reps, 'vendor')}; at commit {_by_replicate(reps, 'commit', 7)}; {each}"
            f"{number(run.get('duration_s') or 0, 4)} s in all, the first started {first} UTC; Python "
            f"{run.get('python') or '?'}.")


def run_line(results: Mapping[str, Any]) -> str:
    """Where and when the figures were measured, from the run's own record; a pooled record's from its replicates
    (``pooled_run_line``)."""
    run = results.get("run", {})
    if run.get("replicates"):
        return pooled_run_line(results)
    started = str(run.get("started_at") or "?").replace("T", " ")[:16]
    workers = f", {run['workers']} xdist workers" if run.get("workers") else ""
    commit = f", commit {run['git_commit'][:7]}" if run.get("git_commit") else ""
    machine = ", ".join(f"{label}{run[k]}" for k, label in (("platform", ""), ("python", "Python "))
                        if run.get(k))
    return (f"Profile **{run.get('profile')}** on {run.get('device')}{workers}, started {started} UTC, "
            f"{number(run.get('duration_s') or 0, 3)} s{commit}; machine: {machine or 'not recorded'}."
            + _kept_from_earlier(results))


def _kept_from_earlier(results: Mapping[str, Any]) -> str:
    """' Kept from earlier runs: C1, C2 (commit abc1234, started ...).' for a baseline that a subset update merged
    into (its ``provenance`` names other runs than its ``run`` block), else ''."""
    run = results.get("run", {})
    groups: dict[tuple, list[str]] = {}
    for cid, p in (results.get("provenance") or {}).items():
        key = (p.get("git_commit"), p.get("started_at"))
        if key != (run.get("git_commit"), run.get("started_at")):
            groups.setdefault(key, []).append(cid)
    return "".join(f" Kept from an earlier run: {', '.join(ids)} (commit {(commit or '?')[:7]}, started "
                   f"{str(started or '?').replace('T', ' ')[:16]} UTC)." for (commit, started), ids in groups.items())


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def findings_markdown(results: Mapping[str, Any], expected: Sequence[str] = ()) -> str:
    """The findings table as Markdown, with the line that says where and when it was measured; ``expected``: claim
    ids the file should hold, those it lacks named below the table (a baseline that parts fill,
    ``reports/full.json``)."""
    lines = [run_line(results), "", "| id | claim | verdict | what was found |", "|---|---|---|---|"]
    lines += [f"| {_cell(r['id'])} | {_cell(r['claim'])} | {_cell(r['verdict'])} | {_cell(r['effect'])} |"
              for r in findings_rows(results)]
    missing = [c for c in expected if c not in results.get("claims", {})]
    if missing:
        lines += ["", f"Not in this file yet: {', '.join(missing)}."]
    return "\n".join(lines) + "\n"


def nothing_run_markdown(path: str, expected: Sequence[str]) -> str:
    """The block for a baseline that no run has made yet (``reports/full.json`` before any GPU part)."""
    return (f"No run at this profile has been merged: `{path}` does not exist. Not in it yet: "
            f"{', '.join(expected)}.\n")


class MarkersMissing(ValueError):
    pass


def markers(name: str = "findings") -> tuple[str, str]:
    """The pair of HTML comments that delimit a generated table (``findings``: the smoke baseline's; the README's
    standard table uses ``findings-standard``)."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def replace_between_markers(text: str, block: str, name: str = "findings") -> str:
    """``text`` with everything between the ``name`` markers (default ``BEGIN`` and ``END``) replaced by ``block``."""
    begin, end_mark = markers(name)
    start, end = text.find(begin), text.find(end_mark)
    if start < 0 or end < start:
        raise MarkersMissing(f"no '{begin}' ... '{end_mark}' markers")
    return text[:start + len(begin)] + "\n" + block + text[end:]


def print_or_write(block: str, write: "Path | None", marker: str, said: str) -> int:
    """A generated block's command-line end: print ``block``, or (``write``) put it between ``marker``'s markers in
    that file and print ``said``; an unreadable file or missing markers is one line on stderr, exit 1."""
    import sys

    from harness.record import results as results_io
    if write is None:
        print(block, end="")
        return 0
    try:
        new = replace_between_markers(write.read_text(encoding="utf-8"), block, marker)
    except (OSError, MarkersMissing) as exc:
        print(f"error: {write}: {exc}", file=sys.stderr)
        return 1
    results_io.write_text_atomic(write, new)
    print(said)
    return 0


def between_markers(text: str, name: str = "findings") -> str | None:
    begin, end_mark = markers(name)
    start, end = text.find(begin), text.find(end_mark)
    if start < 0 or end < start:
        return None
    return text[start + len(begin):end].removeprefix("\n")
