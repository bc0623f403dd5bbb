"""R1's training arm on a kernel (issue 27) can fail: a gallery kernel that trains badly is not supported by
``kernel_trains_as_reference``, a correct one is not refuted.

The criterion runs in-process as the plugin runs it under ``--attention`` (declared, measured through the tuned
sweep, judged by ``harness.record.verdict``), at a test budget: delayed copy alone (C3's second task; its first, key-value
lookup, only adds time) at d_k 512 alone (C3's standard large d_k; its smoke one, 256, is where a scale bug starts to
show), C3's smoke steps, 6 seeds, one tuning seed, the tuning grid extended up to twice past an end. ``scale_unused``
leaves the scores unscaled: at d_k 512 the softmax saturates and delayed copy stays near chance on every seed (C3's
own finding, which R1's ``default_never_worse`` measures for our module); the SDPA wrapper computes the reference bit
for bit, an exact point at 0. The reference arm's runs are memoised, so the second kernel trains its own arm only.

Each outcome is asserted firm (``assert_firm``, issue 36): at d_k 256 and 3 seeds one seed in three learned under
the unscaled kernel and ``scale_unused`` read inconclusive (firmness 0.56-0.61 on ATen's DEFAULT path; on AVX2 the
kernel's tuned rate sat at the edge of a once-extended grid); 10 seeds at 256 still gave 0.93 on DEFAULT. At d_k 512
and 6 seeds it is refuted at firmness 1.00 on both the pinned AVX2 and the DEFAULT path.
"""
from __future__ import annotations

from functools import lru_cache

import pytest
import torch

import claims.test_r1_scale_by_sqrt_dk as r1
from harness.trial import kernel as kernels
from harness.record import verdict as verdicts
from harness.record.evidence import Evidence
from harness.profiles import get_profile
from tests.conftest import assert_firm

torch.set_num_threads(1)
SEEDS = list(range(6))
LARGE_D_K = 512
TRAINING = {"sweep_from": "sweep", "seeds": len(SEEDS),
            "tuning": {"points": 3, "span": 16.0, "seeds": 1, "extend": 2},
            "train": {}}


def delayed_copy_only() -> dict:
    """The shared sweep's smoke block with its second task (delayed copy) as its only one, at ``LARGE_D_K`` alone."""
    shared = get_profile("smoke").claim("sweep")
    return {"sweep": shared["task2"]["sweep"], "sweep_d_ks": [LARGE_D_K]}


@lru_cache(maxsize=None)
def trained(name: str) -> dict:
    """R1's record with ``kernel_trains_as_reference`` alone, judged, for ``examples.attention.<name>:attention``."""
    import tempfile
    from pathlib import Path

    kernel = kernels.resolve(f"examples.attention.{name}:attention")
    kernels.preflight(kernel)
    ev = Evidence(Path(tempfile.mkdtemp()), claim_id="R1")
    r1._claim(ev)
    block = delayed_copy_only()
    crit = r1.declare_kernel_training(ev, block)
    r1.kernel_training(ev, crit, kernel, TRAINING, block, SEEDS, torch.device("cpu"))
    return verdicts.apply_judgement(ev.to_record())


def test_a_kernel_that_trains_badly_is_not_supported():
    record = trained("scale_unused")
    (crit,) = record["criteria"]
    assert verdicts.canonical(record["verdict"]) != verdicts.SUPPORTED, crit
    assert_firm(crit, "refuted")
    assert crit["deciding_part"] == f"delayed_copy d_k={LARGE_D_K}", crit   # saturated at the large d_k, near chance


def test_a_correct_kernel_is_not_refuted():
    record = trained("sdpa_wrapper")
    (crit,) = record["criteria"]
    assert verdicts.canonical(record["verdict"]) != verdicts.REFUTED, crit
    assert_firm(crit, "passed")                       # the reference bit for bit: an exact point at 0, no firmness
    assert crit["firmness_reason"].startswith("an exact point"), crit
