"""Writing: at session end the controller writes results.json from the claims as judged (a claim with a part cut
short by Ctrl-C is merged and judged then), index.html (also after failures, Ctrl-C and SIGTERM, then
``complete: false``) and, under ``--update-baseline``, the baseline."""
from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
import time
from typing import Any

import pytest

from harness.record import baseline as baseline_gate
from harness import fp_path
from harness.record import results as results_io
from harness.record import verdict as verdicts
from harness.profiles import get_profile, wall_budget
from harness.record import lock as criteria_lock
from harness.record import rules as decision_rules
from harness.settings import DRY_RUN_SEEDS, MAX_SEEDS, derive_seeds, read_lock, resolve_device


class WriteResults:
    """``ClaimsSession``'s session end (its state: ``settings``, ``config``, ``baseline``, ``parts``, ``judged``,
    ``skipped``, ``in_flight``, ``messages``, ``results``, ``kernel``, ``model_trial``, ``started_at``, ``started``;
    ``_build_part`` from ``CollectParts``)."""

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
            from harness.trial.model import parameter_count
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
        if comparable:      # the decision rules the fingerprints do not hold (issue 63): the code's against the lock's
            differences += [f"decision {d[2:]} differs from the lock" for d in
                            criteria_lock.rule_differences(doc.get("rules"), decision_rules.RULES)]
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
