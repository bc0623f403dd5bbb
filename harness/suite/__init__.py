"""Commands about the suite itself: the fault matrix (``python -m harness.suite.sensitivity``), the firmness
calibration (``python -m harness.suite.calibration``), the fault matrix's generated tables
(``python -m harness.suite.fault_tables``) and a new claim's scaffold (``python -m harness.suite.new_claim``)."""
from __future__ import annotations

from harness.record.cli import USAGE_EXIT, OneLineParser

__all__ = ["USAGE_EXIT", "OneLineParser"]
