"""Registers the suite's pytest plugin (options, fixtures, verdicts, report, baseline gate) when run from a clone that
is not pip-installed; installed, its ``pytest11`` entry point (named ``harness.plugin`` too) has already loaded it and
pytest skips a plugin name it knows."""
pytest_plugins = ["harness.plugin"]
