"""The fake claim set's conftest: registers the suite plugin, as the root conftest.py does for claims/.

These modules drive the plugin in tests (pytester copies this folder into a temp dir); they are not
claims of the note. Each reads FAKE_* environment variables so one set can play several scenarios.
"""
pytest_plugins = ["harness.plugin"]
