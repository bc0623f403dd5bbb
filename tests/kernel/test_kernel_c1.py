"""C1 on a kernel under trial (issue 27): every Transformer of C1 calls the session's kernel, in the encoder's
self-attention, the decoder's causal self-attention and its cross-attention, and its criteria then judge a Transformer
built on that kernel. The claim runs in-process as the plugin runs it under ``--attention --fast``, at a test budget
(20 steps, 2 seeds): what is tested is the path, not the verdict.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F

import claims.test_c1_attention_suffices as c1
from harness.trial import kernel as kernels
from harness.record import verdict as verdicts
from harness.record.evidence import Evidence
from harness.profiles import KERNEL_NOT_YET, KERNEL_TRIAL_CLAIMS
from harness.profiles import Profile, get_profile
from model.kernels import use_kernel

torch.set_num_threads(1)

SEEN: list[dict] = []


def recording_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """SDPA, recording what each call was: its (L, S), and whether its mask hides a key a later query sees (causal)."""
    causal = False
    if attn_mask is not None and attn_mask.shape[-2] > 1:
        m = attn_mask.expand(*attn_mask.shape[:-2], query.shape[-2], key.shape[-2])[0, 0]
        causal = bool((~m[0]).any() and m[-1].all())
    SEEN.append({"L": query.shape[-2], "S": key.shape[-2], "masked": attn_mask is not None, "causal": causal})
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=scale)


def tiny_profile() -> Profile:
    b = get_profile("smoke").claim("C1")
    b["train"].update(steps=20, eval_every=10, eval_size=32)
    b["test_size"] = 32
    return Profile(name="smoke", n_seeds=2, blocks={"C1": b})


def test_c1_judges_the_kernel_and_its_transformer_calls_it_everywhere():
    assert "C1" in KERNEL_TRIAL_CLAIMS and "C1" not in KERNEL_NOT_YET
    k = kernels.resolve("tests.kernel.test_kernel_c1:recording_attention")
    kernels.preflight(k)
    seen = k.fn.__globals__["SEEN"]     # the resolved module's list (pytest may import this file under another name)
    seen.clear()
    ev = Evidence(Path(tempfile.mkdtemp()), claim_id="C1", fast=True)
    with use_kernel(k):
        c1.test_c1_attention_suffices(ev, tiny_profile(), torch.device("cpu"), [0, 1], lambda *a, **kw: None,
                                      True, k)
    record = verdicts.apply_judgement(ev.to_record(), fast_only=True)
    assert any(c1.KERNEL_NOTE.format(name=k.name, convention=k.convention) == note for note in record["notes"])
    assert [c["name"] for c in record["criteria"] if c.get("measurements")] == ["generalises/reverse"]
    assert seen, "C1's Transformer never called the kernel on trial"
    assert any(s["causal"] for s in seen), "no decoder self-attention (causal mask) went through the kernel"
    assert any(s["L"] != s["S"] for s in seen), "no cross-attention (L != S) went through the kernel"
    assert any(s["masked"] and not s["causal"] for s in seen), "no encoder or cross-attention padding mask seen"


def test_the_same_run_without_a_kernel_never_calls_it():
    """The check above can fail: C1 without a session kernel does not reach the recording kernel."""
    seen = kernels.resolve("tests.kernel.test_kernel_c1:recording_attention").fn.__globals__["SEEN"]
    seen.clear()
    ev = Evidence(Path(tempfile.mkdtemp()), claim_id="C1", fast=True)
    c1.test_c1_attention_suffices(ev, tiny_profile(), torch.device("cpu"), [0, 1], lambda *a, **kw: None, True,
                                  None)
    assert seen == []
