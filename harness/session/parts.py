"""Collecting parts: each claim test's record as measured, not judged, and how it travels.

A claim test (one that uses the ``evidence`` fixture) ships its part in ``report.user_properties`` (JSON), a skip
its reason, and an xdist worker the files the claim wrote (``ship_files``); where the report is logged (the
controller, or the one process without xdist) the parts are received (``receive_files``) and each part's claim is
judged (``harness.session.judge``).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness import fp_path
from harness.record import results as results_io
from harness.record.evidence import Evidence

PART_PROPERTY = "attention_claims.part"
SKIP_PROPERTY = "attention_claims.skipped"

EVIDENCE_KEY = pytest.StashKey[Evidence]()
ORDER_KEY = pytest.StashKey[int]()
SETUP_S_KEY = pytest.StashKey[float]()


def claim_marker_id(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("claim")
    if marker is None:
        return None
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{item.nodeid}: use pytest.mark.claim('C4') with one claim id")
    return marker.args[0]


class CollectParts:
    """``ClaimsSession``'s hooks that ship and collect parts (its state: ``settings``, ``config``, ``parts``,
    ``skipped``, ``in_flight``, ``staging``, ``messages``, ``worker_id``; ``_judge`` from ``JudgeClaims``)."""

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


def _error_text(call: pytest.CallInfo) -> str | None:
    if call.excinfo is None:
        return None
    text = call.excinfo.exconly().strip()
    entry = call.excinfo.traceback[-1] if call.excinfo.traceback else None
    where = f" (at {Path(str(entry.path)).name}:{entry.lineno + 1})" if entry is not None else ""
    return (text[:800] + " ...") if len(text) > 800 else text + where
