"""A gallery of attention kernels to put on trial (issue 27): four correct, seven with one documented bug each.

Each file is self-contained (torch only), so it can be copied into another repository. Name one as
``--attention examples.attention.<file>:attention`` from the repository root; ``docs/attention-trial.md`` shows
the kernel x claim matrix that ``tests/kernel/test_gallery.py`` measures.
"""
CORRECT = ("sdpa_wrapper", "tiled_online_softmax", "hf_eager", "flex")
BUGGY = {   # file -> the claim that must refute it
    "scale_unused": "R1", "hardcoded_sqrt64": "R1", "inverse_dk": "R1", "mask_dropped": "M0",
    "causal_off_by_one": "M0", "softmax_fp16": "R1", "heads_view": "M0",
}
