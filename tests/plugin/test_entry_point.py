"""The plugin is a pytest11 entry point (issue 27): its options exist whatever the rootdir.

``pytest --baseline /elsewhere/baseline.json`` (the space form, a file outside the checkout) used to fail with
'unrecognized arguments: --baseline': before any conftest is read, pytest took the existing path for a test path,
moved its rootdir to /elsewhere and never loaded conftest.py. Installed, the entry point defines the options first;
the rootdir is still picked before them, so the space form is refused where it moves the rootdir (issue 48).
The entry point is named after the module: pytest dedups plugins by name (pluggy refuses one module under two
names), so the conftests' ``pytest_plugins`` and ``-p harness.plugin`` find it registered.
"""
from __future__ import annotations

import importlib.metadata

import pytest

from tests.conftest import copy_fake_claims, run_pytest


def _installed() -> bool:
    return any(ep.value == "harness.plugin" for ep in importlib.metadata.entry_points(group="pytest11"))


@pytest.fixture(scope="module")
def suite_and_baseline(tmp_path_factory):
    """A fake claim suite, and a baseline of it written to a folder outside both the suite and this checkout."""
    suite = copy_fake_claims(tmp_path_factory.mktemp("suite"), only=["test_f1_supported.py"])
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "baseline.json"
    proc = run_pytest(suite, "-q", "--update-baseline", f"--baseline={elsewhere}", timeout=120)
    assert proc.returncode == 0 and elsewhere.exists(), proc.stdout + proc.stderr
    return suite, elsewhere


@pytest.mark.skipif(not _installed(), reason="the project is not pip-installed here: no pytest11 entry point")
@pytest.mark.parametrize("form", ["space", "equals"])
def test_baseline_outside_the_checkout_in_both_forms(suite_and_baseline, form):
    """The option is known in both forms. Written with a space, pytest still counts the path as a test path when it
    picks its rootdir (before any plugin's options exist): here the suite's and the baseline's common parent, where
    the report would go. That form is refused in one line that shows the ``=`` form (issue 48)."""
    suite, baseline = suite_and_baseline
    args = ["--baseline", str(baseline)] if form == "space" else [f"--baseline={baseline}"]
    proc = run_pytest(suite, "-q", *args, timeout=120)
    out = proc.stdout + proc.stderr
    assert "unrecognized arguments" not in out
    if form == "space":
        lines = [ln for ln in out.splitlines() if ln.strip()]
        assert proc.returncode == 4 and len(lines) == 1 and lines[0].endswith(f"write --baseline={baseline}"), out
        return
    assert proc.returncode == 0, out
    assert "F1" in proc.stdout and "ok" in proc.stdout


def test_plugin_registered_once_with_or_without_the_entry_point(suite_and_baseline):
    """With autoload off the conftest registers the plugin; with it on, the entry point does and the conftest's
    ``pytest_plugins`` finds the name taken: either way one registration, the options exist, the run passes."""
    suite, baseline = suite_and_baseline
    for env in ({}, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}):
        proc = run_pytest(suite, "-q", f"--baseline={baseline}", env=env, timeout=120)
        assert proc.returncode == 0, (env, proc.stdout + proc.stderr)
        assert "already registered" not in proc.stdout + proc.stderr


@pytest.mark.subprocess
@pytest.mark.skipif(not _installed(), reason="the project is not pip-installed here: no pytest11 entry point")
def test_a_user_repository_puts_its_kernel_on_trial_with_pyargs(tmp_path):
    """From a user's own repository (their kernel beside them, this project installed): the claim modules are
    collected from the installed package with --pyargs, the report and baseline land in *their* repository."""
    (tmp_path / "my_attention.py").write_text(
        "import torch.nn.functional as F\n\n"
        "def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):\n"
        "    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,\n"
        "                                          is_causal=is_causal, scale=scale)\n")
    baseline = tmp_path / "ci" / "attention-baseline.json"
    trial = ["-q", "--pyargs", "claims.test_m0_model_checks", "--attention", "my_attention:attention", "--fast"]
    first = run_pytest(tmp_path, *trial, "--update-baseline", "--baseline", str(baseline), timeout=300)
    assert first.returncode == 0 and baseline.exists(), first.stdout[-2000:] + first.stderr[-2000:]
    assert (tmp_path / "reports" / "results.json").exists()
    gated = run_pytest(tmp_path, *trial, "--baseline", str(baseline), timeout=300)
    assert gated.returncode == 0, gated.stdout[-2000:] + gated.stderr[-2000:]
