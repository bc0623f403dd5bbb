"""Bug, GQA's head groups mapped wrong (key/value heads tiled with .repeat where .repeat_interleave was meant, so query
head h reads key/value head h % H_kv, not h // (H / H_kv)): right with one key/value head (MQA) or as many as query
heads, wrong in between."""
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        groups = query.shape[-3] // key.shape[-3]
        key, value = key.repeat(1, groups, 1, 1), value.repeat(1, groups, 1, 1)     # the bug: not repeat_interleave
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=scale)
