"""Adapters that put peers' attention on trial in the sdpa convention, each a few lines as a user would write them
(issue 39). Importable without the peers installed: each imports its package when it is called."""
from __future__ import annotations

import torch


def _x_transformers_attend(flash: bool):
    def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        from x_transformers.attend import Attend

        bias = None if attn_mask is None or attn_mask.dtype == torch.bool else attn_mask   # a float mask is a bias
        out, _ = Attend(causal=is_causal, scale=scale, flash=flash)(
            query, key, value, mask=None if bias is not None else attn_mask, attn_bias=bias)
        return out
    return attention


#: x-transformers' Attend, its explicit (einsum, softmax) path and its flash path (SDPA)
x_transformers_explicit = _x_transformers_attend(flash=False)
x_transformers_flash = _x_transformers_attend(flash=True)
