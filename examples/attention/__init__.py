"""A gallery of attention kernels to put on trial (issue 27): ten correct, fourteen with one documented bug each.

Each file is self-contained (torch only), so it can be copied into another repository. Name one as
``--attention examples.attention.<file>:attention`` from the repository root; ``docs/attention-trial.md`` shows
the kernel x claim matrix that ``tests/kernel/test_gallery.py`` measures, in float32 and bfloat16.
"""
CORRECT = ("sdpa_wrapper", "tiled_online_softmax", "hf_eager", "flex", "self_attention_only", "sdpa_module", "gqa",
           "query_loop", "sliding_window", "softcap")
BUGGY = {   # file -> the claim that must refute it
    "scale_unused": "R1", "hardcoded_sqrt64": "R1", "inverse_dk": "R1", "mask_dropped": "M0",
    "causal_off_by_one": "M0", "softmax_fp16": "R1", "heads_view": "M0", "tiled_no_rescale": "R1",
    "gqa_wrong_groups": "R1", "bias_as_mask": "R1", "scale_from_dv": "R1", "sliding_window_off_by_one": "R1",
    "softcap_after_softmax": "R1", "dropout_unscaled": "R1",
}
#: the property each bug breaks: the trial's summary must name it first (issue 39)
BROKEN_PROPERTY = {
    "scale_unused": "scale", "hardcoded_sqrt64": "scale", "inverse_dk": "scale", "mask_dropped": "masks",
    "causal_off_by_one": "masks", "softmax_fp16": "precision", "heads_view": "head layout", "tiled_no_rescale": "tiling",
    "gqa_wrong_groups": "head layout", "bias_as_mask": "masks", "scale_from_dv": "scale",
    "sliding_window_off_by_one": "masks (sliding window)", "softcap_after_softmax": "softcap",
    "dropout_unscaled": "dropout",
}
#: bugs of a dtype only, with why: outside these dtypes the kernel computes as a correct one would
BUGGY_DTYPES = {"softmax_fp16": (("float32",), "a float16 softmax is finer than bfloat16 (10 mantissa bits against "
                                              "7), so on bfloat16 inputs it is no bug")}
