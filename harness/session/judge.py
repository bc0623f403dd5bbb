"""Judging: a part's claim judged once, in one place, where the report is logged, and the test's outcome set from
that record before anything counts it (``harness.record.results`` merges, ``harness.record.verdict`` decides,
``harness.record.baseline`` compares when a baseline gates)."""
from __future__ import annotations

from typing import Any

import pytest

from harness.record import baseline as baseline_gate
from harness.record import results as results_io
from harness.record import verdict as verdicts


class JudgeClaims:
    """``ClaimsSession``'s judgement of a claim from its parts (its state: ``settings``, ``baseline``, ``parts``,
    ``judged``)."""

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
