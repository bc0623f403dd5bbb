"""Registers the suite's pytest plugin (options, fixtures, verdicts, report, baseline gate)."""
pytest_plugins = ["harness.plugin"]
