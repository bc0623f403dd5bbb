"""C5 on a kernel under trial (issue 27): every model's attention calls the kernel, and the claim is measured through
it. A kernel that returns no weights (the ``sdpa`` convention never does) leaves the criteria that read weights
reported and unmeasured, with the reason, declared so before anything is measured; the resolution probe reads the
heads' outputs, which every kernel returns, so ``resolution_gain``, ``resolution_rises`` and the premise
``single_head_loses_slots`` are still measured.

The claim runs in-process as the plugin runs it under ``--attention``, at a test budget (30 steps, 2 seeds, small
probe sets): what is tested is the path, not the verdict.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import torch

import claims.test_c5_multihead_resolution as c5
from harness.trial import kernel as kernels
from harness.record import verdict as verdicts
from harness.record.evidence import Evidence
from harness.profiles import Profile, get_profile
from model.kernels import use_kernel
from tests.kernel.test_gallery import call_on_kernel

torch.set_num_threads(1)


def tiny_profile() -> Profile:
    b = get_profile("smoke").claim("C5")
    for binding in ("token", "position"):
        b[binding]["train"].update(steps=30, eval_size=64)
    b["position"]["primary_seeds"] = 2
    b["position"]["tuning"].update(lr_grid=[1e-3, 4e-3], seeds=1)
    b["probe"].update(n_fit=128, n_eval=64)
    return Profile(name="smoke", n_seeds=2, blocks={"C5": b})


def kernel(name: str) -> kernels.Kernel:
    k = kernels.resolve(f"examples.attention.{name}:attention")
    kernels.preflight(k)
    return k


def test_whether_a_kernel_returns_weights_is_known_before_measuring():
    assert not kernel("sdpa_wrapper").returns_weights()
    assert kernel("hf_eager").returns_weights()


def test_c5_on_a_kernel_without_weights_measures_resolution_and_reports_the_rest_unmeasured():
    k = kernel("sdpa_wrapper")
    ev = Evidence(Path(tempfile.mkdtemp()), claim_id="C5")
    with use_kernel(k):
        call_on_kernel(c5.test_c5_multihead_resolution, ev, tiny_profile(), torch.device("cpu"), [0, 1],
                       lambda *a, **kw: None, False, k)
    record = verdicts.apply_judgement(ev.to_record())
    crits = {c["name"]: c for c in record["criteria"]}
    for name in c5.WEIGHT_CRITERIA:
        assert crits[name]["counts"] is False and crits[name]["test"].startswith(c5.NO_WEIGHTS), crits[name]
        assert crits[name]["outcome"] == "inconclusive" and crits[name]["unmeasured"] == c5.NO_WEIGHTS, crits[name]
    for name in ("resolution_gain", "resolution_rises"):
        assert crits[name]["counts"] is True and crits[name]["measurements"], crits[name]
    # the premise reads resolution, not weights: measured through the kernel (issue 47)
    assert crits["single_head_loses_slots"]["role"] == "premise" and crits["single_head_loses_slots"]["measurements"]
    assert any(k.name in note for note in record["notes"])
    assert "attention_maps_h1_vs_h4" not in {f.get("name", f) if isinstance(f, dict) else f
                                             for f in record["figures"]}
