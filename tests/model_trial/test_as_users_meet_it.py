"""Your model on trial, as users meet it (issue 48): the command line from the checkout and from a user's folder, the
overrides, and what the terminal and the report say. The subprocess runs use builders that sweep nothing, or one
claim, so that each takes a few seconds."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.trial import model as models, model_reads as reads
from tests.conftest import REPO

NANOGPT = "tests.model_trial.nanogpt"
needs_transformers = pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                                        reason="the config-class cases need .[models]")


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def _lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]


# ------------------------------------------------------------------------------------ item 1: path options
@pytest.fixture
def elsewhere(tmp_path) -> dict[str, Path]:
    """A user's folder and, beside it, the paths a path option names: a model folder, a config folder, a baseline."""
    user, other = tmp_path / "user", tmp_path / "elsewhere"
    (other / "mods").mkdir(parents=True)
    user.mkdir()
    (other / "mods" / "usermodel.py").write_text(f"from {NANOGPT} import build_model\n", encoding="utf-8")
    (other / "cfg").mkdir()
    (other / "cfg" / "config.json").write_text("{}", encoding="utf-8")
    (other / "baseline.json").write_text("{}", encoding="utf-8")
    (other / "out").mkdir()
    return {"user": user, "--model-path": other / "mods", "--model-config": other / "cfg",
            "--baseline": other / "baseline.json", "--report-dir": other / "out"}


@pytest.mark.subprocess
@pytest.mark.parametrize("place", ["checkout", "user"])
@pytest.mark.parametrize("option", ["--model-path", "--model-config", "--baseline", "--report-dir"])
def test_a_path_option_with_a_space_that_moves_the_rootdir_is_refused_in_one_line(option, place, elsewhere):
    cwd = REPO if place == "checkout" else elsewhere["user"]
    value = str(elsewhere[option]) if place == "checkout" else os.path.relpath(elsewhere[option], cwd)
    where = [] if place == "checkout" else ["--pyargs", "claims.test_m0_model_checks"]
    model = [] if option == "--model-config" else ["--model", "usermodel:build_model"]
    proc = _pytest(cwd, "-p", "no:cacheprovider", "--co", *where, *model, option, value)
    lines = _lines(proc)
    assert proc.returncode == 4 and len(lines) == 1, lines
    assert lines[0].startswith(f"ERROR: {option} {value}: pytest read {value} as a test path too") and \
        lines[0].endswith(f"; write {option}={value}"), lines


@pytest.mark.subprocess
def test_the_space_form_works_where_it_moves_nothing():
    proc = _pytest(REPO, "-p", "no:cacheprovider", "--co", "--model", f"{NANOGPT}:build_model", "--model-path",
                   "examples")
    assert proc.returncode == 0 and "13 tests collected" in proc.stdout, _lines(proc)[-5:]


@pytest.mark.subprocess
def test_the_equals_form_from_a_user_folder_reports_there(elsewhere):
    user = elsewhere["user"]
    mods = os.path.relpath(elsewhere["--model-path"], user)
    proc = _pytest(user, "--pyargs", "claims.test_m0_model_checks", "--model", "usermodel:build_model",
                   f"--model-path={mods}")
    assert proc.returncode == 0, _lines(proc)[-5:]
    assert f"report: {user / 'reports' / 'index.html'}" in proc.stdout
    assert (user / "reports" / "results.json").is_file() and (user / ".pytest_cache").is_dir()
    assert not (user.parent / "reports").exists() and not (user.parent / ".pytest_cache").exists()


@pytest.mark.subprocess
def test_the_equals_form_from_the_checkout_reads_the_project_config(elsewhere):
    proc = _pytest(REPO, "-p", "no:cacheprovider", "--co", "--model", "usermodel:build_model",
                   f"--model-path={elsewhere['--model-path']}", f"--report-dir={elsewhere['--report-dir']}")
    assert proc.returncode == 0 and "13 tests collected" in proc.stdout, _lines(proc)[-5:]


# ------------------------------------------------------------------------------------ item 2: overrides
@needs_transformers
@pytest.mark.parametrize("override, message", [
    ("n_layr=1", "--model-override n_layr=1: GPT2Config has no key 'n_layr'; the closest: n_layer"),
    ("hidden_size=abc", "--model-override hidden_size='abc': expected int, got str (the default is 768)"),
    ("scale_attn_weights=1", "--model-override scale_attn_weights=1: expected bool, got int (the default is True)"),
])
def test_a_mistyped_override_is_refused_naming_the_closest_keys(override, message):
    with pytest.raises(models.ModelError) as exc:
        models.resolve(config="GPT2Config", overrides=[override])
    assert str(exc.value) == message
    models.resolve(config="GPT2Config", overrides=["num_hidden_layers=1", "initializer_range=1",  # alias, int
                                                   "eos_token_id=[1, 2]"])        # int | list[int]
    models.resolve(config="LlamaConfig", overrides=["rope_theta=5e5"])   # folded into rope_parameters


def test_a_builder_that_names_its_keywords_checks_them_and_one_with_kwargs_passes_them_on():
    with pytest.raises(models.ModelError, match=r"has no key 'n_layers'; the closest: n_layer$"):
        models.resolve(f"{NANOGPT}:build_model", overrides=["n_layers=1"])
    with pytest.raises(models.ModelError, match="expected int, got str"):
        models.resolve(f"{NANOGPT}:build_model", overrides=["n_layer=two"])
    assert models.resolve("examples.models.tiny_decoder:build_model", overrides=["anything=1"]).overrides


@needs_transformers
def test_a_model_that_does_not_fit_is_refused_before_it_is_built_with_the_layers_that_would(monkeypatch):
    t = models.resolve(config="GPT2Config")
    n = models.parameter_count(t)
    assert n == 124_439_808                                    # GPT-2 small, counted on the meta device
    free = 10**9
    monkeypatch.setattr(models, "free_memory", lambda: free)
    monkeypatch.setattr(models.ModelUnderTrial, "build", lambda *a, **k: pytest.fail("built"))
    with pytest.raises(models.ModelError) as exc:
        models.preflight(t)
    text = str(exc.value)
    layers = int(text.rsplit("num_hidden_layers=", 1)[1].split()[0])
    need = lambda k: 4 * models.MEMORY_COPIES * models.parameter_count(  # noqa: E731
        t, num_hidden_layers=k, vocab_size=models.PROBE_VOCAB)
    assert need(layers) <= free < need(layers + 1)
    # asked for as built at init: the vocabulary cut to PROBE_VOCAB tokens (50257 x 768 -> 4096 x 768)
    assert text.startswith("config GPT2Config: 88.99M parameters (built at init with 4096 of its 50257 tokens) need "
                           "about 1.07 GB") and "1 GB is free" in text
    with pytest.raises(models.ModelError, match="124.4M parameters need about 1.49 GB"):
        models.preflight(t, cut_vocab=False)                # --model-weights: the checkpoint's rows are read


@needs_transformers
def test_the_probes_ask_for_the_copies_they_hold_and_the_training_checks_its_own(monkeypatch):
    """The pre-flight asks for MEMORY_COPIES (what a probe or a checkpoint read holds), not the short training's:
    with room for those and not for the training's, the pre-flight passes; the training then checks its own copies
    on the model it builds, and says why it does not run rather than running out of memory."""
    t = models.resolve(config="GPT2Config", overrides=["n_layer=1", "vocab_size=4000"])   # nothing to cut
    n = models.parameter_count(t)
    assert models.MEMORY_COPIES < models.TRAIN_COPIES
    monkeypatch.setattr(models, "free_memory", lambda: 4 * n * models.MEMORY_COPIES - 1)
    with pytest.raises(models.ModelError):
        models.check_fits(t)
    monkeypatch.setattr(models, "free_memory", lambda: 4 * n * models.MEMORY_COPIES + 1)
    t = models.preflight(t)
    monkeypatch.setattr(reads, "free_memory", lambda: 4 * n * models.TRAIN_COPIES - 1)    # the training's own check
    with pytest.raises(models.ModelError, match=r"next-token training .* needs about .* copies: the model, "
                                                 r"gradients, AdamW's moments\); .* is free"):
        reads.train_lm(t, 0, steps=1, lr=1e-3, batch=2, length=8, probe_batch=2)


@needs_transformers
@pytest.mark.subprocess
def test_a_mistyped_override_is_one_line_exit_4_from_the_command_line(tmp_path):
    proc = _pytest(REPO, "-p", "no:cacheprovider", "claims/test_r1_scale_by_sqrt_dk.py", "--model-config",
                   "GPT2Config", "--model-override", "n_layr=1", f"--report-dir={tmp_path}")
    assert proc.returncode == 4 and _lines(proc) == [
        "ERROR: --model-override n_layr=1: GPT2Config has no key 'n_layr'; the closest: n_layer"]


# ------------------------------------------------------------------------------------ item 9: is_causal
@pytest.mark.parametrize("builder, causal", [("build_model", True), ("build_model_one_layer_forgets", True),
                                             ("build_model_forgets", None)])
def test_sdpa_is_causal_says_the_model_is_causal_where_no_attribute_does(builder, causal):
    t = models.preflight(models.resolve(f"{NANOGPT}:{builder}"))
    assert t.causal is causal
    assert t.causal_from == ("" if causal is None else f"SDPA's is_causal=True at {1 if 'one' in builder else 2} "
                                                      "of 2 attention calls")


@pytest.mark.subprocess
@pytest.mark.parametrize("builder, verdict, says", [
    ("build_model_one_layer_forgets", "refuted", "causal by SDPA's is_causal=True at 1 of 2 attention calls"),
    ("build_model_forgets", "inconclusive", "set is_causal = True on the model (or on its attention modules)"),
])
def test_m0_reads_the_sdpa_flag_and_says_how_to_declare(builder, verdict, says, tmp_path):
    proc = _pytest(REPO, "-p", "no:cacheprovider", "claims/test_m0_model_checks.py", "--model",
                   f"{NANOGPT}:{builder}", f"--report-dir={tmp_path}")
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    crit = next(c for c in doc["claims"]["M0"]["criteria"] if c["name"] == "model_causal_mask")
    assert doc["claims"]["M0"]["verdict"] == verdict and says in crit["detail"], crit


# ------------------------------------------------------------------------------ items 6, 7, 10, 11: what it says
@pytest.mark.subprocess
def test_a_builder_that_sweeps_nothing_reads_inconclusive_says_so_once_and_shows_only_what_ran(tmp_path):
    """R1 on its own d_k alone is inconclusive (item 10); each reason prints once (item 11); the summary says which
    claims were not run (item 11); no answer or limitation describes a sweep or a training that did not run
    (item 7)."""
    proc = _pytest(REPO, "-p", "no:cacheprovider", "--model", f"{NANOGPT}:build_model", f"--report-dir={tmp_path}",
                   "-k", "r1 or c4 or r2")
    doc = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    r1 = doc["claims"]["R1"]
    assert r1["verdict"] == "inconclusive"
    assert "at the model's own d_k = 8" in r1["criteria"][0]["detail"] and "a constant scale would read the same" \
        in r1["criteria"][0]["detail"]
    # pytest's own summary repeats each failure's message in full where the CI variable is set (pytest >= 8): the
    # suite's output is what comes before it
    ours = proc.stdout.split("short test summary info")[0]
    for line in (ln for ln in ours.splitlines() if "not measured:" in ln):
        assert ours.count(line) == 1, line
    summary = next(ln for ln in proc.stdout.splitlines() if ln.startswith("model on trial:"))
    assert summary.endswith("judged by C4, R1, R2; not run: C3, C5, M0, Q1, Q2, Q3") or \
        "not run: C3, C5, M0, Q1, Q2, Q3" in summary, summary
    assert "do not judge a model yet" not in summary
    for cid in ("R1", "C4", "R2"):
        said = " ".join(o["how"] for o in doc["claims"][cid]["objections"]) + doc["claims"][cid]["limitation"]
        for ghost in ("tuned", "held-out", "iid N(0,1)", "key-value lookup"):
            assert ghost not in said, (cid, ghost)


@needs_transformers
@pytest.mark.subprocess
def test_gemma2s_refutation_is_said_in_words(tmp_path):
    proc = _pytest(REPO, "-p", "no:cacheprovider", "claims/test_r1_scale_by_sqrt_dk.py", "--model",
                   "examples.models.gemma2:build_model", f"--report-dir={tmp_path}")
    assert proc.returncode == 1 and "threshold holds" not in proc.stdout
    assert ("it equals d_k^-1/2 at d_k = 16 only, it is a config constant (1/sqrt(query_pre_attn_scalar), "
            "query_pre_attn_scalar = 16), not a function of the head dim") in proc.stdout


# ------------------------------------------------------------------------------------ item 8: the width sweep
def test_the_width_sweep_holds_the_head_dim_or_is_not_measured():
    from examples.models.tiny_decoder import TinyDecoder

    held = models.preflight(models.resolve("examples.models.tiny_decoder:build_model"))
    fam, why = reads.sweep(held, "width", [32, 64], [0], 2, 8)
    assert why == "" and set(fam.d_k) == {16.0} and list(fam.width) == [32, 64]
    moving = models.preflight(models.ModelUnderTrial(
        "moving", lambda width=64: TinyDecoder(width=width, head_dim=width // 4)))
    fam, why = reads.sweep(moving, "width", [32, 64], [0], 2, 8)
    assert fam is None and why == "the width family did not hold the head dim: d_k 8 at width 32, 16 at width 64"
