"""The one usage error every command of the project gives: a bad option, path or argument is one line on stderr and
exit status ``USAGE_EXIT`` (pytest's own plugin options say the same through ``pytest.UsageError``)."""
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
