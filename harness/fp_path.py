"""The floating-point path: the same numbers on every x86-64 box of a vendor (issue 36).

Three libraries pick their CPU kernels from what the processor offers, each at its first use, and kernels of another
width add in another order: a trained loss then differs from the third digit between an AVX2 and an AVX-512 box,
and a verdict near firmness 0.5 flips. ``pin()`` asks each for its AVX2 kernels before anything computes:

=====================  =========================  ===================================================================
library                variable, value            what it moves (measured on an Intel AVX-512 box, 2026-12-02)
=====================  =========================  ===================================================================
ATen (torch's own)     ATEN_CPU_CAPABILITY=avx2   softmax, layer norm, exp, reductions, small matmuls
oneDNN                 ONEDNN_MAX_CPU_ISA=AVX2    LSTM forward and backward, convolutions
MKL (Intel CPUs only)  MKL_CBWR=AVX2              convolution backward; its documented branch for "the same results
                                                  on every Intel CPU supporting AVX2" (conditional numerical
                                                  reproducibility), at no measured cost (Q3: 15.5 s either way)
=====================  =========================  ===================================================================

MKL takes its own code path on AMD processors, the same on AMD's AVX2 and AVX-512 parts (Q2 and Q3 reproduced an
AMD AVX2 box's numbers bit for bit on an AMD AVX-512 box with ATen pinned); its only branch documented to agree
across vendors (``COMPATIBLE``, SSE2) made training 25% slower (Q3: 19.5 s against 15.5 s), past the CI budget.
So the numbers are the same on every box of one vendor; across vendors the gate says so and relies on significant
moves (``mismatch``). A variable the user set stays theirs; ``ATTN_CLAIMS_NATIVE_FP=1`` (the plugin's
``--native-fp``) opts out of all three. ``pin()`` runs when ``harness`` is imported: the pytest plugin (an entry
point, loaded before any test module), every ``python -m harness.*``, and, through the environment, their pytest
subprocesses and xdist workers.
"""
from __future__ import annotations

import os
import platform
import sys
from typing import Any, MutableMapping

CAPABILITY_ENV = "ATEN_CPU_CAPABILITY"
NATIVE_ENV = "ATTN_CLAIMS_NATIVE_FP"
_MARK = "_ATTN_CLAIMS_PINNED"   # the names the suite set (not the user), comma-separated; children inherit it
PINNED = "avx2"
#: variable -> (value, vendors it is set on; None: every x86-64 vendor)
PINS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    CAPABILITY_ENV: (PINNED, None),
    "ONEDNN_MAX_CPU_ISA": ("AVX2", None),
    "MKL_CBWR": ("AVX2", ("GenuineIntel",)),
}
X86_64 = ("x86_64", "amd64")


def is_x86_64(machine: str | None = None) -> bool:
    return (machine or platform.machine()).lower() in X86_64


def vendor() -> str:
    """The CPU's vendor id (GenuineIntel, AuthenticAMD), or '' where it cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def pin(environ: MutableMapping[str, str] | None = None, machine: str | None = None,
        cpu_vendor: str | None = None) -> list[str]:
    """Pin every library's path on x86-64 (the table above) unless the user set that variable or opted out; returns
    the names it set."""
    env = os.environ if environ is None else environ
    if env.get(NATIVE_ENV, "") not in ("", "0") or not is_x86_64(machine):
        return []
    cpu_vendor = vendor() if cpu_vendor is None else cpu_vendor
    done = [name for name, (_, vendors) in PINS.items()
            if name not in env and (vendors is None or cpu_vendor in vendors)]
    for name in done:
        env[name] = PINS[name][0]
    if done:
        env[_MARK] = ",".join(sorted(set(done) | set(filter(None, env.get(_MARK, "").split(",")))))
    return done


def unpin(environ: MutableMapping[str, str] | None = None) -> None:
    """Opt out (``--native-fp``): drop the pins ``pin()`` set, and tell child processes not to set them again. Must
    run before the first torch operation; a variable the user set stays."""
    env = os.environ if environ is None else environ
    for name in filter(None, env.pop(_MARK, "").split(",")):
        if env.get(name) == PINS.get(name, (None,))[0]:
            del env[name]
    env[NATIVE_ENV] = "1"


def capability() -> str | None:
    """ATen's CPU capability in use in this process, or None where torch was never imported here (then nothing
    computed here; importing it only to ask could load it twice in an in-process pytest run)."""
    torch = sys.modules.get("torch")
    return torch.backends.cpu.get_cpu_capability() if torch is not None else None


def describe(used: set[str] | None = None) -> dict[str, Any]:
    """The path a run computed on, for results.json: machine, CPU vendor, ATen's capability (``used``: what the
    processes that measured reported, e.g. the xdist workers; else this process's), the libraries' variables, and
    how they were chosen."""
    set_by_suite = set(filter(None, os.environ.get(_MARK, "").split(",")))
    native = os.environ.get(NATIVE_ENV, "") not in ("", "0")
    by_user = sorted(n for n in PINS if n in os.environ and n not in set_by_suite)
    how = ("native (--native-fp)" if native and not by_user
           else "pinned by the suite" if not by_user
           else "set by the user (" + ", ".join(f"{n}={os.environ[n]}" for n in by_user) + ")")
    found = sorted(used or ()) or [c for c in [capability()] if c]
    return {"machine": platform.machine().lower(), "vendor": vendor(), "capability": ", ".join(found) or None,
            "libraries": {n: os.environ.get(n) for n in PINS}, "how": how}


def key(fp: Any) -> tuple[str, ...] | None:
    """What must match for two runs to compute the same numbers on the CPU."""
    if not isinstance(fp, dict) or not fp.get("capability"):
        return None
    libs = fp.get("libraries") or {}
    return (str(fp.get("machine")), str(fp.get("vendor")), str(fp["capability"]),
            *(f"{n}={libs.get(n)}" for n in sorted(PINS)))


def _text(k: tuple[str, ...]) -> str:
    return " ".join(part for part in k if part not in ("", "None") and not part.endswith("=None"))


def mismatch(run: Any, baseline_run: Any) -> str | None:
    """One line when a baseline was computed on another floating-point path than this run (or does not say which),
    else None; None too when nothing here computed with torch."""
    now = key((run or {}).get("fp_path"))
    base = key((baseline_run or {}).get("fp_path"))
    if now is None or base == now:
        return None
    return (f"the baseline was computed on {_text(base) if base else 'an unrecorded path'}, this run on "
            f"{_text(now)}: numbers differ between paths, so the gate relies on significant moves alone")
