"""The claims session: per-run state and the hooks that turn claim tests into records, results.json and the gate.

One ``ClaimsSession`` per pytest config (so in-process reruns share nothing), registered by
``harness.plugin.pytest_configure`` as the plugin ``attention_claims_session``. For each claim test (a test that
uses the ``evidence`` fixture) it ships the part it recorded, unjudged, in ``report.user_properties`` (JSON): that is
how a record travels from an xdist worker to the controller, with the files the claim wrote on the worker
(``ship_files`` / ``receive_files``). Where the report is logged (the controller, or the one process without
xdist) the claim is judged once, in one place: merged from its parts received so far (``harness.record.results``;
for a claim of one test, the whole claim), decided (``harness.record.verdict``), compared with the baseline when
one gates (``harness.record.baseline``), and the test's outcome set from that record before anything counts it.
At session end the controller writes ``results.json`` from the claims so judged (a claim with a part cut short by
Ctrl-C is merged and judged then) and ``index.html`` (also after failures, Ctrl-C and SIGTERM, then
``complete: false``), the baseline under ``--update-baseline``, and the terminal summary.

API:

* ``ClaimsSession(config, settings, baseline)`` — its hooks (collection order, outcome, records, session end,
  terminal summary), ``output_dir``, ``in_flight``, ``kernel``, ``worker_id``, ``build_results(...)``;
* ``Progress(config, item)`` — the ``progress`` fixture's live, rate-limited lines;
* ``STATE_KEY``, ``EVIDENCE_KEY`` — where the config keeps its session and an item its ``Evidence``;
* ``claim_marker_id(item)`` — the id of ``pytest.mark.claim("C4")``, or None;
* ``longest_first(items, expected_s)`` — claim items in the order of their expected wall time (issue 18);
* ``sigterm_as_interrupt()`` — SIGTERM takes Ctrl-C's path, so a killed run still writes its results;
* ``ship_files(staging)``, ``receive_files(files, report_dir)`` — a worker's claim files to the controller;
* ``seed_overrides(results)`` — the summary header's note on claims run on other seed counts.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import json
import os
import platform
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from harness.record import baseline as baseline_gate
from harness import fp_path
from harness.record import results as results_io
from harness.record import verdict as verdicts
from harness.record.evidence import Evidence
from harness.profiles import (KERNEL_NOT_YET, KERNEL_TRIAL_CLAIMS, MODEL_NOT_YET, MODEL_TRIAL_CLAIMS, get_profile,
                              wall_budget)
from harness.schedule import first_test_carries
from harness.record import lock as criteria_lock
from harness.settings import DRY_RUN_SEEDS, MAX_SEEDS, Settings, derive_seeds, read_lock, resolve_device

PART_PROPERTY = "attention_claims.part"
SKIP_PROPERTY = "attention_claims.skipped"
PROGRESS_BURST, PROGRESS_PER_S = 5, 2.0  # progress lines: bursts of 5, then 2 a second

EVIDENCE_KEY = pytest.StashKey[Evidence]()
ORDER_KEY = pytest.StashKey[int]()
SETUP_S_KEY = pytest.StashKey[float]()
STATE_KEY = pytest.StashKey["ClaimsSession"]()


def claim_marker_id(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{item.nodeid}: use pytest.mark.claim('C4') with one claim id")
    return marker.args[0]


def longest_first(items: list[pytest.Item], expected_s: Callable[[str], float | None]) -> list[pytest.Item]:
    """Claim items in the order of their expected wall time, longest first (issue 18): xdist hands the next unit to
    whichever worker is free, so the longest units must start first or one of them ends the run alone (the
    smallest-first tail balances the two workers). An ``xdist_group`` is one unit: its items keep their order and
    count their summed time; a claim's time is its first test's (``harness.schedule.first_test_carries``). Unit
    tests and claims without a budget keep their places after the budgeted ones."""
    def unit(item: pytest.Item) -> str:
        group = item.get_closest_marker("xdist_group")
        if group is not None:
            return "group:" + str(group.args[0] if group.args else group.kwargs.get("name", "default"))
        return item.nodeid

    claims = [claim_marker_id(item) for item in items]
    totals: dict[str, float] = {}
    for item, t in zip(items, first_test_carries(claims, expected_s)):
        if t is not None:   # a claim's time is its first test's (C1's corpus test skips outside full)
            totals[unit(item)] = totals.get(unit(item), 0.0) + t
    first_seen = {u: i for i, u in reversed(list(enumerate(unit(it) for it in items)))}
    return sorted(items, key=lambda it: (-totals.get(unit(it), -1.0), first_seen[unit(it)]))


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"received signal {signal.Signals(signum).name}")


def sigterm_as_interrupt():
    """Make SIGTERM (``timeout``, a CI runner cancelling a job, ``kill``) take Ctrl-C's path, so a long run
    killed that way still writes results.json, marked incomplete (issue 4). Only where SIGTERM still has its
    default action and only in the main thread; returns the handler to put back, or None."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None  # somebody (xdist, a runner) handles it already: leave theirs
    signal.signal(signal.SIGTERM, _raise_interrupt)
    return signal.SIG_DFL


class Progress:
    """Live progress lines: capture suspended, written through the terminal (stderr on xdist workers).

    Rate-limited by a token bucket (bursts of PROGRESS_BURST lines, then PROGRESS_PER_S a second), so an
    occasional "config X, seed 3" line always shows while a per-step caller cannot flood the terminal;
    ``force=True`` bypasses it. A line after dropped ones says how many were dropped.
    """

    def __init__(self, config: pytest.Config, item: pytest.Item) -> None:
        self.config, self.item = config, item
        self._tokens, self._last, self._dropped = float(PROGRESS_BURST), time.monotonic(), 0

    def _prefix(self) -> str:
        ev = self.item.stash.get(EVIDENCE_KEY, None)
        cid = (ev.id if ev is not None else None) or claim_marker_id(self.item) or self.item.name
        return f"[{cid}]"

    def __call__(self, msg: str, force: bool = False) -> None:
        now = time.monotonic()
        self._tokens = min(float(PROGRESS_BURST), self._tokens + (now - self._last) * PROGRESS_PER_S)
        self._last = now
        if self._tokens < 1.0 and not force:
            self._dropped += 1
            return
        self._tokens = max(0.0, self._tokens - 1.0)
        dropped, self._dropped = self._dropped, 0
        line = f"{self._prefix()} {msg}" + (f"  (+{dropped} lines not shown)" if dropped else "")
        capman = self.config.pluginmanager.getplugin("capturemanager")
        ctx = capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()
        with ctx:
            worker = self.config.stash[STATE_KEY].worker_id
            reporter = self.config.pluginmanager.getplugin("terminalreporter")
            if worker is None and reporter is not None:
                reporter.ensure_newline()
                reporter.write_line(line)
            else:
                sys.stderr.write(f"[{worker}] {line}\n" if worker else f"{line}\n")
                sys.stderr.flush()


class ClaimsSession:
    """Per-run state and hooks (one instance per pytest config, so in-process reruns don't share it)."""

    def __init__(self, config: pytest.Config, settings: Settings, baseline: dict[str, Any] | None) -> None:
        self.config, self.settings, self.baseline = config, settings, baseline
        workerinput = getattr(config, "workerinput", None)
        self.worker_id: str | None = workerinput["workerid"] if workerinput else None
        self.parts: list[dict[str, Any]] = []
        self.judged: dict[str, dict[str, Any]] = {}  # claim id -> its record, merged and judged (see _judge)
        self.skipped: list[dict[str, Any]] = []
        self.in_flight: dict[str, tuple[pytest.Item, Evidence, float]] = {}
        self.claim_items_collected = False  # so that a Ctrl-C before the first claim finished still writes
        self.started_at = dt.datetime.now(dt.timezone.utc)
        self.started = time.monotonic()
        self.previous_sigterm = None  # set by pytest_configure when it takes over SIGTERM
        self.results: dict[str, Any] | None = None
        self.messages: list[str] = []
        self.kernel = None  # harness.kernel.Kernel under trial (--attention), set by pytest_configure
        self.model_trial = None  # harness.model_trial.ModelUnderTrial (--model), set by pytest_configure
        # a worker writes claim files to its own staging folder and ships them back (see ship_files)
        self.staging: Path | None = None
        if self.worker_id is not None:
            import tempfile

            self.staging = Path(tempfile.mkdtemp(prefix=f"attention-claims-{self.worker_id}-"))

    @property
    def output_dir(self) -> Path:
        return self.staging if self.staging is not None else self.settings.report_dir

    # collection --------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for i, item in enumerate(items):
            item.stash[ORDER_KEY] = i  # the same on every xdist worker: merge order is collection order
            if "evidence" in getattr(item, "fixturenames", ()):
                self.claim_items_collected = True
                cid = claim_marker_id(item)
                if self.settings.attention and cid and cid not in KERNEL_TRIAL_CLAIMS:
                    item.add_marker(pytest.mark.skip(reason=f"{cid} does not judge an external kernel yet: "
                                                     + KERNEL_NOT_YET.get(cid, KERNEL_NOT_YET["*"])))
                if self.model_trial is not None and cid and cid not in MODEL_TRIAL_CLAIMS:
                    item.add_marker(pytest.mark.skip(reason=f"{cid} does not judge a user's model yet: "
                                                     + MODEL_NOT_YET.get(cid, MODEL_NOT_YET["*"])))
        s = self.settings
        if not s.fast:
            items[:] = longest_first(items, lambda cid: wall_budget(s.profile, cid, dry=s.dry_run,
                                                                    attention=bool(s.attention),
                                                                    model=bool(s.model or s.model_config)))

    # outcome -----------------------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        if "evidence" not in getattr(item, "fixturenames", ()):
            return report
        if report.when == "setup":
            item.stash[SETUP_S_KEY] = call.duration
            if report.skipped:
                self._ship_skip(item, report)
            elif report.failed:
                self._ship_part(item, report, errored=True, error=_error_text(call))
        elif report.when == "call":
            if report.skipped:
                self.in_flight.pop(item.nodeid, None)
                self._ship_skip(item, report)
            else:
                duration = item.stash.get(SETUP_S_KEY, 0.0) + call.duration
                self._ship_part(item, report, errored=report.failed,
                                error=_error_text(call) if report.failed else None, duration=duration)
        return report

    def _passes(self, part: dict[str, Any]) -> bool:
        if self.settings.dry_run:
            return part["verdict"] != verdicts.ERROR
        if self.settings.gate_active:
            return not part["regression"]["regressed"]
        return verdicts.test_passes(part["verdict"], part["kind"])

    def _failure_text(self, part: dict[str, Any]) -> str:
        if self.settings.gate_active:
            reasons = "; ".join(part["regression"]["reasons"])
            return f"{part['id']} regressed against the baseline: {reasons}\n\n{verdicts.explain(part)}"
        return f"{part['id']} is {part['verdict']}, not supported:\n{verdicts.explain(part)}"

    def _build_part(self, item: pytest.Item, ev: Evidence | None, *, errored: bool, error: str | None,
                    duration: float, interrupted: bool = False) -> dict[str, Any] | None:
        """A test part's record as measured, not judged: the controller judges its claim (``_judge``)."""
        if ev is None:
            ev = Evidence(self.settings.report_dir, claim_id=claim_marker_id(item), fast=self.settings.fast)
        part = ev.to_record()
        if part["id"] is None:
            self.messages.append(f"{item.nodeid}: uses `evidence` but declared no claim (ev.claim or "
                                 "pytest.mark.claim); nothing recorded")
            return None
        funcargs = getattr(item, "funcargs", None) or {}  # None once an interrupted item is torn down
        try:
            module = str(item.path.relative_to(self.config.rootpath))
        except ValueError:
            module = str(item.path)
        part.update(nodeid=item.nodeid, order=item.stash.get(ORDER_KEY, 0), module=module,
                    duration_s=round(duration, 3), error=error, interrupted=interrupted, errored=errored,
                    device=str(funcargs["device"]) if "device" in funcargs else None,
                    seeds=None if part.get("seedless") else funcargs.get("seeds"))
        part["fp_capability"] = fp_path.capability()
        return part

    def _ship_part(self, item: pytest.Item, report: pytest.TestReport, *, errored: bool, error: str | None,
                   duration: float | None = None) -> None:
        self.in_flight.pop(item.nodeid, None)
        part = self._build_part(item, item.stash.get(EVIDENCE_KEY, None), errored=errored, error=error,
                                duration=report.duration if duration is None else duration)
        if part is not None:
            if self.staging is not None:
                part["files"] = ship_files(self.staging)
            report.user_properties.append((PART_PROPERTY, json.dumps(results_io.to_jsonable(part))))

    def _judge(self, report: pytest.TestReport, part: dict[str, Any]) -> None:
        """Judge the part's claim once, merged from its parts received so far (for a claim of one test, the whole
        claim), keep that record for results.json, and set the test's outcome from it: without a baseline the
        part passes iff its criteria, as the claim judged them, support it; with one, iff it did not regress."""
        mine = [p for p in self.parts if p["id"] == part["id"]]
        claim = results_io.merge_claim(mine)
        self.judged[part["id"]] = claim
        record = results_io.part_record(claim, mine, part)
        if self.settings.gate_active:
            record["regression"] = baseline_gate.compare_claim(record, self.baseline["claims"].get(part["id"]))
        if results_io.part_errored(part):  # a verdict failure says this in its longrepr; a crash shows it beside it
            report.sections.append((f"claim {part['id']}", verdicts.explain(record)))
        elif report.when == "call" and report.passed and not self._passes(record):
            report.outcome = "failed"
            report.longrepr = self._failure_text(record)

    def _ship_skip(self, item: pytest.Item, report: pytest.TestReport) -> None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        skip = {"id": claim_marker_id(item), "nodeid": item.nodeid, "reason": reason}
        report.user_properties.append((SKIP_PROPERTY, json.dumps(skip)))

    # collection of records (serial: this process; xdist: the controller) ----------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport):
        """Collect the parts and skips a report carries and judge each part's claim, before every other
        implementation of the hook: pytest's session counts failures for -x, --maxfail and the exit status in a
        tryfirst one registered after this plugin (which a tryfirst here would follow), the terminal and junitxml
        in theirs, xdist after the hook; so all of them see the outcome the claim's judgement set."""
        if self.worker_id is None:  # a worker ships its parts unjudged; the controller collects and judges them
            for name, value in getattr(report, "user_properties", ()):
                if name == PART_PROPERTY:
                    part = json.loads(value)
                    for problem in receive_files(part.pop("files", None) or {}, self.settings.report_dir):
                        self.messages.append(f"{part.get('id')}: {problem}")
                    self.parts.append(part)
                    self._judge(report, part)
                elif name == SKIP_PROPERTY:
                    self.skipped.append(json.loads(value))
        return (yield)

    # output ------------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.worker_id is not None:
            return  # workers ship records; the controller writes
        interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        for item, ev, t0 in list(self.in_flight.values()):  # Ctrl-C mid-claim: keep what it recorded
            part = self._build_part(item, ev, errored=True, duration=time.monotonic() - t0, interrupted=True,
                                    error="interrupted before it finished; its evidence is partial")
            if part is not None:
                self.parts.append(part)
        self.in_flight.clear()
        if not (self.parts or self.skipped or (interrupted and self.claim_items_collected)):
            return  # no claim ran (`pytest tests`, --collect-only): leave the last report alone
        # -x / --maxfail stop a serial session through shouldfail (xdist's controller raises Interrupted instead)
        stopped = session.shouldstop or session.shouldfail
        complete = not interrupted and exitstatus != pytest.ExitCode.INTERNAL_ERROR and not stopped
        self.results = self.build_results(complete=complete, exitstatus=int(exitstatus),
                                          stopped=str(stopped or "") or None)
        out = self.settings.report_dir
        results_io.write_json_atomic(out / "results.json", self.results)
        try:
            from harness.report import html as html_report

            html_report.write_report(self.results, out)
        except Exception as exc:  # the results file is the record; a rendering bug must not lose it
            self.messages.append(f"index.html not written ({type(exc).__name__}: {exc}); rebuild with "
                                 f"`python -m harness.report {out / 'results.json'}`")
        if self.settings.update_baseline:
            self._write_baseline(complete)

    def _write_baseline(self, complete: bool) -> None:
        target = self.settings.baseline_target
        if not complete:
            self.messages.append(f"baseline NOT updated: the run is incomplete ({target} left as it was)")
            return
        existing = None
        if target.exists():
            try:
                existing = baseline_gate.load_baseline(target)
            except baseline_gate.BaselineError as exc:   # nothing in it can be merged: kept aside, never lost
                aside = target.with_name(target.name + ".unreadable")
                os.replace(target, aside)
                self.messages.append(f"the old baseline could not be read ({exc}); moved to {aside}")
        try:
            merged = baseline_gate.merge_baseline(existing, self.results)
        except baseline_gate.BaselineError as exc:
            self.messages.append(f"baseline NOT updated ({target} left as it was): {exc}")
            return
        results_io.write_json_atomic(target, merged)
        errored = [cid for cid, c in self.results["claims"].items() if c["verdict"] == verdicts.ERROR]
        kept = [cid for cid in merged["claims"] if cid not in self.results["claims"]]
        self.messages.append(f"baseline written: {target}" + (
            f" ({', '.join(self.results['claims'])} from this run; kept from earlier runs: {', '.join(kept)})"
            if kept else ""))
        if errored:
            self.messages.append(f"WARNING: the new baseline holds errored claims ({', '.join(errored)}); "
                                 "an error cannot regress, so they are not gated")

    def _model_params(self) -> int | None:
        """The parameter count of the model on trial (on the meta device, once), for budgets that grow with it."""
        if self.model_trial is None:
            return None
        if not hasattr(self, "_n_params"):
            from harness.model_trial import parameter_count
            self._n_params = parameter_count(self.model_trial, **self.model_trial.vocab_cut)
        return self._n_params

    def _lock_keys(self, claims: dict[str, Any]) -> dict[str, Any]:
        """Issue 47: the criteria lock's hash, whether this run's premise and counted criteria equal it at the run's
        profile (None where the lock does not hold this run's criteria: another profile, a kernel or model on trial,
        claims it holds none of, no lock), how they differ, and where the master seed came from."""
        s = self.settings
        try:
            doc = read_lock()
        except pytest.UsageError:       # said at configure where it matters (standard's seeds); here: no lock
            doc = None
        comparable = (doc is not None and s.profile in criteria_lock.LOCKED_PROFILES and not s.attention
                      and not (s.model or s.model_config) and bool(set(claims) & criteria_lock.held_claims(doc)))
        profile = get_profile(s.profile, s.n_seeds)
        blocks = None if s.dry_run else criteria_lock.block_fingerprints(profile.blocks, profile.n_seeds)
        differences = criteria_lock.check_run(claims, doc, s.profile, fast=s.fast, blocks=blocks) if comparable else []
        return {"criteria_lock": doc["hash"] if doc else None,
                "criteria_at_lock": (not differences) if comparable and claims else None,
                "criteria_lock_differences": differences, "seeds_from": s.seeds_from, "blocks": blocks}

    def build_results(self, *, complete: bool, exitstatus: int, stopped: str | None) -> dict[str, Any]:
        s = self.settings
        claims = results_io.merge_parts(self.parts, self.judged)  # judged as they arrived; the rest judged here
        base_claims = self.baseline["claims"] if self.baseline else {}
        regressions = baseline_gate.compare_results(claims, base_claims) if s.gate_active else {}
        for cid, claim in claims.items():
            claim["budget_s"] = None if s.fast else wall_budget(s.profile, cid, dry=s.dry_run,
                                                                attention=bool(s.attention),
                                                                model=bool(s.model or s.model_config),
                                                                n_params=self._model_params())
            if cid in regressions:
                claim["regression"] = regressions[cid]
        devices = sorted({p["device"] for p in self.parts if p.get("device")})
        run = {
            "profile": s.profile,
            "device": ", ".join(devices) if devices else _describe_device(s.device),
            "seeds": derive_seeds(s.master_seed, min(s.n_seeds or get_profile(s.profile).n_seeds,
                                                     DRY_RUN_SEEDS if s.dry_run else MAX_SEEDS)),
            "torch_version": _torch_version(),
            "git_commit": results_io.git(self.config.rootpath, "rev-parse", "HEAD"),
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "duration_s": round(time.monotonic() - self.started, 3),
            "complete": complete,
            "master_seed": s.master_seed,
            "inject_fault": s.inject_fault,
            "fast": s.fast,
            "dry_run": s.dry_run,
            "exit_status": exitstatus,
            "stopped": stopped,
            "git_dirty": results_io.git(self.config.rootpath, "status", "--porcelain", "--untracked-files=no") not in (None, ""),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "fp_path": fp_path.describe({p["fp_capability"] for p in self.parts if p.get("fp_capability")}),
            "workers": self.config.getoption("numprocesses", None) or 0,
            "baseline": str(s.baseline) if s.gate_active else None,
            "baseline_profile": self.baseline["run"].get("profile") if self.baseline else None,
            "baseline_git_commit": self.baseline["run"].get("git_commit") if self.baseline else None,
            "baseline_not_run": sorted(set(base_claims) - set(claims), key=results_io.claim_sort_key),
            "skipped": self.skipped,
            **self._lock_keys(claims),
        }
        if s.gate_active:
            run["baseline_fp_path"] = self.baseline["run"].get("fp_path")
            other_path = fp_path.mismatch(run, self.baseline["run"])
            if other_path and other_path not in self.messages:
                self.messages.append(other_path)
        return {"schema_version": results_io.SCHEMA_VERSION, "run": run, "claims": claims,
                "attention": self.kernel.describe() if self.kernel is not None else None,
                **({"model": self.model_trial.describe()} if self.model_trial is not None else {})}

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
            if _not_testable_line(claim, width):
                tr.write_line(_not_testable_line(claim, width), yellow=True)
            if claim.get("answers"):
                tr.write_line(f"{'':<{width}}  answers: {verdicts.answers_text(claim['answers'])}")
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


def ship_files(staging: Path) -> dict[str, str]:
    """Every file a claim wrote under a worker's staging folder, as {relative path: base64}, then removed: they
    travel to the controller inside the claim's record."""
    import base64

    files = {}
    for path in sorted(p for p in staging.rglob("*") if p.is_file()):
        files[path.relative_to(staging).as_posix()] = base64.b64encode(path.read_bytes()).decode("ascii")
        path.unlink()
    return files


def receive_files(files: dict[str, str], report_dir: Path) -> list[str]:
    """Write shipped files into the controller's report dir; returns problems (a path that would leave it)."""
    import base64

    problems, root = [], report_dir.resolve()
    for rel, data in files.items():
        target = (root / rel).resolve()
        if not target.is_relative_to(root) or rel.startswith("/"):
            problems.append(f"a worker shipped {rel!r}, outside the report dir: not written")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.part")
        tmp.write_bytes(base64.b64decode(data))
        os.replace(tmp, target)
    return problems


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
    return (f"{cid:<{width}}  {claim['verdict']:<26} {firmness:<32} {headline:<36} "
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


def _error_text(call: pytest.CallInfo) -> str | None:
    if call.excinfo is None:
        return None
    text = call.excinfo.exconly().strip()
    entry = call.excinfo.traceback[-1] if call.excinfo.traceback else None
    where = f" (at {Path(str(entry.path)).name}:{entry.lineno + 1})" if entry is not None else ""
    return (text[:800] + " ...") if len(text) > 800 else text + where


def _describe_device(spec: str) -> str:
    if spec == "cpu":
        return "cpu"
    try:
        return resolve_device(spec)
    except Exception:  # metadata only: never fail the run over it
        return spec


def _torch_version() -> str | None:
    torch = sys.modules.get("torch")
    if torch is not None:
        return torch.__version__
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
