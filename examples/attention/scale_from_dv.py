"""Bug, the softmax scale taken from the value head dim, 1/sqrt(d_v) (a slip of ports where d_v != d_k, as in
DeepSeek's MLA: q, k head dim 192, v 128): right whenever d_v = d_k, so a probe with equal head dims never sees it."""
import math

import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    scale = 1.0 / math.sqrt(value.shape[-1]) if scale is None else scale     # the bug: query.shape[-1]
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=scale)
