"""Registers the suite's pytest plugin (options, fixtures, verdicts, report, baseline gate).

Installed (``pip install -e .``), the plugin is also a ``pytest11`` entry point, loaded before this file; naming it
here again would register the module twice (pluggy: "already registered under a different name"). Run from a
clone without installing, this line is what loads it.
"""
import sys

pytest_plugins = [] if "harness.plugin" in sys.modules else ["harness.plugin"]
