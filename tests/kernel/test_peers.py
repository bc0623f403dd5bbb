"""Real peers nobody here wrote (issue 27): transformers' own attention functions on trial, through the hf
convention, refuted by no claim. Needs the optional extra ``pip install -e ".[peers]"``; skips, saying so, without.
"""
from __future__ import annotations

import pytest

from harness.record import verdict as verdicts

transformers = pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[peers]' "
                                                          "puts its sdpa_attention_forward and eager_attention_forward on trial")

from tests.kernel.test_gallery import trial  # noqa: E402

PEERS = ("transformers.integrations.sdpa_attention:sdpa_attention_forward",
         "transformers.models.llama.modeling_llama:eager_attention_forward")


@pytest.mark.parametrize("name", PEERS)
def test_transformers_attention_is_refuted_by_no_claim(name):
    row = trial(name)
    assert all(verdicts.canonical(row[c]) == verdicts.SUPPORTED for c in ("M0", "R1", "R2")), row
