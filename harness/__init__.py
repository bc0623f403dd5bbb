"""Registers the suite's pytest plugin (options, fixtures, verdicts, report, baseline gate) when run from a clone that
is not pip-installed; installed, its ``pytest11`` entry point (named ``harness.plugin`` too) has already loaded it and
pytest skips a plugin name it knows. Importing ``harness`` pins the floating-point path first (``harness.fp_path``):
every entry (the plugin, ``python -m harness.*``, their subprocesses and workers) imports it before torch computes."""
from harness import fp_path as _fp_path

_fp_path.pin()

pytest_plugins = ["harness.plugin"]
