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

Where each part lives (``harness.session`` re-exports what it names below): ``harness.session`` holds the per-run
state, the collection order and the progress lines; ``parts`` collects the parts (a claim test's record as measured,
shipped from a worker, received by the controller), ``judge`` judges a part's claim and sets the test's outcome,
``write`` writes results.json, index.html and the baseline at session end, and ``summary`` the terminal summary.
``ClaimsSession`` takes its hooks from the last four, one class each.

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
import signal
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from harness.record.evidence import Evidence
from harness.profiles import KERNEL_NOT_YET, KERNEL_TRIAL_CLAIMS, MODEL_NOT_YET, MODEL_TRIAL_CLAIMS, wall_budget
from harness.schedule import first_test_carries
from harness.session.judge import JudgeClaims
from harness.session.parts import (EVIDENCE_KEY, ORDER_KEY, CollectParts, claim_marker_id, receive_files,
                                   ship_files)
from harness.session.summary import TerminalSummary, seed_overrides
from harness.session.write import WriteResults
from harness.settings import Settings

__all__ = ["ClaimsSession", "Progress", "STATE_KEY", "EVIDENCE_KEY", "claim_marker_id", "longest_first",
           "sigterm_as_interrupt", "ship_files", "receive_files", "seed_overrides"]

PROGRESS_BURST, PROGRESS_PER_S = 5, 2.0  # progress lines: bursts of 5, then 2 a second

STATE_KEY = pytest.StashKey["ClaimsSession"]()


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


class ClaimsSession(CollectParts, JudgeClaims, WriteResults, TerminalSummary):
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
        self.kernel = None  # harness.trial.kernel.Kernel under trial (--attention), set by pytest_configure
        self.model_trial = None  # harness.trial.model.ModelUnderTrial (--model), set by pytest_configure
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
