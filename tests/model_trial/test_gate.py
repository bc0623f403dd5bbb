"""--baseline gates a model's verdicts as it gates the suite's (issue 40): a baseline written on a correct model
passes the same model and fails the model with the causal mask forgotten, naming the criterion."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.subprocess
M0 = str(REPO / "claims" / "test_m0_model_checks.py")


def _run(model: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", M0, "-p", "no:cacheprovider", "-q", "--model",
                           f"examples.models.{model}:build_model", "--report-dir", str(tmp_path / model), *extra],
                          cwd=REPO, capture_output=True, text=True)


#: the committed example baseline: tiny_decoder's probe claims (M0, R1, C4, R2) at smoke, made by the command in
#: docs/model-trial.md ("A baseline for your model")
EXAMPLE_BASELINE = REPO / "examples" / "models" / "tiny_decoder.baseline.json"
REMAKE = ("pytest claims/test_m0_model_checks.py claims/test_r1_scale_by_sqrt_dk.py claims/test_c4_scaling.py "
          "claims/test_r2_saturation_check.py --model examples.models.tiny_decoder:build_model --update-baseline "
          "--baseline=examples/models/tiny_decoder.baseline.json")


def test_the_committed_example_baseline_passes_its_model_and_fails_one_that_loses_its_mask(tmp_path):
    same = _run("tiny_decoder", tmp_path, "--baseline", str(EXAMPLE_BASELINE))
    assert same.returncode == 0, f"tiny_decoder no longer passes its committed baseline; remake it: {REMAKE}\n" \
                                 + same.stdout[-3000:]
    broken = _run("tiny_decoder_no_causal", tmp_path, "--baseline", str(EXAMPLE_BASELINE))
    assert broken.returncode == 1 and "M0 regressed against the baseline" in broken.stdout
    assert "criterion model_causal_mask: exact check passed -> refuted" in broken.stdout
    page = (tmp_path / "tiny_decoder_no_causal" / "index.html").read_text(encoding="utf-8")
    assert "Model on trial: <code>examples.models.tiny_decoder_no_causal:build_model</code>" in page
    assert "not judged: these verdicts judge the model examples.models.tiny_decoder_no_causal" in page


def test_a_baseline_written_on_a_model_names_the_model(tmp_path):
    base = tmp_path / "model-baseline.json"
    assert _run("tiny_decoder", tmp_path, "--update-baseline", "--baseline", str(base)).returncode == 0
    written, committed = (json.loads(p.read_text(encoding="utf-8")) for p in (base, EXAMPLE_BASELINE))
    assert written["model"]["spec"] == committed["model"]["spec"] == "examples.models.tiny_decoder:build_model"
    assert written["claims"]["M0"]["verdict"] == committed["claims"]["M0"]["verdict"] == "supported"


def test_a_model_that_cannot_be_imported_is_one_line_exit_4(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", M0, "-p", "no:cacheprovider", "-q", "--model",
                           "examples.models.nothere:build_model"], cwd=REPO, capture_output=True, text=True)
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
    assert proc.returncode == 4 and lines == ["ERROR: --model 'examples.models.nothere:build_model' cannot be "
                                              "imported: ModuleNotFoundError: No module named "
                                              "'examples.models.nothere'"]
