"""The floating-point path is pinned (issue 36): the same numbers on an AVX2 and an AVX-512 box."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness import fp_path

from tests.conftest import REPO

PROBE = """
import harness, torch, hashlib
torch.manual_seed(0)
torch.set_num_threads(1)
x, w = torch.randn(64, 257), torch.randn(257, 257)
y = torch.softmax((x @ w) / 16, -1)
z = torch.nn.functional.layer_norm(y, (257,)).exp().sum(-1)
s = torch.randn(8, 16, 40, requires_grad=True)
torch.nn.Conv1d(16, 16, 3, dilation=2)(s).tanh().sum().backward()
h, _ = torch.nn.LSTM(16, 32, batch_first=True)(s.transpose(1, 2))
out = torch.cat([y.flatten(), z, s.grad.flatten(), h.detach().flatten()])
print(torch.backends.cpu.get_cpu_capability(), hashlib.sha256(out.numpy().tobytes()).hexdigest())
"""


def probe(**env: str) -> tuple[str, str]:
    """(capability, digest of a softmax/layer-norm/exp/LSTM/convolution computation) in a fresh process that imports
    harness first."""
    full = {k: v for k, v in os.environ.items() if k not in (*fp_path.PINS, fp_path.NATIVE_ENV, fp_path._MARK)}
    full.update(env, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True, check=True).stdout
    capability, digest = out.split()
    return capability, digest


def test_pin_sets_avx2_on_x86_64_unless_the_user_chose_or_opted_out():
    env: dict[str, str] = {}
    assert fp_path.pin(env, machine="x86_64", cpu_vendor="GenuineIntel") == list(fp_path.PINS)
    assert env[fp_path.CAPABILITY_ENV] == "avx2" and env["ONEDNN_MAX_CPU_ISA"] == env["MKL_CBWR"] == "AVX2"
    amd: dict[str, str] = {}
    assert "MKL_CBWR" not in fp_path.pin(amd, machine="x86_64", cpu_vendor="AuthenticAMD") and amd  # MKL's own path
    user = {fp_path.CAPABILITY_ENV: "default"}
    assert fp_path.CAPABILITY_ENV not in fp_path.pin(user, machine="x86_64", cpu_vendor="GenuineIntel")
    assert user[fp_path.CAPABILITY_ENV] == "default"
    assert not fp_path.pin(out := {fp_path.NATIVE_ENV: "1"}, machine="x86_64") and set(out) == {fp_path.NATIVE_ENV}
    assert not fp_path.pin(arm := {}, machine="aarch64") and arm == {}
    fp_path.unpin(env)          # --native-fp: the suite's pins go, and children do not set them again
    assert not set(fp_path.PINS) & set(env) and not fp_path.pin(env, machine="x86_64")
    fp_path.unpin(user)         # a path the user set stays
    assert user[fp_path.CAPABILITY_ENV] == "default"


@pytest.mark.skipif(not fp_path.is_x86_64(), reason="ATen's x86 capabilities (avx2, default) exist on x86-64 only")
def test_the_pinned_default_computes_avx2s_numbers_and_default_computes_others():
    """The pinned default equals every library asked for AVX2 by hand; ATen's unvectorised path differs."""
    by_hand = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    if fp_path.vendor() == "GenuineIntel":
        by_hand["MKL_CBWR"] = "AVX2"
    pinned, avx2 = probe(), probe(**by_hand, ATTN_CLAIMS_NATIVE_FP="1")
    default = probe(ATEN_CPU_CAPABILITY="default")
    assert pinned == avx2 and pinned[0] == "AVX2"
    assert default[0] == "DEFAULT" and default[1] != avx2[1]     # another path: other numbers


def test_a_baseline_from_another_path_is_named_in_one_line():
    libs = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}
    run = {"fp_path": {"machine": "x86_64", "vendor": "GenuineIntel", "capability": "AVX2", "libraries": libs}}
    assert fp_path.mismatch(run, run) is None
    amd = {"machine": "x86_64", "vendor": "AuthenticAMD", "capability": "AVX2", "libraries": {**libs, "MKL_CBWR": None}}
    line = fp_path.mismatch(run, {"fp_path": amd})
    assert line and "\n" not in line and "x86_64 AuthenticAMD AVX2" in line and "significant moves alone" in line
    assert "an unrecorded path" in fp_path.mismatch(run, {})
    assert fp_path.mismatch({"fp_path": {"machine": "x86_64", "capability": None}}, {}) is None  # nothing computed
