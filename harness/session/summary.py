"""The terminal summary: the run's header, what was on trial and which claims judged it, one line per claim
(verdict, firmness, headline, time against its budget, the gate), and the warnings of the run."""
from __future__ import annotations

from typing import Any

from harness.profiles import KERNEL_TRIAL_CLAIMS, MODEL_TRIAL_CLAIMS
from harness.record import lock as criteria_lock
from harness.record import verdict as verdicts
from harness.report import sentences
from harness.settings import Settings


class TerminalSummary:
    """``ClaimsSession``'s terminal summary (its state: ``settings``, ``baseline``, ``results``, ``messages``,
    ``worker_id``)."""

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self.worker_id is not None or self.results is None:
            for msg in self.messages:
                terminalreporter.write_line(msg, yellow=True)
            return
        tr, res, s = terminalreporter, self.results, self.settings
        run = res["run"]
        tr.write_sep("=", f"attention-claims: profile {run['profile']}, device {run['device']}, "
                          f"seeds {run['seeds']}{seed_overrides(res)}"
                          f"{', FAULT ' + s.inject_fault if s.inject_fault else ''}"
                          f"{', DRY RUN: no verdicts (every path ran; numbers mean nothing)' if s.dry_run else ''}")
        if "criteria_lock" in run:
            tr.write_line(criteria_lock.summary(run), **({"red": True} if run.get("criteria_at_lock") is False else {}))
            for line in run.get("criteria_lock_differences") or ():
                tr.write_line(f"  {line}", red=True)
        for key, what, judges in (("attention", "a kernel", KERNEL_TRIAL_CLAIMS), ("model", "a model",
                                                                                   MODEL_TRIAL_CLAIMS)):
            if res.get(key):
                d = res[key]
                on_trial = (f"{d['name']} ({d['convention']} convention, dtypes {', '.join(d['dtypes'])})"
                            if key == "attention" else f"{d['spec']} ({d['class']}, tapped through {d['tap']}, "
                                                       f"{d['attention_calls']} attention calls"
                                                       + (f", built at init with {d['vocab_built']} of the config's "
                                                          f"{d['vocab_config']} tokens" if d.get('vocab_built') else "")
                                                       + ")")
                tr.write_line(f"{key} on trial: {on_trial}; {_trial_coverage(res, judges, what)}")
        if res.get("attention"):
            from harness.report.findings import failing_properties

            failing = failing_properties(res)
            tr.write_line("failing properties, each with its smallest counterexample (claim verdicts below):"
                          if failing else "no property of the kernel fails (claim verdicts below)",
                          **({"red": True} if failing else {"green": True}))
            for line in failing:
                tr.write_line(f"  {line}", red=True)
        width = max([len(c) for c in res["claims"]] + [2])
        for cid, claim in res["claims"].items():
            tr.write_line(_summary_line(cid, claim, s, width), **_verdict_markup(claim["verdict"]))
            if not s.dry_run:       # the row in the paper's words, as the README and the report say it (issue 63)
                tr.write_line(f"{'':<{width}}  {sentences.sentence(claim)}")
            if _not_testable_line(claim, width):
                tr.write_line(_not_testable_line(claim, width), yellow=True)
            if claim.get("answers"):
                tr.write_line(f"{'':<{width}}  answers: {verdicts.answers_text(claim['answers'])}")
            if claim.get("at_init"):
                tr.write_line(f"{'':<{width}}  {verdicts.at_init_label(claim)}: {claim['at_init']}", yellow=True)
        if not res["claims"]:
            tr.write_line("no claim recorded in this run")
        if any(c.get("firmness") is not None and verdicts.tuned(c) for c in res["claims"].values()):
            tr.write_line("firm: the share of simulated fresh seed sets that repeat the verdict; '| tuned': "
                          f"{verdicts.GIVEN_TUNED} (a new tuning seed can move them)")
        unstable = [cid for cid, c in res["claims"].items() if (c.get("regression") or {}).get("status") == "unstable"]
        if unstable:
            tr.write_line(f"unstable against the baseline (worse without a significant move of the evidence; "
                          f"shown, not gated): {', '.join(unstable)}", yellow=True)
        if run["baseline_not_run"]:
            tr.write_line(f"in the baseline but not run: {', '.join(run['baseline_not_run'])}", yellow=True)
        if s.gate_active and run["baseline_profile"] not in (None, run["profile"]):
            tr.write_line(f"WARNING: baseline made with profile {run['baseline_profile']}, this run uses "
                          f"{run['profile']}: gated metrics may not be comparable", yellow=True)
        judged = [((self.baseline or {}).get("attention") or {}).get("name"), (res.get("attention") or {}).get("name")]
        if s.gate_active and judged[0] != judged[1]:
            tr.write_line("WARNING: the baseline judged " + " and this run ".join(
                name or "this project's own attention" for name in judged) + ": verdicts are not comparable",
                yellow=True)
        if not run["complete"]:
            tr.write_line("run INCOMPLETE (interrupted or stopped early): results.json is marked complete=false",
                          red=True)
        for msg in self.messages:
            tr.write_line(msg, yellow=True)
        tr.write_line(f"results: {s.report_dir / 'results.json'}   report: {s.report_dir / 'index.html'}")


def seed_overrides(res: dict[str, Any]) -> str:
    """' (C3: 5 seeds)' for the claims whose profile block sets another seed count than the run's header shows,
    so that the summary does not read as if every claim ran on the header's seeds; '' when none does."""
    run_seeds = res["run"].get("seeds")
    other = [f"{cid}: {len(c['seeds'])} seeds" for cid, c in res["claims"].items()
             if c.get("seeds") and c["seeds"] != run_seeds]
    return f" ({', '.join(other)})" if other else ""


def _summary_line(cid: str, claim: dict[str, Any], settings: Settings, width: int) -> str:
    head = claim.get("headline")
    value = claim["metrics"].get(head) if head else None
    headline = f"{head} = {_fmt(value)}" if head else "-"
    if settings.gate_active:
        reg = claim.get("regression") or {}
        status = reg.get("status", "?")
        regression = f"REGRESSED ({'; '.join(reg['reasons'])})" if reg.get("regressed") else status
    else:
        regression = "not gated"
    firm = claim.get("firmness")
    firmness = "" if firm is None else f"firm {firm:.2f}" if not verdicts.fragile(firm) else \
        f"FRAGILE {firm:.2f}" + (f" (~{claim['seeds_for_firm']} seeds)" if claim.get("seeds_for_firm") else "")
    if firm is not None and verdicts.tuned(claim):
        firmness += " | tuned"          # given the tuned rates: the legend under the summary says so
    budget = claim.get("budget_s")
    took = f"{claim.get('duration_s') or 0:6.1f} s" + (f" / {budget:.0f} s" if budget else "")
    over = " OVER BUDGET" if budget and (claim.get("duration_s") or 0) > budget else ""
    return (f"{cid:<{width}}  {verdicts.verdict_shown(claim):<26} {firmness:<32} {headline:<36} "
            f"{took:<17}{over}  {regression}")


def _trial_coverage(res: dict[str, Any], judges: tuple[str, ...], what: str) -> str:
    """Which claims judged the thing on trial, which of those that can were not run (deselected, or not named), and
    which were skipped because they do not judge it yet."""
    skipped = {s["id"] for s in res["run"].get("skipped") or [] if s.get("id")}
    judged = [c for c in res["claims"] if c in judges and c not in skipped]
    not_run = [c for c in judges if c not in res["claims"] and c not in skipped]
    not_yet = sorted(c for c in skipped if c not in judges)
    parts = [f"judged by {', '.join(judged) or 'no claim'}"]
    if not_run:
        parts.append(f"not run: {', '.join(not_run)}")
    if not_yet:
        parts.append(f"{', '.join(not_yet)} do not judge {what} yet (skipped, each with its reason)")
    return "; ".join(parts)


def _not_testable_line(claim: dict[str, Any], width: int) -> str:
    """The line under a claim's summary line when a premise made it inconclusive (issue 38), or when it counts
    nothing and reads not tested (issue 47), else ''."""
    if claim.get("verdict") == verdicts.NOT_TESTED:
        return f"{'':<{width}}  not tested here: {claim.get('not_tested') or verdicts.NO_COUNTED_CRITERION}"
    if not claim.get("not_testable") or claim.get("verdict") == verdicts.ERROR:
        return ""
    return f"{'':<{width}}  not testable here: {claim['not_testable']}"


def _verdict_markup(verdict: str) -> dict[str, bool]:
    c = verdicts.canonical(verdict)
    return {"green": True} if c == verdicts.SUPPORTED else {"red": True} if c in (verdicts.REFUTED, verdicts.ERROR) \
        else {"cyan": True} if c == verdicts.NOT_TESTED else {"yellow": True}


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)
