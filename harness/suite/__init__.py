"""Commands about the suite itself: the fault matrix (``python -m harness.suite.sensitivity``), the firmness
calibration (``python -m harness.suite.calibration``), the fault matrix's generated tables
(``python -m harness.suite.fault_tables``) and a new claim's scaffold (``python -m harness.suite.new_claim``)."""
from __future__ import annotations

import argparse
import sys

#: a bad option, path or argument: one line on stderr, this exit status
USAGE_EXIT = 4


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and exit ``USAGE_EXIT``."""

    def error(self, message: str):
        print(f"{self.prog}: {message}", file=sys.stderr)
        raise SystemExit(USAGE_EXIT)
