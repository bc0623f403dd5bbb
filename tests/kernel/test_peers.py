"""Real peers nobody here wrote (issues 27, 39), each skipped with the reason where its package is missing
(``pip install -e ".[peers]"``): transformers' own attention functions through the hf convention, refuted by no
claim in float32 and bfloat16 (Gemma 2's with its soft-cap drawn); x-transformers' Attend, both paths, through a few-line adapter (``tests/kernel/peer_adapters.py``), in float32
and bfloat16: what the trial says about it is pinned here and in docs/attention-trial.md.
"""
from __future__ import annotations

import pytest

from harness.record import verdict as verdicts
from tests.kernel.test_gallery import DTYPES, trial

PEERS = ("transformers.integrations.sdpa_attention:sdpa_attention_forward",
         "transformers.models.llama.modeling_llama:eager_attention_forward",
         "transformers.models.gemma2.modeling_gemma2:eager_attention_forward")     # Gemma 2's: a logit soft-cap
X_TRANSFORMERS = ("tests.kernel.peer_adapters:x_transformers_explicit", "tests.kernel.peer_adapters:x_transformers_flash")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", PEERS)
def test_transformers_attention_is_refuted_by_no_claim(name, dtype):
    pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[peers]' puts its "
                                               "sdpa_attention_forward and eager_attention_forward on trial")
    row = trial(name, dtype)
    assert all(verdicts.canonical(row[c]) == verdicts.SUPPORTED for c in ("M0", "R1", "R2")), row


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", X_TRANSFORMERS)
def test_x_transformers_attend_differs_only_in_its_gqa_head_mapping(name, dtype):
    """Attend maps query head h to key/value head h % H_kv (einops '(r kvh)'), where SDPA's enable_gqa, flash-attn
    and transformers' repeat_kv map it to h // (H / H_kv): the only property the trial finds failing (x-transformers
    2.31.10), in both paths and dtypes; masks, scale, tiles and precision hold."""
    pytest.importorskip("x_transformers", reason="x-transformers is not installed: pip install -e '.[peers]' puts "
                                                 "its Attend on trial")
    row = trial(name, dtype)
    assert verdicts.canonical(row["M0"]) == verdicts.canonical(row["R2"]) == verdicts.SUPPORTED, row
    assert row["failing"] and all(line.startswith("head layout (GQA)") for line in row["failing"]), row["failing"]
