"""``--replicate k``: one run of the pre-registered replication (issue 64), logged and stored as its record.

Registered by ``harness.plugin.pytest_configure`` on the process that writes the report (the controller, or the one
process without xdist) when ``--replicate k`` is given; the settings have set the master seed to the lock's k-th
replicate seed (``harness.settings.replicate_seed``). The run:

* appends a **start** line to ``<report-dir>/runlog.jsonl`` (``harness.record.runlog``) once the claims it runs are
  collected, before the first trains: the lock, k, the seed, the claims (the part), the commit, the CPU vendor, the
  time. A claim whose replicate k is already complete at the lock in the log is refused (exit 4): the first complete
  run is the record, and a second would only re-draw it;
* writes its record, ``<report-dir>/replicates/<lock[:12]>/r<k>-<claims>.json`` (results.json's schema, with
  ``run.replicate``), atomically, each time a claim's test reports, and once more at the end;
* appends an **end** line at session end: each claim's verdict, or ``aborted`` for a run cut short (Ctrl-C,
  SIGTERM, -x, an internal error).
"""
from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from typing import Any, Iterable

import pytest

from harness import fp_path
from harness.record import replication, runlog
from harness.record import results as results_io
from harness.schedule import claim_of
from harness.session.parts import PART_PROPERTY


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


class ReplicateRun:
    """The run log's lines and the record of one ``--replicate k`` run (``state``: the ``ClaimsSession``)."""

    def __init__(self, state: Any) -> None:
        self.state = state
        s = state.settings
        self.k, self.lock, self.seed = s.replicate, s.replicate_lock, s.master_seed
        self.run_id = uuid.uuid4().hex[:16]
        self.log = s.report_dir / runlog.LOG_NAME
        self.claims: list[str] | None = None
        self.path = None
        self.t0 = time.monotonic()

    # the start: once the claims are known, before any trains -----------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._start(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._start(ids)

    def _start(self, nodeids: Iterable[str]) -> None:
        claims = sorted({c for c in map(claim_of, nodeids) if c}, key=results_io.claim_sort_key)
        if self.claims is not None or not claims:
            return
        s = self.state.settings
        if not s.dry_run:
            first = runlog.first_complete(runlog.read(self.log), self.lock)
            done = [f"{c} (run {first[(c, self.k)]})" for c in claims if (c, self.k) in first]
            if done:
                pytest.exit(f"--replicate {self.k}: {', '.join(done)} already complete at lock {self.lock[:12]} in "
                            f"{self.log}; the first complete run is the record, so it is not run again",
                            returncode=pytest.ExitCode.USAGE_ERROR)
        self.claims = claims
        self.path = s.report_dir / runlog.RECORDS_DIR / self.lock[:12] / replication.record_name(self.k, claims)
        root = self.state.config.rootpath
        runlog.append(self.log, {
            "event": "start", "run": self.run_id, "lock": self.lock, "replicate": self.k, "K": replication.K,
            "seed": self.seed, "claims": claims, "part": "-".join(claims),
            "file": self.path.relative_to(s.report_dir).as_posix(),
            "commit": results_io.git(root, "rev-parse", "HEAD"),
            "dirty": results_io.git(root, "status", "--porcelain", "--untracked-files=no") not in (None, ""),
            "vendor": fp_path.vendor(), "at": _now(), "dry_run": s.dry_run,
            "workers": self.state.config.getoption("numprocesses", None) or 0})

    # the record, merged as each claim reports ---------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.claims is None or not any(name == PART_PROPERTY for name, _ in report.user_properties):
            return
        self._write(self.state.build_results(complete=False, exitstatus=-1, stopped=None))

    def _write(self, results: dict[str, Any]) -> None:
        results = json.loads(json.dumps(results_io.to_jsonable(results)))
        results["run"]["replicate"] = {"k": self.k, "K": replication.K, "seed": self.seed, "lock": self.lock,
                                       "run": self.run_id, "vendor": fp_path.vendor(), "claims": self.claims,
                                       "file": self.path.name}
        results_io.write_json_atomic(self.path, results)

    # the end ----------------------------------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.claims is None:
            return
        results = self.state.results
        done = results is not None and results["run"]["complete"]
        if results is not None:
            self._write(results)
        outcome = {cid: c["verdict"] for cid, c in results["claims"].items()} if done else runlog.ABORTED
        runlog.append(self.log, {"event": "end", "run": self.run_id, "at": _now(),
                                 "duration_s": round(time.monotonic() - self.t0, 3), "outcome": outcome})
        self.state.messages.append(
            f"replicate {self.k} of {replication.K} at lock {self.lock[:12]} (master seed {self.seed}): "
            f"{'complete' if done else 'ABORTED'}; record {self.path}, run log {self.log}")
